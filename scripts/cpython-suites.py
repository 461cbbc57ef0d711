#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs CPython's own test suites with and without the preload and diffs the failures.

The preload must not change what a program does; CPython's suites for os, signals,
threads, subprocesses, sockets, asyncio and multiprocessing exercise exactly what the
library hooks (fork, exec, signals, descriptors, errno, malloc). A case that fails only
under the preload is a bug of ours; a case that fails in both runs is the machine's.

Usage: scripts/cpython-suites.py [--preload LIB] [--python EXE ...] [--tests T ...]
                                 [-j N] [--env NAME=VALUE ...]
Exit status: 0 no new failure, 1 new failures (listed), 2 nothing could be run.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

TEST_TIMEOUT = 1200

SUITES = [
    "test_os", "test_signal", "test_subprocess", "test_threading", "test_fork1",
    "test_select", "test_poll", "test_mmap", "test_tempfile", "test_json",
    "test_exceptions", "test_thread", "test_socket", "test_asyncio",
    "test_multiprocessing_fork", "test_concurrent_futures",
]
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def has_test_package(exe):
    """True when the interpreter ships its test suite (Debian's needs
    libpython3.X-testsuite; pyenv's builds have it)."""
    probe = "import test.libregrtest, sys; print(sys.version_info[:2] >= (3, 8))"
    try:
        out = subprocess.run([exe, "-c", probe], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip() == "True"


def interpreters():
    """Every CPython >= 3.8 on the machine that has its test package: pyenv's and the
    system's, by real path (a pyenv shim is a bash script, never the program)."""
    found = []
    cands = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")))
    cands += sorted(glob.glob("/usr/bin/python3.[0-9]*"))
    for c in cands:
        real = os.path.realpath(c)
        if re.search(r"python3\.\d+$|python3$", real) and real not in found:
            if has_test_package(real):
                found.append(real)
    return found


def failing_cases(junit_path):
    """Names of the cases with a failure or error element in a regrtest JUnit file."""
    bad = set()
    try:
        root = ET.parse(junit_path).getroot()
    except (OSError, ET.ParseError):
        return None
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            bad.add(case.get("name"))
    return bad


def failing_modules(output):
    """Modules regrtest lists as failed or crashed in its summary."""
    bad = set()
    for m in re.finditer(r"^\d+ tests? (?:failed|crashed)[^:]*:\n((?:    .*\n)+)", output,
                         re.M):
        bad.update(m.group(1).split())
    return bad


def run(exe, tests, jobs, preload, env_extra, workdir, timeout=TEST_TIMEOUT):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.update(env_extra)
    if preload:
        env["LD_PRELOAD"] = preload
        env["INFERSCOPE_OUTPUT"] = os.path.join(workdir, "traces", "trace.json")
        os.makedirs(os.path.dirname(env["INFERSCOPE_OUTPUT"]), exist_ok=True)
    junit = os.path.join(workdir, "junit-%s.xml" % ("preload" if preload else "plain"))
    # a test that hangs (test_socket's accept on some networks, with or without the
    # preload) is killed after `timeout` seconds and counted as failed
    cmd = [exe, "-m", "test", "-j", str(jobs), "--timeout", str(timeout), "--junit-xml",
           junit, "-q"] + tests
    p = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True)
    cases = failing_cases(junit)
    mods = failing_modules(p.stdout + p.stderr)
    if cases is None:
        cases = set()
        mods.add("(regrtest wrote no results: exit %d)" % p.returncode)
        print("   regrtest %s wrote no results (exit %d); its last output:\n%s" %
              ("with the preload" if preload else "without the preload", p.returncode,
               (p.stdout + p.stderr)[-3000:]), flush=True)
    return cases, mods, p.stdout + p.stderr


def compare(exe, tests, args, env_extra):
    print("== %s: %s" % (exe, " ".join(tests)), flush=True)
    work = tempfile.mkdtemp(prefix="isc-cpython-")
    try:
        plain_c, plain_m, _ = run(exe, tests, args.jobs, None, env_extra, work, args.timeout)
        pre_c, pre_m, out = run(exe, tests, args.jobs, args.preload, env_extra, work, args.timeout)
        new_c = pre_c - plain_c
        new_m = pre_m - plain_m
        first_c = set(new_c)
        if new_c or new_m:
            # A flaky case fails once in either run: run the modules concerned again,
            # both ways, and keep what fails under the preload only, twice.
            mods = {m for m in new_m if m.startswith("test_")}
            mods |= {c.split(".")[1] for c in new_c if c.count(".") >= 2}
            again = sorted(mods & set(tests)) or tests
            plain2_c, plain2_m, _ = run(exe, again, args.jobs, None, env_extra, work, args.timeout)
            pre2_c, pre2_m, out = run(exe, again, args.jobs, args.preload, env_extra, work,
                                      args.timeout)
            new_c &= pre2_c - plain2_c
            new_m &= pre2_m - plain2_m
        print("   without the preload: %d failing cases, modules failed: %s" %
              (len(plain_c), " ".join(sorted(plain_m)) or "none"))
        print("   with the preload:    %d failing cases, modules failed: %s" %
              (len(pre_c), " ".join(sorted(pre_m)) or "none"))
        for c in sorted(first_c - new_c):
            print("   failed once with the preload, passed when both were run again: %s" % c)
        for c in sorted(new_c):
            print("   NEW FAILURE: %s" % c)
        for m in sorted(new_m):
            print("   NEW MODULE FAILURE: %s" % m)
        if new_c or new_m:
            print(out[-4000:])
        return not (new_c or new_m)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preload", default=os.path.join(TOP, "build", "preload",
                                                     "libinferscope.so"))
    ap.add_argument("--python", action="append", help="interpreter (repeatable); "
                    "default: every CPython >= 3.8 found with its test package")
    ap.add_argument("--tests", nargs="+", default=SUITES)
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=TEST_TIMEOUT,
                    help="seconds before regrtest kills one test file (default %(default)s)")
    ap.add_argument("--env", action="append", default=[],
                    help="NAME=VALUE set in both runs (e.g. INFERSCOPE_CPU_SAMPLE=0)")
    args = ap.parse_args()
    args.preload = os.path.abspath(args.preload)
    if not os.path.exists(args.preload):
        print("cpython-suites: %s not found (build first)" % args.preload, file=sys.stderr)
        return 2
    env_extra = dict(e.split("=", 1) for e in args.env)
    exes = args.python or interpreters()
    if not exes:
        print("cpython-suites: no interpreter with its test package found",
              file=sys.stderr)
        return 2
    ok = True
    for exe in exes:
        ok &= compare(os.path.realpath(exe), args.tests, args, env_extra)
    print("no new failure" if ok else "new failures under the preload")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
