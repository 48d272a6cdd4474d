# SPDX-License-Identifier: MIT
"""How the README checks read README.md: its fenced code blocks
(check_readme_sample.py reads the report excerpt from one,
check_readme_commands.py runs the commands of the ```sh ones)."""
import collections

Block = collections.namedtuple("Block", "lang line lines")
Block.__doc__ = """A fenced block: lang is the word after the opening fence ("" for
none), line the 1-based line number of its first content line, lines its
content lines without their newlines."""


def fenced_blocks(text):
    """Every fenced code block of the Markdown text, in order. A fence is a
    line starting with ``` (nothing else in README.md needs more); an
    unclosed block runs to the end."""
    blocks, cur = [], None
    for no, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            if cur is None:
                cur = Block(line[3:].strip(), no + 1, [])
            else:
                blocks.append(cur)
                cur = None
        elif cur is not None:
            cur.lines.append(line)
    if cur is not None:
        blocks.append(cur)
    return blocks


def read_readme(root):
    """The fenced blocks of ROOT/README.md."""
    with open(root + "/README.md", encoding="utf-8") as f:
        return fenced_blocks(f.read())
