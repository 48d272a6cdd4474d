#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/check_readme_sample.py GAPTRACE ROOT: the report excerpt at the top
of README.md is what `gaptrace report examples/traces/item_metric` prints
now: every line of the excerpt after the command is a line of the report,
in order; a line ending in ", ..." is a cut line and only its start must
match. Exits 1 and shows the first line that differs."""
import subprocess
import sys

from readme_blocks import read_readme

COMMAND = "$ gaptrace run -- python3 train.py"


def main():
    gaptrace, root = sys.argv[1], sys.argv[2]
    found = [b.lines for b in read_readme(root) if b.lines and b.lines[0] == COMMAND]
    if not found:
        print("README.md has no block starting with " + COMMAND)
        return 1
    block = found[0][2:]  # after the command and "..."
    out = subprocess.run([gaptrace, "report", root + "/examples/traces/item_metric"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    i = 0
    for want in block:
        cut = want.endswith(", ...")
        stem = want[:-4] if cut else want
        while i < len(out) and not (out[i].startswith(stem) if cut else out[i] == want):
            i += 1
        if i == len(out):
            print("README.md's report excerpt differs from the report; first line not found:")
            print("  " + want)
            return 1
        i += 1
    print("README.md's report excerpt: %d lines, all in the report" % len(block))
    return 0


if __name__ == "__main__":
    sys.exit(main())
