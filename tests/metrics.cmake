# SPDX-License-Identifier: MIT
# gaptrace::metrics: the HTTP server of Prometheus scrapes over real sockets
# on 127.0.0.1, and the node_exporter textfile (tests/metrics/).
gaptrace_check_test(test_metrics_http metrics/test_metrics_http.c)
target_link_libraries(test_metrics_http PRIVATE gaptrace::metrics)
set_tests_properties(test_metrics_http PROPERTIES TIMEOUT 120)
gaptrace_check_test(test_metrics_textfile metrics/test_metrics_textfile.c)
target_link_libraries(test_metrics_textfile PRIVATE gaptrace::metrics)
set_tests_properties(test_metrics_textfile PROPERTIES TIMEOUT 120)
