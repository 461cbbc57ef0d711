/* SPDX-License-Identifier: MIT */
/* String interning for the event model: names are ids, stored once. */
#ifndef ISC_STRTAB_H
#define ISC_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct isc_strtab {
	char *pool; /* NUL-terminated strings back to back */
	size_t pool_len, pool_cap;
	uint32_t *off; /* id -> offset in pool */
	uint32_t *len; /* id -> length */
	size_t n, cap;
	uint32_t *slots; /* open addressing: id + 1, 0 = empty */
	size_t mask;
};

int isc_strtab_init(struct isc_strtab *s);
void isc_strtab_finish(struct isc_strtab *s);
/* Returns the id, or UINT32_MAX when memory runs out. */
uint32_t isc_strtab_intern(struct isc_strtab *s, const char *str, size_t n);
uint32_t isc_strtab_find(const struct isc_strtab *s, const char *str, size_t n);
/* Makes id name str from now on (a display form of the same name: demangle.h). The id
 * stays findable by its first text only, so interning str again gives another id.
 * Returns 0, or -1 when memory runs out. */
int isc_strtab_repoint(struct isc_strtab *s, uint32_t id, const char *str, size_t n);

static inline const char *isc_strtab_get(const struct isc_strtab *s, uint32_t id)
{
	return id < s->n ? s->pool + s->off[id] : "";
}

#endif /* ISC_STRTAB_H */
