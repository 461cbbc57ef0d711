/* SPDX-License-Identifier: MIT */
/* The library exports exactly what libinferscope.map lists, and links nothing but
 * libc (plus libdl/libpthread on older glibc). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "isc-config.h"

static size_t read_lines(const char *cmd, char lines[][128], size_t max)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	cr_assert_not_null(p);
	while (n < max && fgets(lines[n], 128, p)) {
		lines[n][strcspn(lines[n], "\n")] = '\0';
		if (lines[n][0]) {
			n++;
		}
	}
	pclose(p);
	return n;
}

static bool contains(char lines[][128], size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(lines[i], s) == 0) {
			return true;
		}
	}
	return false;
}

#define MAX_SYMS 2048

static char exported[MAX_SYMS][128], listed[MAX_SYMS][128], needed[64][128];
static char nodes[16][128], generated[MAX_SYMS][128];

/* Unversioned exports: exactly the map's list. */
Test(exports, match_the_version_script)
{
	size_t ne = read_lines("nm -D --defined-only " ISC_PRELOAD_PATH
			       " | awk '$2 != \"A\" && $3 !~ /@/ {print $3}'",
			       exported, MAX_SYMS);
	/* the global: section of the map, one symbol per line ending in ';' */
	size_t nl = read_lines("sed -n '/global:/,/local:/p' " ISC_MAP_PATH
			       " | grep -o '^[[:space:]]*[A-Za-z_][A-Za-z0-9_]*;' | tr -d ' \\t;'",
			       listed, MAX_SYMS);
	cr_assert_gt(nl, 5);
	for (size_t i = 0; i < nl; i++) {
		/* CUPTI's injection entry points are built only with the CUDA headers. */
		if (!ISC_HAVE_CUDA && strncmp(listed[i], "InitializeInjection", 19) == 0) {
			continue;
		}
		cr_expect(contains(exported, ne, listed[i]), "%s is listed but not exported",
			  listed[i]);
	}
	for (size_t i = 0; i < ne; i++) {
		cr_expect(contains(listed, nl, exported[i]), "%s is exported but not listed",
			  exported[i]);
	}
}

/* Versioned exports: each CUDA hook (hand-written or generated) under each of the
 * runtime's version nodes, as a hidden version (one '@': dlsym without a version does
 * not see it). */
Test(exports, cuda_hooks_are_hidden_versions)
{
	char cmd[4400];
	if (ISC_CUDA_FUNCTIONS[0] == '\0') {
		size_t n = read_lines("nm -D --defined-only " ISC_PRELOAD_PATH
				      " | awk '$3 ~ /@/ {print $3}'",
				      exported, MAX_SYMS);
		cr_assert_eq(n, 0, "no CUDA: no versioned export");
		return;
	}
	size_t nn = read_lines("nm -D --defined-only " ISC_PRELOAD_PATH
			       " | awk '$2 == \"A\" {print $3}'",
			       nodes, 16);
	cr_assert_geq(nn, 2);
	snprintf(cmd, sizeof(cmd), "awk '{print $1}' %s", ISC_CUDA_FUNCTIONS);
	size_t ng = read_lines(cmd, generated, MAX_SYMS);
	cr_assert_gt(ng, 300);
	size_t ne =
		read_lines("nm -D --defined-only " ISC_PRELOAD_PATH " | awk '$3 ~ /@/ {print $3}'",
			   exported, MAX_SYMS);
	cr_assert_eq(ne, ng * nn, "%zu hooks under %zu versions", ng, nn);
	for (size_t i = 0; i < ne; i++) {
		char *at = strchr(exported[i], '@');
		cr_assert_neq(at[1], '@', "%s is a default version", exported[i]);
		*at = '\0';
		cr_expect(contains(generated, ng, exported[i]), "%s is no CUDA hook", exported[i]);
		cr_expect(contains(nodes, nn, at + 1), "%s: unknown version %s", exported[i],
			  at + 1);
	}
}

Test(exports, no_link_dependencies_beyond_libc)
{
	size_t n = read_lines("readelf -d " ISC_PRELOAD_PATH
			      " | sed -n 's/.*(NEEDED).*\\[\\(.*\\)\\]/\\1/p'",
			      needed, 64);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		cr_expect(strncmp(needed[i], "libc.so", 7) == 0 ||
				  strncmp(needed[i], "libdl.so", 8) == 0 ||
				  strncmp(needed[i], "libpthread.so", 13) == 0 ||
				  strncmp(needed[i], "ld-linux", 8) == 0,
			  "unexpected dependency %s (libunwind, cudart and CUPTI are dlopen'ed)",
			  needed[i]);
	}
}

Test(exports, bind_now_and_static_tls)
{
	char flags[16][128];
	size_t n =
		read_lines("readelf -d " ISC_PRELOAD_PATH " | grep -c 'BIND_NOW\\|NOW'", flags, 16);
	cr_assert(n == 1 && atoi(flags[0]) > 0, "-z now");
}
