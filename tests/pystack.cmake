# SPDX-License-Identifier: MIT
# inject/src/pystack.c against real CPython interpreters (tests/pystack/).
#
# For every CPython 3.10-3.13 found (python3.1N on PATH, /usr/bin, pyenv's
# versions; GAPTRACE_PYSTACK_PYTHONS=list to choose), two tests:
#   pystack_py_<version>      pystack_check.py: walks of that interpreter's
#                              own frames compared with what it says itself
#   pystack_layout_<version>  inject/tools/pystack_offsets.c compiled
#                              against its headers (with internal/, when
#                              installed): the committed row must equal
#                              offsetof() of those headers
# None found: pystack_python says SKIP (exit 77).
#
# The probe is built without sanitizers: it is loaded into an interpreter
# that has no sanitizer runtime.
set(_ps ${CMAKE_CURRENT_SOURCE_DIR}/pystack)
add_library(pystack_probe MODULE ${_ps}/pystack_probe.c ${PROJECT_SOURCE_DIR}/inject/src/pystack.c)
target_include_directories(pystack_probe PRIVATE ${PROJECT_SOURCE_DIR}/inject/src)
set_target_properties(pystack_probe PROPERTIES PREFIX "" C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/pystack)
if(GAPTRACE_SANITIZE)
  get_target_property(_opts pystack_probe COMPILE_OPTIONS)
  list(FILTER _opts EXCLUDE REGEX "sanitize")
  set_target_properties(pystack_probe PROPERTIES COMPILE_OPTIONS "${_opts}" LINK_OPTIONS "")
endif()

if(NOT DEFINED GAPTRACE_PYSTACK_PYTHONS)
  set(_cands)
  foreach(_m 10 11 12 13)
    find_program(_gt_py3${_m} NAMES python3.${_m} NO_CACHE)
    file(GLOB _pyenv "$ENV{HOME}/.pyenv/versions/3.${_m}.*/bin/python3.${_m}"
                     "$ENV{PYENV_ROOT}/versions/3.${_m}.*/bin/python3.${_m}")
    list(APPEND _cands ${_gt_py3${_m}} /usr/bin/python3.${_m} ${_pyenv})
  endforeach()
  set(GAPTRACE_PYSTACK_PYTHONS ${_cands})
endif()

set(_seen)
foreach(_py ${GAPTRACE_PYSTACK_PYTHONS})
  if(NOT EXISTS ${_py})
    continue()
  endif()
  # A pyenv shim of a version not selected fails here: not an interpreter.
  execute_process(COMMAND ${_py} -c
    "import sys,sysconfig;print('%d.%d.%d;%s' % (sys.version_info[:3] + (sysconfig.get_paths()['include'],)))"
    OUTPUT_VARIABLE _out RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    continue()
  endif()
  list(GET _out 0 _ver)
  list(GET _out 1 _inc)
  if(_ver IN_LIST _seen OR NOT _ver MATCHES "^3\\.1[0-3]\\.")
    continue()
  endif()
  list(APPEND _seen ${_ver})
  add_test(NAME pystack_py_${_ver} COMMAND ${_py} ${_ps}/pystack_check.py $<TARGET_FILE:pystack_probe>)
  set_tests_properties(pystack_py_${_ver} PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
  # The whole path in a real interpreter: the injection library loaded by the
  # mock driver into CPython, a sync from a known line, the trace's Python
  # frames (issue 15). Not under the sanitizers: the interpreter has no
  # sanitizer runtime to load the instrumented library into.
  if(TARGET gaptrace_inject AND TARGET mock_cuda AND NOT GAPTRACE_SANITIZE)
    add_test(NAME stacks_python_${_ver} COMMAND ${_py}
      ${CMAKE_CURRENT_SOURCE_DIR}/inject/stacks_python.py $<TARGET_FILE:gaptrace>
      $<TARGET_FILE:mock_cuda> $<TARGET_FILE:mock_cupti> $<TARGET_FILE:gaptrace_inject>)
    set_tests_properties(stacks_python_${_ver} PROPERTIES TIMEOUT 120)
  endif()
  if(EXISTS ${_inc}/internal/pycore_frame.h OR (_ver MATCHES "^3\\.10\\." AND EXISTS ${_inc}/cpython/frameobject.h))
    set(_t pystack_layout_${_ver})
    string(REPLACE "." "_" _tgt ${_t})
    add_executable(${_tgt} ${PROJECT_SOURCE_DIR}/inject/tools/pystack_offsets.c)
    target_compile_definitions(${_tgt} PRIVATE Py_BUILD_CORE PYSTACK_OFFSETS_CHECK)
    target_include_directories(${_tgt} SYSTEM PRIVATE ${_inc})
    target_include_directories(${_tgt} PRIVATE ${PROJECT_SOURCE_DIR}/inject/src)
    add_test(NAME ${_t} COMMAND ${_tgt})
    set_tests_properties(${_t} PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
  endif()
endforeach()
if(NOT _seen)
  add_test(NAME pystack_python COMMAND sh -c "echo 'SKIP: no CPython 3.10-3.13 found'; exit 77")
  set_tests_properties(pystack_python PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
endif()
message(STATUS "pystack tests: CPython ${_seen}")

# The module in a process without Python: refusals, line-table scanners,
# text rules (includes pystack.c for its static functions).
gaptrace_check_test(test_pystack pystack/test_pystack.c)
target_include_directories(test_pystack PRIVATE ${PROJECT_SOURCE_DIR}/inject/src)
target_link_libraries(test_pystack PRIVATE ${CMAKE_DL_LIBS})
# dlsym(RTLD_DEFAULT, "_PyRuntime") finds the suite's stand-in
set_target_properties(test_pystack PROPERTIES ENABLE_EXPORTS ON)
set_tests_properties(test_pystack PROPERTIES TIMEOUT 60)
