#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check_self_contained.sh [ROOT] - fail if a file of the repository refers to
# something outside it: the parent's shared/ directory, the source article's
# text (shared/seeds/...), a path under /work/, or a Markdown document that is
# not in the repository (DESIGN.md must be the top-level one; any other NAME.md
# must exist somewhere in the tree).
#
# Files checked: the tracked files when ROOT is the top of a git work tree
# (build outputs and local files are not the repository's), else every file
# under ROOT except .git and build*/ directories (an exported tree).
# Not checked, because they are recorded data, not prose: binary files
# (recorded traces), tests/gpu/results/ (verbatim logs of GPU machines) and
# tests/analysis/golden/h200_* (reports of traces recorded on the H200, whose
# command lines hold the recording machine's paths); nor this script, which
# names the patterns.
#
# Exit status: 0 clean, 1 references found (each printed as FILE:LINE: text),
# 2 usage error. Registered with ctest as "self_contained".
set -u

root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
if [ ! -d "$root" ]; then
	echo "check_self_contained: $root: not a directory" >&2
	exit 2
fi
root=$(cd "$root" && pwd -P)
cd "$root" || exit 2

self="tests/check_self_contained.sh"

list_files() {
	local top
	top=$(git rev-parse --show-toplevel 2>/dev/null) || top=""
	if [ -n "$top" ] && [ "$(cd "$top" && pwd -P)" = "$root" ]; then
		git ls-files -z
	else
		find . \( -name .git -o -type d -name 'build*' \) -prune -o -type f -print0 |
			sed -z 's|^\./||'
	fi
}

files=()
while IFS= read -r -d '' f; do
	case "$f" in
	"$self" | tests/gpu/results/* | tests/analysis/golden/h200_*) continue ;;
	esac
	[ -f "$f" ] || continue # deleted in the work tree, not yet in the index
	files+=("$f")
done < <(list_files)

if [ ${#files[@]} -eq 0 ]; then
	echo "check_self_contained: no files found under $root" >&2
	exit 2
fi

bad=0
report() { # REASON, then grep -n lines on stdin
	local line
	while IFS= read -r line; do
		echo "$line"
		echo "    -> $1"
		bad=$((bad + 1))
	done
}

# 1. paths that leave the repository
report "refers to a directory outside the repository" < <(
	printf '%s\0' "${files[@]}" |
		xargs -0 grep -I -n -E '\.\./shared|shared/seeds|/work/' -- 2>/dev/null)

# 2. Markdown documents that are not in the repository
declare -A have_md=()
for f in "${files[@]}"; do
	case "$f" in *.md) have_md["${f##*/}"]=1 ;; esac
done
[ -f DESIGN.md ] || unset 'have_md[DESIGN.md]'

while IFS= read -r hit; do
	# hit = FILE:LINE:NAME.md (grep -o prints one name per line)
	name=${hit##*:}
	name=${name##*/}
	[ -n "${have_md[$name]:-}" ] && continue
	if [ "$name" = DESIGN.md ]; then
		echo "$hit"
		echo "    -> DESIGN.md is not at the top of the repository"
	else
		echo "$hit"
		echo "    -> $name is not in the repository"
	fi
	bad=$((bad + 1))
done < <(printf '%s\0' "${files[@]}" |
	xargs -0 grep -I -n -o -E '[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b' -- 2>/dev/null)

if [ "$bad" -ne 0 ]; then
	echo "check_self_contained: $bad reference(s) outside the repository in $root" >&2
	exit 1
fi
echo "check_self_contained: ${#files[@]} files, no reference outside the repository"
exit 0
