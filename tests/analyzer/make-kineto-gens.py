#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes one run as every PyTorch-profiler generation writes it, into data/kineto-gens/.

tests/analyzer/test-kineto-gens.c reads each file and asserts the same model: the same
kernels, copies, memsets, runtime calls and operators, the same correlation pairs and
flows, the same threads and streams, the same GPU busy time. The field names, categories,
id spellings and layouts of each generation follow its writer (read through history):

  legacy-1.7   torch.autograd.profiler (PyTorch <= 1.7): a JSON array, pids "CPU functions"
               and "CUDA functions", no categories; per GPU interval a cpu_to_cuda flow
               (s on the operator, f before the interval, on the device's track).
  kineto-1.8   libkineto of PyTorch 1.8 (early 2021): categories Operator, Runtime, Kernel,
               Memcpy, Memset, User; host tids and the GPU's as strings ("4242",
               "stream 7"); "async" launch flows (s with a numeric tid); "external id"
               beside "External id"; spans of pid "Traces"; no deviceProperties.
  kineto-1.9   mid 2021: cpu_op and user_annotation beside Runtime, Kernel, Memcpy, Memset;
               gpu_user_Annotation; numeric tids; async_gpu launch flows and
               forward_backward autograd flows, both ends with "bp"; deviceProperties.
  kineto-1.13  PyTorch 1.10 to 1.13: lower-case categories, ac2g and fwdbwd flows, spans
               of pid "Spans" ("PyTorch Profiler (0)"), python_function events.
  kineto-2.1   2023: as 1.13 plus distributedInfo, traceName.
  kineto-2.5   2024 on: times relative to baseTimeNanoseconds with three decimals,
               displayTimeUnit, sort-index metadata, no distributedInfo.

The run: two ProfilerSteps on a main thread (4242) with an autograd thread (4251); per
step an H2D copy, a memset, a forward GEMM whose backward runs on the autograd thread
(a fwdbwd link), a ReLU, a synchronous D2H copy and a stream synchronize, all on stream 7
of device 0. Times are whole microseconds, which every generation writes exactly.
Run it from anywhere; the output is deterministic.
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "kineto-gens")
PID, MAIN, AUTOGRAD, DEV, STREAM = 4242, 4242, 4251, 0, 7
BASE = 5_000_000  # us


class Frac(float):
    """A time written with three decimals ("{}.{:03}", Kineto since 2024)."""


def run():
    """The run as plain records: host slices, calls and their GPU work, autograd links."""
    host, calls, links = [], [], []
    corr, ext = 100, 1
    for k in range(2):
        t0 = BASE + k * 2000
        host.append(("user_annotation", "ProfilerStep#%d" % (k + 1), MAIN, t0, 1800, ext))
        ext += 1

        def op(name, ts, dur, tid=MAIN):
            nonlocal ext
            host.append(("cpu_op", name, tid, t0 + ts, dur, ext))
            ext += 1
            return len(host) - 1

        def call(name, ts, dur, gpu=None, tid=MAIN):
            nonlocal corr
            calls.append((name, tid, t0 + ts, dur, corr, ext - 1, gpu))
            corr += 1

        op("aten::to", 10, 100)
        call("cudaMemcpyAsync", 20, 30, ("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)",
                                         t0 + 60, 40, 4096))
        op("aten::zero_", 120, 50)
        call("cudaMemsetAsync", 130, 10, ("gpu_memset", "Memset (Device)", t0 + 150, 5, 4096))
        fwd = op("aten::linear", 200, 200)
        call("cudaLaunchKernel", 220, 15, ("kernel", "gemm_fwd", t0 + 240, 300, 0))
        op("aten::relu", 420, 60)
        call("cudaLaunchKernel", 430, 10, ("kernel", "relu_kernel", t0 + 560, 50, 0))
        bwd = op("autograd::engine::evaluate_function: AddmmBackward0", 700, 150, AUTOGRAD)
        call("cudaLaunchKernel", 720, 12, ("kernel", "gemm_bwd", t0 + 760, 400, 0), AUTOGRAD)
        links.append((fwd, bwd, k + 1))
        op("aten::item", 900, 400)
        call("cudaMemcpyAsync", 910, 380, ("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)",
                                           t0 + 1170, 100, 4096))
        op("aten::synchronize", 1400, 120)
        call("cudaStreamSynchronize", 1410, 100)
    return host, calls, links


