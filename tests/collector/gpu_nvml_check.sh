#!/bin/sh
# SPDX-License-Identifier: MIT
# Check the NVML sampler against a real libnvidia-ml.so.1 (the CI here has no
# GPU and uses a fake). Run on the GPU machine from the repository root:
#
#   sh tests/collector/gpu_nvml_check.sh            # results in /tmp/gt-nvml-check
#
# Builds gaptrace (no tests, no libunwind needed), runs `gaptrace collector`
# at 100 Hz for ~4 s while PyTorch (if present) keeps GPU 0 busy, then dumps
# nvml.gtrace and checks the values are plausible (catches a wrong struct
# layout or enum value): SM clock 100..4000 MHz, power 10..2000 W, util 0..100,
# temperature 0..120 C or unsupported, and per-process samples for the load.
set -eu
B=${B:-build-gpu}
OUT=${OUT:-/tmp/gt-nvml-check}
cmake -S . -B "$B" -DGAPTRACE_BUILD_TESTS=OFF >/dev/null
cmake --build "$B" -j"$(nproc)" --target gaptrace >/dev/null
GT="$B/tools/gaptrace"
rm -rf "$OUT"
mkdir -p "$OUT"
SOCKDIR=$(mktemp -d)
"$GT" collector --dir "$OUT/trace" --socket "$SOCKDIR/collector.sock" --nvml-hz 100 -v \
	>"$OUT/collector.out" 2>"$OUT/collector.err" &
CPID=$!
sleep 0.5
LOADPID=none
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
	python3 - <<'PY' &
import time, torch
x = torch.randn(8192, 8192, device="cuda")
t = time.time()
while time.time() - t < 3:
    y = x @ x
torch.cuda.synchronize()
PY
	LOADPID=$!
	wait $LOADPID
else
	echo "no PyTorch with CUDA: sampling an idle GPU"
	sleep 3
fi
sleep 0.5
kill -INT $CPID
wait $CPID || true
rmdir "$SOCKDIR" 2>/dev/null || true
F="$OUT/trace/nvml.gtrace"
echo "== collector log"; cat "$OUT/collector.err"
echo "== stats"; "$GT" dump -s "$F"
echo "== devices"; "$GT" dump -t device "$F"
echo "== notes"; "$GT" dump -t note "$F"
echo "== last samples"; "$GT" dump -t nvml "$F" | tail -4
echo "== per-process samples (load pid $LOADPID)"; "$GT" dump -t nvml_proc "$F" | tail -6
"$GT" dump -t nvml "$F" | awk '
	/^nvml / { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } n++
	  sm = v["sm"] + 0; pw = v["power"] + 0; ut = v["util"] + 0
	  if (v["sm"] != "4294967295MHz" && (sm < 100 || sm > 4000)) bad++
	  if (v["power"] != "4294967295mW" && (pw < 10000 || pw > 2000000)) bad++
	  if (v["util"] != "4294967295%" && (ut < 0 || ut > 100)) bad++
	  if (ut > maxut) maxut = ut }
	END { printf "== %d samples, %d implausible values, max util %d%%\n", n, bad, maxut
	      exit (n > 0 && bad == 0) ? 0 : 1 }'
echo "== OK: real NVML samples look plausible; files in $OUT"
