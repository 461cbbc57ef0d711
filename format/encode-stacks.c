/* SPDX-License-Identifier: MIT */
/*
 * Sampled stacks in the trace: cpu_sample events, and the interned frames and stacks
 * every event with a stack refers to by "stack_id" (docs/trace-format.md, "stacks").
 *
 * A native frame is one code address; it is symbolised once, the first time it is
 * seen, through the converter's symboliser (the live process reads the ELF files of
 * its modules; offline there is none and frames keep their raw address). A Python
 * frame is (name, file, line), already resolved to string ids by the collector.
 *
 * Python frames are merged with native ones at the evaluator: each native frame in
 * _PyEval_EvalFrameDefault is replaced by the Python frames that call of the
 * evaluator was running (ISC_PYF_ENTRY ends each group). Groups left over - the
 * native unwind stopped early, as it does through code without unwind information -
 * go after the native frames, outermost last.
 *
 * Memory: mmap'd vectors and open-addressing tables (scratch.h), no malloc.
 */
#include <string.h>

#include "format/encode.h"

#define MAX_FRAMES 512

enum { KIND_NATIVE = 1, KIND_PYTHON = 2 };

struct frame {
	uint64_t a, b; /* native: pc, leaf flag; python: name | file << 32, line | flags */
	uint8_t kind;
	bool eval;    /* native frame in the CPython evaluator */
	uint32_t map; /* native: index + 1 into the table's maps, 0 unknown */
	struct isc_symbol sym;
};

/* A module's executable mapping, as the frames' symbols name it (pprof's Mapping). */
struct map {
	const char *path, *build_id;
	uint64_t start, limit, offset, base;
};

struct stack {
	uint64_t hash;
	uint32_t off, len; /* into ids */
};

struct table {
	uint32_t *slot; /* index + 1, 0 = empty */
	size_t cap;	/* power of two */
};