def gpu_args(gen, c):
    name, tid, ts, dur, cr, ext, (cat, gname, gts, gdur, nbytes) = c
    args = {"device": DEV, "context": 1, "stream": STREAM, "correlation": cr}
    if gen in ("kineto-1.8", "kineto-1.9"):
        args["external id"] = ext
    else:
        args["External id"] = ext
    if cat == "kernel":
        args.update({"queued": 0, "registers per thread": 32, "shared memory": 0,
                     "blocks per SM": 0.5, "grid": [54, 1, 1], "block": [256, 1, 1]})
        args["occupancy" if gen == "kineto-1.8" else "est. achieved occupancy %"] = (
            1 if gen == "kineto-1.8" else 100)
    else:
        args.update({"bytes": nbytes, "memory bandwidth (GB/s)": 1.0})
    return args


CATS = {  # category of each kind, per generation
    "kineto-1.8": {"cpu_op": "Operator", "user_annotation": "Operator", "runtime": "Runtime",
                   "kernel": "Kernel", "gpu_memcpy": "Memcpy", "gpu_memset": "Memset",
                   "gpu_annot": "User", "launch": "async"},
    "kineto-1.9": {"cpu_op": "cpu_op", "user_annotation": "user_annotation",
                   "runtime": "Runtime", "kernel": "Kernel", "gpu_memcpy": "Memcpy",
                   "gpu_memset": "Memset", "gpu_annot": "gpu_user_Annotation",
                   "launch": "async_gpu", "fwdbwd": "forward_backward"},
}
for g in ("kineto-1.13", "kineto-2.1", "kineto-2.5"):
    CATS[g] = {"cpu_op": "cpu_op", "user_annotation": "user_annotation",
               "runtime": "cuda_runtime", "kernel": "kernel", "gpu_memcpy": "gpu_memcpy",
               "gpu_memset": "gpu_memset", "gpu_annot": "gpu_user_annotation",
               "launch": "ac2g", "fwdbwd": "fwdbwd"}


def t(gen, v):
    return Frac(v - BASE + 1000) if gen == "kineto-2.5" else v


