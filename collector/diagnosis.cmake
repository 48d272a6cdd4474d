# SPDX-License-Identifier: MIT
# The findings engine (collector/src/diagnosis/, public header
# gaptrace/diagnosis.h) is part of the analysis library: the report calls it
# to lead with the findings. Its core (everything but diag_analysis.c, the
# glue to gt_analysis) has no dependency on the analysis implementation, so
# tests can also build it alone (GT_DIAG_CORE_SOURCES).
set(_gt_diag_dir ${CMAKE_CURRENT_SOURCE_DIR}/src/diagnosis)
set_property(GLOBAL PROPERTY GT_DIAG_CORE_SOURCES
  ${_gt_diag_dir}/diag_arena.c
  ${_gt_diag_dir}/diag_engine.c
  ${_gt_diag_dir}/diag_occupancy.c
  ${_gt_diag_dir}/diag_options.c
  ${_gt_diag_dir}/diag_output.c
  ${_gt_diag_dir}/diag_wave.c)
set_property(GLOBAL PROPERTY GT_DIAG_SRC_DIR ${_gt_diag_dir})
get_property(_gt_diag_core GLOBAL PROPERTY GT_DIAG_CORE_SOURCES)
if(TARGET gaptrace_analysis)
  target_sources(gaptrace_analysis PRIVATE ${_gt_diag_core} ${_gt_diag_dir}/diag_analysis.c)
  target_link_libraries(gaptrace_analysis PRIVATE m)
else()
  message(STATUS "gaptrace: no gaptrace_analysis target yet; diagnosis core only in tests")
endif()
