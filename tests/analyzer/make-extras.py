#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the small Kineto traces of tests/analyzer/test-extras.c into data/extras/.

Each trace reproduces one pattern of issue 11 with round numbers, so the tests can
assert exact values: CUDA-graph launches, a stream -1 sync record, GPU work past a
trimmed window, what HTA reads beside the events, a non-CUDA accelerator's device
events, two ranks (with and without a clock offset) and profiler steps with a start-up.
Run it from anywhere; the output is deterministic.
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "extras")
PID, TID = 4242, 4242


def x(cat, name, ts, dur, pid=PID, tid=TID, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts,
            "dur": dur, "args": args}


def kernel(name, ts, dur, corr, stream=7, device=0, **more):
    return x("kernel", name, ts, dur, pid=device, tid=stream, correlation=corr,
             stream=stream, device=device, **more)


def call(name, ts, dur, corr):
    return x("cuda_runtime", name, ts, dur, correlation=corr)


def write(name, events, **top):
    doc = {"schemaVersion": 1}
    doc.update(top)
    doc["traceEvents"] = events
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(doc, f, indent=None, separators=(",", ":"))
        f.write("\n")


def graph_launch():
    """3 cudaGraphLaunch calls of 60 us, 10 nodes each; 2 plain launches of 5 us; a
    Context Sync on stream -1 long after the GPU work."""
    ev, corr = [], 100
    for g in range(3):
        t0 = 1000 + g * 1000
        ev.append(call("cudaGraphLaunch", t0, 60, corr))
        for n in range(10):
            ev.append(kernel("graph_node_%d" % n, t0 + 80 + n * 20, 15, corr))
        corr += 1
    for k in range(2):
        t0 = 5000 + k * 100
        ev.append(call("cudaLaunchKernel", t0, 5, corr))
        ev.append(kernel("plain", t0 + 10, 40, corr))
        corr += 1
    ev.append(x("cuda_sync", "Context Sync", 9000, 1000, pid=0, tid=-1, stream=-1,
                device=0, cuda_sync_kind="Context Sync"))
    write("graph-launch.json", ev)


def window_tail():
    """ProfilerStep#1 from 1000 to 2000 us. A kernel launched before the step runs
    inside it (1100-1300); a kernel launched at 1900 runs 1950-2500, past the step."""
    ev = [
        x("user_annotation", "ProfilerStep#1", 1000, 1000),
        call("cudaLaunchKernel", 900, 10, 1),
        kernel("before", 1100, 200, 1),
        call("cudaLaunchKernel", 1900, 10, 2),
        kernel("tail", 1950, 550, 2),
        x("user_annotation", "ProfilerStep#2", 2600, 100),
    ]
    write("window-tail.json", ev)


def hta_metadata():
    """What HTA reads beside the events: distributedInfo, deviceProperties, a GPU-side
    annotation and a kernel's geometry."""
    dev = {"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85051572224,
           "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024,
           "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
           "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
           "sharedMemPerMultiprocessor": 167936, "numSms": 108,
           "sharedMemPerBlockOptin": 166912}
    ev = [
        x("user_annotation", "forward", 100, 500),
        call("cudaLaunchKernel", 120, 10, 7),
        kernel("gemm", 140, 300, 7, grid=[864, 1, 1], block=[256, 1, 1],
               **{"registers per thread": 47, "shared memory": 4096,
                  "est. achieved occupancy %": 63}),
        x("gpu_user_annotation", "forward", 140, 300, pid=0, tid=7, device=0, stream=7,
          correlation=7),
    ]
    write("hta-metadata.json", ev,
          distributedInfo={"backend": "nccl", "rank": 1, "world_size": 2},
          deviceProperties=[dev])


def accelerator():
    """A non-CUDA accelerator: host ops, its runtime calls and its device work in
    categories the reader does not model (mtia_runtime, mtia_ccp_events)."""
    ev = []
    for i in range(10):
        t0 = 1000 + i * 1000
        ev.append(x("cpu_op", "aten::linear", t0, 100))
        ev.append(x("mtia_runtime", "mtiaLaunchKernel", t0 + 10, 20))
        ev.append(x("mtia_ccp_events", "linear_kernel", t0 + 50, 900, pid=0, tid=1,
                    stream=1, device=0))
    write("accelerator.json", ev)


def rank(r, offset_us, slow_cpu_us, name):
    """One data-parallel rank: 5 steps, each host preprocessing then 3 kernels, an
    all-reduce (NCCL) overlapping the last compute kernel; rank-specific host time."""
    ev, corr, t = [], 1, 1000 + offset_us
    for s in range(5):
        step = 200 + slow_cpu_us + 1200
        ev.append(x("user_annotation", "ProfilerStep#%d" % s, t, step))
        ev.append(x("cpu_op", "preprocess", t, 200 + slow_cpu_us))
        g = t + 200 + slow_cpu_us
        for k in range(3):
            ev.append(call("cudaLaunchKernel", g + k * 10, 5, corr))
            ev.append(kernel("compute_%d" % k, g + 20 + k * 300, 300, corr))
            corr += 1
        ev.append(call("cudaLaunchKernel", g + 40, 5, corr))
        ev.append(kernel("ncclKernel_AllReduce_RING_LL_Sum_float", g + 700, 400, corr,
                         stream=20))
        corr += 1
        t += step
    write(name, ev, distributedInfo={"backend": "nccl", "rank": r, "world_size": 2})


def steps():
    """Start-up (a 50 ms first CUDA call: context creation; module loading; first
    allocations), one slow warm-up step, then 8 steady steps of 2 ms."""
    ev = [
        x("cuda_runtime", "cudaFree", 1000, 50000, correlation=1),
        x("cuda_driver", "cuModuleLoadData", 51000, 4000, correlation=2),
        x("cuda_runtime", "cudaMalloc", 55500, 300, correlation=3),
        x("cuda_runtime", "cudaMalloc", 56000, 300, correlation=4),
    ]
    corr, t = 10, 60000
    for s in range(9):
        dur = 6000 if s == 0 else 2000
        ev.append(x("user_annotation", "ProfilerStep#%d" % s, t, dur))
        ev.append(x("cpu_op", "preprocess", t, 500))
        ev.append(call("cudaLaunchKernel", t + 500, 10, corr))
        ev.append(kernel("step_kernel", t + 520, dur - 700, corr))
        corr += 1
        t += dur
    write("steps.json", ev)


def startup_allocations():
    """Device allocations long after the first tenth of the window but all before the
    first profiler step: the allocation rule fires, on start-up evidence."""
    ev, corr = [], 1
    for i in range(30):
        ev.append(x("cuda_runtime", "cudaMalloc", 11000 + i * 1000, 500, correlation=corr))
        corr += 1
    t = 50000
    for s in range(10):
        ev.append(x("user_annotation", "ProfilerStep#%d" % s, t, 5000))
        ev.append(call("cudaLaunchKernel", t + 100, 10, corr))
        ev.append(kernel("step_kernel", t + 200, 4500, corr))
        corr += 1
        t += 5000
    write("startup-alloc.json", ev)


def main():
    os.makedirs(OUT, exist_ok=True)
    graph_launch()
    window_tail()
    hta_metadata()
    accelerator()
    rank(0, 0, 0, "rank0.json")
    rank(1, 0, 300, "rank1.json")
    rank(0, 0, 0, "same0.json")
    rank(1, 0, 0, "same1.json")
    rank(1, 7_000_000, 0, "same1-offset.json")
    steps()
    startup_allocations()


if __name__ == "__main__":
    main()
