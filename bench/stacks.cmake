# SPDX-License-Identifier: MIT
# bench_stacks: what a host stack costs the application thread (issue 15),
# through the mock CUPTI of the tests (built only with them).
if(TARGET mock_cupti AND TARGET gaptrace_inject)
  add_executable(bench_stacks ${CMAKE_CURRENT_LIST_DIR}/bench_stacks.c
    ${PROJECT_SOURCE_DIR}/tests/inject/harness.c)
  target_include_directories(bench_stacks PRIVATE ${PROJECT_SOURCE_DIR}/tests/inject
    ${PROJECT_SOURCE_DIR}/format/src)
  target_link_libraries(bench_stacks PRIVATE gt_testcommon mock_cuda mock_cupti gaptrace::format
    Threads::Threads)
  target_compile_definitions(bench_stacks PRIVATE
    INJECT_SO="$<TARGET_FILE:gaptrace_inject>" MOCK_CUPTI_SO="$<TARGET_FILE:mock_cupti>")
  add_dependencies(bench_stacks gaptrace_inject)
endif()
