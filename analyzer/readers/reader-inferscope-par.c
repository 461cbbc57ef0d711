/* SPDX-License-Identifier: MIT */
/*
 * The InferScope reader on several threads (split-read.c): the "events" array of one
 * trace is split into parts at event boundaries; each part is read by a thread into a
 * model of its own; the main thread merges the parts in order into the trace. A part
 * refuses what needs the whole trace in order (legacy stack strings, CUDA graph nodes),
 * and the main thread reads on serially from it.
 */
#include <errno.h>
#include <stdlib.h>

#include "analyzer/model/model-extra.h"
#include "analyzer/readers/reader-inferscope.h"
#include "analyzer/readers/split-read.h"

int isc_isr_serial_only(struct isc_isr *r)
{
	return isc_isr_fail_ev(r, "read serially");
}

struct part_state {
	struct isc_trace *t;
	struct isc_diag diag;
	uint64_t n_events; /* event objects read, kept or not */
};

static void drop(void *state)
{
	struct part_state *s = state;
	if (s != NULL) {
		isc_trace_destroy(s->t);
		free(s);
	}
}

/* Reads one part into a model of its own. */
static void read_part(void *ctx, size_t k, int fd, const unsigned char *mem,
		      struct isc_split_part *pt)
{
	struct isc_isr *main = ctx;
	struct part_state *s = calloc(1, sizeof(*s));
	if (s == NULL || (s->t = isc_split_part_trace(main->rc)) == NULL) {
		free(s);
		return;
	}
	struct isc_read_ctx rc = *main->rc;
	rc.t = s->t;
	rc.src = NULL;
	rc.diag = &s->diag;
	struct isc_isr *r = isc_isr_new(&rc, false);
	if (r == NULL) {
		drop(s);
		return;
	}
	r->mode = ISR_PART;
	isc_jframes_push(&r->fr, FR_TOP);
	isc_jframes_push(&r->fr, FR_EVENTS);
	isc_split_run_part(&r->js, k, fd, mem, pt);
	s->n_events = r->n_events;
	isc_isr_destroy(r);
	pt->state = s;
}

/*
 * Appends a part's model to the trace. 1 when the part must be read serially instead
 * (its kernel shapes would pass the shape table's limit), 0, or -ENOMEM.
 */
static int merge(void *ctx, struct isc_split_part *pt)
{
	struct isc_isr *m = ctx;
	struct part_state *s = pt->state;
	struct isc_trace *mt = m->rc->t, *wt = s->t;
	uint16_t in = m->rc->input;
	if (!isc_split_shapes_fit(mt, wt)) {
		return 1;
	}
	struct isc_split_maps maps = { 0 };
	int r = isc_split_map_strings(mt, wt, &maps);
	r = r == 0 ? isc_split_map_rest(mt, wt, &maps) : r;
	r = r == 0 ? isc_split_append(mt, wt, in, &maps) : r;
	const struct isc_stacks *ws = wt->inputs[in].stacks;
	if (r == 0 && ws != NULL) {
		struct isc_stacks *ms = isc_stacks_of(mt, in);
		if (ms == NULL) {
			r = -ENOMEM;
		} else if (ws->max_ref > ms->max_ref) {
			ms->max_ref = ws->max_ref;
		}
	}
	if (r == 0) {
		m->n_events += s->n_events;
	}
	isc_split_maps_free(&maps);
	return r;
}

static void serial(void *ctx)
{
	((struct isc_isr *)ctx)->mode = ISR_SERIAL;
}

static const struct isc_split_ops ops = { read_part, merge, drop, serial };

int isc_isr_read_par(struct isc_isr *r)
{
	r->mode = ISR_MAIN;
	return isc_split_read(r->rc, &r->js, &ops, r);
}
