/* SPDX-License-Identifier: MIT */
/*
 * The symbols block: built by the recorder at a segment's close, read by the converter
 * as its symboliser (symbols.h). No malloc: the memory is mapped (scratch.h), as the
 * rest of the converter's.
 */
#include "format/symbols.h"

#include <string.h>

/* ---- writing ---- */

void isc_sym_builder_init(struct isc_sym_builder *b)
{
	isc_vec_init(&b->maps, sizeof(struct isc_sym_map));
	isc_vec_init(&b->syms, sizeof(struct isc_sym_entry));
	isc_vec_init(&b->text, 1);
	isc_vec_init(&b->slots, sizeof(uint32_t));
	isc_vec_init(&b->block, 1);
}

void isc_sym_builder_finish(struct isc_sym_builder *b)
{
	isc_vec_finish(&b->maps);
	isc_vec_finish(&b->syms);
	isc_vec_finish(&b->text);
	isc_vec_finish(&b->slots);
	isc_vec_finish(&b->block);
}

static size_t slot_of(const uint32_t *slot, size_t cap, const struct isc_sym_entry *e, uint64_t pc)
{
	size_t k = (size_t)((pc * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
	while (slot[k] != 0 && e[slot[k] - 1].pc != pc) {
		k = (k + 1) & (cap - 1);
	}
	return k;
}

bool isc_sym_builder_has(struct isc_sym_builder *b, uint64_t pc)
{
	return b->slots.len > 0 &&
	       ((uint32_t *)
			b->slots.data)[slot_of(b->slots.data, b->slots.len, b->syms.data, pc)] != 0;
}

/* Keeps the table at most half full; the slot count is a power of two. */
static bool grow_slots(struct isc_sym_builder *b)
{
	if ((b->syms.len + 1) * 2 <= b->slots.len) {
		return true;
	}
	size_t cap = b->slots.len ? b->slots.len * 2 : 1024;
	struct isc_vec n;
	isc_vec_init(&n, sizeof(uint32_t));
	if (!isc_vec_reserve(&n, cap)) {
		return false;
	}
	memset(n.data, 0, cap * sizeof(uint32_t));
	n.len = cap;
	const struct isc_sym_entry *e = b->syms.data;
	for (size_t i = 0; i < b->syms.len; i++) {
		((uint32_t *)n.data)[slot_of(n.data, cap, e, e[i].pc)] = (uint32_t)i + 1;
	}
	isc_vec_finish(&b->slots);
	b->slots = n;
	return true;
}

/* Offset of s in the text (0 for NULL or ""); UINT32_MAX when out of memory. */
static uint32_t text_of(struct isc_sym_builder *b, const char *s)
{
	if (s == NULL || s[0] == '\0') {
		return 0;
	}
	if (b->text.len == 0 && isc_vec_push(&b->text) == NULL) { /* offset 0: "" */
		return UINT32_MAX;
	}
	size_t n = strlen(s) + 1, at = b->text.len;
	if (at + n > UINT32_MAX || !isc_vec_reserve(&b->text, at + n)) {
		return UINT32_MAX;
	}
	memcpy((char *)b->text.data + at, s, n);
	b->text.len = at + n;
	return (uint32_t)at;
}

/* Index + 1 of the module of s among the maps (added when new), 0 without one. */
static uint32_t map_of(struct isc_sym_builder *b, const struct isc_symbol *s)
{
	if (s->path == NULL || s->path[0] == '\0') {
		return 0;
	}
	struct isc_sym_map *m = b->maps.data;
	const char *text = b->text.data;
	for (size_t i = b->maps.len; i-- > 0;) {
		if (m[i].start == s->map_start && strcmp(text + m[i].path, s->path) == 0) {
			return (uint32_t)i + 1;
		}
	}
	uint32_t path = text_of(b, s->path), id = text_of(b, s->build_id);
	struct isc_sym_map *n =
		path != UINT32_MAX && id != UINT32_MAX ? isc_vec_push(&b->maps) : NULL;
	if (n == NULL) {
		return UINT32_MAX;
	}
	*n = (struct isc_sym_map){ s->map_start, s->map_limit, s->map_offset, s->base, path, id };
	return (uint32_t)b->maps.len;
}

bool isc_sym_builder_add(struct isc_sym_builder *b, uint64_t pc, const struct isc_symbol *s)
{
	if (isc_sym_builder_has(b, pc)) {
		return true;
	}
	if (!grow_slots(b)) {
		return false;
	}
	struct isc_sym_entry e = { .pc = pc, .offset = s->offset, .start = s->start };
	e.function = text_of(b, s->function);
	e.file = text_of(b, s->file);
	e.module = text_of(b, s->module);
	e.line = s->line;
	e.map = map_of(b, s);
	if (e.function == UINT32_MAX || e.file == UINT32_MAX || e.module == UINT32_MAX ||
	    e.map == UINT32_MAX) {
		return false;
	}
	struct isc_sym_entry *n = isc_vec_push(&b->syms);
	if (n == NULL) {
		return false;
	}
	*n = e;
	size_t k = slot_of(b->slots.data, b->slots.len, b->syms.data, pc);
	((uint32_t *)b->slots.data)[k] = (uint32_t)b->syms.len;
	return true;
}

/* In-place heap sort of n elements by the uint64_t key at their start (no libc qsort:
 * it may allocate). */
static void sort_u64(void *base, size_t n, size_t size, void *tmp)
{
	unsigned char *a = base;
#define KEY(i) (*(const uint64_t *)(const void *)(a + (i)*size))
#define SWAP(i, j)                                        \
	do {                                              \
		memcpy(tmp, a + (i)*size, size);          \
		memcpy(a + (i)*size, a + (j)*size, size); \
		memcpy(a + (j)*size, tmp, size);          \
	} while (0)
	for (size_t start = n / 2; n > 1;) {
		size_t end = n;
		if (start > 0) {
			start--;
		} else {
			SWAP(0, n - 1);
			end = --n;
		}
		for (size_t root = start, child; (child = 2 * root + 1) < end; root = child) {
			if (child + 1 < end && KEY(child + 1) > KEY(child)) {
				child++;
			}
			if (KEY(root) >= KEY(child)) {
				break;
			}
			SWAP(root, child);
		}
	}
#undef KEY
#undef SWAP
}

const void *isc_sym_builder_block(struct isc_sym_builder *b, size_t *n)
{
	struct isc_sym_entry tmp;
	if (b->syms.len == 0) {
		return NULL;
	}
	/* the slots index the unsorted order: the builder takes no more after this */
	sort_u64(b->syms.data, b->syms.len, sizeof(struct isc_sym_entry), &tmp);
	isc_vec_finish(&b->slots);
	isc_vec_init(&b->slots, sizeof(uint32_t));
	struct isc_sym_head h = { (uint32_t)b->maps.len, (uint32_t)b->syms.len,
				  (uint32_t)b->text.len, 0 };
	size_t mb = b->maps.len * sizeof(struct isc_sym_map);
	size_t sb = b->syms.len * sizeof(struct isc_sym_entry);
	size_t total = sizeof(h) + mb + sb + b->text.len;
	b->block.len = 0;
	if (!isc_vec_reserve(&b->block, total)) {
		return NULL;
	}
	unsigned char *p = b->block.data;
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), b->maps.data, mb);
	memcpy(p + sizeof(h) + mb, b->syms.data, sb);
	memcpy(p + sizeof(h) + mb + sb, b->text.data, b->text.len);
	b->block.len = total;
	*n = total;
	return p;
}

