# SPDX-License-Identifier: MIT
"""parity_check.py: the checks of tests/gpu/capture_parity.sh (issue 22).

  parity_check.py window --capture C.json --full F.json --index I
      C.json / F.json: `gaptrace report --json` of the whole capture trace and
      of the whole full trace. Prints "CAP_FROM CAP_TO FULL_FROM FULL_TO":
      capture window I (1-based) as absolute realtime ns (its ARMED note to
      its DISARMED note), and the same stretch of the program in the full
      trace as ns from that report's time origin. Both programs are placed by
      their own init note (the CUPTI-version and config notes InitializeInjection
      writes, dated at its start).
  parity_check.py compare --name N --window W --capture C.json --full F.json
                          --stdout OUT --tol T --unknown-max U
      one tab-separated row for the results table (see capture_parity.sh).
      With --sites (host stacks armed in both runs) the first finding's first
      call site must be the same in both and the program's expect_site.
"""
import argparse
import json
import sys

ARMED, DISARMED, CUPTI_VERSION, CONFIG = 3, 4, 9, 10


def load(path):
    with open(path) as f:
        return json.load(f)


def inject_trace(rep):
    for t in rep.get("traces", []):
        if t.get("producer") == "inject" and t.get("header_ok"):
            return t
    return None


def init_ts(t):
    for n in t.get("notes", []):
        if n["code"] in (CUPTI_VERSION, CONFIG):
            return n["ts"]
    return None


def windows(t):
    """[(armed_ts, disarmed_ts or None)] in note order."""
    out = []
    for n in t.get("notes", []):
        if n["code"] == ARMED:
            out.append([n["ts"], None])
        elif n["code"] == DISARMED and out and out[-1][1] is None:
            out[-1][1] = n["ts"]
    return out


def cmd_window(a):
    cap, full = load(a.capture), load(a.full)
    ct, ft = inject_trace(cap), inject_trace(full)
    if not ct or not ft:
        return 1
    w = windows(ct)
    if a.index > len(w) or w[a.index - 1][1] is None or init_ts(ct) is None or init_ts(ft) is None:
        return 1
    arm, disarm = w[a.index - 1]
    rel = arm - init_ts(ct)  # how far into the program (from its init) the window starts
    origin_after_init = full["time_origin_ns"] - init_ts(ft)
    f0 = max(0, rel - origin_after_init)
    print(arm, disarm, f0, f0 + (disarm - arm))
    return 0


def shares(rep):
    """Per-cause shares of the window, busy and utilization of GPU 0."""
    g = rep["gpus"][0]
    w = g["window_ns"] or 1
    s = {k: v / w for k, v in g["causes"].items()}
    s["busy"] = g["busy_ns"] / w
    return s, g


def first_finding(rep):
    f = rep.get("findings") or []
    return f[0]["id"] if f else "none"


def program_result(stdout_path):
    """The JSON line the example printed ({} when none)."""
    try:
        with open(stdout_path) as f:
            for line in f:
                if line.startswith("{"):
                    return json.loads(line)
    except (OSError, ValueError):
        pass
    return {}


def first_site(rep):
    """The first finding's first call site ("file.py:LINE function"), or "-"."""
    f = rep.get("findings") or []
    for e in (f[0].get("evidence") or []) if f else []:
        if isinstance(e, str) and e.startswith("call site: "):
            return e[len("call site: "):].split(": ")[0]
    return "-"


def cmd_compare(a):
    why = []
    try:
        cap, full = load(a.capture), load(a.full)
        sc, gc = shares(cap)
        sf, _ = shares(full)
    except (OSError, ValueError, KeyError, IndexError) as e:
        print("\t".join([a.name, a.window, "-", "-", "-", "-", "-", "ERROR (%s)" % e]))
        return 0
    ct = inject_trace(cap) or {}
    api = ct.get("api_calls", 0)
    if not api:
        why.append("no API records in the capture")
    unk = sc.get("unknown", 0.0)
    if unk > a.unknown_max:
        why.append("unknown %.1f%% > %.1f%%" % (100 * unk, 100 * a.unknown_max))
    fc, ff = first_finding(cap), first_finding(full)
    res = program_result(a.stdout)
    exp = res.get("expect_finding") or []
    if exp and fc not in exp:
        why.append("capture's first finding %s, expected %s" % (fc, "/".join(exp)))
    if fc != ff:
        why.append("first findings differ")
    if a.sites:
        sc_, sf_ = first_site(cap), first_site(full)
        want = (res.get("expect_site") or {}).get("site")
        if sc_ != sf_:
            why.append("first call sites differ (capture %s, full %s)" % (sc_, sf_))
        if want and sc_ != want:
            why.append("capture's first call site %s, expected %s" % (sc_, want))
        fc = "%s @ %s" % (fc, sc_)
    keys = sorted(set(sc) | set(sf))
    worst, wk = 0.0, "-"
    for k in keys:
        d = abs(sc.get(k, 0.0) - sf.get(k, 0.0))
        if d > worst:
            worst, wk = d, k
    if worst > a.tol:
        why.append("%s differs by %.1f points" % (wk, 100 * worst))
    status = "PASS" if not why else "FAIL (%s)" % "; ".join(why)
    print("\t".join([a.name, "%s %.2fs" % (a.window, gc["window_ns"] / 1e9), str(api),
                     "%.1f%%" % (100 * unk), fc, ff, "%.1f (%s)" % (100 * worst, wk), status]))
    return 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("window")
    w.add_argument("--capture", required=True)
    w.add_argument("--full", required=True)
    w.add_argument("--index", type=int, default=1)
    c = sub.add_parser("compare")
    for k in ("name", "window", "capture", "full", "stdout"):
        c.add_argument("--" + k, required=True)
    c.add_argument("--tol", type=float, default=0.08)
    c.add_argument("--unknown-max", type=float, default=0.02)
    c.add_argument("--sites", action="store_true")
    a = p.parse_args()
    return cmd_window(a) if a.cmd == "window" else cmd_compare(a)


if __name__ == "__main__":
    sys.exit(main())
