#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fleet, end to end, with a real Prometheus server.

A collector with the live analysis and /metrics (`gaptrace collector
--metrics 127.0.0.1:PORT --window 2s`) takes a producer that replays a
synthetic trace whose idle causes are known (host-bound: about half the
wall idle, nearly all of it host_busy). A fake dcgm-exporter serves
DCGM_FI_DEV_GPU_UTIL for the same GPU (its UUID). Prometheus (Debian's
package, on loopback, its own temporary storage, scraping both every
second, with examples/fleet/gaptrace.rules.yml loaded) is then asked
through its HTTP API:

  - the idle seconds by cause Prometheus holds equal the collector's own
    counters, and the sum over the closed windows of its `live` answer;
  - the sum invariant: sum over cause of idle = wall - busy (to 1 us, what
    float64 keeps of exact decimal seconds);
  - the idle-by-cause rate: host_busy's share of wall, from rate() over the
    run, within 3 points of the synthetic truth's;
  - the recording rules' top cause per GPU is host_busy;
  - the PromQL join on UUID with the fake dcgm-exporter series gives one
    series carrying both (modelName from DCGM);
  - `promtool check metrics` passes on the endpoint's text output (its only
    remarks: the camelCase label names dcgm-exporter spells so), and the
    OpenMetrics answer (asked by Accept) ends with "# EOF".

Skipped (77) without prometheus/promtool. Every server is on 127.0.0.1,
bounded in time, and killed at the end.

