# SPDX-License-Identifier: MIT
# ctest inject_exports: libgaptrace_inject.so must export InitializeInjection
# and nothing else, and must not depend on libcupti at load time (it is
# dlopen'ed at run time). Usage: cmake -DLIB=<path> -P check_exports.cmake
find_program(NM nm REQUIRED)
find_program(READELF readelf REQUIRED)
execute_process(COMMAND ${NM} -D --defined-only ${LIB}
  OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIB}")
endif()
string(REGEX MATCHALL "[0-9a-fA-F]+ [A-Za-z] [^\n]+" lines "${out}")
set(names "")
foreach(l ${lines})
  string(REGEX REPLACE "^[0-9a-fA-F]+ [A-Za-z] " "" n "${l}")
  list(APPEND names "${n}")
endforeach()
if(NOT names STREQUAL "InitializeInjection")
  message(FATAL_ERROR "exported symbols of ${LIB} are [${names}], expected [InitializeInjection]")
endif()
execute_process(COMMAND ${READELF} -d ${LIB} OUTPUT_VARIABLE dyn)
if(dyn MATCHES "NEEDED[^\n]*libcupti")
  message(FATAL_ERROR "${LIB} has a DT_NEEDED on libcupti; it must dlopen it")
endif()
if(dyn MATCHES "NEEDED[^\n]*libcuda")
  message(FATAL_ERROR "${LIB} has a DT_NEEDED on libcuda")
endif()
message(STATUS "${LIB}: exports [${names}], no libcupti/libcuda dependency")
