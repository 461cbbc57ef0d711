/* SPDX-License-Identifier: MIT */
/*
 * Symbolisation of sampled native frames, once, when the trace is written.
 *
 * Our own ELF reader rather than a library (docs/benchmarks.md has the figures):
 * each module's file is mapped read-only, its .symtab and .dynsym function symbols
 * are sorted once, and an address is a binary search. When a stripped module carries
 * a MiniDebugInfo section (.gnu_debugdata, an xz-compressed ELF with a .symtab, as
 * Fedora's and some Debian builds have), it is decompressed through liblzma
 * (decompress.c: dlopen'ed, never a link dependency, an allocator on mmap). Source lines
 * come from the module's .debug_line (dwarf-lines.c), inflated through libz when the
 * section is compressed (gcc -gz, Debian's -dbgsym files). Build-ids come from
 * the loaded PT_NOTE segments; a module with no .symtab of its own has its detached
 * debug file read too (/usr/lib/debug/.build-id/xx/yyyy.debug). Addresses in no module are looked up in
 * /tmp/perf-<pid>.map, which JITs (V8, LuaJIT, PyPy, CPython 3.12's perf trampoline)
 * write. Names are not demangled. No malloc, no stdio: the writer may run at exit
 * with the heap in any state.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "preload/samplers/cpu-sampler.h"
#include "preload/samplers/decompress.h"
#include "preload/samplers/dwarf-lines.h"
#include "preload/samplers/heap-sort.h"
#include "preload/samplers/unwind-dwarf.h"
#include "format/scratch.h"

#define MAX_MODULES 2048

struct sym {
	uint64_t addr, size;
	const char *name;
};

struct module {
	uint64_t base, lo, hi;	 /* load bias, extent of its PT_LOAD segments */
	uint64_t xlo, xhi, xoff; /* its executable segments: memory, file offset of xlo */
	char path[256];
	const char *base_name;
	char build_id[41];
	bool loaded;
	struct sym *syms;
	size_t n_syms;
	size_t mapped_syms;
	struct isc_dwarf_lines lines;
};

static struct module *mods;
static unsigned n_mods;
static struct sym *jit;
static size_t n_jit, mapped_jit;
static bool jit_loaded;
static char exe[256];

static void sort_syms(struct sym *a, size_t n)
{
	_Static_assert(sizeof(*a) <= 64 && offsetof(struct sym, addr) == 0, "isc_heap_sort_u64");
	isc_heap_sort_u64(a, n, sizeof(*a));
}

static const struct sym *find(const struct sym *a, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid].addr <= addr) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (lo == 0) {
		return NULL;
	}
	const struct sym *s = &a[lo - 1];
	return s->size == 0 || addr < s->addr + s->size ? s : NULL;
}

/* ---- ELF ---- */

static bool in(size_t size, uint64_t off, uint64_t n)
{
	return off <= size && n <= size - off;
}

/* Appends the function symbols of one symbol table section to m->syms. */
static void add_symtab(struct module *m, const unsigned char *f, size_t size, const Elf64_Shdr *sh,
		       const Elf64_Shdr *shs, unsigned shnum)
{
	if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_link >= shnum ||
	    !in(size, sh->sh_offset, sh->sh_size)) {
		return;
	}
	const Elf64_Shdr *strs = &shs[sh->sh_link];
	if (!in(size, strs->sh_offset, strs->sh_size)) {
		return;
	}
	const char *str = (const char *)f + strs->sh_offset;
	size_t n = sh->sh_size / sizeof(Elf64_Sym);
	const Elf64_Sym *s = (const Elf64_Sym *)(f + sh->sh_offset);
	size_t need = (m->n_syms + n) * sizeof(struct sym);
	if (need > m->mapped_syms) {
		size_t bytes = (need + 4095) & ~(size_t)4095;
		struct sym *a = isc_map(bytes);
		if (a == NULL) {
			return;
		}
		if (m->syms) {
			memcpy(a, m->syms, m->n_syms * sizeof(struct sym));
			isc_unmap(m->syms, m->mapped_syms);
		}
		m->syms = a;
		m->mapped_syms = bytes;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned type = ELF64_ST_TYPE(s[i].st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s[i].st_value == 0 ||
		    s[i].st_name >= strs->sh_size) {
			continue;
		}
		m->syms[m->n_syms++] =
			(struct sym){ s[i].st_value, s[i].st_size, str + s[i].st_name };
	}
}