usage: prom_e2e.py GAPTRACE REPLAY_PRODUCER FAKE_NVML_LIB RULES_FILE
"""
import http.server, json, os, shutil, socket, subprocess, sys, tempfile, threading, time
import urllib.parse, urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "live"))
from windows import CAUSES, control  # noqa: E402


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def get(url, accept=None, timeout=5):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.headers.get("Content-Type"), r.read().decode()


def query(prom, q):
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (prom, urllib.parse.urlencode({"query": q}))
    _, body = get(url)
    d = json.loads(body)
    if d.get("status") != "success":
        raise RuntimeError("query %s: %s" % (q, body))
    return d["data"]["result"]


class Dcgm(http.server.BaseHTTPRequestHandler):
    body = ""

    def do_GET(self):
        b = Dcgm.body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def log_message(self, *a):
        pass


def parse_metrics(text, name):
    """{labels-string: value} of one sample name."""
    out = {}
    for line in text.splitlines():
        if line.startswith(name + "{"):
            lab, _, v = line.rpartition(" ")
            out[lab[len(name):]] = float(v)
    return out


def main():
    gaptrace, replay, nvml, rules = sys.argv[1:5]
    prom_bin, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if not prom_bin or not promtool:
        print("SKIP: prometheus/promtool not installed (Debian package prometheus)")
        return 77
    tmp = tempfile.mkdtemp(prefix="gt_prom_")
    procs, rc, bad = [], 1, []
    dcgm_srv = None
    try:
        run = os.path.join(tmp, "run")
        os.mkdir(run, 0o700)
        env = dict(os.environ, XDG_RUNTIME_DIR=run, GAPTRACE_NVML_PATH=nvml)
        syn = os.path.join(tmp, "synth")
        truth = json.loads(subprocess.run(
            [gaptrace, "synth", "-p", "host", "--json", "-o", syn, "-s", "steps=1500",
             "-s", "host_ns=8000000", "-s", "kernel_ns=500000"],
            check=True, capture_output=True, text=True).stdout)
        rep = json.loads(subprocess.run([gaptrace, "report", "--json", syn], capture_output=True,
                                        text=True).stdout)
        uuid = rep["gpus"][0]["uuid"]
        mport, pport, dport = free_port(), free_port(), free_port()
        Dcgm.body = ("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %%).\n"
                     "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
                     'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="%s",pci_bus_id="00000000:3B:00.0",'
                     'device="nvidia0",modelName="Fake DCGM GPU",Hostname="dcgm-host"} 51\n' % uuid)
        dcgm_srv = http.server.ThreadingHTTPServer(("127.0.0.1", dport), Dcgm)
        threading.Thread(target=dcgm_srv.serve_forever, daemon=True).start()
        col = subprocess.Popen([gaptrace, "collector", "--dir", os.path.join(tmp, "tr"),
                                "--metrics", "127.0.0.1:%d" % mport, "--window", "2s",
                                "--watermark", "1s", "-q"], env=env)
        procs.append(col)
        cfg = os.path.join(tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "rule_files:\n  - %s\n"
                    "scrape_configs:\n"
                    "  - job_name: gaptrace\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n"
                    "  - job_name: dcgm\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n"
                    % (os.path.abspath(rules), mport, dport))
        prom = subprocess.Popen([prom_bin, "--config.file=" + cfg,
                                 "--storage.tsdb.path=" + os.path.join(tmp, "db"),
                                 "--web.listen-address=127.0.0.1:%d" % pport,
                                 "--log.level=warn"], stdout=subprocess.DEVNULL,
                                stderr=open(os.path.join(tmp, "prometheus.log"), "w"))
        procs.append(prom)
        ctl = os.path.join(run, "gaptrace", "control.sock")
        for _ in range(200):
            try:
                get("http://127.0.0.1:%d/-/ready" % pport, timeout=1)
                if os.path.exists(ctl):
                    break
            except Exception:
                pass
            time.sleep(0.1)
        sock = os.path.join(run, "gaptrace", "collector.sock")
        t_start = time.time()
        p = subprocess.run([replay, "--socket", sock, "--trace", os.path.join(syn, "1000.gtrace")],
                           timeout=120)
        if p.returncode:
            bad.append("replay_producer exited %d" % p.returncode)
        time.sleep(3.5)  # the last window closes (2 s + 1 s), then scrapes
        live = control(ctl, "live 16")
        ctype, text = get("http://127.0.0.1:%d/metrics" % mport)
        time.sleep(2.5)  # Prometheus scrapes what we read (no window closes now)
        elapsed = int(time.time() - t_start) + 5

        # the exposition is valid
        chk = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                             text=True)
        # exit 3: lint remarks only. The one allowed: camelCase label names,
        # which are dcgm-exporter's own spelling (UUID, modelName, Hostname),
        # kept so that the PromQL join on UUID works.
        remarks = [l for l in (chk.stdout + chk.stderr).splitlines()
                   if l.strip() and "label names should be written in 'snake_case' not 'camelCase'" not in l]
        if chk.returncode not in (0, 3) or remarks:
            bad.append("promtool check metrics (exit %d): %s" % (chk.returncode, "\n".join(remarks[:10])))
        if not ctype.startswith("text/plain; version=0.0.4"):
            bad.append("Content-Type %s" % ctype)
        octype, om = get("http://127.0.0.1:%d/metrics" % mport,
                         accept="application/openmetrics-text;version=1.0.0,text/plain;q=0.5")
        if not octype.startswith("application/openmetrics-text") or not om.endswith("# EOF\n"):
            bad.append("OpenMetrics answer: %s, ends %r" % (octype, om[-20:]))

        # the collector's counters = the sum of its closed windows
        sums = {c: 0 for c in CAUSES}
        wall = busy = 0
        for line in live.splitlines():
            if line.startswith("gpu ") and "uuid=%s " % uuid in line:
                kv = dict(w.split("=", 1) for w in line.split(" name=")[0].split(" ")[1:])
                wall += int(kv["wall_ns"])
                busy += int(kv["busy_ns"])
                for c in CAUSES:
                    sums[c] += int(kv["idle." + c])
        mine = parse_metrics(text, "gaptrace_gpu_idle_seconds_total")
        for c in CAUSES:
            v = [x for k, x in mine.items() if 'cause="%s"' % c in k and uuid in k]
            if len(v) != 1 or abs(v[0] - sums[c] / 1e9) > 1e-9:
                bad.append("exposition idle %s %s != windows' %.9f" % (c, v, sums[c] / 1e9))

        # Prometheus holds the same
        for c in CAUSES:
            r = query(pport, 'gaptrace_gpu_idle_seconds_total{UUID="%s",cause="%s"}' % (uuid, c))
            if len(r) != 1 or abs(float(r[0]["value"][1]) - sums[c] / 1e9) > 1e-6:
                bad.append("Prometheus idle %s: %s, the windows sum %.9f" % (c, r, sums[c] / 1e9))
        r = query(pport, 'sum without (cause) (gaptrace_gpu_idle_seconds_total) - '
                         '(gaptrace_gpu_wall_seconds_total - gaptrace_gpu_busy_seconds_total)')
        if len(r) != 1 or abs(float(r[0]["value"][1])) > 1e-6:
            bad.append("sum invariant in Prometheus: %s" % r)
        rng = "%ds" % elapsed
        r = query(pport, 'rate(gaptrace_gpu_idle_seconds_total{cause="host_busy"}[%s]) / ignoring(cause) '
                         'rate(gaptrace_gpu_wall_seconds_total[%s])' % (rng, rng))
        g = truth["gpus"][0]
        t_share = g["causes"]["host_busy"] / g["window_ns"]
        if len(r) != 1 or abs(float(r[0]["value"][1]) - t_share) > 0.03:
            bad.append("host_busy rate share %s, truth %.3f" % (r, t_share))
        else:
            print("host_busy share of wall: Prometheus rate %.3f, truth %.3f" % (
                float(r[0]["value"][1]), t_share))
        r = query(pport, "gpu:gaptrace_gpu_idle_top_cause:rate5m")
        if len(r) != 1 or r[0]["metric"].get("cause") != "host_busy":
            bad.append("top cause rule: %s" % r)
        r = query(pport, 'gaptrace_gpu_busy_seconds_total * on (UUID) group_left (modelName) '
                         'DCGM_FI_DEV_GPU_UTIL')
        if len(r) != 1 or r[0]["metric"].get("modelName") != "Fake DCGM GPU" or \
                r[0]["metric"].get("UUID") != uuid:
            bad.append("UUID join with dcgm-exporter: %s" % r)
        r = query(pport, 'gpu:gaptrace_gpu_busy_ratio_dcgm_names:rate5m')
        if len(r) != 1:
            bad.append("the rules' DCGM join: %s" % r)
        rc = 1 if bad else 0
        for b in bad:
            print("FAIL:", b)
        print("PASS" if rc == 0 else "FAIL")
        return rc
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        if dcgm_srv:
            dcgm_srv.shutdown()
        if rc == 0:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("kept", tmp)


if __name__ == "__main__":
    sys.exit(main())
