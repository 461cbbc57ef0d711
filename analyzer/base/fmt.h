/* SPDX-License-Identifier: MIT */
/* Human-readable numbers for reports and evidence lines: fixed formats, deterministic. */
#ifndef ISC_FMT_H
#define ISC_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ISC_FMT_LEN 32

/* "12.345 ms", "850.0 us", "1.234 s": the unit that keeps 3-4 significant digits. */
const char *isc_fmt_dur(char buf[ISC_FMT_LEN], double ns);
/* "12.3 %" of a fraction. */
const char *isc_fmt_pct(char buf[ISC_FMT_LEN], double fraction);
/* "1.5 MB" / "512 B" (powers of 10). */
const char *isc_fmt_bytes(char buf[ISC_FMT_LEN], double bytes);
/* A size a person writes: "512", "64K", "1.5G", "8GiB" (K, M, G, T: powers of 1024,
 * optionally followed by "B" or "iB"). False when s is not one or overflows. */
bool isc_parse_bytes(const char *s, size_t *bytes);
/* Appends s to the string in out (cap bytes in all, cap > 0), cut where it does not fit
 * before the first UTF-8 sequence that would not fit whole. False when s was cut. */
bool isc_fmt_append(char *out, size_t cap, const char *s);

#endif /* ISC_FMT_H */
