/* SPDX-License-Identifier: MIT */
/*
 * Python frames of a sampled thread, read from CPython's own structures without the
 * GIL and without calling the interpreter.
 *
 * In the signal handler: the thread's PyThreadState is found from _PyRuntime
 * (interpreters -> threads, matched by pthread_self(), which is what CPython stores
 * as thread_id), its current frame taken, and the frame chain walked: 3.8-3.10
 * PyFrameObject (f_back, f_code, f_lasti), 3.11-3.13 _PyInterpreterFrame (previous,
 * code, instruction pointer, owner). Every read goes through isc_safe_read, so a frame
 * freed or rewritten under the reader gives a short read or a wrong value, never a
 * fault; the walk is bounded and stops at the first read that fails. What it records
 * per frame is the code object's address and the instruction offset.
 *
 * 3.11+ keep a thread's frames in its data-stack chunks (tstate->datastack_chunk, a list
 * of mappings, newest first). The thread state is read through isc_safe_read as before,
 * or in place where it lies in the interpreter's static data (the main interpreter's
 * first thread state: the main thread's), and its thread id checked; when it runs a
 * frame, its chunks are read in place (the
 * head from the thread state, each next one from its successor's link; the list is
 * read through isc_safe_read instead whenever its head is not the one the previous
 * sample found), and so is a frame that lies inside one of them. The handler runs on the
 * sampled thread, which alone pushes and frees its chunks and unlinks one before freeing
 * it; another thread frees them only with the thread state, which CPython does not allow
 * for a thread state that runs a frame, but for daemon threads at finalisation: while
 * _PyRuntime's finalizing is set, every frame is read through isc_safe_read again.
 * Frames elsewhere (a generator's, in its heap object) are read as before.
 *
 * On the collector (isc_spill_prepare), before the records are written: each code
 * object is read - checked to be a code object - for co_name, co_filename and the
 * line table, and the frame becomes (name, file, line). That happens within a tick of
 * the sample, while the code is alive; at exit the interpreter is already finalised.
 *
 * Evaluator groups: 3.8-3.10 run one frame per _PyEval_EvalFrameDefault call; 3.11
 * marks the first frame of a call is_entry; 3.12+ put a shim frame owned by the C
 * stack below each call. The last frame of each group carries ISC_PYF_ENTRY.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>

#include "preload/core/intern.h"
#include "preload/core/thread.h"
#include "common/log.h"
#include "preload/samplers/cpu-sampler.h"

#define OWNED_BY_CSTACK 3 /* 3.12+: the shim frame at the entry of an evaluator call */
#define MAX_THREADS_WALKED 4096

static struct isc_py_layout L;
static _Atomic int state; /* 0 absent (not yet), 1 ok, 2 unsupported */
static uint64_t runtime;
/* The interpreter's static data (the loaded segment that holds _PyRuntime): mapped for as
 * long as the interpreter is loaded. The main interpreter's first thread state lies in
 * it (3.11+), so the main thread's is read in place. */
static uint64_t static_lo, static_hi;
static uint64_t code_type, unicode_type, bytes_type;
static char why[96];

static bool rd(uint64_t addr, void *out, size_t n)
{
	return isc_safe_read(out, addr, n) == n;
}

static uint64_t rd_ptr(uint64_t addr)
{
	uint64_t v = 0;
	return rd(addr, &v, 8) ? v : 0;
}

static void unsupported(const char *fmt, unsigned a, unsigned b)
{
	isc_fmt(why, sizeof(why), fmt, a, b);
	atomic_store(&state, 2);
	isc_info("CPU samples: Python frames %s", why);
}

