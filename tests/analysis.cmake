# SPDX-License-Identifier: MIT
# Analysis: exact answers on hand-made and synthetic traces, damaged input,
# report golden files (regenerate: GT_UPDATE_GOLDEN=1 ctest -R test_report).
gaptrace_check_test(test_analysis analysis/test_analysis.c analysis/tb.c)
target_link_libraries(test_analysis PRIVATE gaptrace::report gaptrace::synth)
# hand-made frames (tests/unit/test_format_util.h) for hostile input
target_include_directories(test_analysis PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit
                           ${PROJECT_SOURCE_DIR}/format/src)

gaptrace_check_test(test_report analysis/test_report.c analysis/tb.c analysis/minijson.c)
target_link_libraries(test_report PRIVATE gaptrace::report gaptrace::synth m)
target_compile_definitions(test_report PRIVATE
  GT_TEST_GOLDEN="${CMAKE_CURRENT_SOURCE_DIR}/analysis/golden")

gaptrace_check_test(test_comm analysis/test_comm.c analysis/tb.c)
target_link_libraries(test_comm PRIVATE gaptrace::report gaptrace::synth)

# Steps, NVTX ranges (nvtx_sum) and slices (--pid, --gpu, from/to).
gaptrace_check_test(test_steps analysis/test_steps.c analysis/tb.c)
target_link_libraries(test_steps PRIVATE gaptrace::report gaptrace::synth)
target_compile_definitions(test_steps PRIVATE GT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# Golden reports of traces recorded on the H200 (examples/traces/).
foreach(_t item_metric periodic_ckpt two_procs)
  foreach(_m text json)
    # relative trace path: the report names the files, and the golden must not
    # depend on where the repository is checked out
    add_test(NAME report_h200_${_t}_${_m} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      COMMAND ${CMAKE_COMMAND} -DGAPTRACE=$<TARGET_FILE:gaptrace>
              -DTRACE=examples/traces/${_t}
              -DGOLDEN=${CMAKE_CURRENT_SOURCE_DIR}/analysis/golden/h200_${_t}.${_m}
              -DMODE=${_m} -P ${CMAKE_CURRENT_SOURCE_DIR}/analysis/golden_report.cmake)
    set_tests_properties(report_h200_${_t}_${_m} PROPERTIES TIMEOUT 120)
  endforeach()
endforeach()

# The one human-units formatter and API-name cleaner; the text and HTML
# reports of one trace agree on a figure.
gaptrace_check_test(test_units analysis/test_units.c)
target_link_libraries(test_units PRIVATE gaptrace::report gaptrace::export)
target_compile_definitions(test_units PRIVATE
  GT_TEST_TRACES="${PROJECT_SOURCE_DIR}/examples/traces")

# The shared containers (gaptrace/containers.h): growth, zeroing, the
# allocation-failure paths (2^60-byte requests, which ASan must refuse by
# returning NULL), interning.
# The trace set: each file read once (gaptrace/traceset.h).
gaptrace_check_test(test_traceset analysis/test_traceset.c analysis/tb.c)
target_link_libraries(test_traceset PRIVATE gaptrace::analysis gaptrace::common gaptrace::synth)
set_tests_properties(test_traceset PROPERTIES TIMEOUT 60)
gaptrace_check_test(test_containers analysis/test_containers.c)
target_link_libraries(test_containers PRIVATE gaptrace::common)
set_tests_properties(test_containers PROPERTIES TIMEOUT 60
  ENVIRONMENT "CK_FORK=yes;ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1")

# The native-frame symbolizer: this test program's own functions, libc's
# and libgaptrace_format.so's by exact name; hand-made and hostile ELF files.
gaptrace_check_test(test_symbolize analysis/test_symbolize.c)
target_link_libraries(test_symbolize PRIVATE gaptrace::analysis ${CMAKE_DL_LIBS})
target_compile_definitions(test_symbolize PRIVATE
  GT_FORMAT_SO="$<TARGET_FILE:gaptrace_format_shared>")
add_dependencies(test_symbolize gaptrace_format_shared)
set_tests_properties(test_symbolize PROPERTIES TIMEOUT 120)

# Issue 23 item 7: the GPM readings of the H200 traces against their CUPTI
# kernels (tests/analysis/gpm_align.py --check: each informative trace fits
# best late by as much as its stamps' convention says; DIAGNOSIS.md, "GPM
# timing").
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME gpm_align
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/analysis/gpm_align.py --check
            --gaptrace $<TARGET_FILE:gaptrace> ${PROJECT_SOURCE_DIR}/examples/traces)
else()
  add_test(NAME gpm_align COMMAND sh -c "echo 'SKIP: python3 not found, gpm_align not run'; exit 77")
  set_tests_properties(gpm_align PROPERTIES SKIP_RETURN_CODE 77)
endif()
set_tests_properties(gpm_align PROPERTIES TIMEOUT 120)
