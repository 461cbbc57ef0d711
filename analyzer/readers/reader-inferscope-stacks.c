/* SPDX-License-Identifier: MIT */
/*
 * The "stacks" section of the InferScope reader: {"frames": [...], "stacks": [...],
 * "mappings": [...]} after the events (a mapping is read as a frame of its own keys).
 * Frames, stacks and mappings stream into the input's tables (stacks.h) as they come,
 * checked strictly like events; references (a stack's frame ids, the events' stack_id)
 * are checked once the whole file is read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/json-number.h"
#include "analyzer/readers/reader-inferscope.h"

enum stk_key {
	XK_FRAMES,
	XK_STACKS,
	XK_ID,
	XK_KIND,
	XK_FUNCTION,
	XK_MODULE,
	XK_FILE,
	XK_LINE,
	XK_ADDRESS,
	XK_BUILD_ID,
	XK_START,
	XK_MAPPINGS,
	XK_MAPPING,
	XK_PATH,
	XK_MSTART,
	XK_LIMIT,
	XK_OFFSET,
	XK_BASE,
	XK__COUNT
};

static const struct isc_keydef stk_defs[XK__COUNT] = {
	{ "frames", XK_FRAMES },
	{ "stacks", XK_STACKS },
	{ "id", XK_ID },
	{ "kind", XK_KIND },
	{ "function", XK_FUNCTION },
	{ "module", XK_MODULE },
	{ "file", XK_FILE },
	{ "line", XK_LINE },
	{ "address", XK_ADDRESS },
	{ "build_id", XK_BUILD_ID },
	{ "function_start", XK_START },
	{ "mappings", XK_MAPPINGS },
	{ "mapping", XK_MAPPING },
	{ "path", XK_PATH },
	{ "start", XK_MSTART },
	{ "limit", XK_LIMIT },
	{ "offset", XK_OFFSET },
	{ "base", XK_BASE },
};

void isc_isr_stk_init(struct isc_isr *r)
{
	isc_keymap_build(&r->stk_keys, stk_defs, XK__COUNT);
}

static const char *where(const struct isc_isr *r, char *buf, size_t n)
{
	int fr = isc_isr_cur(r);
	bool frames = fr == FR_STK_FRAMES || fr == FR_STK_FRAME;
	if (fr == FR_STK) {
		return "stacks";
	}
	if (fr == FR_STK_IDS) {
		snprintf(buf, n, "stacks.stacks[%llu].frames", (unsigned long long)r->n_stk - 1);
		return buf;
	}
	snprintf(buf, n, "stacks.%s[%llu]",
		 !frames       ? "stacks"
		 : r->stk_maps ? "mappings"
			       : "frames",
		 (unsigned long long)r->n_stk - (fr == FR_STK_FRAME || fr == FR_STK_STACK));
	return buf;
}

static int fail(struct isc_isr *r, const char *what, const char *got)
{
	char buf[80];
	return isc_isr_fail_at(r, "%s: expected %s, got %s", where(r, buf, sizeof(buf)), what, got);
}

static struct isc_stacks *stk(struct isc_isr *r)
{
	if (r->stk == NULL) {
		r->stk = isc_stacks_of(r->rc->t, r->rc->input);
	}
	return r->stk;
}

int isc_isr_stk_open(struct isc_isr *r, bool is_map)
{
	const char *got = is_map ? "an object" : "an array";
	switch (isc_isr_cur(r)) {
	case FR_STK:
		if (r->key == XK_FRAMES || r->key == XK_STACKS || r->key == XK_MAPPINGS) {
			if (is_map) {
				return isc_isr_fail_at(r,
						       "stacks.%s: expected an array, got an "
						       "object",
						       stk_defs[r->key].key);
			}
			if (stk(r) == NULL) {
				return isc_isr_fail_at(r, "out of memory");
			}
			r->n_stk = 0;
			r->stk_maps = r->key == XK_MAPPINGS;
			return isc_isr_push(r, r->key == XK_STACKS ? FR_STK_STACKS : FR_STK_FRAMES);
		}
		return isc_isr_push(r, FR_SKIP);
	case FR_STK_FRAMES:
	case FR_STK_STACKS: {
		bool frames = isc_isr_cur(r) == FR_STK_FRAMES;
		r->n_stk++;
		if (!is_map) {
			r->n_stk--;
			return fail(r, "an object", got);
		}
		r->stk_seen = 0;
		r->stk_id = 0;
		memset(&r->fr_cur, 0, sizeof(r->fr_cur));
		memset(&r->map_cur, 0, sizeof(r->map_cur));
		r->stk->open_start = r->stk->file.nids;
		return isc_isr_push(r, frames ? FR_STK_FRAME : FR_STK_STACK);
	}
	case FR_STK_STACK:
		if (r->key == XK_FRAMES && !is_map) {
			r->stk_seen |= 1u << XK_FRAMES;
			return isc_isr_push(r, FR_STK_IDS);
		}
		/* fall through */
	case FR_STK_FRAME:
		if (r->key == XK_ID || r->key == XK_KIND || r->key == XK_FUNCTION ||
		    r->key == XK_MODULE || r->key == XK_FILE || r->key == XK_LINE ||
		    r->key == XK_ADDRESS || r->key == XK_BUILD_ID || r->key == XK_START ||
		    r->key == XK_FRAMES || r->key >= XK_MAPPING) {
			char buf[120];
			snprintf(buf, sizeof(buf), "a %s for \"%s\"",
				 r->key == XK_FRAMES ? "frame id array" : "scalar",
				 stk_defs[r->key].key);
			return fail(r, buf, got);
		}
		return isc_isr_push(r, FR_SKIP); /* an unknown field: skipped */
	case FR_STK_IDS:
		return fail(r, "frame ids (integers)", got);
	default:
		return isc_isr_push(r, FR_SKIP);
	}
}