static unsigned version_of(void)
{
	const unsigned long *hex = dlsym(RTLD_DEFAULT, "Py_Version"); /* 3.11+ */
	if (hex) {
		return (unsigned)(*hex >> 16 & 0xffff);
	}
	const char *(*getv)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
	const char *v = getv ? getv() : NULL; /* formats static strings, takes no lock */
	unsigned major = 0, minor = 0;
	for (; v && *v >= '0' && *v <= '9'; v++) {
		major = major * 10 + (unsigned)(*v - '0');
	}
	for (v = v && *v == '.' ? v + 1 : NULL; v && *v >= '0' && *v <= '9'; v++) {
		minor = minor * 10 + (unsigned)(*v - '0');
	}
	return major << 8 | minor;
}

/* 3.13+: _PyRuntime starts with the offsets the interpreter publishes for debuggers. */
static bool use_debug_offsets(void)
{
	uint64_t d[44];
	if (!rd(runtime, d, sizeof(d)) || memcmp(d, "xdebugpy", 8) != 0) {
		unsupported("unsupported: no debug offsets in _PyRuntime", 0, 0);
		return false;
	}
	if (d[2] != 0) {
		unsupported("unsupported: free-threaded build", 0, 0);
		return false;
	}
	/* runtime_state at word 3, interpreter_state at 6, thread_state at 19,
	 * interpreter_frame at 28, code_object at 34 (each starts with its size) */
	L.rt_finalizing = (uint32_t)d[4];
	L.interp_head = (uint32_t)d[5];
	L.tstate_head = (uint32_t)d[9];
	L.ts_next = (uint32_t)d[21];
	L.cur_frame = (uint32_t)d[23];
	L.ts_thread_id = (uint32_t)d[24];
	L.ts_native_tid = (uint32_t)d[25];
	L.ts_datastack = (uint32_t)d[26];
	L.f_prev = (uint32_t)d[29];
	L.f_code = (uint32_t)d[30];
	L.f_instr = (uint32_t)d[31];
	L.f_owner = (uint32_t)d[33];
	L.co_filename = (uint32_t)d[35];
	L.co_name = (uint32_t)d[36];
	L.co_lines = (uint32_t)d[38];
	L.co_firstlineno = (uint32_t)d[39];
	L.co_code_start = (uint32_t)d[43];
	return true;
}

