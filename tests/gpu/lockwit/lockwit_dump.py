#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print the lock table of a process running under lockwit.so (see lockwit.c).

    lockwit_dump.py TABLE.lw [--pid PID]

Per thread: its name, what it waits for (lock kind, address, the library and
offset that asked, for how long) and what it holds. Then the wait-for graph
(waiter -> the threads holding what it waits for) and any cycle in it. With
root (the GPU machine), each rwlock's glibc fields are read from
/proc/PID/mem: readers, the writer's tid, and the preference flag (0 readers
first, 1/2 writers first: then a *waiting* writer blocks new readers).
"""
import os
import struct
import sys
import time

MAGIC = 0x3157544b434f4c
KIND = {0: "-", 1: "rdlock", 2: "wrlock", 3: "mutex", 4: "cond", 5: "sem"}


def load(path):
    data = open(path, "rb").read()
    magic, nslots, slot_size, held_max, pid, used, _ = struct.unpack_from("<QIIIIII", data, 0)
    if magic != MAGIC:
        raise SystemExit(f"{path}: not a lockwit table")
    off0 = 8 + 4 * 6
    threads = []
    for i in range(min(used, nslots)):
        o = off0 + i * slot_size
        tid, nheld = struct.unpack_from("<iI", data, o)
        waddr, wra, wkind, _ = struct.unpack_from("<QQII", data, o + 8)
        aux, since, ops = struct.unpack_from("<QQQ", data, o + 32)
        held = []
        for h in range(min(nheld, held_max)):
            haddr, hra, hkind, _ = struct.unpack_from("<QQII", data, o + 56 + 24 * h)
            held.append((haddr, hra, hkind))
        threads.append(dict(tid=tid, wait=(waddr, wra, wkind), aux=aux, since=since, ops=ops,
                            held=held))
    return pid, threads


def maps_of(pid):
    out = []
    try:
        for line in open(f"/proc/{pid}/maps"):
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            off = int(parts[2], 16)
            name = parts[5] if len(parts) > 5 else ""
            out.append((lo, hi, off, name))
    except OSError:
        pass
    return out


def where(maps, addr):
    for lo, hi, off, name in maps:
        if lo <= addr < hi:
            return f"{os.path.basename(name) or '?'}+{addr - lo + off:#x}"
    return f"{addr:#x}"


def comm(pid, tid):
    try:
        return open(f"/proc/{pid}/task/{tid}/comm").read().strip()
    except OSError:
        return "(gone)"


def rwlock_fields(pid, addr):
    try:
        with open(f"/proc/{pid}/mem", "rb") as f:
            f.seek(addr)
            b = f.read(56)
        readers, writers, wrphase, wfutex, _, _, cur_writer, shared = struct.unpack_from("<IIIIIIii", b, 0)
        flags = struct.unpack_from("<I", b, 48)[0] if len(b) >= 52 else -1
        return (f"readers-word={readers:#x} (count {readers >> 3}, wrphase {readers & 1}, "
                f"wrlocked {(readers >> 1) & 1}) cur_writer={cur_writer} flags={flags}")
    except (OSError, struct.error) as e:
        return f"(cannot read: {e})"


def main():
    path = sys.argv[1]
    pid, threads = load(path)
    maps = maps_of(pid)
    now = time.monotonic_ns()
    holders = {}
    for t in threads:
        for addr, ra, kind in t["held"]:
            holders.setdefault(addr, []).append((t["tid"], kind, ra))
    print(f"== lock table of pid {pid}: {len(threads)} threads seen")
    for t in threads:
        waddr, wra, wkind = t["wait"]
        name = comm(pid, t["tid"])
        if name == "(gone)" and not t["held"]:
            continue
        line = f"tid {t['tid']:>7} {name:<16} ops={t['ops']}"
        if wkind:
            age = (now - t["since"]) / 1e9 if t["since"] else 0
            line += f"\n    WAITS {KIND[wkind]} {waddr:#x} from {where(maps, wra)} for {age:.1f}s"
            if wkind == 4:
                line += f" (gave up mutex {t['aux']:#x})"
            hs = [h for h in holders.get(waddr, []) if h[0] != t["tid"]]
            if hs:
                line += "\n      held by " + ", ".join(
                    f"tid {h} ({comm(pid, h)}) as {KIND[k]} from {where(maps, r)}" for h, k, r in hs)
        for addr, ra, kind in t["held"]:
            line += f"\n    holds {KIND[kind]} {addr:#x} from {where(maps, ra)}"
        print(line)
    rw = {t["wait"][0] for t in threads if t["wait"][2] in (1, 2)}
    rw |= {a for t in threads for a, _, k in t["held"] if k in (1, 2)}
    if rw:
        print("== rwlocks involved")
        for a in sorted(rw):
            print(f"  {a:#x}: {rwlock_fields(pid, a)}")
    # wait-for graph and cycles
    edges = {}
    for t in threads:
        waddr, _, wkind = t["wait"]
        if wkind in (1, 2, 3):
            edges[t["tid"]] = sorted({h for h, _, _ in holders.get(waddr, []) if h != t["tid"]})
    print("== wait-for edges (waiter -> holders)")
    for w, hs in edges.items():
        print(f"  {w} ({comm(pid, w)}) -> {hs or 'nobody recorded (a waiting writer ahead? a cond/futex?)'}")
    seen = set()
    for start in edges:
        path, node = [], start
        while node in edges and node not in path and edges[node]:
            path.append(node)
            node = edges[node][0]
        if node in path:
            cyc = tuple(path[path.index(node):])
            key = frozenset(cyc)
            if key not in seen:
                seen.add(key)
                print("== CYCLE: " + " -> ".join(f"{n} ({comm(pid, n)})" for n in cyc + (cyc[0],)))
    if not seen:
        print("== no cycle among recorded lock holders")


if __name__ == "__main__":
    main()
