# SPDX-License-Identifier: MIT
# Collector daemon suites. tproducer.c is a minimal producer speaking the
# socket protocol like libgaptrace_inject.so (used by suites and programs).
add_library(gt_tproducer STATIC collector/tproducer.c)
target_link_libraries(gt_tproducer PUBLIC gaptrace::format gaptrace::collector PkgConfig::CHECK)
target_link_libraries(gt_tproducer PUBLIC gt_testcommon)

gaptrace_check_test(test_collector collector/test_collector.c)
target_link_libraries(test_collector PRIVATE gt_tproducer gaptrace::collector Threads::Threads)
target_compile_definitions(test_collector PRIVATE GAPTRACE_BIN="$<TARGET_FILE:gaptrace>"
  FAKE_NVML_LIB="$<TARGET_FILE:fake_nvml>")
add_dependencies(test_collector gaptrace fake_nvml)

# A fake libnvidia-ml.so.1 (no GPU here): loaded by path through dlopen.
add_library(fake_nvml SHARED collector/fake_nvml.c)
set_target_properties(fake_nvml PROPERTIES OUTPUT_NAME fakenvml)
gaptrace_check_test(test_nvml collector/test_nvml.c)
target_link_libraries(test_nvml PRIVATE gt_tproducer gaptrace::collector)
target_compile_definitions(test_nvml PRIVATE FAKE_NVML_LIB="$<TARGET_FILE:fake_nvml>")
add_dependencies(test_nvml fake_nvml)

# Hostile environments: a low RLIMIT_NOFILE, descriptors exhausted by the
# host program, a connect/close soak (memory and descriptors stay flat).
gaptrace_check_test(test_collector_limits collector/test_limits.c)
target_link_libraries(test_collector_limits PRIVATE gt_tproducer gaptrace::collector Threads::Threads)
target_compile_definitions(test_collector_limits PRIVATE GAPTRACE_BIN="$<TARGET_FILE:gaptrace>")
add_dependencies(test_collector_limits gaptrace)
