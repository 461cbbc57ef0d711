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
- events-kineto*.json (Kineto): two streams ordered by a CUDA event, the Kineto analogue
  of tests/workloads/c/event-streams.c. Each step stream 7 runs `producer` (2 ms) and
  records an event, stream 20 waits for it and runs `consumer` (1 ms); `side` (0.5 ms)
  runs on stream 7 after the record and is not waited for; the host then waits for
  stream 20. Every launch is made at once, so only the event holds the consumer back.
  events-kineto.json: newer PyTorch (cudaEventRecord calls, cuda_event records,
  wait_on_cuda_event_record_corr_id), side launched between the record and the wait;
  events-kineto-sync.json: the same, the host waiting with cudaEventRecord +
  cudaEventSynchronize ("Event Sync"); events-kineto-old.json: older PyTorch
  (wait_on_stream only, no record calls), side launched after the wait;
  events-kineto-old-late.json: older PyTorch with side launched before the wait, where
  the last launch before the wait is not what the record marked.
Issue 21, the mechanisms real multi-threaded runs need (each fails on a graph that has
none of them):
- poller.json (Kineto): 50 steps on the main thread; a second thread makes one 3 us
  cudaEventQuery every 100 ms (the NCCL watchdog), the last 11 ms after the program's
  work ended.
- untraced.json (Kineto): 20 steps of 2 ms, each followed by 18 ms in which the thread
  records nothing; untraced-sampled.json (InferScope): the same, with CPU samples that
  show the thread running through the gaps.
- handoff-kineto.json (Kineto): each step's `## backward ##` scope on the main thread
  waits while the autograd thread runs four 1.9 ms MmBackward0 operators.
- handoff-fwdbwd.json (Kineto): each step's `## backward ##` scope on the main thread
  waits while the autograd thread runs the backward of the step's `aten::linear` (a
  `fwdbwd` flow links the two): MmBackward0 launches a 6 ms kernel and waits for it in a
  synchronous D2H cudaMemcpyAsync, so the autograd thread works 0.1 ms of the 6.2 ms.
- handoff-wait.json (InferScope): the main thread hands a batch to a worker and waits in
  pthread_cond_wait while the worker decodes it (5 ms).
- exit-teardown.json (InferScope): 20 steps of 2 ms on the main thread (tid == pid);
  a helper thread waits in sem_wait from before the first step until 3 ms after the
  last, then makes a 0.5 ms ioctl (the CUDA runtime's thread, woken by its atexit
  teardown); the main thread's exit handlers are sampled after its last step.
- ticker.json (InferScope): 20 steps of 2 ms on the main thread; a driver thread twice
  waits 15 ms in pthread_cond_timedwait, which ends by its timeout (ETIMEDOUT), then
  makes a 50 us ioctl, the last 1 ms after the last step: too few ticks for a period.
- sync-copy-kineto.json (Kineto): each step an 8 ms kernel, then a cudaMemcpyAsync to
  pageable memory that returns with its copy (a synchronous D2H copy).
- queue-saturated.json.gz (Kineto): 3300 launches onto a launch queue that blocks at
  1024 operations in flight for the first 1100 launches and at 700 after (the depth at
  which a launch blocks varies with what the queue holds).
- comm-kineto.json (Kineto): each step a 3 ms kernel, then 4 ms in gloo:all_reduce on
  the host.
- stream-wait-kineto.json (Kineto, PyTorch 1.13: no cuda_sync records): data-parallel
  steps; the host launches everything at once: a 2 ms backward kernel on stream 7, an
  NCCL all-reduce (3 ms) on stream 20 that waits for it through an event, an optimizer
  kernel (0.5 ms) on stream 7 that waits for the all-reduce, then a stream synchronize.
  Only the order of the two streams' operations shows the waits.
- scope-gpu-kineto.json (Kineto): 10 steps of 1260 us. Each opens with a scope
  `slow_norm` (220 us) that launches four 50 us `norm_row` kernels 10 us apart and waits
  for them in a cudaStreamSynchronize (the GPU, not the host, is what the scope costs),
  then launches a 1 ms `gemm` and waits for it. tests/analyzer/test-causal.c computes the
  what-ifs on it by hand.
- dataloader-kineto.json (Kineto): 10 steps of 3530 us; each fetches its batch in a
  scope `next_batch` (3 ms of host time), then launches a 500 us kernel and waits for
  it: the fetch is most of the step, the GPU's part small (the PyTorch DataLoader pair
  on a GPU).
