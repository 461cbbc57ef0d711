# SPDX-License-Identifier: MIT
"""Scenario: idle, waiting for input (pipe reads, file reads, sleeps), in Python.

Verdict: idle, waiting_for_input (neither the CPU nor the GPU is busy: the
process waits for its input, and no lever of its own gains). Top suggestion: I/O waits
dominate (read on a pipe, sleep): overlap input loading with compute, prefetch
requests (a DataLoader with workers), batch larger.

120 requests arrive on a pipe from a producer thread every 3 ms; each is read, a
256 KiB chunk is read from a file, the server sleeps 0.5 ms, then runs a 0.2 ms
GPU step.
"""
import os
import tempfile
import threading
import time

from wlcommon import Workload, scope

REQUESTS = 120


def producer(fd):
    request = b"r" * 4096
    for _ in range(REQUESTS):
        time.sleep(0.003)
        os.write(fd, request)
    os.close(fd)


def main():
    w = Workload("py_io_wait")
    ext = w.ext
    kernel = ext.wlx_kernel(b"small_step", 200000)
    read_fd, write_fd = os.pipe()
    thread = threading.Thread(target=producer, args=(write_fd,))
    thread.start()
    with tempfile.TemporaryFile() as data:
        data.write(b"x" * (256 << 10))
        data.flush()
        for _ in range(REQUESTS):
            with scope("wait_request"):
                got = 0
                while got < 4096:
                    chunk = os.read(read_fd, 4096 - got)
                    if not chunk:
                        break
                    got += len(chunk)
            with scope("load"):
                os.pread(data.fileno(), 256 << 10, 0)
                time.sleep(0.0005)
            if w.gpu:
                w.cuda("cudaLaunchKernel", ext.wlx_launch(kernel, 64, 256, 0))
                w.cuda("cudaStreamSynchronize", ext.wlx_stream_sync(0))
    thread.join()
    os.close(read_fd)
    return w.finish()


if __name__ == "__main__":
    raise SystemExit(main())
