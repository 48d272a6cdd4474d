# SPDX-License-Identifier: MIT
# The diff (collector/diff) and `gaptrace diff`, `archive`, `history`: exact
# answers on hand-made reports, the real binary on synthetic traces with a
# known regression and on the recorded pair conv_train / conv_host.
gaptrace_check_test(test_diff diff/test_diff.c analysis/minijson.c)
target_link_libraries(test_diff PRIVATE gaptrace::diff m)
target_include_directories(test_diff PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/analysis)
target_compile_definitions(test_diff PRIVATE
  GAPTRACE_BIN="$<TARGET_FILE:gaptrace>"
  EXAMPLE_TRACES="${PROJECT_SOURCE_DIR}/examples/traces")
add_dependencies(test_diff gaptrace)
