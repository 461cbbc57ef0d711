/* SPDX-License-Identifier: MIT */
/*
 * NVTX: the ranges and marks frameworks already emit (torch.cuda.nvtx, Megatron,
 * TensorRT...). The NVTX v3 headers in the application load the library named by
 * NVTX_INJECTION64_PATH (the constructor points it at us) on the first NVTX call and
 * call InitializeInjectionNvtx2, where we fill the slots of the core and domain
 * modules.
 *
 * Push/pop ranges become scopes of the annotation API (api.c): the same per-thread
 * stack, so an NVTX range nests with inferscope_scope() and Python helper scopes, and
 * marks become instant events inside them. Start/end ranges may end on another
 * thread: they wait in a small table and are written as outermost scopes of the
 * thread that started them; those still open at a flush are written unterminated.
 * NVTX keeps one push/pop stack per domain; we keep one per thread, which differs
 * only when a program interleaves the ranges of two domains out of order.
 */
#define NVTX_NO_IMPL /* the types only: no NVTX implementation in this library */
#include <inferscope/inferscope.h>
#include <nvtx3/nvToolsExt.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <wchar.h>

#include "preload/core/buffer.h"
#include "preload/core/capture.h"
#include "common/clock.h"
#include "common/config.h"
#include "preload/hooks/cuda/cuda-family.h"
#include "preload/core/ids.h"
#include "preload/core/intern.h"
#include "preload/core/export.h"

#define NAME_MAX_BYTES 1024
#define RANGES 4096u
#define BUSY 1ull /* a slot being filled; real ids are larger */

struct open_range {
	_Atomic uint64_t id;
	uint64_t start;
	uint64_t alloc_at_start;
	uint32_t name;
	uint32_t tid;
	int32_t cpu;
	uint32_t recorded;
};

static struct open_range ranges[RANGES];
/* A range was ever started: the flush walks the table (160 KiB, untouched pages of .bss
 * until then) only then, not in every process that never calls NVTX. */
static _Atomic bool any_range;

/* ---- messages ---- */

/* UTF-32 (wchar_t on Linux) to UTF-8; returns bytes written. */
static size_t wide_to_utf8(const wchar_t *w, char *out, size_t cap)
{
	size_t n = 0;
	for (; w && *w && n + 4 < cap; w++) {
		uint32_t c = (uint32_t)*w;
		if (c < 0x80) {
			out[n++] = (char)c;
		} else if (c < 0x800) {
			out[n++] = (char)(0xc0 | c >> 6);
			out[n++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			out[n++] = (char)(0xe0 | c >> 12);
			out[n++] = (char)(0x80 | (c >> 6 & 0x3f));
			out[n++] = (char)(0x80 | (c & 0x3f));
		} else {
			out[n++] = (char)(0xf0 | (c >> 18 & 0x07));
			out[n++] = (char)(0x80 | (c >> 12 & 0x3f));
			out[n++] = (char)(0x80 | (c >> 6 & 0x3f));
			out[n++] = (char)(0x80 | (c & 0x3f));
		}
	}
	out[n] = '\0';
	return n;
}

/* The message of an attribute structure, as a C string (buf holds converted text). */
static const char *message(const nvtxEventAttributes_t *a, char *buf, size_t cap)
{
	if (a == NULL || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message)) {
		return "";
	}
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return a->message.ascii ? a->message.ascii : "";
	case NVTX_MESSAGE_TYPE_UNICODE:
		wide_to_utf8(a->message.unicode, buf, cap);
		return buf;
	case NVTX_MESSAGE_TYPE_REGISTERED: {
		const char *s = isc_intern_get((uint32_t)(uintptr_t)a->message.registered, NULL);
		return s ? s : "";
	}
	default:
		return "";
	}
}

/* ---- push/pop and marks: the annotation API's stack ---- */

static int push_a(const char *m)
{
	return inferscope_impl_range_push(m ? m : "", ISC_SRC_NVTX) - 1;
}

static int push_w(const wchar_t *m)
{
	char buf[NAME_MAX_BYTES];
	wide_to_utf8(m, buf, sizeof(buf));
	return push_a(buf);
}

static int push_ex(const nvtxEventAttributes_t *a)
{
	char buf[NAME_MAX_BYTES];
	return push_a(message(a, buf, sizeof(buf)));
}

static int pop(void)
{
	return inferscope_impl_range_pop();
}

static void mark_a(const char *m)
{
	inferscope_impl_mark(m ? m : "", NULL, 0, ISC_SRC_NVTX);
}

