/* SPDX-License-Identifier: MIT */
/*
 * The session: who this process is in the traced process tree, where its files
 * go, and how a trace file is made from the spill.
 *
 * Naming (never clobber): the process the user started (the first traced process,
 * whose pid is passed down in INFERSCOPE_ROOT_PID) writes INFERSCOPE_OUTPUT; every
 * descendant that recorded something writes <stem>.<pid>.json beside it; an image
 * that replaced a process which already wrote its trace (exec) adds .<n>. The spill
 * is <stem>.<pid>[.<n>].spill. Relative paths are resolved against the working
 * directory at start, so a chdir() later changes nothing. When the directory cannot
 * be written, both go to $TMPDIR (or /tmp), and stderr says so once.
 */
#ifndef ISC_SESSION_H
#define ISC_SESSION_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "json-writer.h"
#include "spill.h"

struct isc_thread;

struct isc_session {
	int pid;
	int ppid;
	int root_pid;
	bool is_root;
	unsigned exec_seq;
	unsigned snapshot_seq;
	uint64_t start_ns;
	uint64_t anchor_mono_ns;
	uint64_t anchor_real_ns;
	char output[PATH_MAX];	   /* absolute INFERSCOPE_OUTPUT */
	char trace_path[PATH_MAX]; /* this process's trace */
	char spill_path[PATH_MAX];
	bool spill_open;
	bool spill_failed;
	struct isc_spill spill;
};

extern struct isc_session isc_session;

void isc_session_init(void);
/* fork child: new pid, new files, nothing written yet. */
void isc_session_reset_after_fork(void);
/* exec failed after the trace was written: go on under the next exec sequence. */
void isc_session_after_failed_exec(void);

/* True when the process recorded something worth a file (descendants without
 * events - a shell that only forked and exec'd - write nothing; neither do those
 * with host-level events only: system calls and allocations). */
bool isc_session_did_work(void);

/*
 * Writes the trace: trailer blocks, spill synced, JSON written to a temporary file
 * (O_EXCL|O_NOFOLLOW, 0600) and renamed. The spill is removed on success. The
 * caller has stopped the collector and spilled everything. 0 or -errno.
 */
int isc_session_finish(const char *end_reason);

/* The string the exec hooks put into a new image's environment
 * ("INFERSCOPE_EXEC_SEQ=<pid>:<n>"), after this image wrote its trace. */
const char *isc_session_exec_env(void);

/* ---- contributions to the trailer, by the hook families ---- */
typedef void (*isc_trailer_fn)(struct isc_json *j);
typedef void (*isc_thread_agg_fn)(struct isc_json *j, const struct isc_thread *t);

/* Adds members to trace_metadata (at most 8 functions). */
void isc_session_add_metadata(isc_trailer_fn fn);
/* Adds members to system_info (at most 8). */
void isc_session_add_sysinfo(isc_trailer_fn fn);
/* Adds members to each aggregates.threads[] object (at most 8). */
void isc_session_add_thread_aggregate(isc_thread_agg_fn fn);

#endif /* ISC_SESSION_H */
