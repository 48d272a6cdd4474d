# SPDX-License-Identifier: MIT
"""Shared by the live analysis's checks (tests/live, tests/fleet, tests/gpu):
the control request `live`, its answer parsed, and the one-truth comparison
of each closed window with `gaptrace report --json --capture --from @A --to @B`
of the collector's trace directory."""
import json, socket, subprocess

CAUSES = ["host_busy", "sync_turnaround", "launch_bound", "transfer", "dependency",
          "other_process", "unknown", "startup", "data_lost"]


def control(path, req, timeout=5.0):
    """Send one request line to a control socket; the whole answer."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(path)
    s.sendall(req.encode() + b"\n")
    buf = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        buf += d
        last = buf.decode(errors="replace").rstrip("\n").split("\n")[-1]
        if buf.endswith(b"\n") and (last.startswith("ok") or last.startswith("error")):
            break
    s.close()
    return buf.decode(errors="replace")


def words(line):
    """key=value words of a data line; cmd=/name= take the rest of the line."""
    parts = line.split(" ")
    out = {"_kind": parts[0]}
    for i, p in enumerate(parts[1:], 1):
        k, _, v = p.partition("=")
        if k in ("cmd", "name"):
            out[k] = " ".join([v] + parts[i + 1:])
            break
        out[k] = v
    return out


def parse_live(text):
    """({seq: (from, to)}, [gpu word dicts])"""
    wins, gpus = {}, []
    for line in text.splitlines():
        w = words(line)
        if w["_kind"] == "window":
            wins[int(w["seq"])] = (int(w["from"]), int(w["to"]))
        elif w["_kind"] == "gpu":
            gpus.append(w)
    return wins, gpus


def compare_windows(gaptrace, live_text, tracedir, log=print):
    """Each closed window's GPU numbers against the report of that window.
    @return (rows, problems): rows of (seq, uuid, live list, report list),
    the list order wall, busy, then CAUSES."""
    wins, gpus = parse_live(live_text)
    rows, bad = [], []
    for g in gpus:
        a, b = wins[int(g["seq"])]
        wall, busy = int(g["wall_ns"]), int(g["busy_ns"])
        idle = [int(g["idle." + c]) for c in CAUSES]
        if sum(idle) != wall - busy:
            bad.append("window %s: causes sum to %d, wall - busy = %d" % (g["seq"], sum(idle), wall - busy))
        rep = subprocess.run([gaptrace, "report", "--json", "--capture", "--from", "@%d" % a,
                              "--to", "@%d" % b, tracedir], capture_output=True, text=True)
        try:
            doc = json.loads(rep.stdout)
        except ValueError:
            bad.append("report of window %s exited %d: %s" % (g["seq"], rep.returncode, rep.stderr.strip()))
            continue
        r = [x for x in doc["gpus"] if x["uuid"] == g["uuid"]]
        if not r:
            bad.append("report of window %s has no GPU %s" % (g["seq"], g["uuid"]))
            continue
        r = r[0]
        got = [wall, busy] + idle
        want = [r["window_ns"], r["busy_ns"]] + [r["causes"][c] for c in CAUSES]
        rows.append((int(g["seq"]), g["uuid"], got, want))
        log("window %s [%d, %d) %s: live wall %d busy %d host_busy %d | report %d %d %d" % (
            g["seq"], a, b, "ok" if got == want else "DIFFERS", wall, busy, idle[0],
            want[0], want[1], want[2]))
        if got != want:
            diffs = ["%s live %d report %d" % (n, x, y)
                     for n, x, y in zip(["wall", "busy"] + CAUSES, got, want) if x != y]
            bad.append("window %s differs: %s" % (g["seq"], "; ".join(diffs)))
    return rows, bad