Deterministic. Usage: make-causal.py OUTDIR
"""
import gzip
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


def events_kineto(new=True, event_sync=False, side_first=True, steps=20):
    """The event-streams steps as the PyTorch profiler records them (times in us)."""
    ev, corr, t = [], 100, 1000
    a_free = b_free = 0
    A, B = 7, 20

    def api(name, ts, dur):
        nonlocal corr
        corr += 1
        ev.append(x("cuda_runtime", name, ts, dur, 1, 1, cbid=0, correlation=corr))
        return corr

    def kernel(name, c, ts, dur, stream):
        ev.append(x("kernel", name, ts, dur, 0, stream, correlation=c, stream=stream,
                    device=0, context=1))

    def sync(kind, c, ts, dur, stream, on=None, record=None, event_id=1):
        args = {"cuda_sync_kind": kind, "stream": stream, "correlation": c, "device": 0,
                "context": 1}
        if on is not None:
            args.update(wait_on_stream=on, wait_on_cuda_event_id=event_id)
            if new:
                args["wait_on_cuda_event_record_corr_id"] = record
        ev.append({"ph": "X", "cat": "cuda_sync", "name": kind, "pid": 0,
                   "tid": stream if stream >= 0 else A, "ts": ts, "dur": dur, "args": args})

    for step in range(steps):
        t0 = t
        cp = api("cudaLaunchKernel", t, 5)
        p0 = max(t + 8, a_free)
        kernel("producer", cp, p0, 2000, A)
        a_free = p0 + 2000
        t += 6
        rec = None
        if new:
            rec = api("cudaEventRecord", t, 2)
            ev.append(x("cuda_event", "cudaEvent", t + 1, 0, 0, A, event_id=1, stream=A,
                        correlation=rec, device=0, context=1))
            t += 3

        def launch_side():
            nonlocal t, a_free
            cs = api("cudaLaunchKernel", t, 5)
            s0 = max(t + 8, a_free + 1)
            kernel("side", cs, s0, 500, A)
            a_free = s0 + 500
            t += 6

        if side_first:
            launch_side()
        cw = api("cudaStreamWaitEvent", t, 2)
        sync("Stream Wait Event", cw, t + 1, 2, B, on=A, record=rec)
        t += 3
        if not side_first:
            launch_side()
        cc = api("cudaLaunchKernel", t, 5)
        c0 = max(t + 8, b_free, p0 + 2000 + 2)
        kernel("consumer", cc, c0, 1000, B)
        b_free = c0 + 1000
        t += 6
        if event_sync:
            done = api("cudaEventRecord", t, 2)
            ev.append(x("cuda_event", "cudaEvent", t + 1, 0, 0, B, event_id=2, stream=B,
                        correlation=done, device=0, context=1))
            t += 3
            cs = api("cudaEventSynchronize", t, b_free + 5 - t)
            sync("Event Sync", cs, t + 1, b_free - t - 1, -1, on=B, record=done, event_id=2)
        else:
            cs = api("cudaStreamSynchronize", t, b_free + 5 - t)
            sync("Stream Sync", cs, t + 1, b_free - t - 1, B)
        t = b_free + 5
        ev.append(x("user_annotation", "ProfilerStep#%d" % step, t0, t - t0, 1, 1))
        t += 20
    return kineto(ev)


def launch_kernel(ev, corr, ts, name, start, dur, stream=7, tid=1):
    """A 5 us cudaLaunchKernel at ts and its kernel; returns the kernel's end."""
    ev.append(x("cuda_runtime", "cudaLaunchKernel", ts, 5, 1, tid, correlation=corr))
    ev.append(x("kernel", name, start, dur, 0, stream, correlation=corr, stream=stream,
                device=0))
    return start + dur


def poller():
    ev, t, corr = [], 1000, 0
    for step in range(50):
        corr += 1
        ev.append(x("user_annotation", "ProfilerStep#%d" % step, t, 8010, 1, 1))
        ev.append(x("cpu_op", "aten::mm", t, 2000, 1, 1))
        end = launch_kernel(ev, corr, t + 1990, "gemm", t + 2000, 6000)
        ev.append(x("cuda_runtime", "cudaStreamSynchronize", t + 2000, end + 5 - t - 2000,
                    1, 1, correlation=0))
        t += 8020
    last = t - 20 - 5 + 11000
    for k in range(5, -1, -1):
        ev.append(x("cuda_runtime", "cudaEventQuery", last - 100000 * k, 3, 1, 2,
                    correlation=0))
    return kineto(ev)


