#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian/Ubuntu packages gaptrace needs, when missing.
#   scripts/deps.sh          everything the test suite needs
#   scripts/deps.sh build    what building gaptrace and every command of
#                            README.md need (what scripts/quickstart.sh runs)
#   scripts/deps.sh --list [build]   print the packages, one a line
#   scripts/deps.sh --check [build]  print those missing; exit 1 if any
# Runs apt-get only if something is missing (as root, or through sudo).
set -eu
action=install
case "${1:-}" in --list | --check) action=${1#--}; shift ;; esac
# libcjson: gaptrace diff/history read saved reports with it (without it
# they say they are not built in); libunwind8: the native frames of --stacks
# (dlopen'ed by the injection library at run time); libncurses-dev: the
# terminal view of gaptrace top (without it, only top --once).
pkgs=(build-essential cmake pkg-config libzstd-dev libcjson-dev libunwind8 libncurses-dev)
if [ "${1:-test}" != build ]; then
	# check/libsubunit: unit tests (test_diff needs libcjson too);
	# libunwind-dev: optional; python3: export checks; chromium +
	# fonts-liberation: the HTML report screenshot test; man-db (with
	# groff): the man_pages test renders every page with man -l;
	# clang-format (14 on Debian 12): the style test; prometheus (with
	# promtool) + python3-yaml: the fleet tests (a real Prometheus server on
	# loopback scrapes the collector; the rules and manifests are checked);
	# tmux: the gaptrace top test; curl: the /metrics server as curl sees it.
	pkgs+=(check libsubunit-dev libunwind-dev python3 chromium fonts-liberation man-db clang-format
		prometheus python3-yaml tmux curl)
fi
if [ "$action" = list ]; then
	printf '%s\n' "${pkgs[@]}"
	exit 0
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$action" = check ]; then
	printf '%s\n' "${missing[@]}"
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
if ! command -v apt-get >/dev/null; then
	echo "deps: apt-get not found: install ${missing[*]} by hand" >&2
	exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive

# Another apt or dpkg (unattended-upgrades on a fresh machine) may hold the
# lock. apt-get install can wait for the dpkg lock (DPkg::Lock::Timeout) but
# apt-get update does not wait for the lists lock, so wait here for either:
# retry while apt says the lock is held, up to GAPTRACE_DEPS_LOCK_WAIT seconds
# (default 600), saying so every 30 s.
lock_wait=${GAPTRACE_DEPS_LOCK_WAIT:-600}
lock_poll=${GAPTRACE_DEPS_LOCK_POLL:-5}
apt_get() {
	local out rc waited=0 said=-30
	out=$(mktemp)
	while :; do
		rc=0
		$sudo apt-get -o DPkg::Lock::Timeout=0 "$@" >"$out" 2>&1 || rc=$?
		if [ $rc -ne 0 ] && [ "$waited" -lt "$lock_wait" ] &&
			grep -qiE "could not get lock|unable to lock|unable to acquire the dpkg" "$out"; then
			if [ $((waited - said)) -ge 30 ]; then
				echo "deps: another package manager holds the apt/dpkg lock;" \
					"waiting for it (${waited}s of at most ${lock_wait}s)" >&2
				said=$waited
			fi
			sleep "$lock_poll"
			waited=$((waited + lock_poll))
			continue
		fi
		cat "$out" >&2
		rm -f "$out"
		if [ $rc -ne 0 ]; then
			echo "deps: apt-get $1 failed (exit $rc); not installed: ${missing[*]}" >&2
		fi
		return $rc
	done
}
apt_get update -qq
apt_get install -y -qq --no-install-recommends "${missing[@]}"
