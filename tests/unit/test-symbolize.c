/* SPDX-License-Identifier: MIT */
/*
 * The symboliser (preload/samplers/symbolize.c) on its own: a small library compiled
 * here with -g, loaded with dlopen, its functions' addresses looked up. Unstripped, a
 * static function is named from .symtab; stripped, only the exported ones (.dynsym)
 * are, and a static one gets no name of another; with its .symtab moved to a
 * .gnu_debugdata section (xz, the "MiniDebugInfo" of Fedora and Debian) it is named
 * again; a function with no name is still told apart by its start, from the module's
 * unwind table. Source lines (preload/samplers/dwarf-lines.c) are checked against
 * llvm-addr2line (else elfutils' eu-addr2line) at every byte of a library's code, for
 * each DWARF version and compiler found, with the sections compressed too. binutils
 * 2.40's addr2line is not the reference: at -O0 with DWARF 5 it names the including
 * file for a header's function, where llvm-addr2line, eu-addr2line and objdump's decoded
 * table agree; eu-addr2line 0.188 names nothing in clang's DWARF 5, where the others do.
 */
#include <criterion/criterion.h>
#include <gnu/libc-version.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload/samplers/cpu-sampler.h"
#include "preload/samplers/decompress.h"
#include "preload/samplers/dwarf-lines.h"
#include "preload/samplers/heap-sort.h"
#include "format/scratch.h"
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

/* A library with loops, an inlined helper and code from a header, for the line tables. */
static const char lines_src[] = "#include \"lines.h\"\n"
				"static inline int isc_step(int x)\n"
				"{\n"
				"\treturn x % 3 == 0 ? x / 3 : 3 * x + 1;\n"
				"}\n"
				"int isc_collatz(int x)\n"
				"{\n"
				"\tint n = 0;\n"
				"\twhile (x > 1) {\n"
				"\t\tx = isc_step(x);\n"
				"\t\tn++;\n"
				"\t}\n"
				"\treturn n + isc_twice(n);\n"
				"}\n"
				"double isc_sum(const double *v, int n)\n"
				"{\n"
				"\tdouble s = 0;\n"
				"\tfor (int i = 0; i < n; i++) {\n"
				"\t\ts += v[i] * isc_twice(i);\n"
				"\t}\n"
				"\treturn s;\n"
				"}\n";

static const char *reference; /* the addr2line the lines are compared with */

/* Builds liblines-TAG.so from lines_src with cc and flags in dir, then runs the shell
 * commands post there ($L the library). */
static void build_lines(const char *tag, const char *cc, const char *flags, const char *post)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && L=liblines-%s.so && "
		 "printf 'static inline int isc_twice(int x) { return 2 * x; }\\n' > lines.h && "
		 "printf '%%s' \"$SRC\" > lines.c && %s %s -shared -fPIC lines.c -o $L && { %s; }",
		 dir, tag, cc, flags, post);
	setenv("SRC", lines_src, 1);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/*
 * Builds liblines-TAG.so with flags, then asks the symboliser and the reference for
 * every byte of its .text: where the reference names a line, ours must name the same
 * file (by base name) and line; where it has none, ours has none either. Returns the
 * number of addresses with a line.
 */
