# SPDX-License-Identifier: MIT
# CLI suites: `gaptrace run`, `gaptrace collector`, `gaptrace capture`,
# driving the real binary. fake_producer stands in for a CUDA program running
# with libgaptrace_inject.so (no GPU here); dummy_inject stands in for the .so.
add_executable(fake_producer collector/fake_producer.c)
target_link_libraries(fake_producer PRIVATE gt_tproducer)
add_library(dummy_inject SHARED collector/dummy_inject.c)

gaptrace_check_test(test_cli_run collector/test_cli_run.c)
target_link_libraries(test_cli_run PRIVATE gt_tproducer)
target_compile_definitions(test_cli_run PRIVATE
  GAPTRACE_BIN="$<TARGET_FILE:gaptrace>"
  FAKE_PRODUCER="$<TARGET_FILE:fake_producer>"
  DUMMY_INJECT="$<TARGET_FILE:dummy_inject>"
  FAKE_NVML_LIB="$<TARGET_FILE:fake_nvml>"
  GT_HAVE_CJSON=$<BOOL:${CJSON_FOUND}>
  GT_HAVE_NCURSES=$<AND:$<BOOL:${GAPTRACE_TOP_NCURSES}>,$<BOOL:${NCURSES_FOUND}>>)
add_dependencies(test_cli_run gaptrace fake_producer dummy_inject fake_nvml)

# How every command writes its outputs (collector/outfile: gaptrace/outfile.h, README "Outputs"):
# the real binary on synthetic traces and tests/cli/inputs/.
gaptrace_check_test(test_cli_output cli/test_cli_output.c)
target_compile_definitions(test_cli_output PRIVATE
  GAPTRACE_BIN="$<TARGET_FILE:gaptrace>"
  CLI_INPUTS="${CMAKE_CURRENT_SOURCE_DIR}/cli/inputs")
target_link_libraries(test_cli_output PRIVATE gaptrace::format)
add_dependencies(test_cli_output gaptrace)
gaptrace_check_test(test_outfile cli/test_outfile.c)
target_link_libraries(test_outfile PRIVATE gaptrace::outfile)

# The slicing options of report and export (tools/cli_opts.c, collector/model/src/slice.c): the slice line,
# exit statuses, and text/JSON/CSV of one slice agreeing (needs python3).
add_test(NAME slice_cli
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/slice_cli.sh $<TARGET_FILE:gaptrace>
          ${PROJECT_SOURCE_DIR}/examples/traces/two_procs)
set_tests_properties(slice_cli PROPERTIES TIMEOUT 120)
add_test(NAME dump_hex_bounded
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/dump_hex_bounded.sh $<TARGET_FILE:gaptrace>
          ${PROJECT_SOURCE_DIR}/examples/traces/conv_train/2307.gtrace)
set_tests_properties(dump_hex_bounded PROPERTIES TIMEOUT 60)
if(GAPTRACE_SANITIZE)
  set_tests_properties(dump_hex_bounded PROPERTIES ENVIRONMENT "DUMP_NO_VLIMIT=1")
endif()

# The one parser of each kind of value (gaptrace/argval.h): durations,
# percentages, counts, and the exact sentences they refuse with.
gaptrace_check_test(test_argval cli/test_argval.c)
target_link_libraries(test_argval PRIVATE gaptrace::common)
set_tests_properties(test_argval PROPERTIES TIMEOUT 60)

# The one escaper of text a trace puts on a terminal (gaptrace/termtext.h):
# controls, C1 and stray bytes as \xNN, printable UTF-8 kept, clean cuts.
gaptrace_check_test(test_termtext cli/test_termtext.c)
target_link_libraries(test_termtext PRIVATE gaptrace::common)
set_tests_properties(test_termtext PROPERTIES TIMEOUT 60)

# What every command says when used wrong, and its help (tools/cli.h): the
# exact messages and exit statuses, the one shape of --help.
gaptrace_check_test(test_cli_errors cli/test_cli_errors.c)
target_compile_definitions(test_cli_errors PRIVATE
  GAPTRACE_BIN="$<TARGET_FILE:gaptrace>"
  TRACES="${PROJECT_SOURCE_DIR}/examples/traces")
add_dependencies(test_cli_errors gaptrace)
set_tests_properties(test_cli_errors PROPERTIES TIMEOUT 120)

# The man pages the build writes from each command's help (tools/cli_man.c,
# cmake/gen_docs.cmake) render with `man -l` and list what --help lists;
# skipped (77) without man.
add_test(NAME man_pages
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/man_pages.sh $<TARGET_FILE:gaptrace>
          ${CMAKE_BINARY_DIR}/tools/doc)
set_tests_properties(man_pages PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)

# The bash completion the build writes from each command's help
# (tools/cli_complete.c), driven through COMP_WORDS/COMPREPLY as bash does.
add_test(NAME completion
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/completion.sh $<TARGET_FILE:gaptrace>
          ${CMAKE_BINARY_DIR}/tools/doc/gaptrace.bash)
set_tests_properties(completion PROPERTIES TIMEOUT 120)

# An export killed by SIGTERM/SIGINT/SIGHUP mid-write leaves no hidden
# temporary and dies by the signal (issue 25 row 10; collector/outfile/src/outfile.c).
add_test(NAME signal_cleanup
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/signal_cleanup.sh $<TARGET_FILE:gaptrace>
          ${CMAKE_CURRENT_BINARY_DIR}/signal_cleanup)
set_tests_properties(signal_cleanup PROPERTIES TIMEOUT 180)

# gaptrace top (tools/cmd_top.c, top_live.c) against cli/fake_live_collector.py,
# a stand-in for the collector's control socket answering `live` as
# docs/FLEET.md says, with the real socket's framing: top_once checks the
# numbers of --once against the canned answers, hostile and error answers
# and an unreachable collector; top_tmux drives the terminal view in a
# detached tmux (redraw on a new window, a resize, keys, q and Ctrl-C).
# Skipped (77) without python3; top_tmux also without tmux or ncurses.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME top_once
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli/top_once.py $<TARGET_FILE:gaptrace>)
  add_test(NAME top_tmux
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli/top_tmux.py $<TARGET_FILE:gaptrace>)
else()
  add_test(NAME top_once COMMAND sh -c "echo 'SKIP: python3 not found'; exit 77")
  add_test(NAME top_tmux COMMAND sh -c "echo 'SKIP: python3 not found'; exit 77")
endif()
set_tests_properties(top_once top_tmux PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
