# SPDX-License-Identifier: MIT
# The libraries' links are the boundaries a machine checks (issue 26): every
# symbol a static library of ours leaves undefined that one of our archives
# defines must come from an archive it may link (tests/check_links.sh).
# check_layering.sh reads the #includes only; a function declared by hand in
# a .c file (an upward call through a local prototype) links and passes it.
#
# The allowed sets come from CMake itself, so there is no second copy of the
# graph to keep: when the top directory is done (every target defined, the
# tests' and the benchmarks' too), gt_write_link_manifest
# (cmake/link_manifest.cmake) walks the build system for every STATIC
# library target, plus the objects of libgaptrace_inject.so, and writes
# build/tests/links_manifest.txt: each library, its archive, and what it may
# call (what it links, and what those pass on: PUBLIC links, transitively).
include(${PROJECT_SOURCE_DIR}/cmake/link_manifest.cmake)
cmake_language(DEFER DIRECTORY "${PROJECT_SOURCE_DIR}"
               CALL gt_write_link_manifest "${CMAKE_BINARY_DIR}/tests/links_manifest.txt"
               gaptrace_inject)

add_test(NAME links
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/check_links.sh
                 ${CMAKE_BINARY_DIR}/tests/links_manifest.txt ${CMAKE_NM})
set_tests_properties(links PROPERTIES TIMEOUT 120)
# The check can fail: a small project of known links (tests/links/fixture/),
# built in a scratch directory, must have exactly its wrong calls named.
add_test(NAME links_fixture
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/links/check_links_fixture.sh
                 ${CMAKE_CURRENT_SOURCE_DIR}/check_links.sh ${CMAKE_COMMAND} ${CMAKE_C_COMPILER}
                 ${CMAKE_NM})
set_tests_properties(links_fixture PROPERTIES TIMEOUT 120)
