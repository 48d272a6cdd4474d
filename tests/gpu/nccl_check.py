#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""nccl_check: issue 29's one-GPU proof, one case's row.

Reads `gaptrace dump -t nccl_coll DIR` and `gaptrace dump -t note DIR`
(one file each, given), the untraced and traced example outputs, and prints
one tab-separated row:
  case  traces  plugin notes  colls per trace  seq gaps  comm hashes  funcs
  output equal  straggler  status
Checks (status PASS only if all hold):
  - every trace that ran NCCL has the plugin's note (the plugin loaded: NCCL
    called its init);
  - --expect-colls 0: no collective recorded (one rank: NCCL bypasses the
    plugin); > 0: every rank's trace has at least that many collectives,
    every rank the same number, sequence numbers without a gap per
    (communicator, rank, function) -- NCCL counts them per function
    (comm->seqNumber[func]) --, the same communicator hashes on every rank,
    and each (comm, function, seq) on every rank with the same byte count;
  - the example's results equal untraced (final losses, steps);
  - --report-json: every collective the analysis matched across ranks has
    GPU work tied on every rank (the straggler's last_by_gpu equals its
    last), and --straggler-rank R: the straggler finding (source "nccl
    plugin") names NCCL rank R and the pid of that rank's process (the
    example's rank_pids); none: no straggler finding; any: not checked.
"""
import argparse
import json
import re
import sys
from collections import defaultdict

COLL = re.compile(r"^nccl_coll (\d+) \+(\d+) comm=([0-9a-f]+) seq=(\d+) rank=(\d+)/(\d+) (\S+) "
                  r"bytes=(\d+) .* v(\d+)$")
NOTE = re.compile(r"NCCL profiler plugin: interface v(\d+), (\d+) communicators, (\d+) events "
                  r"written, (\d+) dropped")


def split_traces(path):
    """{trace path: [lines]} from a dump of a directory ('== path' lines)."""
    out, cur = defaultdict(list), "?"
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("== "):
            cur = line[3:]
            out[cur]
            continue
        out[cur].append(line)
    return out


def summary(path):
    for line in open(path, errors="replace"):
        if line.startswith("{"):
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if o.get("example") == "ddp_overlap":
                return o
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--case", required=True)
    p.add_argument("--colls", required=True)
    p.add_argument("--notes", required=True)
    p.add_argument("--untraced", required=True)
    p.add_argument("--traced", required=True)
    p.add_argument("--expect-colls", type=int, required=True)
    p.add_argument("--report-json", default="")
    p.add_argument("--straggler-rank", default="any")
    a = p.parse_args()
    bad = []
    colls = split_traces(a.colls)
    notes = split_traces(a.notes)
    plug = {}
    for t, lines in notes.items():
        for ln in lines:
            m = NOTE.search(ln)
            if m:
                plug[t] = tuple(int(x) for x in m.groups())
    per = {}
    by_key = defaultdict(dict)  # (comm, func, seq) -> rank -> bytes
    gaps = dups = 0
    hashes = defaultdict(set)
    funcs = set()
    for t, lines in colls.items():
        recs = [COLL.match(ln) for ln in lines]
        recs = [m.groups() for m in recs if m]
        if not recs:
            continue
        per[t] = len(recs)
        seqs = defaultdict(list)
        for start, dur, comm, seq, rank, nranks, func, nbytes, ver in recs:
            seqs[(comm, rank, func)].append(int(seq))
            hashes[rank].add(comm)
            funcs.add(func)
            dups += rank in by_key[(comm, func, int(seq))]
            by_key[(comm, func, int(seq))][rank] = int(nbytes)
        for k, v in seqs.items():
            v.sort()
            gaps += sum(1 for x, y in zip(v, v[1:]) if y != x + 1)
    traced_runs = [t for t in notes if t != "?"]
    if not plug:
        bad.append("no trace has the plugin's note (NCCL did not load it)")
    if a.expect_colls == 0:
        if per:
            bad.append("collectives recorded where NCCL runs none (%s)" % sum(per.values()))
    else:
        counts = sorted(set(per.values()))
        if len(per) < 2:
            bad.append("collectives in %d trace(s), not every rank's" % len(per))
        if counts and counts[0] < a.expect_colls:
            bad.append("a rank has %d collectives < %d" % (counts[0], a.expect_colls))
        if len(counts) > 1:
            bad.append("ranks differ in their counts %s" % counts)
        if gaps:
            bad.append("%d sequence gaps" % gaps)
        if dups:
            bad.append("%d (comm, func, seq) keys twice on one rank" % dups)
        if len({frozenset(v) for v in hashes.values()}) > 1:
            bad.append("ranks saw different communicators")
        nranks = len(hashes)
        odd = [k for k, v in by_key.items() if len(v) != nranks or len(set(v.values())) != 1]
        if odd:
            bad.append("%d (comm, func, seq) keys not alike on every rank, e.g. %s" % (
                len(odd), odd[0]))
    u, t = summary(a.untraced), summary(a.traced)
    if not u or not t:
        eq = "no summary"
        bad.append("an example summary is missing")
    else:
        lu = u.get("timing", {}).get("final_loss")
        lt = t.get("timing", {}).get("final_loss")
        su, st = u.get("result", {}).get("ranks_ok"), t.get("result", {}).get("ranks_ok")
        eq = "yes" if (lu == lt and su == st) else "no (loss %s vs %s, ranks %s vs %s)" % (
            lu, lt, su, st)
        if su != st:
            bad.append("ranks_ok differ")
    strag = "-"
    if a.report_json:
        try:
            with open(a.report_json) as f:
                rep = json.load(f)
        except (OSError, ValueError) as e:
            rep = None
            bad.append("no report JSON (%s)" % e)
        if rep is not None:
            fs = [x for x in rep.get("findings", []) if x.get("id") == "straggler"]
            if fs:
                m = fs[0].get("metrics", {})
                strag = "rank %s pid %s (%s, by GPU %s/%s)" % (
                    m.get("straggler_rank"), m.get("straggler_pid"), fs[0].get("source"),
                    m.get("last_by_gpu"), m.get("last"))
            else:
                strag = "none"
            pids = (t or {}).get("timing", {}).get("rank_pids") or []
            if a.straggler_rank == "none" and fs:
                bad.append("a straggler where none was made: %s" % strag)
            elif a.straggler_rank not in ("none", "any"):
                want = int(a.straggler_rank)
                if not fs:
                    bad.append("no straggler finding (rank %d was made late)" % want)
                else:
                    m = fs[0].get("metrics", {})
                    if fs[0].get("source") != "nccl plugin":
                        bad.append("straggler source %s" % fs[0].get("source"))
                    if m.get("straggler_rank") != want or (
                            len(pids) > want and m.get("straggler_pid") != pids[want]):
                        bad.append("straggler %s, made: rank %d pid %s" % (
                            strag, want, pids[want] if len(pids) > want else "?"))
                    if m.get("last_by_gpu") != m.get("last"):
                        bad.append("collectives decided by host time: %s" % strag)
    row = [a.case, str(len(traced_runs)),
           ";".join("v%d comms=%d written=%d dropped=%d" % v for v in plug.values()) or "-",
           ",".join(str(per[k]) for k in sorted(per)) or "0", str(gaps),
           str(len({h for v in hashes.values() for h in v})), ",".join(sorted(funcs)) or "-", eq,
           strag,
           "PASS" if not bad else "FAIL (" + "; ".join(bad) + ")"]
    print("\t".join(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