static unsigned lines_agree(const char *tag, const char *cc, const char *flags)
{
	char cmd[8192], path[4200], post[256];
	snprintf(post, sizeof(post),
		 "readelf -SW $L | awk '{for (i = 1; i < NF; i++) if ($i == \".text\") "
		 "print $(i + 2), $(i + 4)}' > text-%s",
		 tag);
	build_lines(tag, cc, flags, post);
	snprintf(path, sizeof(path), "%s/text-%s", dir, tag);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	unsigned long long lo = 0, size = 0;
	cr_assert_eq(fscanf(f, "%llx %llx", &lo, &size), 2);
	fclose(f);
	snprintf(path, sizeof(path), "%s/liblines-%s.so", dir, tag);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h, "%s", dlerror());
	Dl_info info;
	cr_assert(dladdr(dlsym(h, "isc_collatz"), &info));
	isc_symbolize_reset();
	snprintf(path, sizeof(path), "%s/addr-%s", dir, tag);
	FILE *addrs = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/ours-%s", dir, tag);
	FILE *ours = fopen(path, "w");
	cr_assert(addrs && ours);
	for (unsigned long long off = lo; off < lo + size; off++) {
		struct isc_symbol s;
		bool ok = isc_symbolize(NULL, (uint64_t)(uintptr_t)info.dli_fbase + off, &s);
		const char *base = ok && s.file ? strrchr(s.file, '/') : NULL;
		fprintf(addrs, "%#llx\n", off);
		fprintf(ours, "%s %u\n", ok && s.line ? (base ? base + 1 : s.file) : "-",
			ok ? s.line : 0);
	}
	fclose(addrs);
	fclose(ours);
	dlclose(h);
	isc_symbolize_reset();
	/* the reference prints "/dir/lines.c:12", "/dir/lines.c:12:5" (eu-) or "??:0";
	 * reduce each to "base line" or "- 0" */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && %s -e liblines-%s.so < addr-%s | sed -e 's/ (discriminator "
		 "[0-9]*)$//' -e 's/^.*\\///' | "
		 "awk -F: '$2 ~ /^[0-9]+$/ && $2 > 0 {print $1, $2; next} {print \"- 0\"}' "
		 "> theirs-%s && paste -d' ' ours-%s theirs-%s > both-%s",
		 dir, reference, tag, tag, tag, tag, tag, tag);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(path, sizeof(path), "%s/both-%s", dir, tag);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	char a[256], b[256];
	unsigned la, lb, with_line = 0, n = 0;
	while (fscanf(f, "%255s %u %255s %u", a, &la, b, &lb) == 4) {
		n++;
		cr_assert(strcmp(a, b) == 0 && la == lb, "%s: at %#llx ours %s:%u, %s %s:%u", tag,
			  lo + n - 1, a, la, reference, b, lb);
		with_line += lb > 0;
	}
	fclose(f);
	cr_assert_eq(n, size, "%s: %u of %llu addresses compared", tag, n, size);
	return with_line;
}

static void need_reference(void)
{
	static const char *const tools[] = { "llvm-addr2line", "llvm-addr2line-16",
					     "llvm-addr2line-15", "llvm-addr2line-14",
					     "eu-addr2line" };
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null", tools[i]);
		if (system(cmd) == 0) {
			reference = tools[i];
			return;
		}
	}
	cr_skip_test("no llvm-addr2line nor eu-addr2line (elfutils): no reference for lines");
}

Test(symbolize, lines_as_addr2line_gcc)
{
	need_reference();
	unsigned n5 = lines_agree("gcc5", "cc", "-O2 -gdwarf-5");
	unsigned n4 = lines_agree("gcc4", "cc", "-O2 -gdwarf-4");
	unsigned n0 = lines_agree("gcc0", "cc", "-O0 -g");
	cr_assert(n5 > 50 && n4 > 50 && n0 > 50, "addresses with a line: %u, %u, %u", n5, n4, n0);
}

Test(symbolize, lines_as_addr2line_clang)
{
	need_reference();
	if (system("command -v clang >/dev/null") != 0) {
		cr_skip_test("clang is not installed");
	}
	unsigned n5 = lines_agree("clang5", "clang", "-O2 -gdwarf-5");
	unsigned n4 = lines_agree("clang4", "clang", "-O2 -gdwarf-4");
	cr_assert(n5 > 50 && n4 > 50, "addresses with a line: %u, %u", n5, n4);
}

Test(symbolize, lines_of_compressed_debug_sections)
{
	/* what Debian's -dbgsym packages and gcc -gz write: zlib-compressed sections */
	need_reference();
	unsigned n = lines_agree("gz", "cc", "-O2 -g -gz=zlib");
	cr_assert_gt(n, 50, "addresses with a line: %u", n);
}

/* The line table is read from files the reader does not control: every prefix of a real
 * .debug_line, and the table with each byte changed, is read without a fault or a
 * hang, and no answer names a line past the end of the source; the same with its
 * .debug_aranges beside it, each of its bytes changed in turn too. */
