# SPDX-License-Identifier: MIT
# cmake -DGAPTRACE=BIN -DOUT=DIR -P gen_docs.cmake: the man pages of gaptrace
# and of each of its commands (DIR/man1/gaptrace.1, gaptrace-CMD.1) and the
# bash completion (DIR/gaptrace.bash), made
# from the help the binary prints (`gaptrace help --man [CMD]`), so a page
# never says other than `gaptrace CMD --help`, and the completion offers the
# options the commands take. The commands are the binary's
# own list (`gaptrace help --commands`): a new command gets its page.
foreach(v GAPTRACE OUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "gen_docs.cmake: -D${v}=... is required")
  endif()
endforeach()
execute_process(COMMAND ${GAPTRACE} help --commands OUTPUT_VARIABLE cmds RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "gen_docs.cmake: ${GAPTRACE} help --commands failed (${rc})")
endif()
string(STRIP "${cmds}" cmds)
string(REPLACE "\n" ";" cmds "${cmds}")
file(REMOVE_RECURSE ${OUT}/man1)
file(MAKE_DIRECTORY ${OUT}/man1)
# page NAME, then the command it documents (none: gaptrace itself)
function(page name)
  execute_process(COMMAND ${GAPTRACE} help --man ${ARGN} OUTPUT_FILE ${OUT}/man1/${name}.1
                  RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "gen_docs.cmake: ${GAPTRACE} help --man ${ARGN} failed (${rc})")
  endif()
endfunction()
page(gaptrace)
foreach(c ${cmds})
  page(gaptrace-${c} ${c})
endforeach()
# The bash completion, made from the same help (gaptrace help --bash-completion).
execute_process(COMMAND ${GAPTRACE} help --bash-completion OUTPUT_FILE ${OUT}/gaptrace.bash
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "gen_docs.cmake: ${GAPTRACE} help --bash-completion failed (${rc})")
endif()
