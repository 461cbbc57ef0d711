# SPDX-License-Identifier: MIT
"""Scenario: launch bound (thousands of tiny kernels), in Python.

Verdict: cpu_bound (the host spends its time launching; the GPU idles between
kernels). Top suggestion: many tiny kernels: capture the step with CUDA Graphs
(torch.cuda.graphs) or fuse the element-wise kernels (torch.compile).

40 steps of 1,000 launches of 1-1.5 µs kernels, as eager-mode element-wise ops
do, one stream synchronisation per step.
"""
from wlcommon import Workload, scope


def main():
    w = Workload("py_launch_bound")
    ext = w.ext
    kernels = [ext.wlx_kernel(name, ns) for name, ns in (
        (b"elementwise_add", 1000), (b"elementwise_mul", 1000),
        (b"gelu_fwd", 1500), (b"cast_fp32_bf16", 1200))]
    launch = ext.wlx_launch
    for _ in range(40):
        if not w.gpu:
            break
        with scope("step"):
            for i in range(1000):
                err = launch(kernels[i & 3], 8, 128, 0)
                if err and not w.cuda("cudaLaunchKernel", err):
                    break
            w.cuda("cudaStreamSynchronize", ext.wlx_stream_sync(0))
    return w.finish()


if __name__ == "__main__":
    raise SystemExit(main())
