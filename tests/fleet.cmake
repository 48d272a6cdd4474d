# SPDX-License-Identifier: MIT
# The fleet assets of examples/fleet/ (Prometheus rules and their unit tests,
# the Grafana dashboard's PromQL, the systemd unit, the Kubernetes manifests)
# against docs/FLEET.md and each other (tests/fleet/check_assets.py). Skipped
# (77) without promtool (Debian: prometheus) or python3-yaml. No binary of
# the build is needed.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME fleet_assets
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fleet/check_assets.py
                   ${PROJECT_SOURCE_DIR})
  # The check can fail: known errors planted one at a time in a copy must
  # each be reported.
  add_test(NAME fleet_assets_planted
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fleet/check_assets.py
                   --planted ${PROJECT_SOURCE_DIR})
else()
  add_test(NAME fleet_assets COMMAND sh -c "echo 'SKIP: python3 not found'; exit 77")
  add_test(NAME fleet_assets_planted COMMAND sh -c "echo 'SKIP: python3 not found'; exit 77")
endif()
set_tests_properties(fleet_assets fleet_assets_planted PROPERTIES TIMEOUT 120
                     SKIP_RETURN_CODE 77)
