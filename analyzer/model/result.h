/* SPDX-License-Identifier: MIT */
/*
 * The result of analysing a trace: every number the writers print and the gate compares,
 * filled by the analysis stages (timeline, statistics, classifier) and the rules. Only
 * types and their small helpers live here, below every stage, so that the rules (which
 * the analysis runs last), the gate and the writers read it without depending on the
 * code that computes it.
 */
#ifndef ISC_RESULT_H
#define ISC_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/base/interval.h"
#include "analyzer/model/model.h"
#include "analyzer/model/thresholds.h"

enum isc_category {
	ISC_CAT_CPU, /* cpu_preprocessing: a host thread computes, the GPU does not */
	ISC_CAT_H2D,
	ISC_CAT_GPU, /* kernels, memsets, device-to-device copies */
	ISC_CAT_D2H,
	ISC_CAT_IDLE,
	ISC_CAT_FRAMEWORK, /* host inside CUDA runtime/driver calls, the GPU idle */
	ISC_CAT__COUNT
};

#define ISC_EXAMPLES 3
#define ISC_LINE 256
#define ISC_MAX_EVIDENCE 12
#define ISC_PCTS 8
#define ISC_HIST 20

struct isc_named_ns {
	uint32_t name;
	int64_t ns;
};

struct isc_causal;

struct isc_window {
	int64_t start, end;
	int64_t host_end; /* trimmed end for host events; end also covers the GPU work
			   * launched in the window (window.c) */
	int64_t gpu_tail; /* end - host_end */
	bool trimmed;
	char how[160]; /* "whole trace", "scopes named X (12)", "--window" */
};

struct isc_stream_idle {
	uint16_t input; /* ranks (inputs) with the same device id are different GPUs */
	int16_t device;
	int32_t stream;
	uint64_t ops, gaps;
	int64_t busy, host_wait, kernel_wait, other;
};

struct isc_hta_temporal {
	uint16_t input;
	int16_t device;
	int64_t span, idle, compute, non_compute;
};

struct isc_launch_stats {
	uint64_t pairs, short_kernels, slow_launches, delay_outliers;
	double median_launch_ns, median_gpu_ns, median_delay_ns;
	int64_t short_kernel_gap_ns; /* GPU idle before short kernels, bounded by their launch */
	int64_t launch_total_ns;     /* time in launch calls */
};

enum isc_stat_group {
	ISC_SG_KERNEL,
	ISC_SG_GPU_COPY,
	ISC_SG_CUDA_API,
	ISC_SG_SCOPE,
	ISC_SG_CPU_OP,
	ISC_SG_SYSCALL,
	ISC_SG__COUNT
};

struct isc_stat {
	uint32_t name;
	uint64_t count;
	int64_t total, min, max; /* ns */
	double mean, cv;
	double pct[ISC_PCTS]; /* ns: p5 p10 p25 p50 p75 p90 p95 p99 */
	uint32_t hist[ISC_HIST];
	uint64_t bytes;
};

struct isc_stat_table {
	struct isc_stat *rows; /* by total time, descending; then by name */
	size_t n;
	uint64_t events;
	/* Syscalls over the whole trace: counts, totals, maxima and bytes are the hooks' exact
	 * aggregates (every call, not only the events above the threshold); percentiles, min
	 * and CV come from the hooks' latency histograms, or where a trace has none
	 * (pct_from_events), from the events alone. */
	bool exact;
	bool pct_from_events;
	uint64_t calls; /* with exact: the calls the rows count */
};

/* The process's allocations over the whole run, from the malloc hooks' exact counters
 * (aggregates.threads[].malloc, every thread and input summed); present when a trace has
 * them. Memory events are only a sample of these. */
struct isc_alloc_stats {
	bool present;
	uint64_t calls, frees, failed, bytes, bytes_freed, sampled;
	int64_t live; /* allocated and not freed when the trace was written */
};

