# SPDX-License-Identifier: MIT
# Analysis: exact answers on hand-made and synthetic traces, damaged input,
# report golden files (regenerate: GT_UPDATE_GOLDEN=1 ctest -R test_report).
gaptrace_check_test(test_analysis analysis/test_analysis.c analysis/tb.c)
target_link_libraries(test_analysis PRIVATE gaptrace::analysis gaptrace_synth)

gaptrace_check_test(test_report analysis/test_report.c analysis/tb.c analysis/minijson.c)
target_link_libraries(test_report PRIVATE gaptrace::analysis gaptrace_synth m)
target_compile_definitions(test_report PRIVATE
  GT_TEST_GOLDEN="${CMAKE_CURRENT_SOURCE_DIR}/analysis/golden")
