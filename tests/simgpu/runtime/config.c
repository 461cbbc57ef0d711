/* SPDX-License-Identifier: MIT */
/*
 * Every SIMGPU_* variable of the runtime, in one table read once at the first CUDA
 * call. A bad value gets one line on stderr and the documented default.
 * tests/simgpu/README.md documents the same table.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/simgpu/runtime/sim.h"

struct isc_sim_config isc_sim_cfg;

enum var_type {
	VAR_BOOL,
	VAR_INT,
	VAR_NS,
	VAR_GBPS,
	VAR_STRING,
};

struct var {
	const char *name;
	enum var_type type;
	const char *def;
	void *target;
	size_t size; /* strings: capacity of target */
};

#define C (&isc_sim_cfg)
static const struct var vars[] = {
	{ "SIMGPU_NO_DEVICE", VAR_BOOL, "0", &C->no_device, 0 },
	{ "SIMGPU_DEBUG", VAR_BOOL, "0", &C->debug, 0 },
	{ "SIMGPU_TRUTH", VAR_STRING, "", C->truth_path, sizeof(C->truth_path) },
	{ "SIMGPU_TRUTH_API", VAR_BOOL, "1", &C->truth_api, 0 },
	{ "SIMGPU_DEVICE_COUNT", VAR_INT, "1", &C->device_count, 0 },
	{ "SIMGPU_DEVICE_NAME", VAR_STRING, "NVIDIA H100 80GB HBM3 (simgpu)", C->device_name,
	  sizeof(C->device_name) },
	{ "SIMGPU_DEVICE_MEMORY", VAR_NS, "85520809984", &C->device_memory, 0 },
	{ "SIMGPU_LAUNCH_COST_NS", VAR_NS, "2500", &C->launch_cost_ns, 0 },
	{ "SIMGPU_API_COST_NS", VAR_NS, "1000", &C->api_cost_ns, 0 },
	{ "SIMGPU_LAUNCH_LATENCY_NS", VAR_NS, "3000", &C->launch_latency_ns, 0 },
	{ "SIMGPU_KERNEL_DEFAULT_NS", VAR_NS, "10000", &C->kernel_default_ns, 0 },
	{ "SIMGPU_COPY_LATENCY_NS", VAR_NS, "2000", &C->copy_latency_ns, 0 },
	{ "SIMGPU_MALLOC_COST_NS", VAR_NS, "20000", &C->malloc_cost_ns, 0 },
	{ "SIMGPU_MALLOC_NS_PER_MIB", VAR_NS, "1000", &C->malloc_ns_per_mib, 0 },
	{ "SIMGPU_FREE_COST_NS", VAR_NS, "10000", &C->free_cost_ns, 0 },
	{ "SIMGPU_HOST_ALLOC_NS_PER_MIB", VAR_NS, "5000", &C->host_alloc_cost_ns, 0 },
	{ "SIMGPU_SPIN_NS", VAR_NS, "50000", &C->spin_ns, 0 },
	{ "SIMGPU_GRAPH_NODE_GAP_NS", VAR_NS, "1000", &C->graph_node_gap_ns, 0 },
	{ "SIMGPU_QUEUE_DEPTH", VAR_NS, "0", &C->queue_depth, 0 }, /* a count */
	{ "SIMGPU_BW_H2D_PINNED_GBPS", VAR_GBPS, "25", &C->bw_h2d_pinned, 0 },
	{ "SIMGPU_BW_D2H_PINNED_GBPS", VAR_GBPS, "26", &C->bw_d2h_pinned, 0 },
	{ "SIMGPU_BW_H2D_PAGEABLE_GBPS", VAR_GBPS, "6", &C->bw_h2d_pageable, 0 },
	{ "SIMGPU_BW_D2H_PAGEABLE_GBPS", VAR_GBPS, "5", &C->bw_d2h_pageable, 0 },
	{ "SIMGPU_BW_D2D_GBPS", VAR_GBPS, "1500", &C->bw_d2d, 0 },
	{ "SIMGPU_BW_P2P_GBPS", VAR_GBPS, "150", &C->bw_p2p, 0 },
	{ "SIMGPU_BW_H2H_GBPS", VAR_GBPS, "10", &C->bw_h2h, 0 },
	{ "SIMGPU_BW_MEMSET_GBPS", VAR_GBPS, "2500", &C->bw_memset, 0 },
};
#undef C

void isc_sim_debug(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	if (!isc_sim_cfg.debug) {
		return;
	}
	n = snprintf(line, sizeof(line), "simgpu[%d]: ", (int)getpid());
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	fputs(line, stderr);
}

/* Parses @p text into @p v's target; false when it is not a valid value. */
static bool parse(const struct var *v, const char *text)
{
	char *end = NULL;

	errno = 0;
	switch (v->type) {
	case VAR_BOOL:
		if (strcmp(text, "0") && strcmp(text, "1")) {
			return false;
		}
		*(bool *)v->target = text[0] == '1';
		return true;
	case VAR_INT: {
		long n = strtol(text, &end, 10);

		if (errno || *end || end == text || n < 1 || n > SIM_MAX_DEVICES) {
			return false;
		}
		*(int *)v->target = (int)n;
		return true;
	}
	case VAR_NS: {
		unsigned long long n = strtoull(text, &end, 10);

		if (errno || *end || end == text || text[0] == '-') {
			return false;
		}
		*(uint64_t *)v->target = n;
		return true;
	}
	case VAR_GBPS: {
		double d = strtod(text, &end);

		if (errno || *end || end == text || !(d > 0.0)) {
			return false;
		}
		*(double *)v->target = d; /* GB/s is bytes per ns */
		return true;
	}
	case VAR_STRING:
		if (strlen(text) >= v->size) {
			return false;
		}
		strcpy(v->target, text);
		return true;
	}
	return false;
}

void isc_sim_config_load(void)
{
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const struct var *v = &vars[i];
		const char *text = getenv(v->name);

		parse(v, v->def);
		if (text && !parse(v, text)) {
			fprintf(stderr, "simgpu: %s=%s is not valid; using %s\n", v->name, text,
				v->def[0] ? v->def : "(empty)");
			parse(v, v->def);
		}
	}
}
