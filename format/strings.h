/* SPDX-License-Identifier: MIT */
/*
 * The string table as it travels: names are 32-bit ids so that records stay fixed-size,
 * and an id is the byte offset of its entry in the table's arena. The recorder's
 * lock-free table (preload/core/intern.c) lays entries out this way and copies the arena
 * verbatim into the spill file; the converter and the analyzer's spill reader read them
 * back with isc_strings_get().
 */
#ifndef ISC_STRINGS_H
#define ISC_STRINGS_H

#include <stddef.h>
#include <stdint.h>

#define ISC_INTERN_MAX_LEN 1024 /* longer names are truncated */

/* Layout of an entry, shared with the spill reader. */
struct isc_intern_entry {
	uint32_t len_ready; /* length | ISC_INTERN_READY once the bytes are written */
	uint32_t hash;
	char s[]; /* len bytes, NUL, padding to 4 */
};
#define ISC_INTERN_READY 0x80000000u
#define ISC_INTERN_FIRST 8 /* offset of the first entry: id 0 means "no name" */

static inline uint32_t isc_intern_entry_size(uint32_t len)
{
	return (uint32_t)((sizeof(struct isc_intern_entry) + len + 1 + 3) & ~3u);
}

/* The string table rebuilt from the spill: an id is an offset into base. */
struct isc_strings {
	const char *base;
	size_t size;
};

/* Name of a string id, or NULL (unknown id, torn spill). */
const char *isc_strings_get(const struct isc_strings *s, uint32_t id, size_t *len);

#endif /* ISC_STRINGS_H */
