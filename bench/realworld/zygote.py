#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""zygote: a fork server that pays Python's imports once (bench/realworld).

On the H200 machine a fresh PyTorch process spends most of its 8-12 s
starting (imports above all), more than the workload the bench measures; 80
fresh processes would not fit in the bench's few minutes. The server imports the heavy modules
once, WITHOUT touching the GPU driver, and forks one worker per run. Each
worker gets the client's environment (CUDA_INJECTION64_PATH, GAPTRACE_*, ...),
working directory, argv and stdin/stdout/stderr, so CUDA starts in the worker
exactly as in a fresh process: cuInit reads the injection variables of that
worker, and the worker exits through the normal interpreter exit (Python
atexit handlers, then C atexit handlers: gaptrace's and CUPTI's final flush).

  zygote.py serve SOCK [--preload MOD[:ATTR,...] ...] [--path DIR ...]
        import the modules (stopping with exit status 3 and a line
        "zygote: unsafe: ..." if one opened a /dev/nvidia* file: the driver
        was touched and forked workers would share it), print
        "zygote: ready ...", serve until SIGTERM or SIGINT.
  zygote.py run SOCK -- SCRIPT [ARGS...]
        the client: runs SCRIPT in a fresh worker, forwards INT TERM HUP QUIT
        USR1 USR2 to it, exits with its status (128+N if signal N killed it).
        If the client dies, the server kills the worker.

