/* SPDX-License-Identifier: MIT */
#include "analyzer/model/stacks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ID ISC_STACK_ID_LIMIT

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap) {
		return 0;
	}
	size_t c = *cap ? *cap : 64;
	while (c < need) {
		c *= 2;
	}
	void *p = realloc(*v, c * size);
	if (p == NULL) {
		return -ENOMEM;
	}
	*v = p;
	*cap = c;
	return 0;
}

struct isc_stacks *isc_stacks_of(struct isc_trace *t, uint16_t input)
{
	struct isc_input *in = &t->inputs[input];
	if (in->stacks == NULL) {
		in->stacks = calloc(1, sizeof(*in->stacks));
	}
	return in->stacks;
}

static void tab_free(struct isc_stack_tab *b)
{
	free(b->f);
	free(b->soff);
	free(b->slen);
	free(b->ids);
	free(b->fslot);
	free(b->sslot);
	free(b->fsrc);
}

void isc_stacks_destroy(struct isc_stacks *s)
{
	if (s == NULL) {
		return;
	}
	tab_free(&s->file);
	tab_free(&s->legacy);
	free(s->maps);
	free(s);
}

static int ensure_frames(struct isc_stack_tab *b, size_t n)
{
	size_t old = b->capf;
	if (grow((void **)&b->f, &b->capf, n, sizeof(*b->f)) < 0) {
		return -ENOMEM;
	}
	memset(b->f + old, 0, (b->capf - old) * sizeof(*b->f));
	b->nf = n > b->nf ? n : b->nf;
	return 0;
}

static int ensure_stacks(struct isc_stack_tab *b, size_t n)
{
	size_t cap = b->caps, old = b->caps;
	if (grow((void **)&b->soff, &cap, n, sizeof(*b->soff)) < 0) {
		return -ENOMEM;
	}
	cap = old;
	if (grow((void **)&b->slen, &cap, n, sizeof(*b->slen)) < 0) {
		return -ENOMEM;
	}
	for (size_t i = old; i < cap; i++) {
		b->soff[i] = UINT32_MAX; /* not defined */
		b->slen[i] = 0;
	}
	b->caps = cap;
	b->ns = n > b->ns ? n : b->ns;
	return 0;
}

int isc_stacks_set_frame(struct isc_stacks *s, uint32_t id, const struct isc_frame *f)
{
	if (id == 0 || id > MAX_ID) {
		return -EINVAL;
	}
	if (ensure_frames(&s->file, id) < 0) {
		return -ENOMEM;
	}
	s->file.f[id - 1] = *f;
	s->file.f[id - 1].defined = true;
	return 0;
}

int isc_stacks_set_mapping(struct isc_stacks *s, uint32_t id, const struct isc_mapping *m)
{
	if (id == 0 || id > MAX_ID) {
		return -EINVAL;
	}
	size_t old = s->capmaps;
	if (grow((void **)&s->maps, &s->capmaps, id, sizeof(*s->maps)) < 0) {
		return -ENOMEM;
	}
	memset(s->maps + old, 0, (s->capmaps - old) * sizeof(*s->maps));
	s->nmaps = id > s->nmaps ? id : s->nmaps;
	s->maps[id - 1] = *m;
	return 0;
}

const struct isc_mapping *isc_frame_mapping(const struct isc_trace *t, uint16_t input,
					    const struct isc_frame *f)
{
	const struct isc_stacks *s = input < t->n_inputs ? t->inputs[input].stacks : NULL;
	if (f->kind != ISC_FK_NATIVE || f->mapping == 0 || s == NULL || f->mapping > s->nmaps ||
	    s->maps[f->mapping - 1].path == 0) {
		return NULL;
	}
	return &s->maps[f->mapping - 1];
}

int isc_stacks_push_ref(struct isc_stacks *s, uint32_t frame_id)
{
	struct isc_stack_tab *b = &s->file;
	if (frame_id == 0 || frame_id > MAX_ID) {
		return -EINVAL;
	}
	if (grow((void **)&b->ids, &b->capids, b->nids + 1, sizeof(*b->ids)) < 0) {
		return -ENOMEM;
	}
	b->ids[b->nids++] = frame_id;
	return 0;
}

