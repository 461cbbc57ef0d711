#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs commands side by side: round-robin, N rounds, each run timed (wall clock and
CPU time of the process tree). Prints one line per command with the median and its
ratio to the first command (the baseline). Round-robin, not one command after the
other, because this machine is shared: drift and neighbours then hit every command
alike, and the ratios stay meaningful even when the absolute figures move.

Usage: side-by-side.py ROUNDS NAME=COMMAND [NAME=COMMAND ...]
       (COMMAND is run with sh -c; its output is discarded)
"""
import os
import resource
import statistics
import subprocess
import sys
import time


def run(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(["sh", "-c", cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if r.returncode != 0:
        sys.exit("failed (%d): %s" % (r.returncode, cmd))
    return wall, cpu


def main():
    rounds = int(sys.argv[1])
    cmds = [a.split("=", 1) for a in sys.argv[2:]]
    walls = {n: [] for n, _ in cmds}
    cpus = {n: [] for n, _ in cmds}
    for _, c in cmds:  # warm caches once
        run(c)
    for _ in range(rounds):
        for n, c in cmds:
            w, u = run(c)
            walls[n].append(w)
            cpus[n].append(u)
    base = cmds[0][0]
    bw, bc = statistics.median(walls[base]), statistics.median(cpus[base])
    print("| %-22s | %10s | %8s | %10s | %8s |" % ("run", "wall (s)", "ratio", "CPU (s)", "ratio"))
    print("|%s|%s|%s|%s|%s|" % ("-" * 24, "-" * 12, "-" * 10, "-" * 12, "-" * 10))
    for n, _ in cmds:
        w, u = statistics.median(walls[n]), statistics.median(cpus[n])
        print("| %-22s | %10.3f | %7.3fx | %10.3f | %7.3fx |" % (n, w, w / bw, u, u / bc))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
