/* SPDX-License-Identifier: MIT */
/*
 * A data-parallel job: many ranks, each analysed alone, then compared. What the job-wide
 * result needs of a rank is small (its window, breakdown, verdict, steps, its first
 * collectives, its host and clock anchors: struct isc_rank_sum), so a job of any size is
 * analysed one trace at a time and only the summaries are kept; the summaries travel in
 * the -f json result of each trace (report/job.c), so that the job-wide result can also
 * be computed from per-host results alone (inferscope-analyze --merge).
 *
 * The job-wide result (isc_job_finish): the hosts put on the first rank's host clock as
 * model/hosts.h does for whole traces (anchors, then collectives, from the summaries'
 * collectives), the slowest rank (ranks.c's rule), the straggler (the rank that arrives
 * last at the collectives everyone waits in), and the spread of each breakdown share.
 */
#ifndef ISC_JOB_H
#define ISC_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/analysis/extras.h"

/* Collectives kept per rank: enough for the clock estimate (it tries lags up to 64 and
 * needs half of the shorter sequence matched) and the straggler; the first ones, so the
 * summary of a rank stays a few kilobytes however long it ran. */
#define ISC_JOB_COLLS 256

struct isc_job_coll {
	int64_t start, end; /* the NCCL kernel, on its own host's clock */
	uint32_t name;	    /* hash of its name: the ranks share no string table */
};

struct isc_rank_sum {
	struct isc_rank r; /* r.rank: given_rank, or its place in the job; r.host unused */
	int given_rank;	   /* the trace's rank (Kineto distributedInfo), -1 unknown */
	char source[256];  /* the input's path */
	char host[64];	   /* "" when the trace names none */
	int64_t pid;
	uint64_t events;
	bool has_anchor;
	int64_t anchor_mono_ns, anchor_real_ns;
	struct isc_job_coll *colls; /* sorted by end, at most ISC_JOB_COLLS */
	size_t n_colls;
};

struct isc_job_fail {
	char source[256];
	char why[ISC_LINE];
};

struct isc_job_host {
	char name[64];
	uint32_t ranks;
	bool reference, anchored, estimated;
	int64_t anchor_shift_ns, offset_ns, uncertainty_ns, applied_ns;
	uint32_t matched;
};

struct isc_job_spread {
	double min, median, max; /* share of the rank's window, 0..1 */
	int max_rank;
};

struct isc_job {
	struct isc_rank_sum *v;
	size_t n, cap;
	struct isc_job_fail *failed;
	size_t n_failed, cap_failed;
	/* The most traces one analyzer held at once for this job (the memory bound: a trace's
	 * model is the only part that grows with its size); the largest of merged results. */
	size_t held_at_once;
	/* isc_job_finish: */
	struct isc_job_host *hosts;
	size_t n_hosts;
	int slowest; /* index into v, -1 when fewer than two ranks */
	char slowest_why[ISC_LINE];
	struct isc_job_spread spread[ISC_CAT__COUNT];
	int straggler;		  /* index into v, -1 when no collective is shared */
	uint32_t compared;	  /* collectives seen on two or more ranks */
	uint32_t straggler_last;  /* of those, how many the straggler reached last */
	double straggler_late_ns; /* its mean delay behind the first rank to arrive */
	double skew_ns;		  /* median, over collectives, of last arrival - first */
	/* Whose verdict is the job's: the straggler's (the others wait for it in every
	 * collective, so it sets the pace of all), else the slowest rank's; -1 none. */
	int verdict;
};

void isc_job_init(struct isc_job *j);
void isc_job_destroy(struct isc_job *j);
void isc_rank_sum_free(struct isc_rank_sum *s);

/* The summary of an analysed trace of one rank. 0 or -ENOMEM (s is then empty). */
int isc_rank_sum_from(const struct isc_trace *t, const struct isc_analysis *a, const char *source,
		      struct isc_rank_sum *s);
/* Moves s into the job (s is emptied). 0 or -ENOMEM. */
int isc_job_add(struct isc_job *j, struct isc_rank_sum *s);
int isc_job_add_failed(struct isc_job *j, const char *source, const char *why);
/* The job-wide result from the summaries, in their order. 0 or -ENOMEM. */
int isc_job_finish(struct isc_job *j);

/* FNV-1a of a collective's name: equal names, equal keys, in every rank's summary. */
uint32_t isc_job_name_hash(const char *s);

#endif /* ISC_JOB_H */
