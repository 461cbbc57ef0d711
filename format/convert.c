/* SPDX-License-Identifier: MIT */
#include "format/convert.h"
#include "format/vocab.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "common/clock.h"
#include "format/spill.h"
#include "format/symbols.h"

/* One row per record kind; continuation kinds are consumed by their head. Families
 * outside the core add their encoders here. */
static const isc_encode_fn encoders[ISC_EV__COUNT] = {
	[ISC_EV_SCOPE] = isc_encode_scope,	     [ISC_EV_INSTANT] = isc_encode_instant,
	[ISC_EV_COUNTER] = isc_encode_counter,	     [ISC_EV_CUDA_API] = isc_encode_cuda_api,
	[ISC_EV_GPU_KERNEL] = isc_encode_gpu_kernel, [ISC_EV_GPU_MEMCPY] = isc_encode_gpu_memcpy,
	[ISC_EV_GPU_MEMSET] = isc_encode_gpu_memset, [ISC_EV_GPU_SYNC] = isc_encode_gpu_sync,
	[ISC_EV_SYSCALL] = isc_encode_syscall,	     [ISC_EV_MEMORY] = isc_encode_memory,
	[ISC_EV_CPU_SAMPLE] = isc_encode_cpu_sample, [ISC_EV_GRAPH_NODE] = isc_encode_graph_node,
};

#define OUT_BUF (1u << 20)

struct json_text {
	const char *p;
	size_t n;
};

/*
 * A spill holds one segment per image of the process (docs/trace-format.md, "Exec
 * chains"): an image that execs appends a SEGMENT block, and the next image appends
 * its own META block and records to the same file. Each image has its own string
 * table (ids are offsets into it), so strings are loaded per segment. A chain longer
 * than this keeps its later images in the last segment (their names may be wrong).
 */
#define MAX_SEGMENTS 64

struct scan {
	struct json_text meta, sysinfo, tmeta, tsysinfo; /* meta, sysinfo: the last image's */
	unsigned nseg;		      /* segments (1 + META blocks after the first) */
	size_t seg_off[MAX_SEGMENTS]; /* file offset where each segment starts */
	size_t strings_end[MAX_SEGMENTS];
	struct json_text chain[MAX_SEGMENTS]; /* SEGMENT blocks: the images that exec'd */
	unsigned nchain;
	uint64_t records;
	uint64_t max_end_ns;
	unsigned nsymbols; /* SYMBOLS blocks */
};

size_t isc_format_utc(char *out, uint64_t ns)
{
	/* days -> civil date (proleptic Gregorian), after H. Hinnant's public algorithm */
	int64_t secs = (int64_t)(ns / 1000000000u);
	int64_t days = secs / 86400, rem = secs % 86400;
	int64_t z = days + 719468;
	int64_t era = z / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = yoe + era * 400;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	int64_t d = doy - (153 * mp + 2) / 5 + 1;
	int64_t m = mp < 10 ? mp + 3 : mp - 9;
	y += (m <= 2);
	unsigned us = (unsigned)(ns % 1000000000u / 1000u);
	int64_t v[] = { y, m, d, rem / 3600, rem / 60 % 60, rem % 60 };
	static const char sep[] = "--T::.";
	static const int width[] = { 4, 2, 2, 2, 2, 2 };
	size_t n = 0;
	for (int i = 0; i < 6; i++) {
		for (int k = width[i] - 1; k >= 0; k--) {
			int64_t x = v[i];
			for (int q = 0; q < k; q++) {
				x /= 10;
			}
			out[n++] = (char)('0' + x % 10);
		}
		out[n++] = sep[i];
	}
	for (unsigned div = 100000; div > 0; div /= 10) {
		out[n++] = (char)('0' + us / div % 10);
	}
	out[n++] = 'Z';
	out[n] = '\0';
	return n;
}

static void keep_text(struct json_text *t, const struct isc_spill_ref *b)
{
	t->p = (const char *)b->data;
	t->n = b->size;
}

