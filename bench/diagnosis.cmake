# SPDX-License-Identifier: MIT
# bench_diagnosis: time of the findings engine on top of a finished analysis
# (BENCHMARKS.md, "Diagnosis").
if(TARGET gaptrace_synth)
  add_executable(bench_diagnosis ${CMAKE_CURRENT_SOURCE_DIR}/bench_diagnosis.c)
  target_link_libraries(bench_diagnosis PRIVATE gaptrace::diagnosis gaptrace::synth)
  target_include_directories(bench_diagnosis PRIVATE ${PROJECT_SOURCE_DIR}/tests/diagnosis)
endif()
