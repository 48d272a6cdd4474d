# SPDX-License-Identifier: MIT
# Tests of inject/: the export check, and (when the library is built) the
# mock-CUPTI suite that drives the real libgaptrace_inject.so.
if(NOT TARGET gaptrace_inject)
  return()
endif()

add_test(NAME inject_exports
  COMMAND ${CMAKE_COMMAND} -DLIB=$<TARGET_FILE:gaptrace_inject>
          -P ${CMAKE_CURRENT_SOURCE_DIR}/inject/check_exports.cmake)
set_tests_properties(inject_exports PROPERTIES TIMEOUT 60)

# The library's files call one way (issue 26): inject.c, the entry point,
# may call everything; state.c and log.c, the base, call nothing of ours
# but each other; every other file may call the base only. check_links.sh
# reads the objects' undefined symbols against a manifest of these three
# layers (a file moved between layers is a line here).
set(_inj_objs "$<TARGET_OBJECTS:gaptrace_inject>")
set(_inj_entry "$<FILTER:${_inj_objs},INCLUDE,/inject\\.c\\.o$>")
set(_inj_base "$<FILTER:${_inj_objs},INCLUDE,/(state|log)\\.c\\.o$>")
set(_inj_middle "$<FILTER:${_inj_objs},EXCLUDE,/(inject|state|log)\\.c\\.o$>")
set(_inj_layers "inject_entry|$<JOIN:${_inj_entry}, >|inject_middle inject_base
inject_middle|$<JOIN:${_inj_middle}, >|inject_base
inject_base|$<JOIN:${_inj_base}, >|
")
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/inject_layers_manifest.txt
     CONTENT "${_inj_layers}")
add_test(NAME inject_layers
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/check_links.sh
                 ${CMAKE_CURRENT_BINARY_DIR}/inject_layers_manifest.txt ${CMAKE_NM})
set_tests_properties(inject_layers PROPERTIES TIMEOUT 60)
# It can fail: the same manifest with two upward calls added, one per layer.
add_library(inject_layers_up_entry OBJECT inject/layers/up_to_entry.c)
add_library(inject_layers_up_encoder OBJECT inject/layers/up_to_encoder.c)
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/inject_layers_fixture.txt
     CONTENT "inject_entry|$<JOIN:${_inj_entry}, >|inject_middle inject_base
inject_middle|$<JOIN:${_inj_middle}, > $<TARGET_OBJECTS:inject_layers_up_entry>|inject_base
inject_base|$<JOIN:${_inj_base}, > $<TARGET_OBJECTS:inject_layers_up_encoder>|
")
add_test(NAME inject_layers_fixture
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/inject/layers/check_layers_fixture.sh
                 ${CMAKE_CURRENT_SOURCE_DIR}/check_links.sh
                 ${CMAKE_CURRENT_BINARY_DIR}/inject_layers_fixture.txt ${CMAKE_NM})
set_tests_properties(inject_layers_fixture PROPERTIES TIMEOUT 60)

# The mock libcupti.so.13 (SONAME libcupti.so.13) and mock libcuda.so.1.
set(_mock ${CMAKE_CURRENT_SOURCE_DIR}/mock_cupti)
add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/mock_cupti/cbid_names.c
  COMMAND ${CMAKE_COMMAND} -DINC=${CUPTI_INCLUDE_DIR}
          -DOUT=${CMAKE_CURRENT_BINARY_DIR}/mock_cupti/cbid_names.c
          -P ${_mock}/gen_cbid_names.cmake
  DEPENDS ${_mock}/gen_cbid_names.cmake ${CUPTI_INCLUDE_DIR}/cupti_runtime_cbid.h
          ${CUPTI_INCLUDE_DIR}/cupti_driver_cbid.h
  COMMENT "Generating the mock CUPTI callback-name table")
add_library(mock_cupti SHARED ${_mock}/mock_cupti.c
  ${CMAKE_CURRENT_BINARY_DIR}/mock_cupti/cbid_names.c)
