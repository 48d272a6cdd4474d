# SPDX-License-Identifier: MIT
gaptrace_check_test(test_format unit/test_format.c)
target_link_libraries(test_format PRIVATE gaptrace::format)
target_include_directories(test_format PRIVATE ${PROJECT_SOURCE_DIR}/format/src)
