/* SPDX-License-Identifier: MIT */
#include "preload/recorder.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "format/symbols.h"
#include "format/vocab.h"
#include "preload/hooks/cuda/cuda-family.h"
#include "preload/samplers/cpu-sampler.h"
#include "preload/session.h"
#include "preload/trailer.h"

/* Closed segments kept at most (a count bound besides INFERSCOPE_RETAIN). */
#define MAX_KEPT 1024
/* What the last strings of a tick may add past the rotation check. */
#define SLACK (64u * 1024u)

struct kept {
	unsigned index;
	uint64_t bytes;
	uint64_t records;
	uint64_t start_ns, end_ns;
};

static struct {
	bool ready;
	unsigned next;		/* index of the next segment opened */
	uint64_t seg_max;	/* rotation size */
	struct isc_spill spill; /* the open segment */
	bool open;
	bool failed;
	unsigned index; /* of the open segment */
	uint64_t opened_ns;
	struct kept kept[MAX_KEPT]; /* closed and retained, oldest first */
	unsigned nkept;
	uint64_t kept_bytes;
	uint64_t dropped_segments, dropped_bytes, dropped_records;
	/* the symbols written at the segments' close: time spent, bytes, addresses, and
	 * the largest block (what the open segment may still add past its size) */
	uint64_t sym_ns, sym_bytes, sym_pcs, sym_max;
	char base[PATH_MAX]; /* <base>.<pid> */
	char trace[PATH_MAX];
} rec;

/* (isc_fmt is signal-safe and has no widths: the six digits by hand) */
static void seg_path(char *out, size_t cap, unsigned index, bool part)
{
	char num[7];
	for (int i = 5; i >= 0; i--, index /= 10) {
		num[i] = (char)('0' + index % 10);
	}
	num[6] = '\0';
	isc_fmt(out, cap, "%s.seg-%s.spill%s", rec.base, num, part ? ".part" : "");
}

/* Where a new segment is written before it is shown: the same directory, a hidden name
 * that no glob of the segments and no reader takes ("." NAME ".new"). */
static void staged_path(char *out, size_t cap, unsigned index)
{
	char seg[PATH_MAX];
	seg_path(seg, sizeof(seg), index, false);
	const char *slash = strrchr(seg, '/');
	size_t dn = slash ? (size_t)(slash + 1 - seg) : 0;
	memcpy(out, seg, dn);
	isc_fmt(out + dn, cap - dn, ".%s.new", seg + dn);
}

/* Numbering goes on after the highest segment of this pid already there (an earlier
 * image of the process, or a process that had our pid): never overwrite one. A staged
 * segment of our pid there was left by a process killed while creating it: removed. */
static unsigned first_index(void)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(rec.base, '/');
	size_t dn = slash ? (size_t)(slash - rec.base) : 0;
	memcpy(dir, rec.base, dn);
	dir[dn] = '\0';
	const char *name = slash ? slash + 1 : rec.base;
	size_t nn = strlen(name);
	unsigned hi = 0;
	/* The path is absolute unless the working directory was gone at start-up. */
	DIR *d = opendir(slash == NULL ? "." : dn ? dir : "/");
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, name, nn) == 0 && strncmp(e->d_name + nn, ".seg-", 5) == 0) {
			unsigned i = (unsigned)strtoul(e->d_name + nn + 5, NULL, 10);
			hi = i > hi ? i : hi;
		} else if (e->d_name[0] == '.' && strncmp(e->d_name + 1, name, nn) == 0 &&
			   strncmp(e->d_name + 1 + nn, ".seg-", 5) == 0) {
			unlinkat(dirfd(d), e->d_name, 0);
		}
	}
	if (d) {
		closedir(d);
	}
	return hi + 1;
}

static void setup(void)
{
	const char *out = isc_session.output;
	size_t n = strlen(out);
	if (n > 5 && strcmp(out + n - 5, ".json") == 0) {
		n -= 5;
	}
	char stem[PATH_MAX];
	memcpy(stem, out, n);
	stem[n] = '\0';
	isc_fmt(rec.base, sizeof(rec.base), "%s.%d", stem, isc_session.pid);
	isc_fmt(rec.trace, sizeof(rec.trace), "%s.json", rec.base);
	rec.seg_max = isc_config.segment_size;
	if (isc_config.retain_bytes && rec.seg_max > isc_config.retain_bytes / 4) {
		rec.seg_max = isc_config.retain_bytes / 4; /* at least three closed ones kept */
	}
	rec.next = first_index();
	rec.ready = true;
}