static void scan_events(struct scan *sc, const struct isc_spill_ref *b)
{
	const struct isc_spill_events *h = (const void *)b->data;
	if (b->size < sizeof(*h)) {
		return;
	}
	size_t n = (b->size - sizeof(*h)) / sizeof(struct isc_event);
	if (h->count < n) {
		n = h->count;
	}
	const struct isc_event *r = (const void *)(h + 1);
	for (size_t i = 0; i < n; i++) {
		uint64_t end = r[i].ts + r[i].dur;
		if (r[i].kind < ISC_EV_EXT && end > sc->max_end_ns) {
			sc->max_end_ns = end;
		}
	}
	sc->records += n;
}

/* First pass: where the metadata blocks are, how big the string table is. */
static void scan(struct isc_spill_reader *rd, struct scan *sc)
{
	struct isc_spill_ref b;
	bool seen_meta = false;
	memset(sc, 0, sizeof(*sc));
	sc->nseg = 1;
	sc->seg_off[0] = rd->off;
	while (isc_spill_reader_next(rd, &b) == 1) {
		size_t *strings_end = &sc->strings_end[sc->nseg - 1];
		switch (b.type) {
		case ISC_BLK_META:
			/* every image starts with its META block: a new segment */
			if (seen_meta && sc->nseg < MAX_SEGMENTS) {
				sc->seg_off[sc->nseg++] = b.offset;
			}
			seen_meta = true;
			keep_text(&sc->meta, &b);
			break;
		case ISC_BLK_SYSINFO:
			keep_text(&sc->sysinfo, &b);
			break;
		case ISC_BLK_SEGMENT:
			if (sc->nchain < MAX_SEGMENTS) {
				keep_text(&sc->chain[sc->nchain++], &b);
			}
			break;
		case ISC_BLK_EVENTS:
			scan_events(sc, &b);
			break;
		case ISC_BLK_SYMBOLS:
			sc->nsymbols++;
			break;
		case ISC_BLK_STRINGS:
			if (b.size >= 8) {
				uint64_t off;
				memcpy(&off, b.data, 8);
				if (off + b.size - 8 > *strings_end && off < UINT32_MAX) {
					*strings_end = (size_t)(off + b.size - 8);
				}
			}
			break;
		}
	}
}

/* Second pass over segment seg's STRINGS blocks: copy each slice to its offset. */
static int load_strings(const struct isc_spill_reader *rd, const struct scan *sc, unsigned seg,
			struct isc_strings *st)
{
	struct isc_spill_ref b;
	struct isc_spill_reader r = *rd;
	size_t end = sc->strings_end[seg];
	size_t stop = seg + 1 < sc->nseg ? sc->seg_off[seg + 1] : SIZE_MAX;
	st->size = end;
	st->base = NULL;
	if (end == 0) {
		return 0;
	}
	char *base = isc_map(end);
	if (base == NULL) {
		return -ENOMEM;
	}
	r.off = sc->seg_off[seg];
	while (isc_spill_reader_next(&r, &b) == 1 && b.offset < stop) {
		uint64_t off;
		if (b.type != ISC_BLK_STRINGS || b.size < 8) {
			continue;
		}
		memcpy(&off, b.data, 8);
		if (off + b.size - 8 <= end) {
			memcpy(base + off, b.data + 8, b.size - 8);
		}
	}
	st->base = base;
	return 0;
}

/* Writes the members of a JSON object text without its braces, comma-led. */
static void splice_members(struct isc_json *j, const struct json_text *t)
{
	if (t->p == NULL) {
		return;
	}
	const char *a = memchr(t->p, '{', t->n);
	const char *z = t->p + t->n;
	while (z > t->p && z[-1] != '}') {
		z--;
	}
	if (a == NULL || z <= a + 1) {
		return;
	}
	a++;
	z--;
	while (a < z && (*a == ' ' || *a == '\n')) {
		a++;
	}
	if (a < z) {
		isc_json_raw(j, a, (size_t)(z - a));
	}
}

