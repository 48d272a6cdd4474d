# SPDX-License-Identifier: MIT
# bench_export: speed and memory of every export on generated traces;
# bench_jsonw: the JSON writing layer against printf and (optional) yajl
# (BENCHMARKS.md, "Export").
add_executable(bench_export ${CMAKE_CURRENT_SOURCE_DIR}/bench_export.c)
target_link_libraries(bench_export PRIVATE gaptrace::export gaptrace::synth)

add_executable(bench_jsonw ${CMAKE_CURRENT_SOURCE_DIR}/bench_jsonw.c)
target_link_libraries(bench_jsonw PRIVATE gaptrace::export gaptrace::common)
target_include_directories(bench_jsonw PRIVATE ${PROJECT_SOURCE_DIR}/collector/export/src)
# yajl is only a comparison point here; nothing else uses it.
pkg_check_modules(YAJL IMPORTED_TARGET yajl)
if(YAJL_FOUND)
  target_compile_definitions(bench_jsonw PRIVATE HAVE_YAJL=1)
  target_link_libraries(bench_jsonw PRIVATE PkgConfig::YAJL)
endif()
