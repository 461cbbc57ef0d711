/* SPDX-License-Identifier: MIT */
/*
 * The directory `inferscope watch` follows: closed segments appear there by an atomic
 * rename (`BASE.PID.seg-NNNNNN.spill`, docs/fleet.md), the recorder deletes the oldest
 * past its retention bound. inotify reports both; a periodic rescan catches what
 * inotify cannot (its queue overflowed, a network file system, no inotify at all).
 */
#ifndef ISC_WATCH_SEGMENTS_H
#define ISC_WATCH_SEGMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct isc_segname {
	int64_t pid;
	uint64_t seq;
};

/* True when name is a closed segment's ("....PID.seg-NNNNNN.spill"), with its parts. */
bool isc_segment_name(const char *name, struct isc_segname *out);

struct isc_segdir {
	char *dir;
	int ifd; /* inotify descriptor, -1 when unavailable */
	bool overflowed;
	char **seen; /* segment names known to be there, sorted */
	size_t n_seen, cap_seen;
};

/* Opens the directory's watch; 0 or -errno (the directory must exist). A failing inotify
 * is no error: rescans alone then find the segments. */
int isc_segdir_open(struct isc_segdir *s, const char *dir);
void isc_segdir_close(struct isc_segdir *s);

/* Callbacks: a segment that appeared (called once per name, oldest first within a
 * batch), and one that disappeared. */
struct isc_segdir_ops {
	void (*added)(void *ctx, const char *name);
	void (*removed)(void *ctx, const char *name);
	void *ctx;
};

/* Reads pending inotify events (the descriptor was readable). */
void isc_segdir_events(struct isc_segdir *s, const struct isc_segdir_ops *ops);
/* Lists the directory and reports the difference with what was known. 0 or -errno. */
int isc_segdir_rescan(struct isc_segdir *s, const struct isc_segdir_ops *ops);

#endif /* ISC_WATCH_SEGMENTS_H */