static void write_metadata(struct isc_json *j, const struct scan *sc,
			   const struct isc_convert_opts *o, uint64_t start_ns)
{
	char when[40];
	uint64_t now = o->created_realtime_ns ? o->created_realtime_ns : isc_realtime_ns();
	isc_format_utc(when, now);

	isc_json_key(j, ISC_KEY_TRACE_METADATA);
	isc_json_begin_object(j);
	isc_json_kv_string(j, ISC_KEY_TIMESTAMP_CREATED, when);
	splice_members(j, &sc->meta);
	if (sc->tmeta.p != NULL) {
		splice_members(j, &sc->tmeta);
	} else {
		/* No trailer: the process never flushed. What the spill holds is all we know. */
		isc_json_key(j, ISC_KEY_END_US);
		isc_json_ns_as_us(j, (int64_t)sc->max_end_ns);
		isc_json_kv_double(
			j, "duration_ms",
			sc->max_end_ns > start_ns ? (sc->max_end_ns - start_ns) / 1e6 : 0, 6);
		isc_json_kv_string(j, ISC_KEY_END_REASON, "recovered");
		isc_json_key(j, ISC_KEY_DROPPED_EVENTS);
		isc_json_null(j);
	}
	if (o->snapshot_reason) {
		isc_json_kv_string(j, ISC_KEY_SNAPSHOT_REASON, o->snapshot_reason);
	}
	if (sc->nchain > 0) {
		isc_json_key(j, ISC_KEY_EXEC_CHAIN);
		isc_json_begin_array(j);
		for (unsigned i = 0; i < sc->nchain; i++) {
			isc_json_raw(j, sc->chain[i].p, sc->chain[i].n);
		}
		isc_json_end_array(j);
	}
	isc_json_kv_bool(j, ISC_KEY_COMPLETE,
			 sc->tmeta.p != NULL && o->snapshot_reason == NULL && !o->records_lost);
	isc_json_end_object(j);

	isc_json_key(j, ISC_KEY_SYSTEM_INFO);
	isc_json_begin_object(j);
	splice_members(j, &sc->sysinfo);
	splice_members(j, &sc->tsysinfo);
	isc_json_end_object(j);
}

static bool continuation(unsigned kind)
{
	return kind >= ISC_EV_EXT && kind <= ISC_EV_STACK;
}

/* Inside the capture window of o (see convert.h)? */
static bool in_window(const struct isc_convert_opts *o, const struct isc_event *r)
{
	bool gpu = r->kind == ISC_EV_GPU_KERNEL || r->kind == ISC_EV_GPU_MEMCPY ||
		   r->kind == ISC_EV_GPU_MEMSET || r->kind == ISC_EV_GPU_SYNC;
	/* a graph node is a definition: the window's replays of it need it, whenever it
	 * was captured */
	if (r->kind == ISC_EV_GRAPH_NODE) {
		return true;
	}
	/* every GPU payload starts with the correlation id; ids of calls only CUPTI saw
	 * are not ours to place: those go by time */
	if (gpu && r->u.raw[0] != 0 && r->u.raw[0] < ISC_CUPTI_CORR_BASE) {
		return r->u.raw[0] >= o->window_corr_from && r->u.raw[0] < o->window_corr_until;
	}
	return r->ts >= o->window_from_ns && r->ts <= o->window_until_ns;
}

static void write_records(struct isc_enc *e, const struct isc_event *r, size_t n,
			  const struct isc_convert_opts *o, struct isc_convert_result *res)
{
	for (size_t i = 0; i < n;) {
		unsigned kind = r[i].kind;
		if (o && o->window_until_ns && !continuation(kind) && !in_window(o, &r[i])) {
			do {
				i++;
			} while (i < n && continuation(r[i].kind));
			continue;
		}
		isc_encode_fn fn = kind < ISC_EV__COUNT ? encoders[kind] : NULL;
		if (fn == NULL) {
			/* an orphan continuation or a kind this build does not know */
			e->skipped++;
			i++;
			continue;
		}
		size_t avail = n - i;
		unsigned used = fn(e, &r[i], avail > 0xffffffffu ? 0xffffffffu : (unsigned)avail);
		i += used ? used : 1;
	}
	res->records += n;
}

/*
 * Sorts scopes by parent id (stable, so children keep their order): an LSD radix sort
 * on 16-bit digits, skipping digits all keys share. Scope ids come from one counter,
 * so two or three passes do. No malloc: the temporary array and counters are mmap'd.
 */
