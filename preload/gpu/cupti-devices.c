/* SPDX-License-Identifier: MIT */
/* The device table (gpu-devices.h): filled from CUPTI's DEVICE records. */
#include "preload/gpu/gpu-devices.h"

#include <stdatomic.h>
#include <string.h>

#include "format/record.h"
#include "preload/core/intern.h"
#include "common/log.h"

static struct isc_gpu_device devices[ISC_GPU_MAX_DEVICES];
static _Atomic bool present[ISC_GPU_MAX_DEVICES];

void isc_gpu_device_add(const struct isc_gpu_device *d)
{
	if (d->id >= ISC_GPU_MAX_DEVICES) {
		return;
	}
	devices[d->id] = *d;
	atomic_store_explicit(&present[d->id], true, memory_order_release);
}

bool isc_gpu_device_get(uint32_t id, struct isc_gpu_device *out)
{
	if (id >= ISC_GPU_MAX_DEVICES ||
	    !atomic_load_explicit(&present[id], memory_order_acquire)) {
		return false;
	}
	*out = devices[id];
	return true;
}

unsigned isc_gpu_device_count(void)
{
	unsigned n = 0;
	for (unsigned i = 0; i < ISC_GPU_MAX_DEVICES; i++) {
		n += atomic_load(&present[i]);
	}
	return n;
}

static uint32_t round_up(uint32_t v, uint32_t unit)
{
	return (v + unit - 1) / unit * unit;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

uint16_t isc_gpu_occupancy(const struct isc_gpu_device *d, uint32_t threads_per_block,
			   uint32_t registers_per_thread, uint32_t shared_per_block)
{
	if (d == NULL || d->max_warps_per_sm == 0 || threads_per_block == 0) {
		return ISC_OCCUPANCY_UNKNOWN;
	}
	uint32_t ws = d->warp_size ? d->warp_size : 32;
	uint32_t warps = (threads_per_block + ws - 1) / ws;
	if (warps > d->max_warps_per_sm) {
		return 0;
	}
	uint32_t blocks = d->max_warps_per_sm / warps;
	if (d->max_blocks_per_sm) {
		blocks = min_u32(blocks, d->max_blocks_per_sm);
	}
	if (registers_per_thread > 0 && d->max_registers_per_sm > 0) {
		/* registers are allocated per warp in units of 256 */
		uint32_t per_warp = round_up(registers_per_thread * ws, 256);
		blocks = min_u32(blocks, d->max_registers_per_sm / per_warp / warps);
	}
	if (d->max_shared_per_sm > 0) {
		/* from compute capability 8.0 the system reserves 1 KiB per block */
		uint32_t per_block = shared_per_block + (d->cc_major >= 8 ? 1024 : 0);
		if (per_block > 0) {
			blocks = min_u32(blocks, d->max_shared_per_sm / round_up(per_block, 128));
		}
	}
	uint64_t occ = (uint64_t)blocks * warps * 10000 / d->max_warps_per_sm;
	return (uint16_t)(occ > 10000 ? 10000 : occ);
}