set_target_properties(mock_cupti PROPERTIES OUTPUT_NAME cupti SOVERSION 13
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/mock_cupti)
target_include_directories(mock_cupti PUBLIC ${_mock})
target_include_directories(mock_cupti SYSTEM PUBLIC ${CUPTI_INCLUDE_DIR} ${CUDA_INCLUDE_DIR})
target_link_libraries(mock_cupti PRIVATE Threads::Threads)

add_library(mock_cuda SHARED ${_mock}/mock_cuda.c)
set_target_properties(mock_cuda PROPERTIES OUTPUT_NAME cuda SOVERSION 1
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/mock_cupti)
target_link_libraries(mock_cuda PRIVATE mock_cupti ${CMAKE_DL_LIBS} Threads::Threads)

# The suites: fork "apps" that load the real libgaptrace_inject.so through
# the mock driver, and check their traces record for record. Under ASan,
# LeakSanitizer at exit of a fork child of a multithreaded app can deadlock
# on the sanitizer allocator's lock held by another thread at fork time (a
# sanitizer limitation; glibc malloc is fork-safe): leak checking is off for
# them; addressability and UB checks stay on.
function(gaptrace_inject_suite name src timeout)
  gaptrace_check_test(${name} inject/${src} inject/harness.c inject/peer.c)
  target_link_libraries(${name} PRIVATE mock_cuda mock_cupti gaptrace::format
    Threads::Threads)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/format/src)
  target_compile_definitions(${name} PRIVATE
    INJECT_SO="$<TARGET_FILE:gaptrace_inject>"
    MOCK_CUPTI_SO="$<TARGET_FILE:mock_cupti>")
  add_dependencies(${name} gaptrace_inject)
  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout})
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
endfunction()

gaptrace_inject_suite(test_inject test_inject.c 1200)
# A library named as JAX's CUDA plugin: test_inject's process that runs XLA.
add_library(fake_xla_plugin MODULE ${CMAKE_CURRENT_SOURCE_DIR}/inject/fake_xla.c)
set_target_properties(fake_xla_plugin PROPERTIES PREFIX "" OUTPUT_NAME xla_cuda_plugin
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fake_xla)
target_compile_definitions(test_inject PRIVATE FAKE_XLA_SO="$<TARGET_FILE:fake_xla_plugin>")
add_dependencies(test_inject fake_xla_plugin)
# The lock model and the safety cases of issue 10.
gaptrace_inject_suite(test_inject_locks test_inject_locks.c 900)
# Host call stacks (issue 15).
gaptrace_inject_suite(test_inject_stacks test_inject_stacks.c 300)
target_link_libraries(test_inject_stacks PRIVATE gaptrace::analysis gaptrace::diagnosis)
# The CUPTI floor: an arm whose buffers are recycled unread (issue 28).
gaptrace_inject_suite(test_inject_floor test_inject_floor.c 300)
target_link_libraries(test_inject_floor PRIVATE gaptrace::analysis)
# NCCL's profiler plugin interface, a mock NCCL host and a mock chained plugin (issue 29).
add_library(nccl_chain_plugin MODULE ${CMAKE_CURRENT_SOURCE_DIR}/inject/nccl_chain.c)
target_include_directories(nccl_chain_plugin PRIVATE ${PROJECT_SOURCE_DIR}/inject/src)
set_target_properties(nccl_chain_plugin PROPERTIES C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/nccl_chain)
gaptrace_inject_suite(test_inject_nccl test_inject_nccl.c 300)
target_include_directories(test_inject_nccl PRIVATE ${PROJECT_SOURCE_DIR}/inject/src)
target_link_libraries(test_inject_nccl PRIVATE ${CMAKE_DL_LIBS})
target_compile_definitions(test_inject_nccl PRIVATE
  NCCL_CHAIN_SO="$<TARGET_FILE:nccl_chain_plugin>")
add_dependencies(test_inject_nccl nccl_chain_plugin)
target_link_libraries(test_inject_nccl PRIVATE gaptrace::analysis gaptrace::diagnosis)
