/* SPDX-License-Identifier: MIT */
#include "analyzer/base/demangle.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*demangle_fn)(const char *name, char *buf, size_t *n, int *status);

/* The C++ runtime's demangler, through dlopen: the analyzer is C and links no C++
 * runtime; a machine without libstdc++ keeps the names as they are. */
static demangle_fn demangler(void)
{
	static demangle_fn fn;
	static bool tried;
	if (!tried) {
		tried = true;
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		fn = h != NULL ? (demangle_fn)(uintptr_t)dlsym(h, "__cxa_demangle") : NULL;
	}
	return fn;
}

/* An Itanium-mangled name: "_Z" and an upper-case letter or N (nested) or a digit
 * (a length). */
static bool mangled(const char *s)
{
	return s[0] == '_' && s[1] == 'Z' &&
	       (s[2] == 'N' || (s[2] >= '0' && s[2] <= '9') || (s[2] >= 'A' && s[2] <= 'Z') ||
		s[2] == 'L');
}

int isc_strtab_demangle(struct isc_strtab *s)
{
	demangle_fn fn = NULL;
	for (size_t id = 1; id < s->n; id++) {
		if (!mangled(s->pool + s->off[id])) {
			continue;
		}
		if (fn == NULL && (fn = demangler()) == NULL) {
			return 0;
		}
		int status = 0;
		char *d = fn(s->pool + s->off[id], NULL, NULL, &status);
		if (status != 0 || d == NULL) {
			free(d);
			continue;
		}
		int r = isc_strtab_repoint(s, (uint32_t)id, d, strlen(d));
		free(d);
		if (r < 0) {
			return -1;
		}
	}
	return 0;
}
