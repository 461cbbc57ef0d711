/* SPDX-License-Identifier: MIT */
/*
 * Where the time goes: the CPU samples of the window (cpu_sample events and their stacks)
 * summed by function, library, process and thread, split by what the GPU was doing at
 * the sample and by phase (start-up apart from the steady state). docs/rules.md, "Where
 * the time goes", defines each split.
 */
#ifndef ISC_PROFILE_H
#define ISC_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/base/wmap.h"
#include "analyzer/model/result.h"
#include "analyzer/model/stacks.h"

/* What the GPU and the thread were doing when a steady-state sample was taken. */
enum isc_pcat {
	ISC_PC_GPU_IDLE, /* cpu_preprocessing: the host computes, the GPU has nothing */
	ISC_PC_CUDA,	 /* framework_overhead: inside a CUDA runtime call */
	ISC_PC_BESIDE,	 /* gpu_compute: the host computes while the GPU is busy */
	ISC_PC_STARTUP,	 /* start-up: imports, and everything before the first CUDA call */
	ISC_PC__COUNT
};

#define ISC_PC_STEADY ISC_PC_STARTUP /* the categories before it are the steady state */

struct isc_prof_fn {
	uint32_t function, where; /* string ids: function, file (Python) or module */
	uint32_t line;		  /* the isc_frame_pos with the most self time */
	uint8_t kind;		  /* enum isc_frame_kind */
	int64_t self[ISC_PC__COUNT], total[ISC_PC__COUNT];
	int64_t self_steady, total_steady;
};

struct isc_prof_mod {
	uint32_t module; /* self time of native frames by module, of Python frames by file */
	int64_t self;	 /* steady state */
};

struct isc_prof_thread {
	uint32_t thread; /* index into isc_trace.threads */
	int64_t steady, startup;
	int32_t top_fn; /* index into fn: most steady self time, -1 none */
	bool worker;	/* a data-loading worker (docs/rules.md) */
};

struct isc_profile {
	uint64_t samples;
	int64_t total, cat[ISC_PC__COUNT];
	struct isc_prof_fn *fn; /* by steady self time, descending */
	size_t n_fn;
	struct isc_prof_mod *mod; /* by self time, descending */
	size_t n_mod;
	struct isc_prof_thread *thr; /* by thread index */
	size_t n_thr;
	uint32_t worker_threads, worker_processes;
	char workers_how[96]; /* "2 processes in torch.utils.data worker loops" */
	/* Steady GPU-idle sample time under a framework's model call (an nn.Module's
	 * forward...): the model computing on the CPU, not preparing its inputs. */
	int64_t idle_model;
	/* Steady GPU-idle sample time outside the model under a data loader's fetch of a
	 * batch (docs/rules.md, "Data loading"): input preparation in the loader's path. */
	int64_t idle_loading;
	/* The code that computes with the GPU idle outside the model: its site
	 * (isc_stack_site) by weight. */
	char idle_site[ISC_LINE];
	double idle_site_share; /* of the steady GPU-idle sample time (the model's too) */
};

/* Builds a->prof (left NULL when the window has no CPU samples). 0 or -ENOMEM. */
int isc_profile_build(const struct isc_trace *t, struct isc_analysis *a);
void isc_profile_destroy(struct isc_profile *p);
const char *isc_pcat_name(enum isc_pcat c);

/* The category of a sample; *startup set apart. Exposed for the exports. */
bool isc_sample_is_startup(const struct isc_trace *t, const struct isc_stack_ref *r);

/* A frame as folded stacks and pprof name it: "tokenize (serve.py:41)". */
void isc_folded_frame(const struct isc_trace *t, const struct isc_frame *f, char *buf, size_t n);

#endif /* ISC_PROFILE_H */
