#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/check_function_length.sh SRCDIR [LIMIT]: no production function
# longer than LIMIT lines (default 150).
#
# Production code is every .c and .h file under collector/, format/, tools/
# and inject/. A function is measured from the line of its opening brace at
# column 0 to the line of its closing brace at column 0, both included (the
# style of the tree puts both at column 0; initializers such as
# "static const x[] = {" do not, so they are not counted). The function's name
# is the first identifier followed by '(' in the lines of its signature.
#
# tests/function_length_allow.txt may name exceptions, one "path:function"
# per line, each with a reason after '#'; an entry without a reason, or one
# that no longer matches a long function, is an error too, so the list only
# shrinks. Prints every violation; exits 1 if any.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
limit=${2:-150}
cd "$root" || exit 2
allow="tests/function_length_allow.txt"
bad=0

# path:function:lines for every function over the limit.
long=$(find collector format tools inject -name '*.[ch]' | LC_ALL=C sort |
	while read -r f; do
		awk -v file="$f" -v limit="$limit" '
		# sig collects the lines since the last top-level statement end.
		/^\{/ {
			name = ""
			if (match(sig, /[A-Za-z_][A-Za-z_0-9]*[ \t]*\(/)) {
				name = substr(sig, RSTART, RLENGTH)
				sub(/[ \t]*\($/, "", name)
			}
			start = NR; infn = 1; sig = ""; next
		}
		/^\}/ {
			if (infn && NR - start + 1 > limit)
				printf "%s:%s:%d\n", file, name, NR - start + 1
			infn = 0; sig = ""; next
		}
		infn { next }
		/^[ \t]*$/ || /;[ \t]*$/ || /^#/ || /\*\/[ \t]*$/ { sig = ""; next }
		{ sig = sig " " $0 }
		' "$f"
	done)

declare -A allowed=()
if [ -f "$allow" ]; then
	while IFS= read -r line; do
		entry=${line%%#*}
		entry=$(echo "$entry" | tr -d '[:space:]')
		[ -z "$entry" ] && continue
		case "$line" in
		*'#'*[![:space:]]*) ;;
		*) echo "$allow: '$entry' has no reason (add '# why' after it)"; bad=1 ;;
		esac
		allowed[$entry]=0
	done < "$allow"
fi

while IFS=: read -r path fn n; do
	[ -z "$path" ] && continue
	if [ -n "${allowed[$path:$fn]+x}" ]; then
		allowed[$path:$fn]=1
		echo "allowed: $path: $fn() is $n lines (limit $limit)"
	else
		echo "$path: $fn() is $n lines (limit $limit)"
		bad=1
	fi
done <<< "$long"

for entry in "${!allowed[@]}"; do
	if [ "${allowed[$entry]}" = 0 ]; then
		echo "$allow: '$entry' is not over $limit lines (or gone): remove it"
		bad=1
	fi
done

[ "$bad" = 0 ] && echo "function length: no function over $limit lines outside $allow"
exit "$bad"
