/* SPDX-License-Identifier: MIT */
/*
 * The symboliser (preload/samplers/symbolize.c) on its own: a small library compiled
 * here with -g, loaded with dlopen, its functions' addresses looked up. Unstripped, a
 * static function is named from .symtab; stripped, only the exported ones (.dynsym)
 * are, and a static one gets no name of another; with its .symtab moved to a
 * .gnu_debugdata section (xz, the "MiniDebugInfo" of Fedora and Debian) it is named
 * again; a function with no name is still told apart by its start, from the module's
 * unwind table. There is no line table reader: native frames carry function, module and
 * offset, not file and line (docs/trace-format.md), so no line is asserted.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload/samplers/cpu-sampler.h"
#include "isc-test.h"

static const char lib_src[] =
	"static int __attribute__((noinline)) isc_hidden_square(int x) { return x * x + 1; }\n"
	"int isc_visible_twice(int x) { return 2 * isc_hidden_square(x); }\n"
	"void *isc_addr_hidden(void) { return (void *)isc_hidden_square; }\n";

static char dir[4096];

static void setup(void)
{
	char *d = isc_test_tmpdir();
	snprintf(dir, sizeof(dir), "%s", d);
	free(d);
	char path[4200];
	snprintf(path, sizeof(path), "%s/lib.c", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(lib_src, f);
	fclose(f);
}

static void teardown(void)
{
	isc_test_rmrf(dir);
}

TestSuite(symbolize, .init = setup, .fini = teardown, .timeout = 120);

/* Builds lib<name>.so with the shell commands post (run in dir, $L the library). */
static void build(const char *name, const char *post)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && L=lib%s.so && cc -g -O1 -shared -fPIC lib.c -o $L && { %s; }", dir,
		 name, post);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

struct found {
	char hidden[128], visible[128], module[128];
	uint64_t hidden_off, hidden_start, hidden_entry; /* entry: its real start */
};

static struct found look_up(const char *name)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/lib%s.so", dir, name);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h, "%s", dlerror());
	void *(*addr_hidden)(void) = (void *(*)(void))dlsym(h, "isc_addr_hidden");
	void *visible = dlsym(h, "isc_visible_twice");
	cr_assert(addr_hidden && visible);
	isc_symbolize_reset(); /* modules loaded since the last lookup are found */
	struct found r;
	memset(&r, 0, sizeof(r));
	struct isc_symbol s;
	/* a pc inside each function, as a return address is */
	cr_assert(isc_symbolize(NULL, (uint64_t)(uintptr_t)addr_hidden() + 1, &s));
	snprintf(r.hidden, sizeof(r.hidden), "%s", s.function ? s.function : "");
	snprintf(r.module, sizeof(r.module), "%s", s.module ? s.module : "");
	r.hidden_off = s.offset;
	r.hidden_start = s.start;
	Dl_info info;
	cr_assert(dladdr(addr_hidden(), &info));
	r.hidden_entry = (uint64_t)((char *)addr_hidden() - (char *)info.dli_fbase);
	cr_assert(isc_symbolize(NULL, (uint64_t)(uintptr_t)visible + 1, &s));
	snprintf(r.visible, sizeof(r.visible), "%s", s.function ? s.function : "");
	dlclose(h);
	isc_symbolize_reset();
	return r;
}

Test(symbolize, symtab_names_static_and_exported_functions)
{
	build("plain", "true");
	struct found r = look_up("plain");
	cr_assert_str_eq(r.hidden, "isc_hidden_square");
	cr_assert_str_eq(r.visible, "isc_visible_twice");
	cr_assert_str_eq(r.module, "libplain.so");
	cr_assert_gt(r.hidden_off, 0, "an offset into the module");
	cr_assert_eq(r.hidden_start, 0, "a named function needs no start");
}

Test(symbolize, stripped_names_only_what_dynsym_has)
{
	build("stripped", "strip --strip-all $L");
	struct found r = look_up("stripped");
	cr_assert_str_eq(r.visible, "isc_visible_twice");
	cr_assert_str_neq(r.hidden, "isc_hidden_square");
	/* never the name of a neighbour that does not contain the address */
	cr_assert_str_neq(r.hidden, "isc_visible_twice");
	cr_assert_str_neq(r.hidden, "isc_addr_hidden");
	/* unnamed, it is still one function: its start, from the unwind table */
	cr_assert_str_eq(r.hidden, "");
	cr_assert_eq(r.hidden_start, r.hidden_entry, "start 0x%llx, function at 0x%llx",
		     (unsigned long long)r.hidden_start, (unsigned long long)r.hidden_entry);
	cr_assert_eq(r.hidden_off, r.hidden_entry + 1);
}

Test(symbolize, gnu_debugdata_names_static_functions_of_a_stripped_library)
{
	if (system("command -v xz >/dev/null && command -v objcopy >/dev/null") != 0) {
		cr_skip_test("xz or objcopy is not installed: .gnu_debugdata is not built");
	}
	void *lz = dlopen("liblzma.so.5", RTLD_LAZY | RTLD_NOLOAD);
	if (lz == NULL && (lz = dlopen("liblzma.so.5", RTLD_LAZY)) == NULL) {
		cr_skip_test("liblzma.so.5 is not installed: .gnu_debugdata is not read");
	}
	/* MiniDebugInfo as distributions make it: the function symbols alone, xz'd, in a
	 * section of the stripped library. */
	build("mini", "objcopy --only-keep-debug $L full.debug && "
		      "nm full.debug --format=posix --defined-only | "
		      "awk '$2 ~ /[Tt]/ {print $1}' > keep && "
		      "objcopy -S --keep-symbols=keep full.debug mini.debug && "
		      "xz -f mini.debug && strip --strip-all $L && "
		      "objcopy --add-section .gnu_debugdata=mini.debug.xz $L");
	struct found r = look_up("mini");
	cr_assert_str_eq(r.hidden, "isc_hidden_square");
	cr_assert_str_eq(r.visible, "isc_visible_twice");
}
