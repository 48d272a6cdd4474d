#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/check_readme_commands.py ROOT: every command of README.md's ```sh
blocks, run in order the way a new user runs them, fails on the first
non-zero exit of any of them (and goes on, to name every one that fails).

The environment is made as close to a clean machine as this one allows:
 - a copy of the working tree (its tracked and untracked, not ignored,
   files), so the quickstart's build-quick/ and .local/, the README's
   build/ and the files the commands write land in the copy;
 - HOME is an empty directory (~/.local/gaptrace, ~/gaptrace-runs);
 - no gaptrace on PATH, no GAPTRACE_* or CUDA_INJECTION64_PATH variable;
 - pkg-config sees only the libraries of the packages `scripts/deps.sh
   build` installs (the quickstart's dependency step) and of what they
   depend on, so a build finds no optional library the quickstart would not
   have installed (libcjson, Check). On a system without dpkg this cannot
   be done, and the test says so and runs with what is installed;
 - CUDA_HOME names a directory that does not exist, so the builds find no
   CUDA toolkit (the quickstart installs none) unless its headers are in
   the compiler's own include path.
The first command, scripts/quickstart.sh, runs the dependency step itself;
when a package it needs is missing and cannot be installed here (not root,
no sudo without a password), the test is skipped (exit 77), naming it.

Not run, each said on the output: a line whose trailing comment starts
with "# needs" (README.md marks the commands that need a GPU or runs of
your own that way: "# needs a GPU"), and scripts/test.sh, which runs the
test suite this test is part of. The quickstart's last lines must say what
its build left out, or that it left out nothing.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from readme_blocks import read_readme

NOT_HERE = {
    "scripts/test.sh": "runs the whole test suite, of which this test is one",
}
NEEDS = re.compile(r"\s#\s*(needs\b.*)$")
SKIP = 77


def commands(root):
    """(line, command, why not run or None) of every ```sh block, with
    backslash-continued lines joined."""
    out = []
    for b in read_readme(root):
        if b.lang not in ("sh", "bash", "shell"):
            continue
        cmd, first = "", 0
        for i, line in enumerate(b.lines):
            if not cmd and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if not cmd:
                first = b.line + i
            if line.endswith("\\"):
                cmd += line[:-1] + " "
                continue
            cmd += line
            m = NEEDS.search(cmd)
            why = m.group(1) if m else NOT_HERE.get(cmd.split("#")[0].strip())
            out.append((first, cmd.strip(), why))
            cmd = ""
    return out


def copy_tree(root, dst):
    """The working tree's files into dst: git's tracked and untracked (not
    ignored) files, else everything but .git and build*/."""
    try:
        names = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True, check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        shutil.copytree(root, dst, symlinks=True,
                        ignore=shutil.ignore_patterns(".git", "build*", ".local"))
        return
    for n in filter(None, names):
        src = os.path.join(root, n)
        if not os.path.lexists(src):
            continue  # deleted in the working tree
        os.makedirs(os.path.dirname(os.path.join(dst, n)), exist_ok=True)
        shutil.copy2(src, os.path.join(dst, n), follow_symlinks=False)


def dpkg(*args):
    return subprocess.run(["dpkg-query", *args], capture_output=True, text=True).stdout


def package_closure(pkgs):
    """pkgs and, recursively, the installed packages they depend on."""
    seen, todo = set(), list(pkgs)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        for dep in dpkg("-W", "-f=${Depends},${Pre-Depends}", p).split(","):
            name = dep.split("|")[0].strip().split(" ")[0].split(":")[0]
            if name and "install ok installed" in dpkg("-W", "-f=${Status}", name):
                todo.append(name)
    return seen


def pkgconfig_dir(src, tmp):
    """A directory holding only the .pc files of the packages scripts/deps.sh
    build installs (and their dependencies), or None without dpkg."""
    if not shutil.which("dpkg-query"):
        return None
    pkgs = subprocess.run(["bash", src + "/scripts/deps.sh", "--list", "build"],
                          capture_output=True, text=True, check=True).stdout.split()
    pcdir = os.path.join(tmp, "pkgconfig")
    os.makedirs(pcdir)
    for f in dpkg("-L", *sorted(package_closure(pkgs))).splitlines():
        if f.endswith(".pc") and os.path.isfile(f):
            dst = os.path.join(pcdir, os.path.basename(f))
            if not os.path.exists(dst):
                os.symlink(f, dst)
    return pcdir


def clean_env(home, pcdir):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GAPTRACE_") and k not in ("CUDA_INJECTION64_PATH", "PKG_CONFIG_PATH",
                                                        "PKG_CONFIG_LIBDIR")}
    path = [d for d in env.get("PATH", "/usr/bin:/bin").split(":")
            if d and not os.access(os.path.join(d, "gaptrace"), os.X_OK)]
    env.update(HOME=home, PATH=":".join(path), CUDA_HOME=os.path.join(home, "no-cuda-toolkit"))
    if pcdir:
        env.update(PKG_CONFIG_LIBDIR=pcdir, PKG_CONFIG_PATH="")
    return env


