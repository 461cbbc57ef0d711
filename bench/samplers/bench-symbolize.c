/* SPDX-License-Identifier: MIT */
/*
 * Symbolisation, our ELF reader (preload/samplers/symbolize.c) against elfutils' libdw
 * (dwfl, dlopen'ed: libdw1 is a runtime package, no headers needed), on the same
 * addresses of the same process.
 *
 *	bench-symbolize N LIB...
 *
 * Loads each LIB with dlopen (e.g. libtorch_cpu.so: the process then looks like a
 * PyTorch one, a few hundred MB of code in ~50 modules), takes N code addresses spread
 * over the executable segments of every module (a fixed seed), and times, each from
 * a cold start: the module list, symbol tables and line tables read, then N lookups of
 * the function and the source line. Prints the time of each, the peak RSS growth, and
 * how often the two name the same function and the same file (base name) and line.
 * libbacktrace is not measured: Debian ships it only inside gcc's own build, not as a
 * library a program can link or load.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "preload/samplers/cpu-sampler.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long rss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static const char *base(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

struct seg {
	uint64_t lo, hi;
};
static struct seg segs[4096];
static unsigned n_segs;
static uint64_t total_text;

static int add_segs(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum && n_segs < 4096; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_memsz > 0) {
			segs[n_segs].lo = info->dlpi_addr + ph->p_vaddr;
			segs[n_segs].hi = segs[n_segs].lo + ph->p_memsz;
			total_text += ph->p_memsz;
			n_segs++;
		}
	}
	return 0;
}

/* libdw's dwfl, declared here: the same layout as <elfutils/libdwfl.h>. */
struct dwfl_callbacks {
	void *find_elf, *find_debuginfo, *section_address;
	char **debuginfo_path;
};
static struct {
	void *(*begin)(const struct dwfl_callbacks *);
	void (*report_begin)(void *);
	int (*proc_report)(void *, pid_t);
	int (*report_end)(void *, void *, void *);
	void *(*addrmodule)(void *, uint64_t);
	const char *(*addrname)(void *, uint64_t);
	void *(*getsrc)(void *, uint64_t);
	const char *(*lineinfo)(void *, uint64_t *, int *, int *, uint64_t *, uint64_t *);
	void (*end)(void *);
} dw;

