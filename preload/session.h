/* SPDX-License-Identifier: MIT */
/*
 * The session: who this process is in the traced process tree, where its files
 * go, and how a trace file is made from the spill.
 *
 * Naming (never clobber): the process the user started (the first traced process,
 * whose pid is passed down in INFERSCOPE_ROOT_PID) writes INFERSCOPE_OUTPUT; every
 * descendant that recorded something writes <stem>.<pid>.json beside it. The spill
 * is <stem>.<pid>[.<n>].spill.
 *
 * Exec chains (a shim, env, sh -c 'exec ...' replacing itself with the program): an
 * image that execs into a preloaded image writes no trace. It appends its records and
 * a SEGMENT block to the spill and leaves the file to the next image, which appends
 * its own segment; the last image writes the trace of the whole chain under the name
 * the first would have used (docs/trace-format.md, "Exec chains"). Only an image that
 * execs into something that will not record (no preload, INFERSCOPE_ENABLE=0) writes
 * its trace at the exec; the next image, should it record after all, adds .<n>. Relative paths are resolved against the working
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
	unsigned segment;      /* images of this process before this one, in the spill */
	bool chain_work;       /* one of them did work (isc_session_did_work) */
	uint64_t segment_mark; /* spill size before our SEGMENT block: a failed exec cuts it */
	unsigned snapshot_seq;
	uint64_t start_ns;
	uint64_t anchor_mono_ns;
	uint64_t anchor_real_ns;
	char output[PATH_MAX];	   /* absolute INFERSCOPE_OUTPUT */
	char trace_path[PATH_MAX]; /* this process's trace */
	char spill_path[PATH_MAX];
	bool spill_open;
	bool spill_failed;
	bool flushing;		 /* the final flush runs (set by lifecycle.c) */
	uint64_t spill_retry_ns; /* no spill file could be made: not again before (kernel clock) */
	struct isc_spill spill;
};

extern struct isc_session isc_session;

void isc_session_init(void);

/* ---- Paths (session-paths.c) ----
 * The output: INFERSCOPE_OUTPUT made absolute; where its directory cannot be written,
 * the same name in $TMPDIR (or /tmp), else in /dev/shm. This process's trace and spill
 * derive from it: <stem>.<pid>[.<exec seq>].json and .spill (the root's trace is the
 * output itself). */
void isc_session_resolve_output(void);
void isc_session_make_paths(void);
size_t isc_session_stem_len(const char *path); /* the output without ".json" */
/* fork child: new pid, new files, nothing written yet. */
void isc_session_reset_after_fork(void);
/* exec failed after the trace was written: go on under the next exec sequence. */
void isc_session_after_failed_exec(void);

/* Would the image that envp starts record (our library in LD_PRELOAD, not disabled)?
 * Then the spill is handed over to it instead of writing a trace. */
bool isc_session_next_image_records(char *const envp[]);
/* Before an exec into an image that records: the open scopes (unterminated) and a
 * SEGMENT block describing this image go to the spill, left on disk for the next
 * image. The caller has stopped the collector and spilled everything. 0 or -errno. */
int isc_session_end_segment(void);
/* The exec failed after isc_session_end_segment(): the spill is cut back and this
 * image goes on recording into it. */
void isc_session_segment_resumed(void);

/* True when the process recorded something worth a file (descendants without
 * events - a shell that only forked and exec'd - write nothing; neither do those
 * with host-level events only: system calls and allocations). */
bool isc_session_did_work(void);
/* No trace for this process: removes its spill, the one it opened or the one an earlier
 * image of an exec chain left it (none of them did work either). */
void isc_session_discard(void);

/*
 * Writes the trace: trailer blocks, spill synced, JSON written to a temporary file
 * (O_EXCL|O_NOFOLLOW, 0600) and renamed. The spill is removed on success. The
 * caller has stopped the collector and spilled everything. 0 or -errno.
 */
int isc_session_finish(const char *end_reason);

/* The string the exec hooks put into a new image's environment:
 * "INFERSCOPE_EXEC_SEQ=<pid>:<n>:<segment>:<next id>:<work>", after this image
 * handed its spill over (handed_over) or wrote its trace. */
const char *isc_session_exec_env(bool handed_over);

/* The spill file, opened on first use with its start blocks (the collector's sink). */
struct isc_spill *isc_session_spill(void);
/* Writes the trace of a capture window (core/window.h) to path: what is spilled so far,
 * filtered to the window by the converter. Runs on the collector thread. 0 or -errno. */
struct isc_convert_opts;
struct isc_convert_result;
int isc_session_write_window(const char *path, const struct isc_convert_opts *window,
			     struct isc_convert_result *res);
/* Writes a snapshot trace of what is spilled so far (<stem>[.<pid>].snapshot-<n>.json). */
void isc_session_snapshot(const char *reason);

#endif /* ISC_SESSION_H */
