#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The hook generator (preload/hooks/cuda/gen-cuda-hooks.py) on toolkits it has not seen.

  check-gen-hooks.py GENERATOR CC [CC_ARGS...]

A small toolkit of another version (CUDART_VERSION 14010: its version node first),
with an older API (some hand-written functions missing), deprecated
functions, _ptsz/_ptds variants, a function returning a string and inline helpers
with bodies; then headers the generator must refuse with a clear error: a
declaration it cannot take apart, a variadic function, a variant without its plain
function, a missing header, headers that are no CUDA runtime. Exits 0 or 1.
"""
import os
import subprocess
import sys
import tempfile

PRELUDE = """#pragma once
typedef enum cudaError { cudaSuccess = 0 } cudaError_t;
typedef struct CUstream_st *cudaStream_t;
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define __CUDART_API_PTDS(api) api ## _ptds
#define __CUDART_API_PTSZ(api) api ## _ptsz
#else
#define __CUDART_API_PTDS(api) api
#define __CUDART_API_PTSZ(api) api
#endif
#define CUDART_DEPRECATED __attribute__((deprecated))
"""

GOOD = PRELUDE + """
#define CUDART_VERSION 14010
#define cudaMemcpy __CUDART_API_PTDS(cudaMemcpy)
#define cudaStreamGetFlags __CUDART_API_PTSZ(cudaStreamGetFlags)
#define cudaMemPrefetchAsync __CUDART_API_PTSZ(cudaMemPrefetchAsync)
extern cudaError_t cudaMalloc(void **devPtr, unsigned long size);
extern cudaError_t cudaMemcpy(void *dst, const void *src, unsigned long count, int kind);
extern cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags);
extern cudaError_t cudaMemPrefetchAsync(const void *devPtr, unsigned long count,
                                        int dstDevice, cudaStream_t stream);
extern CUDART_DEPRECATED cudaError_t cudaThreadExit(void);
extern const char * cudaGetErrorString(cudaError_t error);
extern cudaError_t cudaLaunchHostFunc(cudaStream_t stream, void (*fn)(void *userData),
                                      void *userData);
extern cudaError_t cudaArrays(int dims[3], const char *names[]);
static __inline__ cudaError_t cudaHelper(int x) { int y = x + 1; return (cudaError_t)y; }
struct cudaThing { int a; };
"""

HANDWRITTEN = """
#define ISC_CUDA_FUNCS(X) \\
	X(cudaMalloc, 0) \\
	X(cudaMemcpy, B) \\
	X(cudaMemcpy_ptds, BP) \\
	X(cudaMemcpyBatchAsync, A)
