#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/fleet_gpu.sh: the fleet on a real GPU (issue 27). A collector
# with the live analysis and /metrics (5 s windows, 3 s watermark), a real
# Prometheus (PROM: the binary, carried from Debian's package) scraping it
# every second with examples/fleet/gaptrace.rules.yml loaded, then, one
# after the other, a real training loop starved by its data loader
# (examples/torch/slow_loader.py) and a token-streaming decode service
# (examples/torch/decode_service.py), both injected through
# CUDA_INJECTION64_PATH into that collector. Then tests/gpu/fleet_check.py:
# every closed window equals `gaptrace report --capture --from @A --to @B` of
# the collector's traces, cause by cause, and Prometheus's idle seconds by
# cause equal the windows'. Writes $OUT/fleet_gpu.txt (+ the exposition, the
# collector's log, `gaptrace top --once`).
#
#   OUT=... GAPTRACE=... INJECT=... PROM=... RUN_S=15 bash tests/gpu/fleet_gpu.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-out}
mkdir -p "$OUT"
GAPTRACE=${GAPTRACE:-build-gpu/tools/gaptrace}
INJECT=${INJECT:-build-gpu/inject/libgaptrace_inject.so}
PROM=${PROM:-prometheus}
PYTHON=${PYTHON:-python3}
RUN_S=${RUN_S:-15}
W=/tmp/gt_fleet_gpu
rm -rf "$W"
mkdir -p "$W/run" && chmod 700 "$W/run"
export XDG_RUNTIME_DIR=$W/run
R=$OUT/fleet_gpu.txt
: >"$R"
say() { echo "$*" | tee -a "$R"; }

timeout -k 5 $((RUN_S * 4 + 120)) "$GAPTRACE" collector --dir "$W/tr" --metrics 127.0.0.1:9947 \
	--window 5s --watermark 3s >"$OUT/fleet_collector.log" 2>&1 &
CPID=$!
cat >"$W/prometheus.yml" <<EOC
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ["$PWD/examples/fleet/gaptrace.rules.yml"]
scrape_configs:
  - job_name: gaptrace
    static_configs: [{targets: ["127.0.0.1:9947"]}]
EOC
timeout -k 5 $((RUN_S * 4 + 120)) "$PROM" --config.file="$W/prometheus.yml" \
	--storage.tsdb.path="$W/db" --web.listen-address=127.0.0.1:9090 --log.level=warn \
	>"$W/prometheus.log" 2>&1 &
PPID_=$!
for _ in $(seq 100); do [ -S "$W/run/gaptrace/control.sock" ] && break; sleep 0.1; done
sleep 2
say "collector pid $CPID, prometheus pid $PPID_; $(nvidia-smi --query-gpu=name,uuid --format=csv,noheader 2>/dev/null | head -1)"
# FLEET_JOBS: the programs, ';'-separated (a dry run without a GPU can give
# tests/live/replay_producer commands)
# slow_loader: records trickle (CUPTI held its buffers 14-20 s in run 34);
# decode_service: a busy inference loop; healthy_matmul: the GPU never
# idle, kernels always in flight (the hard case for delivery marks)
FLEET_JOBS=${FLEET_JOBS:-"$PYTHON examples/torch/slow_loader.py --seconds $RUN_S;$PYTHON examples/torch/decode_service.py --seconds $RUN_S;$PYTHON examples/torch/healthy_matmul.py --seconds $RUN_S"}
IFS=';' read -r -a JOBS <<<"$FLEET_JOBS"
for job in "${JOBS[@]}"; do
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	CUDA_INJECTION64_PATH=$(realpath "$INJECT") timeout -k 5 $((RUN_S + 90)) \
		$job >"$W/job.out" 2>"$W/job.err"
	rc=$?
	jn=$((${jn:-0} + 1))
	tail -n 200 "$W/job.err" >"$OUT/fleet_job$jn.err"
	say "job $job: exit $rc in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s; $(tail -c 300 "$W/job.err" | tr '\n' ' ')"
done
sleep 10 # the last window closes (5 s + 3 s), then scrapes
"$GAPTRACE" top --once >"$OUT/fleet_top.txt" 2>&1
say "top --once: exit $?"
"$PYTHON" -c "import urllib.request;print(urllib.request.urlopen('http://127.0.0.1:9947/metrics').read().decode(),end='')" >"$OUT/fleet_metrics.prom"
sleep 2
timeout 120 "$PYTHON" tests/gpu/fleet_check.py "$GAPTRACE" "$W/run/gaptrace/control.sock" "$W/tr" 9090 >>"$R" 2>&1
say "fleet_check: exit $?"
kill "$CPID" "$PPID_" 2>/dev/null
wait
cp "$W/prometheus.log" "$OUT/fleet_prometheus.log" 2>/dev/null
exit 0
