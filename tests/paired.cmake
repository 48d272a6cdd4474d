# SPDX-License-Identifier: MIT
# bench/paired (issue 28 items 1-2): the paired statistic's unit tests, and
# end-to-end runs of paired.py on a CPU workload whose armed steps are longer
# by construction, through the real gaptrace CLI, collector and injection
# library: armed vs dormant (paired_mock), and with the CUPTI floor, where
# CUPTI's simulated cost is paid but not the decoding's (paired_floor_mock).
find_package(Python3 COMPONENTS Interpreter)
add_test(NAME paired_stats
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/bench/paired/test_stats.py)
set_tests_properties(paired_stats PROPERTIES TIMEOUT 60)

# Not under the sanitizers: a timing under ASan says nothing, and the
# statistic is what the test checks.
if(NOT TARGET mock_cuda OR GAPTRACE_SANITIZE)
  return()
endif()
add_executable(fake_steps ${CMAKE_CURRENT_SOURCE_DIR}/paired/fake_steps.c)
target_link_libraries(fake_steps PRIVATE mock_cuda mock_cupti)
add_dependencies(fake_steps gaptrace gaptrace_inject)
add_test(NAME paired_mock
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/paired/check_paired_mock.py
          ${PROJECT_SOURCE_DIR}/bench/paired/paired.py $<TARGET_FILE:gaptrace>
          $<TARGET_FILE:gaptrace_inject> $<TARGET_FILE:mock_cupti> $<TARGET_FILE:fake_steps>
          ${CMAKE_CURRENT_BINARY_DIR}/paired_mock)
set_tests_properties(paired_mock PROPERTIES TIMEOUT 120)
add_test(NAME paired_floor_mock
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/paired/check_paired_mock.py
          ${PROJECT_SOURCE_DIR}/bench/paired/paired.py $<TARGET_FILE:gaptrace>
          $<TARGET_FILE:gaptrace_inject> $<TARGET_FILE:mock_cupti> $<TARGET_FILE:fake_steps>
          ${CMAKE_CURRENT_BINARY_DIR}/paired_floor_mock floor)
set_tests_properties(paired_floor_mock PROPERTIES TIMEOUT 200)