/* Notes where the image's line table and its strings are (inflated when compressed; the
 * line table only as far as lookups need it, dwarf-lines.c). */
static void debug_section(struct module *m, const unsigned char *f, size_t size,
			  const Elf64_Shdr *sh, const Elf64_Shdr *names)
{
	static const char *const want[] = { ".debug_line", ".debug_line_str", ".debug_str",
					    ".debug_aranges" };
	if (sh->sh_type == SHT_NOBITS || !in(size, sh->sh_offset, sh->sh_size) ||
	    !in(size, names->sh_offset, names->sh_size) || sh->sh_name >= names->sh_size) {
		return;
	}
	const char *nm = (const char *)f + names->sh_offset + sh->sh_name;
	size_t left = names->sh_size - sh->sh_name;
	struct isc_dwarf_lines *l = &m->lines;
	for (unsigned k = 0; k < 4; k++) {
		if (strnlen(nm, left) != strlen(want[k]) || strcmp(nm, want[k]) != 0) {
			continue;
		}
		const uint8_t **p[] = { &l->line, &l->line_str, &l->str, &l->aranges };
		size_t *n[] = { &l->n_line, &l->n_line_str, &l->n_str, &l->n_aranges };
		*p[k] = f + sh->sh_offset;
		*n[k] = sh->sh_size;
		l->str_z = k == 2 ? NULL : l->str_z;
		if (!(sh->sh_flags & SHF_COMPRESSED)) {
			continue;
		}
		if (k == 0) {
			l->z = isc_inflate_begin(f + sh->sh_offset, sh->sh_size, &l->n_line_all);
			l->line = l->z ? isc_inflate_data(l->z) : NULL;
			l->n_line = 0;
		} else if (k == 2) {
			l->str_z = f + sh->sh_offset;
			l->n_str_z = sh->sh_size;
			l->str = NULL;
			l->n_str = 0;
		} else {
			*p[k] = isc_elf_section_inflate(f + sh->sh_offset, sh->sh_size, n[k]);
			*n[k] = *p[k] ? *n[k] : 0;
		}
	}
}

/* Adds the function symbols of the ELF image f; true when it had a .symtab. */
static bool read_elf(struct module *m, const unsigned char *f, size_t size, int depth)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in(size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr))) {
		return false;
	}
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
	const Elf64_Shdr *names = eh->e_shstrndx < eh->e_shnum ? &sh[eh->e_shstrndx] : NULL;
	bool symtab = false;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type == SHT_SYMTAB || sh[i].sh_type == SHT_DYNSYM) {
			symtab |= sh[i].sh_type == SHT_SYMTAB;
			add_symtab(m, f, size, &sh[i], sh, eh->e_shnum);
		}
	}
	/* the first image with a line table gives all four sections (a detached debug
	 * file is read only when the module itself has none; nor are an image's ranges
	 * another's) */
	bool lines = m->lines.line == NULL;
	for (unsigned i = 0; names && lines && i < eh->e_shnum; i++) {
		debug_section(m, f, size, &sh[i], names);
	}
	if (m->lines.line == NULL) {
		m->lines.aranges = NULL;
		m->lines.n_aranges = 0;
		m->lines.str_z = NULL;
	}
	for (unsigned i = 0; !symtab && depth == 0 && names && i < eh->e_shnum; i++) {
		const char *nm = (const char *)f + names->sh_offset + sh[i].sh_name;
		if (in(size, names->sh_offset + sh[i].sh_name, 14) &&
		    strcmp(nm, ".gnu_debugdata") == 0 && in(size, sh[i].sh_offset, sh[i].sh_size)) {
			/* the mini ELF stays mapped: its names are used */
			size_t n = 0;
			const uint8_t *mini = isc_unxz(f + sh[i].sh_offset, sh[i].sh_size, &n);
			if (mini != NULL) {
				read_elf(m, mini, n, 1);
			}
			symtab = true;
		}
	}
	return symtab;
}

