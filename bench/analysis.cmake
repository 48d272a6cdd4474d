# SPDX-License-Identifier: MIT
# bench_analysis: time and memory of the analysis on generated traces
# (BENCHMARKS.md, "Analysis").
add_executable(bench_analysis ${CMAKE_CURRENT_SOURCE_DIR}/bench_analysis.c)
target_link_libraries(bench_analysis PRIVATE gaptrace::analysis gaptrace::synth)
