/* SPDX-License-Identifier: MIT */
#include "analyzer/model/thresholds.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const struct isc_thr_def defs[ISC_THR__COUNT] = {
	[ISC_THR_GPU_BOUND_SHARE] = { "verdict.gpu_bound_share", 0.60, 0, 1,
				      "gpu_compute share of the window at or above which the trace "
				      "is gpu_bound" },
	[ISC_THR_CPU_BOUND_SHARE] = { "verdict.cpu_bound_share", 0.60, 0, 1,
				      "share of the window with neither kernels nor copies on the "
				      "GPU at or above which "
				      "the trace is cpu_bound" },
	[ISC_THR_CPU_CAUSE_SHARE] = { "verdict.cpu_cause_share", 0.40, 0, 1,
				      "and cpu_bound needs one host-side category "
				      "(cpu_preprocessing, "
				      "framework_overhead or idle) of at least this share and of "
				      "gpu_compute's" },
	[ISC_THR_MEMORY_BOUND_SHARE] = { "verdict.memory_bound_share", 0.30, 0, 1,
					 "h2d_copy + d2h_copy share at or above which (and above "
					 "gpu_compute) the trace is "
					 "memory_bound" },
	[ISC_THR_OVERLAP_BUSY_SHARE] = { "verdict.overlap_busy_share", 0.60, 0, 1,
					 "when the GPU (kernels and copies) and the host "
					 "(computing) are each busy for at "
					 "least this share of the window, the work is pipelined: "
					 "balanced" },
	[ISC_THR_KERNEL_WAIT_US] = { "gpu.kernel_wait_us", 30, 0, 1e9,
				     "GPU gaps shorter than this are kernel wait (HTA's "
				     "consecutive kernel delay)" },
	[ISC_THR_LAUNCH_RUNTIME_US] = { "launch.runtime_cutoff_us", 50, 0, 1e9,
					"launch calls longer than this are slow (HTA "
					"runtime_cutoff)" },
	[ISC_THR_LAUNCH_DELAY_US] = { "launch.delay_cutoff_us", 100, 0, 1e9,
				      "launch delays longer than this are outliers (HTA "
				      "launch_delay_cutoff)" },
	[ISC_THR_CPU_BUSY_UTIL] = { "timeline.cpu_busy_utilisation", 0.5, 0, 1,
				    "between two CPU-time samples a thread above this utilisation "
				    "computes, below it "
				    "waits" },
	[ISC_THR_MIN_WINDOW_MS] = { "confidence.min_window_ms", 100, 0, 1e9,
				    "windows shorter than this lower the confidence" },
	[ISC_THR_MIN_IMPROVEMENT_PCT] = { "rules.min_improvement_pct", 0.5, 0, 100,
					  "suggestions estimated below this improvement are not "
					  "reported" },
	[ISC_THR_PINNED_SPEEDUP] = { "copy.pinned_speedup", 2.0, 1, 100,
				     "pinned/pageable bandwidth ratio assumed when the trace has "
				     "no pinned copy to "
				     "measure" },
	[ISC_THR_COPY_MIN_SHARE] = { "copy.min_share", 0.02, 0, 1,
				     "copy rules look at copies that take at least this share of "
				     "the window" },
	[ISC_THR_OVERLAP_MAX] = { "copy.overlap_max", 0.10, 0, 1,
				  "copy.no-overlap fires when less than this fraction of copy time "
				  "overlaps "
				  "kernels" },
	[ISC_THR_TINY_KERNEL_FRACTION] = { "launch.tiny_kernel_fraction", 0.5, 0, 1,
					   "launch.tiny-kernels fires when at least this fraction "
					   "of launches are short "
					   "kernels (GPU time below the launch call's time)" },
	[ISC_THR_TINY_KERNEL_MIN_COUNT] = { "launch.tiny_kernel_min_count", 20, 0, 1e12,
					    "and there are at least this many of them" },
	[ISC_THR_SYNC_PER_LAUNCH] = { "sync.per_launch", 0.5, 0, 1e6,
				      "sync.excessive fires at this many blocking synchronisations "
				      "per launch" },
	[ISC_THR_SYNC_MIN_COUNT] = { "sync.min_count", 10, 0, 1e12,
				     "and at least this many synchronisations" },
	[ISC_THR_WARMUP_FRACTION] = { "alloc.warmup_fraction", 0.10, 0, 1,
				      "the first part of the window that is warm-up for the "
				      "allocation rules" },
	[ISC_THR_ALLOC_MIN_COUNT] = { "alloc.min_count", 5, 0, 1e12,
				      "alloc.device-steady-state fires at this many device "
				      "allocations after warm-up" },
	[ISC_THR_GPU_GAP_SHARE] = { "gpu.gap_share", 0.05, 0, 1,
				    "gpu.gaps fires when GPU idle time that is neither host wait "
				    "nor kernel wait "
				    "reaches this share" },
	[ISC_THR_LOW_OCCUPANCY] = { "gpu.low_occupancy", 0.25, 0, 1,
				    "kernels below this theoretical occupancy are low-occupancy "
				    "kernels" },
	[ISC_THR_OCCUPANCY_TARGET] = { "gpu.occupancy_target", 0.5, 0, 1,
				       "occupancy assumed reachable when estimating the gain" },
	[ISC_THR_LOW_OCC_SHARE] = { "gpu.low_occupancy_share", 0.10, 0, 1,
				    "gpu.low-occupancy fires when such kernels take this share of "
				    "GPU time" },
	[ISC_THR_CPU_PRE_SHARE] = { "host.cpu_preprocessing_share", 0.15, 0, 1,
				    "host.cpu-preprocessing fires at this cpu_preprocessing "
				    "share" },
	[ISC_THR_PARALLEL_WORKERS] = { "host.parallel_workers", 4, 1, 1024,
				       "workers assumed at most when estimating a parallelised "
				       "preprocessing (capped by "
				       "system_info.cpu_count)" },
	[ISC_THR_MALLOC_RATE] = { "host.malloc_rate", 100000, 0, 1e12,
				  "alloc.host-churn fires at this many host allocations per "
				  "second" },
	[ISC_THR_WAIT_SHARE] = { "host.wait_share", 0.05, 0, 1,
				 "host.io-wait, host.input-wait and host.lock-contention fire when "
				 "such waits leave the GPU idle for this share of the window" },
	[ISC_THR_DROPPED_FRACTION] = { "confidence.dropped_fraction", 0.10, 0, 1,
				       "dropped events at this fraction halve the confidence" },
	[ISC_THR_QUEUE_FULL_DEPTH] = { "launch.queue_full_depth", 64, 1, 1e9,
				       "a slow launch that starts with at least this many "
				       "operations in flight (and at least 90 % of the deepest "
				       "queue seen) waits for a free slot of a full launch queue" },
	[ISC_THR_GRAPH_NODE_GAP_US] = { "launch.graph_node_gap_us", 1.0, 0, 1e6,
					"the what-if of a CUDA graph (launch.tiny-kernels, "
					"--what-if "
					"graph): the device still spaces the graph's nodes this "
					"far "
					"apart" },
	[ISC_THR_MIN_GAIN_PCT] = { "verdict.min_gain_pct", 5, 0, 100,
				   "a lever (GPU work, host code, copies, ... twice as fast) that "
				   "gains less than this percentage of the window moves nothing: "
				   "when none gains more, the window is idle" },
	[ISC_THR_BALANCE_RATIO] = { "verdict.balance_ratio", 0.6, 0, 1,
				    "a second lever gaining at least this fraction of the first's "
				    "gain makes the verdict balanced" },
	[ISC_THR_STARVED_RATIO] = { "verdict.cpu_starved_ratio", 0.5, 0, 1e6,
				    "a thread whose run-queue wait is at least this multiple of "
				    "its CPU time is starved of CPU (cpu_starved lever)" },
};