/* Maps path read-only and reads it (depth as read_elf); false when it is not there. */
static bool map_and_read(struct module *m, const char *path, int depth)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	bool symtab = false;
	if (fd < 0) {
		return false;
	}
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		void *f = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (f != MAP_FAILED) {
			/* stays mapped: the symbol names point into it */
			symtab = read_elf(m, f, (size_t)st.st_size, depth);
		}
	}
	close(fd);
	return symtab;
}

static void load_module(struct module *m)
{
	m->loaded = true;
	/* A stripped module: its detached debug file by build-id, as gdb and elfutils
	 * find it (Debian's -dbg and -dbgsym packages install them there). */
	if (!map_and_read(m, m->path, 0) && strlen(m->build_id) > 2) {
		char path[128], dir[3] = { m->build_id[0], m->build_id[1], '\0' };
		isc_fmt(path, sizeof(path), "/usr/lib/debug/.build-id/%s/%s.debug", dir,
			m->build_id + 2);
		map_and_read(m, path, 1);
	}
	sort_syms(m->syms, m->n_syms);
}

/* ---- modules ---- */

static void hex(char *out, const unsigned char *b, size_t n)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[b[i] >> 4];
		out[2 * i + 1] = d[b[i] & 15];
	}
	out[2 * n] = '\0';
}

static void note_build_id(struct module *m, const unsigned char *p, size_t n)
{
	for (size_t off = 0; off + sizeof(Elf64_Nhdr) <= n;) {
		const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(p + off);
		size_t name = (nh->n_namesz + 3) & ~3u, desc = (nh->n_descsz + 3) & ~3u;
		const unsigned char *d = p + off + sizeof(*nh) + name;
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && nh->n_descsz <= 20 &&
		    off + sizeof(*nh) + name + nh->n_descsz <= n) {
			hex(m->build_id, d, nh->n_descsz);
			return;
		}
		off += sizeof(*nh) + name + desc;
	}
}

static int add_module(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (n_mods >= MAX_MODULES) { /* data: non-NULL in a refresh (known ones skipped) */
		return 1;
	}
	struct module *m = &mods[n_mods];
	memset(m, 0, sizeof(*m));
	m->base = info->dlpi_addr;
	m->lo = UINT64_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD) {
			m->lo = lo < m->lo ? lo : m->lo;
			m->hi = lo + ph->p_memsz > m->hi ? lo + ph->p_memsz : m->hi;
		}
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			/* as the kernel maps it (a page from the file's page), as
			 * /proc/PID/maps and pprof's Mapping say */
			uint64_t page = lo & ~4095ull;
			if (m->xhi == 0 || page < m->xlo) {
				m->xlo = page;
				m->xoff = ph->p_offset & ~4095ull;
			}
			m->xhi = lo + ph->p_memsz > m->xhi ? lo + ph->p_memsz : m->xhi;
		} else if (ph->p_type == PT_NOTE) {
			note_build_id(m, (const unsigned char *)(uintptr_t)lo, ph->p_memsz);
		}
	}
	const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : exe;
	size_t n = strlen(path);
	if (m->hi == 0 || n == 0 || n >= sizeof(m->path)) {
		return 0;
	}
	for (unsigned i = 0; data != NULL && i < n_mods; i++) {
		if (mods[i].base == m->base && strcmp(mods[i].path, path) == 0) {
			return 0; /* a refresh: known already, its symbols loaded */
		}
	}
	memcpy(m->path, path, n + 1);
	const char *slash = strrchr(m->path, '/');
	m->base_name = slash ? slash + 1 : m->path;
	n_mods++;
	return 0;
}

/* The loader's counts of objects loaded and unloaded (the same in every entry). */
static unsigned long long seen_adds, seen_subs;

enum { SAME, LOADED, UNLOADED };

static int loader_counts(struct dl_phdr_info *info, size_t size, void *data)
{
	int *changed = data;
	if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		*changed = UNLOADED; /* a loader without the counts: start again */
		return 1;
	}
	*changed = info->dlpi_subs != seen_subs	  ? UNLOADED
		   : info->dlpi_adds != seen_adds ? LOADED
						  : SAME;
	seen_adds = info->dlpi_adds;
	seen_subs = info->dlpi_subs;
	return 1;
}

