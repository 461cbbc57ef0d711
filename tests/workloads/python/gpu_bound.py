# SPDX-License-Identifier: MIT
"""Scenario: GPU-compute bound, in Python.

Verdict: gpu_bound. Top suggestion: the GPU is busy almost all the time and
gemm_bf16_large takes most of it: optimise the dominant kernels (tensor-core
precision, fusion, a better GEMM configuration); host-side changes gain nothing.

100 steps of a pinned upload, four kernels (5.8 ms) and a download. The host waits
for the step before the previous one (an event per step), so one step of work is always
queued and host jitter does not leave the GPU idle. GPU busy ~98 %.
"""
from wlcommon import Workload, scope


@scope("step")
def step(w, kernels, host, dev, stream, wait, done):
    ext = w.ext
    if wait is not None:
        w.cuda("cudaEventSynchronize", ext.wlx_event_sync(wait))
    w.cuda("cudaMemcpyAsync", ext.wlx_copy(0, host, dev, 1 << 20, 1, stream))
    for kernel, grid in kernels:
        w.cuda("cudaLaunchKernel", ext.wlx_launch(kernel, grid, 256, stream))
    w.cuda("cudaMemcpyAsync", ext.wlx_copy(1, host, dev, 1 << 20, 1, stream))
    w.cuda("cudaEventRecord", ext.wlx_event_record(done, stream))


def main():
    w = Workload("py_gpu_bound")
    ext = w.ext
    gemm = ext.wlx_kernel(b"gemm_bf16_large", 2000000)
    attention = ext.wlx_kernel(b"flash_attention_fwd", 1500000)
    norm = ext.wlx_kernel(b"layernorm_fwd", 300000)
    kernels = ((gemm, 528), (attention, 264), (gemm, 528), (norm, 132))
    stream = w.index("cudaStreamCreateWithFlags", ext.wlx_stream_create(0))
    host = w.index("cudaMallocHost", ext.wlx_host_alloc(1 << 20, 1)) if w.gpu else None
    dev = w.index("cudaMalloc", ext.wlx_device_alloc(64 << 20)) if w.gpu else None
    events = [w.index("cudaEventCreate", ext.wlx_event_create()) for _ in range(2)]
    for i in range(100):
        if not w.gpu:
            break
        step(w, kernels, host, dev, stream, events[i % 2] if i >= 2 else None, events[i % 2])
    if w.gpu:
        w.cuda("cudaStreamSynchronize", ext.wlx_stream_sync(stream))
    return w.finish()


if __name__ == "__main__":
    raise SystemExit(main())
