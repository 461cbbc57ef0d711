/* SPDX-License-Identifier: MIT */
/*
 * Reader for the InferScope format and for the bare {"events": [...]} lists of the Python
 * prototype. Both stream through yajl's event parser: an event is assembled from the
 * values as they arrive, checked, turned into a model record and forgotten, so memory
 * follows the number of events and never the size of the text. The InferScope format is
 * checked strictly (the first violation stops the read, with the event index); the bare
 * format has no contract to check and is read leniently.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/json-number.h"
#include "format/vocab.h"
#include "analyzer/readers/reader-inferscope.h"

const struct isc_keydef isc_isr_top_defs[TK__COUNT] = {
	{ ISC_KEY_FORMAT_VERSION, TK_VERSION }, { ISC_KEY_TRACE_METADATA, TK_META },
	{ ISC_KEY_SYSTEM_INFO, TK_SYSINFO },	{ ISC_KEY_EVENTS, TK_EVENTS },
	{ ISC_KEY_RELATIONSHIPS, TK_REL },	{ "stacks", TK_STACKS },
};

const struct isc_keydef isc_isr_scope_defs[7] = {
	{ ISC_KEY_ID, SK_ID },
	{ ISC_KEY_NAME, SK_NAME },
	{ ISC_KEY_PARENT_ID, SK_PARENT },
	{ ISC_KEY_CHILD_IDS, SK_CHILDREN },
	{ ISC_KEY_EVENT_INDEX, SK_EVENT_INDEX },
	{ ISC_KEY_THREAD_ID, SK_THREAD },
	{ ISC_KEY_SCOPES, SK_SCOPES },
};

int isc_isr_fail_at(struct isc_isr *r, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	isc_diag_set(r->rc->diag, "%s: byte %llu: %s", r->rc->label,
		     (unsigned long long)isc_jsax_offset(&r->js), msg);
	r->js.failed = true;
	return 0;
}

int isc_isr_fail_ev(struct isc_isr *r, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	isc_diag_set(r->rc->diag, "%s: event %llu (byte %llu): %s", r->rc->label,
		     (unsigned long long)r->ev.index, (unsigned long long)r->ev.offset, msg);
	r->js.failed = true;
	return 0;
}

bool isc_isr_type_ok(enum isc_isf_vkind vk, int jt, const char *s, size_t n)
{
	switch (vk) {
	case VK_INT:
		return jt == ISC_J_INT;
	case VK_UINT:
		return jt == ISC_J_INT && (s[0] != '-' || isc_num_double(s, n) == 0);
	case VK_NUM:
		return jt == ISC_J_INT || jt == ISC_J_DOUBLE;
	case VK_NUM_NONNEG:
		/* Only a leading minus needs a conversion ("-0" is still >= 0). */
		return (jt == ISC_J_INT || jt == ISC_J_DOUBLE) &&
		       (s[0] != '-' || isc_num_double(s, n) >= 0);
	case VK_UNIT_INTERVAL: {
		if (jt != ISC_J_INT && jt != ISC_J_DOUBLE) {
			return false;
		}
		double v = isc_num_double(s, n);
		return v >= 0 && v <= 1;
	}
	case VK_STR:
		return jt == ISC_J_STRING;
	case VK_BOOL:
		return jt == ISC_J_BOOL;
	case VK_STR_OR_NULL:
		return jt == ISC_J_STRING || jt == ISC_J_NULL;
	case VK_ID:
		return jt == ISC_J_INT || jt == ISC_J_STRING;
	case VK_ID_OR_NULL:
		return jt == ISC_J_INT || jt == ISC_J_STRING || jt == ISC_J_NULL;
	default:
		return false; /* containers */
	}
}

const char *isc_isr_expect_text(enum isc_isf_vkind vk)
{
	static const char *const t[] = {
		[VK_INT] = "an integer",
		[VK_UINT] = "a non-negative integer",
		[VK_NUM] = "a number",
		[VK_NUM_NONNEG] = "a non-negative number",
		[VK_UNIT_INTERVAL] = "a number in [0, 1]",
		[VK_STR] = "a string",
		[VK_BOOL] = "a boolean",
		[VK_OBJ] = "an object",
		[VK_INT3] = "an array of 3 integers",
		[VK_STRARR] = "an array of strings",
		[VK_STR_OR_NULL] = "a string or null",
		[VK_ID] = "an integer or a string",
		[VK_ID_OR_NULL] = "an integer, a string or null",
	};
	return t[vk];
}

