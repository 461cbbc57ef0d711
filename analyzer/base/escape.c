/* SPDX-License-Identifier: MIT */
#include "analyzer/base/escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t isc_ctrl_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	if (u[0] < 0x20 || u[0] == 0x7f) {
		return 1;
	}
	return u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f ? 2 : 0;
}

size_t isc_esc_ctrl(char *out, size_t cap, const char *s, char repl)
{
	size_t len = 0;
	while (*s != '\0') {
		size_t c = isc_ctrl_len(s);
		size_t need = c == 0 ? 1 : repl != '\0' ? 1 : 4 * c;
		if (len + need >= cap) {
			break;
		}
		if (c == 0) {
			out[len++] = *s++;
		} else if (repl != '\0') {
			out[len++] = repl;
			s += c;
		} else {
			for (size_t i = 0; i < c; i++, s++) {
				len += (size_t)snprintf(out + len, cap - len, "\\x%02x",
							(unsigned char)*s);
			}
		}
	}
	out[len] = '\0';
	return len;
}

char *isc_esc_ctrl_dup(const char *s)
{
	size_t cap = 4 * strlen(s) + 1;
	char *out = malloc(cap);
	if (out != NULL) {
		isc_esc_ctrl(out, cap, s, '\0');
	}
	return out;
}