int isc_stacks_close_stack(struct isc_stacks *s, uint32_t id)
{
	struct isc_stack_tab *b = &s->file;
	if (id == 0 || id > MAX_ID) {
		return -EINVAL;
	}
	if (ensure_stacks(b, id) < 0) {
		return -ENOMEM;
	}
	b->soff[id - 1] = (uint32_t)s->open_start;
	b->slen[id - 1] = (uint32_t)(b->nids - s->open_start);
	s->open_start = b->nids;
	return 0;
}

const char *isc_stacks_check(const struct isc_stacks *s, char *buf, size_t n)
{
	const struct isc_stack_tab *b = &s->file;
	for (size_t i = 0; i < b->nids; i++) {
		if (b->ids[i] > b->nf || !b->f[b->ids[i] - 1].defined) {
			snprintf(buf, n, "stacks.stacks: frame id %u is not in stacks.frames",
				 b->ids[i]);
			return buf;
		}
	}
	if (s->max_ref > 0 && (s->max_ref > b->ns || b->soff[s->max_ref - 1] == UINT32_MAX)) {
		snprintf(buf, n, "an event's stack_id %u is not in stacks.stacks", s->max_ref);
		return buf;
	}
	for (size_t i = 0; i < b->ns; i++) {
		if (b->soff[i] == UINT32_MAX) {
			snprintf(buf, n, "stacks.stacks: ids are not dense: %zu is missing", i + 1);
			return buf;
		}
	}
	return NULL;
}

/* "symbol+0x1f (libfoo.so)", "libfoo.so+0x1234" or "0x7f..." into a native frame. */
static void parse_legacy(struct isc_trace *t, const char *s, struct isc_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->kind = ISC_FK_NATIVE;
	f->defined = true;
	size_t n = strlen(s);
	const char *open = n > 2 && s[n - 1] == ')' ? strrchr(s, '(') : NULL;
	size_t head = open != NULL ? (size_t)(open - s) : n;
	while (head > 0 && s[head - 1] == ' ') {
		head--;
	}
	if (open != NULL) {
		f->module = isc_trace_intern(t, open + 1, (size_t)(s + n - 1 - (open + 1)));
	}
	const char *plus = memchr(s, '+', head);
	if (strncmp(s, "0x", 2) == 0 && plus == NULL) {
		f->address = strtoull(s, NULL, 16);
		return;
	}
	size_t name_len = plus != NULL ? (size_t)(plus - s) : head;
	if (open == NULL && plus != NULL) {
		f->module = isc_trace_intern(t, s, name_len); /* "libfoo.so+0x1234" */
		f->address = strtoull(plus + 1, NULL, 16);
		return;
	}
	f->function = isc_trace_intern(t, s, name_len);
}

static uint32_t legacy_frame(struct isc_trace *t, struct isc_stack_tab *b, uint32_t str)
{
	if (b->nf * 2 >= b->fmask) {
		size_t cap = b->fmask ? (b->fmask + 1) * 2 : 256;
		uint32_t *slots = calloc(cap, sizeof(*slots));
		if (slots == NULL) {
			return 0;
		}
		for (size_t k = 0; k < b->nf; k++) {
			size_t i = mix(b->fsrc[k]) & (cap - 1);
			while (slots[i] != 0) {
				i = (i + 1) & (cap - 1);
			}
			slots[i] = (uint32_t)k + 1;
		}
		free(b->fslot);
		b->fslot = slots;
		b->fmask = cap - 1;
	}
	size_t i = mix(str) & b->fmask;
	for (; b->fslot[i] != 0; i = (i + 1) & b->fmask) {
		if (b->fsrc[b->fslot[i] - 1] == str) {
			return b->fslot[i];
		}
	}
	if (ensure_frames(b, b->nf + 1) < 0 ||
	    grow((void **)&b->fsrc, &b->capsrc, b->nf, sizeof(*b->fsrc)) < 0) {
		return 0;
	}
	b->fsrc[b->nf - 1] = str;
	parse_legacy(t, isc_trace_str(t, str), &b->f[b->nf - 1]);
	b->fslot[i] = (uint32_t)b->nf;
	return (uint32_t)b->nf;
}

static uint64_t seq_hash(const uint32_t *v, size_t n)
{
	uint64_t h = n;
	for (size_t i = 0; i < n; i++) {
		h = mix(h ^ v[i]) + i;
	}
	return h;
}

static bool same(const struct isc_stack_tab *b, uint32_t id, const uint32_t *v, size_t n)
{
	return b->slen[id - 1] == n && memcmp(&b->ids[b->soff[id - 1]], v, n * sizeof(*v)) == 0;
}

