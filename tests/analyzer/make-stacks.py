#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the hand-made traces with sampled stacks of tests/analyzer/data/stacks/.

They follow the trace contract for sampled stacks (docs/trace-format.md, "stacks" and
"cpu_sample"): a "stacks" section after "relationships", flat cpu_sample events, stack_id
on CUDA calls, trace_metadata.sampling. The numbers are chosen so that the analyzer's
answers are exact: a 6 : 3 : 1 split of steady-state CPU time between three functions,
start-up time under the import system apart, worker processes found from their stacks.
Deterministic: run it again and the files do not change. Usage: make-stacks.py OUTDIR
"""
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("scen", os.path.join(HERE, "make-scenarios.py"))
scen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(scen)

T0, MAIN = scen.T0, scen.MAIN
PERIOD = 10000.0  # us: 100 Hz

# Frames as the recorder writes them: native (module basename, offset), Python (file, line).
def native(fn, module, addr):
    return {"kind": "native", "function": fn, "module": module, "address": hex(addr),
            "build_id": "4c1d0a"}


def py(fn, path, line):
    return {"kind": "python", "function": fn, "module": path, "file": path, "line": line}


EVAL = native("_PyEval_EvalFrameDefault", "libpython3.11.so.1.0", 0x1d2e30)
MAIN_PY = py("<module>", "serve.py", 120)
SERVE_MAIN = py("main", "serve.py", 110)
HANDLE = py("handle", "serve.py", 88)
TOKENIZE = py("tokenize", "serve.py", 41)
DECODE = py("decode", "serve.py", 60)
FORWARD = py("forward", "model.py", 88)
ADDMM = native("at::native::addmm", "libtorch_cpu.so", 0x23f1a0)
SGEMM = native("sgemm_kernel", "libopenblas.so.0", 0x9a010)
IMPORT = py("_find_and_load", "<frozen importlib._bootstrap>", 1176)
EXEC_MOD = py("exec_module", "<frozen importlib._bootstrap_external>", 940)
IMPORT_TORCH = py("<module>", "torch/__init__.py", 1500)
CALL_IMPL = py("_call_impl", "torch/nn/modules/module.py", 1194)
WORKER_LOOP = py("_worker_loop", "torch/utils/data/_utils/worker.py", 308)
FETCH = py("fetch", "torch/utils/data/_utils/fetch.py", 52)
MEMCPY = native("cudaMemcpy", "libcudart.so.13", 0x4a210)
TO_CPU = native("THPVariable_cpu", "libtorch_python.so", 0x51b2c0)
LAUNCH = native("cudaLaunchKernel", "libcudart.so.13", 0x49f00)
SYNC_LINE = py("handle", "serve.py", 92)


class StackTrace(scen.Trace):
    def __init__(self, name, pid=1000, cupti="active", threads=None):
        super().__init__(name, cupti)
        self.pid = pid
        self.frames, self.frame_ids = [], {}
        self.stacks, self.stack_ids = [], {}
        self.samples = 0
        self.threads = threads or {MAIN: "python3"}
        self.mappings = []

    def frame(self, f):
        key = tuple(sorted(f.items()))
        if key not in self.frame_ids:
            self.frame_ids[key] = len(self.frames) + 1
            self.frames.append({"id": len(self.frames) + 1, **f})
        return self.frame_ids[key]

    def stack(self, frames):
        """frames innermost first; Python frames spliced in at the evaluator."""
        ids = tuple(self.frame(f) for f in frames)
        if ids not in self.stack_ids:
            self.stack_ids[ids] = len(self.stacks) + 1
            self.stacks.append({"id": len(self.stacks) + 1, "frames": list(ids)})
        return self.stack_ids[ids]

    def sample(self, ts, frames, tid=MAIN, weight=PERIOD):
        self.samples += 1
        self.events.append({"type": "cpu_sample", "timestamp_us": round(ts, 3),
                            "thread_id": tid, "pid": self.pid, "weight_us": weight,
                            "stack_id": self.stack(frames)})

    def write(self, outdir):
        everything = self.events
        self.events = [e for e in everything if e["type"] != "cpu_sample"]
        super().write(outdir)
        self.events = everything
        path = os.path.join(outdir, self.name + ".json")
        with open(path) as f:
            doc = json.load(f)
        doc["events"] = everything
        md = doc["trace_metadata"]
        md["pid"] = self.pid
        md["root_pid"] = 1000
        md["ppid"] = 1 if self.pid == 1000 else 1000
        md["aggregates"]["threads"] = [{"thread_id": t, "name": n}
                                       for t, n in sorted(self.threads.items())]
        md["sampling"] = {"cpu_hz": 100, "signal": 34, "python": "ok",
                          "samples": self.samples, "lost": 0}
        doc["stacks"] = {"frames": self.frames, "stacks": self.stacks}
        if self.mappings:
            doc["stacks"]["mappings"] = self.mappings
        with open(path, "w") as f:
            json.dump(doc, f, indent=None, separators=(",", ":"))
            f.write("\n")


def startup(tr, t, n=30, tid=MAIN):
    """n samples of `import torch` before the program starts working."""
    for i in range(n):
        t += PERIOD
        inner = [SGEMM] if i % 3 == 0 else []
        tr.sample(t, inner + [IMPORT_TORCH, EXEC_MOD, IMPORT, MAIN_PY], tid=tid)
    tr.cpu_time(t, n * PERIOD, tid=tid)
    return t


def request_631(tr, t):
    """Ten samples: six in tokenize, three in forward (BLAS inside), one in decode."""
    outer = [HANDLE, SERVE_MAIN, MAIN_PY]
    for _ in range(6):
        t += PERIOD
        tr.sample(t, [TOKENIZE] + outer)
    for _ in range(3):
        t += PERIOD
        tr.sample(t, [SGEMM, ADDMM, EVAL, FORWARD] + outer)
    t += PERIOD
    tr.sample(t, [DECODE] + outer)
    tr.cpu_time(t, 10 * PERIOD)
    return t


def cpu_631(tr):
    """A CPU-only program: start-up, then 50 requests split 6 : 3 : 1."""
    t = T0
    tr.cpu_time(t, 0)
    t = startup(tr, t)
    for _ in range(50):
        t = request_631(tr, t)


def cpu_631_threads(tr):
    """The same, and two data-loading threads named as PyTorch names them."""
    cpu_631(tr)
    for tid in (MAIN + 10, MAIN + 11):
        t = T0
        tr.cpu_time(t, 0, tid=tid)
        for _ in range(100):
            t += PERIOD
            tr.sample(t, [TOKENIZE, FETCH], tid=tid)
        tr.cpu_time(t, 100 * PERIOD, tid=tid)


def cpu_model(tr):
    """A CPU-only loop: per request 4 samples tokenize in the main thread, 6 run the model
    (an nn.Module call, BLAS below it): the model is no preprocessing."""
    t = T0
    tr.cpu_time(t, 0)
    t = startup(tr, t)
    outer = [HANDLE, SERVE_MAIN, MAIN_PY]
    for _ in range(50):
        for _ in range(4):
            t += PERIOD
            tr.sample(t, [TOKENIZE] + outer)
        for _ in range(6):
            t += PERIOD
            tr.sample(t, [SGEMM, ADDMM, EVAL, FORWARD, CALL_IMPL] + outer)
        tr.cpu_time(t, 10 * PERIOD)


def main_with_workers(tr):
    """The main process runs the model; its DataLoader workers (other files) tokenize."""
    t = T0
    tr.cpu_time(t, 0)
    t = startup(tr, t)
    for _ in range(200):
        t += PERIOD
        tr.sample(t, [SGEMM, ADDMM, EVAL, FORWARD, HANDLE, SERVE_MAIN, MAIN_PY])
    tr.cpu_time(t, 200 * PERIOD)


def worker(tr):
    t = T0 + 30 * PERIOD
    tr.cpu_time(t, 0, tid=tr.pid)
    for _ in range(150):
        t += PERIOD
        tr.sample(t, [TOKENIZE, FETCH, WORKER_LOOP], tid=tr.pid)
    tr.cpu_time(t, 150 * PERIOD, tid=tr.pid)


def gpu_sync(tr):
    """Launches from forward(), then a synchronous .cpu() copy at serve.py:92."""
    t = T0
    launch_stack = tr.stack([LAUNCH, ADDMM, EVAL, FORWARD, HANDLE, SERVE_MAIN, MAIN_PY])
    copy_stack = tr.stack([MEMCPY, TO_CPU, EVAL, SYNC_LINE, SERVE_MAIN, MAIN_PY])
    tr.cpu_time(t, 0)
    for _ in range(20):
        tr.sample(t + 250, [TOKENIZE, HANDLE, SERVE_MAIN, MAIN_PY], weight=500)
        t = tr.scope("prepare", t, 500)
        tr.cpu_time(t, 500)
        gpu = t
        for k in range(4):
            c = tr.api("cudaLaunchKernel", t, 5, kernel="gemm_kernel", stack_id=launch_stack)
            gpu = tr.kernel("gemm_kernel", max(gpu, t + 7), 2000 if k < 3 else 1000, c)
            t += 5
        c = tr.api("cudaMemcpy", t, gpu - t + 1510, blocked=True, direction="d2h",
                   host_memory="pageable", bytes=8 << 20, stack_id=copy_stack)
        tr.copy("d2h_copy", gpu + 2, 1500, c, 8 << 20, host="pageable")
        tr.sample(t + 2000, [MEMCPY, TO_CPU, EVAL, SYNC_LINE, SERVE_MAIN, MAIN_PY], weight=200)
        t = gpu + 1515


def unnamed(module, addr, start=None):
    """A native frame with no symbol (a stripped library's static function)."""
    f = native("", module, addr)
    if start is not None:
        f["function_start"] = hex(start)
    return f


def stripped(tr):
    """A C program whose hot code is in a stripped library: per request 6 samples at three
    addresses of one unnamed function (start 0x1000), 3 in another (0x2000), 1 at an
    address with no unwind entry (0x3000)."""
    outer = [native("main", "hot", 0x1150), native("__libc_start_main", "libc.so.6", 0x27305)]
    t = T0
    tr.cpu_time(t, 0)
    for _ in range(50):
        for k in range(6):
            t += PERIOD
            tr.sample(t, [unnamed("libhot.so", 0x1010 + 0x20 * (k % 3), 0x1000)] + outer)
        for k in range(3):
            t += PERIOD
            tr.sample(t, [unnamed("libhot.so", 0x2004 + k, 0x2000)] + outer)
        t += PERIOD
        tr.sample(t, [unnamed("libhot.so", 0x3008)] + outer)
        tr.cpu_time(t, 10 * PERIOD)


def lined(fn, module, addr, file, line):
    """A native frame of a module built with -g: its line table gave file and line."""
    f = native(fn, module, addr)
    f["file"] = file
    f["line"] = line
    return f


def lines(tr):
    """A C program built with -g: per request, crunch() spends 6 samples at hot.c:20, 3 at
    hot.c:21 and 1 in code it inlined from vec.h:5; main() calls it from hot.c:40."""
    outer = [lined("main", "hot", 0x1150, "hot.c", 40),
             native("__libc_start_main", "libc.so.6", 0x27305)]
    t = T0
    tr.cpu_time(t, 0)
    for _ in range(50):
        for where in [(0x1210, "hot.c", 20)] * 6 + [(0x1230, "hot.c", 21)] * 3 + \
                [(0x1250, "vec.h", 5)]:
            t += PERIOD
            tr.sample(t, [lined("crunch", "hot", where[0], where[1], where[2])] + outer)
        tr.cpu_time(t, 10 * PERIOD)


def mapped(tr):
    """The frames of lines() with their modules' mappings, as the recorder writes them: the
    program at 0x55550000 (text from file offset 0x1000, load bias 0x5554f000), libc."""
    tr.mappings = [
        {"id": 1, "path": "/srv/bin/hot", "build_id": "4c1d0a", "start": "0x55550000",
         "limit": "0x55551400", "offset": "0x1000", "base": "0x5554f000"},
        {"id": 2, "path": "/lib/x86_64-linux-gnu/libc.so.6", "build_id": "93ac61",
         "start": "0x7f0000026000", "limit": "0x7f000017b0fc", "offset": "0x26000",
         "base": "0x7f0000000000"}]
    main_ = dict(lined("main", "hot", 0x1150, "hot.c", 40), mapping=1)
    libc = dict(native("__libc_start_main", "libc.so.6", 0x27305), mapping=2)
    t = T0
    tr.cpu_time(t, 0)
    for _ in range(10):
        t += PERIOD
        tr.sample(t, [dict(lined("crunch", "hot", 0x1210, "hot.c", 20), mapping=1), main_, libc])
    tr.cpu_time(t, 10 * PERIOD)


def main():
    outdir = sys.argv[1]
    tr = StackTrace("stacks-cpu")
    cpu_631(tr)
    tr.write(outdir)
    tr = StackTrace("stacks-threads", threads={MAIN: "python3", MAIN + 10: "pt_data_worker_0",
                                               MAIN + 11: "pt_data_worker_1"})
    cpu_631_threads(tr)
    tr.write(outdir)
    tr = StackTrace("stacks-workers")
    main_with_workers(tr)
    tr.write(outdir)
    for pid in (1001, 1002):
        tr = StackTrace("stacks-workers.%d" % pid, pid=pid, threads={pid: "python3"})
        worker(tr)
        tr.write(outdir)
    tr = StackTrace("stacks-model")
    cpu_model(tr)
    tr.write(outdir)
    tr = StackTrace("stacks-gpu")
    gpu_sync(tr)
    tr.write(outdir)
    tr = StackTrace("stacks-stripped", threads={MAIN: "hot"})
    stripped(tr)
    tr.write(outdir)
    tr = StackTrace("stacks-lines", threads={MAIN: "hot"})
    lines(tr)
    tr.write(outdir)
    tr = StackTrace("stacks-mapped", threads={MAIN: "hot"})
    mapped(tr)
    tr.write(outdir)


if __name__ == "__main__":
    main()
