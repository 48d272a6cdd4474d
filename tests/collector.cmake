# SPDX-License-Identifier: MIT
# Collector daemon suites. tproducer.c is a minimal producer speaking the
# socket protocol like libgaptrace_inject.so (used by suites and programs).
add_library(gt_tproducer STATIC collector/tproducer.c)
target_link_libraries(gt_tproducer PUBLIC gaptrace::format gaptrace::collector)

gaptrace_check_test(test_collector collector/test_collector.c)
target_link_libraries(test_collector PRIVATE gt_tproducer gaptrace::collector Threads::Threads)
target_compile_definitions(test_collector PRIVATE GAPTRACE_BIN="$<TARGET_FILE:gaptrace>")
add_dependencies(test_collector gaptrace)