static bool sort_scopes(struct isc_scope_rec *v, size_t n)
{
	struct isc_vec tmp;
	uint64_t all_or = 0;
	size_t *count = isc_map(65536 * sizeof(size_t));

	isc_vec_init(&tmp, sizeof(*v));
	if (count == NULL || !isc_vec_reserve(&tmp, n)) {
		isc_unmap(count, 65536 * sizeof(size_t));
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		all_or |= v[i].parent;
	}
	struct isc_scope_rec *src = v, *dst = tmp.data;
	for (unsigned shift = 0; shift < 64 && (all_or >> shift) != 0; shift += 16) {
		memset(count, 0, 65536 * sizeof(size_t));
		for (size_t i = 0; i < n; i++) {
			count[(src[i].parent >> shift) & 0xffff]++;
		}
		size_t sum = 0;
		for (size_t d = 0; d < 65536; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++) {
			dst[count[(src[i].parent >> shift) & 0xffff]++] = src[i];
		}
		struct isc_scope_rec *t = src;
		src = dst;
		dst = t;
	}
	if (src != v) {
		memcpy(v, src, n * sizeof(*v));
	}
	isc_unmap(count, 65536 * sizeof(size_t));
	isc_vec_finish(&tmp);
	return true;
}

/* First index in the parent-sorted array whose parent is p. */
static size_t first_child(const struct isc_scope_rec *v, size_t n, uint64_t p)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].parent < p) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

