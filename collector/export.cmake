# SPDX-License-Identifier: MIT
# The export library: Perfetto JSON timeline, nsys-style stats tables
# (CSV/JSON), self-contained HTML report. Depends on gaptrace::analysis.
add_library(gaptrace_export STATIC
  src/export/ex_out.c
  src/export/ex_src.c
  src/export/ex_perfetto.c
  src/export/ex_tables.c
  src/export/ex_html.c)
add_library(gaptrace::export ALIAS gaptrace_export)
target_include_directories(gaptrace_export PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
target_link_libraries(gaptrace_export PUBLIC gaptrace::analysis gaptrace::format PRIVATE m)
# The findings section and table need the diagnosis engine (part of
# gaptrace_analysis) when this tree has it.
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/include/gaptrace/diagnosis.h)
  target_compile_definitions(gaptrace_export PRIVATE GT_EX_HAVE_DIAGNOSIS=1)
endif()
