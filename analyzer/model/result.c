/* SPDX-License-Identifier: MIT */
/* The analysis result's names, orders and lifetime (result.h). */
#include "analyzer/model/result.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const enum isc_category isc_category_order[ISC_CAT__COUNT] = {
	ISC_CAT_CPU, ISC_CAT_H2D, ISC_CAT_GPU, ISC_CAT_D2H, ISC_CAT_IDLE, ISC_CAT_FRAMEWORK,
};

const char *isc_category_name(enum isc_category c)
{
	static const char *const names[ISC_CAT__COUNT] = {
		[ISC_CAT_CPU] = "cpu_preprocessing",
		[ISC_CAT_H2D] = "h2d_copy",
		[ISC_CAT_GPU] = "gpu_compute",
		[ISC_CAT_D2H] = "d2h_copy",
		[ISC_CAT_IDLE] = "idle",
		[ISC_CAT_FRAMEWORK] = "framework_overhead",
	};
	return c < ISC_CAT__COUNT ? names[c] : "unknown";
}

const char *isc_bound_name(enum isc_bound b)
{
	static const char *const names[ISC_BOUND__COUNT] = {
		"unknown", "cpu_bound",	  "gpu_bound", "memory_bound", "balanced",
		"idle",	   "cpu_starved", "io_bound",  "lock_bound",   "child_bound",
	};
	return b < ISC_BOUND__COUNT ? names[b] : "unknown";
}

enum isc_wait_kind isc_wait_kind_of(const char *n)
{
	static const char *const input[] = {
		"poll", "ppoll", "select", "pselect", "epoll", "accept"
	};
	static const char *const lock[] = { "pthread_mutex", "pthread_cond", "pthread_rwlock",
					    "sem_",	     "futex",	     "pthread_join" };
	static const char *const child[] = { "wait4", "waitpid", "waitid", "wait", "wait3" };
	for (size_t i = 0; i < sizeof(child) / sizeof(child[0]); i++) {
		if (strcmp(n, child[i]) == 0) {
			return ISC_WK_CHILD;
		}
	}
	for (size_t i = 0; i < sizeof(input) / sizeof(input[0]); i++) {
		if (strncmp(n, input[i], strlen(input[i])) == 0) {
			return ISC_WK_INPUT;
		}
	}
	for (size_t i = 0; i < sizeof(lock) / sizeof(lock[0]); i++) {
		if (strncmp(n, lock[i], strlen(lock[i])) == 0) {
			return ISC_WK_LOCK;
		}
	}
	return ISC_WK_OTHER;
}

bool isc_has_gpu_work(const struct isc_analysis *a)
{
	uint64_t n = a->count[ISC_T_CUDA_API];
	for (unsigned k = ISC_T_KERNEL; k < ISC_T__COUNT; k++) {
		n += a->count[k];
	}
	return n > 0;
}

const char *isc_stat_group_name(enum isc_stat_group g)
{
	static const char *const names[ISC_SG__COUNT] = {
		[ISC_SG_KERNEL] = "kernels",	[ISC_SG_GPU_COPY] = "gpu_copies",
		[ISC_SG_CUDA_API] = "cuda_api", [ISC_SG_SCOPE] = "scopes",
		[ISC_SG_CPU_OP] = "cpu_ops",	[ISC_SG_SYSCALL] = "syscalls",
	};
	return g < ISC_SG__COUNT ? names[g] : "unknown";
}

double isc_share(const struct isc_analysis *a, int64_t ns)
{
	int64_t w = a->window.end - a->window.start;
	return w > 0 ? (double)ns / (double)w : 0.0;
}

void isc_top_names(const int64_t *by_name, size_t n, struct isc_named_ns *out, int k)
{
	memset(out, 0, sizeof(*out) * (size_t)k);
	for (size_t i = 0; i < n; i++) {
		if (by_name[i] <= 0) {
			continue;
		}
		for (int j = 0; j < k; j++) {
			/* Ties go to the smaller name id: deterministic output. */
			if (by_name[i] > out[j].ns) {
				memmove(&out[j + 1], &out[j], sizeof(*out) * (size_t)(k - j - 1));
				out[j] = (struct isc_named_ns){ (uint32_t)i, by_name[i] };
				break;
			}
		}
	}
}

void isc_verdict_evidence(struct isc_verdict *v, const char *fmt, ...)
{
	if (v->n_evidence >= ISC_MAX_EVIDENCE) {
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->evidence[v->n_evidence++], ISC_LINE, fmt, ap);
	va_end(ap);
}
