# SPDX-License-Identifier: MIT
"""Scenario: cudaMalloc/cudaFree every iteration, in Python.

Verdict: cpu_bound (the host spends its time in the allocator while the GPU
idles; cudaFree also synchronises the device). Top suggestion: device allocation
in the steady state: reuse buffers (a caching allocator) or use stream-ordered
cudaMallocAsync pools.

800 iterations of cudaMalloc(256 MiB), a pinned 1 MiB upload, a 100 µs kernel
and cudaFree.
"""
from wlcommon import Workload, scope


def main():
    w = Workload("py_alloc_churn")
    ext = w.ext
    kernel = ext.wlx_kernel(b"conv2d_fwd", 100000)
    host = w.index("cudaMallocHost", ext.wlx_host_alloc(1 << 20, 1))
    for _ in range(800):
        if not w.gpu:
            break
        with scope("iteration"):
            dev = w.index("cudaMalloc", ext.wlx_device_alloc(256 << 20))
            if dev is None:
                break
            w.cuda("cudaMemcpyAsync", ext.wlx_copy(0, host, dev, 1 << 20, 1, 0))
            w.cuda("cudaLaunchKernel", ext.wlx_launch(kernel, 264, 256, 0))
            w.cuda("cudaFree", ext.wlx_device_free(dev))
    return w.finish()


if __name__ == "__main__":
    raise SystemExit(main())
