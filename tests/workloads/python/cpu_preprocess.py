# SPDX-License-Identifier: MIT
"""Scenario: CPU-preprocessing bound, in Python.

Verdict: cpu_bound. Top suggestion: tokenisation (scope "tokenize") dominates the
end-to-end time while the GPU idles; move it off the critical path (a faster or
parallel tokenizer, tokenise the next batch while the GPU runs this one).

30 batches: 10 ms of CPU time tokenising in Python, then a pinned upload, three
kernels (~0.6 ms) and a download. GPU busy ~5 %.
"""
from wlcommon import Workload, mark, scope, tokenize


def main():
    w = Workload("py_cpu_preprocess")
    ext = w.ext
    embed = ext.wlx_kernel(b"embedding_lookup", 80000)
    block = ext.wlx_kernel(b"transformer_block", 450000)
    head = ext.wlx_kernel(b"lm_head", 60000)
    host = w.index("cudaMallocHost", ext.wlx_host_alloc(256 << 10, 1))
    dev = w.index("cudaMalloc", ext.wlx_device_alloc(256 << 10)) if w.gpu else None
    for batch in range(30):
        with scope("tokenize"):
            tokenize(0.010)
        if not w.gpu:
            continue
        with scope("infer"):
            w.cuda("cudaMemcpyAsync", ext.wlx_copy(0, host, dev, 256 << 10, 1, 0))
            for kernel, grid in ((embed, 64), (block, 132), (head, 32)):
                w.cuda("cudaLaunchKernel", ext.wlx_launch(kernel, grid, 256, 0))
            w.cuda("cudaMemcpyAsync", ext.wlx_copy(1, host, dev, 4096, 1, 0))
            w.cuda("cudaStreamSynchronize", ext.wlx_stream_sync(0))
        mark("batch_done", size=32, batch=batch)
    return w.finish()


if __name__ == "__main__":
    raise SystemExit(main())
