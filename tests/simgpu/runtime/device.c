/* SPDX-License-Identifier: MIT */
/*
 * The simulated devices: H100-like properties (SXM5, 80 GB HBM3), the current
 * device of each thread, and cudaDeviceGetAttribute answered from the same table.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "tests/simgpu/runtime/sim.h"

struct isc_sim_device isc_sim_devices[SIM_MAX_DEVICES];
bool isc_sim_serialize_kernels;

static __thread int current_device;
static struct CUstream_st legacy_streams[SIM_MAX_DEVICES];

int isc_sim_current_device(void)
{
	return current_device;
}

void isc_sim_set_current_device(int device)
{
	current_device = device;
}

void isc_sim_devices_init(void)
{
	int i;

	for (i = 0; i < SIM_MAX_DEVICES; i++) {
		struct isc_sim_device *d = &isc_sim_devices[i];
		struct CUstream_st *s = &legacy_streams[i];

		memset(d, 0, sizeof(*d));
		memset(s, 0, sizeof(*s));
		d->id = i;
		d->legacy = s;
		s->magic = 0; /* never a valid user handle: reached as NULL only */
		s->id = SIM_LEGACY_STREAM_ID;
		s->device = i;
		s->legacy = true;
	}
}

bool isc_sim_device_blocking_sync(int device)
{
	return (isc_sim_devices[device].flags & cudaDeviceScheduleMask) ==
	       cudaDeviceScheduleBlockingSync;
}

static void fill_limits(struct cudaDeviceProp *p)
{
	p->sharedMemPerBlock = 48 * 1024;
	p->regsPerBlock = 65536;
	p->warpSize = 32;
	p->memPitch = 2147483647;
	p->maxThreadsPerBlock = 1024;
	p->maxThreadsDim[0] = 1024;
	p->maxThreadsDim[1] = 1024;
	p->maxThreadsDim[2] = 64;
	p->maxGridSize[0] = 2147483647;
	p->maxGridSize[1] = 65535;
	p->maxGridSize[2] = 65535;
	p->totalConstMem = 65536;
	p->major = 9;
	p->minor = 0;
	p->textureAlignment = 512;
	p->texturePitchAlignment = 32;
	p->multiProcessorCount = 132;
	p->maxThreadsPerMultiProcessor = 2048;
	p->maxBlocksPerMultiProcessor = 32;
	p->regsPerMultiprocessor = 65536;
	p->sharedMemPerMultiprocessor = 228 * 1024;
	p->sharedMemPerBlockOptin = 227 * 1024;
	p->reservedSharedMemPerBlock = 1024;
	p->l2CacheSize = 50 * 1024 * 1024;
	p->persistingL2CacheMaxSize = 31457280;
	p->accessPolicyMaxWindowSize = 134213632;
	p->memoryBusWidth = 5120;
	p->surfaceAlignment = 512;
}

static void fill_features(struct cudaDeviceProp *p)
{
	p->canMapHostMemory = 1;
	p->concurrentKernels = 1;
	p->ECCEnabled = 1;
	p->asyncEngineCount = 2;
	p->unifiedAddressing = 1;
	p->streamPrioritiesSupported = 1;
	p->globalL1CacheSupported = 1;
	p->localL1CacheSupported = 1;
	p->managedMemory = 1;
	p->concurrentManagedAccess = 1;
	p->computePreemptionSupported = 1;
	p->canUseHostPointerForRegisteredMem = 1;
	p->cooperativeLaunch = 1;
	p->directManagedMemAccessFromHost = 0;
	p->hostRegisterSupported = 1;
	p->sparseCudaArraySupported = 1;
	p->memoryPoolsSupported = 1;
	p->clusterLaunch = 1;
	p->ipcEventSupported = 1;
	p->deviceNumaId = -1;
	p->hostNumaId = -1;
}

int isc_sim_fill_props(int device, struct cudaDeviceProp *p)
{
	if (device < 0 || device >= isc_sim_cfg.device_count) {
		return -1;
	}
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", isc_sim_cfg.device_name);
	memcpy(p->uuid.bytes, "simgpu-device-", 14);
	p->uuid.bytes[14] = '0' + (char)device;
	p->uuid.bytes[15] = 0x5a;
	p->totalGlobalMem = isc_sim_cfg.device_memory;
	fill_limits(p);
	fill_features(p);
	p->pciBusID = 0x18 + device * 0x10;
	p->pciDomainID = 0;
	p->pciDeviceID = 0;
	p->gpuPciDeviceID = 0x233010de;
	p->gpuPciSubsystemID = 0x16c110de;
	return 0;
}

/* Attributes that are not fields of cudaDeviceProp in CUDA 13. */
static bool extra_attribute(enum cudaDeviceAttr attr, int *value)
{
	switch (attr) {
	case cudaDevAttrClockRate:
		*value = 1980000; /* kHz */
		return true;
	case cudaDevAttrMemoryClockRate:
		*value = 2619000;
		return true;
	case cudaDevAttrGpuOverlap:
		*value = 1;
		return true;
	case cudaDevAttrSingleToDoublePrecisionPerfRatio:
		*value = 2;
		return true;
	case cudaDevAttrComputeMode:
	case cudaDevAttrKernelExecTimeout:
	case cudaDevAttrIntegrated:
	case cudaDevAttrTccDriver:
		*value = 0;
		return true;
	default:
		return false;
	}
}

