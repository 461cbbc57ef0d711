#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPU sampling overhead and cost per sample, side by side in one run.

    bench/samplers/run.py [build dir] [reps] [NAME=LIBINFERSCOPE.so ...] [--python PY ...]

For each program (a CPU-bound C program, a CPU-bound Python program six frames deep
for each interpreter given, default this one) and each library (the build's, and any
NAME=path given to compare, e.g. before=/tmp/old/libinferscope.so): CPU time (user +
sys of the child, from wait4) of a fixed amount of work without the preload, with the
preload and sampling off, at the default 100 Hz and at 1000 Hz; runs round-robin over
the libraries, `reps` rounds, best of each (the machine is shared: the minimum is the
least disturbed run). Then the cost per sample two ways: the trace's own account
(`sampling.handler_us` / `samples`, and of it `python_walk_us`, best round) and from
CPU time ((CPU at 1000 Hz - CPU off) / samples, which includes the signal delivery).
perf record -F 100 -g and py-spy -r 100 for scale where installed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
args = [a for a in sys.argv[1:]]
pythons = []
while "--python" in args:
    i = args.index("--python")
    pythons.append(args[i + 1])
    del args[i:i + 2]
libs = [a for a in args if "=" in a]
pos = [a for a in args if "=" not in a]
build = os.path.abspath(pos[0] if pos else "build")
reps = int(pos[1]) if len(pos) > 1 else 5
named = [("this build", os.path.join(build, "preload", "libinferscope.so"))]
named += [tuple(a.split("=", 1)) for a in libs]
pythons = pythons or [sys.executable]
tmp = tempfile.mkdtemp()


def run(cmd, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.Popen(cmd, env=e, cwd=tmp, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    return ru.ru_utime + ru.ru_stime


def preload(lib, rate):
    return {"LD_PRELOAD": os.path.abspath(lib), "INFERSCOPE_OUTPUT": os.path.join(tmp, "t.json"),
            "INFERSCOPE_CPU_SAMPLE": str(rate)}


def sampling():
    return json.load(open(os.path.join(tmp, "t.json")))["trace_metadata"]["sampling"]


def bench(name, cmd):
    best = {}
    cost = {}

    def keep(key, t):
        best[key] = t if key not in best else min(best[key], t)

    for _ in range(reps):
        keep("plain", run(cmd))
        for lib_name, lib in named:
            keep((lib_name, 0), run(cmd, preload(lib, 0)))
            keep((lib_name, 100), run(cmd, preload(lib, 100)))
            t = run(cmd, preload(lib, 1000))
            keep((lib_name, 1000), t)
            s = sampling()
            n = max(s["samples"], 1)
            per = (s.get("handler_us", 0) / n, s.get("python_walk_us", 0) / n, s["samples"],
                   s.get("unwind_fallbacks", "-"))
            if lib_name not in cost or per[0] < cost[lib_name][0]:
                cost[lib_name] = per
            best[(lib_name, "samples")] = s["samples"]
    plain = best["plain"]
    for lib_name, _ in named:
        off, d100, d1k = best[(lib_name, 0)], best[(lib_name, 100)], best[(lib_name, 1000)]
        h, py, samples, fb = cost[lib_name]
        print("| %s | %s | %.3f | %.3f | %.3f (%+.2f %%) | %.3f | %d | %.1f | %.1f | %s | %.1f |" % (
            name, lib_name, plain, off, d100, 100 * (d100 - off) / off, d1k, samples, h, py, fb,
            1e6 * (d1k - off) / max(best[(lib_name, "samples")], 1)))
        sys.stdout.flush()
    extra = []
    if shutil.which("perf"):
        out = os.path.join(tmp, "p.data")
        t = min(run(["perf", "record", "-q", "-o", out, "-F", "100", "-g", "--"] + cmd)
                for _ in range(reps))
        extra.append("perf record -F 100 -g: %.3f s (%+.2f %%)" % (t, 100 * (t - plain) / plain))
    if shutil.which("py-spy") and name.startswith("Python"):
        t = min(run(["py-spy", "record", "-r", "100", "-f", "raw", "-o", os.path.join(tmp, "s"),
                     "--"] + cmd) for _ in range(reps))
        extra.append("py-spy -r 100: %.3f s (%+.2f %%)" % (t, 100 * (t - plain) / plain))
    if extra:
        print("|  | %s |" % "; ".join(extra))


subprocess.check_call(["cc", "-O2", "-o", os.path.join(tmp, "cpu-bound"),
                       os.path.join(here, "cpu-bound.c")])
print("| program | library | CPU s, no preload | sampling off | default 100 Hz (vs off) "
      "| 1000 Hz | samples at 1000 Hz | handler µs per sample (trace) | of it Python walk µs "
      "| stacks left to libunwind | µs per sample from CPU time |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
bench("C (native stacks)", [os.path.join(tmp, "cpu-bound"), "800"])
for py in pythons:
    v = subprocess.check_output([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                text=True).strip()
    bench("Python %s (native + Python stacks)" % v, [py, os.path.join(here, "cpu-bound.py"), "120"])
shutil.rmtree(tmp)
