# SPDX-License-Identifier: MIT
add_executable(collector_throughput ${CMAKE_CURRENT_LIST_DIR}/collector_throughput.c)
target_link_libraries(collector_throughput PRIVATE gaptrace::collector Threads::Threads)
