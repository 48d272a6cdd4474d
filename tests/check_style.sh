#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/check_style.sh SRCDIR: every C source and header of the repository is
# formatted as .clang-format says (clang-format --dry-run -Werror), so a
# change cannot mix its logic with reformatting and a review reads only what
# changed. The tree was formatted once (issue 26); since then this check
# (ctest `style`, run by scripts/test.sh) keeps it so.
#
# Formatting differs between clang-format releases, so the check runs with
# the release the tree was formatted with (14, Debian 12's `clang-format`,
# which scripts/deps.sh installs) and is skipped (exit 77, ctest SKIP) with
# another or none, saying so. To format a file: clang-format -i FILE.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
want=14
cf=""
for c in clang-format-$want clang-format; do
	if command -v "$c" >/dev/null 2>&1 &&
		"$c" --version | grep -qE "version $want\."; then
		cf=$c
		break
	fi
done
if [ -z "$cf" ]; then
	echo "check_style: SKIP: no clang-format $want (the tree is formatted with $want; another release formats differently)"
	exit 77
fi
if [ -d .git ] || git rev-parse --git-dir >/dev/null 2>&1; then
	mapfile -t files < <(git ls-files '*.c' '*.h')
else
	mapfile -t files < <(find . -name '*.c' -o -name '*.h' | grep -v '/build')
fi
bad=0
for f in "${files[@]}"; do
	if ! "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then
		echo "check_style: $f is not formatted: $cf -i $f"
		bad=1
	fi
done
[ $bad -eq 0 ] && echo "check_style: ${#files[@]} files formatted as .clang-format says"
exit $bad
