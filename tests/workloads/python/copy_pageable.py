# SPDX-License-Identifier: MIT
"""Scenario: copy bound, from pageable host memory, in Python.

Verdict: memory_bound. Top suggestion: pinned memory for host-to-device copies
(cudaMallocHost / cudaHostRegister, pin_memory=True in a DataLoader): the 32 MiB
uploads come from pageable memory and run at a fraction of the pinned bandwidth.

60 iterations of a 32 MiB pageable upload (cudaMemcpy), a 0.4 ms kernel and an
8 MiB pageable download. Copies take ~85 % of the time.
"""
from wlcommon import Workload, scope


def main():
    w = Workload("py_copy_pageable")
    ext = w.ext
    kernel = ext.wlx_kernel(b"normalize_images", 400000)
    host = w.index("malloc", ext.wlx_host_alloc(32 << 20, 0))
    dev = w.index("cudaMalloc", ext.wlx_device_alloc(32 << 20))
    for _ in range(60):
        if not w.gpu:
            break
        with scope("batch"):
            w.cuda("cudaMemcpy", ext.wlx_copy(0, host, dev, 32 << 20, 0, 0))
            w.cuda("cudaLaunchKernel", ext.wlx_launch(kernel, 1024, 256, 0))
            w.cuda("cudaMemcpy", ext.wlx_copy(1, host, dev, 8 << 20, 0, 0))
    return w.finish()


if __name__ == "__main__":
    raise SystemExit(main())