static void mark_w(const wchar_t *m)
{
	char buf[NAME_MAX_BYTES];
	wide_to_utf8(m, buf, sizeof(buf));
	mark_a(buf);
}

static void mark_ex(const nvtxEventAttributes_t *a)
{
	char buf[NAME_MAX_BYTES];
	mark_a(message(a, buf, sizeof(buf)));
}

/* ---- start/end ranges ---- */

static nvtxRangeId_t start_named(const char *m)
{
	if (!isc_core_ready()) {
		return 0;
	}
	isc_tls_guard++;
	struct isc_thread *t = isc_thread_self();
	uint64_t id = isc_next_id();
	if (!atomic_load_explicit(&any_range, memory_order_relaxed)) {
		atomic_store_explicit(&any_range, true, memory_order_relaxed);
	}
	for (uint32_t probe = 0; t && probe < 64; probe++) {
		struct open_range *r = &ranges[(id + probe) & (RANGES - 1)];
		uint64_t expected = 0;
		if (atomic_compare_exchange_strong(&r->id, &expected, BUSY)) {
			r->start = isc_now();
			r->alloc_at_start = t->alloc_bytes;
			r->name = isc_intern_cstr(m ? m : "");
			r->tid = t->tid;
			r->cpu = sched_getcpu();
			r->recorded = isc_capturing(r->start);
			atomic_store_explicit(&r->id, id, memory_order_release);
			break;
		}
	}
	isc_tls_guard--;
	return id; /* a full table: the end finds nothing and records nothing */
}

/* Writes a start/end range as a scope of the thread that started it. */
static void write_range(const struct open_range *r, uint64_t id, uint64_t end, bool open)
{
	struct isc_thread *self = isc_thread_self();
	struct isc_event *e = self ? isc_event_reserve(ISC_EV_SCOPE, 1) : NULL;
	if (e == NULL) {
		return;
	}
	e->ts = r->start;
	e->dur = end > r->start ? end - r->start : 0;
	e->tid = r->tid;
	e->kind = ISC_EV_SCOPE;
	e->flags = open ? ISC_EVF_UNTERMINATED : 0;
	e->name = r->name;
	e->aux = (uint32_t)ISC_SRC_NVTX << 16;
	e->u.scope.scope_id = id;
	e->u.scope.parent_id = 0;
	e->u.scope.parent_name = 0;
	e->u.scope.cpu = r->cpu;
	e->u.scope.alloc_bytes = self->tid == r->tid ? self->alloc_bytes - r->alloc_at_start : 0;
	isc_event_commit(1);
}

static void end_range(nvtxRangeId_t id)
{
	uint64_t now = isc_now();
	if (id <= BUSY || !isc_core_ready()) {
		return;
	}
	for (uint32_t probe = 0; probe < 64; probe++) {
		struct open_range *r = &ranges[(id + probe) & (RANGES - 1)];
		if (atomic_load_explicit(&r->id, memory_order_acquire) != id) {
			continue;
		}
		isc_tls_guard++;
		if (r->recorded || isc_capturing(now)) {
			write_range(r, id, now, false);
		}
		atomic_store_explicit(&r->id, 0, memory_order_release);
		isc_tls_guard--;
		return;
	}
}

static nvtxRangeId_t start_w(const wchar_t *m)
{
	char buf[NAME_MAX_BYTES];
	wide_to_utf8(m, buf, sizeof(buf));
	return start_named(buf);
}

static nvtxRangeId_t start_ex(const nvtxEventAttributes_t *a)
{
	char buf[NAME_MAX_BYTES];
	return start_named(message(a, buf, sizeof(buf)));
}

/* Ranges still open when the trace is written: up to the flush, flagged. */
void isc_hooks_nvtx_flush(void)
{
	if (!atomic_load_explicit(&any_range, memory_order_acquire)) {
		return;
	}
	uint64_t now = isc_now();
	for (uint32_t i = 0; i < RANGES; i++) {
		uint64_t id = atomic_load_explicit(&ranges[i].id, memory_order_acquire);
		if (id > BUSY && ranges[i].recorded) {
			write_range(&ranges[i], id, now, true);
		}
	}
}

/* ---- domains (module CORE2): same ranges, the domain is not kept ---- */

static void d_mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	(void)d;
	mark_ex(a);
}

static nvtxRangeId_t d_start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	(void)d;
	return start_ex(a);
}

static void d_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	(void)d;
	end_range(id);
}

static int d_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	(void)d;
	return push_ex(a);
}

