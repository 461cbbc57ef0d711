/* SPDX-License-Identifier: MIT */
/*
 * Call stacks on sampled memory events and slow system calls (INFERSCOPE_STACKS=N).
 *
 * With CPU sampling on they come from the sampler (isc_sampler_stack_here: native and
 * Python frames). With it off, native frames only, walked here from the caller's
 * context by the modules' unwind tables (unwind-cfi.c), as the sampler does: no
 * libunwind unless INFERSCOPE_LIBUNWIND=1 asks for it where the tables end (its first
 * use opens a pipe in the program's descriptor table).
 *
 * Frames are raw return addresses; they are symbolised when the trace is written, in
 * the live process (isc_stacks_resolve, through dladdr). dladdr walks a library's
 * symbol table - 17 µs per call in libstdc++ - and a trace repeats the same few
 * thousand return addresses, so names are cached by address (in mmap'd memory: the
 * writer may run in a dying process).
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "common/config.h"
#include "preload/hooks/host/host.h"
#include "common/log.h"
#include "preload/samplers/cpu-sampler.h"

static unsigned depth;

unsigned isc_stacks_depth(void)
{
	return depth;
}

void isc_stacks_init(void)
{
	if (isc_config.stacks == 0) {
		return;
	}
	isc_unwind_init();
	depth = isc_config.stacks < ISC_STACK_MAX ? isc_config.stacks : ISC_STACK_MAX;
}

unsigned isc_stacks_capture(uint64_t *pcs, unsigned max)
{
	uint64_t raw[ISC_STACK_MAX + 16];
	if (depth == 0 || max == 0) {
		return 0;
	}
	max = max < ISC_STACK_MAX ? max : ISC_STACK_MAX;
	struct isc_thread *t = isc_tls_self;
	if (t) {
		t->in_unwind++; /* the CPU sampler stays out of libunwind meanwhile */
	}
	/* room for our own frames (the hook, the recorder), left out by the walk */
	unsigned n = isc_unwind_here(raw, max + 16);
	if (t) {
		t->in_unwind--;
	}
	n = n < max ? n : max;
	memcpy(pcs, raw, n * sizeof(*pcs));
	return n;
}

unsigned isc_stacks_capture_event(uint64_t *words, unsigned max, uint16_t *native, uint16_t *python)
{
	*native = *python = 0;
	struct isc_thread *t = isc_tls_self;
	if (isc_sampler_signal() == 0 || t == NULL) {
		/* sampling off: the opt-in INFERSCOPE_STACKS frames, native only */
		unsigned n = isc_stacks_capture(words, max < depth ? max : depth);
		*native = (uint16_t)n;
		return n;
	}
	/* At most 100 stacks a second per thread: a stack costs tens of microseconds
	 * (libunwind, the Python walk's system calls), so a thread of many slow calls
	 * pays at most a few milliseconds a second. Beyond, events have no stack. */
	if (!isc_sampler_stack_budget(t, 1)) {
		return 0;
	}
	unsigned n = isc_sampler_stack_here(words, max, native, python);
	return isc_stacks_bound(words, n, native, *python);
}

unsigned isc_stacks_bound(uint64_t *words, unsigned n, uint16_t *native, unsigned python)
{
	unsigned cap = isc_config.stacks ? isc_config.stacks : ISC_STACK_MAX;
	if (*native <= cap) {
		return n;
	}
	memmove(words + cap, words + *native, 2u * python * sizeof(*words));
	n -= *native - cap;
	*native = (uint16_t)cap;
	return n;
}

unsigned isc_stacks_block_here(uint64_t *w, unsigned max)
{
	uint16_t native = 0, python = 0;
	unsigned n = 0;
	if (max < ISC_EVENT_STACK_WORDS + 1) {
		return 0;
	}
	if (isc_sampler_signal() != 0 && isc_tls_self != NULL) {
		n = isc_sampler_stack_here(w + 1, ISC_EVENT_STACK_WORDS, &native, &python);
	} else if (depth > 0) {
		n = isc_stacks_capture(w + 1, ISC_STACK_MAX);
		native = (uint16_t)n;
	}
	if (n == 0) {
		return 0;
	}
	w[0] = isc_stack_block_header(native, python);
	return n + 1;
}