struct isc_stack_table {
	isc_symbolize_fn symbolize;
	void *ctx;
	struct isc_vec frames; /* struct frame, id = index + 1 */
	struct isc_vec stacks; /* struct stack, id = index + 1 */
	struct isc_vec ids;    /* uint32_t frame ids of all stacks */
	struct isc_vec maps;   /* struct map, id = index + 1 */
	struct table fmap, smap;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static bool table_grow(struct table *t, size_t want, uint64_t (*hash_of)(void *, uint32_t),
		       void *ctx)
{
	if (want * 2 <= t->cap) {
		return true;
	}
	size_t cap = t->cap ? t->cap * 2 : 4096;
	while (want * 2 > cap) {
		cap *= 2;
	}
	uint32_t *s = isc_map(cap * sizeof(*s));
	if (s == NULL) {
		return false;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (t->slot[i]) {
			size_t k = hash_of(ctx, t->slot[i] - 1) & (cap - 1);
			while (s[k]) {
				k = (k + 1) & (cap - 1);
			}
			s[k] = t->slot[i];
		}
	}
	isc_unmap(t->slot, t->cap * sizeof(*s));
	t->slot = s;
	t->cap = cap;
	return true;
}

static uint64_t frame_hash(const struct frame *f)
{
	return mix(mix(f->kind, f->a), f->b);
}

static uint64_t frame_hash_at(void *ctx, uint32_t i)
{
	struct isc_stack_table *t = ctx;
	return frame_hash((struct frame *)t->frames.data + i);
}

static uint64_t stack_hash_at(void *ctx, uint32_t i)
{
	struct isc_stack_table *t = ctx;
	return ((struct stack *)t->stacks.data)[i].hash;
}

struct isc_stack_table *isc_stack_table_create(isc_symbolize_fn fn, void *ctx)
{
	struct isc_stack_table *t = isc_map(sizeof(*t));
	if (t == NULL) {
		return NULL;
	}
	t->symbolize = fn;
	t->ctx = ctx;
	isc_vec_init(&t->frames, sizeof(struct frame));
	isc_vec_init(&t->stacks, sizeof(struct stack));
	isc_vec_init(&t->ids, sizeof(uint32_t));
	isc_vec_init(&t->maps, sizeof(struct map));
	return t;
}

void isc_stack_table_destroy(struct isc_stack_table *t)
{
	if (t == NULL) {
		return;
	}
	isc_vec_finish(&t->frames);
	isc_vec_finish(&t->stacks);
	isc_vec_finish(&t->ids);
	isc_vec_finish(&t->maps);
	isc_unmap(t->fmap.slot, t->fmap.cap * sizeof(uint32_t));
	isc_unmap(t->smap.slot, t->smap.cap * sizeof(uint32_t));
	isc_unmap(t, sizeof(*t));
}

size_t isc_stack_table_count(const struct isc_stack_table *t)
{
	return t ? t->stacks.len : 0;
}

static bool is_evaluator(const char *fn)
{
	static const char eval[] = "_PyEval_EvalFrameDefault";
	return fn && strncmp(fn, eval, sizeof(eval) - 1) == 0;
}

/* Id of the mapping the symbol s names (added when new), 0 when it names none. */
static uint32_t map_id(struct isc_stack_table *t, const struct isc_symbol *s)
{
	if (s->path == NULL || s->path[0] == '\0') {
		return 0;
	}
	const struct map *m = t->maps.data;
	for (size_t i = t->maps.len; i-- > 0;) {
		if (m[i].start == s->map_start && strcmp(m[i].path, s->path) == 0) {
			return (uint32_t)i + 1;
		}
	}
	struct map *n = isc_vec_push(&t->maps);
	if (n == NULL) {
		return 0;
	}
	*n =
		(struct map){ s->path,	    s->build_id,   s->map_start,
			      s->map_limit, s->map_offset, s->base };
	return (uint32_t)t->maps.len;
}

/* Frame id of f (interned; native frames symbolised on first sight); 0 on failure. */
static uint32_t frame_id(struct isc_stack_table *t, const struct frame *f)
{
	if (!table_grow(&t->fmap, t->frames.len + 1, frame_hash_at, t)) {
		return 0;
	}
	uint64_t h = frame_hash(f);
	size_t k = h & (t->fmap.cap - 1);
	struct frame *all = t->frames.data;
	for (; t->fmap.slot[k]; k = (k + 1) & (t->fmap.cap - 1)) {
		const struct frame *g = &all[t->fmap.slot[k] - 1];
		if (g->kind == f->kind && g->a == f->a && g->b == f->b) {
			return t->fmap.slot[k];
		}
	}
	struct frame *n = isc_vec_push(&t->frames);
	if (n == NULL) {
		return 0;
	}
	*n = *f;
	if (f->kind == KIND_NATIVE && t->symbolize) {
		/* a return address points after the call: pc - 1 is inside the caller */
		uint64_t pc = f->b ? f->a : f->a - 1;
		if (t->symbolize(t->ctx, pc, &n->sym)) {
			n->sym.offset += f->a - pc;
			n->eval = is_evaluator(n->sym.function);
			n->map = map_id(t, &n->sym);
		}
	}
	t->fmap.slot[k] = (uint32_t)t->frames.len;
	return (uint32_t)t->frames.len;
}

static uint32_t stack_id(struct isc_stack_table *t, const uint32_t *ids, unsigned n)
{
	uint64_t h = n;
	for (unsigned i = 0; i < n; i++) {
		h = mix(h, ids[i]);
	}
	if (!table_grow(&t->smap, t->stacks.len + 1, stack_hash_at, t)) {
		return 0;
	}
	size_t k = h & (t->smap.cap - 1);
	struct stack *all = t->stacks.data;
	for (; t->smap.slot[k]; k = (k + 1) & (t->smap.cap - 1)) {
		const struct stack *s = &all[t->smap.slot[k] - 1];
		if (s->hash == h && s->len == n &&
		    memcmp((uint32_t *)t->ids.data + s->off, ids, n * sizeof(*ids)) == 0) {
			return t->smap.slot[k];
		}
	}
	size_t off = t->ids.len;
	if (!isc_vec_reserve(&t->ids, off + n)) {
		return 0;
	}
	struct stack *s = isc_vec_push(&t->stacks);
	if (s == NULL) {
		return 0;
	}
	memcpy((uint32_t *)t->ids.data + off, ids, n * sizeof(*ids));
	t->ids.len = off + n;
	s->hash = h;
	s->off = (uint32_t)off;
	s->len = n;
	t->smap.slot[k] = (uint32_t)t->stacks.len;
	return (uint32_t)t->stacks.len;
}

/* Appends the Python frames of group g (frames [from, to)) to out. */
static unsigned add_group(struct isc_stack_table *t, const uint64_t *py, unsigned from, unsigned to,
			  uint32_t *out, unsigned n)
{
	for (unsigned i = from; i < to && n < MAX_FRAMES; i++) {
		struct frame f = { .kind = KIND_PYTHON };
		uint64_t w0 = py[2 * i], w1 = py[2 * i + 1];
		uint32_t flags = (uint32_t)(w1 >> 32);
		if (flags & ISC_PYF_RESOLVED) {
			f.a = w0;
			f.b = (uint32_t)w1;
		} else {
			f.a = 0; /* never resolved: one "unknown" Python frame */
			f.b = 0;
		}
		uint32_t id = frame_id(t, &f);
		if (id) {
			out[n++] = id;
		}
	}
	return n;
}

uint32_t isc_stack_intern(struct isc_stack_table *t, const uint64_t *words, unsigned native,
			  unsigned python)
{
	uint32_t out[MAX_FRAMES];
	unsigned ends[MAX_FRAMES / 2 + 1], groups = 0, n = 0, g = 0;
	const uint64_t *py = words + native;

	if (t == NULL || native + python == 0) {
		return 0;
	}
	for (unsigned i = 0; i < python && groups < MAX_FRAMES / 2; i++) {
		if ((uint32_t)(py[2 * i + 1] >> 32) & ISC_PYF_ENTRY || i + 1 == python) {
			ends[groups++] = i + 1;
		}
	}
	for (unsigned i = 0; i < native && n < MAX_FRAMES; i++) {
		struct frame f = { .kind = KIND_NATIVE, .a = words[i], .b = i == 0 };
		uint32_t id = frame_id(t, &f);
		if (id == 0) {
			continue;
		}
		if (((struct frame *)t->frames.data)[id - 1].eval && g < groups) {
			n = add_group(t, py, g ? ends[g - 1] : 0, ends[g], out, n);
			g++;
			continue;
		}
		out[n++] = id;
	}
	for (; g < groups; g++) {
		n = add_group(t, py, g ? ends[g - 1] : 0, ends[g], out, n);
	}
	return n ? stack_id(t, out, n) : 0;
}

unsigned isc_stack_words(const struct isc_event *recs, unsigned avail, unsigned words,
			 uint64_t *out, unsigned max)
{
	unsigned n = 0;
	for (unsigned k = 0; k < words && n < max; k++) {
		unsigned r = k / ISC_STACK_PER_RECORD;
		if (r >= avail || recs[r].kind != ISC_EV_STACK) {
			break;
		}
		memcpy(&out[n++], (const unsigned char *)&recs[r] + isc_stack_offset(k % 7),
		       sizeof(uint64_t));
	}
	return n;
}

unsigned isc_encode_stack_block(struct isc_enc *e, const struct isc_event *recs, unsigned avail,
				unsigned nrec)
{
	uint64_t words[MAX_FRAMES * 2];
	unsigned have = 0;
	if (nrec == 0 && avail > 0 && recs[0].kind == ISC_EV_STACK) { /* from the header */
		uint64_t h;
		memcpy(&h, &recs[0], sizeof(h));
		nrec = isc_stack_records(1 + (uint16_t)h + 2u * (uint16_t)(h >> 16));
	}
	while (have < nrec && have < avail && recs[have].kind == ISC_EV_STACK) {
		have++;
	}
	unsigned n =
		isc_stack_words(recs, have, have * ISC_STACK_PER_RECORD, words, MAX_FRAMES * 2);
	if (have < nrec || n == 0 || words[0] >> 48 != ISC_STACK_BLOCK_MAGIC) {
		e->skipped += have < nrec;
		return have;
	}
	unsigned native = (uint16_t)words[0], python = (uint16_t)(words[0] >> 16);
	if (1 + native + 2 * python > n) {
		e->skipped++;
		return have;
	}
	uint32_t id = isc_stack_intern(e->stacks, words + 1, native, python);
	if (id) {
		isc_json_kv_uint(e->j, "stack_id", id); /* in metadata; isc_enc_end adds it */
		e->stack_id = id;
	}
	return have;
}

unsigned isc_encode_cpu_sample(struct isc_enc *e, const struct isc_event *r, unsigned avail)
{
	const struct isc_cpu_sample_payload *p = &r->u.sample;
	uint64_t words[MAX_FRAMES * 2];
	unsigned want = p->native + 2u * p->python;
	unsigned nrec = isc_stack_records(want);
	unsigned n = isc_stack_words(r + 1, avail - 1, want, words, MAX_FRAMES * 2);
	unsigned have = (n + ISC_STACK_PER_RECORD - 1) / ISC_STACK_PER_RECORD;
	struct isc_json *j = e->j;

	if (n < want) {
		e->skipped++; /* torn: the sample is written with the frames it has */
	}
	unsigned native = p->native < n ? p->native : n;
	unsigned python = n > native ? (n - native) / 2 : 0;
	python = python < p->python ? python : p->python;
	isc_json_begin_object(j);
	isc_json_kv_uint(j, "id", e->next_id++);
	isc_json_kv_string(j, "type", "cpu_sample");
	/* name and metadata.thread_id: every event of format 1.x has them (the schema) */
	isc_json_kv_string(j, "name", "cpu_sample");
	isc_json_key(j, "timestamp_us");
	isc_json_ns_as_us(j, (int64_t)r->ts);
	isc_json_kv_uint(j, "thread_id", r->tid);
	isc_json_kv_uint(j, "pid", e->pid);
	isc_json_key(j, "weight_us");
	isc_json_ns_as_us(j, (int64_t)r->dur);
	uint32_t id = isc_stack_intern(e->stacks, words, native, python);
	isc_json_kv_uint(j, "stack_id", id);
	isc_json_key(j, "metadata");
	isc_json_begin_object(j);
	isc_json_kv_uint(j, "thread_id", r->tid);
	isc_json_end_object(j);
	isc_json_end_object(j);
	e->written++;
	return 1 + (have < nrec ? have : nrec);
}

static void write_frame(struct isc_json *j, const struct frame *f, uint32_t id,
			const struct isc_strings *strings)
{
	isc_json_begin_object(j);
	isc_json_kv_uint(j, "id", id);
	if (f->kind == KIND_PYTHON) {
		size_t nn = 0, fn = 0;
		const char *name = isc_strings_get(strings, (uint32_t)f->a, &nn);
		const char *file = isc_strings_get(strings, (uint32_t)(f->a >> 32), &fn);
		isc_json_kv_string(j, "kind", "python");
		isc_json_key(j, "function");
		isc_json_string_n(j, name ? name : "", name ? nn : 0);
		isc_json_key(j, "module");
		isc_json_string_n(j, file ? file : "", file ? fn : 0);
		if (file) {
			isc_json_key(j, "file");
			isc_json_string_n(j, file, fn);
		}
		if (f->b) {
			isc_json_kv_uint(j, "line", f->b);
		}
	} else {
		isc_json_kv_string(j, "kind", "native");
		isc_json_kv_string(j, "function", f->sym.function ? f->sym.function : "");
		isc_json_kv_string(j, "module", f->sym.module ? f->sym.module : "");
		if (f->sym.file) {
			isc_json_kv_string(j, "file", f->sym.file);
		}
		if (f->sym.line) {
			isc_json_kv_uint(j, "line", f->sym.line);
		}
		isc_json_key(j, "address");
		isc_json_hex(j, f->sym.module ? f->sym.offset : f->a);
		if (f->sym.start) {
			isc_json_key(j, "function_start");
			isc_json_hex(j, f->sym.start);
		}
		if (f->sym.build_id) {
			isc_json_kv_string(j, "build_id", f->sym.build_id);
		}
		if (f->map) {
			isc_json_kv_uint(j, "mapping", f->map);
		}
	}
	isc_json_end_object(j);
}

void isc_stack_table_write(struct isc_stack_table *t, struct isc_json *j,
			   const struct isc_strings *strings)
{
	isc_json_key(j, "stacks");
	isc_json_begin_object(j);
	isc_json_key(j, "frames");
	isc_json_begin_array(j);
	const struct frame *fr = t ? t->frames.data : NULL;
	for (size_t i = 0; t && i < t->frames.len; i++) {
		write_frame(j, &fr[i], (uint32_t)i + 1, strings);
	}
	isc_json_end_array(j);
	isc_json_key(j, "stacks");
	isc_json_begin_array(j);
	const struct stack *st = t ? t->stacks.data : NULL;
	for (size_t i = 0; t && i < t->stacks.len; i++) {
		isc_json_begin_object(j);
		isc_json_kv_uint(j, "id", i + 1);
		isc_json_key(j, "frames");
		isc_json_begin_array(j);
		const uint32_t *ids = (const uint32_t *)t->ids.data + st[i].off;
		for (uint32_t k = 0; k < st[i].len; k++) {
			isc_json_uint(j, ids[k]);
		}
		isc_json_end_array(j);
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
	const struct map *m = t ? t->maps.data : NULL;
	if (m != NULL && t->maps.len > 0) {
		isc_json_key(j, "mappings");
		isc_json_begin_array(j);
	}
	for (size_t i = 0; m != NULL && i < t->maps.len; i++) {
		isc_json_begin_object(j);
		isc_json_kv_uint(j, "id", i + 1);
		isc_json_kv_string(j, "path", m[i].path);
		if (m[i].build_id && m[i].build_id[0]) {
			isc_json_kv_string(j, "build_id", m[i].build_id);
		}
		const char *const key[] = { "start", "limit", "offset", "base" };
		const uint64_t v[] = { m[i].start, m[i].limit, m[i].offset, m[i].base };
		for (unsigned k = 0; k < 4; k++) {
			isc_json_key(j, key[k]);
			isc_json_hex(j, v[k]);
		}
		isc_json_end_object(j);
	}
	if (m != NULL && t->maps.len > 0) {
		isc_json_end_array(j);
	}
	isc_json_end_object(j);
}

void isc_stack_queries(const struct isc_event *r, size_t n, void (*fn)(void *ctx, uint64_t pc),
		       void *ctx)
{
	uint64_t words[MAX_FRAMES * 2];
	for (size_t i = 0; i < n; i++) {
		unsigned kind = r[i].kind;
		if (kind >= ISC_EV_EXT && kind <= ISC_EV_STACK) {
			continue; /* a continuation whose head is in an earlier block */
		}
		/* the head's stack: the STACK records after its other continuations */
		size_t s = i + 1;
		while (s < n && r[s].kind >= ISC_EV_EXT && r[s].kind < ISC_EV_STACK) {
			s++;
		}
		size_t e = s;
		while (e < n && r[e].kind == ISC_EV_STACK && e - s < MAX_FRAMES) {
			e++;
		}
		if (e == s) {
			continue;
		}
		unsigned got = isc_stack_words(r + s, (unsigned)(e - s),
					       (unsigned)(e - s) * ISC_STACK_PER_RECORD, words,
					       MAX_FRAMES * 2);
		unsigned native = 0, first = 0;
		if (kind == ISC_EV_CPU_SAMPLE) {
			native = r[i].u.sample.native;
		} else if (kind == ISC_EV_SYSCALL) {
			native = r[i].u.syscall.frames;
		} else if (kind == ISC_EV_MEMORY) {
			native = r[i].u.memory.frames;
		} else if (got > 0 && words[0] >> 48 == ISC_STACK_BLOCK_MAGIC) {
			native = (uint16_t)words[0]; /* a block with a header word */
			first = 1;
		}
		/* as frame_id() asks: the innermost frame as it is, return addresses - 1 */
		for (unsigned k = 0; k < native && first + k < got; k++) {
			uint64_t w = words[first + k];
			if (w != 0) {
				fn(ctx, k == 0 ? w : w - 1);
			}
		}
		i = e - 1;
	}
}