/* The loaded segment that holds address a[0]: [a[0], a[1]) on return 1. */
static int segment_of(struct dl_phdr_info *info, size_t size, void *data)
{
	uint64_t *a = data;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && a[0] >= lo && a[0] < lo + ph->p_memsz) {
			a[0] = lo;
			a[1] = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

void isc_py_discover(void)
{
	if (atomic_load(&state) != 0) {
		return;
	}
	void *rt = dlsym(RTLD_DEFAULT, "_PyRuntime");
	if (rt == NULL) {
		return; /* no interpreter (yet) */
	}
	unsigned v = version_of();
	const struct isc_py_layout *l = isc_py_layouts;
	while (l->version && l->version != v) {
		l++;
	}
	if (l->version == 0) {
		unsupported("unsupported: CPython %u.%u", v >> 8, v & 0xff);
		return;
	}
	if (!isc_safe_read_ok()) {
		unsupported("unsupported: process_vm_readv is not permitted here", 0, 0);
		return;
	}
	L = *l;
	runtime = (uintptr_t)rt;
	uint64_t seg[2] = { runtime, 0 };
	if (dl_iterate_phdr(segment_of, seg) == 1) {
		static_lo = seg[0];
		static_hi = seg[1];
	}
	if (v >= 0x30d && !use_debug_offsets()) {
		return;
	}
	code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
	unicode_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	bytes_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyBytes_Type");
	if (!code_type || !unicode_type || !bytes_type) {
		unsupported("unsupported: type objects not found", 0, 0);
		return;
	}
	isc_info("CPU samples: Python %u.%u frames", v >> 8, v & 0xff);
	atomic_store(&state, 1);
}

const char *isc_py_status(void)
{
	switch (atomic_load(&state)) {
	case 1:
		return "ok";
	case 2:
		return why;
	}
	return "absent";
}

/* ---- the handler's walk ---- */

/* The walk's reads through process_vm_readv, counted (trace_metadata.sampling): what
 * the in-place reads leave to system calls. */
static _Atomic uint64_t walk_reads;

static size_t walk_readv(const struct iovec *local, const struct iovec *remote, unsigned n)
{
	atomic_fetch_add_explicit(&walk_reads, 1, memory_order_relaxed);
	return isc_safe_readv(local, remote, n);
}

static bool walk_rd(uint64_t addr, void *out, size_t n)
{
	atomic_fetch_add_explicit(&walk_reads, 1, memory_order_relaxed);
	return rd(addr, out, n);
}

static uint64_t walk_rd_ptr(uint64_t addr)
{
	uint64_t v = 0;
	return walk_rd(addr, &v, 8) ? v : 0;
}

uint64_t isc_py_walk_reads(void)
{
	return atomic_load(&walk_reads);
}

static uint64_t find_tstate(uint64_t self, uint64_t hint)
{
	if (hint && walk_rd_ptr(hint + L.ts_thread_id) == self) {
		return hint;
	}
	uint64_t interp = walk_rd_ptr(runtime + L.interp_head);
	for (unsigned i = 0; interp && i < 16; i++) {
		uint64_t ts = walk_rd_ptr(interp + L.tstate_head);
		for (unsigned k = 0; ts && k < MAX_THREADS_WALKED; k++) {
			if (walk_rd_ptr(ts + L.ts_thread_id) == self) {
				return ts;
			}
			ts = walk_rd_ptr(ts + L.ts_next);
		}
		interp = walk_rd_ptr(interp + 0); /* PyInterpreterState.next is its first member */
	}
	return 0;
}

#define CHUNKS (sizeof(((struct isc_thread *)0)->py_chunks) / sizeof(uint64_t))
#define CHUNK_DATA 24	       /* _PyStackChunk: previous, size, top, then the frames */
#define CHUNK_MAX (1ull << 30) /* a size beyond it is not a chunk's */

/* Data-stack chunks checked in this handler: [lo, hi) readable in place. */
struct chunks {
	unsigned n;
	uint64_t lo[CHUNKS], hi[CHUNKS];
};

static bool chunk_ok(uint64_t c, uint64_t size)
{
	return c % 8 == 0 && size > CHUNK_DATA && size <= CHUNK_MAX && c + size > c;
}

/* The chunk list from its head ds, each header read through isc_safe_read: the cache
 * of the next samples, and this sample's ranges. */
static void chunks_walk(struct isc_thread *t, uint64_t ds, struct chunks *ck)
{
	unsigned n = 0;
	for (uint64_t h[2]; ds && n < CHUNKS && walk_rd(ds, h, sizeof(h)) && chunk_ok(ds, h[1]);
	     ds = h[0]) {
		t->py_chunks[n] = ds;
		ck->lo[n] = ds + CHUNK_DATA;
		ck->hi[n] = ds + h[1];
		n++;
	}
	t->py_chunks_n = ck->n = n;
}

/* Is the frame [f, f + span) inside a chunk checked in this handler? */
static bool in_chunks(const struct chunks *ck, uint64_t f, unsigned span)
{
	for (unsigned i = 0; i < ck->n; i++) {
		if (f >= ck->lo[i] && f % 8 == 0 && f + span <= ck->hi[i] && f + span > f) {
			return true;
		}
	}
	return false;
}

/* Ranges of the thread's chunk list, whose head ds was just read from its thread state.
 * While the head is the one the cache holds, the headers are read in place: each chunk
 * is then in the list of a live thread state (the head from it, each next one from its
 * successor's link), which only this thread, interrupted, changes. */
static void chunks_of(struct isc_thread *t, uint64_t ds, struct chunks *ck)
{
	ck->n = 0;
	if (ds == 0 || t->py_chunks_n == 0 || ds != t->py_chunks[0]) {
		chunks_walk(t, ds, ck);
		return;
	}
	for (unsigned i = 0; i < t->py_chunks_n; i++) {
		const volatile uint64_t *h = (const volatile uint64_t *)(uintptr_t)t->py_chunks[i];
		uint64_t prev = h[0], size = h[1];
		if (!chunk_ok(t->py_chunks[i], size)) {
			break;
		}
		ck->lo[i] = t->py_chunks[i] + CHUNK_DATA;
		ck->hi[i] = t->py_chunks[i] + size;
		ck->n = i + 1;
		if (i + 1 < t->py_chunks_n && prev != t->py_chunks[i + 1]) {
			break;
		}
	}
	if (ck->n < t->py_chunks_n) {
		t->py_chunks_n = 0; /* the list changed: read again at the next sample */
	}
}

/* The thread's current frame; ts from the hint when it still is this thread's: its
 * thread id, frame pointer and (3.11+) data-stack chunk in one read. *ds: that chunk,
 * 0 when not read. */
static uint64_t current_frame(struct isc_thread *t, uint64_t self, uint64_t *ds)
{
	bool cframe = L.ts_cframe || L.version == 0x30c; /* 3.11, 3.12: ts->cframe->frame */
	uint32_t at = cframe ? L.ts_cframe : L.cur_frame;
	uint64_t ts = 0, f = 0, v[3] = { 0 };
	*ds = 0;
	if (t->py_tstate) {
		struct iovec local[3] = { { &v[0], 8 }, { &v[1], 8 }, { &v[2], 8 } };
		struct iovec remote[3] = {
			{ (void *)(uintptr_t)(t->py_tstate + L.ts_thread_id), 8 },
			{ (void *)(uintptr_t)(t->py_tstate + at), 8 },
			{ (void *)(uintptr_t)(t->py_tstate + L.ts_datastack), 8 },
		};
		unsigned k = L.ts_datastack ? 3 : 2;
		bool in_static = true;
		for (unsigned i = 0; i < k; i++) {
			uint64_t a = (uintptr_t)remote[i].iov_base;
			in_static = in_static && a >= static_lo && a + 8 <= static_hi && a % 8 == 0;
		}
		if (in_static) {
			for (unsigned i = 0; i < k; i++) {
				v[i] = *(const volatile uint64_t *)remote[i].iov_base;
			}
		}
		if ((in_static || walk_readv(local, remote, k) == 8 * k) && v[0] == self) {
			ts = t->py_tstate;
			f = v[1];
			*ds = v[2];
		}
	}
	if (ts == 0 && t->py_absent > 0) {
		t->py_absent--; /* a thread without Python (a BLAS or OpenMP worker) */
		t->py_tstate = 0;
		return 0;
	}
	if (ts == 0) {
		/* one read per thread state of the interpreter: not at every sample of a
		 * thread that has none, but again after 1, 2, 4 ... 64 samples */
		ts = find_tstate(self, 0);
		f = ts ? walk_rd_ptr(ts + at) : 0;
		t->py_backoff = ts ? 0 : t->py_backoff ? (uint16_t)(t->py_backoff * 2) : 1;
		t->py_backoff = t->py_backoff > 64 ? 64 : t->py_backoff;
		t->py_absent = t->py_backoff;
	}
	t->py_tstate = ts;
	if (!cframe || f == 0) {
		return f;
	}
	/* the evaluator's _PyCFrame is a local of its C frame: on this thread's stack, in
	 * the range the native unwinder checked, it is read without a system call; so is the
	 * static thread state's own root_cframe, its cframe outside the evaluator */
	uint64_t at_frame = f + L.cur_frame;
	bool on_stack = t->stack_hi && at_frame >= t->stack_lo && at_frame <= t->stack_hi - 8;
	bool in_static = at_frame >= static_lo && at_frame + 8 <= static_hi; /* root_cframe */
	if ((on_stack || in_static) && at_frame % 8 == 0) {
		return *(const uint64_t *)(uintptr_t)at_frame;
	}
	return walk_rd_ptr(at_frame);
}

/* One frame read at b: appended to words unless it is a 3.12+ shim; *prev its caller. */
static void parse_frame(const unsigned char *b, uint64_t *words, unsigned *n, uint64_t *prev)
{
	uint64_t code, instr;
	memcpy(prev, b + L.f_prev, 8);
	memcpy(&code, b + L.f_code, 8);
	uint32_t flags = 0;
	int32_t off;
	if (L.version < 0x30b) {
		memcpy(&off, b + L.f_instr, 4); /* f_lasti */
		flags = ISC_PYF_ENTRY;
	} else {
		memcpy(&instr, b + L.f_instr, 8);
		if (L.version >= 0x30c && b[L.f_owner] == OWNED_BY_CSTACK) {
			if (*n > 0) {
				words[2 * *n - 1] |= (uint64_t)ISC_PYF_ENTRY << 32;
			}
			return;
		}
		if (L.f_entry && b[L.f_entry]) {
			flags = ISC_PYF_ENTRY;
		}
		int64_t d = (int64_t)(instr - (code + L.co_code_start)) / 2;
		off = d < INT32_MIN || d > INT32_MAX ? -1 : (int32_t)d;
	}
	words[2 * *n] = code;
	words[2 * *n + 1] = (uint32_t)off | (uint64_t)flags << 32;
	(*n)++;
}

#define BATCH 16
#define CHAIN (sizeof(((struct isc_thread *)0)->py_chain) / sizeof(uint64_t))

/*
 * The frame chain, read with as few system calls as it can: where a frame is one the
 * previous sample of this thread walked through, the frames that followed it then are
 * read with it in one process_vm_readv (several iovecs), and each is taken only if the
 * frame before it, as read now, still points at it. Between two samples usually only
 * the innermost frames change: a walk costs two or three reads, not one per frame.
 */
bool isc_py_present(void)
{
	return atomic_load_explicit(&state, memory_order_acquire) == 1;
}

unsigned isc_py_walk(struct isc_thread *t, uint64_t *words, unsigned max, uint16_t *status)
{
	*status = ISC_PY_NONE;
	if (atomic_load_explicit(&state, memory_order_acquire) != 1) {
		return 0;
	}
	uint64_t ds;
	uint64_t f = current_frame(t, (uint64_t)pthread_self(), &ds);
	/* _PyRuntime is the interpreter's static data: its finalizing read in place */
	struct chunks ck = { 0 };
	if (f && ds && *(const volatile uint64_t *)(uintptr_t)(runtime + L.rt_finalizing) == 0) {
		chunks_of(t, ds, &ck);
	}
	unsigned span = L.f_instr + 8;
	span = L.f_owner + 1 > span ? L.f_owner + 1 : span;
	span = L.f_code + 8 > span ? L.f_code + 8 : span;
	span = L.f_prev + 8 > span ? L.f_prev + 8 : span;
	unsigned char b[2048];
	unsigned batch = span > sizeof(b) ? 0 : sizeof(b) / span;
	batch = batch > BATCH ? BATCH : batch;
	uint64_t chain[CHAIN];
	unsigned n = 0, steps = 0, cn = 0, prev_n = t->py_chain_n;
	*status = f ? ISC_PY_OK : ISC_PY_NONE;
	while (f && n < max && steps < 1024) {
		if (in_chunks(&ck, f, span) ||
		    (t->stack_hi && f >= t->stack_lo && f + span <= t->stack_hi && f % 8 == 0)) {
			/* in a chunk of this thread's list (see the top), or on its stack in the
			 * range the native unwinder checked (3.12+: the evaluator's entry frame
			 * is a local of its C frame): read in place */
			if (cn < CHAIN) {
				chain[cn++] = f;
			}
			parse_frame((const unsigned char *)(uintptr_t)f, words, &n, &f);
			steps++;
			continue;
		}
		uint64_t addr[BATCH];
		unsigned k = 1, j = 0;
		addr[0] = f;
		while (j < prev_n && t->py_chain[j] != f) {
			j++;
		}
		for (; j < prev_n && k < batch && j + k < prev_n; k++) {
			addr[k] = t->py_chain[j + k];
		}
		struct iovec local[BATCH], remote[BATCH];
		for (unsigned i = 0; i < k; i++) {
			local[i] = (struct iovec){ b + i * span, span };
			remote[i] = (struct iovec){ (void *)(uintptr_t)addr[i], span };
		}
		size_t got = batch ? walk_readv(local, remote, k) / span : 0;
		if (got == 0) {
			*status = ISC_PY_TRUNCATED;
			break;
		}
		for (unsigned i = 0; i < got && f == addr[i] && n < max; i++, steps++) {
			if (cn < CHAIN) {
				chain[cn++] = f;
			}
			parse_frame(b + i * span, words, &n, &f);
		}
	}
	memcpy(t->py_chain, chain, cn * sizeof(*chain));
	t->py_chain_n = cn;
	if (f && n == max) {
		*status = ISC_PY_TRUNCATED;
	}
	return n;
}

/* ---- the collector's resolution ---- */

/* Reads a str object as UTF-8 into out (NUL-terminated); false when it is not one. */
static bool read_str(uint64_t obj, char *out, size_t cap)
{
	unsigned char h[80];
	if (obj == 0 || !rd(obj, h, L.ascii_size) || *(uint64_t *)(h + 8) != unicode_type) {
		return false;
	}
	int64_t len = *(int64_t *)(h + 16);
	uint32_t st = *(uint32_t *)(h + L.str_state);
	unsigned kind = st >> 2 & 7, compact = st >> 5 & 1, ascii = st >> 6 & 1;
	if (!compact || len < 0 || (kind != 1 && kind != 2 && kind != 4)) {
		return false;
	}
	uint64_t data = obj + (ascii ? L.ascii_size : L.compact_size);
	size_t n = 0;
	unsigned char raw[1024];
	size_t take = (size_t)len * kind < sizeof(raw) ? (size_t)len * kind : sizeof(raw);
	if (!rd(data, raw, take)) {
		return false;
	}
	for (size_t i = 0; i + kind <= take; i += kind) {
		uint32_t c = kind == 1	 ? raw[i]
			     : kind == 2 ? *(uint16_t *)(raw + i)
					 : *(uint32_t *)(raw + i);
		unsigned char u[4];
		unsigned k = 0;
		if (c < 0x80) {
			u[k++] = (unsigned char)c;
		} else if (c < 0x800) {
			u[k++] = (unsigned char)(0xc0 | c >> 6);
			u[k++] = (unsigned char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			u[k++] = (unsigned char)(0xe0 | c >> 12);
			u[k++] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
			u[k++] = (unsigned char)(0x80 | (c & 0x3f));
		} else {
			u[k++] = (unsigned char)(0xf0 | c >> 18);
			u[k++] = (unsigned char)(0x80 | (c >> 12 & 0x3f));
			u[k++] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
			u[k++] = (unsigned char)(0x80 | (c & 0x3f));
		}
		if (n + k + 1 > cap) {
			break;
		}
		memcpy(out + n, u, k);
		n += k;
	}
	out[n] = '\0';
	return true;
}

static int64_t svarint(const unsigned char *p, size_t n, size_t *i)
{
	uint64_t v = 0;
	unsigned shift = 0;
	while (*i < n) {
		unsigned char c = p[(*i)++];
		v |= (uint64_t)(c & 63) << shift;
		shift += 6;
		if (!(c & 64)) {
			break;
		}
	}
	return v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
}

static void varint_skip(const unsigned char *p, size_t n, size_t *i)
{
	while (*i < n && (p[(*i)++] & 64)) {
	}
}

/* Line of instruction `off` from the line table (t, n), per format. */
static int line_of(const unsigned char *t, size_t n, int first, int32_t off)
{
	int line = first;
	if (L.version < 0x30a) { /* co_lnotab: (byte delta, line delta) pairs; off in bytes */
		int64_t addr = 0;
		for (size_t i = 0; i + 1 < n; i += 2) {
			addr += t[i];
			if (addr > off) {
				break;
			}
			line += (signed char)t[i + 1];
		}
		return line;
	}
	if (L.version == 0x30a) { /* co_linetable: (byte delta, line delta), off in units */
		int64_t end = 0, addr = (int64_t)off * 2;
		for (size_t i = 0; i + 1 < n; i += 2) {
			end += t[i];
			if ((signed char)t[i + 1] != -128) {
				line += (signed char)t[i + 1];
			}
			if (addr < end) {
				return line;
			}
		}
		return line;
	}
	/* 3.11+ location table: entries of (code << 3 | length - 1) with bit 7 set */
	int64_t addr = 0;
	for (size_t i = 0; i < n;) {
		unsigned char h = t[i++];
		unsigned code = h >> 3 & 15, len = (h & 7) + 1;
		int delta = 0;
		if (code == 15) {
			delta = 0;
		} else if (code == 14) {
			delta = (int)svarint(t, n, &i);
			varint_skip(t, n, &i);
			varint_skip(t, n, &i);
			varint_skip(t, n, &i);
		} else if (code == 13) {
			delta = (int)svarint(t, n, &i);
		} else if (code >= 10) {
			delta = (int)code - 10;
			i += 2;
		} else {
			i += 1;
		}
		line += delta;
		addr += len;
		if (off < addr) {
			return line;
		}
	}
	return line;
}

struct code_info {
	uint64_t code, name_ptr, file_ptr;
	int32_t off;
	uint32_t name, file, line;
};

#define CACHE 8192
static struct code_info cache[CACHE];

/*
 * Code objects read in the current batch of records (isc_py_resolve_records): the same
 * few code objects come back in every sample of a batch, and each read is a system call,
 * so each is read (and checked to be a code object) once per batch, not once per frame.
 * A batch is resolved at once, within a tick of its samples, as before.
 */
#define SEEN 512

struct seen {
	uint64_t code, np, fp, lt;
	int32_t first;
	bool ok;
};

static struct seen seen[SEEN];

static const struct seen *code_header(uint64_t code)
{
	struct seen *s = &seen[(code >> 4) % SEEN];
	if (s->code == code) {
		return s;
	}
	unsigned char h[256];
	unsigned span = L.co_code_start ? L.co_code_start : L.co_lines + 8;
	s->code = code;
	s->ok = span <= sizeof(h) && rd(code, h, span) && *(uint64_t *)(h + 8) == code_type;
	if (s->ok) {
		s->np = *(uint64_t *)(h + L.co_name);
		s->fp = *(uint64_t *)(h + L.co_filename);
		s->lt = *(uint64_t *)(h + L.co_lines);
		s->first = *(int32_t *)(h + L.co_firstlineno);
	}
	return s;
}

/* Resolves (code, off) into string ids and a line; false when it is not a code object. */
static bool resolve(uint64_t code, int32_t off, uint32_t *name, uint32_t *file, uint32_t *line)
{
	const struct seen *hd = code_header(code);
	if (!hd->ok) {
		return false;
	}
	uint64_t np = hd->np, fp = hd->fp;
	struct code_info *c = &cache[(code >> 4 ^ (uint32_t)off * 2654435761u) % CACHE];
	if (c->code == code && c->off == off && c->name_ptr == np && c->file_ptr == fp) {
		*name = c->name;
		*file = c->file;
		*line = c->line;
		return true;
	}
	char nb[256], fb[1024];
	if (!read_str(np, nb, sizeof(nb)) || !read_str(fp, fb, sizeof(fb))) {
		return false;
	}
	int first = hd->first;
	uint64_t lt = hd->lt;
	unsigned char tb[4096];
	int64_t tn = 0;
	if (rd(lt + 8, tb, 8) && rd_ptr(lt + 8) == bytes_type && rd(lt + 16, &tn, 8) && tn >= 0) {
		tn = tn < (int64_t)sizeof(tb) ? tn : (int64_t)sizeof(tb);
		tn = rd(lt + L.bytes_sval, tb, (size_t)tn) ? tn : 0;
	} else {
		tn = 0;
	}
	c->code = code;
	c->off = off;
	c->name_ptr = np;
	c->file_ptr = fp;
	c->name = *name = isc_intern_cstr(nb);
	c->file = *file = isc_intern_cstr(fb);
	int ln = off < 0 ? first : line_of(tb, (size_t)tn, first, off);
	c->line = *line = ln > 0 ? (uint32_t)ln : 0; /* a table read as it changed: unknown */
	return true;
}

static uint64_t *word_at(struct isc_event *recs, unsigned k)
{
	return (uint64_t *)((unsigned char *)&recs[k / ISC_STACK_PER_RECORD] +
			    isc_stack_offset(k % ISC_STACK_PER_RECORD));
}

/* Python frames of a stack block whose frames start at word `base`. */
static void resolve_block(struct isc_event *recs, uint32_t avail, unsigned base, unsigned native,
			  unsigned python)
{
	unsigned words = base + native + 2 * python;
	native += base;
	if (isc_stack_records(words) > avail || python == 0) {
		return;
	}
	for (unsigned i = 0; i < python; i++) {
		uint64_t *w0 = word_at(recs, native + 2 * i),
			 *w1 = word_at(recs, native + 2 * i + 1);
		uint32_t flags = (uint32_t)(*w1 >> 32), name, file, line;
		if (flags & (ISC_PYF_RESOLVED | ISC_PYF_BAD)) {
			continue;
		}
		if (atomic_load(&state) == 1 &&
		    resolve(*w0, (int32_t)(uint32_t)*w1, &name, &file, &line)) {
			*w0 = name | (uint64_t)file << 32;
			*w1 = line | (uint64_t)(flags | ISC_PYF_RESOLVED) << 32;
		} else {
			*w1 |= (uint64_t)ISC_PYF_BAD << 32;
		}
	}
}

void isc_py_resolve_records(struct isc_event *recs, uint32_t n)
{
	memset(seen, 0, sizeof(seen)); /* a new batch: read every code object again */
	for (uint32_t i = 0; i < n; i++) {
		const struct isc_event *r = &recs[i];
		uint32_t rest = n - i - 1;
		if (r->kind == ISC_EV_CPU_SAMPLE) {
			resolve_block(&recs[i + 1], rest, 0, r->u.sample.native,
				      r->u.sample.python);
		} else if (r->kind == ISC_EV_SYSCALL) {
			resolve_block(&recs[i + 1], rest, 0, r->u.syscall.frames,
				      r->u.syscall.py_frames);
		} else if (r->kind == ISC_EV_MEMORY) {
			resolve_block(&recs[i + 1], rest, 0, r->u.memory.frames,
				      r->u.memory.py_frames);
		} else if (r->kind == ISC_EV_STACK && i > 0 && recs[i - 1].kind != ISC_EV_STACK) {
			/* a block with a header word (CUDA calls): frames from word 1 */
			uint64_t h = *word_at(&recs[i], 0);
			if (h >> 48 == ISC_STACK_BLOCK_MAGIC) {
				resolve_block(&recs[i], n - i, 1, (uint16_t)h, (uint16_t)(h >> 16));
			}
		}
	}
}
