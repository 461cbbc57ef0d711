/* SPDX-License-Identifier: MIT */
/* Private to the InferScope reader: its parser state, shared by its two files. */
#ifndef ISC_READER_INFERSCOPE_H
#define ISC_READER_INFERSCOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "analyzer/readers/inferscope-fields.h"
#include "analyzer/base/json-dom.h"
#include "analyzer/readers/json-sax.h"
#include "analyzer/base/key-map.h"
#include "analyzer/readers/reader.h"
#include "analyzer/model/stacks.h"

enum frame {
	FR_TOP,
	FR_EVENTS,
	FR_EVENT,
	FR_META,
	FR_DIM,
	FR_STRARR,
	FR_DOM,
	FR_REL,
	FR_SCOPES,
	FR_SCOPE,
	FR_IDARR,
	FR_SKIP,
	/* the "stacks" section (reader-inferscope-stacks.c) */
	FR_STK,
	FR_STK_FRAMES,
	FR_STK_FRAME,
	FR_STK_STACKS,
	FR_STK_STACK,
	FR_STK_IDS,
};

enum top_key { TK_VERSION, TK_META, TK_SYSINFO, TK_EVENTS, TK_REL, TK_STACKS, TK__COUNT };
enum scope_key { SK_ID, SK_NAME, SK_PARENT, SK_CHILDREN, SK_EVENT_INDEX, SK_THREAD, SK_SCOPES };

struct pending {
	uint32_t ev;
	uint32_t name;
};

struct bare_thread {
	int64_t tid;
	struct pending *v;
	size_t n, cap;
};

/* How a reader takes part in a parallel read (reader-inferscope-par.c). */
enum isc_isr_mode {
	ISR_SERIAL,
	ISR_MAIN, /* pauses the scanner at the '[' of "events", where the parts begin */
	ISR_PART, /* reads a part of "events": pauses at their ']', refuses what needs the
		   * whole trace in order (legacy stack strings, CUDA graph nodes) */
};

struct isc_isr {
	struct isc_read_ctx *rc;
	struct isc_jsax js;
	bool bare;
	enum isc_isr_mode mode;
	struct isc_jframes fr;
	int key;
	struct isc_keymap top_keys, ev_keys, scope_keys;
	struct isc_isf_event ev;
	int dim;
	struct isc_jdom dom;
	int dom_key;
	bool dom_live;
	bool seen_top[TK__COUNT];
	char version[16];
	uint64_t n_events, n_scopes;
	uint32_t scope_seen;
	struct bare_thread *bt;
	size_t n_bt, cap_bt;
	/* sampled stacks */
	uint32_t legacy[256]; /* the event's "stack" strings, interned */
	size_t n_legacy;
	struct isc_keymap stk_keys;
	struct isc_stacks *stk;	    /* this input's, once the section opens */
	struct isc_frame fr_cur;    /* the frame being read */
	struct isc_mapping map_cur; /* the mapping being read */
	bool stk_maps;		    /* the FR_STK_FRAMES array is "mappings" */
	uint32_t stk_seen, stk_id;
	uint64_t n_stk; /* objects read in the current array */
};

extern const struct isc_keydef isc_isr_top_defs[TK__COUNT];
extern const struct isc_keydef isc_isr_scope_defs[7];

int isc_isr_fail_at(struct isc_isr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int isc_isr_fail_ev(struct isc_isr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* yajl callbacks for containers (reader-inferscope-events.c). */
int isc_isr_open(struct isc_isr *r, bool is_map);
int isc_isr_close(struct isc_isr *r);
int isc_isr_finish(struct isc_isr *r);
/* A reader of rc (bare: the prototype's lists) with its scanner, or NULL (diag set). */
struct isc_isr *isc_isr_new(struct isc_read_ctx *rc, bool bare);
/* Frees what isc_isr_new made. */
void isc_isr_destroy(struct isc_isr *r);
void isc_isr_free(struct isc_isr *r);
/* Reads the trace of r (an InferScope one) on rc->threads threads when its source lies in
 * memory or in a file of its own; serially otherwise. 0 or a negative errno, diag set. */
int isc_isr_read_par(struct isc_isr *r);
/* Refuses, in a part of a parallel read, what only the serial path reads (0, failed). */
int isc_isr_serial_only(struct isc_isr *r);
const char *isc_isr_expect_text(enum isc_isf_vkind vk);
/* The "stacks" section: containers, keys and values inside it. */
void isc_isr_stk_init(struct isc_isr *r);
int isc_isr_stk_open(struct isc_isr *r, bool is_map);
int isc_isr_stk_close(struct isc_isr *r, int fr);
int isc_isr_stk_key(struct isc_isr *r, const char *k, size_t n);
int isc_isr_stk_value(struct isc_isr *r, int jt, const char *s, size_t n);
int isc_isr_stk_finish(struct isc_isr *r);
int isc_isr_push(struct isc_isr *r, int fr);
static inline bool isc_isr_in_stk(int fr)
{
	return fr >= FR_STK && fr <= FR_STK_IDS;
}
bool isc_isr_type_ok(enum isc_isf_vkind vk, int jt, const char *s, size_t n);

static inline int isc_isr_cur(const struct isc_isr *r)
{
	return isc_jframes_cur(&r->fr, FR_SKIP);
}

#endif /* ISC_READER_INFERSCOPE_H */
