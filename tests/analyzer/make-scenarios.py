#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the hand-made InferScope traces of tests/analyzer/data/scenarios/.

One trace per behaviour the analyzer must name (docs/rules.md, "Scenarios"): the numbers
are chosen so that each scenario sits clearly inside its verdict. Deterministic: run it
again and the files do not change. Usage: make-scenarios.py OUTDIR
"""
import json
import os
import sys

T0 = 1_000_000.0  # us on the trace clock
MAIN, WORKER = 4242, 4243


class Trace:
    def __init__(self, name, cupti="active"):
        self.name = name
        self.events = []
        self.scopes = []
        self.corr = 0
        self.cupti = cupti
        self.cpu = {}  # thread -> (last ts, cumulative cpu us)
        self.chain = []  # exec_chain entries: images before the program (start-up)

    def ev(self, type_, name, ts, dur, **meta):
        meta.setdefault("thread_id", MAIN)
        e = {"id": len(self.events), "type": type_, "name": name,
             "timestamp_start_us": round(ts, 3), "duration_us": round(dur, 3),
             "metadata": meta}
        self.events.append(e)
        return e

    def scope(self, name, ts, dur, depth=0, tid=MAIN, parent=None):
        sid = len(self.scopes) + 1
        e = self.ev("cpu_call", name, ts, dur, thread_id=tid, cpu_id=1, call_depth=depth,
                    scope_id=sid, parent_scope=parent, parent_scope_id=None,
                    allocations_bytes=0, source="api")
        self.scopes.append({"id": sid, "name": name, "parent_id": None, "child_ids": [],
                            "event_index": e["id"], "thread_id": tid})
        return ts + dur

    def api(self, name, ts, dur, blocked=False, **meta):
        self.corr += 1
        self.ev("cuda_api", name, ts, dur, correlation_id=self.corr, stream_id=7,
                return_code=0, blocked=blocked, source="interposer", **meta)
        return self.corr

    def kernel(self, name, ts, dur, corr, occupancy=0.75, stream=7):
        self.ev("gpu_kernel", name, ts, dur, correlation_id=corr, device_id=0,
                stream_id=stream, context_id=1, grid_dim=[128, 1, 1], block_dim=[256, 1, 1],
                shared_memory_bytes=0, registers_per_thread=32, occupancy=occupancy)
        return ts + dur

    def copy(self, kind, ts, dur, corr, nbytes, host="pinned"):
        self.ev(kind, "copy_" + kind[:3], ts, dur, correlation_id=corr, device_id=0,
                stream_id=7, bytes=nbytes, kind=host,
                throughput_gbps=round(nbytes / (dur * 1000.0), 3))
        return ts + dur

    def syscall(self, name, ts, dur, category, nbytes=0, target="file"):
        self.ev("cpu_syscall", name, ts, dur, syscall_number=0, fd=5, target=target,
                bytes=nbytes, return_value=nbytes, category=category)
        return ts + dur

    def cpu_time(self, ts, busy_us, tid=MAIN):
        """A cpu_time sample at ts after busy_us more microseconds on the CPU."""
        total = self.cpu.get(tid, 0.0) + busy_us
        self.cpu[tid] = total
        self.ev("counter", "cpu_time", ts, 0, thread_id=tid, value=round(total, 3), unit="us")

    def write(self, outdir):
        starts = [e["timestamp_start_us"] for e in self.events]
        ends = [e["timestamp_start_us"] + e["duration_us"] for e in self.events]
        # the program's image starts where its first event does; start-up before
        program = [e["timestamp_start_us"] for e in self.events
                   if "exec_segment" not in e["metadata"]]
        doc = {
            "format_version": "1.0",
            "trace_metadata": {
                "timestamp_created": "2025-01-01T00:00:00.000000Z",
                "duration_ms": round((max(ends) - min(starts)) / 1000.0, 3),
                "start_us": min(program), "end_us": max(ends),
                "pid": 1000, "ppid": 1, "root_pid": 1000, "exec_seq": len(self.chain),
                **({"exec_chain": self.chain} if self.chain else {}),
                "command_line": ["python3", "serve.py", "--scenario", self.name],
                "executable": "/usr/bin/python3", "hostname": "testhost",
                "inferscope_version": "0.1.0",
                "clock": {"domain": "CLOCK_MONOTONIC", "unit": "us",
                          "anchor_monotonic_us": T0, "anchor_realtime_us": 1735689600000000,
                          "anchor_realtime": "2025-01-01T00:00:00.000000Z"},
                "end_reason": "exit", "complete": True,
                "configuration": {"INFERSCOPE_OUTPUT": "trace.json"},
                "capture": {"windows": [[min(starts), max(ends)]]},
                "dropped_events": {"total": 0, "by_kind": {}, "by_thread": {}},
                "cupti": {"status": self.cupti, "dropped_records": 0,
                          **({"reason": "another subscriber holds CUPTI (nsys)",
                              "holder": "nsys"} if self.cupti != "active" else {})},
                "gpu_model": "Simulated GPU",
                "aggregates": {"threads": [{"thread_id": MAIN, "name": "python3"}]},
            },
            "system_info": {"cpu_count": 8, "cpu_model": "Test CPU", "numa_nodes": 1,
                            "ram_gb": 64, "gpu_count": 1, "kernel": "6.1.0", "page_size": 4096},
            "events": self.events,
            "relationships": {"scopes": self.scopes},
        }
        with open(os.path.join(outdir, self.name + ".json"), "w") as f:
            json.dump(doc, f, indent=None, separators=(",", ":"))
            f.write("\n")


def gpu_step(tr, t, kernels, kdur, occupancy=0.75, h2d=100.0, d2h=50.0, name="gemm_kernel"):
    """Async H2D, kernels, async D2H, then a blocking stream sync. Returns the end."""
    c = tr.api("cudaMemcpyAsync", t, 10, direction="h2d", host_memory="pinned", bytes=1 << 20)
    gpu = tr.copy("h2d_copy", t + 12, h2d, c, 1 << 20)
    t += 10
    for _ in range(kernels):
        c = tr.api("cudaLaunchKernel", t, 5, kernel=name)
        gpu = tr.kernel(name, max(gpu, t + 7), kdur, c, occupancy)
        t += 5
    c = tr.api("cudaMemcpyAsync", t, 10, direction="d2h", host_memory="pinned", bytes=1 << 19)
    gpu = tr.copy("d2h_copy", max(gpu, t + 12), d2h, c, 1 << 19)
    t += 10
    tr.api("cudaStreamSynchronize", t, gpu - t + 3, blocked=True)
    return gpu + 3


def cpu_bound_tokenize(tr):
    t = T0
    tr.cpu_time(t, 0)
    for _ in range(20):
        start = t
        t = tr.scope("tokenize", t, 8000, depth=1, parent="request")
        tr.cpu_time(t, 7900)
        t = gpu_step(tr, t, 3, 500)
        tr.scope("request", start, t - start)
        tr.cpu_time(t, (t - start - 8000) * 0.1)
        t += 20


def gpu_bound(tr, t=T0):
    for _ in range(20):
        t = tr.scope("prepare", t, 200)
        t = gpu_step(tr, t, 10, 2000, occupancy=0.2) + 10


def shim_then_gpu_bound(tr):
    """gpu-bound behind a wrapper that execs it (a pyenv shim): 1 s of the shim reading
    a pipe, as start-up; the verdict is the program's."""
    t = T0
    for _ in range(10):
        t = tr.syscall("read", t, 100000, "io", 64)
        tr.events[-1]["metadata"]["exec_segment"] = 0
    tr.chain.append({"segment": 0, "pid": 1000,
                     "command_line": ["bash", "/root/.pyenv/libexec/pyenv", "exec", "python3"],
                     "executable": "/usr/bin/bash", "start_us": T0, "end_us": t,
                     "end_reason": "exec",
                     "dropped_events": {"total": 3, "by_kind": {"cpu_syscall": 3},
                                        "by_thread": {str(MAIN): 3}}})
    gpu_bound(tr, t + 50)