/* ---- reading ---- */

struct ref {
	uint64_t pc; /* the sort key, first */
	const struct isc_sym_entry *e;
	const struct isc_sym_head *h;
};

static const struct isc_sym_map *maps_of(const struct isc_sym_head *h)
{
	return (const struct isc_sym_map *)(const void *)(h + 1);
}

static const char *text_base(const struct isc_sym_head *h)
{
	return (const char *)(const void *)(maps_of(h) + h->n_maps) +
	       (size_t)h->n_syms * sizeof(struct isc_sym_entry);
}

bool isc_sym_table_add(struct isc_sym_table *t, const void *block, size_t n)
{
	const struct isc_sym_head *h = block;
	if (t->refs.elem == 0) {
		isc_vec_init(&t->refs, sizeof(struct ref));
	}
	if (n < sizeof(*h) || ((uintptr_t)block & 7) != 0) {
		return false;
	}
	uint64_t need = sizeof(*h) + (uint64_t)h->n_maps * sizeof(struct isc_sym_map) +
			(uint64_t)h->n_syms * sizeof(struct isc_sym_entry) + h->text_bytes;
	const char *text = text_base(h);
	if (need > n || (h->text_bytes > 0 && text[h->text_bytes - 1] != '\0')) {
		return false;
	}
	/* every offset is checked once here, so that a lookup needs no check */
	uint32_t tb = h->text_bytes ? h->text_bytes : 1;
	const struct isc_sym_map *m = maps_of(h);
	for (uint32_t i = 0; i < h->n_maps; i++) {
		if (m[i].path >= tb || m[i].build_id >= tb) {
			return false;
		}
	}
	const struct isc_sym_entry *e = (const void *)(m + h->n_maps);
	for (uint32_t i = 0; i < h->n_syms; i++) {
		if (e[i].function >= tb || e[i].file >= tb || e[i].module >= tb ||
		    e[i].map > h->n_maps) {
			return false;
		}
	}
	if (!isc_vec_reserve(&t->refs, t->refs.len + h->n_syms)) {
		return false;
	}
	struct ref *r = (struct ref *)t->refs.data + t->refs.len;
	for (uint32_t i = 0; i < h->n_syms; i++) {
		r[i] = (struct ref){ e[i].pc, &e[i], h };
	}
	t->refs.len += h->n_syms;
	return true;
}