Test(symbolize, line_table_damage_is_survived)
{
	char path[4200];
	build_lines("damage", "cc", "-O2 -g",
		    "objcopy --dump-section .debug_line=line.bin "
		    "--dump-section .debug_line_str=line_str.bin "
		    "--dump-section .debug_aranges=aranges.bin $L");
	static uint8_t line[65536], line_str[65536], copy[65536], aranges[4096], acopy[4096];
	const char *names[] = { "line.bin", "line_str.bin", "aranges.bin" };
	uint8_t *bufs[] = { line, line_str, aranges };
	size_t sizes[] = { sizeof(line), sizeof(line_str), sizeof(aranges) }, got[3];
	for (unsigned i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		FILE *f = fopen(path, "rb");
		cr_assert_not_null(f, "%s", path);
		got[i] = fread(bufs[i], 1, sizes[i], f);
		fclose(f);
	}
	size_t n = got[0], ns = got[1], na = got[2];
	cr_assert(n > 64 && n < sizeof(line) && ns > 0 && na >= 48 && na < sizeof(aranges));
	unsigned answered[2] = { 0, 0 };
	for (size_t k = 0; k <= 2 * n; k++) {
		/* k <= n: the first k bytes; beyond, byte k - n - 1 changed */
		size_t len = k <= n ? k : n;
		for (unsigned by_unit = 0; by_unit < 2; by_unit++) {
			memcpy(copy, line, n);
			memcpy(acopy, aranges, na);
			if (k > n) {
				copy[k - n - 1] ^= (uint8_t)(0x5a + k);
				acopy[(k - n - 1) % na] ^= (uint8_t)(0x5a + k) * by_unit;
			}
			struct isc_dwarf_lines d = { .line = copy,
						     .n_line = len,
						     .line_str = line_str,
						     .n_line_str = ns,
						     .aranges = by_unit ? acopy : NULL,
						     .n_aranges = by_unit ? na : 0 };
			for (uint64_t a = 0x1000; a < 0x1200; a += 3) {
				const char *file = NULL;
				unsigned ln = 0;
				if (isc_dwarf_line(&d, a, &file, &ln)) {
					cr_assert_not_null(file);
					answered[by_unit]++;
				}
			}
			isc_dwarf_lines_free(&d);
		}
	}
	cr_assert(answered[0] > 0 && answered[1] > 0, "the undamaged table answers: %u, %u",
		  answered[0], answered[1]);
}

/* ---- lines by unit (.debug_aranges) against the whole index, on real files ---- */

struct image {
	const uint8_t *f;
	size_t size;
	const Elf64_Shdr *sh;
	unsigned n;
	const char *names;
};

static bool open_image(const char *path, struct image *im)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		return false;
	}
	im->size = (size_t)st.st_size;
	im->f = mmap(NULL, im->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	cr_assert_neq(im->f, MAP_FAILED);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->f;
	cr_assert(memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0, "%s", path);
	im->sh = (const Elf64_Shdr *)(im->f + eh->e_shoff);
	im->n = eh->e_shnum;
	im->names = (const char *)im->f + im->sh[eh->e_shstrndx].sh_offset;
	return true;
}

static const Elf64_Shdr *section(const struct image *im, const char *name)
{
	for (unsigned i = 0; i < im->n; i++) {
		if (strcmp(im->names + im->sh[i].sh_name, name) == 0) {
			return &im->sh[i];
		}
	}
	return NULL;
}

/* A section's contents, inflated whole when compressed */
static const uint8_t *contents(const struct image *im, const char *name, size_t *n)
{
	const Elf64_Shdr *s = section(im, name);
	*n = 0;
	if (s == NULL) {
		return NULL;
	}
	*n = s->sh_size;
	if (s->sh_flags & SHF_COMPRESSED) {
		return isc_elf_section_inflate(im->f + s->sh_offset, s->sh_size, n);
	}
	return im->f + s->sh_offset;
}

/* Every step-th address of the image's code looked up in the index by unit (its line
 * table inflated only as far as needed, its .debug_str only if a name is there, where
 * they are compressed) and in the whole index (no aranges): the same answers. Returns how
 * many had a line. */