struct isc_scope_time {
	uint32_t name;
	uint64_t count;
	int64_t total; /* sum of durations */
	int64_t self;  /* minus nested scopes */
	int64_t cpu;   /* self time attributed to cpu_preprocessing */
};

/* The verdict's names, in the order of isc_bound_name; the host-only ones after the
 * first five, so that the values a baseline stored keep their meaning. */
enum isc_bound {
	ISC_BOUND_UNKNOWN,
	ISC_BOUND_CPU,
	ISC_BOUND_GPU,
	ISC_BOUND_MEMORY,
	ISC_BOUND_BALANCED,
	ISC_BOUND_IDLE,	       /* waiting: for input, a timer, or nothing any lever moves */
	ISC_BOUND_CPU_STARVED, /* runnable threads wait for a CPU longer than they run */
	ISC_BOUND_IO,	       /* host-only window: file and network I/O */
	ISC_BOUND_LOCK,	       /* host-only window: lock and condition waits on the path */
	ISC_BOUND_CHILD,       /* the window waits for a child process */
	ISC_BOUND__COUNT
};

/* One lever of the verdict (analysis/verdict-path.c): what making it twice as fast gains,
 * by the what-if engine, in percent of the window. */
#define ISC_MAX_LEVERS 12

struct isc_lever_gain {
	const char *id;	  /* "gpu", "host_code", ... (docs/rules.md, "Verdict") */
	const char *what; /* "GPU work", "host code", ... */
	enum isc_bound bound;
	bool host; /* a host-side lever: it cannot gain more than the GPU's idle share */
	double gain_pct;
};

struct isc_verdict {
	enum isc_bound type;
	char cause[64];
	double confidence;
	/* The levers weighed, in table order, and the deciding one's gain (0 when none). */
	struct isc_lever_gain levers[ISC_MAX_LEVERS];
	int n_levers;
	double gain_pct;
	double pipeline_pct; /* the best GPU-side and host-side levers together, 0 without GPU */
	/* The busiest GPU stream's idle share of the window the levers were weighed on (100
	 * without GPU work): no host-side lever can gain more. */
	double gpu_idle_pct;
	char evidence[ISC_MAX_EVIDENCE][ISC_LINE];
	int n_evidence;
};

#define ISC_SUGGESTION_EVIDENCE 4

struct isc_suggestion {
	const char *rule_id;
	const char *priority; /* high | medium | low */
	char action[ISC_LINE];
	char rationale[512];
	double improvement_pct;
	char evidence[ISC_SUGGESTION_EVIDENCE][ISC_LINE];
	int n_evidence;
	int table_order;
	char where[ISC_LINE]; /* the code it means, from the stacks (rules/where.c), or "" */
};

/* Host waits by syscall category (enum isc_syscall_cat), and the part of them that left
 * the GPU idle; paced reads (ISC_F_PACED) have a slot of their own. Times are unions over
 * the waiting threads (window time: a share of the window is at most 100 %), counts are
 * calls. */
#define ISC_WAIT_INPUT 7

static inline unsigned isc_wait_slot(const struct isc_ev *e)
{
	return (e->flags & ISC_F_PACED) ? ISC_WAIT_INPUT : e->sub;
}

struct isc_waits {
	int64_t total[8];
	int64_t on_idle[8];
	uint64_t count[8];
	struct isc_named_ns top[8];   /* the name with the most time on idle, per category (its
				     * waits' union) */
	int64_t io_total, io_on_idle; /* I/O, network and file-system waits together */
};

/* What a wait call (ISC_SYS_WAIT and the network's accept) waits for, by its name: input
 * from outside the process (poll, select, epoll, accept: a request, a client, a readable
 * descriptor), another thread (a mutex, condition, semaphore, futex, join) or a child
 * process (wait, wait3, wait4, waitpid, waitid). */
enum isc_wait_kind { ISC_WK_OTHER, ISC_WK_INPUT, ISC_WK_LOCK, ISC_WK_CHILD };
enum isc_wait_kind isc_wait_kind_of(const char *name);