int isc_isr_stk_key(struct isc_isr *r, const char *k, size_t n)
{
	r->key = isc_keymap_get(&r->stk_keys, k, n);
	return 1;
}

static bool uint_of(int jt, const char *s, size_t n, uint64_t *out)
{
	int64_t v;
	if (jt != ISC_J_INT || !isc_num_int(s, n, &v) || v < 0) {
		return false;
	}
	*out = (uint64_t)v;
	return true;
}

static uint64_t hex_of(const char *s, size_t n)
{
	char hex[24];
	size_t m = n < sizeof(hex) - 1 ? n : sizeof(hex) - 1;
	memcpy(hex, s, m);
	hex[m] = '\0';
	return strtoull(hex, NULL, 16);
}

/* A member of a "mappings" element: id, path, build_id, and addresses in hex. */
static int mapping_value(struct isc_isr *r, int k, uint64_t u, uint32_t id, const char *s, size_t n)
{
	struct isc_mapping *m = &r->map_cur;
	switch (k) {
	case XK_ID:
		r->stk_id = u < ISC_STACK_ID_LIMIT ? (uint32_t)u : UINT32_MAX;
		break;
	case XK_PATH:
		m->path = id;
		break;
	case XK_BUILD_ID:
		m->build_id = id;
		break;
	case XK_MSTART:
		m->start = hex_of(s, n);
		break;
	case XK_LIMIT:
		m->limit = hex_of(s, n);
		break;
	case XK_OFFSET:
		m->offset = hex_of(s, n);
		break;
	case XK_BASE:
		m->base = hex_of(s, n);
		break;
	default:
		break;
	}
	return 1;
}

static int frame_value(struct isc_isr *r, int jt, const char *s, size_t n)
{
	struct isc_frame *f = &r->fr_cur;
	uint64_t u = 0;
	int k = r->key;
	if (k < 0 || k == XK_FRAMES || k == XK_STACKS || k == XK_MAPPINGS) {
		return 1;
	}
	bool want_uint = k == XK_ID || k == XK_LINE || k == XK_MAPPING;
	if (want_uint ? !uint_of(jt, s, n, &u) : jt != ISC_J_STRING) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%s for \"%s\"",
			 want_uint ? "a non-negative integer" : "a string", stk_defs[k].key);
		return fail(r, buf, isc_jtype_name(jt));
	}
	r->stk_seen |= 1u << k;
	uint32_t id = 0;
	bool text = k == XK_FUNCTION || k == XK_MODULE || k == XK_FILE || k == XK_BUILD_ID ||
		    k == XK_PATH;
	if (text) {
		id = isc_trace_intern(r->rc->t, s, n);
		if (id == UINT32_MAX) {
			return isc_isr_fail_at(r, "out of memory");
		}
	}
	if (r->stk_maps) {
		return mapping_value(r, k, u, id, s, n);
	}
	switch (k) {
	case XK_ID:
		r->stk_id = u < ISC_STACK_ID_LIMIT ? (uint32_t)u : UINT32_MAX;
		break;
	case XK_LINE:
		f->line = u < UINT32_MAX ? (uint32_t)u : 0;
		break;
	case XK_KIND:
		if (n == 6 && memcmp(s, "python", 6) == 0) {
			f->kind = ISC_FK_PYTHON;
		} else if (n == 6 && memcmp(s, "native", 6) == 0) {
			f->kind = ISC_FK_NATIVE;
		} else {
			return fail(r, "\"kind\" native or python", "another word");
		}
		break;
	case XK_ADDRESS:
	case XK_START:
		*(k == XK_START ? &f->start : &f->address) = hex_of(s, n);
		break;
	case XK_MAPPING:
		f->mapping = u < ISC_STACK_ID_LIMIT ? (uint32_t)u : 0;
		break;
	case XK_FUNCTION:
		f->function = id;
		break;
	case XK_MODULE:
		f->module = id;
		break;
	case XK_FILE:
		f->file = id;
		break;
	case XK_BUILD_ID:
		f->build_id = id;
		break;
	default:
		break;
	}
	return 1;
}

