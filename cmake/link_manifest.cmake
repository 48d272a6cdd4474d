# SPDX-License-Identifier: MIT
# gt_write_link_manifest(OUT [SHARED_TARGET...]): the link graph as the build
# system has it, for tests/check_links.sh. Call it deferred, when every
# target is defined (tests/links.cmake says why and what it writes):
#   cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR}
#                  CALL gt_write_link_manifest OUT SHARED_TARGET...)
# Writes OUT at generate time, one line per STATIC library target of the
# project (and per SHARED_TARGET named, by its objects):
#   NAME|FILE FILE...|ALLOWED ALLOWED...
# ALLOWED is what NAME links (LINK_LIBRARIES, PUBLIC and PRIVATE), and
# through each of those what it passes on to its users (its
# INTERFACE_LINK_LIBRARIES: PUBLIC links, transitively), our targets only.
# A dependency's PRIVATE link ($<LINK_ONLY:...>) is not passed on: it ends
# up on the link line of a static library's users, but they see none of its
# headers, so calling into it is the hand-declared call the check is for.
# tests/links/fixture/ is a small project that uses it.

# The targets our link entries name: aliases resolved, imported targets and
# plain libraries (m, dl, zstd...) dropped, $<LINK_ONLY:x> dropped when
# `interface` (what a dependency passes on), kept as x otherwise.
function(_gt_link_targets out interface)
  set(res "")
  foreach(e IN LISTS ARGN)
    if(e MATCHES "^\\$<LINK_ONLY:(.*)>$")
      if(interface)
        continue()
      endif()
      set(e "${CMAKE_MATCH_1}")
    elseif(e MATCHES "^\\$<BUILD_INTERFACE:(.*)>$")
      set(e "${CMAKE_MATCH_1}")
    endif()
    if(NOT TARGET "${e}")
      continue()
    endif()
    get_target_property(real "${e}" ALIASED_TARGET)
    if(real)
      set(e "${real}")
    endif()
    get_target_property(imported "${e}" IMPORTED)
    if(NOT imported)
      list(APPEND res "${e}")
    endif()
  endforeach()
  set(${out} "${res}" PARENT_SCOPE)
endfunction()

# Every target of directory `dir` and below.
function(_gt_all_targets out dir)
  get_property(res DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(s IN LISTS subs)
    _gt_all_targets(more "${s}")
    list(APPEND res ${more})
  endforeach()
  set(${out} "${res}" PARENT_SCOPE)
endfunction()

# What `tgt` may call: its links, and what they pass on, transitively.
function(_gt_allowed out tgt)
  get_target_property(direct "${tgt}" LINK_LIBRARIES)
  if(NOT direct)
    set(direct "")
  endif()
  _gt_link_targets(todo FALSE ${direct})
  set(seen "")
  while(todo)
    list(POP_FRONT todo t)
    if(t IN_LIST seen)
      continue()
    endif()
    list(APPEND seen "${t}")
    get_target_property(iface "${t}" INTERFACE_LINK_LIBRARIES)
    if(iface)
      _gt_link_targets(next TRUE ${iface})
      list(APPEND todo ${next})
    endif()
  endwhile()
  list(SORT seen)
  set(${out} "${seen}" PARENT_SCOPE)
endfunction()

function(gt_write_link_manifest out)
  _gt_all_targets(all "${PROJECT_SOURCE_DIR}")
  set(lines "")
  foreach(t IN LISTS all)
    get_target_property(type "${t}" TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      set(files "$<TARGET_FILE:${t}>")
    elseif(t IN_LIST ARGN)
      # a shared library: its own objects, not what its link pulled in
      set(files "$<JOIN:$<TARGET_OBJECTS:${t}>, >")
    else()
      continue()
    endif()
    _gt_allowed(allowed "${t}")
    list(JOIN allowed " " allowed)
    string(APPEND lines "${t}|${files}|${allowed}\n")
  endforeach()
  file(GENERATE OUTPUT "${out}" CONTENT "${lines}")
endfunction()