def can_install():
    if os.geteuid() == 0:
        return True
    return bool(shutil.which("sudo")) and subprocess.run(
        ["sudo", "-n", "true"], capture_output=True).returncode == 0


class Shell:
    """Runs commands one after another as in one shell: the environment and
    the working directory a command leaves are the next one's."""

    def __init__(self, cwd, env, tmp):
        self.cwd, self.env, self.tmp = cwd, env, tmp

    def run(self, cmd, log):
        state = os.path.join(self.tmp, "state")
        script = "set -eo pipefail\ncd %s\n%s\nenv -0 >%s.env; pwd >%s.cwd\n" % (
            quote(self.cwd), cmd, state, state)
        with open(log, "w") as f:
            rc = subprocess.run(["bash", "-c", script], stdin=subprocess.DEVNULL, stdout=f,
                                stderr=subprocess.STDOUT, env=self.env).returncode
        if rc == 0:
            with open(state + ".env", "rb") as f:
                pairs = [kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv]
            self.env = {k.decode(): v.decode() for k, v in pairs}
            with open(state + ".cwd") as f:
                self.cwd = f.read().strip()
        return rc


def quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def tail(path, n=25):
    with open(path, errors="replace") as f:
        return f.read().splitlines()[-n:]


def check_quickstart(log):
    """Its last lines say what was left out, or that nothing was."""
    last = tail(log, 12)
    said = [l for l in last if l.startswith(("== left out of this build:", "== nothing left out"))]
    if not said:
        print("  the quickstart's last lines do not say what its build left out:")
        print("\n".join("    " + l for l in last))
        return 1
    at = last.index(said[0])
    print("\n".join("    " + l for l in last[at:]))
    return 0


def main():
    root = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="gt-readme-")
    try:
        return run_all(root, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_all(root, tmp):
    src, home = os.path.join(tmp, "src"), os.path.join(tmp, "home")
    os.makedirs(home)
    copy_tree(root, src)
    missing = subprocess.run(["bash", src + "/scripts/deps.sh", "--check", "build"],
                             capture_output=True, text=True).stdout.split()
    if missing and not can_install():
        print("SKIP: the dependency step cannot install %s here (not root, no sudo without a "
              "password)" % " ".join(missing))
        return SKIP
    pcdir = pkgconfig_dir(src, tmp)
    if pcdir:
        print("pkg-config sees: " + " ".join(sorted(os.listdir(pcdir))))
    else:
        print("no dpkg here: the builds see every library installed on this machine")
    sh = Shell(src, clean_env(home, pcdir), tmp)
    failed, ran, skipped = [], 0, 0
    for i, (line, cmd, why) in enumerate(commands(root)):
        if why:
            print("README.md:%d: not run (%s): %s" % (line, why, cmd))
            skipped += 1
            continue
        log = os.path.join(tmp, "cmd%d.log" % i)
        rc = sh.run(cmd, log)
        ran += 1
        print("README.md:%d: exit %d: %s" % (line, rc, cmd))
        if rc != 0:
            failed.append(cmd)
            print("\n".join("    " + l for l in tail(log)))
        elif cmd.startswith("scripts/quickstart.sh") and check_quickstart(log):
            failed.append(cmd + " (its last lines)")
    print("%d commands run, %d not run, %d failed" % (ran, skipped, len(failed)))
    return 1 if failed or not ran else 0


if __name__ == "__main__":
    sys.exit(main())
