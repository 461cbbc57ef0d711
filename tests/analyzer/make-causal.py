#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the traces of tests/analyzer/data/causal/: the patterns of issue 11 that a
share-based verdict got wrong, for the dependency graph and its critical path.

- queue-full.json (Kineto): GPU-bound training step, the launch queue full, the host
  blocked inside cudaLaunchKernel for most of the window (Kineto records no waits).
- streams-threads.json (Kineto): kernels launched early on four streams that the GPU
  runs one after the other (idle summed over streams is several windows), and the same
  preprocessing scope on two threads at once (scope time summed is over the window).
- comm-stall.json (InferScope): the host waits in a device sync and in synchronous D2H
  copies on a GPU that runs an NCCL all-reduce, then copies.
Deterministic. Usage: make-causal.py OUTDIR
"""
import json
import os
import sys


def kineto(events):
    return {"schemaVersion": 1, "deviceProperties": [], "traceEvents": events}


def x(cat, name, ts, dur, pid, tid, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts,
            "dur": dur, "args": args}


def queue_full():
    ev, corr = [], 0
    depth, kern, launch = 100, 1000, 5  # queue slots, kernel us, launch call us
    gpu, t, ends = 1000, 1000, []
    for step in range(4):
        s0 = t
        for k in range(300):
            corr += 1
            # A full queue: the call returns when the operation `depth` places ahead ends.
            start = t
            if len(ends) >= depth:
                t = max(t + launch, ends[-depth])
            else:
                t += launch
            ev.append(x("cuda_runtime", "cudaLaunchKernel", start, t - start, 1, 1,
                        correlation=corr))
            gpu = max(gpu, t + 3)
            ev.append(x("kernel", "conv2d_fwd", gpu, kern, 0, 7, correlation=corr,
                        stream=7, device=0))
            gpu += kern
            ends.append(gpu)
            t += 2
        ev.append(x("user_annotation", "ProfilerStep#%d" % step, s0, t - s0, 1, 1))
        ev.append(x("cpu_op", "aten::conv2d", s0, t - s0, 1, 1))
    return kineto(ev)


def streams_threads():
    ev, corr = [], 0
    for k in range(40):
        corr += 1
        s = 7 + k % 4
        ev.append(x("cuda_runtime", "cudaLaunchKernel", 1000 + 5 * k, 4, 1, 1,
                    correlation=corr))
        # The GPU runs them one at a time across streams: each stream idles 3 ms
        # between its operations although they were launched long before.
        ev.append(x("kernel", "gemm_%d" % (k % 4), 2000 + 1000 * k, 1000, 0, s,
                    correlation=corr, stream=s, device=0))
    for tid in (2, 3):
        ev.append(x("user_annotation", "preprocess", 1000, 30000, 1, tid))
    return kineto(ev)


def comm_stall():
    events, corr, t = [], 0, 1_000_000.0
    MAIN = 4242

    def ev(type_, name, ts, dur, **meta):
        meta.setdefault("thread_id", MAIN)
        events.append({"id": len(events), "type": type_, "name": name,
                       "timestamp_start_us": round(ts, 3), "duration_us": round(dur, 3),
                       "metadata": meta})

    for _ in range(20):
        ev("cpu_call", "step", t, 5200, call_depth=0, source="api")
        corr += 1
        ev("cuda_api", "cudaLaunchKernel", t + 10, 5, correlation_id=corr, stream_id=7,
           return_code=0, blocked=False, source="interposer")
        ev("gpu_kernel", "ncclKernel_AllReduce_RING_LL_Sum_float", t + 20, 3000,
           correlation_id=corr, device_id=0, stream_id=7, occupancy=0.5)
        ev("cuda_api", "cudaDeviceSynchronize", t + 16, 3010, correlation_id=0,
           stream_id=-1, return_code=0, blocked=True, source="interposer")
        corr += 1
        ev("cuda_api", "cudaMemcpy", t + 3030, 1105, correlation_id=corr, stream_id=7,
           return_code=0, blocked=True, source="interposer")
        ev("d2h_copy", "copy_d2h", t + 3035, 1095, correlation_id=corr, device_id=0,
           stream_id=7, bytes=64 << 20, kind="pageable", throughput_gbps=61.3)
        t += 5210
    return {"format_version": "1.0",
            "trace_metadata": {"pid": 1000, "cupti_status": "active"},
            "events": events}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, doc in (("queue-full", queue_full()), ("streams-threads", streams_threads()),
                      ("comm-stall", comm_stall())):
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(doc, f, indent=None, separators=(",", ":"))
            f.write("\n")


if __name__ == "__main__":
    main()
