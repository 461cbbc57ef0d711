#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPU sampling overhead and cost per sample, side by side in one run.

    bench/samplers/run.py [build dir] [reps]

CPU time (user + sys of the child, from wait4) of a fixed amount of work: without the
preload, with the preload and sampling off, with the default 100 Hz, at 1000 Hz, and
under perf record -F 100 -g / py-spy -r 100 where installed. The best of `reps` runs
each (the machine is shared: the minimum is the least disturbed run). ns per sample =
(CPU at 1000 Hz - CPU with sampling off) / samples in the 1000 Hz trace.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
lib = os.path.join(build, "preload", "libinferscope.so")
tmp = tempfile.mkdtemp()


def cpu(cmd, env=None):
    best = None
    for _ in range(reps):
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.Popen(cmd, env=e, cwd=tmp, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        t = ru.ru_utime + ru.ru_stime
        best = t if best is None or t < best else best
    return best


def preload(rate):
    return {"LD_PRELOAD": lib, "INFERSCOPE_OUTPUT": os.path.join(tmp, "t.json"),
            "INFERSCOPE_CPU_SAMPLE": str(rate)}


def bench(name, cmd):
    plain = cpu(cmd)
    off = cpu(cmd, preload(0))
    d100 = cpu(cmd, preload(100))
    d1k = cpu(cmd, preload(1000))
    samples = json.load(open(os.path.join(tmp, "t.json")))["trace_metadata"]["sampling"]["samples"]
    perf = "-"
    if shutil.which("perf"):
        out = os.path.join(tmp, "p.data")
        t = cpu(["perf", "record", "-q", "-o", out, "-F", "100", "-g", "--"] + cmd)
        perf = "%.3f (%+.2f %%)" % (t, 100 * (t - plain) / plain)
    spy = "-"
    if shutil.which("py-spy") and name.startswith("Python"):
        t = cpu(["py-spy", "record", "-r", "100", "-f", "raw", "-o", os.path.join(tmp, "s"), "--"] + cmd)
        spy = "%.3f (%+.2f %%)" % (t, 100 * (t - plain) / plain)
    print("| %s | %.3f | %.3f | %.3f (%+.2f %%) | %.3f | %d | %.0f | %s | %s |" % (
        name, plain, off, d100, 100 * (d100 - off) / off, d1k, samples,
        1e9 * (d1k - off) / max(samples, 1), perf, spy))
    sys.stdout.flush()


subprocess.check_call(["cc", "-O2", "-o", os.path.join(tmp, "cpu-bound"),
                       os.path.join(here, "cpu-bound.c")])
print("| program | CPU s, no preload | preload, sampling off | default 100 Hz (vs off) "
      "| 1000 Hz | samples at 1000 Hz | ns per sample | perf record -F 100 -g | py-spy -r 100 |")
print("|---|---|---|---|---|---|---|---|---|")
bench("C (native stacks)", [os.path.join(tmp, "cpu-bound"), "1500"])
bench("Python %d.%d (native + Python stacks)" % sys.version_info[:2],
      [sys.executable, os.path.join(here, "cpu-bound.py"), "15"])
shutil.rmtree(tmp)
