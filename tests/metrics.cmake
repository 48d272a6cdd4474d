# SPDX-License-Identifier: MIT
# gaptrace::metrics: the HTTP server of Prometheus scrapes over real sockets
# on 127.0.0.1, and the node_exporter textfile (tests/metrics/).
gaptrace_check_test(test_metrics_http metrics/test_metrics_http.c)
target_link_libraries(test_metrics_http PRIVATE gaptrace::metrics)
set_tests_properties(test_metrics_http PROPERTIES TIMEOUT 120)
gaptrace_check_test(test_metrics_textfile metrics/test_metrics_textfile.c)
target_link_libraries(test_metrics_textfile PRIVATE gaptrace::metrics)
set_tests_properties(test_metrics_textfile PROPERTIES TIMEOUT 120)
# The server as curl and promtool see it (tests/metrics/metrics_curl.sh,
# metrics_serve a fixed body); skipped (77) without curl.
add_executable(metrics_serve metrics/metrics_serve.c)
target_link_libraries(metrics_serve PRIVATE gaptrace::metrics)
add_test(NAME metrics_curl COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/metrics/metrics_curl.sh
                                   $<TARGET_FILE:metrics_serve>)
set_tests_properties(metrics_curl PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
