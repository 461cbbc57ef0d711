/* SPDX-License-Identifier: MIT */
/*
 * simgpu: the simulated CUDA runtime's own interface, for workloads and test suites.
 *
 * These functions exist only in the simulator (tests/simgpu/libcudart.so.13). A
 * workload that must also run against the real runtime never links them: it looks
 * them up at run time (simgpu_lookup() below) and skips them when they are absent.
 * A test suite that only ever runs on the simulator may call them directly.
 *
 * Times are CLOCK_MONOTONIC nanoseconds, the clock of the whole virtual device.
 */
#ifndef SIMGPU_H
#define SIMGPU_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Kinds of executed operations (ground truth and CUPTI records). */
enum simgpu_op_type {
	SIMGPU_OP_KERNEL = 1,
	SIMGPU_OP_MEMCPY = 2,
	SIMGPU_OP_MEMSET = 3,
};

/** Copy directions; the values are CUPTI's CUpti_ActivityMemcpyKind. */
enum simgpu_copy_kind {
	SIMGPU_COPY_HTOD = 1,
	SIMGPU_COPY_DTOH = 2,
	SIMGPU_COPY_DTOD = 8,
	SIMGPU_COPY_HTOH = 9,
	SIMGPU_COPY_PTOP = 10,
};

/** Memory kinds; the values are CUPTI's CUpti_ActivityMemoryKind. */
enum simgpu_mem_kind {
	SIMGPU_MEM_UNKNOWN = 0,
	SIMGPU_MEM_PAGEABLE = 1,
	SIMGPU_MEM_PINNED = 2,
	SIMGPU_MEM_DEVICE = 3,
	SIMGPU_MEM_MANAGED = 5,
};

/** Which API issued an operation. */
enum simgpu_api_domain {
	SIMGPU_DOMAIN_RUNTIME = 1,
	SIMGPU_DOMAIN_DRIVER = 2,
};

/** How simgpu_launch_hidden() pretends to launch (see there). */
enum simgpu_hidden_api {
	SIMGPU_HIDDEN_DRIVER = 1,	  /* cuLaunchKernel, as Triton does */
	SIMGPU_HIDDEN_STATIC_RUNTIME = 2, /* a private static cudart, as cuBLAS has */
};

/** One operation the virtual device executed. */
struct simgpu_op {
	uint32_t type;		 /* enum simgpu_op_type */
	uint32_t correlation_id; /* of the API call that issued it (graph: the launch) */
	const char *name;	 /* kernel name; "" for copies and memsets */
	int32_t device;
	int32_t peer_device; /* PTOP copies: the other device, else -1 */
	uint32_t stream_id;  /* CUPTI-style stream id (legacy default stream: 7) */
	uint32_t thread_id;  /* gettid() of the thread that made the API call */
	uint64_t enqueue_ns; /* when the call handed it to the device */
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t bytes;	   /* copies and memsets */
	uint8_t copy_kind; /* enum simgpu_copy_kind */
	uint8_t src_kind;  /* enum simgpu_mem_kind */
	uint8_t dst_kind;
	uint8_t async;	    /* issued by an ...Async call */
	uint8_t api_domain; /* enum simgpu_api_domain */
	uint8_t hidden;	    /* issued by simgpu_launch_hidden() */
	uint8_t pad[2];
	uint32_t memset_value;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t dynamic_smem;
	uint32_t static_smem;
	uint32_t registers;
	uint32_t graph_id; /* 0 unless replayed from a graph */
	uint64_t graph_node_id;
	uint64_t launch_seq; /* kernels: unique, increasing (CUPTI gridId) */
};

/**
 * Registers the simulated duration of a kernel. @p func is the host-side handle a
 * launch passes (the stub function of `<<<>>>`, or any address the workload uses as
 * its kernel); @p name is what profilers will see. Unregistered kernels take
 * SIMGPU_KERNEL_DEFAULT_NS. Returns 0, or -EINVAL.
 */
int simgpu_kernel_register(const void *func, const char *name, uint64_t duration_ns);

/** Same, with the registers per thread and static shared memory a profiler reports. */
int simgpu_kernel_register_ex(const void *func, const char *name, uint64_t duration_ns,
			      uint32_t registers_per_thread, uint32_t static_shared_bytes);

/** The next kernel this thread launches takes @p ns instead of its registered time. */
void simgpu_next_kernel_duration(uint64_t ns);

/**
 * Executes a kernel the way cuBLAS's private runtime or Triton's driver-API launches
 * do: no call goes through an exported cudaLaunchKernel symbol, so an LD_PRELOAD
 * interposer cannot see it, yet CUPTI reports its API record (driver cuLaunchKernel,
 * or runtime cudaLaunchKernel for SIMGPU_HIDDEN_STATIC_RUNTIME) and its kernel.
 * @p stream is a cudaStream_t (NULL: the legacy default stream). Returns a cudaError_t.
 */
int simgpu_launch_hidden(int api, const char *name, uint64_t duration_ns, unsigned grid_x,
			 unsigned grid_y, unsigned grid_z, unsigned block_x, unsigned block_y,
			 unsigned block_z, size_t shared_bytes, void *stream);

/** Number of operations executed so far (ground truth). */
size_t simgpu_op_count(void);

/** Copies operation @p index of the ground truth to @p out. Returns 0 or -ERANGE. */
int simgpu_op_get(size_t index, struct simgpu_op *out);

/** Writes the ground truth now (the same JSON as SIMGPU_TRUTH at exit). 0 or -errno. */
int simgpu_truth_write(const char *path);

/** Number of times the simulator called an injection library's InitializeInjection. */
int simgpu_injection_count(void);

/*
 * Finding the functions above from a binary that must also run on the real
 * runtime: try the global scope, then the loaded libcudart itself (a library
 * loaded RTLD_LOCAL, as Python loads extension modules, is not in the global scope).
 */
static inline void *simgpu_lookup(const char *symbol)
{
	void *fn = dlsym(RTLD_DEFAULT, symbol);
	void *lib;

	if (fn) {
		return fn;
	}
	lib = dlopen("libcudart.so.13", RTLD_LAZY | RTLD_NOLOAD);
	if (!lib) {
		return NULL;
	}
	fn = dlsym(lib, symbol);
	dlclose(lib);
	return fn;
}

#ifdef __cplusplus
}
#endif

#endif /* SIMGPU_H */