static int d_pop(nvtxDomainHandle_t d)
{
	(void)d;
	return pop();
}

/* Handles are interned string ids: never NULL, and a registered string's id is the
 * name a record carries. */
static nvtxStringHandle_t d_register_a(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	return (nvtxStringHandle_t)(uintptr_t)isc_intern_cstr(s ? s : "");
}

static nvtxStringHandle_t d_register_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	char buf[NAME_MAX_BYTES];
	wide_to_utf8(s, buf, sizeof(buf));
	return d_register_a(d, buf);
}

static nvtxDomainHandle_t d_create_a(const char *name)
{
	uint32_t id = isc_intern_cstr(name ? name : "");
	return (nvtxDomainHandle_t)(uintptr_t)(id ? id : 1);
}

static nvtxDomainHandle_t d_create_w(const wchar_t *name)
{
	char buf[NAME_MAX_BYTES];
	wide_to_utf8(name, buf, sizeof(buf));
	return d_create_a(buf);
}

static void d_destroy(nvtxDomainHandle_t d)
{
	(void)d;
}

/* ---- injection ---- */

struct slot_fill {
	unsigned id;
	NvtxFunctionPointer fn;
};

static int fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
		const struct slot_fill *slots, size_t n)
{
	NvtxFunctionTable table = NULL;
	unsigned size = 0;
	if (!cb->GetModuleFunctionTable(module, &table, &size) || table == NULL) {
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (slots[i].id < size && table[slots[i].id]) {
			*table[slots[i].id] = slots[i].fn;
		}
	}
	return 1;
}

#define FN(f) ((NvtxFunctionPointer)(void *)(f))

/* Called by the NVTX v3 headers of the application (NVTX_INJECTION64_PATH). */
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);

ISC_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
	static const struct slot_fill core[] = {
		{ NVTX_CBID_CORE_MarkEx, FN(mark_ex) },
		{ NVTX_CBID_CORE_MarkA, FN(mark_a) },
		{ NVTX_CBID_CORE_MarkW, FN(mark_w) },
		{ NVTX_CBID_CORE_RangeStartEx, FN(start_ex) },
		{ NVTX_CBID_CORE_RangeStartA, FN(start_named) },
		{ NVTX_CBID_CORE_RangeStartW, FN(start_w) },
		{ NVTX_CBID_CORE_RangeEnd, FN(end_range) },
		{ NVTX_CBID_CORE_RangePushEx, FN(push_ex) },
		{ NVTX_CBID_CORE_RangePushA, FN(push_a) },
		{ NVTX_CBID_CORE_RangePushW, FN(push_w) },
		{ NVTX_CBID_CORE_RangePop, FN(pop) },
	};
	static const struct slot_fill core2[] = {
		{ NVTX_CBID_CORE2_DomainMarkEx, FN(d_mark) },
		{ NVTX_CBID_CORE2_DomainRangeStartEx, FN(d_start) },
		{ NVTX_CBID_CORE2_DomainRangeEnd, FN(d_end) },
		{ NVTX_CBID_CORE2_DomainRangePushEx, FN(d_push) },
		{ NVTX_CBID_CORE2_DomainRangePop, FN(d_pop) },
		{ NVTX_CBID_CORE2_DomainRegisterStringA, FN(d_register_a) },
		{ NVTX_CBID_CORE2_DomainRegisterStringW, FN(d_register_w) },
		{ NVTX_CBID_CORE2_DomainCreateA, FN(d_create_a) },
		{ NVTX_CBID_CORE2_DomainCreateW, FN(d_create_w) },
		{ NVTX_CBID_CORE2_DomainDestroy, FN(d_destroy) },
	};
	if (get_export_table == NULL || !isc_core_ready() || !isc_config.nvtx) {
		return 0; /* NVTX turns every call into a no-op */
	}
	const NvtxExportTableCallbacks *cb = get_export_table(NVTX_ETID_CALLBACKS);
	if (cb == NULL || cb->struct_size < sizeof(*cb) || cb->GetModuleFunctionTable == NULL) {
		return 0;
	}
	int ok = fill(cb, NVTX_CB_MODULE_CORE, core, sizeof(core) / sizeof(core[0]));
	fill(cb, NVTX_CB_MODULE_CORE2, core2, sizeof(core2) / sizeof(core2[0]));
	return ok;
}

void isc_hooks_nvtx_init(void)
{
	if (isc_config.nvtx) {
		isc_cuda_set_injection_var("NVTX_INJECTION64_PATH");
	}
}
