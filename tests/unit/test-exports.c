/* SPDX-License-Identifier: MIT */
/* The library exports exactly what libinferscope.map lists, and links nothing but
 * libc (plus libdl/libpthread on older glibc). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

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

static char exported[1024][128], listed[1024][128], needed[64][128];

Test(exports, match_the_version_script)
{
	size_t ne = read_lines("nm -D --defined-only " ISC_PRELOAD_PATH " | awk '{print $3}'",
			       exported, 1024);
	/* the global: section of the map, one symbol per line ending in ';' */
	size_t nl = read_lines("sed -n '/global:/,/local:/p' " ISC_MAP_PATH
			       " | grep -o '^[[:space:]]*[A-Za-z_][A-Za-z0-9_]*;' | tr -d ' \\t;'",
			       listed, 1024);
	cr_assert_gt(nl, 5);
	for (size_t i = 0; i < nl; i++) {
		cr_expect(contains(exported, ne, listed[i]), "%s is listed but not exported",
			  listed[i]);
	}
	for (size_t i = 0; i < ne; i++) {
		cr_expect(contains(listed, nl, exported[i]), "%s is exported but not listed",
			  exported[i]);
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
