/* SPDX-License-Identifier: MIT */
/*
 * The spill file: binary records on their way to the trace (docs/trace-format.md,
 * "The spill file").
 *
 * Written by the collector while the process runs and by the final flush, read back
 * by the trace writer at exit and by inferscope-analyze when a killed process left
 * one behind. Blocks are appended; a torn last block (the process died mid-write)
 * is ignored by the reader.
 */
#ifndef ISC_SPILL_H
#define ISC_SPILL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define ISC_SPILL_MAGIC "ISCSPILL"
#define ISC_SPILL_VERSION 1

enum isc_spill_block_type {
	ISC_BLK_META = 1,    /* JSON object: static trace_metadata fields */
	ISC_BLK_SYSINFO = 2, /* JSON object: system_info fields known at start */
	ISC_BLK_STRINGS = 3, /* uint64 arena offset, then string-table entries */
	ISC_BLK_EVENTS = 4,  /* struct isc_spill_events, then records */
	/* JSON object: an image that exec'd, written just before its exec; the next
	 * image's META block starts the next segment of the same process */
	ISC_BLK_SEGMENT = 5,
	/* the symbols and modules of the native addresses the segment's stacks name
	 * (format/symbols.h): written by the flight recorder as it closes a segment */
	ISC_BLK_SYMBOLS = 6,
	ISC_BLK__MAX = ISC_BLK_SYMBOLS,
};

struct isc_spill_header {
	char magic[8];
	uint32_t version;
	uint32_t record_size;
	uint64_t pid;
	uint64_t start_ns;
	char pad[32];
};

struct isc_spill_block {
	uint32_t type;
	uint32_t flags;
	uint64_t size; /* payload bytes, excluding this header and the padding to 8 */
};

struct isc_spill_events {
	uint32_t tid;
	uint32_t count;
};

_Static_assert(sizeof(struct isc_spill_header) == 64, "spill header");
_Static_assert(sizeof(struct isc_spill_block) == 16, "block header");

/* ---- writing (the traced process) ---- */

#define ISC_SPILL_IOV 64

struct isc_spill {
	int fd;		/* -1 between syncs of a file (see isc_spill_release()) */
	pid_t fd_tid;	/* the thread that opened fd: its descriptor table may be its own */
	bool transient; /* a file, reopened by path for each sync; false: a memfd */
	dev_t dev;
	ino_t ino;
	int err;		 /* first error, sticky (negative errno) */
	uint64_t size;		 /* bytes written so far */
	uint64_t strings_upto;	 /* string-table bytes already spilled */
	uint64_t queued;	 /* bytes queued, not yet written */
	uint64_t records;	 /* event records written so far */
	uint64_t queued_records; /* event records queued, not yet written */
	char path[PATH_MAX];
	/* queued blocks, written by isc_spill_sync() with one writev */
	int niov;
	int nhdr;
	struct iovec iov[ISC_SPILL_IOV];
	struct isc_spill_block hdr[ISC_SPILL_IOV / 3];
	uint64_t pad_zero;
};

/* Creates path (O_EXCL|O_NOFOLLOW, 0600) and writes the file header. 0 or -errno. */
int isc_spill_create(struct isc_spill *s, const char *path, uint64_t pid, uint64_t start_ns);
/* Renames the file to path (same directory) and reopens it by that name from then on:
 * a file is written under a name nobody reads, then shown whole. 0 or -errno. */
int isc_spill_rename(struct isc_spill *s, const char *path);
/* Opens the spill that an earlier image of this process (pid, same header) left at
 * path before it exec'd us, to append this image's segment. 0, -EINVAL (not that
 * spill) or -errno. */
int isc_spill_append(struct isc_spill *s, const char *path, uint64_t pid);
/* Cuts the file back to size bytes (what a failed exec appended). 0 or -errno. */
int isc_spill_truncate(struct isc_spill *s, uint64_t size);
/* The same in memory (memfd), when no file can be created anywhere. The memfd stays
 * open: it has no other name. */
int isc_spill_create_memfd(struct isc_spill *s, uint64_t pid, uint64_t start_ns);
/* Queues a block made of two parts (either may be empty); the memory must stay
 * valid until isc_spill_sync(). Syncs by itself when the queue is full. */
int isc_spill_queue(struct isc_spill *s, uint32_t type, const void *a, size_t an, const void *b,
		    size_t bn);
/* Writes what is queued. Checks first that the descriptor is still ours: a program
 * may close or reuse descriptors it did not open; then the file is reopened by name. */
int isc_spill_sync(struct isc_spill *s);
/* Errors after which the same blocks may be written again later (a full disk, a file
 * size limit, no descriptor or memory): the sync leaves the file at its last whole
 * block and the caller keeps what it queued. Any other error is sticky. */
bool isc_spill_err_transient(int err);
/* The reason a trace gives for records an error kept out of it (trace-format.md,
 * "unwritten"). */
const char *isc_spill_err_reason(int err);
/* Opens (or checks) the descriptor before a batch of syncs: 0, or -errno when the file
 * cannot be opened now (EMFILE: the program uses every descriptor it may have), and
 * the caller keeps its records for a later try. */
int isc_spill_acquire(struct isc_spill *s);
/* Closes a file spill's descriptor until the next sync opens it again by path (and
 * checks it is still the same file): called after each collector tick and after
 * every write outside it, so that no descriptor of ours stays where the program can
 * see, close, inherit or reuse it. A memfd spill stays open. */
void isc_spill_release(struct isc_spill *s);
void isc_spill_close(struct isc_spill *s);

/* ---- segments (INFERSCOPE_MODE=continuous) ---- */

/*
 * Writes to out_fd one spill made of the segment files at paths, in order: the first
 * file's header, then every block of each file but the META and SYSINFO blocks that
 * repeat those of the previous segment of the same image (a segment after a SEGMENT
 * block starts a new image and keeps its own). Each segment carries the strings its
 * records name from arena offset 0, so their STRINGS blocks overlap harmlessly. A
 * missing or unreadable file is skipped; errs (n of them, or NULL) says why for each
 * file: 0 merged, else the errno (EINVAL: not a spill or another version). 0, -ENOENT
 * when no file was merged, or -errno.
 */
int isc_spill_merge(const char *const *paths, size_t n, int out_fd, int *errs);

/* ---- reading ---- */

struct isc_spill_reader {
	const unsigned char *base;
	size_t size;
	size_t off;
	uint64_t pid;
	uint64_t start_ns;
	bool torn; /* the file ends inside a block */
	size_t torn_at;
};

struct isc_spill_ref {
	uint32_t type;
	const unsigned char *data;
	size_t size;
	size_t offset; /* of the block header in the file, for error messages */
};

/* Maps the file read-only; checks the header. 0, -EINVAL (not a spill file or wrong
 * version), or -errno. */
int isc_spill_reader_open(struct isc_spill_reader *r, int fd);
/* Next block: 1 and *b filled, 0 at the end (or at a torn block: r->torn is set). */
int isc_spill_reader_next(struct isc_spill_reader *r, struct isc_spill_ref *b);
void isc_spill_reader_rewind(struct isc_spill_reader *r);
void isc_spill_reader_close(struct isc_spill_reader *r);

/* True when the first bytes look like a spill file. */
bool isc_spill_detect(const void *head, size_t n);

#endif /* ISC_SPILL_H */