static int rehash_stacks(struct isc_stack_tab *b)
{
	size_t cap = b->smask ? (b->smask + 1) * 2 : 256;
	uint32_t *slots = calloc(cap, sizeof(*slots));
	if (slots == NULL) {
		return -ENOMEM;
	}
	for (size_t k = 0; k < b->ns; k++) {
		size_t i = seq_hash(&b->ids[b->soff[k]], b->slen[k]) & (cap - 1);
		while (slots[i] != 0) {
			i = (i + 1) & (cap - 1);
		}
		slots[i] = (uint32_t)k + 1;
	}
	free(b->sslot);
	b->sslot = slots;
	b->smask = cap - 1;
	return 0;
}

uint32_t isc_stacks_intern_strings(struct isc_trace *t, struct isc_stacks *s, const uint32_t *str,
				   size_t n)
{
	struct isc_stack_tab *b = &s->legacy;
	uint32_t fr[256];
	n = n < 256 ? n : 256;
	for (size_t i = 0; i < n; i++) {
		fr[i] = legacy_frame(t, b, str[i]);
		if (fr[i] == 0) {
			return 0;
		}
	}
	if (b->ns * 2 >= b->smask && rehash_stacks(b) < 0) {
		return 0;
	}
	size_t i = seq_hash(fr, n) & b->smask;
	for (; b->sslot[i] != 0; i = (i + 1) & b->smask) {
		if (same(b, b->sslot[i], fr, n)) {
			return b->sslot[i] | ISC_STACK_LEGACY;
		}
	}
	if (grow((void **)&b->ids, &b->capids, b->nids + n, sizeof(*b->ids)) < 0 ||
	    ensure_stacks(b, b->ns + 1) < 0) {
		return 0;
	}
	memcpy(&b->ids[b->nids], fr, n * sizeof(*fr));
	b->soff[b->ns - 1] = (uint32_t)b->nids;
	b->slen[b->ns - 1] = (uint32_t)n;
	b->nids += n;
	b->sslot[i] = (uint32_t)b->ns;
	return (uint32_t)b->ns | ISC_STACK_LEGACY;
}

bool isc_stack_get(const struct isc_trace *t, uint16_t input, uint32_t id,
		   struct isc_stack_ref *out)
{
	if (id == 0 || input >= t->n_inputs || t->inputs[input].stacks == NULL) {
		return false;
	}
	const struct isc_stacks *s = t->inputs[input].stacks;
	const struct isc_stack_tab *b = (id & ISC_STACK_LEGACY) ? &s->legacy : &s->file;
	id &= ~ISC_STACK_LEGACY;
	if (id == 0 || id > b->ns || b->soff[id - 1] == UINT32_MAX) {
		return false;
	}
	out->frames = b->f;
	out->ids = &b->ids[b->soff[id - 1]];
	out->n = b->slen[id - 1];
	return true;
}

bool isc_stack_of(const struct isc_trace *t, const struct isc_ev *e, struct isc_stack_ref *out)
{
	uint32_t id = isc_ev_stack(e);
	return id != 0 && isc_stack_get(t, e->input, id, out);
}

static bool starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* The module basename without its directory. */
static const char *base(const char *m)
{
	const char *slash = strrchr(m, '/');
	return slash != NULL ? slash + 1 : m;
}

bool isc_frame_is_glue(const struct isc_trace *t, const struct isc_frame *f)
{
	if (f->kind == ISC_FK_PYTHON) {
		return false;
	}
	const char *fn = isc_trace_str(t, f->function);
	const char *mod = base(isc_trace_str(t, f->module));
	return starts(mod, "libpython") || starts(mod, "python") || starts(fn, "_Py") ||
	       starts(fn, "Py") || starts(fn, "cfunction_") || starts(fn, "method_vectorcall") ||
	       starts(fn, "slot_tp_") || starts(fn, "vectorcall_");
}

bool isc_frame_is_runtime(const struct isc_trace *t, const struct isc_frame *f)
{
	if (f->kind == ISC_FK_PYTHON) {
		return false;
	}
	static const char *const mods[] = { "libcudart", "libcuda.", "libcupti",   "libinferscope",
					    "libc.",	 "libc-",    "libpthread", "ld-linux",
					    "libstdc++", "libgcc_s" };
	const char *mod = base(isc_trace_str(t, f->module));
	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		if (starts(mod, mods[i])) {
			return true;
		}
	}
	return isc_frame_is_glue(t, f) || (f->function == 0 && f->module == 0);
}

