/* SPDX-License-Identifier: MIT */
#include "analyzer/base/json-number.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

bool isc_num_int(const char *s, size_t n, int64_t *out)
{
	/* Up to 18 digits cannot overflow: no checks on the common path. */
	if (n > 0 && n <= 18 && s[0] != '-') {
		int64_t v = 0;
		for (size_t i = 0; i < n; i++) {
			unsigned d = (unsigned)(s[i] - '0');
			if (d > 9) {
				return false;
			}
			v = v * 10 + d;
		}
		*out = v;
		return true;
	}
	size_t i = 0;
	bool neg = false;
	if (i < n && s[i] == '-') {
		neg = true;
		i++;
	}
	if (i == n) {
		return false;
	}
	uint64_t v = 0;
	for (; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (d > 9) {
			return false;
		}
		if (v > (UINT64_MAX - d) / 10) {
			return false;
		}
		v = v * 10 + d;
	}
	if ((!neg && v > INT64_MAX) || (neg && v > (uint64_t)INT64_MAX + 1)) {
		return false;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

double isc_num_double(const char *s, size_t n)
{
	/* Plain decimals with few digits are exact enough this way and skip strtod. */
	size_t i = s[0] == '-' ? 1 : 0, digits = 0;
	double v = 0, scale = 1;
	bool frac = false;
	for (; i < n && digits < 15; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			v = v * 10 + (s[i] - '0');
			scale = frac ? scale * 10 : scale;
			digits++;
		} else if (s[i] == '.' && !frac) {
			frac = true;
		} else {
			break;
		}
	}
	if (i == n && digits > 0) {
		return (s[0] == '-' ? -v : v) / scale;
	}
	char buf[64];
	if (n >= sizeof(buf)) {
		n = sizeof(buf) - 1;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	return strtod(buf, NULL);
}

/* Slow path for exponents and long fractions: good to the nanosecond below ~10^6 s. */
static bool via_double(const char *s, size_t n, int64_t *out)
{
	double v = isc_num_double(s, n) * 1000.0;
	if (!isfinite(v) || v > 9.2e18 || v < -9.2e18) {
		return false;
	}
	*out = (int64_t)llround(v);
	return true;
}

bool isc_num_us_to_ns(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	bool neg = false;
	if (i < n && s[i] == '-') {
		neg = true;
		i++;
	}
	uint64_t ip = 0;
	size_t digits = 0;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		/* 10^15 us is 31 years: anything longer is not a time on our clocks. */
		if (++digits > 16) {
			return false;
		}
		ip = ip * 10 + (uint64_t)(s[i] - '0');
	}
	if (digits == 0 || ip > (uint64_t)INT64_MAX / 1000 - 1) {
		return i == n ? false : via_double(s, n, out);
	}
	uint64_t frac = 0;
	unsigned fd = 0;
	if (i < n && s[i] == '.') {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
			if (fd < 3) {
				frac = frac * 10 + (uint64_t)(s[i] - '0');
				fd++;
			} else if (fd == 3) {
				/* Round half up on the first dropped digit. */
				frac += s[i] >= '5';
				fd = 4;
			}
		}
	}
	if (i != n) {
		return via_double(s, n, out); /* an exponent */
	}
	static const uint64_t scale[4] = { 1000, 100, 10, 1 };
	uint64_t v = ip * 1000 + frac * scale[fd > 3 ? 3 : fd];
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}
