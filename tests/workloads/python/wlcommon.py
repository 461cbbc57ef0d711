# SPDX-License-Identifier: MIT
"""Shared by the Python scenario workloads (tests/workloads/README.md).

The GPU is reached through libwlext.so (WORKLOAD_EXT=path), a small extension
that links libcudart.so.13 and is loaded with ctypes, as framework extension
modules are. Phases are annotated with InferScope's Python helper
(`from inferscope import scope, mark`); without it on PYTHONPATH they run
unannotated. The first CUDA failure is printed with its name and code, the GPU
part stops, the CPU part carries on and the workload exits with status 0.
"""
import ctypes
import os
import sys
import time

try:
    from inferscope import scope, mark
except ImportError:  # the helper is not installed: keep the same code paths

    class scope:  # noqa: N801 - mirrors inferscope.scope
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def __call__(self, fn):
            return fn

    def mark(name, **fields):
        return None


__all__ = ["Workload", "scope", "mark", "tokenize"]


def _load_ext():
    path = os.environ.get("WORKLOAD_EXT")
    if not path:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libwlext.so")
    ext = ctypes.CDLL(path)
    ext.wlx_error_name.restype = ctypes.c_char_p
    ext.wlx_error_string.restype = ctypes.c_char_p
    ext.wlx_kernel.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong]
    ext.wlx_host_alloc.argtypes = [ctypes.c_size_t, ctypes.c_int]
    ext.wlx_device_alloc.argtypes = [ctypes.c_size_t]
    ext.wlx_copy.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_size_t,
                             ctypes.c_int, ctypes.c_int]
    ext.wlx_launch.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint, ctypes.c_int]
    return ext


class Workload:
    """One scenario: CUDA calls through the extension, with error reporting."""

    def __init__(self, name):
        self.name = name
        self.ext = _load_ext()
        self.gpu = True
        self.error = 0
        self.start = time.monotonic()

    def cuda(self, what, err):
        """True when @err (a cudaError_t) is cudaSuccess; reports the first failure."""
        if err == 0:
            return True
        if self.gpu:
            self.gpu = False
            self.error = err
            print("%s: %s failed: %s (%d): %s; stopping the GPU part" % (
                self.name, what, self.ext.wlx_error_name(err).decode(), err,
                self.ext.wlx_error_string(err).decode()))
        return False

    def index(self, what, result):
        """An allocator's result: its index, or None after a failure (-cudaError_t)."""
        if result >= 0:
            return result
        self.cuda(what, -result)
        return None

    def finish(self):
        ms = (time.monotonic() - self.start) * 1000.0
        if self.gpu:
            print("workload %s: gpu=ok wall_ms=%.1f" % (self.name, ms))
        else:
            print("workload %s: gpu=unavailable error=%s code=%d wall_ms=%.1f" % (
                self.name, self.ext.wlx_error_name(self.error).decode(), self.error, ms))
        sys.stdout.flush()
        return 0


_WORDS = ("the inference server receives requests with long prompts tokenization "
          "splits Unicode text into subword units before batching them for the GPU "
          "which then runs attention layers over every token").split()
_VOCAB = {w[: len(w) // 2 + 1]: i for i, w in enumerate(_WORDS)}


def tokenize(cpu_seconds):
    """Tokenisation-like string work for @cpu_seconds of this thread's CPU time."""
    until = time.thread_time() + cpu_seconds
    ids = 0
    text = " ".join(_WORDS[(i * 7) % len(_WORDS)] for i in range(64))
    while time.thread_time() < until:
        for word in text.lower().split():
            pos = 0
            while pos < len(word):
                n = len(word) - pos
                while n > 1 and word[pos:pos + n] not in _VOCAB:
                    n -= 1
                ids += _VOCAB.get(word[pos:pos + n], hash(word[pos:pos + n]) & 0xff)
                pos += n
    return ids
