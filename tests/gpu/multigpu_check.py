#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""multigpu_check: the checks of tests/gpu/multigpu.sh on `gaptrace report --json`.

  multigpu_check.py --case exposed|overlap|straggler --report R.json --stdout S [--name N]

Prints one tab-separated row: name, expected, got (first finding and its
share), communication per GPU (exposed / all communication time), the
straggler named (rank, pid, share), status (PASS / FAIL: why). Exit 0 on
PASS, 1 on FAIL, 2 when it could not check.

  exposed    comm_not_overlapped ranks first, with exposed_share >= 0.8
             (communication alone on the GPU / all communication time);
  overlap    comm_not_overlapped does not rank first; every GPU's
             communication is less than half exposed;
  straggler  a straggler finding names the late rank (the example's
             --straggler-rank, and the pid that rank printed), and the
             collectives were matched across the ranks.
In every case: at least 2 ranks ran collective kernels and collectives were
matched across them.
"""
import argparse
import json
import sys

from gtcheck import example_json  # same directory


def metric(f, key):
    v = (f.get("metrics") or {}).get(key)
    return v if isinstance(v, (int, float)) else None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", required=True, choices=("exposed", "overlap", "straggler"))
    p.add_argument("--report", required=True)
    p.add_argument("--stdout", required=True)
    p.add_argument("--name", default="")
    a = p.parse_args()
    name = a.name or a.case
    try:
        with open(a.report) as f:
            rep = json.load(f)
        ex = example_json(a.stdout)
    except (OSError, ValueError) as e:
        print("\t".join([name, a.case, "-", "-", "-", "ERROR (%s)" % e]))
        return 2
    if ex is None:
        print("\t".join([name, a.case, "-", "-", "-", "ERROR (no example JSON line)"]))
        return 2
    findings = rep.get("findings") or []
    first = findings[0] if findings else None
    got = "%s %.1f%% (GPU %s)" % (first["id"], 100 * first["share"], first["gpu"]) \
        if first else "none"
    comm = []
    for g in rep.get("gpus") or []:
        c = g.get("comm") or {}
        if c.get("comm_ns"):
            comm.append("GPU%d %.0f%%" % (g["index"], 100.0 * c["exposed_ns"] / c["comm_ns"]))
    ranks = ((rep.get("comm") or {}).get("ranks")) or []
    matched = ((rep.get("comm") or {}).get("collectives") or {}).get("count", 0)
    why = []
    if len(ranks) < 2:
        why.append("%d ranks with collectives (want >= 2)" % len(ranks))
    if not matched:
        why.append("no collective matched across ranks")
    named = "-"
    if a.case == "exposed":
        expected = "comm_not_overlapped first, exposed_share >= 0.8"
        if not first or first["id"] != "comm_not_overlapped":
            why.append("first is %s" % (first["id"] if first else "none"))
        elif (metric(first, "exposed_share") or 0) < 0.8:
            why.append("exposed_share %.2f < 0.8" % (metric(first, "exposed_share") or 0))
    elif a.case == "overlap":
        expected = "not comm_not_overlapped first, < 50% of comm exposed"
        if first and first["id"] == "comm_not_overlapped":
            why.append("comm_not_overlapped is first")
        for g in rep.get("gpus") or []:
            c = g.get("comm") or {}
            if c.get("comm_ns") and c["exposed_ns"] >= 0.5 * c["comm_ns"]:
                why.append("GPU %d: %.0f%% of comm exposed" %
                           (g["index"], 100.0 * c["exposed_ns"] / c["comm_ns"]))
    else:
        want = (ex.get("result") or {}).get("straggler_rank")
        pids = (ex.get("timing") or {}).get("rank_pids") or []
        want_pid = pids[want] if isinstance(want, int) and 0 <= want < len(pids) else None
        expected = "straggler names rank %s (pid %s)" % (want, want_pid)
        st = [f for f in findings if f["id"] == "straggler"]
        if st:
            f = st[0]
            r, pid = metric(f, "straggler_rank"), metric(f, "straggler_pid")
            named = "rank %s pid %s %.1f%% (GPU %s)" % (
                int(r) if r is not None else "?", int(pid) if pid is not None else "?",
                100 * f["share"], f["gpu"])
            if want_pid is not None and pid != want_pid:
                why.append("straggler pid %s != %s" % (pid, want_pid))
            if r != want:
                why.append("straggler rank %s != %s" % (r, want))
        else:
            why.append("no straggler finding")
    status = "PASS" if not why else "FAIL: " + "; ".join(why)
    print("\t".join([name, expected, got, ", ".join(comm) or "-", named, status]))
    return 0 if not why else 1


if __name__ == "__main__":
    sys.exit(main())
