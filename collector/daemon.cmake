# SPDX-License-Identifier: MIT
# The collector daemon library: producer socket, trace files, control socket,
# NVML sampler. Depends on format/ only (dlopen for NVML, no link).
add_library(gaptrace_collector STATIC
  ${CMAKE_CURRENT_LIST_DIR}/src/daemon/collector.c
  ${CMAKE_CURRENT_LIST_DIR}/src/daemon/control.c
  ${CMAKE_CURRENT_LIST_DIR}/src/daemon/nvml.c
  ${CMAKE_CURRENT_LIST_DIR}/src/daemon/sockdir.c)
add_library(gaptrace::collector ALIAS gaptrace_collector)
target_include_directories(gaptrace_collector PUBLIC ${CMAKE_CURRENT_LIST_DIR}/include)
target_link_libraries(gaptrace_collector PUBLIC gaptrace::format Threads::Threads
  PRIVATE ${CMAKE_DL_LIBS} m)
