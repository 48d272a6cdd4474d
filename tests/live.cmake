# SPDX-License-Identifier: MIT
# The collector's live analysis (collector/live): the one-truth test
# (closed windows equal `gaptrace report --capture --from @A --to @B` of the
# collector's own traces) with a producer replaying a synthetic trace whose
# causes are known.
add_executable(replay_producer live/replay_producer.c live/producer_util.c)
target_link_libraries(replay_producer PRIVATE gt_tproducer gaptrace::format)
target_include_directories(replay_producer PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/collector)
add_test(NAME live_truth
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/live/live_truth.py $<TARGET_FILE:gaptrace>
          $<TARGET_FILE:replay_producer> $<TARGET_FILE:fake_nvml>)
set_tests_properties(live_truth PROPERTIES TIMEOUT 180)
add_test(NAME live_truth_sync
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/live/live_truth.py $<TARGET_FILE:gaptrace>
          $<TARGET_FILE:replay_producer> $<TARGET_FILE:fake_nvml> sync steps=5000)
set_tests_properties(live_truth_sync PROPERTIES TIMEOUT 180)
# Records delivered 3 s late (past the 1 s watermark) under honest delivery
# marks: the windows wait for them and still equal the report, none late.
add_test(NAME live_truth_late_marked
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/live/live_truth.py $<TARGET_FILE:gaptrace>
          $<TARGET_FILE:replay_producer> $<TARGET_FILE:fake_nvml> --late-marked=3000)
set_tests_properties(live_truth_late_marked PROPERTIES TIMEOUT 180)
# The fleet end to end: a real Prometheus server (Debian's package, on
# loopback, bounded) scrapes the collector's /metrics and a fake
# dcgm-exporter (tests/fleet/prom_e2e.py); skipped (77) without it.
add_test(NAME fleet_prometheus
  COMMAND python3 ${PROJECT_SOURCE_DIR}/tests/fleet/prom_e2e.py $<TARGET_FILE:gaptrace>
          $<TARGET_FILE:replay_producer> $<TARGET_FILE:fake_nvml>
          ${PROJECT_SOURCE_DIR}/examples/fleet/gaptrace.rules.yml)
set_tests_properties(fleet_prometheus PROPERTIES TIMEOUT 240 SKIP_RETURN_CODE 77)
# The live analysis in manual mode with a fake clock: the base across
# dropped frames, the sum invariant of the exposition, late records, pod and
# job labels from a fake /proc, the cardinality budget, the delivery marks
# (a window waits for them; stale marks; max_wait; no marks).
gaptrace_check_test(test_live live/test_live.c)
target_link_libraries(test_live PRIVATE gaptrace::live gaptrace::format)
# The soak: a producer at 200 000 records/s for ~3 minutes (GAPTRACE_SOAK_S);
# no window lost, no record lost or late, the collector's memory flat.
add_executable(rate_producer live/rate_producer.c live/producer_util.c)
target_link_libraries(rate_producer PRIVATE gt_tproducer gaptrace::format)
target_include_directories(rate_producer PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/collector)
# Under the sanitizers (a Debug build several times slower, whose producer
# alone could not hold the rate) the same checks run 60 s at 50 000/s.
set(_soak_args)
if(GAPTRACE_SANITIZE)
  set(_soak_args --seconds 60 --rate 50000)
endif()
add_test(NAME live_soak
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/live/live_soak.py $<TARGET_FILE:gaptrace>
          $<TARGET_FILE:rate_producer> $<TARGET_FILE:fake_nvml> ${_soak_args})
set_tests_properties(live_soak PROPERTIES TIMEOUT 600)
