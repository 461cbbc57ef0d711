# SPDX-License-Identifier: MIT
"""Runs the PyTorch before/after pairs (pairs.py, docs/causal-pairs.md "Pairs on
PyTorch"): each variant recorded by torch.profiler (export_chrome_trace) and by the
preload (trace.json), the analyzer's what-if for the change asked on each "before"
trace, and compared with the measured change of the median step time.

  run_pairs.py --analyze ANALYZER --preload LIBINFERSCOPE [--python PY] [--repeat R]
               [--steps N] [--pair NAME]... [--cuda] [--table FILE] [--keep DIR]
               [--check]

On the CPU one run records with both at once (there is no CUPTI for them to share);
with --cuda the two record separate runs (one CUPTI subscriber per process). The step
time of a variant is the median over its runs of each run's own median step time
(pairs.py measures it with its monotonic clock); a prediction is the median over the
"before" runs. --check asserts what a loaded machine cannot move: every prediction, from
either recorder, is a gain of the pair's order (5-80 %). The measurements are printed,
not asserted: on a shared 2-core machine the other processes' load moves a step's time
by more than the changes do (docs/causal-pairs.md). Exit status 0, 1 when a check fails,
77 when the interpreter has no torch (the test is skipped).
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

RECORDERS = ("torch.profiler", "preload")
# pair -> (the change the "after" run applies, the what-if that simulates it: one for
# both recorders, or one per recorder)
PAIRS = {
    "dataloader": ("DataLoader num_workers 0 -> 2 (the transform in worker processes)",
                   "overlap:next_batch"),
    # The preload records the wait (a semaphore wait the pool thread releases) and the
    # pool thread: the wait removed. torch.profiler records neither (the legacy profiler
    # of Debian's build follows the thread that started it; no wait is an operator): the
    # scope's time, all of it self time, made free.
    "sync": ("the per-step wait for the model thread removed (one wait after the loop)",
             {"preload": "no-wait:sync", "torch.profiler": "scope:sync*0"}),
    "slow-op": ("the row-by-row normalisation replaced by one vectorised expression",
                "scope:slow_norm*0"),
}


def what_if_of(pair, recorder):
    w = PAIRS[pair][1]
    return w[recorder] if isinstance(w, dict) else w


def run_variant(args, pair, variant, rundir, separate):
    """One run (two with separate recorders); returns {recorder: (trace paths,
    (median step ms on the virtual clock, on the wall clock))}."""
    prog = [args.python, os.path.join(HERE, "pairs.py"), pair, variant,
            "--steps", str(args.steps)] + (["--cuda"] if args.cuda else [])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(TOP, "python") + os.pathsep + env.get("PYTHONPATH", "")
    out = {}
    plans = [("preload",), ("torch.profiler",)] if separate else [RECORDERS]
    for plan in plans:
        d = tempfile.mkdtemp(prefix="%s-%s-%s-" % (pair, variant, "+".join(plan)), dir=rundir)
        cmd, e = list(prog), dict(env)
        if "torch.profiler" in plan:
            cmd += ["--profile", os.path.join(d, "torch.json")]
        if "preload" in plan:
            e["LD_PRELOAD"] = args.preload
            e["INFERSCOPE_OUTPUT"] = os.path.join(d, "trace.json")
        p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            sys.exit("%s: status %d\n%s" % (" ".join(cmd), p.returncode, p.stderr[-3000:]))
        res = json.loads(p.stdout.strip().splitlines()[-1])
        step = (res["step_ms"], res["wall_ms"])
        for rec in plan:
            files = ([os.path.join(d, "torch.json")] if rec == "torch.profiler" else
                     sorted(glob.glob(os.path.join(d, "trace*.json"))))
            if not files:
                sys.exit("%s: no %s trace in %s" % (" ".join(cmd), rec, d))
            out[rec] = (files, step)
    return out


def predict(args, what_if, files):
    """The what-if's gain, in percent of the steps' window, on one "before" trace."""
    cmd = [args.analyze, "-f", "json", "--window-scope", "step", "--what-if", what_if] + files
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit("%s: status %d\n%s" % (" ".join(cmd), p.returncode, p.stderr[-3000:]))
    w = json.loads(p.stdout)["what_if"][0]
    if not w["ok"]:
        sys.exit("%s: %s" % (what_if, w["error"]))
    return w["gain_percent"]


def run_pair(args, pair, rundir):
    change = PAIRS[pair][0]
    separate = args.cuda
    steps = {(rec, v): [] for rec in RECORDERS for v in ("before", "after")}
    wall = {k: [] for k in steps}
    pred = {rec: [] for rec in RECORDERS}
    for _ in range(args.repeat):
        for variant in ("before", "after"):
            for rec, (files, step) in run_variant(args, pair, variant, rundir,
                                                  separate).items():
                steps[rec, variant].append(step[0])
                wall[rec, variant].append(step[1])
                if variant == "before":
                    pred[rec].append(predict(args, what_if_of(pair, rec), files))
    rows = []
    for rec in RECORDERS:
        b = statistics.median(steps[rec, "before"])
        a = statistics.median(steps[rec, "after"])
        rows.append({"pair": pair, "change": change, "what_if": what_if_of(pair, rec),
                     "recorder": rec,
                     "before_ms": b, "after_ms": a, "measured": 100.0 * (b - a) / b,
                     "predicted": statistics.median(pred[rec]),
                     "wall_before_ms": statistics.median(wall[rec, "before"]),
                     "wall_after_ms": statistics.median(wall[rec, "after"]),
                     "predictions": pred[rec], "before_runs": steps[rec, "before"],
                     "after_runs": steps[rec, "after"]})
    return rows


def check(row):
    """What a loaded machine cannot move: the prediction is a gain of the pair's order
    (each change saves 10-50 % of an idle machine's step). The failures, as text."""
    p = row["predicted"]
    return [] if 5.0 <= p <= 80.0 else ["the prediction is not a gain of 5-80 %"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--analyze", required=True)
    ap.add_argument("--preload", required=True)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--pair", action="append", choices=sorted(PAIRS))
    ap.add_argument("--cuda", action="store_true")
    ap.add_argument("--table", metavar="FILE", help="append the markdown rows there")
    ap.add_argument("--keep", metavar="DIR", help="keep the traces there")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    if subprocess.run([args.python, "-c", "import torch"], capture_output=True).returncode:
        print("%s cannot import torch: skipped (apt-get install python3-torch)" % args.python)
        return 77
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    rundir = args.keep or tempfile.mkdtemp(prefix="isc-torch-pairs-")
    failed = 0
    for pair in args.pair or list(PAIRS):
        for row in run_pair(args, pair, rundir):
            err = row["predicted"] - row["measured"]
            bad = check(row) if args.check else []
            failed += bool(bad)
            print("pair %s (%s): step %.1f -> %.1f ms, measured %.1f %%, predicted %.1f %% "
                  "(%s), error %+.1f pp; wall clock %.1f -> %.1f ms; "
                  "runs: before %s, after %s, predictions %s%s" %
                  (pair, row["recorder"], row["before_ms"], row["after_ms"],
                   row["measured"], row["predicted"], row["what_if"], err,
                   row["wall_before_ms"], row["wall_after_ms"],
                   row["before_runs"], row["after_runs"], row["predictions"],
                   ("; FAILED: " + ", ".join(bad)) if bad else ""), flush=True)
            if args.table:
                with open(args.table, "a") as f:
                    f.write("| %s | %s | `%s` | %s | %.1f ms | %.1f ms | %.1f %% | %.1f %% | "
                            "%+.1f pp (%+.0f %%) | %s |\n" %
                            (pair, row["change"], row["what_if"], row["recorder"],
                             row["before_ms"], row["after_ms"], row["predicted"],
                             row["measured"], err,
                             100.0 * err / row["measured"] if row["measured"] else 0.0,
                             "yes" if abs(err) <= 0.25 * abs(row["measured"]) else "no"))
    if not args.keep:
        subprocess.run(["rm", "-rf", rundir])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