static unsigned by_unit_agrees(const char *path, uint64_t step)
{
	struct image im;
	cr_assert(open_image(path, &im), "%s", path);
	struct isc_dwarf_lines whole = { 0 }, unit = { 0 };
	whole.line = contents(&im, ".debug_line", &whole.n_line);
	whole.line_str = contents(&im, ".debug_line_str", &whole.n_line_str);
	whole.str = contents(&im, ".debug_str", &whole.n_str);
	cr_assert_not_null(whole.line, "%s: a line table", path);
	unit = whole;
	unit.aranges = contents(&im, ".debug_aranges", &unit.n_aranges);
	cr_assert_not_null(unit.aranges, "%s: .debug_aranges", path);
	const Elf64_Shdr *ls = section(&im, ".debug_line"), *ss = section(&im, ".debug_str");
	if (ss != NULL && (ss->sh_flags & SHF_COMPRESSED)) { /* inflated where a name needs it */
		unit.str = NULL;
		unit.n_str = 0;
		unit.str_z = im.f + ss->sh_offset;
		unit.n_str_z = ss->sh_size;
	}
	if (ls->sh_flags & SHF_COMPRESSED) {
		unit.z = isc_inflate_begin(im.f + ls->sh_offset, ls->sh_size, &unit.n_line_all);
		unit.line = isc_inflate_data(unit.z);
		unit.n_line = 0;
	}
	const Elf64_Shdr *text = section(&im, ".text");
	cr_assert_not_null(text);

	/* the first address with a line from the middle of the code on: one program run
	 * (or two where the first address fell in a unit without one), and a compressed
	 * table inflated only part way */
	uint64_t a = text->sh_addr + text->sh_size / 2;
	const char *file;
	unsigned line;
	/* found in the whole index first: an address in no unit's range (padding) sends
	 * the lookup by unit to the whole index too */
	while (!isc_dwarf_line(&whole, a, &file, &line) && a < text->sh_addr + text->sh_size) {
		a += 64;
	}
	cr_assert(isc_dwarf_line(&unit, a, &file, &line), "%s: a line at %#llx", path,
		  (unsigned long long)a);
	cr_assert(unit.mode == ISC_DL_BY_UNIT && unit.units_run >= 1 && unit.units_run <= 3,
		  "%s: mode %d, %zu programs run for the first line", path, (int)unit.mode,
		  unit.units_run);
	if (unit.z != NULL) {
		cr_assert_lt(unit.n_line, unit.n_line_all, "%s: inflated part way", path);
	}

	unsigned named = 0;
	for (unsigned i = 0; i < im.n; i++) {
		const Elf64_Shdr *s = &im.sh[i];
		if (!(s->sh_flags & SHF_EXECINSTR)) {
			continue;
		}
		for (a = s->sh_addr; a < s->sh_addr + s->sh_size; a += step) {
			const char *fw = NULL, *fu = NULL;
			unsigned lw = 0, lu = 0;
			bool w = isc_dwarf_line(&whole, a, &fw, &lw);
			bool u = isc_dwarf_line(&unit, a, &fu, &lu);
			cr_assert_eq(w, u, "%s at %#lx: whole %d, by unit %d", path,
				     (unsigned long)a, w, u);
			if (w) {
				cr_assert(strcmp(fw, fu) == 0 && lw == lu,
					  "%s at %#lx: %s:%u against %s:%u", path, (unsigned long)a,
					  fw, lw, fu, lu);
				named++;
			}
		}
	}
	cr_assert_eq(whole.mode, ISC_DL_WHOLE);
	isc_dwarf_lines_free(&unit);
	isc_dwarf_lines_free(&whole);
	munmap((void *)im.f, im.size);
	return named;
}

/* This test program itself (gcc -g, uncompressed), and libc from libc6-dbg's detached,
 * compressed debug file where it is installed (it is in the test packages). */
Test(symbolize, lines_by_unit_are_the_whole_index)
{
	unsigned self = by_unit_agrees("/proc/self/exe", 7);
	cr_assert_gt(self, 1000, "addresses with a line: %u", self);
	Dl_info info;
	/* a function only libc defines (ASan's runtime, linked into the sanitized test,
	 * intercepts printf and the like) */
	cr_assert(dladdr((void *)gnu_get_libc_version, &info) && info.dli_fname);
	char cmd[4400], id[64] = "";
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' | awk '/Build ID/ { print $3 }'",
		 info.dli_fname);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	cr_assert_not_null(fgets(id, sizeof(id), p), "libc's build-id");
	pclose(p);
	id[strcspn(id, "\n")] = '\0';
	char path[256];
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	if (access(path, R_OK) != 0) {
		cr_log_warn("%s: no libc6-dbg, libc not compared", path);
		return;
	}
	unsigned libc = by_unit_agrees(path, 29);
	cr_assert_gt(libc, 10000, "addresses with a line: %u", libc);
}

/* ---- the tables' sort ---- */

/* The heapsort as it was written first, swapping an element down level by level: which
 * of several symbols at one address a lookup names depends on the order the sort leaves
 * them in, so a faster sort must leave every element where this one does. */
