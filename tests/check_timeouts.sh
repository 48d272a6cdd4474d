#!/bin/sh
# SPDX-License-Identifier: MIT
# ctest check_timeouts: every Check TCase and every ctest test has a timeout.
#  1. In each C file under TESTS_DIR, a `VAR = tcase_create(...)` must be
#     followed by `tcase_set_timeout(VAR, ...)` before VAR is given another
#     TCase (or the file ends): Check's 4 s default is not a choice.
#  2. With BUILD_DIR (and python3), every test ctest lists there has a
#     TIMEOUT property.
# usage: check_timeouts.sh TESTS_DIR [BUILD_DIR]
set -u
tests_dir=$1
build_dir=${2:-}
fail=0

for f in $(grep -rl --include='*.c' --include='*.h' 'tcase_create' "$tests_dir" | sort); do
	awk -v file="$f" '
	function close_var(v) {
		if (open[v]) {
			printf "%s:%d: TCase %s has no tcase_set_timeout\n", file, line[v], v
			bad = 1
		}
		open[v] = 0
	}
	match($0, /[A-Za-z_][A-Za-z_0-9]* *= *tcase_create\(/) {
		v = substr($0, RSTART, RLENGTH)
		sub(/ *= *tcase_create\($/, "", v)
		close_var(v)
		open[v] = 1
		line[v] = FNR
	}
	/tcase_create\(/ && !/[A-Za-z_][A-Za-z_0-9]* *= *tcase_create\(/ && !/^ *(\/\*|\*)/ {
		printf "%s:%d: a TCase not kept in a variable cannot get a timeout\n", file, FNR
		bad = 1
	}
	match($0, /tcase_set_timeout\( *[A-Za-z_][A-Za-z_0-9]* *,/) {
		v = substr($0, RSTART, RLENGTH)
		sub(/tcase_set_timeout\( */, "", v)
		sub(/ *,$/, "", v)
		open[v] = 0
	}
	END {
		for (v in open)
			close_var(v)
		exit bad
	}' "$f" || fail=1
done

if [ -n "$build_dir" ]; then
	if command -v python3 >/dev/null 2>&1; then
		(cd "$build_dir" && ctest --show-only=json-v1) | python3 -c '
import json, sys
bad = [t["name"] for t in json.load(sys.stdin)["tests"]
       if not any(p["name"] == "TIMEOUT" for p in t.get("properties", []))]
for n in bad:
    print("ctest test %s has no TIMEOUT property" % n)
sys.exit(1 if bad else 0)' || fail=1
	else
		echo "check_timeouts: python3 not found, ctest TIMEOUT properties not checked"
	fi
fi

[ $fail -eq 0 ] && echo "check_timeouts: every TCase and ctest test has a timeout"
exit $fail
