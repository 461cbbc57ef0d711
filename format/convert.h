/* SPDX-License-Identifier: MIT */
/*
 * The trace writer: spill file in, InferScope JSON out.
 *
 * One path for every way a trace is made: the normal exit, _exit, exec, a
 * snapshot, the API's flush, and the analyzer's recovery of a spill file that a
 * killed process left behind. It streams: memory is the string table, the scope
 * list for relationships.scopes and a fixed output buffer, whatever the number of
 * events. It uses neither malloc nor stdio (see scratch.h).
 */
#ifndef ISC_TRACE_WRITER_H
#define ISC_TRACE_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "format/encode.h"

struct isc_convert_opts {
	/*
	 * What only the live process knows at the end (end time, dropped counts,
	 * aggregates...): JSON object texts whose members are added to trace_metadata
	 * and system_info. NULL trailer_meta means the process never flushed: the file
	 * is a recovery (end_reason "recovered", complete false).
	 */
	const char *trailer_meta;
	size_t trailer_meta_len;
	const char *trailer_sysinfo;
	size_t trailer_sysinfo_len;
	/* Records that are not in the spill (scopes still open at the flush). */
	const struct isc_event *extra;
	size_t n_extra;
	/* Marks a snapshot: complete=false, snapshot_reason written. */
	const char *snapshot_reason;
	/* Records were lost on the way to the spill (trace_metadata.unwritten): complete=false. */
	bool records_lost;
	/* Symbolises code addresses (kernel host stubs, stack frames); NULL offline. */
	isc_resolve_fn resolve;
	void *resolve_ctx;
	/* Symbolises sampled stacks' native frames. NULL offline: the symbols the process
	 * wrote into the spill (ISC_BLK_SYMBOLS, a flight recorder's segments), else the
	 * frames keep their raw addresses. */
	isc_symbolize_fn symbolize;
	void *symbolize_ctx;
	/*
	 * A capture window (window_until_ns > 0): only records that start in
	 * [window_from_ns, window_until_ns] are written, and GPU records by the call that
	 * queued them: those whose correlation id lies in [window_corr_from,
	 * window_corr_until), the ids handed out inside the window, wherever the GPU ran
	 * them. Graph nodes (definitions the replays in the window refer to) are
	 * written whatever their time. Continuations go with their head.
	 */
	uint64_t window_from_ns, window_until_ns;
	uint64_t window_corr_from, window_corr_until;
	/* Wall-clock time to write as timestamp_created (ns since the epoch); 0 = now. */
	uint64_t created_realtime_ns;
};

struct isc_convert_result {
	uint64_t events;  /* events written */
	uint64_t records; /* records read */
	uint64_t skipped; /* records not understood */
	uint64_t bytes;	  /* JSON bytes written */
	bool recovered;	  /* the spill had no trailer */
	bool torn;	  /* the spill ended inside a block */
};

/* 0, -EINVAL (not a spill file), -ENOMEM, or the errno of a failed write. */
int isc_trace_convert(int spill_fd, int out_fd, const struct isc_convert_opts *opts,
		      struct isc_convert_result *res);

/* ISO 8601 UTC with microseconds and Z into out (at least 32 bytes); returns length.
 * Pure arithmetic: gmtime_r takes a lock, which a signal-time flush cannot risk. */
size_t isc_format_utc(char *out, uint64_t realtime_ns);

#endif /* ISC_TRACE_WRITER_H */
