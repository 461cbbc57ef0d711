/* SPDX-License-Identifier: MIT */
/*
 * Sampled stacks in the model: the frames and stacks of one input (the trace's "stacks"
 * section, docs/trace-format.md), and the per-event "stack" string arrays of older traces
 * interned into the same shape.
 *
 * Ids are per input, as the file numbers them (dense from 1). Stacks made from string
 * arrays live in a second table of the same input, their ids marked with
 * ISC_STACK_LEGACY, so that they never collide with the ids of a "stacks" section that
 * the same file may carry after its events.
 */
#ifndef ISC_STACKS_H
#define ISC_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/model/model.h"

#define ISC_STACK_LEGACY 0x80000000u
/* Ids from a file are below this (a corrupt number must not allocate gigabytes). */
#define ISC_STACK_ID_LIMIT (1u << 28)

enum isc_frame_kind { ISC_FK_NATIVE, ISC_FK_PYTHON };

struct isc_frame {
	uint64_t address; /* native: offset in the module, 0 unknown */
	uint64_t start;	  /* native, no function name: the function's offset, 0 unknown */
	uint32_t function, module, file, build_id; /* string ids, 0 unknown */
	uint32_t line;				   /* python: line, 0 unknown */
	uint32_t mapping; /* native: its module's mapping, id in the input's table, 0 none */
	uint8_t kind;	  /* enum isc_frame_kind */
	bool defined;
};

/* A module as the trace's "mappings" give it (pprof's Mapping): the executable
 * segment in memory and its offset in the file, the load bias (a frame's address in
 * memory is base + its address), the file's path and build id (string ids). */
struct isc_mapping {
	uint64_t start, limit, offset, base;
	uint32_t path, build_id;
};

struct isc_stack_tab {
	struct isc_frame *f; /* frame id k at f[k - 1] */
	size_t nf, capf;
	uint32_t *soff, *slen; /* stack id k: ids[soff[k - 1]] .. + slen[k - 1] */
	size_t ns, caps;
	uint32_t *ids; /* frame ids of all stacks, innermost first */
	size_t nids, capids;
	/* interning, legacy table only */
	uint32_t *fslot, *sslot, *fsrc; /* fsrc: string id of each legacy frame */
	size_t fmask, smask, capsrc;
};

struct isc_stacks {
	struct isc_stack_tab file, legacy;
	struct isc_mapping *maps; /* mapping id k at maps[k - 1] (zeroed when not given) */
	size_t nmaps, capmaps;
	uint32_t max_ref; /* largest file stack id an event of the input referred to */
	uint32_t open_id; /* reader: the stack being read */
	size_t open_start;
};

/* A stack resolved for reading: frame i (innermost first) is isc_stack_frame(r, i). */
struct isc_stack_ref {
	const struct isc_frame *frames;
	const uint32_t *ids;
	size_t n;
};

static inline const struct isc_frame *isc_stack_frame(const struct isc_stack_ref *r, size_t i)
{
	return &r->frames[r->ids[i] - 1];
}

/* The stacks of an input, created on first use; NULL on allocation failure. */
struct isc_stacks *isc_stacks_of(struct isc_trace *t, uint16_t input);
void isc_stacks_destroy(struct isc_stacks *s);

/* Reader side. Each returns 0 or -ENOMEM (-EINVAL: id 0 or too large). */
int isc_stacks_set_frame(struct isc_stacks *s, uint32_t id, const struct isc_frame *f);
/* A mapping of the input's "mappings" (id from 1). */
int isc_stacks_set_mapping(struct isc_stacks *s, uint32_t id, const struct isc_mapping *m);
/* The mapping of a native frame of input `input`, or NULL. */
const struct isc_mapping *isc_frame_mapping(const struct isc_trace *t, uint16_t input,
					    const struct isc_frame *f);
int isc_stacks_push_ref(struct isc_stacks *s, uint32_t frame_id);
int isc_stacks_close_stack(struct isc_stacks *s, uint32_t id);
/* Interns a stack given as "symbol+0x1f (libfoo.so)" strings (string ids, innermost
 * first); returns its id (with ISC_STACK_LEGACY), or 0 on allocation failure. */
uint32_t isc_stacks_intern_strings(struct isc_trace *t, struct isc_stacks *s, const uint32_t *str,
				   size_t n);
/* After the read: NULL when every reference resolves, else a message in buf. */
const char *isc_stacks_check(const struct isc_stacks *s, char *buf, size_t n);

/* The stack of an event (cpu_sample or any event with ISC_F_STACK); false when none. */
bool isc_stack_of(const struct isc_trace *t, const struct isc_ev *e, struct isc_stack_ref *out);
bool isc_stack_get(const struct isc_trace *t, uint16_t input, uint32_t id,
		   struct isc_stack_ref *out);
static inline uint32_t isc_ev_stack(const struct isc_ev *e)
{
	return (e->flags & ISC_F_STACK) && e->type != ISC_T_KERNEL ? e->stack : 0;
}

/* Interpreter glue (libpython, _PyEval_*, PyObject_* ...): never the code to name. */
bool isc_frame_is_glue(const struct isc_trace *t, const struct isc_frame *f);
/* Glue, the CUDA runtime and driver, libc, the preload: the frames of a call's plumbing. */
bool isc_frame_is_runtime(const struct isc_trace *t, const struct isc_frame *f);
/*
 * The frame that names the code of a stack: the innermost Python frame, else the
 * innermost native frame outside the runtime. *via (may be NULL) gets the first native
 * frame below a Python site that is not glue (the extension function it called), or -1.
 * Returns the frame's index, -1 when the stack has none.
 */
int isc_stack_site(const struct isc_trace *t, const struct isc_stack_ref *r, int *via);
/* The source file of a frame (string id, 0 unknown): a Python frame's file, a native
 * frame's from the module's line table, also for a frame rebuilt from a row's key. */
uint32_t isc_frame_source(const struct isc_trace *t, const struct isc_frame *f);
/* "tokenize() serve.py:41", "at::native::addmm (Linear.cpp:120, libtorch_cpu.so)" with a
 * line table, "at::native::addmm (libtorch_cpu.so)" without */
void isc_frame_text(const struct isc_trace *t, const struct isc_frame *f, char *buf, size_t n);
/* The name part only: "tokenize" / "at::native::addmm", "libfoo.so+0x12" when unknown
 * (the function's start where the trace has it, else the address). */
void isc_frame_name(const struct isc_trace *t, const struct isc_frame *f, char *buf, size_t n);
/* Python frames: the file; native: the module. */
uint32_t isc_frame_where(const struct isc_frame *f);
/*
 * A frame as the parts of a row's key and back: its function, where (above), kind and
 * position, which is a Python frame's line and, for a native frame with no symbol, the
 * offset of its function (else of the address), so that two unnamed functions stay two
 * rows, the addresses of one are one row, and it prints as "libfoo.so+0x12".
 */
uint32_t isc_frame_pos(const struct isc_frame *f);
struct isc_frame isc_frame_of_key(uint32_t function, uint32_t where, uint8_t kind, uint32_t pos);

#endif /* ISC_STACKS_H */
