#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/deps.sh with a fake apt-get: it waits while another apt holds the
# lock (and says so), and when apt-get fails it says apt-get failed.
# Usage: check_deps_lock.sh SOURCE_DIR
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
# nothing installed; sudo runs the command; apt-get as $FAKE_APT says
printf '#!/bin/sh\nexit 1\n' >"$tmp/bin/dpkg-query"
printf '#!/bin/sh\nexec "$@"\n' >"$tmp/bin/sudo"
cat >"$tmp/bin/apt-get" <<'F'
#!/bin/sh
n=$(cat "$FAKE_STATE" 2>/dev/null || echo 0)
echo $((n + 1)) >"$FAKE_STATE"
echo "$*" >>"$FAKE_STATE.args"
if [ "$n" -lt "$FAKE_LOCKED" ]; then
	echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 1 (apt-get)" >&2
	exit 100
fi
case "$*" in *install*) [ "$FAKE_FAIL" = 1 ] && { echo "E: Unable to locate package check" >&2; exit 100; } ;; esac
exit 0
F
chmod +x "$tmp/bin/"*
fail=0
run() { # LOCKED FAIL WAIT -> rc, stderr in $tmp/err
	rm -f "$tmp/state" "$tmp/state.args"
	PATH="$tmp/bin:$PATH" FAKE_STATE="$tmp/state" FAKE_LOCKED=$1 FAKE_FAIL=$2 \
		GAPTRACE_DEPS_LOCK_WAIT=$3 GAPTRACE_DEPS_LOCK_POLL=1 \
		bash "$src/scripts/deps.sh" build 2>"$tmp/err"
}
check() { if ! "$@"; then echo "FAIL: $*"; cat "$tmp/err"; fail=1; fi; }

# locked for 3 tries, then free: waits, says so once, installs
run 3 0 60; check [ $? -eq 0 ]
check grep -q "holds the apt/dpkg lock" "$tmp/err"
check [ "$(grep -c 'holds the' "$tmp/err")" -eq 1 ]
check grep -q "install" "$tmp/state.args"
# locked for longer than the wait: fails, naming apt-get, not cmake
run 100 0 3; check [ $? -ne 0 ]
check grep -q "apt-get update failed" "$tmp/err"
# apt-get itself fails: says apt-get failed, shows apt's own message
run 0 1 60; check [ $? -ne 0 ]
check grep -q "apt-get install failed" "$tmp/err"
check grep -q "Unable to locate package" "$tmp/err"
exit $fail
