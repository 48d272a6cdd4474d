# SPDX-License-Identifier: MIT
# CLI suites: `gaptrace run`, `gaptrace collector`, `gaptrace capture`,
# driving the real binary. fake_producer stands in for a CUDA program running
# with libgaptrace_inject.so (no GPU here); dummy_inject stands in for the .so.
add_executable(fake_producer collector/fake_producer.c)
target_link_libraries(fake_producer PRIVATE gt_tproducer)
add_library(dummy_inject SHARED collector/dummy_inject.c)

gaptrace_check_test(test_cli_run collector/test_cli_run.c)
target_link_libraries(test_cli_run PRIVATE gt_tproducer)
target_compile_definitions(test_cli_run PRIVATE
  GAPTRACE_BIN="$<TARGET_FILE:gaptrace>"
  FAKE_PRODUCER="$<TARGET_FILE:fake_producer>"
  DUMMY_INJECT="$<TARGET_FILE:dummy_inject>"
  FAKE_NVML_LIB="$<TARGET_FILE:fake_nvml>")
add_dependencies(test_cli_run gaptrace fake_producer dummy_inject fake_nvml)
