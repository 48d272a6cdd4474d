#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_assets.py ROOT - check the fleet assets of examples/fleet/.

What it checks (ctest fleet_assets):
  * gaptrace.rules.yml: `promtool check rules`; every recording rule named
    level:metric:operations; every metric an expression reads is a family of
    docs/FLEET.md, a rule of the file or DCGM_FI_DEV_GPU_UTIL; the rule names
    an annotation template queries exist; cause="..."/state="..." matchers use
    values docs/FLEET.md lists.
  * gaptrace.rules.test.yml: `promtool test rules`; its input series are
    FLEET.md families or DCGM_FI_DEV_GPU_UTIL.
  * grafana-dashboard.json: valid JSON, schemaVersion >= 36, a datasource
    variable of type prometheus used by every panel and target, Hostname and
    UUID variables from label_values(); every expr and every variable's
    selector, with Grafana's variables substituted, parses as PromQL
    (wrapped as recording rules in a temporary file for `promtool check
    rules`) and reads only known metrics (as above).
  * gaptrace-collector.service, gaptrace-jobs.conf, slurm-task-prolog.sh: the
    collector runs --dormant with --metrics :9947 on a socket in its
    RuntimeDirectory (mode 0700, which the collector requires), no
    PrivateDevices (NVML needs /dev/nvidia*), Restart=on-failure; the jobs'
    environment names the same socket, GAPTRACE_DORMANT=1 and the injection
    library; `systemd-analyze verify` on a copy whose ExecStart is a stub,
    when systemd-analyze works here (else said and skipped).
  * k8s/*.yaml: every document parses; the DaemonSet runs on GPU nodes, in
    the host's pid namespace, copies the library in an init container, mounts
    the socket and trace hostPaths and exposes 9947 as "metrics"; the Job
    sets CUDA_INJECTION64_PATH, GAPTRACE_DORMANT=1, GAPTRACE_SOCKET (under
    the same hostPath as the collector's --socket) and POD_NAME/POD_NAMESPACE
    from the downward API.
  * README.md: its scrape config's port is 9947.

check_assets.py --planted ROOT: copies the assets into a temporary tree,
plants one known error at a time (a metric misspelled in the dashboard, a
wrong expected value in the rules test, invalid PromQL in the dashboard, a
cause value not in FLEET.md, the job's socket not the collector's, PrivateDevices
on) and fails unless the check fails on each, naming it (ctest
fleet_assets_planted).

Exit status: 0 all good, 1 a check failed, 2 usage, 77 promtool or
python3-yaml missing (nothing else failed; ctest SKIP).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    yaml = None

FLEET = "examples/fleet"
DCGM = {"DCGM_FI_DEV_GPU_UTIL"}
PORT = "9947"
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
            "unless", "bool", "offset", "inf", "nan", "atan2", "start", "end",
            # aggregators: "sum by (x) (...)" puts a clause between name and "("
            "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
            "bottomk", "topk", "quantile"}


class Checker:
    def __init__(self, root):
        self.root = root
        self.errors = []
        self.skipped = []
        self.promtool = shutil.which("promtool")

    def fail(self, msg):
        self.errors.append(msg)

    def path(self, rel):
        return os.path.join(self.root, rel)

    # ------------------------------------------------------------ FLEET.md

    def read_contract(self):
        text = open(self.path("docs/FLEET.md"), encoding="utf-8").read()
        self.families = set(re.findall(r"^\| `(gaptrace_[a-z0-9_]+)` \|", text, re.M))
        m = re.search(r"`cause` values:(.*?)\.\n", text, re.S)
        self.causes = set(re.findall(r"`([a-z_]+)`", m.group(1))) if m else set()
        m = re.search(r"`state` \(([^)]*)\)", text)
        self.states = set(re.findall(r"`([a-z_]+)`", m.group(1))) if m else set()
        self.recorded = set()
        self.known = self.families | DCGM
        if len(self.families) < 10 or len(self.causes) < 5 or not self.states:
            self.fail("docs/FLEET.md: could not read the metric families, causes and states "
                      f"(found {len(self.families)}, {len(self.causes)}, {len(self.states)})")

    # ------------------------------------------------------------ PromQL

    @staticmethod
    def metric_names(expr):
        """Metric names an expression reads: identifiers outside strings,
        label matchers, ranges and label lists, not called as functions."""
        e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)
        e = re.sub(r"\{[^}]*\}", " ", e)
        e = re.sub(r"\[[^\]]*\]", " ", e)
        e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", r"\1 ", e)
        e = re.sub(r"\b\d[0-9a-zA-Z_.]*\b", " ", e)
        names = set()
        for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
            name = m.group(0)
            rest = e[m.end():].lstrip()
            if rest.startswith("(") or name.lower() in KEYWORDS:
                continue
            names.add(name)
        return names

    def check_names(self, where, expr, known):
        for name in sorted(self.metric_names(expr) - known):
            self.fail(f"{where}: metric {name} is not a family of docs/FLEET.md, a rule of "
                      f"gaptrace.rules.yml or DCGM_FI_DEV_GPU_UTIL")
        for label, allowed in (("cause", self.causes), ("state", self.states)):
            for v in re.findall(r"\b" + label + r'\s*=\s*"([^"]*)"', expr):
                if v not in allowed:
                    self.fail(f"{where}: {label}=\"{v}\" is not a {label} of docs/FLEET.md "
                              f"({', '.join(sorted(allowed))})")

    def promtool_run(self, args, cwd=None):
        p = subprocess.run([self.promtool] + args, cwd=cwd, capture_output=True, text=True)
        return p.returncode, (p.stdout + p.stderr).strip()

    def check_promql(self, exprs):
        """exprs: [(where, expr)]: each must parse (promtool check rules)."""
        if not self.promtool or not exprs:
            return
        with tempfile.TemporaryDirectory() as tmp:
            def attempt(items):
                f = os.path.join(tmp, "exprs.rules.yml")
                rules = [{"record": f"check:expr_{i}:parse", "expr": e} for i, (_, e) in enumerate(items)]
                with open(f, "w") as out:
                    yaml.safe_dump({"groups": [{"name": "check", "rules": rules}]}, out)
                return self.promtool_run(["check", "rules", f])
            rc, out = attempt(exprs)
            if rc == 0:
                return
            for where, e in exprs:  # name the culprits
                rc, out = attempt([(where, e)])
                if rc != 0:
                    why = " ".join(l.strip() for l in out.splitlines() if "error" in l.lower() or "parse" in l.lower())
                    self.fail(f"{where}: invalid PromQL: {e!r}: {why or out}")

    # ------------------------------------------------------------ rules

    def check_rules(self):
        rel = f"{FLEET}/gaptrace.rules.yml"
        doc = yaml.safe_load(open(self.path(rel), encoding="utf-8"))
        rules = [r for g in doc.get("groups", []) for r in g.get("rules", [])]
        self.recorded = {r["record"] for r in rules if "record" in r}
        self.known = self.families | self.recorded | DCGM
        for r in rules:
            name = r.get("record") or r.get("alert")
            where = f"{rel}: {name}"
            if "record" in r and not re.fullmatch(r"[a-z_]+:[A-Za-z0-9_]+:[a-z0-9_]+", r["record"]):
                self.fail(f"{where}: a recording rule is named level:metric:operations")
            if "record" in r and re.search(r"_total:", r["record"]):
                self.fail(f"{where}: a rated counter drops _total from its name")
            self.check_names(where, r["expr"], self.known)
            for key, text in (r.get("annotations") or {}).items():
                for q in re.findall(r"\b([a-z_]+:[A-Za-z0-9_]+:[a-z0-9_]+)\{", text):
                    if q not in self.recorded:
                        self.fail(f"{where}: annotation {key} queries {q}, not a rule of the file")
        if self.promtool:
            rc, out = self.promtool_run(["check", "rules", self.path(rel)])
            if rc != 0:
                self.fail(f"promtool check rules {rel}:\n{out}")
            rc, out = self.promtool_run(["test", "rules", "gaptrace.rules.test.yml"], cwd=self.path(FLEET))
            if rc != 0:
                self.fail(f"promtool test rules {FLEET}/gaptrace.rules.test.yml:\n{out}")
        test = yaml.safe_load(open(self.path(f"{FLEET}/gaptrace.rules.test.yml"), encoding="utf-8"))
        for t in test.get("tests", []):
            for s in t.get("input_series", []):
                name = s["series"].split("{", 1)[0]
                if name not in self.families | DCGM:
                    self.fail(f"{FLEET}/gaptrace.rules.test.yml: input series {name} is not a "
                              "family of docs/FLEET.md or DCGM_FI_DEV_GPU_UTIL")
            for c in t.get("promql_expr_test", []):
                self.check_names(f"{FLEET}/gaptrace.rules.test.yml: {c['expr']}", c["expr"], self.known)

    # ------------------------------------------------------------ dashboard

    @staticmethod
    def grafana_to_promql(expr):
        e = re.sub(r"\$\{?__(rate_interval|interval|range)\}?", "5m", expr)
        e = re.sub(r"\$\{[A-Za-z0-9_]+(:[A-Za-z]+)?\}|\$[A-Za-z0-9_]+|\[\[[A-Za-z0-9_]+\]\]", "x", e)
        return e

    def check_dashboard(self):
        rel = f"{FLEET}/grafana-dashboard.json"
        try:
            d = json.load(open(self.path(rel), encoding="utf-8"))
        except ValueError as ex:
            self.fail(f"{rel}: not JSON: {ex}")
            return
        if not isinstance(d.get("schemaVersion"), int) or d["schemaVersion"] < 36:
            self.fail(f"{rel}: schemaVersion {d.get('schemaVersion')!r}, want >= 36")
        variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
        ds = variables.get("datasource")
        if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
            self.fail(f"{rel}: no variable 'datasource' of type datasource, query prometheus")
        want_ds = {"type": "prometheus", "uid": "${datasource}"}
        exprs = []
        for name in ("Hostname", "UUID"):
            if name not in variables:
                self.fail(f"{rel}: no variable {name}")
        for name, v in variables.items():
            if v.get("type") != "query":
                continue
            q = v.get("query")
            q = q.get("query") if isinstance(q, dict) else q
            m = re.fullmatch(r"\s*label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\)\s*", q or "")
            if not m:
                self.fail(f"{rel}: variable {name}: not label_values(SELECTOR, LABEL): {q!r}")
                continue
            if v.get("datasource") != want_ds:
                self.fail(f"{rel}: variable {name}: datasource is not ${{datasource}}")
            exprs.append((f"{rel}: variable {name}", m.group(1)))

        def panels(ps):
            for p in ps:
                yield p
                yield from panels(p.get("panels", []))
        ids = set()
        for p in panels(d.get("panels", [])):
            if p.get("type") == "row":
                continue
            title = p.get("title", "?")
            if p.get("id") in ids:
                self.fail(f"{rel}: panel {title!r}: id {p.get('id')} used twice")
            ids.add(p.get("id"))
            if p.get("datasource") != want_ds:
                self.fail(f"{rel}: panel {title!r}: datasource is not ${{datasource}}")
            if not p.get("targets"):
                self.fail(f"{rel}: panel {title!r}: no query")
            for t in p.get("targets", []):
                if t.get("datasource") != want_ds:
                    self.fail(f"{rel}: panel {title!r} {t.get('refId')}: datasource is not ${{datasource}}")
                if "expr" not in t:
                    self.fail(f"{rel}: panel {title!r} {t.get('refId')}: no expr")
                    continue
                exprs.append((f"{rel}: panel {title!r} {t.get('refId')}", t["expr"]))
        exprs = [(w, self.grafana_to_promql(e)) for w, e in exprs]
        for w, e in exprs:
            self.check_names(w, e, self.known)
        self.check_promql(exprs)
        self.dashboard_exprs = len(exprs)

    # ------------------------------------------------------------ systemd

    @staticmethod
    def ini(text):
        out = {}
        section = None
        for line in text.splitlines():
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line.strip("[]")
                continue
            k, _, v = line.partition("=")
            out.setdefault((section, k.strip()), []).append(v.strip())
        return out

    def check_systemd(self):
        rel = f"{FLEET}/gaptrace-collector.service"
        text = open(self.path(rel), encoding="utf-8").read()
        u = self.ini(text)
        get = lambda k: (u.get(("Service", k)) or [""])[-1]
        exe = get("ExecStart")
        m = re.search(r"--socket[ =](\S+)", exe)
        sock = m.group(1) if m else ""
        for need in ("--dormant", f"--metrics :{PORT}", "--dir "):
            if need not in exe:
                self.fail(f"{rel}: ExecStart lacks {need.strip()}: {exe}")
        rd = get("RuntimeDirectory")
        if not rd or os.path.dirname(sock) != f"/run/{rd}":
            self.fail(f"{rel}: --socket {sock!r} is not in RuntimeDirectory /run/{rd}")
        # the collector refuses a private socket directory with group or
        # other bits, and sets 0711 / 0710 itself for --producers any / GROUP
        pm = re.search(r"--producers[ =](\S+)", exe)
        want_mode = "0700" if not pm or pm.group(1) == "own" else \
            "0711" if pm.group(1) == "any" else "0710"
        if get("RuntimeDirectoryMode") != want_mode:
            self.fail(f"{rel}: RuntimeDirectoryMode {get('RuntimeDirectoryMode')!r}, want "
                      f"{want_mode} for --producers {pm.group(1) if pm else 'own'}")
        if get("PrivateDevices") in ("yes", "true", "1", "on"):
            self.fail(f"{rel}: PrivateDevices hides /dev/nvidia* from NVML")
        if get("Restart") != "on-failure":
            self.fail(f"{rel}: Restart={get('Restart')}, want on-failure")
        if not get("User"):
            self.fail(f"{rel}: no User=")
        envs = {}
        for f in ("gaptrace-jobs.conf", "slurm-task-prolog.sh"):
            t = open(self.path(f"{FLEET}/{f}"), encoding="utf-8").read()
            env = dict(re.findall(r'^\s*(?:Environment=|export |echo "?export )"?([A-Z0-9_]+)=([^"\s]+)', t, re.M))
            envs[f] = env
            want = {"CUDA_INJECTION64_PATH": "/usr/local/lib/gaptrace/libgaptrace_inject.so",
                    "GAPTRACE_DORMANT": "1", "GAPTRACE_SOCKET": sock}
            for k, v in want.items():
                if env.get(k) != v:
                    self.fail(f"{FLEET}/{f}: {k}={env.get(k)!r}, want {v!r}")
        self.verify_unit(text, rel)

    def verify_unit(self, text, rel):
        sa = shutil.which("systemd-analyze")
        if not sa:
            self.skipped.append("systemd-analyze verify: no systemd-analyze")
            return
        with tempfile.TemporaryDirectory() as tmp:
            stub = os.path.join(tmp, "gaptrace")
            with open(stub, "w") as f:
                f.write("#!/bin/sh\nexit 0\n")
            os.chmod(stub, 0o755)
            probe = os.path.join(tmp, "gaptrace-probe.service")
            with open(probe, "w") as f:
                f.write(f"[Unit]\nDescription=probe\n[Service]\nExecStart={stub}\n")
            p = subprocess.run([sa, "verify", "--man=no", probe], capture_output=True, text=True)
            if p.returncode != 0:
                self.skipped.append("systemd-analyze verify: does not work here (" +
                                    (p.stderr.strip().splitlines() or ["?"])[-1] + ")")
                return
            unit = os.path.join(tmp, "gaptrace-collector.service")
            with open(unit, "w") as f:
                f.write(text.replace("/usr/local/bin/gaptrace", stub))
            p = subprocess.run([sa, "verify", "--man=no", unit], capture_output=True, text=True)
            said = [l for l in (p.stdout + p.stderr).splitlines() if "gaptrace-collector" in l]
            if p.returncode != 0 or said:
                self.fail(f"systemd-analyze verify {rel} (ExecStart stubbed):\n" +
                          "\n".join(said or (p.stdout + p.stderr).splitlines()))

    # ------------------------------------------------------------ Kubernetes

    def check_k8s(self):
        docs = {}
        for f in ("k8s/daemonset.yaml", "k8s/example-job.yaml"):
            rel = f"{FLEET}/{f}"
            try:
                for doc in yaml.safe_load_all(open(self.path(rel), encoding="utf-8")):
                    if doc:
                        docs.setdefault(doc.get("kind"), []).append((rel, doc))
            except yaml.YAMLError as ex:
                self.fail(f"{rel}: not YAML: {ex}")
        ds = docs.get("DaemonSet", [])
        job = docs.get("Job", [])
        if len(ds) != 1 or len(job) != 1:
            self.fail(f"{FLEET}/k8s: want one DaemonSet and one Job, found {len(ds)} and {len(job)}")
            return
        rel, d = ds[0]
        spec = d["spec"]["template"]["spec"]
        labels = d["spec"]["template"]["metadata"].get("labels", {})
        sel = d["spec"].get("selector", {}).get("matchLabels", {})
        if not sel or any(labels.get(k) != v for k, v in sel.items()):
            self.fail(f"{rel}: selector.matchLabels {sel} does not match the pod labels {labels}")
        if not spec.get("hostPID"):
            self.fail(f"{rel}: hostPID: true is needed (SO_PEERCRED pids, /proc/PID of the traced "
                      "processes)")
        tol = [t.get("key") for t in spec.get("tolerations", [])]
        if "nvidia.com/gpu" not in tol or not spec.get("nodeSelector") and not spec.get("affinity"):
            self.fail(f"{rel}: no nvidia.com/gpu toleration or no node selection")
        if not spec.get("initContainers"):
            self.fail(f"{rel}: no init container shipping the injection library")
        c = spec["containers"][0]
        ports = [(p.get("name"), p.get("containerPort")) for p in c.get("ports", [])]
        if ("metrics", int(PORT)) not in ports:
            self.fail(f"{rel}: no container port {PORT} named metrics: {ports}")
        args = " ".join(c.get("command", []) + c.get("args", []))
        for need in ("--dormant", f"--metrics :{PORT}", "--socket", "--dir"):
            if need not in args:
                self.fail(f"{rel}: collector command lacks {need}: {args}")
        m = re.search(r"--socket[ =](\S+)", args)
        sock = m.group(1) if m else ""
        hp = {v["name"]: v["hostPath"]["path"] for v in spec.get("volumes", []) if "hostPath" in v}
        mounts = {m["name"]: m["mountPath"] for m in c.get("volumeMounts", [])}
        sock_vol = [n for n, p in mounts.items() if sock.startswith(p.rstrip("/") + "/")]
        if not sock_vol or sock_vol[0] not in hp:
            self.fail(f"{rel}: --socket {sock} is not under a hostPath mount")
            return
        host_sock = hp[sock_vol[0]] + sock[len(mounts[sock_vol[0]].rstrip("/")):]
        rel, j = job[0]
        jspec = j["spec"]["template"]["spec"]
        jhp = {v["name"]: v["hostPath"]["path"] for v in jspec.get("volumes", []) if "hostPath" in v}
        for jc in jspec["containers"]:
            env = {e["name"]: e for e in jc.get("env", [])}
            val = lambda k: env.get(k, {}).get("value")
            if val("GAPTRACE_DORMANT") != "1":
                self.fail(f"{rel}: {jc['name']}: GAPTRACE_DORMANT is not \"1\"")
            for k, field in (("POD_NAME", "metadata.name"), ("POD_NAMESPACE", "metadata.namespace")):
                if env.get(k, {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") != field:
                    self.fail(f"{rel}: {jc['name']}: {k} is not the downward API's {field}")
            jm = {m["name"]: m["mountPath"] for m in jc.get("volumeMounts", [])}
            host_of = lambda p: next((jhp[n] + p[len(mp.rstrip("/")):] for n, mp in jm.items()
                                      if n in jhp and p.startswith(mp.rstrip("/") + "/")), None)
            js = val("GAPTRACE_SOCKET") or ""
            if host_of(js) != host_sock:
                self.fail(f"{rel}: {jc['name']}: GAPTRACE_SOCKET {js} is host path {host_of(js)}, "
                          f"the collector listens on host path {host_sock}")
            lib = val("CUDA_INJECTION64_PATH") or ""
            if not lib.endswith("/libgaptrace_inject.so") or host_of(lib) is None:
                self.fail(f"{rel}: {jc['name']}: CUDA_INJECTION64_PATH {lib!r} is not on a hostPath mount")

    def check_readme(self):
        """The README's yaml blocks parse; its Prometheus configuration (the
        block with rule_files) loads gaptrace.rules.yml, scrapes port 9947
        and passes promtool check config."""
        rel = f"{FLEET}/README.md"
        text = open(self.path(rel), encoding="utf-8").read()
        blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
        for b in blocks:
            yaml.safe_load(b)
        blocks = [b for b in blocks if "rule_files" in b]
        if not blocks:
            self.fail(f"{rel}: no yaml block with rule_files and scrape_configs")
            return
        conf = yaml.safe_load(blocks[0])
        if "gaptrace.rules.yml" not in (conf.get("rule_files") or []):
            self.fail(f"{rel}: the Prometheus configuration does not load gaptrace.rules.yml")
        ports = set()
        for sc in conf.get("scrape_configs") or []:
            for st in sc.get("static_configs") or []:
                ports |= {t.rsplit(":", 1)[-1] for t in st.get("targets", [])}
            text_sc = yaml.safe_dump(sc)
            ports |= set(re.findall(r"\b(99\d\d)\b", text_sc))
        if PORT not in ports:
            self.fail(f"{rel}: no scrape target on port {PORT} (found {sorted(ports)})")
        if self.promtool:
            with tempfile.TemporaryDirectory() as tmp:
                f = os.path.join(tmp, "prometheus.yml")
                shutil.copy(self.path(f"{FLEET}/gaptrace.rules.yml"), tmp)
                with open(f, "w") as out:
                    out.write(blocks[0])
                rc, out = self.promtool_run(["check", "config", f])
                if rc != 0:
                    self.fail(f"{rel}: promtool check config of its Prometheus configuration:\n{out}")

    def run(self):
        self.read_contract()
        steps = [self.check_systemd]
        if yaml is None:
            self.skipped.append("python3-yaml missing: rules, dashboard, k8s and README not read")
        else:
            steps = [self.check_rules, self.check_dashboard, self.check_k8s, self.check_readme] + steps
        for step in steps:
            try:
                step()
            except Exception as ex:  # a missing file or key: that step fails
                self.fail(f"{step.__name__}: {type(ex).__name__}: {ex}")
        if not self.promtool:
            self.skipped.append("promtool missing: rules not checked, PromQL not parsed")
        return self.errors


def main_check(root):
    c = Checker(root)
    errors = c.run()
    for e in errors:
        print(f"check_assets: FAIL: {e}")
    for s in c.skipped:
        print(f"check_assets: SKIP: {s}")
    if errors:
        return 1
    if yaml is None or not c.promtool:
        return 77
    print(f"check_assets: ok: rules checked and tested, {getattr(c, 'dashboard_exprs', 0)} dashboard queries "
          "parsed, unit, environment, k8s and README consistent")
    return 0


# (name, file, old, new, a piece of the failure the check must print)
PLANTED = [
    ("metric misspelled in the dashboard", "grafana-dashboard.json",
     "gaptrace_records_lost_total", "gaptrace_record_lost_total", "metric gaptrace_record_lost_total"),
    ("wrong expected value in the rules test", "gaptrace.rules.test.yml",
     "value: 0.1875\n", "value: 0.1876\n", "promtool test rules"),
    ("invalid PromQL in the dashboard", "grafana-dashboard.json",
     "sum by (instance, reason) (rate(", "sum by (instance, reason) rate((", "invalid PromQL"),
    ("state value not in FLEET.md", "grafana-dashboard.json",
     'state=\\"armed\\"', 'state=\\"arming\\"', 'state="arming"'),
    ("recording rule referred to but not defined", "grafana-dashboard.json",
     "gpu:gaptrace_gpu_idle_top_cause:rate5m", "gpu:gaptrace_gpu_idle_topcause:rate5m",
     "metric gpu:gaptrace_gpu_idle_topcause:rate5m"),
    ("invalid PromQL in a rule", "gaptrace.rules.yml",
     "expr: rate(gaptrace_gpu_wall_seconds_total[5m])", "expr: rate(gaptrace_gpu_wall_seconds_total[5])",
     "promtool check rules"),
    ("the job's socket is not the collector's", "k8s/example-job.yaml",
     "/run/gaptrace/sock/collector.sock", "/run/gaptrace/collector.sock", "GAPTRACE_SOCKET"),
    ("PrivateDevices on", "gaptrace-collector.service",
     "\n[Install]", "\nPrivateDevices=yes\n\n[Install]", "PrivateDevices"),
    ("a misspelled systemd directive", "gaptrace-collector.service",
     "ProtectSystem=", "ProtectSytem=", "systemd-analyze verify"),
]


def main_planted(root):
    if yaml is None or not shutil.which("promtool"):
        print("check_assets --planted: SKIP: needs promtool and python3-yaml")
        return 77
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, f, old, new, want in PLANTED:
            t = os.path.join(tmp, name.replace(" ", "_").replace("'", ""))
            shutil.copytree(os.path.join(root, FLEET), os.path.join(t, FLEET))
            os.makedirs(os.path.join(t, "docs"))
            shutil.copy(os.path.join(root, "docs/FLEET.md"), os.path.join(t, "docs/FLEET.md"))
            p = os.path.join(t, FLEET, f)
            text = open(p, encoding="utf-8").read()
            if old not in text:
                print(f"check_assets --planted: FAIL: {name}: {old!r} not in {f} (update PLANTED)")
                bad += 1
                continue
            open(p, "w", encoding="utf-8").write(text.replace(old, new, 1))
            c = Checker(t)
            errors = c.run()
            if "systemd-analyze" in want and any("systemd-analyze" in s for s in c.skipped):
                print(f"check_assets --planted: skip: {name}: systemd-analyze does not work here")
                continue
            hit = [e for e in errors if want in e]
            if not hit:
                print(f"check_assets --planted: FAIL: {name}: not caught (errors: {errors})")
                bad += 1
            else:
                print(f"check_assets --planted: caught: {name}: " + hit[0].splitlines()[0][:200])
    return 1 if bad else 0


def main(argv):
    planted = len(argv) > 1 and argv[1] == "--planted"
    args = argv[2:] if planted else argv[1:]
    if len(args) != 1 or not os.path.isdir(args[0]):
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    root = os.path.abspath(args[0])
    return main_planted(root) if planted else main_check(root)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
