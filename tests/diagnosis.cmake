# SPDX-License-Identifier: MIT
# Findings engine tests. test_diag_engine builds the engine core alone (no
# analysis implementation needed) and feeds it hand-built analysis results.
get_property(_gt_diag_core GLOBAL PROPERTY GT_DIAG_CORE_SOURCES)
get_property(_gt_diag_dir GLOBAL PROPERTY GT_DIAG_SRC_DIR)
if(_gt_diag_core)
  gaptrace_check_test(test_diag_engine diagnosis/test_diag_engine.c ${_gt_diag_core}
                      ${PROJECT_SOURCE_DIR}/collector/src/analysis/collname.c
                      ${PROJECT_SOURCE_DIR}/collector/src/analysis/jsonstr.c)
  target_include_directories(test_diag_engine PRIVATE ${PROJECT_SOURCE_DIR}/collector/include
                             ${_gt_diag_dir} ${CMAKE_CURRENT_SOURCE_DIR}/diagnosis)
  target_link_libraries(test_diag_engine PRIVATE gaptrace::format m)
endif()

# End to end: synthetic traces with a ground truth -> analysis -> diagnosis.
if(TARGET gaptrace_analysis AND TARGET gaptrace_synth)
  gaptrace_check_test(test_diag_synth diagnosis/test_diag_synth.c)
  target_link_libraries(test_diag_synth PRIVATE gaptrace::analysis gaptrace_synth m)
  target_include_directories(test_diag_synth PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/diagnosis)
endif()

# Golden diagnoses listed in tests/diagnosis/golden.tsv (recorded traces and
# synthetic presets); add a row to add a case, no rebuild needed.
if(TARGET gaptrace_analysis AND TARGET gaptrace_synth)
  gaptrace_check_test(test_diag_golden diagnosis/test_diag_golden.c)
  target_link_libraries(test_diag_golden PRIVATE gaptrace::analysis gaptrace_synth)
  target_include_directories(test_diag_golden PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/diagnosis)
  target_compile_definitions(test_diag_golden PRIVATE
    GT_DIAG_GOLDEN_TSV="${CMAKE_CURRENT_SOURCE_DIR}/diagnosis/golden.tsv"
    GT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
