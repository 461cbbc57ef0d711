#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Holds inferscope-analyze's dependency graph to the independent reference
(causal_ref.py) on generated runs (gen_runs.py): for each seed, the run as an InferScope
trace and as a Kineto trace; the critical path's length, each of its categories and the
gain of each what-if must agree within 1 % (of the path for the path's figures, of the
gain for the gains, with a floor of 0.01 ms / 0.01 point for the rounding of -f json).
A disagreement prints its seed, the trace and the differing figures.

Usage: check.py ANALYZER [FIRST LAST] [--keep DIR] [--verbose]
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import causal_ref  # noqa: E402
import gen_runs  # noqa: E402

QUESTIONS = ("gpu*0.5", "scope:**0.5", "scope:**0", "copies*0.5", "kernel:nccl**0.5",
             "call:cuda**0.5")
# Small runs: a launch queue of a few slots is full at 3 operations in flight.
THRESHOLDS = {"launch.queue_full_depth": 3.0}


def engine(analyzer, path, thresholds_file):
    # A question that matches nothing in the window is an error of the whole command
    # (exit 2, naming it): asked again without it, it counts as no gain (compare()).
    questions = list(QUESTIONS)
    while True:
        cmd = [analyzer, "-f", "json", "--thresholds", thresholds_file]
        for q in questions:
            cmd += ["--what-if", q]
        out = subprocess.run(cmd + [path], capture_output=True, text=True)
        unmatched = [q for q in questions
                     if "--what-if '%s': nothing in the window matches" % q in out.stderr]
        if out.returncode == 2 and unmatched:
            questions = [q for q in questions if q not in unmatched]
            continue
        if out.returncode != 0:
            raise RuntimeError("%s: exit %d: %s" % (path, out.returncode, out.stderr.strip()))
        return json.loads(out.stdout)


def compare(got, ref):
    bad = []
    cp = got.get("critical_path")
    if cp is None:
        return ["no critical_path in the engine's result"]
    length = ref["length_ms"]
    tol = max(0.01 * length, 0.01)
    if abs(cp["length_ms"] - length) > tol:
        bad.append("path length: engine %.6f ms, reference %.6f ms" % (cp["length_ms"], length))
    for k, v in ref["categories"].items():
        e = cp["categories"].get(k, 0.0)
        if abs(e - v) > tol:
            bad.append("category %s: engine %.6f ms, reference %.6f ms" % (k, e, v))
    answers = {w["question"]: w for w in got.get("what_if", [])}
    for q, v in ref["what_if"].items():
        w = answers.get(q)
        # a question that picks nothing may be an error (no node to change): no gain
        e = w["gain_percent"] if w is not None and w.get("ok") else 0.0
        if abs(e - v) > max(0.01 * abs(v), 0.01):
            bad.append("what-if %s: engine %+.3f %%, reference %+.3f %%" % (q, e, v))
    return bad


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    keep = None
    if "--keep" in sys.argv:
        keep = sys.argv[sys.argv.index("--keep") + 1]
        args.remove(keep)
    verbose = "--verbose" in sys.argv
    analyzer = args[0]
    first, last = (int(args[1]), int(args[2])) if len(args) >= 3 else (1, 500)
    failures = 0
    runs = 0
    with tempfile.TemporaryDirectory(prefix="isc-ref-") as tmp:
        directory = keep or tmp
        os.makedirs(directory, exist_ok=True)
        thr = os.path.join(directory, "thresholds.conf")
        with open(thr, "w") as f:
            for k, v in THRESHOLDS.items():
                f.write("%s = %g\n" % (k, v))
        for seed in range(first, last + 1):
            for path in gen_runs.write(seed, directory):
                runs += 1
                ref = causal_ref.analyze(path, QUESTIONS, THRESHOLDS)
                try:
                    got = engine(analyzer, path, thr)
                except RuntimeError as err:
                    print("seed %d: %s" % (seed, err))
                    failures += 1
                    continue
                bad = compare(got, ref)
                if bad or verbose:
                    print("seed %d (%s):%s" % (seed, os.path.basename(path),
                                               "" if bad else " agrees"))
                    for b in bad:
                        print("  " + b)
                failures += bool(bad)
                if not keep:
                    os.unlink(path)
    print("%d traces of %d runs (seeds %d..%d): %d disagree" % (runs, last - first + 1,
                                                               first, last, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
