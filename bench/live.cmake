# SPDX-License-Identifier: MIT
# bench_live: records per second of the live analysis on one core
# (BENCHMARKS.md, "Live analysis: records per second").
add_executable(bench_live ${CMAKE_CURRENT_LIST_DIR}/bench_live.c)
target_link_libraries(bench_live PRIVATE gaptrace::live gaptrace::format)