def untraced():
    ev, t, corr = [], 1000, 0
    for step in range(20):
        corr += 1
        ev.append(x("user_annotation", "ProfilerStep#%d" % step, t, 2000, 1, 1))
        ev.append(x("cpu_op", "aten::mm", t + 10, 1000, 1, 1))
        end = launch_kernel(ev, corr, t + 1000, "gemm", t + 1010, 900)
        ev.append(x("cuda_runtime", "cudaStreamSynchronize", t + 1010, end + 5 - t - 1010,
                    1, 1, correlation=0))
        t += 2000 + 18000
    return kineto(ev)


class Inferscope:
    """The few InferScope event kinds these traces need (times in us)."""

    def __init__(self):
        self.events = []

    def ev(self, type_, name, ts, dur, tid, **meta):
        meta["thread_id"] = tid
        self.events.append({"id": len(self.events), "type": type_, "name": name,
                            "timestamp_start_us": ts, "duration_us": dur, "metadata": meta})

    def scope(self, name, ts, dur, tid):
        self.ev("cpu_call", name, ts, dur, tid, call_depth=0, source="api")

    def sample(self, ts, weight, tid):
        self.events.append({"id": len(self.events), "type": "cpu_sample",
                            "name": "cpu_sample", "timestamp_us": ts, "thread_id": tid,
                            "weight_us": weight, "stack_id": 0,
                            "metadata": {"thread_id": tid}})

    def doc(self):
        return {"format_version": "1.0",
                "trace_metadata": {"pid": 1000, "cupti_status": "not_used"},
                "events": self.events}


def untraced_sampled():
    tr, t = Inferscope(), 1000
    for _ in range(20):
        tr.scope("step", t, 2000, 4242)
        # a sample stands for the CPU time before it and is placed after it: three
        # samples of 6 ms fill the 18 ms after the step
        for k in range(3):
            tr.sample(t + 2000 + 6000 * k, 6000, 4242)
        t += 20000
    return tr.doc()


def handoff_kineto():
    ev, t, corr = [], 1000, 0
    for step in range(10):
        t0 = t
        corr += 1
        ev.append(x("cpu_op", "aten::linear", t0 + 10, 1000, 1, 1))
        launch_kernel(ev, corr, t0 + 500, "gemm_fwd", t0 + 510, 200)
        # the autograd thread starts 200 us into ## backward ## and works 7.66 ms
        s = t0 + 1300
        for k in range(4):
            corr += 1
            ev.append(x("cpu_op", "MmBackward0", s, 1900, 1, 2))
            launch_kernel(ev, corr, s + 1800, "gemm_bwd", s + 1810, 100, tid=2)
            s += 1920
        ev.append(x("user_annotation", "## backward ##", t0 + 1100, s - 20 + 60 - t0 - 1100,
                    1, 1))
        corr += 1
        t = optimizer_step(ev, corr, step, t0, s - 20 + 60 + 20)
    return kineto(ev)


def optimizer_step(ev, corr, step, t0, t):
    """The step's end on the main thread from t: the optimizer's kernel, a stream sync
    for it, the ProfilerStep span from t0; returns where the next step starts."""
    ev.append(x("cpu_op", "Optimizer.step", t, 500, 1, 1))
    end = launch_kernel(ev, corr, t + 400, "sgd", t + 410, 100)
    ev.append(x("cuda_runtime", "cudaStreamSynchronize", t + 510, end + 5 - t - 510, 1, 1,
                correlation=0))
    t = end + 5
    ev.append(x("user_annotation", "ProfilerStep#%d" % step, t0, t - t0, 1, 1))
    return t + 20


def flow(ph, ident, ts, tid):
    f = {"ph": ph, "cat": "fwdbwd", "name": "fwdbwd", "id": ident, "pid": 1, "tid": tid,
         "ts": ts}
    if ph == "f":
        f["bp"] = "e"
    return f