void isc_stacks_fill(struct isc_event *recs, uint32_t tid, const uint64_t *pcs, unsigned n)
{
	unsigned nrec = isc_stack_records(n);
	for (unsigned r = 0; r < nrec; r++) {
		unsigned char *b = (unsigned char *)&recs[r];
		memset(b, 0, sizeof(recs[r]));
		recs[r].tid = tid;
		recs[r].kind = ISC_EV_STACK;
		for (unsigned i = 0; i < ISC_STACK_PER_RECORD; i++) {
			unsigned k = r * ISC_STACK_PER_RECORD + i;
			if (k < n) {
				memcpy(b + isc_stack_offset(i), &pcs[k], sizeof(pcs[k]));
			}
		}
	}
}

/* ---- symbolisation ---- */

#define SLOTS (1u << 16) /* distinct return addresses remembered */
#define ARENA (8u << 20) /* bytes of names */
#define PROBES 32
#define UNKNOWN UINT32_MAX /* dladdr knew nothing: remembered too */

struct name_slot {
	uint64_t addr;
	uint32_t off;
	uint32_t len;
};

static struct name_slot *slots;
static char *arena;
static size_t arena_used;
static bool cache_failed;

static bool cache_ready(void)
{
	if (slots || cache_failed) {
		return slots != NULL;
	}
	void *s = mmap(NULL, SLOTS * sizeof(*slots), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *a = mmap(NULL, ARENA, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s == MAP_FAILED || a == MAP_FAILED) {
		cache_failed = true;
		return false;
	}
	slots = s;
	arena = a;
	return true;
}

/* The slot of addr, or the empty slot where it goes; NULL when the probe is full. */
static struct name_slot *slot_of(uint64_t addr)
{
	uint64_t h = addr * 0x9E3779B97F4A7C15ull;
	for (unsigned i = 0; i < PROBES; i++) {
		struct name_slot *s = &slots[((h >> 40) + i) & (SLOTS - 1)];
		if (s->addr == addr || s->addr == 0) {
			return s;
		}
	}
	return NULL;
}

static void remember(struct name_slot *s, uint64_t addr, const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (s == NULL || (name && arena_used + n + 1 > ARENA)) {
		return;
	}
	s->addr = addr;
	s->len = name ? (uint32_t)n : UNKNOWN;
	s->off = (uint32_t)arena_used;
	if (name) {
		memcpy(arena + arena_used, name, n + 1);
		arena_used += n + 1;
	}
}

static const char *lookup(uint64_t addr, char *buf, size_t cap)
{
	Dl_info info;
	/* a return address points after the call; addr - 1 is inside the caller */
	if (addr == 0 || dladdr((void *)(uintptr_t)(addr - 1), &info) == 0 ||
	    info.dli_fname == NULL) {
		return NULL;
	}
	const char *slash = strrchr(info.dli_fname, '/');
	const char *obj = slash ? slash + 1 : info.dli_fname;
	obj = obj[0] ? obj : "[exe]"; /* the main program has no name in the link map */
	if (info.dli_sname) {
		isc_fmt(buf, cap, "%s+0x%lx (%s)", info.dli_sname,
			(unsigned long)(addr - (uintptr_t)info.dli_saddr), obj);
	} else {
		isc_fmt(buf, cap, "%s+0x%lx", obj,
			(unsigned long)(addr - (uintptr_t)info.dli_fbase));
	}
	return buf;
}

const char *isc_stacks_resolve(void *ctx, uint64_t addr, char *buf, size_t cap)
{
	(void)ctx;
	struct name_slot *s = addr && cache_ready() ? slot_of(addr) : NULL;
	if (s && s->addr == addr) {
		return s->len == UNKNOWN ? NULL : arena + s->off;
	}
	const char *name = lookup(addr, buf, cap);
	remember(s, addr, name);
	return name;
}
