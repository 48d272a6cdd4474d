# SPDX-License-Identifier: MIT
# Export tests: a Check suite for the library (exact answers on a small
# hand-written trace), and python scripts that parse whole outputs of
# `gaptrace export` on synthetic traces (JSON validity, flow pairs against
# the records, truncated input, CSV round trip, HTML well-formedness, and a
# headless Chromium screenshot of the HTML report).
gaptrace_check_test(test_export export/test_export.c)
target_link_libraries(test_export PRIVATE gaptrace::export gaptrace::common)
target_include_directories(test_export PRIVATE ${PROJECT_SOURCE_DIR}/collector/export/src
                           ${PROJECT_SOURCE_DIR}/tests/unit ${PROJECT_SOURCE_DIR}/format/src)

find_package(Python3 COMPONENTS Interpreter)
set(_gt_export_check ${CMAKE_CURRENT_SOURCE_DIR}/export/check_export.py)
foreach(_check perfetto truncated counts csv html screenshot)
  if(Python3_Interpreter_FOUND)
    add_test(NAME export_${_check}
      COMMAND ${Python3_EXECUTABLE} ${_gt_export_check} ${_check}
              --gaptrace $<TARGET_FILE:gaptrace>
              --work ${CMAKE_CURRENT_BINARY_DIR}/export_${_check})
  else()
    add_test(NAME export_${_check}
      COMMAND sh -c "echo 'SKIP: python3 not found, export_${_check} not run'; exit 77")
  endif()
  # 77 = skipped (e.g. no Chromium): ctest reports it as skipped, not passed
  set_tests_properties(export_${_check} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endforeach()

# Cross-output consistency (tests/consistency/check_consistency.py): text,
# JSON, CSV, HTML and Perfetto agree per GPU on every bundled trace and
# synthetic preset. Known open gaps print as XFAIL.
if(Python3_Interpreter_FOUND)
  add_test(NAME consistency
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/consistency/check_consistency.py
            --gaptrace $<TARGET_FILE:gaptrace>
            --traces ${PROJECT_SOURCE_DIR}/examples/traces
            --work ${CMAKE_CURRENT_BINARY_DIR}/consistency)
else()
  add_test(NAME consistency
    COMMAND sh -c "echo 'SKIP: python3 not found, consistency not run'; exit 77")
endif()
set_tests_properties(consistency PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
