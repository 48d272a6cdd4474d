# SPDX-License-Identifier: MIT
# Export tests: a Check suite for the library (exact answers on a small
# hand-written trace), and python scripts that parse whole outputs of
# `gaptrace export` on synthetic traces (JSON validity, flow pairs against
# the records, truncated input, CSV round trip, HTML well-formedness, and a
# headless Chromium screenshot of the HTML report).
gaptrace_check_test(test_export export/test_export.c)
target_link_libraries(test_export PRIVATE gaptrace::export)
target_include_directories(test_export PRIVATE ${PROJECT_SOURCE_DIR}/collector/src/export)
