/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the thresholds file parser. */
#include <stddef.h>
#include <stdint.h>

#include "analyzer/model/thresholds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct isc_thresholds th;
	struct isc_diag d;
	isc_thresholds_init(&th);
	isc_thresholds_parse(&th, "fuzz", (const char *)data, size, &d);
	return 0;
}