const char *isc_recorder_trace_path(void)
{
	if (!rec.ready) {
		setup();
	}
	return rec.trace;
}

/* Appends members (",\"k\":v...") inside the object text held by v. */
static bool splice_members(struct isc_vec *v, const char *members)
{
	char *p = v->data;
	size_t end = v->len;
	while (end > 0 && p[end - 1] != '}') {
		end--;
	}
	if (end == 0) {
		return false;
	}
	v->len = end - 1;
	for (const char *c = members; *c; c++) {
		char *d = isc_vec_push(v);
		if (d == NULL) {
			return false;
		}
		*d = *c;
	}
	char *d = isc_vec_push(v);
	if (d) {
		*d = '}';
	}
	return d != NULL;
}

/* The segment is written under a staged name and shown as .part only with its header,
 * META and SYSINFO: a kill at any moment leaves no .part that reads as nothing. */
static int open_segment(void)
{
	char path[PATH_MAX], staged[PATH_MAX], members[512];
	rec.index = rec.next++;
	seg_path(path, sizeof(path), rec.index, true);
	staged_path(staged, sizeof(staged), rec.index);
	int r = isc_spill_create(&rec.spill, staged, (uint64_t)isc_session.pid,
				 isc_session.start_ns);
	if (r < 0) {
		isc_spill_close(&rec.spill);
		unlink(staged);
		return r;
	}
	rec.opened_ns = isc_now();
	struct isc_vec meta, sysinfo;
	isc_fmt(members, sizeof(members),
		",\"" ISC_KEY_RECORDER "\":{\"mode\":\"continuous\",\"segment\":%u,"
		"\"opened_ns\":%llu,\"segment_max_bytes\":%llu,\"segment_max_ns\":%llu,"
		"\"retain\":\"%s\",\"dropped_segments\":%llu,\"dropped_bytes\":%llu,"
		"\"dropped_records\":%llu}",
		rec.index, (unsigned long long)rec.opened_ns, (unsigned long long)rec.seg_max,
		(unsigned long long)isc_config.segment_ns, isc_config.retain,
		(unsigned long long)rec.dropped_segments, (unsigned long long)rec.dropped_bytes,
		(unsigned long long)rec.dropped_records);
	if (isc_trailer_start(&meta, &sysinfo) && splice_members(&meta, members)) {
		isc_spill_queue(&rec.spill, ISC_BLK_META, meta.data, meta.len, NULL, 0);
		isc_spill_queue(&rec.spill, ISC_BLK_SYSINFO, sysinfo.data, sysinfo.len, NULL, 0);
		r = isc_spill_sync(&rec.spill);
	}
	isc_vec_finish(&meta);
	isc_vec_finish(&sysinfo);
	isc_spill_release(&rec.spill);
	r = r == 0 ? isc_spill_rename(&rec.spill, path) : r;
	if (r < 0) {
		unlink(staged);
	}
	rec.open = r == 0;
	return r;
}

struct isc_spill *isc_recorder_spill(void)
{
	if (rec.open) {
		return &rec.spill;
	}
	if (rec.failed) {
		return NULL;
	}
	if (!rec.ready) {
		setup();
	}
	int r = open_segment();
	if (r < 0) {
		rec.failed = true;
		isc_error(
			"continuous mode: cannot create a segment beside %s (%s): events are kept "
			"in memory until the cap",
			rec.base, strerror(-r));
		return NULL;
	}
	return &rec.spill;
}

bool isc_recorder_full(const struct isc_spill *s, uint64_t bytes)
{
	if (s != &rec.spill || s->records == 0) {
		return false; /* an empty segment takes what comes: never rotate in a loop */
	}
	if (bytes == 0) {
		return isc_now() - rec.opened_ns >= isc_config.segment_ns;
	}
	return s->size + s->queued + bytes > rec.seg_max;
}