/* Attributes read from a cudaDeviceProp field (int or size_t). */
#define PROP(attr, field)                                           \
	{                                                           \
		attr, offsetof(struct cudaDeviceProp, field),       \
			sizeof(((struct cudaDeviceProp *)0)->field) \
	}

static const struct {
	enum cudaDeviceAttr attr;
	size_t offset;
	size_t size;
} from_props[] = {
	PROP(cudaDevAttrMaxThreadsPerBlock, maxThreadsPerBlock),
	PROP(cudaDevAttrMaxBlockDimX, maxThreadsDim[0]),
	PROP(cudaDevAttrMaxBlockDimY, maxThreadsDim[1]),
	PROP(cudaDevAttrMaxBlockDimZ, maxThreadsDim[2]),
	PROP(cudaDevAttrMaxGridDimX, maxGridSize[0]),
	PROP(cudaDevAttrMaxGridDimY, maxGridSize[1]),
	PROP(cudaDevAttrMaxGridDimZ, maxGridSize[2]),
	PROP(cudaDevAttrMaxSharedMemoryPerBlock, sharedMemPerBlock),
	PROP(cudaDevAttrTotalConstantMemory, totalConstMem),
	PROP(cudaDevAttrWarpSize, warpSize),
	PROP(cudaDevAttrMaxPitch, memPitch),
	PROP(cudaDevAttrMaxRegistersPerBlock, regsPerBlock),
	PROP(cudaDevAttrTextureAlignment, textureAlignment),
	PROP(cudaDevAttrMultiProcessorCount, multiProcessorCount),
	PROP(cudaDevAttrCanMapHostMemory, canMapHostMemory),
	PROP(cudaDevAttrConcurrentKernels, concurrentKernels),
	PROP(cudaDevAttrEccEnabled, ECCEnabled),
	PROP(cudaDevAttrPciBusId, pciBusID),
	PROP(cudaDevAttrPciDeviceId, pciDeviceID),
	PROP(cudaDevAttrPciDomainId, pciDomainID),
	PROP(cudaDevAttrGlobalMemoryBusWidth, memoryBusWidth),
	PROP(cudaDevAttrL2CacheSize, l2CacheSize),
	PROP(cudaDevAttrMaxThreadsPerMultiProcessor, maxThreadsPerMultiProcessor),
	PROP(cudaDevAttrAsyncEngineCount, asyncEngineCount),
	PROP(cudaDevAttrUnifiedAddressing, unifiedAddressing),
	PROP(cudaDevAttrComputeCapabilityMajor, major),
	PROP(cudaDevAttrComputeCapabilityMinor, minor),
	PROP(cudaDevAttrStreamPrioritiesSupported, streamPrioritiesSupported),
	PROP(cudaDevAttrGlobalL1CacheSupported, globalL1CacheSupported),
	PROP(cudaDevAttrLocalL1CacheSupported, localL1CacheSupported),
	PROP(cudaDevAttrMaxSharedMemoryPerMultiprocessor, sharedMemPerMultiprocessor),
	PROP(cudaDevAttrMaxRegistersPerMultiprocessor, regsPerMultiprocessor),
	PROP(cudaDevAttrManagedMemory, managedMemory),
	PROP(cudaDevAttrConcurrentManagedAccess, concurrentManagedAccess),
	PROP(cudaDevAttrComputePreemptionSupported, computePreemptionSupported),
	PROP(cudaDevAttrCooperativeLaunch, cooperativeLaunch),
	PROP(cudaDevAttrMaxSharedMemoryPerBlockOptin, sharedMemPerBlockOptin),
	PROP(cudaDevAttrHostRegisterSupported, hostRegisterSupported),
	PROP(cudaDevAttrMaxBlocksPerMultiprocessor, maxBlocksPerMultiProcessor),
	PROP(cudaDevAttrMaxPersistingL2CacheSize, persistingL2CacheMaxSize),
	PROP(cudaDevAttrMaxAccessPolicyWindowSize, accessPolicyMaxWindowSize),
	PROP(cudaDevAttrReservedSharedMemoryPerBlock, reservedSharedMemPerBlock),
	PROP(cudaDevAttrMemoryPoolsSupported, memoryPoolsSupported),
	PROP(cudaDevAttrClusterLaunch, clusterLaunch),
	PROP(cudaDevAttrIpcEventSupport, ipcEventSupported),
	PROP(cudaDevAttrNumaId, deviceNumaId),
	PROP(cudaDevAttrHostNumaId, hostNumaId),
};

int isc_sim_attribute(int device, enum cudaDeviceAttr attr, int *value)
{
	struct cudaDeviceProp p;
	size_t i;

	if (isc_sim_fill_props(device, &p) < 0) {
		return -1;
	}
	if (extra_attribute(attr, value)) {
		return 0;
	}
	for (i = 0; i < sizeof(from_props) / sizeof(from_props[0]); i++) {
		const char *field = (const char *)&p + from_props[i].offset;

		if (from_props[i].attr != attr) {
			continue;
		}
		if (from_props[i].size == sizeof(size_t)) {
			*value = (int)*(const size_t *)field;
		} else {
			*value = *(const int *)field;
		}
		return 0;
	}
	/* A valid attribute the model has no opinion on: unsupported, 0. */
	if ((int)attr <= 0 || attr >= cudaDevAttrMax) {
		return -1;
	}
	*value = 0;
	return 0;
}