static void swap_sort(unsigned char *a, size_t n, size_t size)
{
	unsigned char t[64];
	for (size_t pass = 0, k = n; pass < 2; pass++) {
		for (size_t s = pass == 0 ? n / 2 : k; pass == 0 ? s-- > 0 : s-- > 1;) {
			size_t i = pass == 0 ? s : 0, m = pass == 0 ? n : s;
			if (pass == 1) {
				memcpy(t, a, size);
				memcpy(a, a + s * size, size);
				memcpy(a + s * size, t, size);
			}
			for (;;) {
				size_t c = 2 * i + 1;
				if (c >= m) {
					break;
				}
				if (c + 1 < m &&
				    isc_hs_key(a, c + 1, size) > isc_hs_key(a, c, size)) {
					c++;
				}
				if (isc_hs_key(a, i, size) >= isc_hs_key(a, c, size)) {
					break;
				}
				memcpy(t, a + i * size, size);
				memcpy(a + i * size, a + c * size, size);
				memcpy(a + c * size, t, size);
				i = c;
			}
		}
	}
}

Test(symbolize, heap_sort_leaves_ties_where_it_did)
{
	struct el {
		uint64_t key, tag, pad;
	};
	static struct el a[3000], b[3000];
	uint64_t x = 88172645463325252ull;
	for (size_t n = 0; n <= 3000; n += n < 20 ? 1 : 331) {
		for (uint64_t range = 4; range <= 1ull << 40; range <<= 18) {
			for (size_t i = 0; i < n; i++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				a[i] = (struct el){ x % range, i, x };
			}
			memcpy(b, a, n * sizeof(*a));
			isc_heap_sort_u64(a, n, sizeof(*a));
			swap_sort((unsigned char *)b, n, sizeof(*b));
			for (size_t i = 0; i < n; i++) {
				cr_assert(i == 0 || a[i - 1].key <= a[i].key, "sorted, n %zu", n);
				cr_assert(a[i].tag == b[i].tag,
					  "n %zu, keys below %llu: element %zu", n,
					  (unsigned long long)range, i);
			}
		}
	}
}

/* A compressed line table inflated as lookups need it: each byte of the deflate stream
 * changed in turn (an inflate that fails part way, or garbage unit lengths, 64-bit ones
 * included) is read without a fault or a hang. */
Test(symbolize, compressed_line_table_damage_is_survived)
{
	char path[4200], cmd[8192];
	/* 300 functions: a line table that compression shrinks, so that the linker keeps it
	 * compressed; DWARF 4, which names the files in the table itself */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && for i in $(seq 300); do echo \"int f$i(int x) { return x * $i + 1; "
		 "}\"; "
		 "done > big.c && cc -O2 -gdwarf-4 -gz=zlib -shared -fPIC big.c -o libbig.so && "
		 "objcopy --dump-section .debug_line=line.z "
		 "--dump-section .debug_aranges=aranges.bin libbig.so",
		 dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	static uint8_t z[65536], copy[65536], aranges[4096];
	snprintf(path, sizeof(path), "%s/line.z", dir);
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	size_t n = fread(z, 1, sizeof(z), f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/aranges.bin", dir);
	f = fopen(path, "rb");
	cr_assert_not_null(f);
	size_t na = fread(aranges, 1, sizeof(aranges), f);
	fclose(f);
	cr_assert(n > sizeof(Elf64_Chdr) + 16 && n < sizeof(z) && na >= 48);
	unsigned answered = 0, undamaged = 0;
	for (size_t k = 0; k <= n - sizeof(Elf64_Chdr); k++) {
		memcpy(copy, z, n);
		if (k > 0) { /* k = 0: the stream as it is */
			copy[sizeof(Elf64_Chdr) + k - 1] ^= (uint8_t)(0x5a + k);
		}
		struct isc_dwarf_lines d = { .aranges = aranges, .n_aranges = na };
		d.z = isc_inflate_begin(copy, n, &d.n_line_all);
		if (d.z == NULL) {
			continue; /* the zlib header or the section header damaged */
		}
		d.line = isc_inflate_data(d.z);
		for (uint64_t a = 0x1000; a < 0x6000; a += 37) {
			const char *file = NULL;
			unsigned ln = 0;
			if (isc_dwarf_line(&d, a, &file, &ln)) {
				cr_assert_not_null(file);
				answered++;
				undamaged += k == 0;
			}
		}
		isc_unmap((void *)d.line, d.n_line_all);
		isc_dwarf_lines_free(&d);
	}
	cr_assert(undamaged > 0 && answered > undamaged, "answers: %u, undamaged %u", answered,
		  undamaged);
}
