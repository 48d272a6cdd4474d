# SPDX-License-Identifier: MIT
# Fuzz targets of format/ (one per decoder entry point, plus a writer->reader
# round trip). Always: a corpus-replay driver per target, run by ctest over
# tests/fuzz/corpus/<target>/ without libFuzzer. With -DGAPTRACE_BUILD_FUZZ=ON
# and clang: the libFuzzer binaries fuzz_<target>, built with
# -fsanitize=fuzzer,address,undefined against an instrumented copy of the
# format library. Example:
#   CC=clang cmake -S . -B build-fuzz -DGAPTRACE_BUILD_FUZZ=ON
#   cmake --build build-fuzz --target fuzz_reader
#   build-fuzz/tests/fuzz_reader -max_total_time=300 tests/fuzz/corpus/reader
#
# fuzz_diff feeds bytes as a saved JSON report to the diff (its fuzz build
# uses an instrumented copy of the diff library).
# fuzz_analysis and fuzz_export feed bytes as traces to the analysis, the
# diagnosis, the reports and the exporters (fuzz_trace.h); their fuzz builds
# use instrumented copies of those libraries too.
set(_fuzz_dir ${CMAKE_CURRENT_LIST_DIR})
set(_fuzz_targets reader header ctl roundtrip)
set(_fuzz_trace_targets analysis export)
# fuzz_symbolize: bytes as an ELF file to the native-frame symbolizer
set(_fuzz_elf_targets symbolize)
# fuzz_diff: bytes as a saved JSON report to the diff (it needs cJSON)
set(_fuzz_json_targets "")
if(CJSON_FOUND)
  set(_fuzz_json_targets diff)
endif()
# the library each trace target exercises (it brings what it builds on)
set(_fuzz_lib_analysis report)
set(_fuzz_lib_export export)
set(_fuzz_minijson ${PROJECT_SOURCE_DIR}/tests/analysis/minijson.c)

foreach(t ${_fuzz_targets} ${_fuzz_trace_targets} ${_fuzz_elf_targets} ${_fuzz_json_targets})
  add_executable(fuzz_${t}_replay ${_fuzz_dir}/fuzz_${t}.c ${_fuzz_dir}/replay.c)
  target_link_libraries(fuzz_${t}_replay PRIVATE gaptrace::format)
  target_include_directories(fuzz_${t}_replay PRIVATE ${PROJECT_SOURCE_DIR}/format/src)
  add_test(NAME fuzz_${t}_replay COMMAND fuzz_${t}_replay ${_fuzz_dir}/corpus/${t})
  # 900 s: the ASan+UBSan build replays corpus/export (232 inputs, each
  # through every exporter) in about 5 minutes on a loaded 2-core machine
  set_tests_properties(fuzz_${t}_replay PROPERTIES TIMEOUT 900)
endforeach()
foreach(t ${_fuzz_trace_targets})
  target_sources(fuzz_${t}_replay PRIVATE ${_fuzz_minijson})
  target_include_directories(fuzz_${t}_replay PRIVATE ${PROJECT_SOURCE_DIR}/tests/analysis)
  target_link_libraries(fuzz_${t}_replay PRIVATE gaptrace::${_fuzz_lib_${t}})
endforeach()
target_link_libraries(fuzz_symbolize_replay PRIVATE gaptrace::analysis)
foreach(t ${_fuzz_json_targets})
  target_sources(fuzz_${t}_replay PRIVATE ${_fuzz_minijson})
  target_include_directories(fuzz_${t}_replay PRIVATE ${PROJECT_SOURCE_DIR}/tests/analysis)
  target_link_libraries(fuzz_${t}_replay PRIVATE gaptrace::diff)
endforeach()

# The structure-aware mutator of fuzz_analysis and fuzz_export keeps every
# trace valid (and mutates): checked on the analysis corpus without libFuzzer.
add_executable(test_mutate ${_fuzz_dir}/test_mutate.c ${_fuzz_dir}/fuzz_mutate.c)
target_link_libraries(test_mutate PRIVATE gaptrace::format)
add_test(NAME fuzz_mutate_valid COMMAND test_mutate ${_fuzz_dir}/corpus/analysis)
set_tests_properties(fuzz_mutate_valid PROPERTIES TIMEOUT 300)

