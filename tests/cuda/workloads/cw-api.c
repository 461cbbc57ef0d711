/* SPDX-License-Identifier: MIT */
/*
 * Runtime calls that no hand-written hook decodes (streams, events, devices, errors,
 * versions, a _ptsz variant), made through the PLT. Before each call errno is set to
 * a marker; after it the program prints one line "call NAME RESULT ERRNO" (RESULT the
 * cudaError_t, or 0 for the calls that return a string), so that a run under the
 * preload can be compared line by line with a run without it, and the calls counted.
 * On the real runtime without a GPU every call fails and the program exits 0.
 *
 * With an argument, it also looks up functions with dlsym, in the global scope and in
 * the runtime's handle, and prints "dlsym SCOPE NAME runtime|elsewhere|null": the
 * preload must not change the answers (the simulated runtime lacks cudaGraphCreate).
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority);

#define MARK 4321

static void show(const char *name, int rc)
{
	printf("call %s %d %d\n", name, rc, errno);
	errno = MARK;
}

/* A call whose result is a cudaError_t: the line carries it. */
#define CALL(fn, ...) show(#fn, (int)fn(__VA_ARGS__))
/* A call that returns a string: the line carries 0 and the string goes after it. */
#define STR(fn, ...)                                    \
	do {                                            \
		const char *s_ = fn(__VA_ARGS__);       \
		show(#fn, 0);                           \
		printf("  = %s\n", s_ ? s_ : "(null)"); \
	} while (0)

static const char *where(void *p)
{
	Dl_info info;
	if (p == NULL) {
		return "null";
	}
	return dladdr(p, &info) && strstr(info.dli_fname, "libcudart") ? "runtime" : "elsewhere";
}

static void lookups(void)
{
	/* generated hooks, hand-written ones, a function the simulator lacks, none */
	static const char *const names[] = { "cudaStreamCreate", "cudaStreamGetPriority_ptsz",
					     "cudaMemcpy",	 "cudaLaunchKernel",
					     "cudaGraphCreate",	 "cudaNoSuchFunction" };
	void *h = dlopen("libcudart.so.13", RTLD_LAZY | RTLD_NOLOAD);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		printf("dlsym default %s %s\n", names[i], where(dlsym(RTLD_DEFAULT, names[i])));
		printf("dlsym handle %s %s\n", names[i], h ? where(dlsym(h, names[i])) : "-");
	}
	if (h) {
		dlclose(h);
	}
}

int main(int argc, char **argv)
{
	int n = -1, dev = -1, v = 0, prio = 0, flags = 0;
	unsigned uflags = 0;
	size_t free_b = 0, total_b = 0;
	float ms = 0;
	cudaStream_t s = NULL, s2 = NULL;
	cudaEvent_t e = NULL, e2 = NULL;
	enum cudaStreamCaptureStatus cap;
	struct cudaPointerAttributes attr;

	errno = MARK;
	CALL(cudaRuntimeGetVersion, &v);
	CALL(cudaDriverGetVersion, &v);
	CALL(cudaGetDeviceCount, &n);
	CALL(cudaGetDevice, &dev);
	CALL(cudaDeviceGetAttribute, &v, cudaDevAttrMultiProcessorCount, 0);
	CALL(cudaMemGetInfo, &free_b, &total_b);
	CALL(cudaStreamCreate, &s);
	CALL(cudaStreamCreateWithFlags, &s2, cudaStreamNonBlocking);
	CALL(cudaStreamGetPriority, s, &prio);
	CALL(cudaStreamGetPriority_ptsz, NULL, &prio);
	CALL(cudaStreamGetFlags, s2, &uflags);
	CALL(cudaStreamIsCapturing, s, &cap);
	CALL(cudaEventCreate, &e);
	CALL(cudaEventCreateWithFlags, &e2, cudaEventDefault);
	CALL(cudaEventRecordWithFlags, e, s, 0);
	CALL(cudaEventRecordWithFlags, e2, s, 0);
	CALL(cudaEventElapsedTime, &ms, e, e2);
	CALL(cudaPointerGetAttributes, &attr, &v);
	CALL(cudaGetDeviceFlags, &uflags);
	cudaError_t last = cudaPeekAtLastError();
	show("cudaPeekAtLastError", last);
	CALL(cudaGetLastError);
	STR(cudaGetErrorName, last);
	STR(cudaGetErrorString, cudaErrorInvalidValue);
	CALL(cudaEventDestroy, e);
	CALL(cudaEventDestroy, e2);
	CALL(cudaStreamDestroy, s);
	CALL(cudaStreamDestroy, s2);
	(void)flags;
	if (argc > 1) {
		lookups();
	}
	return 0;
}
