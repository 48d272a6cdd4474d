#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_term_bytes.py GAPTRACE INPUT WORKDIR

Issue 25 row 9: the text outputs print a trace's and a report's names
escaped for the terminal (collector/common/include/gaptrace/termtext.h).
Runs report (text, several options), dump, dump --hex, diff (the input's
report --json with itself, the trace with the report) and history (of an
archive holding the input) on INPUT (inputs/names-control-bytes.gtrace:
ESC, OSC 8, CR, LF, TAB, BEL, DEL, C1 and invalid UTF-8 in every name), and
report and dump on a trace directory holding a copy of it under a file name
with ESC [2J, LF and a C1 byte in it, and fails when any of their stdout or stderr:
  - holds a C0 control byte other than the LF and TAB the tool writes
    itself, or DEL;
  - is not valid UTF-8, or holds a C1 control U+0080-U+009F;
  - has a line that starts with the text after a name's LF ("FORGED LINE"):
    a line forged by a name;
  - (report, dump, diff, history) does not show the escaped name (\\x1b[2J),
    so a name dropped or cut away would not pass for one escaped.
Each command must exit 0. Prints one PASS/FAIL line per command.
"""
import os
import shutil
import subprocess
import sys


def check(name, data):
    """The reasons data is not clean terminal text ([] if it is)."""
    why = []
    for i, c in enumerate(data):
        if (c < 0x20 and c not in (0x0a, 0x09)) or c == 0x7f:
            why.append("byte 0x%02x at offset %d" % (c, i))
            break
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        why.append("invalid UTF-8: %s" % e)
        text = data.decode("utf-8", "replace")
    for i, ch in enumerate(text):
        if 0x80 <= ord(ch) <= 0x9f:
            why.append("C1 control U+%04X at character %d" % (ord(ch), i))
            break
    for n, line in enumerate(text.split("\n")):
        if line.startswith("FORGED LINE"):
            why.append("line %d forged by a name: %r" % (n + 1, line[:60]))
            break
    return why


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    gaptrace, inp, work = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rep = os.path.join(work, "r.json")
    arch = os.path.join(work, "arch")
    with open(rep, "wb") as f:
        if subprocess.run([gaptrace, "report", "--json", inp], stdout=f).returncode:
            print("FAIL: report --json %s" % inp)
            return 1
    if subprocess.run([gaptrace, "archive", "--to", arch, inp],
                      stdout=subprocess.DEVNULL).returncode:
        print("FAIL: archive --to %s %s" % (arch, inp))
        return 1
    tdir = os.path.join(work, "traces")
    os.makedirs(tdir)
    shutil.copy(inp, os.path.join(os.fsencode(tdir),
                                  b"run\x1b[2J\nFORGED LINE\xc2\x9b.gtrace"))
    # (arguments, must the escaped name show in stdout)
    cmds = [
        (["report", inp], True),
        (["report", "--full-names", inp], True),
        (["report", "--mangled", "--width", "60", inp], True),
        (["report", "--no-findings", "--capture", inp], True),
        (["dump", inp], True),
        (["dump", "--hex", inp], False),
        (["diff", rep, rep], True),
        (["diff", inp, rep], True),
        (["diff", "--html", "-o", os.path.join(work, "d.html"), rep, rep], False),
        (["history", arch], True),
        (["report", tdir], True),
        (["dump", tdir], True),
    ]
    bad = 0
    for args, shows in cmds:
        p = subprocess.run([gaptrace] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        why = ["exit %d" % p.returncode] if p.returncode else []
        why += ["stdout: " + w for w in check("stdout", p.stdout)]
        why += ["stderr: " + w for w in check("stderr", p.stderr)]
        if shows and b"\\x1b[2J" not in p.stdout:
            why.append("stdout does not show the escaped name (\\x1b[2J)")
        line = " ".join(args)
        if why:
            bad += 1
            print("FAIL: %s: %s" % (line, "; ".join(why)))
        else:
            print("PASS: %s (%d bytes)" % (line, len(p.stdout)))
    with open(os.path.join(work, "d.html"), "rb") as f:
        why = check("d.html", f.read())
    if why:
        bad += 1
        print("FAIL: diff --html's page: %s" % "; ".join(why))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