/* I/O waits with the GPU idle: reads, network, file system (a union: paced input apart). */
static inline int64_t isc_waits_io_on_idle(const struct isc_waits *w)
{
	return w->io_on_idle;
}

struct isc_profile;

struct isc_analysis {
	struct isc_thresholds th;
	struct isc_window window;
	int64_t cat_ns[ISC_CAT__COUNT];
	struct isc_named_ns examples[ISC_CAT__COUNT][ISC_EXAMPLES];
	int64_t gpu_busy_ns;	     /* union of all GPU work including copies */
	int64_t host_busy_ns;	     /* union of host computing, whatever the GPU does */
	struct isc_ivec host_active; /* cpu_preprocessing and framework_overhead time */
	int64_t copy_overlap_ns;     /* copy time overlapping kernels */
	int64_t copy_union_ns;	     /* union of h2d and d2h copies */
	struct isc_stream_idle *streams;
	size_t n_streams;
	struct isc_stream_idle idle; /* summed over streams */
	struct isc_hta_temporal *hta;
	size_t n_hta;
	struct isc_launch_stats launch;
	struct isc_stat_table stats[ISC_SG__COUNT];
	struct isc_alloc_stats allocs;
	struct isc_scope_time *scopes; /* by cpu time, descending */
	size_t n_scopes;
	struct isc_waits waits;
	uint64_t count[ISC_T__COUNT]; /* events of each type in the window */
	uint64_t events_total, skipped, dropped, cupti_dropped;
	bool gpu_timeline;   /* GPU events present */
	bool cupti_degraded; /* an input says CUPTI was not active */
	bool incomplete;     /* an input was recovered from a spill file or a snapshot */
	bool cpu_samples;    /* CPU-time counters were used */
	uint64_t sampled_threads;
	uint64_t unsampled_threads; /* threads the recorder could not sample (inputs' sum) */
	uint64_t unwritten;	    /* events recorded but lost on the way to the trace */
	struct isc_verdict verdict;
	struct isc_suggestion *sugg;
	size_t n_sugg;
	struct isc_causal *causal; /* dependency graph, critical path, what-ifs (causal/graph.h) */
	/* Set before the graph is built: no output draws the critical path's pieces (only the
	 * HTML band does), so they are not kept, about 16 bytes an event. */
	bool no_path_pieces;
	struct isc_extras *extras; /* data quality, steps, ranks (extras.h) */
	struct isc_profile *prof;  /* CPU samples by function (profile.h), NULL without */
};

const char *isc_category_name(enum isc_category c);
const char *isc_bound_name(enum isc_bound b);
/* Whether the window has GPU work or CUDA calls: GPU words and advice only then. */
bool isc_has_gpu_work(const struct isc_analysis *a);
const char *isc_stat_group_name(enum isc_stat_group g);
double isc_share(const struct isc_analysis *a, int64_t ns); /* fraction of the window */
/* The order categories are shown in, by every writer and the gate. */
extern const enum isc_category isc_category_order[ISC_CAT__COUNT];
/* The k names with the most time (by_name[id], n ids) into out, largest first; ties go to
 * the smaller id. */
void isc_top_names(const int64_t *by_name, size_t n, struct isc_named_ns *out, int k);

/* Window membership (window.c: every stage asks the same question): host events by their start, GPU work in a trimmed window
 * by the start of the call that launched it. */
bool isc_in_window(const struct isc_trace *t, const struct isc_analysis *a, const struct isc_ev *e);
/* Where an event's time is clipped: the window's end for GPU work, host_end otherwise. */
int64_t isc_window_end_of(const struct isc_analysis *a, const struct isc_ev *e);
/* Sets host_end and runs a trimmed window on to the end of the GPU work it launched. */
void isc_window_extend(const struct isc_trace *t, struct isc_analysis *a);

/* Appends an evidence line to the verdict (dropped past ISC_MAX_EVIDENCE). */
void isc_verdict_evidence(struct isc_verdict *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* ISC_RESULT_H */
