# SPDX-License-Identifier: MIT
# The analysis library: traces -> per-GPU timelines, gaps and causes,
# tables, reports. Depends on gaptrace::format only (and libdl for the
# demangler, loaded at run time).
add_library(gaptrace_analysis STATIC
  src/analysis/util.c
  src/analysis/sort.c
  src/analysis/load.c
  src/analysis/timeline.c
  src/analysis/gaps.c
  src/analysis/comm.c
  src/analysis/collname.c
  src/analysis/tables.c
  src/analysis/analysis.c
  src/analysis/demangle.c
  src/analysis/jsonstr.c
  src/analysis/report_text.c
  src/analysis/report_json.c)
add_library(gaptrace::analysis ALIAS gaptrace_analysis)
target_include_directories(gaptrace_analysis PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
target_link_libraries(gaptrace_analysis PUBLIC gaptrace::format PRIVATE ${CMAKE_DL_LIBS} Threads::Threads m)