int isc_isr_stk_value(struct isc_isr *r, int jt, const char *s, size_t n)
{
	const char *got = isc_jtype_name(jt);
	uint64_t u;
	switch (isc_isr_cur(r)) {
	case FR_STK:
		if (r->key == XK_FRAMES || r->key == XK_STACKS) {
			return isc_isr_fail_at(r, "stacks.%s: expected an array, got %s",
					       stk_defs[r->key].key, got);
		}
		return 1;
	case FR_STK_FRAMES:
	case FR_STK_STACKS:
		r->n_stk++;
		return fail(r, "an object", got);
	case FR_STK_FRAME:
		return frame_value(r, jt, s, n);
	case FR_STK_STACK:
		if (r->key == XK_ID) {
			if (!uint_of(jt, s, n, &u)) {
				return fail(r, "a non-negative integer for \"id\"", got);
			}
			r->stk_seen |= 1u << XK_ID;
			r->stk_id = u < ISC_STACK_ID_LIMIT ? (uint32_t)u : UINT32_MAX;
		} else if (r->key == XK_FRAMES) {
			return fail(r, "an array for \"frames\"", got);
		}
		return 1;
	case FR_STK_IDS:
		if (!uint_of(jt, s, n, &u) || u == 0 || u >= ISC_STACK_ID_LIMIT) {
			return fail(r, "frame ids (integers from 1)", got);
		}
		return isc_stacks_push_ref(r->stk, (uint32_t)u) == 0
			       ? 1
			       : isc_isr_fail_at(r, "out of memory");
	default:
		return 1;
	}
}

int isc_isr_stk_close(struct isc_isr *r, int fr)
{
	char buf[80];
	if (fr != FR_STK_FRAME && fr != FR_STK_STACK) {
		return 1;
	}
	/* The object is closed: name it as the element of the array now on top. */
	bool map = fr == FR_STK_FRAME && r->stk_maps;
	snprintf(buf, sizeof(buf), "stacks.%s[%llu]",
		 map		      ? "mappings"
		 : fr == FR_STK_FRAME ? "frames"
				      : "stacks",
		 (unsigned long long)r->n_stk - 1);
	int need = map			? (1 << XK_ID) | (1 << XK_PATH)
		   : fr == FR_STK_FRAME ? (1 << XK_ID) | (1 << XK_KIND)
					: (1 << XK_ID) | (1 << XK_FRAMES);
	for (int k = 0; k < XK__COUNT; k++) {
		if ((need & (1 << k)) && !(r->stk_seen & (1u << k))) {
			return isc_isr_fail_at(r, "%s.%s is missing", buf, stk_defs[k].key);
		}
	}
	if (r->stk_id == 0 || r->stk_id == UINT32_MAX) {
		return isc_isr_fail_at(r, "%s.id: expected an integer from 1 to %u", buf,
				       ISC_STACK_ID_LIMIT - 1);
	}
	int e = map		     ? isc_stacks_set_mapping(r->stk, r->stk_id, &r->map_cur)
		: fr == FR_STK_FRAME ? isc_stacks_set_frame(r->stk, r->stk_id, &r->fr_cur)
				     : isc_stacks_close_stack(r->stk, r->stk_id);
	return e == 0 ? 1 : isc_isr_fail_at(r, "%s: out of memory", buf);
}

int isc_isr_stk_finish(struct isc_isr *r)
{
	const struct isc_stacks *s = r->rc->t->inputs[r->rc->input].stacks;
	char buf[200];
	const char *problem = s != NULL ? isc_stacks_check(s, buf, sizeof(buf)) : NULL;
	if (problem != NULL) {
		isc_diag_set(r->rc->diag, "%s: %s", r->rc->label, problem);
		return -EINVAL;
	}
	return 0;
}
