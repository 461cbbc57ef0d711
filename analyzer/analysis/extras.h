/* SPDX-License-Identifier: MIT */
/*
 * What the analysis adds beside the single-window attribution: device categories the
 * reader does not model (data quality and confidence), steady-state steps and the
 * start-up before them (steps.c), and ranks analysed apart and together (ranks.c).
 * analyze.c runs isc_extras_run after the rules; the writers print report-extras.c.
 */
#ifndef ISC_EXTRAS_H
#define ISC_EXTRAS_H

#include <stdio.h>

#include "analyzer/analysis/analysis.h"

struct isc_json;

struct isc_unknown_cat {
	uint32_t name;
	uint64_t count, device; /* events, and those that look like device work */
	int64_t ns;
};

/* count, mean, p50, p90, max of a per-step quantity (ns). */
struct isc_dist {
	uint64_t n;
	double mean, p50, p90, max;
};

enum isc_startup_kind {
	ISC_SU_CONTEXT, /* CUDA context creation: the first, long CUDA call; cuInit, ctx calls */
	ISC_SU_MODULES, /* lazy module loading */
	ISC_SU_ALLOC,	/* first device and pinned allocations */
	ISC_SU_WARMUP,	/* warm-up steps: their excess over the steady median */
	ISC_SU__COUNT
};

struct isc_steps {
	uint64_t n;	 /* steady steps */
	uint64_t warmup; /* leading steps much slower than the steady ones */
	char how[128];	 /* how the steps were found */
	uint32_t name;	 /* the scope name (or prefix) of the steps */
	struct isc_dist step, cat[ISC_CAT__COUNT];
	int64_t steady_start; /* start of the first steady step */
	int64_t startup_ns;   /* window start to steady_start */
	int64_t startup[ISC_SU__COUNT];
};

struct isc_rank {
	int rank;
	uint16_t input;
	uint32_t host;		    /* string id, 0 unknown */
	int64_t start, end, offset; /* window; offset: start - the earliest rank's start */
	int64_t cat_ns[ISC_CAT__COUNT];
	enum isc_bound bound;
	char cause[64];
	double confidence;
	int64_t comm_ns, compute_ns, overlap_ns; /* NCCL kernels, other kernels, both at once */
	uint64_t steps;
	double step_mean_ns;
	/* The rank's own verdict, its levers weighed on its own window: the slowest rank's
	 * becomes the run's whole, so that the verdict and its what-ifs stay one judgement. */
	struct isc_verdict verdict;
};

struct isc_extras {
	struct isc_unknown_cat *unknown;
	size_t n_unknown;
	uint64_t unknown_device_events;
	int64_t unknown_device_ns;
	struct isc_steps steps;
	/* Category segments of the sweep (timeline.c), kept when steps were found. */
	struct isc_seg {
		int64_t s, e;
		int c;
	} * segs;
	size_t n_segs, cap_segs;
	bool want_segs;
	struct isc_rank *ranks; /* when two or more ranks */
	size_t n_ranks;
	int slowest; /* index into ranks, -1 none */
	char slowest_why[ISC_LINE];
	char clocks[4][ISC_LINE]; /* clock alignment, one line per host */
	int n_clocks;
};

/* Before the stages: finds the steps, so the sweep keeps its segments. 0 or -ENOMEM. */
int isc_extras_prepare(const struct isc_trace *t, struct isc_analysis *a);
/* The sweep's hook: one attributed segment. 0 or -ENOMEM. */
int isc_extras_segment(struct isc_analysis *a, int64_t s, int64_t e, int c);
/* After the rules: data quality, steps, ranks, and their effect on the verdict. */
int isc_extras_run(const struct isc_trace *t, const struct isc_analyze_opts *o,
		   struct isc_analysis *a);
void isc_extras_destroy(struct isc_extras *x);

/* steps.c */
int isc_steps_detect(const struct isc_trace *t, struct isc_analysis *a);
int isc_steps_measure(const struct isc_trace *t, struct isc_analysis *a);
/* ranks.c */
int isc_ranks_analyse(const struct isc_trace *t, const struct isc_analyze_opts *o,
		      struct isc_analysis *a);
/* The slowest of n >= 2 ranks (by step, else by window) and why, in a line of ISC_LINE. */
size_t isc_ranks_slowest(const struct isc_rank *v, size_t n, char *why);
/* A rank's NCCL kernels, other kernels and both at once in its window (r's comm_ns,
 * compute_ns, overlap_ns). 0 or -ENOMEM. */
int isc_rank_overlap(const struct isc_trace *sub, const struct isc_analysis *ra,
		     struct isc_rank *r);

/* report-extras.c: sections of the md, json and html reports. */
void isc_extras_md(FILE *f, const struct isc_trace *t, const struct isc_analysis *a);
void isc_extras_md_quality(FILE *f, const struct isc_trace *t, const struct isc_analysis *a);
void isc_extras_json(struct isc_json *j, const struct isc_trace *t, const struct isc_analysis *a);
void isc_extras_json_quality(struct isc_json *j, const struct isc_trace *t,
			     const struct isc_analysis *a);
void isc_extras_html(FILE *f, const struct isc_trace *t, const struct isc_analysis *a);

/* p in [0, 1] of sorted values (nearest rank, interpolated). */
double isc_pct_sorted(const int64_t *v, size_t n, double p);

#endif /* ISC_EXTRAS_H */
