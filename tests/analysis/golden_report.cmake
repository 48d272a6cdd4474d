# SPDX-License-Identifier: MIT
# Golden report of a trace recorded on the H200: run `gaptrace report` (text or
# --json) on TRACE and compare with GOLDEN byte for byte. With UPDATE=1 the
# golden file is rewritten instead (GT_UPDATE_GOLDEN=1 in the environment).
# cmake -DGAPTRACE=... -DTRACE=... -DGOLDEN=... -DMODE=text|json -P golden_report.cmake
set(_args report)
if(MODE STREQUAL "json")
  list(APPEND _args --json)
endif()
execute_process(COMMAND ${GAPTRACE} ${_args} ${TRACE}
  OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "gaptrace report ${TRACE} failed (${_rc}): ${_err}")
endif()
if("$ENV{GT_UPDATE_GOLDEN}" STREQUAL "1")
  file(WRITE ${GOLDEN} "${_out}")
  return()
endif()
file(READ ${GOLDEN} _want)
if(NOT _out STREQUAL _want)
  string(LENGTH "${_out}" _n)
  file(WRITE ${GOLDEN}.actual "${_out}")
  message(FATAL_ERROR "report of ${TRACE} differs from ${GOLDEN} (actual output in "
                      "${GOLDEN}.actual; regenerate with GT_UPDATE_GOLDEN=1 if intended)")
endif()