static bool modules_ready(void)
{
	if (mods) {
		return true;
	}
	mods = isc_map(MAX_MODULES * sizeof(*mods));
	if (mods == NULL) {
		return false;
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	dl_iterate_phdr(add_module, NULL);
	int changed;
	dl_iterate_phdr(loader_counts, &changed);
	return true;
}

/* ---- JIT maps ---- */

static uint64_t parse_hex(const char **p, const char *end)
{
	uint64_t v = 0;
	while (*p < end && **p == ' ') {
		(*p)++;
	}
	for (; *p < end; (*p)++) {
		char c = **p;
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
						    : 16u;
		if (d == 16) {
			break;
		}
		v = v << 4 | d;
	}
	return v;
}

static void load_jit(void)
{
	char path[64];
	jit_loaded = true;
	isc_fmt(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid()); /* the writer */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0) {
		return;
	}
	char *f =
		fstat(fd, &st) == 0 && st.st_size > 0
			? mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0)
			: MAP_FAILED;
	close(fd);
	if (f == MAP_FAILED) {
		return;
	}
	size_t lines = 1;
	for (off_t i = 0; i < st.st_size; i++) {
		lines += f[i] == '\n';
	}
	mapped_jit = (lines * sizeof(struct sym) + 4095) & ~(size_t)4095;
	jit = isc_map(mapped_jit);
	for (char *p = f, *end = f + st.st_size; jit && p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		nl = nl ? nl : end;
		const char *q = p;
		uint64_t a = parse_hex(&q, nl), sz = parse_hex(&q, nl);
		if (q < nl && *q == ' ') {
			*nl = '\0'; /* the private copy-on-write mapping ends each name */
			jit[n_jit++] = (struct sym){ a, sz, q + 1 };
		}
		p = nl + 1;
	}
	if (jit) {
		sort_syms(jit, n_jit);
	}
}

bool isc_symbolize(void *ctx, uint64_t pc, struct isc_symbol *out)
{
	(void)ctx;
	memset(out, 0, sizeof(*out));
	if (!modules_ready()) {
		return false;
	}
	for (unsigned i = 0; i < n_mods; i++) {
		struct module *m = &mods[i];
		if (pc < m->lo || pc >= m->hi) {
			continue;
		}
		if (!m->loaded) {
			load_module(m);
		}
		uint64_t off = pc - m->base;
		const struct sym *s = find(m->syms, m->n_syms, off);
		out->function = s ? s->name : "";
		if (s == NULL) {
			uint64_t start = isc_cfi_function_start(pc);
			out->start = start > m->base ? start - m->base : 0;
		}
		unsigned line;
		if (isc_dwarf_line(&m->lines, off, &out->file, &line)) {
			out->line = line;
		}
		out->module = m->base_name;
		out->build_id = m->build_id[0] ? m->build_id : NULL;
		out->offset = off;
		out->path = m->path;
		out->map_start = m->xhi ? m->xlo : m->lo;
		out->map_limit = m->xhi ? m->xhi : m->hi;
		out->map_offset = m->xhi ? m->xoff : 0;
		out->base = m->base;
		return true;
	}
	if (!jit_loaded) {
		load_jit();
	}
	const struct sym *s = find(jit, n_jit, pc);
	if (s) {
		out->function = s->name;
		out->module = "[jit]";
		out->offset = pc;
		return true;
	}
	return false;
}

void isc_symbolize_refresh(void)
{
	int changed = SAME;
	if (mods != NULL) {
		dl_iterate_phdr(loader_counts, &changed);
	}
	if (changed == LOADED) {
		/* the new ones only: those read already keep their symbols (our own dlopen
		 * of liblzma or libz to read them is one such) */
		bool refresh = true;
		dl_iterate_phdr(add_module, &refresh);
	} else if (changed == UNLOADED) {
		/* an address range may now be another module's */
		isc_symbolize_reset();
	}
}

void isc_symbolize_reset(void)
{
	/* modules loaded since the last trace are found on the next pass */
	for (unsigned i = 0; mods && i < n_mods; i++) {
		isc_unmap(mods[i].syms, mods[i].mapped_syms);
		isc_dwarf_lines_free(&mods[i].lines);
	}
	isc_unmap(mods, mods ? MAX_MODULES * sizeof(*mods) : 0);
	mods = NULL;
	n_mods = 0;
	isc_unmap(jit, mapped_jit);
	jit = NULL;
	n_jit = 0;
	jit_loaded = false;
}
