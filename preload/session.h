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

#include "format/spill.h"

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

/* The spill file, opened on first use with its start blocks (the collector's sink). */
struct isc_spill *isc_session_spill(void);
/* Writes a snapshot trace of what is spilled so far (<stem>[.<pid>].snapshot-<n>.json). */
void isc_session_snapshot(const char *reason);

#endif /* ISC_SESSION_H */
