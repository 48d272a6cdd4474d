#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/build.sh: configure and build gaptrace on the GPU machine
# (no Check, no libunwind there), with the CUDA examples, and say which
# CUDA driver, toolkit, CUPTI and PyTorch the machine has.
#
#   tests/gpu/build.sh            # -> build-gpu/, $OUT/build.txt
# Variables: BUILD, CUDA_HOME, NVCC, PYTHON, JOBS (default: nproc), OUT.
# The GPU machine has no libcjson-dev, which `gaptrace diff` and `history`
# need: carry Debian's (its header, libcjson.so.1 and a libcjson.pc whose
# prefix is ${pcfiledir}/../..) and point PKG_CONFIG_PATH at its pkgconfig.
# Takes ~1-2 minutes on the H200 machine (16 cores).
source "$(dirname "$0")/lib.sh"
gt_init build
JOBS=${JOBS:-$(nproc)}
result_header "item" "detail" "status"

log "-- machine"
{
	uname -a
	nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1 | head -5
	"$NVCC" --version 2>&1 | tail -2
	cmake --version 2>&1 | head -1
	gcc --version 2>&1 | head -1
} | sed 's/^/  /' | tee -a "$LOG"
drv=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
if [ -n "$drv" ]; then result "driver" "$drv" "ok"; else result "driver" "nvidia-smi failed" "FAIL"; fi
if "$NVCC" --version >/dev/null 2>&1; then
	result "nvcc" "$("$NVCC" --version | grep -o 'release [0-9.]*')" "ok"
else
	result "nvcc" "$NVCC not found" "FAIL"
fi

log "-- CUPTI and libcuda present"
cupti_tk=$(ls "$CUDA_HOME"/targets/x86_64-linux/lib/libcupti.so* "$CUDA_HOME"/extras/CUPTI/lib64/libcupti.so* 2>/dev/null | head -3 | tr '\n' ' ')
log "  toolkit libcupti: ${cupti_tk:-none}"
if [ -n "$cupti_tk" ]; then result "libcupti (toolkit)" "$cupti_tk" "ok"; else result "libcupti (toolkit)" "none under $CUDA_HOME" "FAIL"; fi
libcuda=$(ldconfig -p 2>/dev/null | grep -m1 'libcuda.so.1' | sed 's/.*=> //')
log "  libcuda.so.1: ${libcuda:-not in ldconfig cache}"
torch_info=$($PYTHON - <<'PY' 2>&1
import glob, os
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda,
          "gpu", torch.cuda.is_available())
except Exception as e:  # report, do not fail the build
    print("torch import failed:", e)
import importlib.util
spec = importlib.util.find_spec("nvidia")
for d in (spec.submodule_search_locations if spec else []):
    for f in sorted(glob.glob(os.path.join(d, "**", "libcupti.so*"), recursive=True)):
        print("torch-side libcupti:", f)
PY
)
echo "$torch_info" | sed 's/^/  /' | tee -a "$LOG"
result "pytorch" "$(echo "$torch_info" | head -1)" "ok"
tcupti=$(echo "$torch_info" | grep -c 'torch-side libcupti' || true)
result "libcupti (PyTorch wheel)" "$tcupti found (one per process wins: see DESIGN.md, \"Measured facts\")" "ok"

log "-- configure"
gen=()
[ -f "$BUILD/CMakeCache.txt" ] || gen=(-G "Unix Makefiles")
run_logged configure cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DGAPTRACE_BUILD_TESTS=OFF -DGAPTRACE_BUILD_EXAMPLES=ON \
	-DGAPTRACE_CUDA_ROOT="$CUDA_HOME" -DCMAKE_CUDA_COMPILER="$NVCC"
cat "$WORK/configure.stdout" >>"$LOG"
if [ "$RC" -ne 0 ]; then
	result "configure (examples ON)" "exit $RC" "FAIL"
	log "-- configure again without the CMake-built examples (scripts fall back to nvcc)"
	rm -rf "$BUILD"
	run_logged configure2 cmake -S . -B "$BUILD" -G "Unix Makefiles" \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DGAPTRACE_BUILD_TESTS=OFF \
		-DGAPTRACE_BUILD_EXAMPLES=OFF -DGAPTRACE_CUDA_ROOT="$CUDA_HOME"
	cat "$WORK/configure2.stdout" >>"$LOG"
	result "configure (examples OFF)" "exit $RC" "$([ "$RC" -eq 0 ] && echo ok || echo FAIL)"
else
	result "configure" "examples ON" "ok"
fi

log "-- build (-j$JOBS, keep going past a failing target)"
run_logged build cmake --build "$BUILD" -j "$JOBS" -- -k
grep -E 'error|warning' "$WORK/build.stdout" | head -40 | sed 's/^/  /' | tee -a "$LOG"
result "build" "exit $RC, $(grep -c -i 'warning' "$WORK/build.stdout" || true) warning lines" \
	"$([ "$RC" -eq 0 ] && echo ok || echo FAIL)"

log "-- artifacts"
if [ -x "$GAPTRACE" ]; then
	result "gaptrace CLI" "$("$GAPTRACE" --version 2>&1 | head -1)" "ok"
	cmds=$("$GAPTRACE" help 2>&1 | awk '/^commands:/ { on = 1; next } on && !NF { exit } on { print $1 }' | tr '\n' ' ')
	result "CLI commands" "$cmds" "ok"
	# diff and history read reports with libcjson: without it they refuse
	if grep -q '^CJSON_FOUND:INTERNAL=1' "$BUILD/CMakeCache.txt" 2>/dev/null; then
		result "libcjson (diff, history)" "found" "ok"
	else
		result "libcjson (diff, history)" "not found: diff and history refuse (PKG_CONFIG_PATH to a libcjson.pc)" "FAIL"
	fi
else
	result "gaptrace CLI" "$GAPTRACE missing" "FAIL"
fi
if [ -f "$INJECT" ]; then
	exports=$(nm -D --defined-only "$INJECT" 2>/dev/null | awk '$2 ~ /[TW]/ { print $3 }' | tr '\n' ' ')
	result "inject exports" "${exports:-none}" "$([ "$exports" = "InitializeInjection " ] && echo ok || echo FAIL)"
	ldd "$INJECT" 2>&1 | sed 's/^/  ldd| /' | tee -a "$LOG"
	result "inject .so" "$(stat -c %s "$INJECT") bytes; cupti: $(ldd "$INJECT" | grep -o 'libcupti[^ ]* => [^ ]*' | head -1)" "ok"
else
	result "inject .so" "$INJECT missing" "FAIL"
fi
for ex in exact_counts driver_launch tiny_kernels small_grid pageable_h2d periodic_stall \
	sync_host_work healthy_compute; do
	if p=$(ex_bin "$ex"); then result "example $ex" "$p" "ok"; else result "example $ex" "not built" "FAIL"; fi
done
finish
