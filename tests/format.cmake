# SPDX-License-Identifier: MIT
# format/ tests: Check suites, golden invalid inputs, fuzz corpus replay.
set(_fmt_src ${PROJECT_SOURCE_DIR}/format/src)

# A format suite: Check test linked with the library, seeing its internals.
function(gaptrace_format_test name)
  gaptrace_check_test(${name} unit/${name}.c)
  target_link_libraries(${name} PRIVATE gaptrace::format)
  target_include_directories(${name} PRIVATE ${_fmt_src})
endfunction()

gaptrace_format_test(test_format)

gaptrace_format_test(test_format_damage)
target_compile_definitions(test_format_damage PRIVATE
  GOLDEN_DIR="${CMAKE_CURRENT_SOURCE_DIR}/golden"
  GAPTRACE_BIN="$<TARGET_FILE:gaptrace>")
add_dependencies(test_format_damage gaptrace)

# Regenerates tests/golden/*.bin (by hand, when a case is added).
add_executable(gen_golden golden/gen_golden.c)
target_link_libraries(gen_golden PRIVATE gaptrace::format PkgConfig::CHECK)
target_link_libraries(gen_golden PRIVATE gt_testcommon)
target_include_directories(gen_golden PRIVATE ${_fmt_src} ${CMAKE_CURRENT_SOURCE_DIR}/unit)

# FORMAT.md must match the code: field tables, the example hex dump, caps.
# `test_format_spec --write-example F` writes the example stream.
gaptrace_format_test(test_format_spec)
target_compile_definitions(test_format_spec PRIVATE
  FORMAT_MD="${PROJECT_SOURCE_DIR}/format/FORMAT.md"
  GAPTRACE_BIN="$<TARGET_FILE:gaptrace>")
add_dependencies(test_format_spec gaptrace)

# libFuzzer targets and their corpus replay (tests/fuzz/).
include(${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz.cmake)