def kineto(gen):
    host, calls, links = run()
    cats = CATS[gen]
    old = gen == "kineto-1.8"
    ev = []

    def tid(v):
        return str(v) if old else v

    def slice_(cat, name, pid, tid_, ts, dur, args):
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid_,
                   "ts": t(gen, ts), "dur": Frac(dur) if gen == "kineto-2.5" else dur,
                   "args": args})

    def flow(ph, kind, name, ident, pid, tid_, ts):
        f = {"ph": ph, "id": ident, "pid": pid, "tid": tid_, "ts": t(gen, ts),
             "cat": cats[kind], "name": name}
        if ph == "f" or gen == "kineto-1.9":
            f["bp"] = "e"
        ev.append(f)

    for th, label in ((MAIN, "python"), (AUTOGRAD, "pt_autograd_0")):
        ev.append({"name": "thread_name", "ph": "M", "ts": t(gen, BASE), "pid": PID,
                   "tid": tid(th), "args": {"name": "thread %d (%s)" % (th, label)}})
        if gen == "kineto-2.5":
            ev.append({"name": "thread_sort_index", "ph": "M", "ts": t(gen, BASE),
                       "pid": PID, "tid": th, "args": {"sort_index": th}})
    for i, (kind, name, th, ts, dur, ext) in enumerate(host):
        args = {"External id": ext}
        if old or gen == "kineto-1.9":
            args.update({"Trace name": "PyTorch Profiler", "Trace iteration": 0})
        slice_(cats[kind], name, PID, tid(th), ts, dur, args)
        for src, dst, fid in links:
            if "fwdbwd" in cats and i in (src, dst):
                flow("s" if i == src else "f", "fwdbwd",
                     "fwd_bwd" if gen == "kineto-1.9" else "fwdbwd", fid, PID, th, ts)
        if gen != "kineto-1.8" and gen != "kineto-1.9" and kind == "cpu_op":
            ev.append({"ph": "X", "cat": "python_function", "name": "model.py(12): forward",
                       "pid": PID, "tid": th, "ts": t(gen, ts), "dur": dur,
                       "args": {"Python id": i, "Python thread": 0}})
    for c in calls:
        name, th, ts, dur, cr, ext, gpu = c
        args = {"cbid": 211, "correlation": cr}
        args["external id" if old or gen == "kineto-1.9" else "External id"] = ext
        slice_(cats["runtime"], name, PID, tid(th), ts, dur, args)
        if gpu is not None:
            flow("s", "launch", "launch" if old else name if gen == "kineto-1.9" else "ac2g",
                 cr, PID, th, ts)
    for c in calls:
        if c[6] is None:
            continue
        cat, gname, gts, gdur, _ = c[6]
        slice_(cats[cat], gname, DEV, "stream %d" % STREAM if old else STREAM, gts, gdur,
               gpu_args(gen, c))
        flow("f", "launch", "launch" if old else c[0] if gen == "kineto-1.9" else "ac2g",
             c[4], DEV, "stream %d" % STREAM if old else STREAM, gts)
    for k in range(2):
        first = BASE + k * 2000 + 60
        annot_tid = "stream %d user" % STREAM if old else STREAM
        slice_(cats["gpu_annot"], "ProfilerStep#%d" % (k + 1), DEV, annot_tid, first,
               1270 - 60, {"External id": 1 + k * 13})
    span_pid = "Traces" if old else "Spans"
    slice_("Trace", "PyTorch Profiler (0)", span_pid, "PyTorch Profiler", BASE, 4000,
           {"Op count": 0})
    ev.append({"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g",
               "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": t(gen, BASE)})
    ev.append({"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "",
               "ts": t(gen, BASE + 4000)})
    doc = {"schemaVersion": 1}
    if gen != "kineto-1.8":
        doc["deviceProperties"] = [{
            "id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42505273344,
            "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024,
            "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
            "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
            "sharedMemPerMultiprocessor": 167936, "numSms": 108,
            "sharedMemPerBlockOptin": 166912}]
    if gen == "kineto-2.1":
        doc["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": 1}
    if gen == "kineto-2.5":
        doc["displayTimeUnit"] = "ms"
        doc["baseTimeNanoseconds"] = (BASE - 1000) * 1000
    doc["traceEvents"] = ev
    if gen in ("kineto-2.1", "kineto-2.5"):
        doc["traceName"] = "/tmp/trace.json"
    return doc


def legacy():
    """torch.autograd.profiler's export_chrome_trace before 1.8: every function and, per
    GPU interval of an operator, an s on the operator, an f and the interval on the
    device's track (named by the operator)."""
    host, calls, _ = run()
    ev, next_id = [], 0
    for i, (kind, name, th, ts, dur, ext) in enumerate(host):
        ev.append({"name": name, "ph": "X", "ts": ts, "dur": dur, "tid": th,
                   "pid": "CPU functions", "args": {}})
        for c in calls:
            if c[5] != ext or c[6] is None:
                continue
            _, _, gts, gdur, _ = c[6]
            ev.append({"name": name, "ph": "s", "ts": ts, "tid": th, "pid": "CPU functions",
                       "id": next_id, "cat": "cpu_to_cuda", "args": {}})
            ev.append({"name": name, "ph": "f", "ts": gts, "tid": DEV,
                       "pid": "CUDA functions", "id": next_id, "cat": "cpu_to_cuda",
                       "args": {}})
            ev.append({"name": name, "ph": "X", "ts": gts, "dur": gdur, "tid": DEV,
                       "pid": "CUDA functions", "args": {}})
            next_id += 1
    return ev


def write(name, doc):
    def fix(o):
        if isinstance(o, Frac):
            return "@%d.%03d@" % (int(o), round((o - int(o)) * 1000))
        if isinstance(o, dict):
            return {k: fix(v) for k, v in o.items()}
        if isinstance(o, list):
            return [fix(v) for v in o]
        return o
    text = json.dumps(fix(doc), separators=(",", ":"))
    text = text.replace('"@', "").replace('@"', "")
    with open(os.path.join(OUT, name), "w") as f:
        f.write(text + "\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    write("legacy-1.7.json", legacy())
    for gen in ("kineto-1.8", "kineto-1.9", "kineto-1.13", "kineto-2.1", "kineto-2.5"):
        write(gen + ".json", kineto(gen))


if __name__ == "__main__":
    main()
