# SPDX-License-Identifier: MIT
"""Scenario: a synchronisation after every kernel, in Python.

Verdict: balanced (host preparation and GPU compute take similar shares, but
never at the same time). Top suggestion: excessive synchronisation: drop the
cudaDeviceSynchronize (torch.cuda.synchronize, .item()) after every launch and
synchronise once per batch.

2,000 iterations of 50 µs of host preparation, a 60 µs kernel and a
cudaDeviceSynchronize.
"""
from wlcommon import Workload, scope, tokenize


def main():
    w = Workload("py_sync_every_kernel")
    ext = w.ext
    kernel = ext.wlx_kernel(b"decode_step", 60000)
    for _ in range(2000):
        with scope("prepare"):
            tokenize(0.00005)
        if w.gpu:
            w.cuda("cudaLaunchKernel", ext.wlx_launch(kernel, 132, 256, 0))
            w.cuda("cudaDeviceSynchronize", ext.wlx_device_sync())
    return w.finish()


if __name__ == "__main__":
    raise SystemExit(main())
