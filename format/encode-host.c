/* SPDX-License-Identifier: MIT */
/*
 * Encoders of the host family: cpu_syscall and memory_event, each with the stack
 * records that may follow it. Counters (cpu_time, wait_time, live_heap) use the
 * core's counter encoder.
 *
 * Stack frames are symbolised through the converter's resolver when there is one
 * (the live process writing its own trace); offline (a spill recovered by the
 * analyzer) they are written as raw "0x..." addresses.
 */
#include "format/encode.h"
#include "format/vocab.h"

#include <string.h>

static const char *const mem_ops[ISC_MEM__COUNT] = {
	[ISC_MEM_MALLOC] = "malloc",
	[ISC_MEM_CALLOC] = "calloc",
	[ISC_MEM_REALLOC] = "realloc",
	[ISC_MEM_REALLOCARRAY] = "reallocarray",
	[ISC_MEM_FREE] = "free",
	[ISC_MEM_POSIX_MEMALIGN] = "posix_memalign",
	[ISC_MEM_ALIGNED_ALLOC] = "aligned_alloc",
	[ISC_MEM_MEMALIGN] = "memalign",
	[ISC_MEM_VALLOC] = "valloc",
	[ISC_MEM_PVALLOC] = "pvalloc",
	[ISC_MEM_MMAP] = "mmap",
	[ISC_MEM_MUNMAP] = "munmap",
	[ISC_MEM_MREMAP] = "mremap",
	[ISC_MEM_NUMA_MIGRATION] = "numa_migration",
};

static const char *const categories[] = { "io", "net", "wait", "sleep", "driver", "fs" };
static const char *const targets[] = { NULL, "file", "socket", "pipe", "tty", "nvidia", "other" };

/* Stack records present after the head: at most `need`, stopping at the first record
 * of another kind (a torn spill, or a head whose stack was never written). */
static unsigned stack_span(const struct isc_event *recs, unsigned avail, unsigned need)
{
	unsigned n = 0;
	while (n < need && n < avail && recs[n].kind == ISC_EV_STACK) {
		n++;
	}
	return n;
}

/*
 * Writes "stack" (native frames as strings, the format's older field) and "stack_id"
 * (native and Python frames, interned) from the records after the head when they are
 * all there. Returns the records the event consumes: the head and the stack records
 * present.
 */
static unsigned encode_stack(struct isc_enc *e, const struct isc_event *recs, unsigned avail,
			     unsigned frames, unsigned py, bool text)
{
	unsigned words = frames + 2 * py;
	unsigned need = isc_stack_records(words);
	unsigned have = stack_span(recs, avail, need);
	if (have < need) {
		e->skipped++; /* a torn stack: the event is written without it */
		return 1 + have;
	}
	if (words == 0) {
		return 1;
	}
	uint64_t w[512];
	unsigned n = isc_stack_words(recs, have, words, w, 512);
	for (unsigned k = 0; text && k < frames && k < n; k++) {
		char buf[512];
		const char *sym =
			e->resolve ? e->resolve(e->resolve_ctx, w[k], buf, sizeof(buf)) : NULL;
		if (k == 0) {
			isc_json_key(e->j, ISC_KEY_STACK);
			isc_json_begin_array(e->j);
		}
		if (sym) {
			isc_json_string(e->j, sym);
		} else {
			isc_json_hex(e->j, w[k]);
		}
		if (k + 1 == frames || k + 1 == n) {
			isc_json_end_array(e->j);
		}
	}
	uint32_t id = n == words ? isc_stack_intern(e->stacks, w, frames, py) : 0;
	if (id) {
		isc_json_kv_uint(e->j, "stack_id", id); /* and in the event (isc_enc_end) */
		e->stack_id = id;
	}
	return 1 + need;
}

unsigned isc_encode_syscall(struct isc_enc *e, const struct isc_event *r, unsigned avail)
{
	const struct isc_syscall_payload *p = &r->u.syscall;
	struct isc_json *j = e->j;

	isc_enc_begin(e, ISC_TYPE_CPU_SYSCALL, r->name, r);
	isc_json_kv_int(j, ISC_KEY_SYSCALL_NUMBER, p->nr);
	if (p->fd >= 0) {
		isc_json_kv_int(j, ISC_KEY_FD, p->fd);
	}
	if (p->target < sizeof(targets) / sizeof(targets[0]) && targets[p->target]) {
		isc_json_kv_string(j, ISC_KEY_TARGET, targets[p->target]);
	}
	if (p->bytes) {
		isc_json_kv_uint(j, ISC_KEY_BYTES, p->bytes);
	}
	isc_json_kv_int(j, ISC_KEY_RETURN_VALUE, p->ret);
	if (r->flags & ISC_EVF_ERRNO) {
		isc_json_kv_int(j, ISC_KEY_ERRNO, p->err);
	}
	isc_json_kv_string(j, ISC_KEY_CATEGORY,
			   p->category < sizeof(categories) / sizeof(categories[0])
				   ? categories[p->category]
				   : "io");
	unsigned used = encode_stack(e, r + 1, avail - 1, p->frames, p->py_frames,
				     r->flags & ISC_EVF_STACK_TEXT);
	isc_enc_end(e);
	return used;
}

unsigned isc_encode_memory(struct isc_enc *e, const struct isc_event *r, unsigned avail)
{
	const struct isc_memory_payload *p = &r->u.memory;
	struct isc_json *j = e->j;
	const char *op = p->op < ISC_MEM__COUNT && mem_ops[p->op] ? mem_ops[p->op] : "unknown";
	bool migration = p->op == ISC_MEM_NUMA_MIGRATION;

	isc_enc_begin_named(e, ISC_TYPE_MEMORY_EVENT, op, strlen(op), r);
	isc_json_kv_string(j, ISC_KEY_OPERATION, op);
	isc_json_kv_uint(j, ISC_KEY_BYTES, migration ? 0 : p->bytes);
	isc_json_key(j, ISC_KEY_PTR);
	isc_json_hex(j, p->ptr);
	isc_json_kv_uint(j, ISC_KEY_WEIGHT, p->weight);
	if (p->numa_node >= 0) {
		isc_json_kv_int(j, ISC_KEY_NUMA_NODE, p->numa_node);
	}
	if (migration) {
		isc_json_kv_uint(j, ISC_KEY_NUMA_PAGES_MIGRATED, p->bytes);
	}
	unsigned used = encode_stack(e, r + 1, avail - 1, p->frames, p->py_frames,
				     r->flags & ISC_EVF_STACK_TEXT);
	isc_enc_end(e);
	return used;
}
