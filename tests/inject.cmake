# SPDX-License-Identifier: MIT
# Tests of inject/: the export check, and (when the library is built) the
# mock-CUPTI suite that drives the real libgaptrace_inject.so.
if(NOT TARGET gaptrace_inject)
  return()
endif()

add_test(NAME inject_exports
  COMMAND ${CMAKE_COMMAND} -DLIB=$<TARGET_FILE:gaptrace_inject>
          -P ${CMAKE_CURRENT_SOURCE_DIR}/inject/check_exports.cmake)
