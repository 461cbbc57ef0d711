/* SPDX-License-Identifier: MIT */
/*
 * The flight recorder (INFERSCOPE_MODE=continuous): the spill becomes a sequence of
 * segments beside the trace path (docs/trace-format.md, "Segments"):
 *
 *   <base>.<pid>.seg-<NNNNNN>.spill.part   the segment being written
 *   <base>.<pid>.seg-<NNNNNN>.spill        closed: renamed atomically, never written again
 *
 * <base> is INFERSCOPE_OUTPUT without ".json". Each segment is a complete spill file
 * (header, META with a "recorder" member, SYSINFO, every string its records name, its
 * records) that inferscope-analyze reads on its own. A segment is closed after
 * INFERSCOPE_SEGMENT or before it would grow past INFERSCOPE_SEGMENT_SIZE (at most a
 * quarter of a size bound of INFERSCOPE_RETAIN); then the oldest closed segments beyond
 * INFERSCOPE_RETAIN are deleted and counted (segments, bytes, records), and the next
 * segment's META and the frozen trace carry the counts.
 *
 * Freezing (exit, _exit, exec, SIGTERM, a crash): the open segment is closed and the
 * retained segments are merged into the trace <base>.<pid>.json. The segments stay.
 * The collector thread (or the flush, once it stopped) is the only caller.
 */
#ifndef ISC_RECORDER_H
#define ISC_RECORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "format/spill.h"

/* The open segment, opened on first use with its start blocks; NULL when none can be
 * had. */
struct isc_spill *isc_recorder_spill(void);
/* The collector's sink hooks (collector.h). */
bool isc_recorder_full(const struct isc_spill *s, uint64_t bytes);
struct isc_spill *isc_recorder_rotate(void);

/* Merges the retained segments and the open one (synced) into a new spill file at
 * path (O_EXCL, 0600). 0 or -errno. */
int isc_recorder_merge(const char *path);

/* Closes the open segment, so that every retained one is a closed .spill file. */
void isc_recorder_close(void);

/* trace_metadata members for the frozen trace: "recorder": {...} with the retention
 * counts, as text ",\"recorder\":{...}" into out. Returns its length. */
size_t isc_recorder_trailer(char *out, size_t cap);

/* The path of the frozen trace: <base>.<pid>.json. */
const char *isc_recorder_trace_path(void);

/* A process that did nothing worth a trace (a shell that forked and exec'd): its
 * segments are removed, as its spill would be. */
void isc_recorder_discard(void);

/* The collector's tick in continuous mode: asks CUPTI for its buffers twice a segment
 * (at most every second), so that each segment holds the GPU work of its own time. */
void isc_recorder_tick(uint64_t now);

/* After fork in the child: no segment open, numbering of the child's own. */
void isc_recorder_reset_after_fork(void);

#endif /* ISC_RECORDER_H */
