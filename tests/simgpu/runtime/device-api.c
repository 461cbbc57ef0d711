/* SPDX-License-Identifier: MIT */
/*
 * Device management, versions, errors and device-wide synchronisation: the
 * exported functions. Calls that never initialise the real driver (versions,
 * error strings, last error) do not initialise the simulator either, so they
 * do not trigger CUDA_INJECTION64_PATH.
 */
#include <cuda_profiler_api.h>
#include <cupti_activity.h>
#include <string.h>

#include "tests/simgpu/runtime/sim.h"

#define RUNTIME_VERSION 13000
#define DRIVER_VERSION 13000

static size_t limits[SIM_MAX_DEVICES][cudaLimitPersistingL2CacheSize + 1];

static bool valid_device(int device)
{
	return device >= 0 && device < isc_sim_cfg.device_count;
}

SIM_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaGetDeviceCount_v3020), "cudaGetDeviceCount", 0);

	if (!count) {
		err = cudaErrorInvalidValue;
	} else {
		*count = err == cudaSuccess ? isc_sim_cfg.device_count : 0;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaGetDevice(int *device)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaGetDevice_v3020), "cudaGetDevice", 0);

	if (err == cudaSuccess) {
		if (device) {
			*device = isc_sim_current_device();
		} else {
			err = cudaErrorInvalidValue;
		}
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaSetDevice(int device)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaSetDevice_v3020), "cudaSetDevice", 0);

	if (err == cudaSuccess) {
		if (valid_device(device)) {
			isc_sim_set_current_device(device);
		} else {
			err = cudaErrorInvalidDevice;
		}
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaInitDevice_v12000), "cudaInitDevice", 0);

	if (err == cudaSuccess && !valid_device(device)) {
		err = cudaErrorInvalidDevice;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaGetDeviceProperties_v3020),
					"cudaGetDeviceProperties", 0);

	if (err == cudaSuccess) {
		if (!prop) {
			err = cudaErrorInvalidValue;
		} else if (isc_sim_fill_props(device, prop) < 0) {
			err = cudaErrorInvalidDevice;
		}
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaDeviceGetAttribute_v5000),
					"cudaDeviceGetAttribute", 0);

	if (err == cudaSuccess) {
		if (!value) {
			err = cudaErrorInvalidValue;
		} else if (!valid_device(device)) {
			err = cudaErrorInvalidDevice;
		} else if (isc_sim_attribute(device, attr, value) < 0) {
			err = cudaErrorInvalidValue;
		}
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaRuntimeGetVersion(int *version)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaRuntimeGetVersion_v3020),
					"cudaRuntimeGetVersion", SIM_CALL_NO_INIT);

	if (version) {
		*version = RUNTIME_VERSION;
	} else {
		err = cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaDriverGetVersion(int *version)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaDriverGetVersion_v3020),
					"cudaDriverGetVersion", SIM_CALL_NO_INIT);

	if (version) {
		*version = DRIVER_VERSION;
	} else {
		err = cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT const char *cudaGetErrorString(cudaError_t error)
{
	struct isc_sim_call c;
	const char *text;

	isc_sim_enter(&c, SIM_CBID(cudaGetErrorString_v3020), "cudaGetErrorString",
		      SIM_CALL_NO_INIT);
	text = isc_sim_error_string(error);
	isc_sim_leave(&c, cudaSuccess);
	return text;
}

SIM_EXPORT const char *cudaGetErrorName(cudaError_t error)
{
	struct isc_sim_call c;
	const char *name;

	isc_sim_enter(&c, SIM_CBID(cudaGetErrorName_v6050), "cudaGetErrorName", SIM_CALL_NO_INIT);
	name = isc_sim_error_name(error);
	isc_sim_leave(&c, cudaSuccess);
	return name ? name : "cudaErrorUnknown";
}

static cudaError_t last_error_call(uint32_t cbid, const char *name, bool reset)
{
	struct isc_sim_call c;
	cudaError_t err;

	isc_sim_enter(&c, cbid, name, SIM_CALL_NO_INIT);
	err = isc_sim_get_last_error(reset);
	c.quiet = true;
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaGetLastError(void)
{
	return last_error_call(SIM_CBID(cudaGetLastError_v3020), "cudaGetLastError", true);
}

SIM_EXPORT cudaError_t cudaPeekAtLastError(void)
{
	return last_error_call(SIM_CBID(cudaPeekAtLastError_v3020), "cudaPeekAtLastError", false);
}

SIM_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaDeviceSynchronize_v3020),
					"cudaDeviceSynchronize", 0);
	int device = isc_sim_current_device();
	uint64_t until;

	if (err == cudaSuccess) {
		pthread_mutex_lock(&isc_sim_lock);
		until = isc_sim_devices[device].max_end;
		pthread_mutex_unlock(&isc_sim_lock);
		isc_sim_block(&c, until, !isc_sim_device_blocking_sync(device));
		isc_sim_notify_sync(&c, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 0,
				    0, device);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaDeviceReset(void)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaDeviceReset_v3020), "cudaDeviceReset", 0);
	int device = isc_sim_current_device();
	uint64_t until;

	if (err == cudaSuccess) {
		pthread_mutex_lock(&isc_sim_lock);
		until = isc_sim_devices[device].max_end;
		pthread_mutex_unlock(&isc_sim_lock);
		isc_sim_block(&c, until, true);
		pthread_mutex_lock(&isc_sim_lock);
		isc_sim_mem_reset(device);
		isc_sim_devices[device].flags = 0;
		pthread_mutex_unlock(&isc_sim_lock);
		isc_sim_get_last_error(true);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaSetDeviceFlags_v3020), "cudaSetDeviceFlags", 0);

	if (err == cudaSuccess) {
		pthread_mutex_lock(&isc_sim_lock);
		isc_sim_devices[isc_sim_current_device()].flags = flags;
		pthread_mutex_unlock(&isc_sim_lock);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaGetDeviceFlags(unsigned int *flags)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaGetDeviceFlags_v7000), "cudaGetDeviceFlags", 0);

	if (err == cudaSuccess) {
		if (!flags) {
			err = cudaErrorInvalidValue;
		} else {
			*flags = isc_sim_devices[isc_sim_current_device()].flags;
		}
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaDeviceGetStreamPriorityRange_v5050),
					"cudaDeviceGetStreamPriorityRange", 0);

	if (err == cudaSuccess) {
		if (leastPriority) {
			*leastPriority = 0;
		}
		if (greatestPriority) {
			*greatestPriority = -5;
		}
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaChooseDevice(int *device, const struct cudaDeviceProp *prop)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaChooseDevice_v3020), "cudaChooseDevice", 0);

	if (err == cudaSuccess) {
		if (!device || !prop) {
			err = cudaErrorInvalidValue;
		} else {
			*device = 0;
		}
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaDeviceGetLimit(size_t *value, enum cudaLimit limit)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaDeviceGetLimit_v3020), "cudaDeviceGetLimit", 0);

	if (err == cudaSuccess) {
		if (!value || (unsigned)limit > cudaLimitPersistingL2CacheSize) {
			err = cudaErrorUnsupportedLimit;
		} else {
			*value = limits[isc_sim_current_device()][limit];
		}
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaDeviceSetLimit_v3020), "cudaDeviceSetLimit", 0);

	if (err == cudaSuccess) {
		if ((unsigned)limit > cudaLimitPersistingL2CacheSize) {
			err = cudaErrorUnsupportedLimit;
		} else {
			limits[isc_sim_current_device()][limit] = value;
		}
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaDeviceCanAccessPeer_v4000),
					"cudaDeviceCanAccessPeer", 0);

	if (err == cudaSuccess) {
		if (!canAccessPeer) {
			err = cudaErrorInvalidValue;
		} else if (!valid_device(device) || !valid_device(peerDevice)) {
			err = cudaErrorInvalidDevice;
		} else {
			*canAccessPeer = device != peerDevice;
		}
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaDeviceEnablePeerAccess_v4000),
					"cudaDeviceEnablePeerAccess", 0);

	if (err == cudaSuccess && !valid_device(peerDevice)) {
		err = cudaErrorInvalidDevice;
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaProfilerStart(void)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaProfilerStart_v4000), "cudaProfilerStart", 0);

	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaProfilerStop(void)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaProfilerStop_v4000), "cudaProfilerStop", 0);

	return isc_sim_leave(&c, err);
}

/* No driver library exists to hand entry points from: report every symbol missing. */
SIM_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr,
					       unsigned long long flags,
					       enum cudaDriverEntryPointQueryResult *driverStatus)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaGetDriverEntryPoint_v11030),
					"cudaGetDriverEntryPoint", 0);

	if (funcPtr) {
		*funcPtr = NULL;
	}
	if (driverStatus) {
		*driverStatus = cudaDriverEntryPointSymbolNotFound;
	}
	return isc_sim_leave(&c, err);
}
