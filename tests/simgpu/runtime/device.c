/* SPDX-License-Identifier: MIT */
/*
 * The simulated devices: H100-like properties (SXM5, 80 GB HBM3), the current
 * device of each thread, and cudaDeviceGetAttribute answered from the same table.
 */
#include <stdio.h>
#include <string.h>

#include "sim.h"

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
		s->magic = 0;		/* never a valid user handle: reached as NULL only */
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
		*value = 1980000;	/* kHz */
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

int isc_sim_attribute(int device, enum cudaDeviceAttr attr, int *value)
{
	struct cudaDeviceProp p;

	if (isc_sim_fill_props(device, &p) < 0) {
		return -1;
	}
	if (extra_attribute(attr, value)) {
		return 0;
	}
	switch (attr) {
	case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
	case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
	case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
	case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
	case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
	case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
	case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
	case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int)p.sharedMemPerBlock; break;
	case cudaDevAttrTotalConstantMemory: *value = (int)p.totalConstMem; break;
	case cudaDevAttrWarpSize: *value = p.warpSize; break;
	case cudaDevAttrMaxPitch: *value = (int)p.memPitch; break;
	case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
	case cudaDevAttrTextureAlignment: *value = (int)p.textureAlignment; break;
	case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
	case cudaDevAttrCanMapHostMemory: *value = p.canMapHostMemory; break;
	case cudaDevAttrConcurrentKernels: *value = p.concurrentKernels; break;
	case cudaDevAttrEccEnabled: *value = p.ECCEnabled; break;
	case cudaDevAttrPciBusId: *value = p.pciBusID; break;
	case cudaDevAttrPciDeviceId: *value = p.pciDeviceID; break;
	case cudaDevAttrPciDomainId: *value = p.pciDomainID; break;
	case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; break;
	case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
	case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
	case cudaDevAttrAsyncEngineCount: *value = p.asyncEngineCount; break;
	case cudaDevAttrUnifiedAddressing: *value = p.unifiedAddressing; break;
	case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
	case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
	case cudaDevAttrStreamPrioritiesSupported: *value = p.streamPrioritiesSupported; break;
	case cudaDevAttrGlobalL1CacheSupported: *value = p.globalL1CacheSupported; break;
	case cudaDevAttrLocalL1CacheSupported: *value = p.localL1CacheSupported; break;
	case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
		*value = (int)p.sharedMemPerMultiprocessor;
		break;
	case cudaDevAttrMaxRegistersPerMultiprocessor: *value = p.regsPerMultiprocessor; break;
	case cudaDevAttrManagedMemory: *value = p.managedMemory; break;
	case cudaDevAttrConcurrentManagedAccess: *value = p.concurrentManagedAccess; break;
	case cudaDevAttrComputePreemptionSupported: *value = p.computePreemptionSupported; break;
	case cudaDevAttrCooperativeLaunch: *value = p.cooperativeLaunch; break;
	case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = (int)p.sharedMemPerBlockOptin; break;
	case cudaDevAttrHostRegisterSupported: *value = p.hostRegisterSupported; break;
	case cudaDevAttrMaxBlocksPerMultiprocessor: *value = p.maxBlocksPerMultiProcessor; break;
	case cudaDevAttrMaxPersistingL2CacheSize: *value = p.persistingL2CacheMaxSize; break;
	case cudaDevAttrMaxAccessPolicyWindowSize: *value = p.accessPolicyMaxWindowSize; break;
	case cudaDevAttrReservedSharedMemoryPerBlock:
		*value = (int)p.reservedSharedMemPerBlock;
		break;
	case cudaDevAttrMemoryPoolsSupported: *value = p.memoryPoolsSupported; break;
	case cudaDevAttrClusterLaunch: *value = p.clusterLaunch; break;
	case cudaDevAttrIpcEventSupport: *value = p.ipcEventSupported; break;
	case cudaDevAttrNumaId: *value = p.deviceNumaId; break;
	case cudaDevAttrHostNumaId: *value = p.hostNumaId; break;
	default:
		/* A valid attribute the model has no opinion on: unsupported, 0. */
		if ((int)attr <= 0 || attr >= cudaDevAttrMax) {
			return -1;
		}
		*value = 0;
		break;
	}
	return 0;
}
