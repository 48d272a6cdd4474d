# SPDX-License-Identifier: MIT
# Issue 25, "bounded in time and memory on any input": every golden hostile
# input of tests/hostile/inputs/ through the commands of its sidecar, under a
# watchdog and an address-space limit (tests/hostile/README.md).
set(_hostile_dir ${CMAKE_CURRENT_SOURCE_DIR}/hostile)

# Rewrites the inputs by hand, when a case is added:
#   build/tests/gen_hostile tests/hostile/inputs tests/fuzz/corpus
add_executable(gen_hostile ${_hostile_dir}/gen_hostile.c)
target_link_libraries(gen_hostile PRIVATE gaptrace::format gt_testcommon)

# Sanitizer builds reserve terabytes of shadow memory: no ulimit -v there
# (the runner says so), the watchdog and the output bound still hold.
set(_hostile_env "")
if(GAPTRACE_SANITIZE)
  set(_hostile_env "HOSTILE_NO_VLIMIT=1")
endif()
add_test(NAME hostile_inputs
         COMMAND bash ${_hostile_dir}/run_hostile.sh $<TARGET_FILE:gaptrace>
                 ${_hostile_dir}/inputs ${CMAKE_CURRENT_BINARY_DIR}/hostile-work)
set_tests_properties(hostile_inputs PROPERTIES TIMEOUT 900 ENVIRONMENT "${_hostile_env}")

# The JSON reports of diff too large to keep (tests/hostile/gen_reports.c):
# made into the build tree by the fixture, then run like the inputs above.
add_executable(gen_hostile_reports ${_hostile_dir}/gen_reports.c)
set(_hostile_reports ${CMAKE_CURRENT_BINARY_DIR}/hostile-reports)
add_test(NAME hostile_reports_gen
         COMMAND sh -c "rm -rf '${_hostile_reports}' && mkdir -p '${_hostile_reports}' && '$<TARGET_FILE:gen_hostile_reports>' '${_hostile_reports}'")
set_tests_properties(hostile_reports_gen PROPERTIES TIMEOUT 120 FIXTURES_SETUP hostile_reports)
add_test(NAME hostile_reports
         COMMAND bash ${_hostile_dir}/run_hostile.sh $<TARGET_FILE:gaptrace>
                 ${_hostile_reports} ${CMAKE_CURRENT_BINARY_DIR}/hostile-reports-work)
set_tests_properties(hostile_reports PROPERTIES TIMEOUT 900 ENVIRONMENT "${_hostile_env}"
                     FIXTURES_REQUIRED hostile_reports)

# Issue 25 row 9: the text outputs (report, dump, diff, history) of the
# input with control bytes in every name hold no control byte, no C1 and no
# forged line (tests/hostile/check_term_bytes.py).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME hostile_term_bytes
           COMMAND ${Python3_EXECUTABLE} ${_hostile_dir}/check_term_bytes.py $<TARGET_FILE:gaptrace>
                   ${_hostile_dir}/inputs/names-control-bytes.gtrace
                   ${CMAKE_CURRENT_BINARY_DIR}/hostile-term-work)
  set_tests_properties(hostile_term_bytes PROPERTIES TIMEOUT 300)
endif()
