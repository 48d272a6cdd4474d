#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# metrics_curl.sh METRICS_SERVE: the metrics server (metrics_serve, a fixed
# body) as real clients see it: curl's headers for both content types, one
# connection reused for two scrapes, HEAD; promtool check metrics accepts
# the text body. Exit 77 (skipped) without curl; the promtool part is
# skipped without promtool.
set -u
serve=${1:?usage: metrics_curl.sh METRICS_SERVE}
command -v curl >/dev/null || {
	echo "SKIP: no curl"
	exit 77
}
tmp=$(mktemp -d) || exit 2
pid=
# shellcheck disable=SC2317 # run by the trap
cleanup()
{
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid"
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
bad()
{
	echo "FAIL: $*"
	fail=1
}

"$serve" "$tmp/port" &
pid=$!
for _ in $(seq 100); do
	[ -s "$tmp/port" ] && break
	sleep 0.05
done
[ -s "$tmp/port" ] || {
	echo "FAIL: metrics_serve did not start"
	exit 1
}
url="http://127.0.0.1:$(cat "$tmp/port")/metrics"

# 1. OpenMetrics, as asked by Accept
curl -sf -D "$tmp/h1" -o "$tmp/b1" -H 'Accept: application/openmetrics-text;version=1.0.0' "$url" ||
	bad "curl (openmetrics) failed"
grep -qx $'Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r' "$tmp/h1" ||
	bad "openmetrics Content-Type: $(grep -i content-type "$tmp/h1")"
grep -qx $'Content-Length: '"$(wc -c <"$tmp/b1")"$'\r' "$tmp/h1" || bad "openmetrics Content-Length"
[ "$(tail -n1 "$tmp/b1")" = "# EOF" ] || bad "openmetrics body does not end with # EOF"

# 2. curl's own Accept (*/*): the text format
curl -sf -D "$tmp/h2" -o "$tmp/b2" "$url" || bad "curl (text) failed"
grep -qx $'Content-Type: text/plain; version=0.0.4; charset=utf-8\r' "$tmp/h2" ||
	bad "text Content-Type: $(grep -i content-type "$tmp/h2")"
grep -qx 'gaptrace_test_windows_total 42' "$tmp/b2" || bad "text body"

# 3. two scrapes, one connection (keep-alive): the second makes no connect
conns=$(curl -sf -o /dev/null -o /dev/null -w '%{num_connects}\n' "$url" "$url" | tr '\n' ' ')
[ "$conns" = "1 0 " ] || bad "connections per scrape: $conns (want: 1 0)"

# 4. HEAD: the headers of the GET
curl -sf -I "$url" >"$tmp/h4" || bad "curl -I failed"
grep -qx $'Content-Length: '"$(wc -c <"$tmp/b2")"$'\r' "$tmp/h4" || bad "HEAD Content-Length"

# 5. 404 is an error to curl -f
curl -sf -o /dev/null "${url%/metrics}/nope" && bad "/nope answered 2xx"

# 6. promtool reads the text body as valid
if command -v promtool >/dev/null; then
	promtool check metrics <"$tmp/b2" >"$tmp/lint" 2>&1 || bad "promtool check metrics: $(cat "$tmp/lint")"
else
	echo "SKIP: no promtool (the body's syntax is not checked)"
fi
[ "$fail" = 0 ] && echo "metrics_curl: curl and promtool agree with the server"
exit "$fail"