def handoff_fwdbwd():
    ev, t, corr = [], 1000, 0
    for step in range(10):
        t0 = t
        corr += 1
        ev.append(x("cpu_op", "aten::linear", t0 + 10, 1000, 1, 1))
        ev.append(flow("s", step + 1, t0 + 10, 1))
        launch_kernel(ev, corr, t0 + 500, "gemm_fwd", t0 + 510, 200)
        # the autograd thread: the backward kernel, then a copy that returns with it
        s = t0 + 1300
        corr += 1
        kend = launch_kernel(ev, corr, s + 50, "gemm_bwd", s + 60, 6000, tid=2)
        corr += 1
        ret = kend + 2 + 100 + 8
        ev.append(x("cuda_runtime", "cudaMemcpyAsync", s + 100, ret - s - 100, 1, 2,
                    correlation=corr))
        ev.append(x("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", kend + 2, 100, 0, 7,
                    correlation=corr, stream=7, device=0, bytes=4))
        ev.append(x("cpu_op", "MmBackward0", s, ret + 10 - s, 1, 2))
        ev.append(flow("f", step + 1, s, 2))
        ev.append(x("user_annotation", "## backward ##", t0 + 1100, ret + 70 - t0 - 1100,
                    1, 1))
        corr += 1
        t = optimizer_step(ev, corr, step, t0, ret + 70 + 20)
    return kineto(ev)


def handoff_wait():
    tr, t, MAIN, WORKER = Inferscope(), 1000, 4242, 4243
    for _ in range(20):
        tr.scope("submit", t, 100, MAIN)
        tr.scope("decode", t + 140, 5000, WORKER)
        tr.ev("cpu_syscall", "pthread_cond_wait", t + 100, 5070, MAIN, syscall_number=0,
              fd=-1, target="other", bytes=0, return_value=0, category="wait")
        tr.scope("consume", t + 5170, 200, MAIN)
        t += 5400
    return tr.doc()


def exit_teardown():
    tr, t, MAIN, HELPER = Inferscope(), 1000, 1000, 1001
    # the helper (the CUDA runtime's) waits from before the first step until the exit's
    # teardown posts its semaphore, then makes its last driver call
    for _ in range(20):
        tr.scope("step", t, 2000, MAIN)
        t += 2100
    tr.ev("cpu_syscall", "sem_wait", 900, t + 3000 - 900, HELPER, syscall_number=-1,
          return_value=0, category="wait")
    tr.ev("cpu_syscall", "ioctl", t + 3200, 500, HELPER, syscall_number=16, fd=5,
          return_value=0, category="driver")
    # the exit's own handlers, sampled on the main thread
    tr.sample(t + 2500, 2400, MAIN)
    return tr.doc()


def ticker():
    tr, t, MAIN, TICKER = Inferscope(), 1000, 4242, 4243
    for _ in range(20):
        tr.scope("step", t, 2000, MAIN)
        t += 2100
    # a driver thread: a 15 ms timed wait that ends by its timeout, then one ioctl, twice;
    # the last ioctl 1 ms after the last step
    w = t + 1000 - 2 * 15050
    for _ in range(2):
        tr.ev("cpu_syscall", "pthread_cond_timedwait", w, 15000, TICKER, syscall_number=-1,
              return_value=110, category="wait")
        tr.ev("cpu_syscall", "ioctl", w + 15000, 50, TICKER, syscall_number=16, fd=5,
              return_value=0, category="driver")
        w += 15050
    return tr.doc()


def sync_copy_kineto():
    ev, t, corr = [], 1000, 0
    for step in range(20):
        corr += 1
        kend = launch_kernel(ev, corr, t, "gemm", t + 10, 8000)
        corr += 1
        ev.append(x("cuda_runtime", "cudaMemcpyAsync", t + 10, kend + 2 + 100 + 8 - t - 10,
                    1, 1, correlation=corr))
        ev.append(x("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", kend + 2, 100, 0, 7,
                    correlation=corr, stream=7, device=0, bytes=1 << 20))
        t = kend + 110 + 10
        ev.append(x("cpu_op", "aten::item", t, 500, 1, 1))
        t += 520
    return kineto(ev)


def queue_saturated():
    """Kernels of 200 us; a launch returns when the operation `cap` places ahead ends."""
    ev, t, gpu, ends, corr = [], 1000, 1000, [], 0
    for k in range(3300):
        cap = 1024 if k < 1100 else 700
        corr += 1
        start = t
        t = max(t + 5, ends[-cap]) if len(ends) >= cap else t + 5
        ev.append(x("cuda_runtime", "cudaLaunchKernel", start, t - start, 1, 1,
                    correlation=corr))
        gpu = max(gpu, t + 3)
        ev.append(x("kernel", "conv2d_fwd", gpu, 200, 0, 7, correlation=corr, stream=7,
                    device=0))
        gpu += 200
        ends.append(gpu)
        t += 2
    ev.append(x("cuda_runtime", "cudaDeviceSynchronize", t, gpu + 5 - t, 1, 1,
                correlation=0))
    return kineto(ev)


