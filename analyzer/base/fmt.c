/* SPDX-License-Identifier: MIT */
#include "analyzer/base/fmt.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *isc_fmt_dur(char buf[ISC_FMT_LEN], double ns)
{
	double a = fabs(ns);
	if (a >= 1e9) {
		snprintf(buf, ISC_FMT_LEN, "%.3f s", ns / 1e9);
	} else if (a >= 1e6) {
		snprintf(buf, ISC_FMT_LEN, "%.3f ms", ns / 1e6);
	} else {
		snprintf(buf, ISC_FMT_LEN, "%.1f us", ns / 1e3);
	}
	return buf;
}

const char *isc_fmt_pct(char buf[ISC_FMT_LEN], double fraction)
{
	snprintf(buf, ISC_FMT_LEN, "%.1f %%", fraction * 100.0);
	return buf;
}

const char *isc_fmt_bytes(char buf[ISC_FMT_LEN], double bytes)
{
	if (bytes >= 1e9) {
		snprintf(buf, ISC_FMT_LEN, "%.2f GB", bytes / 1e9);
	} else if (bytes >= 1e6) {
		snprintf(buf, ISC_FMT_LEN, "%.2f MB", bytes / 1e6);
	} else if (bytes >= 1e3) {
		snprintf(buf, ISC_FMT_LEN, "%.2f kB", bytes / 1e3);
	} else {
		snprintf(buf, ISC_FMT_LEN, "%.0f B", bytes);
	}
	return buf;
}

bool isc_parse_bytes(const char *s, size_t *bytes)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno != 0 || !(v >= 0) || *s == '-' || *s == '+') {
		return false;
	}
	static const char units[] = "KMGT";
	const char *u = *end != '\0' ? strchr(units, toupper((unsigned char)*end)) : NULL;
	if (u != NULL) {
		for (const char *k = units; k <= u; k++) {
			v *= 1024.0;
		}
		end++;
		end += strcmp(end, "iB") == 0 ? 2 : 0;
	}
	end += strcmp(end, "B") == 0 ? 1 : 0;
	if (*end != '\0' || v >= 18446744073709551616.0) {
		return false;
	}
	*bytes = (size_t)v;
	return true;
}

bool isc_fmt_append(char *out, size_t cap, const char *s)
{
	size_t at = strnlen(out, cap - 1), n = strlen(s);
	bool whole = at + n < cap;
	if (!whole) {
		n = cap - 1 - at;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) {
			n--; /* s[n], the first byte left out, continues a sequence */
		}
	}
	memcpy(out + at, s, n);
	out[at + n] = '\0';
	return whole;
}