def pageable_copies(tr):
    t = T0
    for _ in range(20):
        t = tr.scope("load_batch", t, 300)
        c = tr.api("cudaMemcpy", t, 10005, blocked=True, direction="h2d",
                   host_memory="pageable", bytes=64 << 20)
        tr.copy("h2d_copy", t + 3, 10000, c, 64 << 20, host="pageable")
        t += 10005
        c = tr.api("cudaLaunchKernel", t, 5, kernel="resize_kernel")
        end = tr.kernel("resize_kernel", t + 7, 2000, c)
        t += 5
        c = tr.api("cudaMemcpy", t, end - t + 1505, blocked=True, direction="d2h",
                   host_memory="pageable", bytes=8 << 20)
        tr.copy("d2h_copy", end + 2, 1500, c, 8 << 20, host="pageable")
        t = end + 1510


def launch_bound(tr):
    t = T0
    for _ in range(20):
        gpu = t
        for _ in range(200):
            c = tr.api("cudaLaunchKernel", t, 8, kernel="elementwise_add")
            gpu = tr.kernel("elementwise_add", max(gpu, t + 9), 2, c)
            t += 8
        tr.api("cudaStreamSynchronize", t, gpu - t + 3 if gpu > t else 3, blocked=True)
        t = max(t, gpu) + 5


