/* SPDX-License-Identifier: MIT */
/*
 * Turning records into trace events: one encoder per record kind, in a table
 * (convert.c). Each family of hooks has its encoders in an encode-*.c file,
 * next to nothing else, so adding a kind touches one file and one table row.
 */
#ifndef ISC_ENCODE_H
#define ISC_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/record.h"
#include "format/strings.h"
#include "format/json-writer.h"
#include "format/scratch.h"

/* Resolves a code address to a symbol name (live process only). */
typedef const char *(*isc_resolve_fn)(void *ctx, uint64_t addr, char *buf, size_t cap);

/* What a symboliser knows of a code address (strings live until the trace is
 * written; NULL or "" when unknown). */
struct isc_symbol {
	const char *function;
	const char *module;   /* shared object basename, "[exe]"-style names allowed */
	const char *file;     /* source file, NULL when unknown */
	unsigned line;	      /* its line, 0 when unknown */
	const char *build_id; /* hex, NULL when the module has none */
	uint64_t offset;      /* the address as an offset in the module */
	uint64_t start; /* no function name: its start as an offset in the module, 0 unknown */
	/* The module's executable mapping, as pprof's Mapping: the file's path (NULL when
	 * unknown), where the segment lay in memory and in the file, and the load bias
	 * (the frame's address in memory is base + offset). */
	const char *path;
	uint64_t map_start, map_limit, map_offset, base;
};
typedef bool (*isc_symbolize_fn)(void *ctx, uint64_t pc, struct isc_symbol *out);

struct isc_stack_table; /* encode-stacks.c: frames and stacks interned for the trace */

struct isc_scope_rec {
	uint64_t id;
	uint64_t parent;
	uint64_t event_index;
	uint32_t name;
	uint32_t tid;
	uint32_t segment; /* exec segment: whose string table names it */
};

struct isc_enc {
	struct isc_json *j;
	const struct isc_strings *strings;  /* the current segment's */
	const struct isc_strings *segments; /* every segment's, for relationships.scopes */
	uint32_t segment;		    /* exec segment of the records being encoded */
	bool tag_segment;		    /* an earlier image: events say exec_segment */
	uint64_t next_id;		    /* id of the next event written */
	struct isc_vec scopes;		    /* struct isc_scope_rec, for relationships.scopes */
	isc_resolve_fn resolve;
	void *resolve_ctx;
	uint64_t skipped;		/* records not understood (torn, unknown kind) */
	uint64_t written;		/* events written */
	uint64_t pid;			/* of the process whose spill this is */
	struct isc_stack_table *stacks; /* NULL: stacks are written inline only */
	uint32_t stack_id;		/* of the open event, written by isc_enc_end */
};

/*
 * Encodes the record r and the continuation records it owns. avail counts r and the
 * records after it in the same block. Returns the records consumed (at least 1).
 */
typedef unsigned (*isc_encode_fn)(struct isc_enc *e, const struct isc_event *r, unsigned avail);

/* Opens an event: {"id":..,"type":..,"name":..,"timestamp_start_us":..,
 * "duration_us":..,"metadata":{"thread_id":.. ; the encoder adds metadata fields
 * and calls isc_enc_end(). name_id 0 writes an empty name. */
void isc_enc_begin(struct isc_enc *e, const char *type, uint32_t name_id,
		   const struct isc_event *r);
void isc_enc_begin_named(struct isc_enc *e, const char *type, const char *name, size_t n,
			 const struct isc_event *r);
void isc_enc_end(struct isc_enc *e);

/* metadata helpers */
void isc_enc_kv_name(struct isc_enc *e, const char *key, uint32_t name_id);
/* Reassembles inline text from ISC_EV_TEXT records; returns bytes copied. */
size_t isc_enc_text(const struct isc_event *recs, unsigned n, uint64_t len, char *out, size_t cap);
/* Records of inline text needed for len bytes. */
static inline unsigned isc_text_records(uint64_t len)
{
	return (unsigned)((len + ISC_TEXT_PER_RECORD - 1) / ISC_TEXT_PER_RECORD);
}
/* Writes len bytes of text into consecutive ISC_EV_TEXT records (recording side). */
void isc_text_fill(struct isc_event *recs, uint32_t tid, const char *s, size_t len);

