# SPDX-License-Identifier: MIT
"""Scenario: balanced, with preprocessing overlapped with GPU work, in Python.

Verdict: balanced. Top suggestion: no single bottleneck: host preprocessing
(~2 ms a batch) and GPU work (~2 ms a batch) already overlap, so speeding up only
one side gains little; look at both (or at larger batches).

150 batches, double-buffered: the host tokenises batch i+1 while the GPU runs
batch i on its own stream; an event per buffer guards its reuse.
"""
from wlcommon import Workload, mark, scope, tokenize


def main():
    w = Workload("py_balanced")
    ext = w.ext
    kernels = [(ext.wlx_kernel(b"encoder_fwd", 900000), 132),
               (ext.wlx_kernel(b"decoder_fwd", 900000), 132),
               (ext.wlx_kernel(b"sampler", 100000), 8)]
    stream = w.index("cudaStreamCreateWithFlags", ext.wlx_stream_create(1))
    hosts = [w.index("cudaMallocHost", ext.wlx_host_alloc(1 << 20, 1)) for _ in range(2)]
    events = [w.index("cudaEventCreateWithFlags", ext.wlx_event_create()) for _ in range(2)]
    dev = w.index("cudaMalloc", ext.wlx_device_alloc(16 << 20)) if w.gpu else None
    for batch in range(150):
        slot = batch % 2
        if batch >= 2 and w.gpu:
            w.cuda("cudaEventSynchronize", ext.wlx_event_sync(events[slot]))
        with scope("preprocess"):
            tokenize(0.002)
        if not w.gpu:
            continue
        w.cuda("cudaMemcpyAsync", ext.wlx_copy(0, hosts[slot], dev, 1 << 20, 1, stream))
        for kernel, grid in kernels:
            w.cuda("cudaLaunchKernel", ext.wlx_launch(kernel, grid, 256, stream))
        w.cuda("cudaMemcpyAsync", ext.wlx_copy(1, hosts[slot], dev, 4096, 1, stream))
        w.cuda("cudaEventRecord", ext.wlx_event_record(events[slot], stream))
        mark("batch_submitted", batch=batch)
    if w.gpu:
        w.cuda("cudaStreamSynchronize", ext.wlx_stream_sync(stream))
    return w.finish()


if __name__ == "__main__":
    raise SystemExit(main())
