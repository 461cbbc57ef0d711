/* SPDX-License-Identifier: MIT */
/*
 * A small bounded JSON tree for the parts of a trace that are small by design
 * (trace_metadata, system_info, Kineto's deviceProperties). Built from the same event
 * stream as everything else; a subtree past its node or byte budget is refused, so a
 * hostile "metadata" cannot take unbounded memory.
 */
#ifndef ISC_JDOM_H
#define ISC_JDOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum isc_jtype {
	ISC_J_NULL,
	ISC_J_BOOL,
	ISC_J_INT,
	ISC_J_DOUBLE,
	ISC_J_STRING,
	ISC_J_OBJECT,
	ISC_J_ARRAY
};

#define ISC_JDOM_MAX_NODES (1u << 20)
#define ISC_JDOM_MAX_BYTES (32u << 20)
#define ISC_JDOM_MAX_DEPTH 48

struct isc_jnode {
	uint8_t type;
	uint32_t key;	/* offset of the key in the pool, UINT32_MAX in arrays */
	uint32_t child; /* first child + 1, 0 = none */
	uint32_t next;	/* next sibling + 1 */
	uint32_t last;	/* last child + 1 (while building) */
	union {
		bool b;
		int64_t i;
		double d;
		uint32_t s; /* offset of the string in the pool */
	} v;
};

struct isc_jdom {
	struct isc_jnode *n;
	size_t len, cap;
	char *pool;
	size_t pool_len, pool_cap;
	uint32_t stack[ISC_JDOM_MAX_DEPTH];
	int depth;
	uint32_t pending_key; /* key for the next value, UINT32_MAX when none */
	const char *error;    /* static text when a budget was exceeded */
};

void isc_jdom_init(struct isc_jdom *d);
void isc_jdom_finish(struct isc_jdom *d);
/* Builder; each returns false (with d->error) when a budget is exceeded. */
bool isc_jdom_key(struct isc_jdom *d, const char *k, size_t n);
bool isc_jdom_scalar(struct isc_jdom *d, enum isc_jtype t, int64_t i, double x, const char *s,
		     size_t n);
bool isc_jdom_open(struct isc_jdom *d, enum isc_jtype t);
/* Returns true when the root closed. */
bool isc_jdom_close(struct isc_jdom *d);

/* Queries (node indexes; UINT32_MAX = missing). The root is node 0. */
uint32_t isc_jdom_get(const struct isc_jdom *d, uint32_t obj, const char *key);
uint32_t isc_jdom_first(const struct isc_jdom *d, uint32_t node);
uint32_t isc_jdom_next(const struct isc_jdom *d, uint32_t node);
const char *isc_jdom_keyof(const struct isc_jdom *d, uint32_t node);
int isc_jdom_type(const struct isc_jdom *d, uint32_t node);	   /* -1 when missing */
const char *isc_jdom_str(const struct isc_jdom *d, uint32_t node); /* NULL unless string */
bool isc_jdom_int(const struct isc_jdom *d, uint32_t node, int64_t *out);
bool isc_jdom_num(const struct isc_jdom *d, uint32_t node, double *out);
const char *isc_jtype_name(int t);

#endif /* ISC_JDOM_H */
