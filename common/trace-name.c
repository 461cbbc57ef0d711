/* SPDX-License-Identifier: MIT */
#include "common/trace-name.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "common/log.h"

/* Anything by that name, a dangling link included, is taken. */
static int taken(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 || errno != ENOENT;
}

unsigned isc_trace_name_free(const char *path, char *out, size_t cap)
{
	size_t n = strlen(path);
	size_t stem = n > 5 && strcmp(path + n - 5, ".json") == 0 ? n - 5 : n;
	isc_fmt(out, cap, "%s", path);
	unsigned k = 1;
	if (stem + 16 + (n - stem) > cap) {
		return k; /* no room for a number: a name that long is the user's to change */
	}
	while (taken(out) && k < 100000) {
		k++;
		memcpy(out, path, stem);
		isc_fmt(out + stem, cap - stem, "-%u%s", k, path + stem);
	}
	return k;
}
