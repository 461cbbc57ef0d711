/* SPDX-License-Identifier: MIT */
/*
 * Traces of several hosts on one time axis. Each host's monotonic clock starts at its
 * own boot, so the traces of two machines share no clock; each InferScope trace carries
 * an anchor pair (trace_metadata.clock: one monotonic and one realtime reading of one
 * moment) that maps its host's clock onto the wall clock, which NTP keeps within about a
 * millisecond between machines, at best. Collectives then refine the offset: the NCCL
 * kernels of one all-reduce end together on every rank (none can finish before the last
 * one's data arrived), so the n-th collective of a rank on host A and the n-th of a rank
 * on host B give one reading of the clock difference; the median of the readings is the
 * estimate and their spread its uncertainty.
 *
 * isc_trace_finalize calls isc_hosts_align before sorting: events of every host but the
 * first input's are shifted onto that host's clock, by the anchors and then by the
 * estimate. The result (per host: the anchors' shift, the estimate, its uncertainty and
 * the number of collectives matched) stays in t->hosts for the reports.
 */
#ifndef ISC_HOSTS_H
#define ISC_HOSTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct isc_trace;

struct isc_host_clock {
	uint32_t host;		 /* string id of the hostname */
	uint16_t input;		 /* the input whose rank was matched (or the first of the host) */
	uint16_t ref_input;	 /* the reference host's input it was matched against */
	uint32_t inputs;	 /* inputs of this host */
	bool reference;		 /* the first input's host: shifts are relative to it */
	bool anchored;		 /* both this host and the reference have an anchor pair */
	int64_t anchor_shift_ns; /* from the anchors (0 when not anchored) */
	bool estimated;		 /* collectives matched: offset_ns and uncertainty_ns hold */
	int64_t offset_ns;	 /* the further shift the collectives call for */
	int64_t uncertainty_ns;
	uint32_t matched;   /* collectives matched */
	int64_t lag;	    /* collectives of the reference rank before this one's first */
	int64_t applied_ns; /* what was added to this host's timestamps */
};

struct isc_hosts {
	struct isc_host_clock *v;
	size_t n;
};

/* One collective of a rank: the end of an NCCL kernel and its name (string id, or any
 * key equal for equal names: a hash where the ranks' strings are not one table). */
struct isc_coll {
	int64_t end;
	uint32_t name;
};

struct isc_clock_estimate {
	int64_t offset_ns, uncertainty_ns; /* add offset_ns to the other rank's times */
	uint32_t matched;
	int64_t lag;
};

/* The estimate above from two ranks' collectives sorted by end, the other's already
 * shifted by the anchors (the merge of per-rank results, analysis/job.h, has no trace).
 * False when the collectives do not line up. */
bool isc_hosts_estimate(const struct isc_coll *ref, size_t n_ref, const struct isc_coll *other,
			size_t n_other, struct isc_clock_estimate *out);

/* Puts the inputs of several hosts on the first input's clock (see above); a trace of one
 * host is left alone. Idempotent: a trace already aligned is not shifted twice.
 * Returns 0 or -ENOMEM. */
int isc_hosts_align(struct isc_trace *t);
void isc_hosts_destroy(struct isc_hosts *h);

#endif /* ISC_HOSTS_H */