def comm_kineto():
    ev, t, corr = [], 1000, 0
    for step in range(20):
        corr += 1
        ev.append(x("cpu_op", "aten::mm", t, 100, 1, 1))
        end = launch_kernel(ev, corr, t + 50, "gemm", t + 60, 3000)
        ev.append(x("cuda_runtime", "cudaStreamSynchronize", t + 100, end + 5 - t - 100,
                    1, 1, correlation=0))
        t = end + 10
        ev.append(x("cpu_op", "gloo:all_reduce", t, 4000, 1, 1))
        t += 4010
    return kineto(ev)


def stream_wait_kineto():
    ev, t, corr = [], 1000, 0
    for step in range(10):
        t0 = t
        corr += 1
        bwd = launch_kernel(ev, corr, t, "gemm_bwd", t + 10, 2000)
        # the NCCL stream's wait is released 4 us after the gradients are ready
        corr += 1
        red = launch_kernel(ev, corr, t + 20, "ncclKernel_AllReduce_RING_LL_Sum_float",
                            bwd + 4, 3000, stream=20)
        corr += 1
        opt = launch_kernel(ev, corr, t + 40, "sgd_update", red + 6, 500)
        ev.append(x("cuda_runtime", "cudaStreamSynchronize", t + 60, opt + 5 - t - 60, 1, 1,
                    correlation=0))
        t = opt + 5
        ev.append(x("user_annotation", "ProfilerStep#%d" % step, t0, t - t0, 1, 1))
        t += 20
    return kineto(ev)


def scope_gpu_kineto():
    ev, t, corr = [], 1000, 0
    for step in range(10):
        ev.append(x("user_annotation", "slow_norm", t, 220, 1, 1))
        gpu = t + 10
        for r in range(4):
            corr += 1
            gpu = launch_kernel(ev, corr, t + 10 * r, "norm_row", gpu, 50)
        ev.append(x("cuda_runtime", "cudaStreamSynchronize", t + 40, gpu + 5 - t - 40, 1, 1,
                    correlation=0))
        corr += 1
        end = launch_kernel(ev, corr, t + 230, "gemm", t + 240, 1000)
        ev.append(x("cuda_runtime", "cudaStreamSynchronize", t + 240, end + 5 - t - 240, 1,
                    1, correlation=0))
        t += 1260
    return kineto(ev)


def dataloader_kineto():
    ev, t, corr = [], 1000, 0
    for step in range(10):
        ev.append(x("user_annotation", "next_batch", t, 3000, 1, 1))
        corr += 1
        end = launch_kernel(ev, corr, t + 3010, "train_step", t + 3020, 500)
        ev.append(x("cuda_runtime", "cudaStreamSynchronize", t + 3020, end + 5 - t - 3020,
                    1, 1, correlation=0))
        t += 3530
    return kineto(ev)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with gzip.GzipFile(os.path.join(out, "queue-saturated.json.gz"), "wb", mtime=0) as f:
        f.write(json.dumps(queue_saturated(), separators=(",", ":")).encode() + b"\n")
    for name, doc in (("poller", poller()), ("untraced", untraced()),
                      ("untraced-sampled", untraced_sampled()),
                      ("handoff-kineto", handoff_kineto()),
                      ("handoff-fwdbwd", handoff_fwdbwd()), ("handoff-wait", handoff_wait()),
                      ("exit-teardown", exit_teardown()), ("ticker", ticker()),
                      ("sync-copy-kineto", sync_copy_kineto()),
                      ("comm-kineto", comm_kineto()),
                      ("stream-wait-kineto", stream_wait_kineto()),
                      ("scope-gpu-kineto", scope_gpu_kineto()),
                      ("dataloader-kineto", dataloader_kineto()),
                      ("queue-full", queue_full()), ("streams-threads", streams_threads()),
                      ("comm-stall", comm_stall()),
                      ("events-kineto", events_kineto()),
                      ("events-kineto-sync", events_kineto(event_sync=True)),
                      ("events-kineto-old", events_kineto(new=False, side_first=False)),
                      ("events-kineto-old-late", events_kineto(new=False))):
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(doc, f, indent=None, separators=(",", ":"))
            f.write("\n")


if __name__ == "__main__":
    main()