void isc_sym_table_seal(struct isc_sym_table *t)
{
	struct ref tmp;
	if (t->refs.len > 1) {
		sort_u64(t->refs.data, t->refs.len, sizeof(struct ref), &tmp);
	}
}

void isc_sym_table_free(struct isc_sym_table *t)
{
	if (t->refs.elem != 0) {
		isc_vec_finish(&t->refs);
	}
	memset(t, 0, sizeof(*t));
}

static const char *text_at(const struct isc_sym_head *h, uint32_t off)
{
	return h->text_bytes ? text_base(h) + off : "";
}

bool isc_sym_table_symbolize(void *ctx, uint64_t pc, struct isc_symbol *out)
{
	const struct isc_sym_table *t = ctx;
	const struct ref *r = t->refs.data;
	size_t lo = 0, hi = t->refs.len;
	memset(out, 0, sizeof(*out));
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].pc < pc) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (lo == t->refs.len || r[lo].pc != pc) {
		return false;
	}
	const struct isc_sym_entry *e = r[lo].e;
	const struct isc_sym_head *h = r[lo].h;
	out->function = text_at(h, e->function);
	out->module = text_at(h, e->module);
	out->file = e->file ? text_at(h, e->file) : NULL;
	out->line = e->line;
	out->offset = e->offset;
	out->start = e->start;
	if (e->map != 0) {
		const struct isc_sym_map *m = &maps_of(h)[e->map - 1];
		out->path = text_at(h, m->path);
		out->build_id = m->build_id ? text_at(h, m->build_id) : NULL;
		out->map_start = m->start;
		out->map_limit = m->limit;
		out->map_offset = m->offset;
		out->base = m->base;
	}
	return true;
}