static void write_scopes(struct isc_enc *e)
{
	struct isc_json *j = e->j;
	struct isc_scope_rec *v = e->scopes.data;
	size_t n = e->scopes.len;
	struct isc_vec by_parent;

	isc_vec_init(&by_parent, sizeof(*v));
	bool sorted = n > 0 && isc_vec_reserve(&by_parent, n);
	if (sorted) {
		memcpy(by_parent.data, v, n * sizeof(*v));
		sorted = sort_scopes(by_parent.data, n);
	}
	const struct isc_scope_rec *bp = by_parent.data;
	isc_json_key(j, ISC_KEY_RELATIONSHIPS);
	isc_json_begin_object(j);
	isc_json_key(j, ISC_KEY_SCOPES);
	isc_json_begin_array(j);
	for (size_t i = 0; i < n; i++) {
		isc_json_begin_object(j);
		isc_json_kv_uint(j, ISC_KEY_ID, v[i].id);
		e->strings = &e->segments[v[i].segment];
		isc_enc_kv_name(e, "name", v[i].name);
		isc_json_key(j, ISC_KEY_PARENT_ID);
		if (v[i].parent) {
			isc_json_uint(j, v[i].parent);
		} else {
			isc_json_null(j);
		}
		isc_json_key(j, ISC_KEY_CHILD_IDS);
		isc_json_begin_array(j);
		for (size_t k = sorted ? first_child(bp, n, v[i].id) : n;
		     k < n && bp[k].parent == v[i].id; k++) {
			isc_json_uint(j, bp[k].id);
		}
		isc_json_end_array(j);
		isc_json_kv_uint(j, ISC_KEY_EVENT_INDEX, v[i].event_index);
		isc_json_kv_uint(j, ISC_KEY_THREAD_ID, v[i].tid);
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
	isc_json_end_object(j);
	isc_vec_finish(&by_parent);
}

/* Which segment the block at offset lies in; the encoder reads its string table,
 * and the records of every image but the last say which segment they belong to. */
static void enter_segment(struct isc_enc *e, const struct scan *sc, size_t offset)
{
	unsigned seg = e->segment;
	while (seg + 1 < sc->nseg && offset >= sc->seg_off[seg + 1]) {
		seg++;
	}
	e->segment = seg;
	e->strings = &e->segments[seg];
	e->tag_segment = seg + 1 < sc->nseg;
}

static int write_trace(struct isc_spill_reader *rd, struct isc_json *j, const struct scan *sc,
		       const struct isc_strings *st, const struct isc_convert_opts *o,
		       struct isc_convert_result *res)
{
	struct isc_enc e;
	struct isc_spill_ref b;
	struct isc_sym_table syms;

	memset(&e, 0, sizeof(e));
	memset(&syms, 0, sizeof(syms));
	e.j = j;
	e.segments = st;
	e.strings = st;
	e.resolve = o->resolve;
	e.resolve_ctx = o->resolve_ctx;
	e.pid = rd->pid;
	isc_symbolize_fn symbolize = o->symbolize;
	void *symbolize_ctx = o->symbolize_ctx;
	if (symbolize == NULL && sc->nsymbols > 0) {
		/* no live process: the symbols it wrote into the spill */
		isc_spill_reader_rewind(rd);
		while (isc_spill_reader_next(rd, &b) == 1) {
			if (b.type == ISC_BLK_SYMBOLS) {
				isc_sym_table_add(&syms, b.data, b.size);
			}
		}
		isc_sym_table_seal(&syms);
		symbolize = isc_sym_table_symbolize;
		symbolize_ctx = &syms;
	}
	e.stacks = isc_stack_table_create(symbolize, symbolize_ctx);
	isc_vec_init(&e.scopes, sizeof(struct isc_scope_rec));

	isc_json_begin_object(j);
	isc_json_kv_string(j, ISC_KEY_FORMAT_VERSION, ISC_FORMAT_VERSION);
	write_metadata(j, sc, o, rd->start_ns);
	isc_json_key(j, ISC_KEY_EVENTS);
	isc_json_begin_array(j);
	isc_spill_reader_rewind(rd);
	while (isc_spill_reader_next(rd, &b) == 1 && j->err == 0) {
		const struct isc_spill_events *h = (const void *)b.data;
		if (b.type != ISC_BLK_EVENTS || b.size < sizeof(*h)) {
			continue;
		}
		size_t n = (b.size - sizeof(*h)) / sizeof(struct isc_event);
		enter_segment(&e, sc, b.offset);
		write_records(&e, (const void *)(h + 1), h->count < n ? h->count : n, o, res);
	}
	enter_segment(&e, sc, SIZE_MAX); /* open scopes: the last image's */
	write_records(&e, o->extra, o->extra ? o->n_extra : 0, o, res);
	isc_json_end_array(j);
	write_scopes(&e);
	if (isc_stack_table_count(e.stacks) > 0) {
		isc_stack_table_write(e.stacks, j, st);
	}
	isc_json_end_object(j);
	isc_json_raw(j, "\n", 1);
	res->events = e.written;
	res->skipped = e.skipped;
	isc_vec_finish(&e.scopes);
	isc_stack_table_destroy(e.stacks);
	isc_sym_table_free(&syms);
	return isc_json_flush(j);
}

int isc_trace_convert(int spill_fd, int out_fd, const struct isc_convert_opts *opts,
		      struct isc_convert_result *res)
{
	static const struct isc_convert_opts defaults;
	struct isc_convert_result local;
	struct isc_spill_reader rd;
	struct isc_strings st[MAX_SEGMENTS];
	struct scan sc;
	struct isc_json j;

	opts = opts ? opts : &defaults;
	res = res ? res : &local;
	memset(res, 0, sizeof(*res));
	int r = isc_spill_reader_open(&rd, spill_fd);
	if (r < 0) {
		return r;
	}
	scan(&rd, &sc);
	sc.tmeta.p = opts->trailer_meta;
	sc.tmeta.n = opts->trailer_meta_len;
	sc.tsysinfo.p = opts->trailer_sysinfo;
	sc.tsysinfo.n = opts->trailer_sysinfo_len;
	res->recovered = sc.tmeta.p == NULL;
	res->torn = rd.torn;
	memset(st, 0, sizeof(st));
	for (unsigned i = 0; i < sc.nseg && r == 0; i++) {
		r = load_strings(&rd, &sc, i, &st[i]);
	}
	char *buf = isc_map(OUT_BUF);
	if (r == 0 && buf == NULL) {
		r = -ENOMEM;
	}
	if (r == 0) {
		isc_json_init(&j, buf, OUT_BUF, isc_json_sink_fd, &out_fd);
		r = write_trace(&rd, &j, &sc, st, opts, res);
		res->bytes = j.written;
	}
	isc_unmap(buf, OUT_BUF);
	for (unsigned i = 0; i < sc.nseg; i++) {
		isc_unmap((void *)st[i].base, st[i].size);
	}
	isc_spill_reader_close(&rd);
	return r;
}