int isc_stack_site(const struct isc_trace *t, const struct isc_stack_ref *r, int *via)
{
	int native = -1;
	if (via != NULL) {
		*via = -1;
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct isc_frame *f = isc_stack_frame(r, i);
		if (f->kind == ISC_FK_PYTHON) {
			for (size_t k = i; via != NULL && k-- > 0;) {
				const struct isc_frame *g = isc_stack_frame(r, k);
				if (g->kind == ISC_FK_NATIVE && !isc_frame_is_glue(t, g)) {
					*via = (int)k;
					break;
				}
			}
			return (int)i;
		}
		if (native < 0 && !isc_frame_is_runtime(t, f)) {
			native = (int)i;
		}
	}
	return native;
}

uint32_t isc_frame_where(const struct isc_frame *f)
{
	return f->kind == ISC_FK_PYTHON && f->file != 0 ? f->file : f->module;
}

uint32_t isc_frame_pos(const struct isc_frame *f)
{
	if (f->kind == ISC_FK_NATIVE && f->function == 0) {
		return (uint32_t)(f->start ? f->start : f->address);
	}
	return f->line;
}

struct isc_frame isc_frame_of_key(uint32_t function, uint32_t where, uint8_t kind, uint32_t pos)
{
	struct isc_frame f = { .function = function, .module = where, .kind = kind };
	if (kind == ISC_FK_PYTHON) {
		f.file = where;
		f.line = pos;
	} else if (function == 0) {
		f.start = pos;
	} else {
		f.line = pos;
	}
	return f;
}

void isc_frame_name(const struct isc_trace *t, const struct isc_frame *f, char *buf, size_t n)
{
	if (f->function != 0) {
		snprintf(buf, n, "%s", isc_trace_str(t, f->function));
	} else if (f->kind == ISC_FK_PYTHON) {
		snprintf(buf, n, "<unknown>"); /* a frame that changed before it was read */
	} else if (f->module != 0) {
		snprintf(buf, n, "%s+0x%llx", base(isc_trace_str(t, f->module)),
			 (unsigned long long)(f->start ? f->start : f->address));
	} else {
		/* no module: a raw address says nothing to a reader (and 0x0 looks like a
		 * name) */
		snprintf(buf, n, "[unknown]");
	}
}

static uint32_t file_in(const struct isc_stack_tab *b, const struct isc_frame *f)
{
	for (size_t k = 0; k < b->nf; k++) {
		const struct isc_frame *g = &b->f[k];
		if (g->file != 0 && g->kind == ISC_FK_NATIVE && g->line == f->line &&
		    g->function == f->function && g->module == f->module) {
			return g->file;
		}
	}
	return 0;
}

uint32_t isc_frame_source(const struct isc_trace *t, const struct isc_frame *f)
{
	if (f->file != 0 || f->kind == ISC_FK_PYTHON || f->function == 0 || f->line == 0) {
		return f->file;
	}
	/* A row's key has no room for a native file: the line was read with one, find it
	 * (done for the rows a report prints, not per sample). */
	for (size_t i = 0; i < t->n_inputs; i++) {
		const struct isc_stacks *s = t->inputs[i].stacks;
		uint32_t file = s ? file_in(&s->file, f) : 0;
		if (file != 0) {
			return file;
		}
	}
	return 0;
}

void isc_frame_text(const struct isc_trace *t, const struct isc_frame *f, char *buf, size_t n)
{
	char name[192];
	isc_frame_name(t, f, name, sizeof(name));
	const char *where = isc_trace_str(t, isc_frame_where(f));
	uint32_t src = f->kind == ISC_FK_NATIVE ? isc_frame_source(t, f) : 0;
	if (f->kind == ISC_FK_PYTHON) {
		if (f->line > 0) {
			snprintf(buf, n, "%s() %s:%u", name, where, f->line);
		} else {
			snprintf(buf, n, "%s() %s", name, where);
		}
	} else if (f->function != 0 && f->module != 0 && src != 0) {
		snprintf(buf, n, "%s (%s:%u, %s)", name, base(isc_trace_str(t, src)), f->line,
			 base(where));
	} else if (f->function != 0 && f->module != 0) {
		snprintf(buf, n, "%s (%s)", name, base(where));
	} else {
		snprintf(buf, n, "%s", name);
	}
}
