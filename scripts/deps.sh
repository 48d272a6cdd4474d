#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian/Ubuntu packages gaptrace needs, when missing.
#   scripts/deps.sh          everything the test suite needs
#   scripts/deps.sh build    only what building the tools needs
# Runs apt-get only if something is missing (as root, or through sudo).
set -eu
pkgs=(build-essential cmake pkg-config libzstd-dev)
if [ "${1:-test}" != build ]; then
	# check/libsubunit: unit tests; libunwind: optional; python3: export
	# checks; chromium + fonts-liberation: the HTML report screenshot test.
	pkgs+=(check libsubunit-dev libunwind-dev python3 chromium fonts-liberation)
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