def sync_heavy(tr):
    t = T0
    for _ in range(20):
        for _ in range(50):
            c = tr.api("cudaLaunchKernel", t, 10, kernel="layer_kernel")
            end = tr.kernel("layer_kernel", t + 12, 150, c)
            t += 10
            tr.api("cudaDeviceSynchronize", t, end - t + 2, blocked=True)
            t = tr.scope("postprocess", end + 2, 100)


def malloc_in_loop(tr):
    t = T0
    for _ in range(20):
        tr.api("cudaMalloc", t, 1500, bytes=256 << 20)
        t = gpu_step(tr, t + 1500, 3, 1000)
        tr.api("cudaFree", t, 800, blocked=True)
        t += 810


def io_wait(tr):
    t = T0
    tr.cpu_time(t, 0)
    for _ in range(20):
        start = t
        t = tr.syscall("read", t, 20000, "io", nbytes=4 << 20)
        tr.scope("load_image", start, 20000)
        tr.cpu_time(t, 400)
        t = tr.scope("decode", t, 2000)
        tr.cpu_time(t, 1950)
        t = gpu_step(tr, t, 3, 1000) + 10
        tr.cpu_time(t, 60)


def input_wait(tr):
    """A server whose requests come on a pipe every 3 ms: it waits ~2.5 ms in each read,
    decodes for 0.3 ms and runs a GPU step. The writer paces it: nothing here is faster
    when its own code is."""
    t = T0
    tr.cpu_time(t, 0)
    arrival = T0
    for _ in range(20):
        arrival += 3000
        t = tr.syscall("read", t, arrival - t, "io", nbytes=4096, target="pipe")
        tr.cpu_time(t, 5)
        t = tr.scope("decode", t, 300)
        tr.cpu_time(t, 300)
        t = gpu_step(tr, t, 1, 150) + 10
        tr.cpu_time(t, 40)


def balanced(tr):
    t = T0
    for _ in range(20):
        t = tr.scope("preprocess", t, 4000)
        t = gpu_step(tr, t, 1, 4000) + 10


def pipelined(tr):
    """Double-buffered: a worker tokenises batch i+1 while the GPU runs batch i."""
    t = T0
    for _ in range(40):
        tr.scope("tokenize", t, 2000, tid=WORKER)
        gpu = t
        for k in range(3):
            c = tr.api("cudaLaunchKernel", t + 5 * k, 5, kernel="encoder_layer")
            gpu = tr.kernel("encoder_layer", max(gpu, t + 5 * k + 7), 630, c)
        tr.api("cudaStreamSynchronize", t + 15, gpu - t - 15 + 2, blocked=True)
        t += 2010


def cupti_refused(tr):
    t = T0
    for _ in range(20):
        t = tr.scope("step", t, 1000)
        for _ in range(5):
            tr.api("cudaLaunchKernel", t, 6, kernel="k")
            t += 6
        tr.api("cudaStreamSynchronize", t, 3000, blocked=True)
        t += 3010


SCENARIOS = {
    "cpu-bound-tokenize": (cpu_bound_tokenize, "active"),
    "gpu-bound": (gpu_bound, "active"),
    "pageable-copies": (pageable_copies, "active"),
    "launch-bound": (launch_bound, "active"),
    "sync-heavy": (sync_heavy, "active"),
    "malloc-in-loop": (malloc_in_loop, "active"),
    "io-wait": (io_wait, "active"),
    "input-wait": (input_wait, "active"),
    "balanced": (balanced, "active"),
    "pipelined": (pipelined, "active"),
    "cupti-refused": (cupti_refused, "refused"),
    "shim-then-gpu-bound": (shim_then_gpu_bound, "active"),
}


def main():
    outdir = sys.argv[1]
    for name, (fn, cupti) in SCENARIOS.items():
        tr = Trace(name, cupti)
        fn(tr)
        tr.write(outdir)


if __name__ == "__main__":
    main()
