#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The analyzer on one trace with --threads 1, 2, 4 and every CPU, alternating ROUNDS times:
medians of wall and CPU time, peak RSS, events/s (docs/benchmarks.md, "A quiet 16-CPU
machine"). Needs no /usr/bin/time (a device image may lack it).

Usage: threads-scale.py ANALYZER TRACE EVENTS ROUNDS"""
import os
import statistics
import subprocess
import sys
import time

analyze, trace, events, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ncpu = os.cpu_count()
configs = [("t%d" % n, ["--threads", str(n)]) for n in sorted({1, 2, 4, ncpu})]
res = {}
for r in range(rounds):
    for name, opt in configs:
        for mode, extra in (("full", ["-o", "/dev/null"]), ("parse", ["--validate"])):
            t0 = time.perf_counter()
            p = subprocess.Popen([analyze] + opt + extra + [trace], stdout=subprocess.DEVNULL)
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
            res.setdefault((name, mode), []).append((wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, status))
size = os.path.getsize(trace)
print("trace: %d events, %d bytes, %d CPUs, load %s" % (events, size, ncpu, open("/proc/loadavg").read().strip()))
for (name, mode), v in res.items():
    w = statistics.median(x[0] for x in v); c = statistics.median(x[1] for x in v); m = max(x[2] for x in v)
    print("%-4s %-5s wall %6.2f s (%s)  cpu %6.2f s  peak %4d MiB  %5.1f B/event  %5.2f M events/s  %4.0f MB/s  status %s" % (
        name, mode, w, " ".join("%.2f" % x[0] for x in v), c, m // 1024, m * 1024 / events, events / w / 1e6,
        size / w / 1e6, set(x[3] for x in v)))
