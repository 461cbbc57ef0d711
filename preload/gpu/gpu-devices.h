/* SPDX-License-Identifier: MIT */
/*
 * The GPUs the process used, from CUPTI's DEVICE records: their per-SM limits give
 * each kernel's theoretical occupancy, and they are listed in trace_metadata.cuda.
 */
#ifndef ISC_GPU_DEVICES_H
#define ISC_GPU_DEVICES_H

#include <stdbool.h>
#include <stdint.h>

#define ISC_GPU_MAX_DEVICES 64

struct isc_gpu_device {
	uint32_t id;
	uint32_t name; /* string id */
	uint32_t sm_count;
	uint32_t cc_major, cc_minor;
	uint32_t max_warps_per_sm;
	uint32_t max_blocks_per_sm;
	uint32_t max_registers_per_sm;
	uint32_t max_shared_per_sm;
	uint32_t registers_per_block;
	uint32_t shared_per_block;
	uint32_t warp_size;
	uint64_t global_memory;
};

/* Adds or replaces a device (the CUPTI record thread). */
void isc_gpu_device_add(const struct isc_gpu_device *d);
/* Copies device id's limits; false when no record arrived for it yet. */
bool isc_gpu_device_get(uint32_t id, struct isc_gpu_device *out);
unsigned isc_gpu_device_count(void);

/*
 * Theoretical occupancy of a kernel, in 1/10000 (ISC_OCCUPANCY_UNKNOWN without
 * limits): the blocks that fit on one SM by warps, blocks, registers and shared
 * memory, times the warps of a block, over the SM's warps.
 */
uint16_t isc_gpu_occupancy(const struct isc_gpu_device *d, uint32_t threads_per_block,
			   uint32_t registers_per_thread, uint32_t shared_per_block);

#endif /* ISC_GPU_DEVICES_H */
