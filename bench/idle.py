#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the library costs a process that does nothing: CPU time (getrusage of the
child) of a Python process that sleeps SECONDS, without the preload and under each
library given, run side by side (alternating, ROUNDS times, medians), and the
collector's wakeups from the trace (trace_metadata.collector_wakeups, where the library
writes it). The same with a 1 s sleep gives the fixed part (start-up, writing the
trace at exit); "idle" is what each further second of sleep costs, in % of a core.

    bench/idle.py [--seconds 20] [--rounds 3] LIB [LIB...]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile


def run(lib, seconds, python, out):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if lib:
        env["LD_PRELOAD"] = lib
        env["INFERSCOPE_OUTPUT"] = out
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([python, "-c", "import time; time.sleep(%g)" % seconds], env=env,
                   check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    wakeups = None
    if lib and os.path.exists(out):
        with open(out) as f:
            wakeups = json.load(f)["trace_metadata"].get("collector_wakeups")
        os.unlink(out)
    return after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, wakeups


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("libs", nargs="+")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "t.json")
    libs = [""] + a.libs
    rows = {(lib, t): [] for lib in libs for t in (1.0, a.seconds)}
    for _ in range(a.rounds):
        for lib, t in rows:
            rows[(lib, t)].append(run(lib, t, a.python, out))

    def med(v):
        v = sorted(v)
        return v[len(v) // 2] if v else None

    print("| library | user s | system s | %% of a core over %g s | idle: %% of a core "
          "per further second | collector wakeups |" % a.seconds)
    print("|---|---|---|---|---|---|")
    for lib in libs:
        long, short = rows[(lib, a.seconds)], rows[(lib, 1.0)]
        u, s = med([r[0] for r in long]), med([r[1] for r in long])
        fixed = med([r[0] + r[1] for r in short])
        w = med([r[2] for r in long if r[2] is not None])
        print("| %s | %.3f | %.3f | %.2f | %.3f | %s |" % (
            lib or "(none)", u, s, 100 * (u + s) / a.seconds,
            100 * (u + s - fixed) / (a.seconds - 1), "-" if w is None else w))
    os.rmdir(tmp)


if __name__ == "__main__":
    sys.exit(main())