const struct isc_thr_def *isc_thr_defs(void)
{
	return defs;
}

void isc_thresholds_init(struct isc_thresholds *th)
{
	for (int i = 0; i < ISC_THR__COUNT; i++) {
		th->v[i] = defs[i].dflt;
	}
	th->overridden = 0;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t') {
		s++;
	}
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) {
		s[--n] = '\0';
	}
	return s;
}

static int parse_line(struct isc_thresholds *th, char *line, const char **why)
{
	char *hash = strchr(line, '#');
	if (hash != NULL) {
		*hash = '\0';
	}
	char *s = trim(line);
	if (*s == '\0') {
		return 0;
	}
	char *eq = strchr(s, '=');
	if (eq == NULL) {
		*why = "expected 'key = value'";
		return -1;
	}
	*eq = '\0';
	char *key = trim(s), *val = trim(eq + 1), *end = NULL;
	for (int i = 0; i < ISC_THR__COUNT; i++) {
		if (strcmp(defs[i].key, key) != 0) {
			continue;
		}
		errno = 0;
		double v = strtod(val, &end);
		if (*val == '\0' || *end != '\0' || errno != 0 || !isfinite(v)) {
			*why = "the value is not a number";
			return -1;
		}
		if (v < defs[i].min || v > defs[i].max) {
			*why = "the value is out of range";
			return -1;
		}
		th->v[i] = v;
		th->overridden++;
		return 0;
	}
	*why = "unknown threshold (see --list-thresholds)";
	return -1;
}

int isc_thresholds_parse(struct isc_thresholds *th, const char *label, const char *text, size_t n,
			 struct isc_diag *d)
{
	size_t lineno = 0, pos = 0;
	while (pos < n) {
		size_t end = pos;
		while (end < n && text[end] != '\n') {
			end++;
		}
		lineno++;
		char line[512];
		if (end - pos >= sizeof(line)) {
			isc_diag_set(d, "%s:%zu: line too long", label, lineno);
			return -EINVAL;
		}
		memcpy(line, text + pos, end - pos);
		line[end - pos] = '\0';
		const char *why = NULL;
		if (memchr(line, '\0', end - pos) != NULL || parse_line(th, line, &why) < 0) {
			isc_diag_set(d, "%s:%zu: %s", label, lineno, why ? why : "binary data");
			return -EINVAL;
		}
		pos = end + 1;
	}
	return 0;
}

int isc_thresholds_load(struct isc_thresholds *th, const char *path, struct isc_diag *d)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		isc_diag_set(d, "%s: cannot open: %s", path, strerror(errno));
		return -errno;
	}
	char *buf = malloc(1 << 20);
	size_t n = buf != NULL ? fread(buf, 1, 1 << 20, f) : 0;
	bool too_big = n == (1 << 20);
	fclose(f);
	int r;
	if (buf == NULL) {
		isc_diag_set(d, "%s: out of memory", path);
		r = -ENOMEM;
	} else if (too_big) {
		isc_diag_set(d, "%s: larger than 1 MiB: not a thresholds file", path);
		r = -EINVAL;
	} else {
		r = isc_thresholds_parse(th, path, buf, n, d);
	}
	free(buf);
	return r;
}

void isc_thresholds_print(const struct isc_thresholds *th, FILE *f)
{
	for (int i = 0; i < ISC_THR__COUNT; i++) {
		fprintf(f, "%s = %g\t# %s\n", defs[i].key, th->v[i], defs[i].doc);
	}
}
