#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/gpu/diff_pair.sh: issue 16 on the H200 - one program run twice, the
# second with a known regression (examples/torch/train_loop.py --regress: a
# loss.item() and a Python metric every step), both under
# `gaptrace run --stacks`. Checks:
#   - both reports have NVTX steps (train_step) in the Steps section;
#   - `gaptrace diff BASE NEW` compares per step, says NEW is slower, and
#     names sync_turnaround as the cause that grew most (the verdict, first);
#   - `--gate 5%` exits 4, and `diff NEW BASE --gate 5%` exits 0;
#   - NEW's sync_turnaround names the loss.item() line (its expect_site).
# The two traces (SECONDS_SMALL [1.5] s runs) are packed for
# examples/traces/ (train_loop_base, train_loop_regress).
# -> $OUT/diff_pair.txt, $OUT/diff_pair.tar.gz. Takes ~1.5 minutes on the H200.
source "$(dirname "$0")/lib.sh"
gt_init diff_pair
need_build
D="$WORK/diff_pair"
rm -rf "$D" && mkdir -p "$D"
RUN_S=${SECONDS_SMALL:-1.5} # not SECS: run_logged sets that to the last run's time
result_header "check" "detail" "status"
for side in base regress; do
	extra=()
	[ "$side" = regress ] && extra=(--regress)
	run_logged "tl_$side" "$GAPTRACE" run -q --stacks -o "$D/train_loop_$side" -- \
		"$PYTHON" examples/torch/train_loop.py --seconds "$RUN_S" "${extra[@]}"
	cp "$WORK/tl_$side.stdout" "$D/train_loop_$side.stdout"
	result "run $side" "exit $RC" "$([ "$RC" -eq 0 ] && echo ok || echo ERROR)"
	"$GAPTRACE" report --json "$D/train_loop_$side" >"$D/$side.json" 2>>"$LOG"
	"$GAPTRACE" report "$D/train_loop_$side" 2>&1 | sed -n '/^Steps/,/^$/p' | sed 's/^/  /' | tee -a "$LOG"
done
"$GAPTRACE" diff "$D/train_loop_base" "$D/train_loop_regress" 2>&1 | head -n 40 | sed 's/^/  /' | tee -a "$LOG"
"$GAPTRACE" diff --json "$D/train_loop_base" "$D/train_loop_regress" >"$D/diff.json" 2>>"$LOG"
check=$($PYTHON - "$D" <<'PY'
import json, sys, os
d = sys.argv[1]
out = []
for side in ("base", "regress"):
    r = json.load(open(os.path.join(d, side + ".json")))
    st = (r.get("gpus") or [{}])[0].get("steps") or {}
    ok = st.get("source", "").startswith("nvtx") and st.get("count", 0) >= 10
    out.append(("steps " + side, "%s x %s" % (st.get("count"), st.get("range")), "PASS" if ok else "FAIL"))
df = json.load(open(os.path.join(d, "diff.json")))
g = (df.get("gpus") or [{}])[0]
ok = g.get("unit") == "step" and (g.get("slowdown") or 0) > 0 and g.get("top_cause") == "sync_turnaround"
out.append(("diff verdict", "%s; unit %s, slowdown %s, top %s" % (df.get("verdict"), g.get("unit"),
            g.get("slowdown"), g.get("top_cause")), "PASS" if ok else "FAIL"))
for row in out:
    print("\t".join(row))
PY
)
while IFS=$'\t' read -r a b c; do result "$a" "$b" "$c"; done <<<"$check"
"$GAPTRACE" diff -q --gate 5% "$D/train_loop_base" "$D/train_loop_regress" >/dev/null 2>>"$LOG"
rc=$?
result "gate regress" "exit $rc" "$([ $rc -eq 4 ] && echo PASS || echo FAIL)"
"$GAPTRACE" diff -q --gate 5% "$D/train_loop_regress" "$D/train_loop_base" >/dev/null 2>>"$LOG"
rc=$?
result "gate improved" "exit $rc" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)"
line=$($GTCHECK sites --report "$D/regress.json" --stdout "$D/train_loop_regress.stdout" --name train_loop)
IFS=$'\t' read -r n want got status <<<"$line"
result "call site" "$want -> $got" "$status"
printf 'name\tcommand\tbytes\n' >"$D/MANIFEST.tsv"
pack diff_pair "$D" 15 || true
finish
