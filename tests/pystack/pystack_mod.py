# SPDX-License-Identifier: MIT
# A module in its own file for pystack_check.py: frames of another file.
def from_module(walk):
    return walk()  # MARK:from_module
