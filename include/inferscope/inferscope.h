/* SPDX-License-Identifier: MIT */
/**
 * @file inferscope.h
 * @brief InferScope annotation API: scopes, marks and capture control.
 *
 * Header-only and dependency-free: a program that uses it compiles, links and runs
 * without InferScope. Each function looks up its implementation in
 * libinferscope.so at run time (once, with dlsym(RTLD_DEFAULT)) and does nothing
 * when the library is not preloaded. On glibc older than 2.34 link with -ldl.
 *
 * @code
 *   #include <inferscope/inferscope.h>
 *
 *   inferscope_range_push("tokenize");
 *   tokenize(batch);
 *   inferscope_range_pop();
 *
 *   struct inferscope_kv kv[] = {
 *       INFERSCOPE_KV_I("batch_size", 32),
 *       INFERSCOPE_KV_S("model", "resnet50"),
 *   };
 *   inferscope_mark_kv("batch_done", kv, 2);
 * @endcode
 *
 * Scopes nest per thread and become `cpu_call` events (with `call_depth`,
 * `parent_scope` and `allocations_bytes`); marks become `instant` events. Both are
 * cheap (tens of nanoseconds plus, for a scope name seen for the first time, a copy
 * into the string table).
 */
#ifndef INFERSCOPE_INFERSCOPE_H
#define INFERSCOPE_INFERSCOPE_H

#include <dlfcn.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of the ABI between this header and libinferscope.so. */
#define INFERSCOPE_ABI_VERSION 1

/** Type of a key-value pair's value. */
enum inferscope_kv_type {
	INFERSCOPE_KV_INT = 0,	  /**< value.i */
	INFERSCOPE_KV_DOUBLE = 1, /**< value.d */
	INFERSCOPE_KV_STRING = 2, /**< value.s, copied (at most 255 bytes) */
};

/** One key-value pair of a mark's metadata. */
struct inferscope_kv {
	const char *key; /**< copied into the string table */
	int type;	 /**< enum inferscope_kv_type */
	union {
		long long i;
		double d;
		const char *s;
	} value;
};

/** Initialisers for struct inferscope_kv. */
#define INFERSCOPE_KV_I(k, v)           \
	{                               \
		(k), INFERSCOPE_KV_INT, \
		{                       \
			.i = (v)        \
		}                       \
	}
#define INFERSCOPE_KV_D(k, v)              \
	{                                  \
		(k), INFERSCOPE_KV_DOUBLE, \
		{                          \
			.d = (v)           \
		}                          \
	}
#define INFERSCOPE_KV_S(k, v)              \
	{                                  \
		(k), INFERSCOPE_KV_STRING, \
		{                          \
			.s = (v)           \
		}                          \
	}

/** Where an annotation comes from (the `source` field of the trace). */
enum inferscope_source {
	INFERSCOPE_SOURCE_API = 0,
	INFERSCOPE_SOURCE_PYTHON = 1,
};

/*
 * The ABI libinferscope.so implements. Declared for documentation and for the
 * library itself; the inline functions below never reference them directly, so
 * using this header adds no link dependency.
 */
int inferscope_impl_abi_version(void);
int inferscope_impl_range_push(const char *name, int source);
int inferscope_impl_range_pop(void);
int inferscope_impl_mark(const char *name, const struct inferscope_kv *kv, size_t n, int source);
void inferscope_impl_capture_start(void);
void inferscope_impl_capture_stop(void);
int inferscope_impl_flush(void);

/* Looks a symbol of libinferscope.so up once per call site's translation unit. */
#define INFERSCOPE_RESOLVE_(type, sym)                                                    \
	static __typeof__(type) fn_;                                                      \
	static int resolved_;                                                             \
	if (!__atomic_load_n(&resolved_, __ATOMIC_ACQUIRE)) {                             \
		__atomic_store_n(&fn_, (type)dlsym(RTLD_DEFAULT, sym), __ATOMIC_RELAXED); \
		__atomic_store_n(&resolved_, 1, __ATOMIC_RELEASE);                        \
	}

/**
 * Opens a scope named @p name on the calling thread.
 * @return the new nesting depth (1 for an outermost scope), or -1 when InferScope
 *         is not loaded.
 */
static inline int inferscope_range_push(const char *name)
{
	INFERSCOPE_RESOLVE_(int (*)(const char *, int), "inferscope_impl_range_push")
	return fn_ ? fn_(name, INFERSCOPE_SOURCE_API) : -1;
}

/**
 * Closes the innermost scope of the calling thread.
 * @return the remaining depth, or -1 when no scope is open or InferScope is not loaded.
 */
static inline int inferscope_range_pop(void)
{
	INFERSCOPE_RESOLVE_(int (*)(void), "inferscope_impl_range_pop")
	return fn_ ? fn_() : -1;
}

/**
 * Records an instant event with @p n key-value pairs (at most 16 are kept).
 * @return 0, or -1 when InferScope is not loaded or the event was dropped.
 */
static inline int inferscope_mark_kv(const char *name, const struct inferscope_kv *kv, size_t n)
{
	INFERSCOPE_RESOLVE_(int (*)(const char *, const struct inferscope_kv *, size_t, int),
			    "inferscope_impl_mark")
	return fn_ ? fn_(name, kv, n, INFERSCOPE_SOURCE_API) : -1;
}

/** Records an instant event without metadata. */
static inline int inferscope_mark(const char *name)
{
	return inferscope_mark_kv(name, NULL, 0);
}

/**
 * Resumes recording (after inferscope_capture_stop() or with
 * INFERSCOPE_START_PAUSED=1). The trace lists the capture windows.
 */
static inline void inferscope_capture_start(void)
{
	INFERSCOPE_RESOLVE_(void (*)(void), "inferscope_impl_capture_start")
	if (fn_) {
		fn_();
	}
}

/** Pauses recording: events until the next inferscope_capture_start() are not kept. */
static inline void inferscope_capture_stop(void)
{
	INFERSCOPE_RESOLVE_(void (*)(void), "inferscope_impl_capture_stop")
	if (fn_) {
		fn_();
	}
}

/**
 * Writes a snapshot trace of everything recorded so far
 * (`<stem>.snapshot-<n>.json`) and returns when it is written; recording goes on.
 * @return 0, or a negative errno (-1 when InferScope is not loaded).
 */
static inline int inferscope_flush(void)
{
	INFERSCOPE_RESOLVE_(int (*)(void), "inferscope_impl_flush")
	return fn_ ? fn_() : -1;
}

/** @return 1 when libinferscope.so is loaded and recording is possible, else 0. */
static inline int inferscope_active(void)
{
	INFERSCOPE_RESOLVE_(int (*)(void), "inferscope_impl_abi_version")
	return fn_ ? fn_() == INFERSCOPE_ABI_VERSION : 0;
}

#if defined(__GNUC__) && !defined(__cplusplus)
static inline void inferscope_scope_end_(int *unused)
{
	(void)unused;
	inferscope_range_pop();
}
/** Opens a scope that closes when the enclosing block ends (GNU C). */
#define INFERSCOPE_SCOPE(name)                                                                    \
	int inferscope_scope_##__LINE__ __attribute__((cleanup(inferscope_scope_end_), unused)) = \
		inferscope_range_push(name)
#endif

#ifdef __cplusplus
}
#endif

#endif /* INFERSCOPE_INFERSCOPE_H */
