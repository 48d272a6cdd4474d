#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# completion.sh GAPTRACE SCRIPT: the bash completion the build wrote
# (`gaptrace help --bash-completion`, tools/cli_complete.c), driven the way
# bash drives it (COMP_WORDS, COMP_CWORD, then the function `complete -F`
# registered) and its answers read from COMPREPLY, on a directory holding
# a trace directory, a .gtrace file, a JSON report and other files: the
# commands, each command's options, option values (formats, tables,
# thresholds, modes), trace directories and .gtrace files as operands (JSON
# reports too for diff, directories only for history), a program and then
# its own arguments for run. Registered with ctest as "completion".
set -u
G=$1
S=$2
bad=0
fail() { echo "FAIL: $*"; bad=1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/gt-compl-XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
mkdir "$T/w" "$T/bin"
printf '#!/bin/sh\n' >"$T/bin/gt_fake_prog"
chmod +x "$T/bin/gt_fake_prog"
PATH=$T/bin:$PATH
cd "$T/w" || exit 1
mkdir run1 sub
: >run1/100.gtrace
: >t.gtrace
: >notes.txt
: >base.json

# shellcheck source=/dev/null
source "$S" || { echo "FAIL: $S does not source"; exit 1; }
[ "$(complete -p gaptrace)" = "complete -o filenames -F _gaptrace gaptrace" ] ||
	fail "not registered for gaptrace: $(complete -p gaptrace 2>&1)"

# expect "WANT" WORD...: complete the last WORD (may be ''); WANT is the
# sorted answers, one space apart.
expect() {
	local want=$1
	shift
	COMP_WORDS=(gaptrace "$@")
	COMP_CWORD=$(($# ))
	COMPREPLY=()
	_gaptrace
	local got
	got=$(printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort -u | grep -v '^$' | tr '\n' ' ')
	got=${got% }
	[ "$got" = "$want" ] || fail "gaptrace $*<TAB>: got '$got', want '$want'"
}

cmds=$("$G" help --commands | LC_ALL=C sort | tr '\n' ' ')
expect "--help --version ${cmds% }" ''
expect "report" rep
expect "capture collector" c
expect "--json" report --js
expect "--skip-startup" report --sk
expect "--from" report --fr
expect "--format" export --form
expect "csv html json perfetto" export -f ''
expect "csv" export --format = c           # --format=c, split by bash at '='
expect "cuda_gpu_kern_sum" export -r cuda_gpu_ke
expect "min_share=" report --threshold min_s
expect "auto off" report --step-period ''
expect "" report --from ''                  # a duration: nothing to offer
# operands: trace directories and .gtrace files
expect "run1 sub t.gtrace" report ''
expect "run1 sub t.gtrace" export -f csv ''
expect "run1/100.gtrace" dump run1/
expect "base.json run1 sub t.gtrace" diff ''
expect "run1 sub" history ''
expect "base.json notes.txt run1 sub t.gtrace" report -o ''
# run: options until the program, then the program's own arguments
expect "text text,html" run --report te
expect "--stacks" run --st
expect "gt_fake_prog" run -- gt_fake_p
expect "gt_fake_prog" run -q gt_fake_p
expect "notes.txt" run --wait 5s gt_fake_prog no
expect "notes.txt" run -- gt_fake_prog -x no
expect "notes.txt" run --wait = 5s gt_fake_prog no   # --wait=5s
expect "--output" run --outp                # still an option of run
expect "export" help exp
# every option of every command's --help is offered
for c in $("$G" help --commands); do
	for o in $("$G" "$c" --help | grep -oE '^  (-[a-zA-Z], |    )--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+$'); do
		COMP_WORDS=(gaptrace "$c" "$o")
		COMP_CWORD=2
		COMPREPLY=()
		_gaptrace
		printf '%s\n' "${COMPREPLY[@]}" | grep -qx -- "$o" || fail "gaptrace $c $o<TAB> does not offer $o"
	done
done
[ "$bad" = 0 ] && echo "completion: commands, options, values and operands completed"
exit "$bad"
