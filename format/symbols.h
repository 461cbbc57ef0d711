/* SPDX-License-Identifier: MIT */
/*
 * The symbols block of a spill (ISC_BLK_SYMBOLS, docs/trace-format.md, "The spill
 * file"): what the live process knew of the native code addresses its stacks name, so
 * that a converter running where the process is gone (the segments of a flight
 * recorder, `inferscope watch`) writes the same frames as the process would have.
 *
 * The payload: a struct isc_sym_head, n_maps struct isc_sym_map (the modules, as
 * pprof's Mapping), n_syms struct isc_sym_entry sorted by pc, then text: NUL-ended
 * strings the entries point into by offset (offset 0 is "", meaning unknown).
 *
 * The recorder writes one block into each segment it closes with every address the
 * segment's records need: a segment is read alone (the watcher) and retention deletes
 * any segment, so no segment refers to another's symbols. Where several blocks meet
 * (merged segments) an address's first entry is used: they say the same.
 */
#ifndef ISC_SYMBOLS_H
#define ISC_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/encode.h"
#include "format/scratch.h"

struct isc_sym_head {
	uint32_t n_maps, n_syms;
	uint32_t text_bytes;
	uint32_t reserved;
};

struct isc_sym_map {
	uint64_t start, limit;	 /* the module's executable segment in memory */
	uint64_t offset;	 /* where start lies in the file */
	uint64_t base;		 /* load bias: a frame's address is base + its module offset */
	uint32_t path, build_id; /* text offsets */
};

struct isc_sym_entry {
	uint64_t pc;	 /* the address symbolised (a return address minus 1) */
	uint64_t offset; /* pc as an offset in its module */
	uint64_t start;	 /* no function name: the function's start offset, 0 unknown */
	uint32_t function, file, module; /* text offsets */
	uint32_t line;
	uint32_t map; /* index + 1 into the block's maps, 0: none (a JIT's code) */
	uint32_t reserved;
};

_Static_assert(sizeof(struct isc_sym_head) == 16, "symbols head");
_Static_assert(sizeof(struct isc_sym_map) == 40, "symbols map");
_Static_assert(sizeof(struct isc_sym_entry) == 48, "symbols entry");

/* ---- writing (the recorder) ---- */

struct isc_sym_builder {
	struct isc_vec maps;  /* struct isc_sym_map */
	struct isc_vec syms;  /* struct isc_sym_entry */
	struct isc_vec text;  /* char */
	struct isc_vec slots; /* uint32_t: open addressing over syms by pc, index + 1 */
	struct isc_vec block; /* the payload, made by isc_sym_builder_block */
};

void isc_sym_builder_init(struct isc_sym_builder *b);
void isc_sym_builder_finish(struct isc_sym_builder *b);
/* True when pc is already in the builder. */
bool isc_sym_builder_has(struct isc_sym_builder *b, uint64_t pc);
/* Adds pc with what the symboliser said of it. false when memory runs out. */
bool isc_sym_builder_add(struct isc_sym_builder *b, uint64_t pc, const struct isc_symbol *s);
/* The payload of the block (valid until the builder is finished); NULL when empty or
 * out of memory. */
const void *isc_sym_builder_block(struct isc_sym_builder *b, size_t *n);

/* ---- reading (the converter) ---- */

struct isc_sym_table {
	struct isc_vec refs; /* (pc, entry, its block), sorted by pc once sealed */
};

/* Adds the entries of one block (the spill must stay mapped while the table is used).
 * false when the block is malformed or memory runs out. */
bool isc_sym_table_add(struct isc_sym_table *t, const void *block, size_t n);
/* Sorts what was added; call once after the last add. */
void isc_sym_table_seal(struct isc_sym_table *t);
void isc_sym_table_free(struct isc_sym_table *t);
/* An isc_symbolize_fn over the table (ctx: the table). */
bool isc_sym_table_symbolize(void *ctx, uint64_t pc, struct isc_symbol *out);

#endif /* ISC_SYMBOLS_H */
