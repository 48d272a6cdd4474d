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

# One truth in every output, on the bundled traces: small_grid's evidence adds
# up to its claim; text and HTML tag the same kernels.
gaptrace_check_test(test_diag_outputs diagnosis/test_diag_outputs.c)
target_link_libraries(test_diag_outputs PRIVATE gaptrace::report gaptrace::export)
target_compile_definitions(test_diag_outputs PRIVATE GT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