static void drop_oldest(void)
{
	char path[PATH_MAX];
	struct kept *k = &rec.kept[0];
	seg_path(path, sizeof(path), k->index, false);
	unlink(path);
	rec.dropped_segments++;
	rec.dropped_bytes += k->bytes;
	rec.dropped_records += k->records;
	rec.kept_bytes -= k->bytes;
	memmove(&rec.kept[0], &rec.kept[1], (--rec.nkept) * sizeof(rec.kept[0]));
}

/* The oldest closed segments beyond INFERSCOPE_RETAIN go first. The bytes bound
 * counts the open segment at its largest (with symbols as large as the largest block
 * yet), so segments on disk never exceed it. */
static void retain(uint64_t now)
{
	uint64_t room = isc_config.retain_bytes;
	while (rec.nkept > 0) {
		bool too_many = rec.nkept > MAX_KEPT - 1;
		bool too_big = room && rec.kept_bytes + rec.seg_max + SLACK + rec.sym_max > room;
		bool too_old = isc_config.retain_ns && now > rec.kept[0].end_ns &&
			       now - rec.kept[0].end_ns > isc_config.retain_ns;
		if (!too_many && !too_big && !too_old) {
			break;
		}
		drop_oldest();
	}
}

struct sym_pass {
	struct isc_sym_builder b;
	bool failed;
};

static void add_symbol(void *ctx, uint64_t pc)
{
	struct sym_pass *p = ctx;
	struct isc_symbol s;
	if (!p->failed && !isc_sym_builder_has(&p->b, pc) && isc_symbolize(NULL, pc, &s)) {
		p->failed = !isc_sym_builder_add(&p->b, pc, &s);
	}
}

/*
 * The symbols of the open segment's stacks (format/symbols.h): its records read back
 * from the file (synced), each address the converter will ask symbolised now, while
 * the modules are there. Every segment carries all of its own, even those an earlier
 * segment carried too: the watcher reads a segment alone and retention may delete any.
 */
static void write_symbols(void)
{
	char part[PATH_MAX];
	struct isc_spill_reader rd;
	struct isc_spill_ref b;
	struct sym_pass p = { .failed = false };
	uint64_t t0 = isc_now();
	seg_path(part, sizeof(part), rec.index, true);
	int fd = open(part, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		return;
	}
	int r = isc_spill_reader_open(&rd, fd);
	close(fd);
	if (r < 0) {
		return;
	}
	isc_sym_builder_init(&p.b);
	isc_symbolize_refresh(); /* libraries loaded (or unloaded) since the last segment */
	while (isc_spill_reader_next(&rd, &b) == 1) {
		const struct isc_spill_events *h = (const void *)b.data;
		if (b.type != ISC_BLK_EVENTS || b.size < sizeof(*h)) {
			continue;
		}
		size_t n = (b.size - sizeof(*h)) / sizeof(struct isc_event);
		isc_stack_queries((const void *)(h + 1), h->count < n ? h->count : n, add_symbol,
				  &p);
	}
	isc_spill_reader_close(&rd);
	size_t bytes = 0;
	const void *block = p.failed ? NULL : isc_sym_builder_block(&p.b, &bytes);
	if (block != NULL &&
	    isc_spill_queue(&rec.spill, ISC_BLK_SYMBOLS, block, bytes, NULL, 0) == 0 &&
	    isc_spill_sync(&rec.spill) == 0) {
		uint64_t added = sizeof(struct isc_spill_block) + ((bytes + 7) & ~(size_t)7);
		rec.sym_bytes += added;
		rec.sym_max = added > rec.sym_max ? added : rec.sym_max;
		rec.sym_pcs += p.b.syms.len;
	}
	uint64_t ns = isc_now() - t0;
	isc_debug("segment %u: %zu addresses symbolised, %zu bytes, %llu us", rec.index,
		  p.b.syms.len, bytes, (unsigned long long)(ns / 1000));
	isc_sym_builder_finish(&p.b);
	rec.sym_ns += ns;
}

void isc_recorder_close(void)
{
	char part[PATH_MAX], done[PATH_MAX];
	if (!rec.open) {
		return;
	}
	if (isc_spill_sync(&rec.spill) == 0) {
		write_symbols();
	}
	isc_spill_close(&rec.spill);
	rec.open = false;
	seg_path(part, sizeof(part), rec.index, true);
	seg_path(done, sizeof(done), rec.index, false);
	if (rename(part, done) != 0) {
		return; /* the .part stays: the analyzer reads it all the same */
	}
	uint64_t now = isc_now();
	if (rec.nkept == MAX_KEPT) {
		drop_oldest();
	}
	struct kept *k = &rec.kept[rec.nkept++];
	k->index = rec.index;
	k->bytes = rec.spill.size;
	k->records = rec.spill.records;
	k->start_ns = rec.opened_ns;
	k->end_ns = now;
	rec.kept_bytes += k->bytes;
	retain(now);
}

