# SPDX-License-Identifier: MIT
# Run by `cmake --install` (install(SCRIPT) in the top CMakeLists.txt, after
# an install(CODE) that sets GT_PC_IN and GT_PC_DIR): writes
# gaptrace-format.pc naming the prefix of this install, which a .pc file
# configured at configure time could not know (--prefix is given later).
# DESTDIR is honored and the file goes into install_manifest.txt, as
# install(FILES) would do.
file(READ "${GT_PC_IN}" _gt_pc)
string(REPLACE "%PREFIX%" "${CMAKE_INSTALL_PREFIX}" _gt_pc "${_gt_pc}")
set(_gt_pc_path "${CMAKE_INSTALL_PREFIX}/${GT_PC_DIR}/gaptrace-format.pc")
if(DEFINED ENV{DESTDIR} AND IS_ABSOLUTE "${_gt_pc_path}")
  set(_gt_pc_path "$ENV{DESTDIR}${_gt_pc_path}")
endif()
message(STATUS "Installing: ${_gt_pc_path}")
file(WRITE "${_gt_pc_path}" "${_gt_pc}")
list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${_gt_pc_path}")
