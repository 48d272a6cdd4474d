# SPDX-License-Identifier: MIT
# bench_format: encode/decode cost and size of the record format (BENCHMARKS.md, "Format").
add_executable(bench_format ${CMAKE_CURRENT_SOURCE_DIR}/bench_format.c)
target_link_libraries(bench_format PRIVATE gaptrace::format)
