# SPDX-License-Identifier: MIT
# format/ tests: Check suites, golden invalid inputs, fuzz corpus replay.
set(_fmt_src ${PROJECT_SOURCE_DIR}/format/src)

# A format suite: Check test linked with the library, seeing its internals.
function(gaptrace_format_test name)
  gaptrace_check_test(${name} unit/${name}.c)
  target_link_libraries(${name} PRIVATE gaptrace::format)
  target_include_directories(${name} PRIVATE ${_fmt_src})
endfunction()

gaptrace_format_test(test_format)

# Size-prefixed option structs: the sz rules of format.h.
gaptrace_format_test(test_format_opts)

gaptrace_format_test(test_format_damage)
target_compile_definitions(test_format_damage PRIVATE
  GOLDEN_DIR="${CMAKE_CURRENT_SOURCE_DIR}/golden"
  GAPTRACE_BIN="$<TARGET_FILE:gaptrace>")
add_dependencies(test_format_damage gaptrace)

# Regenerates tests/golden/*.bin (by hand, when a case is added).
add_executable(gen_golden golden/gen_golden.c)
target_link_libraries(gen_golden PRIVATE gaptrace::format PkgConfig::CHECK)
target_link_libraries(gen_golden PRIVATE gt_testcommon)
target_include_directories(gen_golden PRIVATE ${_fmt_src} ${CMAKE_CURRENT_SOURCE_DIR}/unit)

# FORMAT.md must match the code: field tables, the example hex dump, caps.
# `test_format_spec --write-example F` writes the example stream.
gaptrace_format_test(test_format_spec)
target_compile_definitions(test_format_spec PRIVATE
  FORMAT_MD="${PROJECT_SOURCE_DIR}/format/FORMAT.md"
  GAPTRACE_BIN="$<TARGET_FILE:gaptrace>")
add_dependencies(test_format_spec gaptrace)

# libFuzzer targets and their corpus replay (tests/fuzz/).
include(${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz.cmake)

# The ABI of libgaptrace_format.so (issue 26, boundaries a machine checks):
# nm -D of the built library, the GT_API functions of format.h and the
# version script (format/libgaptrace_format.map) name the same functions,
# every export versioned where the linker took the script.
if(GAPTRACE_LINKER_VERSION_SCRIPT)
  set(_gt_versioned 1)
else()
  set(_gt_versioned 0)
endif()
set(_gt_exports_args
  ${PROJECT_SOURCE_DIR}/format/include/gaptrace/format.h
  $<TARGET_FILE:gaptrace_format_shared>
  ${PROJECT_SOURCE_DIR}/format/libgaptrace_format.map
  ${_gt_versioned} ${CMAKE_NM})
add_test(NAME format_exports
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/check_format_exports.sh ${_gt_exports_args})
# The check can fail: broken copies of the lists must fail it, by name.
add_test(NAME format_exports_fixture
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/format_exports/check_format_exports_fixture.sh
                 ${CMAKE_CURRENT_SOURCE_DIR}/check_format_exports.sh ${_gt_exports_args})
set_tests_properties(format_exports format_exports_fixture PROPERTIES TIMEOUT 60)