static int bad_type(struct isc_isr *r, int key, int jt)
{
	return isc_isr_fail_ev(r, "%s: expected %s, got %s", isc_isf_key_path(key),
			       isc_isr_expect_text(isc_isf_kind(key)), isc_jtype_name(jt));
}

/* Enum words are short; longer text is cut and then matches no word. */
static void copy_word(char dst[ISF_ENUM_LEN], const char *s, size_t n)
{
	n = n < ISF_ENUM_LEN - 1 ? n : ISF_ENUM_LEN - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

static int store_time(struct isc_isr *r, int k, const char *s, size_t n)
{
	int64_t ns;
	if (!isc_num_us_to_ns(s, n, &ns)) {
		if (r->bare) {
			return 1;
		}
		return isc_isr_fail_ev(r, "%s: %.*s is not a representable time",
				       isc_isf_key_path(k), (int)(n > 40 ? 40 : n), s);
	}
	r->ev.iv[k] = ns;
	r->ev.seen |= 1ull << k;
	return 1;
}

/* "0x7f..." (the trace's pointers): 0 when it is not hexadecimal. */
static uint64_t hex_value(const char *s, size_t n)
{
	uint64_t v = 0;
	size_t i = n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 2 : 0;
	for (; i < n && i < 18; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (d < 0) {
			return 0;
		}
		v = v << 4 | (uint64_t)d;
	}
	return i == n ? v : 0;
}

static int store(struct isc_isr *r, int k, int jt, const char *s, size_t n, bool b)
{
	struct isc_isf_event *e = &r->ev;
	if (k == K_TS_START || k == K_TS || k == K_TS_END || k == K_DUR || k == K_WEIGHT_US) {
		return store_time(r, k, s, n);
	}
	if (k == K_TYPE) {
		e->type_too_long = n >= sizeof(e->type);
		copy_word(e->type, s, n);
	} else if (k == K_NAME) {
		e->name = isc_trace_intern(r->rc->t, s, n);
		if (e->name == UINT32_MAX) {
			return isc_isr_fail_ev(r, "out of memory");
		}
	} else if (jt == ISC_J_BOOL) {
		e->iv[k] = b;
	} else if (jt == ISC_J_INT) {
		if (!isc_num_int(s, n, &e->iv[k]) && !r->bare) {
			return isc_isr_fail_ev(r, "%s: integer out of range", isc_isf_key_path(k));
		}
		e->dv[k] = (double)e->iv[k];
		e->value_is_int = k == K_VALUE ? true : e->value_is_int;
	} else if (jt == ISC_J_DOUBLE) {
		e->dv[k] = isc_num_double(s, n);
		e->iv[k] = isc_d2i(e->dv[k]);
		e->value_is_int = k == K_VALUE ? false : e->value_is_int;
	} else if (jt == ISC_J_STRING) {
		int slot = isc_isf_enum_slot(k);
		if (slot >= 0) {
			copy_word(e->ev_str[slot], s, n);
		} else if (k == K_PTR) {
			e->iv[k] = (int64_t)hex_value(s, n);
		}
	}
	e->seen |= 1ull << k;
	return 1;
}

static int field_value(struct isc_isr *r, int fr, int jt, const char *s, size_t n, bool b)
{
	int k = r->key;
	if (k < 0) {
		return 1;
	}
	bool meta_key = k >= K_FIRST_META && !isc_isf_either_level(k);
	if ((fr == FR_EVENT && meta_key && !r->bare) || (fr == FR_META && k < K_FIRST_META)) {
		return 1; /* a key of the other level: unknown here, skipped */
	}
	if (!isc_isr_type_ok(isc_isf_kind(k), jt, s, n)) {
		return r->bare ? 1 : bad_type(r, k, jt);
	}
	return jt == ISC_J_NULL ? 1 : store(r, k, jt, s, n, b);
}

static int top_value(struct isc_isr *r, int jt, const char *s, size_t n)
{
	if (r->key == TK_VERSION) {
		r->seen_top[TK_VERSION] = true;
		if (jt != ISC_J_STRING) {
			return isc_isr_fail_at(r, "format_version: expected a string, got %s",
					       isc_jtype_name(jt));
		}
		snprintf(r->version, sizeof(r->version), "%.*s", (int)n, s);
		return 1;
	}
	if (r->key == TK_EVENTS && !r->bare) {
		return isc_isr_fail_at(r, "events: expected an array, got %s", isc_jtype_name(jt));
	}
	if ((r->key == TK_META || r->key == TK_SYSINFO || r->key == TK_REL ||
	     r->key == TK_STACKS) &&
	    !r->bare) {
		return isc_isr_fail_at(r, "%s: expected an object, got %s",
				       isc_isr_top_defs[r->key].key, isc_jtype_name(jt));
	}
	return 1;
}

static int scope_value(struct isc_isr *r, int jt)
{
	static const int want[] = {
		[SK_ID] = VK_ID,	[SK_NAME] = VK_STR,	    [SK_PARENT] = VK_ID_OR_NULL,
		[SK_CHILDREN] = VK_OBJ, [SK_EVENT_INDEX] = VK_UINT, [SK_THREAD] = VK_INT
	};
	if (r->key < 0 || r->key > SK_THREAD) {
		return 1;
	}
	r->scope_seen |= 1u << r->key;
	bool ok = r->key == SK_EVENT_INDEX ? jt == ISC_J_INT
					   : isc_isr_type_ok(want[r->key], jt, "0", 1);
	if (!ok) {
		return isc_isr_fail_at(
			r, "relationships.scopes[%llu].%s: expected %s, got %s",
			(unsigned long long)r->n_scopes - 1, isc_isr_scope_defs[r->key].key,
			r->key == SK_CHILDREN ? "an array" : isc_isr_expect_text(want[r->key]),
			isc_jtype_name(jt));
	}
	return 1;
}

static int on_value(struct isc_isr *r, int jt, const char *s, size_t n, bool b)
{
	isc_jsax_tick(&r->js);
	switch (isc_isr_cur(r)) {
	case -1:
		return isc_isr_fail_at(r, "expected an object at the top level, got %s",
				       isc_jtype_name(jt));
	case FR_TOP:
		return top_value(r, jt, s, n);
	case FR_EVENT:
	case FR_META:
		return field_value(r, isc_isr_cur(r), jt, s, n, b);
	case FR_DIM:
		if (jt != ISC_J_INT) {
			return r->bare ? 1 : bad_type(r, r->dim ? K_BLOCK_DIM : K_GRID_DIM, jt);
		}
		if (r->ev.ndims[r->dim] < 3) {
			isc_num_int(s, n, &r->ev.dims[r->dim][r->ev.ndims[r->dim]]);
		}
		r->ev.ndims[r->dim]++;
		return 1;
	case FR_STRARR:
		if (jt == ISC_J_STRING && r->n_legacy < sizeof(r->legacy) / sizeof(r->legacy[0])) {
			r->legacy[r->n_legacy] = isc_trace_intern(r->rc->t, s, n);
			if (r->legacy[r->n_legacy++] == UINT32_MAX) {
				return isc_isr_fail_ev(r, "out of memory");
			}
		}
		return jt == ISC_J_STRING || r->bare ? 1 : bad_type(r, K_STACK, jt);
	case FR_DOM:
		if (!isc_jdom_scalar(&r->dom, jt, jt == ISC_J_BOOL ? b : 0,
				     jt == ISC_J_DOUBLE ? isc_num_double(s, n) : 0, s, n)) {
			return isc_isr_fail_at(r, "%s: %s", isc_isr_top_defs[r->dom_key].key,
					       r->dom.error);
		}
		if (jt == ISC_J_INT && !isc_num_int(s, n, &r->dom.n[r->dom.len - 1].v.i)) {
			r->dom.n[r->dom.len - 1].type = ISC_J_DOUBLE;
			r->dom.n[r->dom.len - 1].v.d = isc_num_double(s, n);
		}
		return 1;
	case FR_EVENTS:
		r->ev.offset = isc_jsax_offset(&r->js);
		r->ev.index = r->n_events++;
		return r->bare ? 1
			       : isc_isr_fail_ev(r, "expected an object, got %s",
						 isc_jtype_name(jt));
	case FR_SCOPES:
		return isc_isr_fail_at(r, "relationships.scopes[%llu]: expected an object, got %s",
				       (unsigned long long)r->n_scopes++, isc_jtype_name(jt));
	case FR_SCOPE:
		return scope_value(r, jt);
	case FR_STK:
	case FR_STK_FRAMES:
	case FR_STK_FRAME:
	case FR_STK_STACKS:
	case FR_STK_STACK:
	case FR_STK_IDS:
		return isc_isr_stk_value(r, jt, s, n);
	case FR_IDARR:
		if (jt != ISC_J_INT && jt != ISC_J_STRING) {
			return isc_isr_fail_at(r,
					       "relationships.scopes[%llu].child_ids: "
					       "expected integers "
					       "or strings, got %s",
					       (unsigned long long)r->n_scopes - 1,
					       isc_jtype_name(jt));
		}
		return 1;
	default:
		return 1;
	}
}

static int on_key(struct isc_isr *r, const char *k, size_t n)
{
	isc_jsax_tick(&r->js);
	switch (isc_isr_cur(r)) {
	case FR_TOP:
		r->key = isc_keymap_get(&r->top_keys, k, n);
		break;
	case FR_EVENT:
	case FR_META:
		r->key = isc_keymap_get(&r->ev_keys, k, n);
		break;
	case FR_REL:
	case FR_SCOPE:
		r->key = isc_keymap_get(&r->scope_keys, k, n);
		break;
	case FR_STK:
	case FR_STK_FRAME:
	case FR_STK_STACK:
		return isc_isr_stk_key(r, k, n);
	case FR_DOM:
		if (!isc_jdom_key(&r->dom, k, n)) {
			return isc_isr_fail_at(r, "%s: %s", isc_isr_top_defs[r->dom_key].key,
					       r->dom.error);
		}
		break;
	default:
		r->key = -1;
	}
	return 1;
}

ISC_JSAX_CALLBACKS(callbacks, struct isc_isr, isc_isr_open, isc_isr_close, on_key, on_value);

struct isc_isr *isc_isr_new(struct isc_read_ctx *rc, bool bare)
{
	struct isc_isr *r = calloc(1, sizeof(*r));
	if (r == NULL) {
		isc_diag_set(rc->diag, "%s: out of memory", rc->label);
		return NULL;
	}
	r->rc = rc;
	r->bare = bare;
	r->key = -1;
	isc_keymap_build(&r->top_keys, isc_isr_top_defs, TK__COUNT);
	isc_isr_stk_init(r);
	isc_keymap_build(&r->ev_keys, isc_isf_keys, K__COUNT);
	isc_keymap_build(&r->scope_keys, isc_isr_scope_defs, 7);
	if (isc_jsax_init(&r->js, &callbacks, r, rc->label, rc->diag) < 0) {
		isc_diag_set(rc->diag, "%s: out of memory", rc->label);
		free(r);
		return NULL;
	}
	return r;
}

void isc_isr_destroy(struct isc_isr *r)
{
	isc_isr_free(r);
	isc_jsax_finish(&r->js);
	free(r);
}

static int read_common(struct isc_read_ctx *rc, bool bare)
{
	struct isc_isr *r = isc_isr_new(rc, bare);
	if (r == NULL) {
		return -ENOMEM;
	}
	int ret = bare ? isc_jsax_run(&r->js, rc->src) : isc_isr_read_par(r);
	if (ret == 0) {
		ret = isc_isr_finish(r);
	}
	isc_isr_destroy(r);
	return ret;
}

static int read_inferscope(struct isc_read_ctx *rc)
{
	return read_common(rc, false);
}

static int read_bare(struct isc_read_ctx *rc)
{
	return read_common(rc, true);
}

static size_t detect_inferscope(const struct isc_source *src)
{
	return isc_head_find(src, "\"format_version\"");
}

static size_t detect_bare(const struct isc_source *src)
{
	if (isc_head_find(src, "\"format_version\"") != SIZE_MAX) {
		return SIZE_MAX;
	}
	return isc_head_find(src, "\"events\"");
}

const struct isc_reader isc_reader_inferscope = {
	.name = "inferscope",
	.what = "an InferScope trace",
	.detect = detect_inferscope,
	.read = read_inferscope,
};

const struct isc_reader isc_reader_bare = {
	.name = "bare",
	.what = "a bare event list of the Python prototype ({\"events\": [...]})",
	.detect = detect_bare,
	.read = read_bare,
};
