# SPDX-License-Identifier: MIT
# pystack_bench.so: the cost of inj_py_walk, loaded by bench/pystack_bench.py
# into the interpreter measured (BENCHMARKS.md, "Python stacks"). Built
# without sanitizers: no interpreter has their runtime.
add_library(pystack_bench MODULE ${CMAKE_CURRENT_SOURCE_DIR}/pystack_bench.c
  ${PROJECT_SOURCE_DIR}/inject/src/pystack.c)
target_include_directories(pystack_bench PRIVATE ${PROJECT_SOURCE_DIR}/inject/src)
target_compile_definitions(pystack_bench PRIVATE PYSTACK_COUNT_READS)
set_target_properties(pystack_bench PROPERTIES PREFIX "" C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
if(GAPTRACE_SANITIZE)
  get_target_property(_opts pystack_bench COMPILE_OPTIONS)
  list(FILTER _opts EXCLUDE REGEX "sanitize")
  set_target_properties(pystack_bench PROPERTIES COMPILE_OPTIONS "${_opts}" LINK_OPTIONS "")
endif()
