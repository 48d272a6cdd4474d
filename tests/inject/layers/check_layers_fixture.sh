#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ctest inject_layers_fixture: the inject_layers check can fail. FIXTURE is
# the real manifest of libgaptrace_inject's objects plus two objects that
# call upward (tests/inject/layers/up_to_*.c: a middle file calling
# InitializeInjection, a base file calling inj_encoder_start); check_links.sh
# must exit 1 and name exactly those two calls.
# usage: check_layers_fixture.sh CHECK_LINKS_SH FIXTURE_MANIFEST NM
set -u
check=$1 manifest=$2 nm=$3
out=$(bash "$check" "$manifest" "$nm" 2>&1)
rc=$?
want='inject_base: calls inj_encoder_start, defined by inject_middle (inject_base may call only: itself)
inject_middle: calls InitializeInjection, defined by inject_entry (inject_middle may call only: inject_base)'
got=$(printf '%s\n' "$out" | sort)
if [ "$rc" -ne 1 ] || [ "$got" != "$want" ]; then
	echo "inject_layers_fixture: want exit 1 and:"
	echo "$want"
	echo "got exit $rc and:"
	echo "$out"
	exit 1
fi
echo "inject_layers_fixture: both upward calls named, nothing else"
