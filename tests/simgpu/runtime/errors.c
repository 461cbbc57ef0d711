/* SPDX-License-Identifier: MIT */
/*
 * cudaGetErrorString texts. Names come from the generated table (error-names.c);
 * the descriptions below cover the errors a program meets in practice, in the
 * simulator's own words, and every other known code is described by its name.
 */
#include "tests/simgpu/runtime/sim.h"

static const struct {
	int code;
	const char *text;
} texts[] = {
	{ cudaSuccess, "no error" },
	{ cudaErrorInvalidValue, "invalid argument" },
	{ cudaErrorMemoryAllocation, "out of memory" },
	{ cudaErrorInitializationError, "initialization error" },
	{ cudaErrorInvalidConfiguration, "invalid configuration argument" },
	{ cudaErrorInvalidPitchValue, "invalid pitch argument" },
	{ cudaErrorInvalidSymbol, "invalid device symbol" },
	{ cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy" },
	{ cudaErrorMissingConfiguration, "__global__ function call is not configured" },
	{ cudaErrorInsufficientDriver,
	  "CUDA driver version is insufficient for CUDA runtime version" },
	{ cudaErrorInvalidDeviceFunction, "invalid device function" },
	{ cudaErrorNoDevice, "no CUDA-capable device is detected" },
	{ cudaErrorInvalidDevice, "invalid device ordinal" },
	{ cudaErrorUnsupportedLimit, "limit is not supported on this architecture" },
	{ cudaErrorInvalidResourceHandle, "invalid resource handle" },
	{ cudaErrorIllegalState, "the operation cannot be performed in the present state" },
	{ cudaErrorSymbolNotFound, "named symbol not found" },
	{ cudaErrorNotReady, "device not ready" },
	{ cudaErrorHostMemoryAlreadyRegistered,
	  "part or all of the requested memory range is already mapped" },
	{ cudaErrorHostMemoryNotRegistered,
	  "pointer does not correspond to a registered memory region" },
	{ cudaErrorNotSupported, "operation not supported" },
	{ cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing" },
	{ cudaErrorStreamCaptureInvalidated,
	  "operation failed due to a previous error during capture" },
	{ cudaErrorUnknown, "unknown error" },
};

const char *isc_sim_error_string(int err)
{
	const char *name;
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		if (texts[i].code == err) {
			return texts[i].text;
		}
	}
	name = isc_sim_error_name(err);
	return name ? name : "unrecognized error code";
}
