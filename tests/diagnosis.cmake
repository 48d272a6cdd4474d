# SPDX-License-Identifier: MIT
# Findings engine tests. test_diag_engine feeds the engine hand-built
# analysis results (its internal header: the rule functions one by one).
gaptrace_check_test(test_diag_engine diagnosis/test_diag_engine.c)
target_include_directories(test_diag_engine PRIVATE ${PROJECT_SOURCE_DIR}/collector/diagnosis/src
                           ${CMAKE_CURRENT_SOURCE_DIR}/diagnosis)
target_link_libraries(test_diag_engine PRIVATE gaptrace::diagnosis m)

# End to end: synthetic traces with a ground truth -> analysis -> diagnosis.
gaptrace_check_test(test_diag_synth diagnosis/test_diag_synth.c)
target_link_libraries(test_diag_synth PRIVATE gaptrace::report gaptrace::synth m)
target_include_directories(test_diag_synth PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/diagnosis)

# Golden diagnoses listed in tests/diagnosis/golden.tsv (recorded traces and
# synthetic presets); add a row to add a case, no rebuild needed.
gaptrace_check_test(test_diag_golden diagnosis/test_diag_golden.c)
target_link_libraries(test_diag_golden PRIVATE gaptrace::diagnosis gaptrace::synth)
target_include_directories(test_diag_golden PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/diagnosis)
target_compile_definitions(test_diag_golden PRIVATE
  GT_DIAG_GOLDEN_TSV="${CMAKE_CURRENT_SOURCE_DIR}/diagnosis/golden.tsv"
  GT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