if(GAPTRACE_BUILD_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "GAPTRACE_BUILD_FUZZ needs clang (CC=clang)")
  endif()
  get_target_property(_fmt_sources gaptrace_format SOURCES)
  list(TRANSFORM _fmt_sources PREPEND ${PROJECT_SOURCE_DIR}/format/)
  add_library(gaptrace_format_fuzz STATIC ${_fmt_sources})
  target_include_directories(gaptrace_format_fuzz PUBLIC ${PROJECT_SOURCE_DIR}/format/include)
  target_link_libraries(gaptrace_format_fuzz PUBLIC PkgConfig::ZSTD Threads::Threads)
  target_compile_options(gaptrace_format_fuzz PRIVATE
    -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -g -O1)
  # CRCs are not checked in this copy (gt_internal.h, GT_CRC_OK): libFuzzer
  # cannot forge them, and the payload parsers behind them must be reached.
  target_compile_definitions(gaptrace_format_fuzz PRIVATE FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
  # instrumented copies of the shared containers, the analysis, the
  # diagnosis, the reports and the
  # exporters (their sources are absolute paths), linked like the originals
  set(_fuzz_prev gaptrace_format_fuzz)
  set(_fuzz_libs common analysis diagnosis report export)
  if(CJSON_FOUND)
    list(APPEND _fuzz_libs diff)
  endif()
  foreach(lib ${_fuzz_libs})
    get_target_property(_srcs gaptrace_${lib} SOURCES)
    get_target_property(_dir gaptrace_${lib} SOURCE_DIR)
    list(TRANSFORM _srcs PREPEND ${_dir}/ REGEX "^src/")
    add_library(gaptrace_${lib}_fuzz STATIC ${_srcs})
    target_include_directories(gaptrace_${lib}_fuzz PUBLIC ${_dir}/include PRIVATE ${_dir}/src)
    target_compile_options(gaptrace_${lib}_fuzz PRIVATE
      -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -g -O1)
    target_link_libraries(gaptrace_${lib}_fuzz PUBLIC ${_fuzz_prev} ${CMAKE_DL_LIBS} m)
    set(_fuzz_prev gaptrace_${lib}_fuzz)
  endforeach()
  # report and export both sit on the diagnosis; the chain above puts export
  # on report, which it does not need but does no harm (nor diff on export).
  if(CJSON_FOUND)
    target_compile_definitions(gaptrace_diff_fuzz PRIVATE GAPTRACE_HAVE_CJSON=1)
    target_link_libraries(gaptrace_diff_fuzz PRIVATE PkgConfig::CJSON)
  endif()
  foreach(t ${_fuzz_targets} ${_fuzz_trace_targets} ${_fuzz_elf_targets} ${_fuzz_json_targets})
    add_executable(fuzz_${t} ${_fuzz_dir}/fuzz_${t}.c)
    target_include_directories(fuzz_${t} PRIVATE ${PROJECT_SOURCE_DIR}/format/src)
    target_compile_options(fuzz_${t} PRIVATE
      -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -g -O1)
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_${t} PRIVATE gaptrace_format_fuzz)
  endforeach()
  foreach(t ${_fuzz_trace_targets})
    target_sources(fuzz_${t} PRIVATE ${_fuzz_minijson} ${_fuzz_dir}/fuzz_mutate.c
                   ${_fuzz_dir}/fuzz_mutate_hook.c)
    target_include_directories(fuzz_${t} PRIVATE ${PROJECT_SOURCE_DIR}/tests/analysis)
    target_link_libraries(fuzz_${t} PRIVATE gaptrace_${_fuzz_lib_${t}}_fuzz)
  endforeach()
  target_link_libraries(fuzz_symbolize PRIVATE gaptrace_analysis_fuzz)
  foreach(t ${_fuzz_json_targets})
    target_sources(fuzz_${t} PRIVATE ${_fuzz_minijson})
    target_include_directories(fuzz_${t} PRIVATE ${PROJECT_SOURCE_DIR}/tests/analysis)
    target_link_libraries(fuzz_${t} PRIVATE gaptrace_${t}_fuzz)
  endforeach()
endif()

# Regenerates the crafted inputs of corpus/{analysis,export,symbolize}/ (by hand, when
# a case is added: build/tests/gen_crafted tests/fuzz/corpus).
add_executable(gen_crafted ${_fuzz_dir}/gen_crafted.c)
target_link_libraries(gen_crafted PRIVATE gaptrace::format)
target_link_libraries(gen_crafted PRIVATE gt_testcommon)
target_include_directories(gen_crafted PRIVATE ${PROJECT_SOURCE_DIR}/tests/analysis)