struct isc_spill *isc_recorder_rotate(void)
{
	isc_recorder_close();
	return isc_recorder_spill();
}

int isc_recorder_merge(const char *path)
{
	/* mmap'd, not on the stack: the collector's stack is small, and no malloc here
	 * (the freeze may run in a signal handler) */
	size_t bytes = (MAX_KEPT + 1) * (PATH_MAX + sizeof(char *));
	char *mem = isc_map(bytes);
	if (mem == NULL) {
		return -ENOMEM;
	}
	const char **v = (const char **)mem;
	char *paths = mem + (MAX_KEPT + 1) * sizeof(char *);
	size_t n = 0;
	for (unsigned i = 0; i < rec.nkept; i++, n++) {
		v[n] = paths + n * PATH_MAX;
		seg_path(paths + n * PATH_MAX, PATH_MAX, rec.kept[i].index, false);
	}
	if (rec.open) {
		isc_spill_sync(&rec.spill);
		isc_spill_release(&rec.spill);
		v[n] = paths + n * PATH_MAX;
		seg_path(paths + n * PATH_MAX, PATH_MAX, rec.index, true);
		n++;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST && unlink(path) == 0) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	int r = fd < 0 ? -errno : isc_spill_merge(v, n, fd, NULL);
	if (fd >= 0 && close(fd) != 0 && r == 0) {
		r = -errno;
	}
	isc_unmap(mem, bytes);
	return r;
}

size_t isc_recorder_trailer(char *out, size_t cap)
{
	unsigned first = rec.nkept ? rec.kept[0].index : rec.index;
	unsigned last = rec.open ? rec.index : rec.nkept ? rec.kept[rec.nkept - 1].index : 0;
	return isc_fmt(out, cap,
		       ",\"" ISC_KEY_RETENTION "\":{\"retain\":\"%s\",\"first_segment\":%u,"
		       "\"last_segment\":%u,\"dropped_segments\":%llu,\"dropped_bytes\":%llu,"
		       "\"dropped_records\":%llu,\"symbols\":{\"addresses\":%llu,"
		       "\"bytes\":%llu,\"ns\":%llu}}",
		       isc_config.retain, first, last, (unsigned long long)rec.dropped_segments,
		       (unsigned long long)rec.dropped_bytes,
		       (unsigned long long)rec.dropped_records, (unsigned long long)rec.sym_pcs,
		       (unsigned long long)rec.sym_bytes, (unsigned long long)rec.sym_ns);
}

void isc_recorder_reset_after_fork(void)
{
	if (rec.open) {
		isc_spill_close(&rec.spill); /* the parent's, if a write held it open */
	}
	memset(&rec, 0, sizeof(rec));
	rec.spill.fd = -1;
}

void isc_recorder_discard(void)
{
	char path[PATH_MAX];
	if (rec.open) {
		isc_spill_close(&rec.spill);
		rec.open = false;
		seg_path(path, sizeof(path), rec.index, true);
		unlink(path);
	}
	while (rec.nkept > 0) {
		drop_oldest();
	}
}

/*
 * Continuous mode: CUPTI hands over its buffers when they are full, which at a steady
 * rate can take minutes; a flight recorder killed meanwhile would have no GPU
 * timeline. The collector asks for them twice a segment (at most every second), so
 * each segment holds the GPU work of about its own time. Not a forced flush: that one
 * hands over the activities still in flight with zeroed timestamps, lost for good (and
 * a segment whose window then starts at 0); completed records only, the rest at the
 * next tick.
 */
void isc_recorder_tick(uint64_t now)
{
	static uint64_t last;
	uint64_t every = isc_config.segment_ns / 2;
	every = every < 1000000000u ? every : 1000000000u;
	if (now - last >= every) {
		last = now;
		isc_hooks_cuda_flush_completed();
	}
}