/* encoders of the core kinds (encode-core.c) */
unsigned isc_encode_scope(struct isc_enc *e, const struct isc_event *r, unsigned avail);
unsigned isc_encode_instant(struct isc_enc *e, const struct isc_event *r, unsigned avail);
unsigned isc_encode_counter(struct isc_enc *e, const struct isc_event *r, unsigned avail);

/* encoders of the CUDA family (encode-cuda.c) */
unsigned isc_encode_cuda_api(struct isc_enc *e, const struct isc_event *r, unsigned avail);
unsigned isc_encode_gpu_kernel(struct isc_enc *e, const struct isc_event *r, unsigned avail);
unsigned isc_encode_gpu_memcpy(struct isc_enc *e, const struct isc_event *r, unsigned avail);
unsigned isc_encode_gpu_memset(struct isc_enc *e, const struct isc_event *r, unsigned avail);
unsigned isc_encode_gpu_sync(struct isc_enc *e, const struct isc_event *r, unsigned avail);
unsigned isc_encode_graph_node(struct isc_enc *e, const struct isc_event *r, unsigned avail);
/* encoders of the host family (encode-host.c) */
unsigned isc_encode_syscall(struct isc_enc *e, const struct isc_event *r, unsigned avail);
unsigned isc_encode_memory(struct isc_enc *e, const struct isc_event *r, unsigned avail);

/*
 * Sampled stacks (encode-stacks.c). A stack block is ISC_EV_STACK records of 7 words:
 * native return addresses (innermost first), then Python frames of two words each
 * (event.h). Frames and stacks are interned into the trace's top-level "stacks"
 * object; events refer to them by stack_id.
 */
struct isc_stack_table *isc_stack_table_create(isc_symbolize_fn fn, void *ctx);
void isc_stack_table_destroy(struct isc_stack_table *t);
/* Stacks interned so far (0 for NULL). */
size_t isc_stack_table_count(const struct isc_stack_table *t);
/* Interns the stack of `native` pcs and `python` frames in words; 0 when empty or out of
 * memory. */
uint32_t isc_stack_intern(struct isc_stack_table *t, const uint64_t *words, unsigned native,
			  unsigned python);
/* Reads `words` stack words from the STACK records at recs (fewer when torn). */
unsigned isc_stack_words(const struct isc_event *recs, unsigned avail, unsigned words,
			 uint64_t *out, unsigned max);
/* Writes "stacks": {"frames": [...], "stacks": [...]} as a member of the open object. */
void isc_stack_table_write(struct isc_stack_table *t, struct isc_json *j,
			   const struct isc_strings *strings);

/* A stack block with a header word (events other than cpu_sample): magic | native |
 * python << 16 | ... (recording side fills it with isc_stack_block_header). */
#define ISC_STACK_BLOCK_MAGIC 0x5354ull /* "ST" */
static inline uint64_t isc_stack_block_header(unsigned native, unsigned python)
{
	return ISC_STACK_BLOCK_MAGIC << 48 | (uint64_t)python << 16 | native;
}
/* Encodes the header block of `nrec` records at recs (0: as many as its header says):
 * writes "stack_id" when the table exists. Returns records consumed (fewer when torn). */
unsigned isc_encode_stack_block(struct isc_enc *e, const struct isc_event *recs, unsigned avail,
				unsigned nrec);

/* The addresses the converter symbolises for the stacks of the n records at r (each
 * native frame: the innermost as it is, a return address minus 1): fn once per frame.
 * What the flight recorder symbolises at a segment's close (symbols.h). */
void isc_stack_queries(const struct isc_event *r, size_t n, void (*fn)(void *ctx, uint64_t pc),
		       void *ctx);

unsigned isc_encode_cpu_sample(struct isc_enc *e, const struct isc_event *r, unsigned avail);

#endif /* ISC_ENCODE_H */