static bool load_libdw(struct dwfl_callbacks *cb)
{
	void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		return false;
	}
	dw.begin = (void *(*)(const struct dwfl_callbacks *))dlsym(h, "dwfl_begin");
	dw.report_begin = (void (*)(void *))dlsym(h, "dwfl_report_begin");
	dw.proc_report = (int (*)(void *, pid_t))dlsym(h, "dwfl_linux_proc_report");
	dw.report_end = (int (*)(void *, void *, void *))dlsym(h, "dwfl_report_end");
	dw.addrmodule = (void *(*)(void *, uint64_t))dlsym(h, "dwfl_addrmodule");
	dw.addrname = (const char *(*)(void *, uint64_t))dlsym(h, "dwfl_module_addrname");
	dw.getsrc = (void *(*)(void *, uint64_t))dlsym(h, "dwfl_module_getsrc");
	dw.lineinfo = (const char *(*)(void *, uint64_t *, int *, int *, uint64_t *,
				       uint64_t *))dlsym(h, "dwfl_lineinfo");
	dw.end = (void (*)(void *))dlsym(h, "dwfl_end");
	cb->find_elf = dlsym(h, "dwfl_linux_proc_find_elf");
	cb->find_debuginfo = dlsym(h, "dwfl_standard_find_debuginfo");
	return dw.begin && dw.report_begin && dw.proc_report && dw.report_end && dw.addrmodule &&
	       dw.addrname && dw.getsrc && dw.lineinfo && dw.end && cb->find_elf &&
	       cb->find_debuginfo;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s N [LIB...]\n", argv[0]);
		return 2;
	}
	unsigned n = (unsigned)strtoul(argv[1], NULL, 10);
	for (int i = 2; i < argc; i++) {
		if (dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL) == NULL) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
	}
	dl_iterate_phdr(add_segs, NULL);
	uint64_t *pcs = calloc(n, sizeof(*pcs));
	const char **ours = calloc(n, sizeof(*ours));
	const char **ours_file = calloc(n, sizeof(*ours_file));
	unsigned *ours_line = calloc(n, sizeof(*ours_line));
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (unsigned i = 0; i < n; i++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		uint64_t at = rng % total_text;
		for (unsigned k = 0; k < n_segs; k++) {
			uint64_t len = segs[k].hi - segs[k].lo;
			if (at < len) {
				pcs[i] = segs[k].lo + at;
				break;
			}
			at -= len;
		}
	}
	printf("%u modules' code segments, %.1f MB of code, %u addresses\n", n_segs,
	       (double)total_text / 1e6, n);

	long r0 = rss_kb();
	uint64_t t0 = now_ns();
	struct isc_symbol s;
	unsigned named_ours = 0, lined_ours = 0;
	for (unsigned i = 0; i < n; i++) {
		ours[i] = isc_symbolize(NULL, pcs[i], &s) && s.function && s.function[0]
				  ? s.function
				  : NULL;
		named_ours += ours[i] != NULL;
		ours_file[i] = s.line ? s.file : NULL;
		ours_line[i] = s.line;
		lined_ours += s.line != 0;
	}
	uint64_t t1 = now_ns();
	long r1 = rss_kb();
	printf("ours (symbolize.c): %.1f ms for all, %.2f us per address, %u named, %u with a "
	       "line, peak RSS +%ld MB\n",
	       (double)(t1 - t0) / 1e6, (double)(t1 - t0) / 1e3 / n, named_ours, lined_ours,
	       (r1 - r0) / 1024);

	struct dwfl_callbacks cb = { 0 };
	if (!load_libdw(&cb)) {
		printf("libdw: not found (libdw1)\n");
		return 0;
	}
	char *path = NULL;
	cb.debuginfo_path = &path;
	uint64_t t2 = now_ns();
	void *d = dw.begin(&cb);
	dw.report_begin(d);
	dw.proc_report(d, getpid());
	dw.report_end(d, NULL, NULL);
	unsigned named_dw = 0, same = 0, both = 0, shown = 0;
	unsigned lined_dw = 0, lined_both = 0, same_line = 0;
	for (unsigned i = 0; i < n; i++) {
		void *m = dw.addrmodule(d, pcs[i]);
		const char *name = m ? dw.addrname(m, pcs[i]) : NULL;
		void *src = m ? dw.getsrc(m, pcs[i]) : NULL;
		int line = 0;
		const char *file = src ? dw.lineinfo(src, NULL, &line, NULL, NULL, NULL) : NULL;
		lined_dw += file != NULL && line > 0;
		if (file != NULL && line > 0 && ours_line[i] != 0) {
			lined_both++;
			same_line += (unsigned)line == ours_line[i] &&
				     strcmp(base(file), base(ours_file[i])) == 0;
			if (getenv("SHOW") && ((unsigned)line != ours_line[i] ||
					       strcmp(base(file), base(ours_file[i])) != 0)) {
				printf("  %#lx: ours %s:%u, libdw %s:%d\n", (unsigned long)pcs[i],
				       ours_file[i], ours_line[i], file, line);
			}
		}
		named_dw += name != NULL;
		if (getenv("SHOW") && (name == NULL) != (ours[i] == NULL) && shown < 12) {
			Dl_info di;
			shown++;
			dladdr((void *)(uintptr_t)pcs[i], &di);
			printf("  %#lx %s: ours %s, libdw %s (dladdr: %s)\n", (unsigned long)pcs[i],
			       di.dli_fname ? di.dli_fname : "?", ours[i] ? ours[i] : "-",
			       name ? name : "-", di.dli_sname ? di.dli_sname : "-");
		}
		if (name && ours[i]) {
			both++;
			same += strcmp(name, ours[i]) == 0;
			if (getenv("SHOW") && strcmp(name, ours[i]) != 0 && shown < 24) {
				shown++;
				printf("  %#lx: ours %s, libdw %s\n", (unsigned long)pcs[i],
				       ours[i], name);
			}
		}
	}
	uint64_t t3 = now_ns();
	long r3 = rss_kb();
	printf("libdw (dwfl): %.1f ms for all, %.2f us per address, %u named, %u with a line, "
	       "peak RSS +%ld MB\n",
	       (double)(t3 - t2) / 1e6, (double)(t3 - t2) / 1e3 / n, named_dw, lined_dw,
	       (r3 - r1) / 1024);
	printf("named by both: %u, the same name: %u (%.1f %%)\n", both, same,
	       both ? 100.0 * same / both : 0.0);
	printf("a line from both: %u, the same file and line: %u (%.1f %%)\n", lined_both,
	       same_line, lined_both ? 100.0 * same_line / lined_both : 0.0);
	dw.end(d);
	return 0;
}