What differs from `python SCRIPT`: the modules were imported before the
fork, and /proc/PID/cmdline (so a trace header's command line) is the
server's. Everything on the GPU side happens in the worker.
"""
import json
import os
import select
import signal
import socket
import sys
import time

FWD_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT,
               signal.SIGUSR1, signal.SIGUSR2)


def nvidia_files():
    """The /dev/nvidia* files this process has open."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            t = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if t.startswith("/dev/nvidia"):
            out.append(t)
    return out


def nthreads():
    return len(os.listdir("/proc/self/task"))


def preload(spec):
    """Import MOD, then touch MOD.ATTR for each ATTR (lazy modules such as
    transformers load their submodules on attribute access)."""
    mod, _, attrs = spec.partition(":")
    m = __import__(mod)
    for part in mod.split(".")[1:]:
        m = getattr(m, part)
    for a in filter(None, attrs.split(",")):
        getattr(m, a)


def read_request(conn):
    msg, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    if len(msg) < 8:
        raise ValueError("short request")
    need = int.from_bytes(msg[:8], "big")
    data = bytearray(msg[8:])
    while len(data) < need:
        more = conn.recv(need - len(data))
        if not more:
            raise ValueError("request cut short")
        data += more
    if len(fds) != 3:
        raise ValueError("want 3 descriptors, got %d" % len(fds))
    return json.loads(bytes(data)), fds


def worker(req, fds, closers):
    """In the forked child: become the client's program. Never returns:
    raises SystemExit so that the interpreter exits as after `python SCRIPT`."""
    for c in closers:
        c.close()
    for i, fd in enumerate(fds):
        os.dup2(fd, i)
        os.close(fd)
    for s in FWD_SIGNALS + (signal.SIGCHLD,):
        signal.signal(s, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.environ.clear()
    os.environ.update(req["env"])
    os.chdir(req["cwd"])
    sys.argv = list(req["argv"])
    script = sys.argv[0]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    import runpy
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code
    except BaseException:  # what `python SCRIPT` would print, and status 1
        import traceback
        traceback.print_exc()
        code = 1
    raise SystemExit(code)


def serve_one(conn, lsock):
    try:
        req, fds = read_request(conn)
    except (OSError, ValueError) as e:
        print("zygote: bad request: %s" % e, file=sys.stderr, flush=True)
        return
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        worker(req, fds, (conn, lsock))
    for fd in fds:
        os.close(fd)
    try:
        conn.sendall(b'{"pid": %d}\n' % pid)
    except OSError:
        pass
    pfd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
    status = None
    while status is None:
        watch = [conn] + ([pfd] if pfd is not None else [])
        r, _, _ = select.select(watch, [], [], None if pfd is not None else 0.05)
        w, st = os.waitpid(pid, os.WNOHANG)
        if w == pid:
            status = st
            break
        if conn in r:
            try:
                gone = not conn.recv(64)
            except OSError:
                gone = True
            if gone:  # the client died (SIGKILL, timeout -k): no orphan worker
                os.kill(pid, signal.SIGKILL)
                status = os.waitpid(pid, 0)[1]
    if pfd is not None:
        os.close(pfd)
    rc = os.waitstatus_to_exitcode(status)
    rc = 128 - rc if rc < 0 else rc
    try:
        conn.sendall(b'{"rc": %d}\n' % rc)
    except OSError:
        pass


def serve(sock_path, preloads, paths):
    me = os.getpid()
    for p in paths:
        sys.path.insert(0, os.path.abspath(p))
    t0 = time.time()
    for spec in preloads:
        t = time.time()
        try:
            preload(spec)
        except Exception as e:  # a missing module: say so, the runs import it themselves
            print("zygote: preload %s failed: %s: %s" % (spec, type(e).__name__, e), flush=True)
            continue
        bad = nvidia_files()
        if bad:
            print("zygote: unsafe: importing %s opened %s (the GPU driver was touched: "
                  "workers must not be forked from here)" % (spec, bad[0]), flush=True)
            return 3
        top = sys.modules.get(spec.partition(":")[0].split(".")[0])
        ver = getattr(top, "__version__", "")
        print("zygote: preloaded %s%s in %.1f s" % (spec, " " + ver if ver else "",
                                                   time.time() - t), flush=True)
    for k in ("CUDA_INJECTION64_PATH", "GAPTRACE_SOCKET", "GAPTRACE_OUTPUT", "GAPTRACE_DORMANT"):
        if k in os.environ:
            print("zygote: unsafe: %s is set in the server's environment" % k, flush=True)
            return 3
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.unlink(sock_path)
    except FileNotFoundError:
        pass
    lsock.bind(sock_path)
    lsock.listen(8)

    def stop(sig, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    n = nthreads()
    print("zygote: ready: pid %d, imports %.1f s, %d thread(s)%s" % (
        me, time.time() - t0, n, "" if n == 1 else " (forking with threads: beware)"), flush=True)
    try:
        while True:
            conn, _ = lsock.accept()
            with conn:
                serve_one(conn, lsock)
    except KeyboardInterrupt:
        pass
    finally:
        if os.getpid() == me:  # not in a worker unwinding through here
            try:
                os.unlink(sock_path)
            except OSError:
                pass
    return 0


def client(sock_path, argv):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(sock_path)
    except OSError as e:
        print("zygote run: cannot reach the server at %s: %s" % (sock_path, e), file=sys.stderr)
        return 125
    data = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
    msg = len(data).to_bytes(8, "big") + data
    sent = socket.send_fds(s, [msg], [0, 1, 2])
    if sent < len(msg):
        s.sendall(msg[sent:])
    f = s.makefile("rb")
    try:
        pid = json.loads(f.readline())["pid"]
    except (ValueError, KeyError):
        print("zygote run: the server did not start %s" % argv[0], file=sys.stderr)
        return 125
    def forward(n, _frame):
        try:
            os.kill(pid, n)
        except OSError:
            pass

    for sig in FWD_SIGNALS:
        signal.signal(sig, forward)
    line = f.readline()
    try:
        return int(json.loads(line)["rc"])
    except (ValueError, KeyError):
        print("zygote run: lost the server while %s ran" % argv[0], file=sys.stderr)
        return 125


def main():
    a = sys.argv[1:]
    if len(a) >= 2 and a[0] == "serve":
        sock, rest = a[1], a[2:]
        preloads, paths = [], []
        while rest:
            opt = rest.pop(0)
            if opt in ("--preload", "--path") and rest:
                (preloads if opt == "--preload" else paths).append(rest.pop(0))
            else:
                print(__doc__, file=sys.stderr)
                return 2
        return serve(sock, preloads, paths)
    if len(a) >= 4 and a[0] == "run" and a[2] == "--":
        return client(a[1], a[3:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
