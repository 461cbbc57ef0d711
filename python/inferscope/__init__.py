# SPDX-License-Identifier: MIT
"""InferScope annotations for Python: scopes and marks.

    from inferscope import scope, mark

    with scope("tokenize"):
        ids = tokenizer(text)

    @scope("decode_step")
    def step(batch): ...

    mark("batch_done", size=32, model="resnet50")

Scopes become ``cpu_call`` events nested per thread, marks ``instant`` events, in the
trace written by ``libinferscope.so``. Without the preload every call is a cheap
no-op: this module never loads the library itself and has no dependencies.
"""

import ctypes
import functools

__all__ = ["scope", "mark", "capture_start", "capture_stop", "flush", "active"]

_SOURCE_PYTHON = 1
_KV_INT, _KV_DOUBLE, _KV_STRING = 0, 1, 2


class _KVValue(ctypes.Union):
    _fields_ = [("i", ctypes.c_longlong), ("d", ctypes.c_double), ("s", ctypes.c_char_p)]


class _KV(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("type", ctypes.c_int), ("value", _KVValue)]


def _lookup():
    """The library's functions when it is preloaded, else None."""
    try:
        lib = ctypes.CDLL(None)
        version = lib.inferscope_impl_abi_version
    except (OSError, AttributeError):
        return None
    version.restype = ctypes.c_int
    if version() != 1:
        return None
    lib.inferscope_impl_range_push.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.inferscope_impl_range_push.restype = ctypes.c_int
    lib.inferscope_impl_range_pop.argtypes = []
    lib.inferscope_impl_range_pop.restype = ctypes.c_int
    lib.inferscope_impl_mark.argtypes = [ctypes.c_char_p, ctypes.POINTER(_KV), ctypes.c_size_t,
                                         ctypes.c_int]
    lib.inferscope_impl_mark.restype = ctypes.c_int
    lib.inferscope_impl_flush.restype = ctypes.c_int
    return lib


_lib = _lookup()


def active():
    """True when libinferscope.so is preloaded and recording is possible."""
    return _lib is not None


class scope:
    """A named scope: ``with scope("name"):`` or ``@scope("name")``.

    The name is encoded once; entering and leaving cost one C call each.
    """

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = str(name).encode("utf-8", "replace")

    def __enter__(self):
        if _lib is not None:
            _lib.inferscope_impl_range_push(self._name, _SOURCE_PYTHON)
        return self

    def __exit__(self, exc_type, exc, tb):
        if _lib is not None:
            _lib.inferscope_impl_range_pop()
        return False

    def __call__(self, func):
        name = self._name

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if _lib is None:
                return func(*args, **kwargs)
            _lib.inferscope_impl_range_push(name, _SOURCE_PYTHON)
            try:
                return func(*args, **kwargs)
            finally:
                _lib.inferscope_impl_range_pop()

        return wrapper


def _kv_array(kv):
    arr = (_KV * len(kv))()
    keep = []
    for i, (key, value) in enumerate(kv.items()):
        k = str(key).encode("utf-8", "replace")
        keep.append(k)
        arr[i].key = k
        if isinstance(value, bool) or isinstance(value, int):
            arr[i].type = _KV_INT
            arr[i].value.i = int(value)
        elif isinstance(value, float):
            arr[i].type = _KV_DOUBLE
            arr[i].value.d = value
        else:
            s = str(value).encode("utf-8", "replace")
            keep.append(s)
            arr[i].type = _KV_STRING
            arr[i].value.s = s
    return arr, keep


def mark(name, /, **metadata):
    """Records an instant event with optional key-value metadata (numbers or strings)."""
    if _lib is None:
        return
    arr, _keep = _kv_array(metadata)
    _lib.inferscope_impl_mark(str(name).encode("utf-8", "replace"), arr, len(metadata),
                              _SOURCE_PYTHON)


def capture_start():
    """Resumes recording (see INFERSCOPE_START_PAUSED)."""
    if _lib is not None:
        _lib.inferscope_impl_capture_start()


def capture_stop():
    """Pauses recording until capture_start()."""
    if _lib is not None:
        _lib.inferscope_impl_capture_stop()


def flush():
    """Writes a snapshot trace of what is recorded so far; returns 0 on success."""
    if _lib is None:
        return -1
    return _lib.inferscope_impl_flush()
