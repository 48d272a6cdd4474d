#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian/Ubuntu packages gaptrace builds and tests with, when missing.
# Runs apt-get only if something is missing (and only as root or via sudo).
set -eu
# chromium + fonts-liberation: the HTML report screenshot test; python3: export checks.
pkgs=(build-essential cmake pkg-config libzstd-dev check libsubunit-dev libunwind-dev python3
	chromium fonts-liberation)
[ "${GAPTRACE_WITH_CLANG:-1}" = 1 ] && pkgs+=(clang)
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