"""

MAP = "{\n\tglobal:\n\t\tcudaMalloc;\n\t\t/* @CUDA_GENERATED@ */\n\tlocal:\n\t\t*;\n};\n"

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def run(gen, cc, root, runtime_h, profiler_h=""):
    inc = os.path.join(root, "include")
    out = os.path.join(root, "out")
    os.makedirs(inc, exist_ok=True)
    for name, text in (("cuda_runtime_api.h", runtime_h), ("cuda_profiler_api.h", profiler_h)):
        path = os.path.join(inc, name)
        if text is None:
            if os.path.exists(path):
                os.unlink(path)
        else:
            open(path, "w").write(text)
    fns = os.path.join(root, "cuda-fns.h")
    open(fns, "w").write(HANDWRITTEN)
    m = os.path.join(root, "map.in")
    open(m, "w").write(MAP)
    p = subprocess.run([sys.executable, gen, "--include", inc, "--handwritten", fns,
                        "--map-in", m, "--out-dir", out, "--"] + cc,
                       capture_output=True, text=True)
    return p, out


def table(out):
    rows = {}
    for line in open(os.path.join(out, "cuda-functions.txt")):
        f = line.split()
        rows[f[0]] = f[1:]
    return rows


def main():
    gen, cc = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory() as root:
        p, out = run(gen, cc, os.path.join(root, "good"), GOOD,
                     "#include <cuda_runtime_api.h>\nextern cudaError_t cudaProfilerStart(void);\n")
        check(p.returncode == 0, "a good toolkit is accepted: " + p.stderr)
        if p.returncode == 0:
            t = table(out)
            check(t.get("cudaMalloc", [""])[0] == "handwritten", "hand-written stays so")
            check(t.get("cudaMemcpyBatchAsync", [""])[0] == "handwritten",
                  "a hand-written function the toolkit lacks is no error")
            check(t.get("cudaStreamGetFlags") == ["generated", "0"], "plain function")
            check(t.get("cudaStreamGetFlags_ptsz") == ["generated", "P"], "its _ptsz variant")
            check(t.get("cudaMemPrefetchAsync_ptsz") == ["generated", "AP"], "async variant")
            check("cudaMemcpy_ptds" not in t or t["cudaMemcpy_ptds"][0] == "handwritten",
                  "a hand-written variant is not generated again")
            check(t.get("cudaThreadExit") == ["generated", "0", "deprecated"], "deprecated")
            check("cudaHelper" not in t, "an inline helper is no runtime function")
            check("cudaProfilerStart" in t, "the profiler header is read")
            hooks = open(os.path.join(out, "cuda-gen-hooks.c")).read()
            check("isc_gen_cudaStreamGetFlags_ptsz_fn(cudaStream_t hStream, unsigned int *flags);"
                  in hooks, "the variant gets its plain function's prototype")
            check(".stream = hStream, .has_stream = true" in hooks, "streams are recorded")
            check("real_(stream, fn, userData)" in hooks, "function pointer parameters")
            check("real_(dims, names)" in hooks, "array parameters")
            check("deprecated" not in hooks, "no deprecation in our definitions")
            for v in ("libcudart.so.14", "libcudart.so.13", "libcudart.so.12",
                      "libcudart.so.11.0"):
                check('cudaStreamGetFlags_ptsz@%s");' % v in hooks,
                      "a hidden version per runtime major: " + v)
            check("ISC_EXPORT" not in hooks, "no unversioned export")
            mapped = open(os.path.join(out, "libinferscope.map")).read()
            check(mapped.count("{") == 4 and "libcudart.so.14 { local: isc_v*; };" in mapped
                  and "local: *" not in mapped and mapped.index(".so.14") < mapped.index(".so.13"),
                  "the version script has the runtime's nodes, the toolkit's (CUDART_VERSION) "
                  "first: " + mapped)
            # the generated file compiles against the fixture headers
            obj = os.path.join(root, "hooks.o")
            shim_dir = os.path.join(root, "good", "include", "preload", "hooks", "cuda")
            os.makedirs(shim_dir)
            shim = os.path.join(shim_dir, "cuda-hook.h")
            open(shim, "w").write(
                "#include <stdint.h>\n#define ISC_EXPORT\n#define RA 0\n"
                "#define ISC_CUDA_NO_RUNTIME ((cudaError_t)3)\n"
                "struct isc_cuda_call { int x; };\n"
                "struct isc_cuda_info { const void *stream; int has_stream; };\n"
                "enum { ISC_FN_cudaStreamGetFlags, ISC_FN_cudaStreamGetFlags_ptsz, "
                "ISC_FN_cudaMemPrefetchAsync, ISC_FN_cudaMemPrefetchAsync_ptsz, "
                "ISC_FN_cudaThreadExit, ISC_FN_cudaGetErrorString, "
                "ISC_FN_cudaLaunchHostFunc, ISC_FN_cudaArrays, ISC_FN_cudaProfilerStart };\n"
                "void *isc_cuda_real(int fn, const void *ra);\n"
                "int isc_cuda_enter(struct isc_cuda_call *c, int fn);\n"
                "void isc_cuda_leave(struct isc_cuda_call *c, int r, "
                "const struct isc_cuda_info *i);\n")
            c = subprocess.run(cc + ["-c", "-Wall", "-Werror", "-Wno-unused-but-set-variable",
                                     "-I", os.path.join(root, "good", "include"),
                                     os.path.join(out, "cuda-gen-hooks.c"), "-o", obj],
                               capture_output=True, text=True)
            check(c.returncode == 0, "the generated hooks compile: " + c.stderr[:2000])

        bad = [
            ("unparsable", GOOD + "extern cudaError_t cudaBroken(int a, b c) garbage;\n",
             ["cuda_runtime_api.h:", "cannot parse", "cudaBroken"]),
            ("unnamed", GOOD + "extern cudaError_t cudaUnnamed(int);\n",
             ["cudaUnnamed", "no name"]),
            ("variadic", GOOD + "extern cudaError_t cudaPrintf(const char *f, ...);\n",
             ["cudaPrintf", "variadic"]),
            ("orphan variant", GOOD + "#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM\n"
             "extern cudaError_t cudaLonely_ptsz(int x);\n#endif\n",
             ["cudaLonely_ptsz", "no _ptsz/_ptds variant"]),
            ("not cuda", PRELUDE + "extern int foo(int x);\n", ["no cudaMalloc"]),
            ("preprocessor", "#error this toolkit is broken\n", ["preprocessor failed"]),
            ("missing header", None, ["cuda_runtime_api.h not found"]),
        ]
        for what, text, words in bad:
            p, _ = run(gen, cc, os.path.join(root, what.replace(" ", "-")), text)
            check(p.returncode == 1, "%s: exit status %d" % (what, p.returncode))
            first = p.stderr.strip().split("\n")[0] if p.stderr.strip() else ""
            check(first.startswith("gen-cuda-hooks.py: error: "), "%s: one error line: %r"
                  % (what, p.stderr))
            for w in words:
                check(w in p.stderr, "%s: the error says %r: %r" % (what, w, p.stderr))
            check("Traceback" not in p.stderr, "%s: no traceback" % what)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
