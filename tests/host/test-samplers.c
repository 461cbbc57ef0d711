/* SPDX-License-Identifier: MIT */
/* CPU-time counters, stacks through a dlopen'ed libunwind, NUMA, and what the
 * library links and exports. */
#include <criterion/criterion.h>
#include <elf.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/host/host-test.h"

TestSuite(samplers, .init = host_setup, .fini = host_teardown, .timeout = 60);

/* Largest value of counter `name` for thread tid. */
static double max_counter(yajl_val t, const char *name, long long tid, size_t *n)
{
	double best = -1;
	*n = 0;
	for (size_t i = 0;; i++) {
		yajl_val c = isc_trace_find(t, "counter", name, i);
		if (c == NULL) {
			return best;
		}
		if (isc_trace_int(c, "metadata/thread_id", -1) == tid) {
			double v = isc_trace_num(c, "metadata/value", -1);
			best = v > best ? v : best;
			(*n)++;
		}
	}
}

Test(samplers, cpu_time_tells_computing_from_waiting)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-cputime"), "300", NULL };
	yajl_val t = host_trace(argv, NULL, &r);
	yajl_val spin = host_agg_thread(t, "spinner"), sleep = host_agg_thread(t, "sleeper");
	cr_assert_not_null(spin);
	cr_assert_not_null(sleep);
	size_t ns, nz;
	double busy = max_counter(t, "cpu_time", isc_trace_int(spin, "thread_id", 0), &ns);
	double idle = max_counter(t, "cpu_time", isc_trace_int(sleep, "thread_id", 0), &nz);
	cr_assert_geq(ns, 1, "the spinner is sampled");
	cr_assert_geq(nz, 1, "the sleeper is sampled");
	/* compared with what each thread read of its own CPU time (the kernel's account,
	 * in the same run), never with a wall-clock amount: the sampler invents no CPU
	 * time (its last sample is at most the thread's total, plus the few microseconds
	 * of blocking after the thread read it), and it sees the spinner's 300 ms of
	 * computing where the sleeper has only what its sleep call cost */
	long long spin_ns = 0, sleep_ns = 0;
	cr_assert_eq(sscanf(r.out, "spinner_cpu_ns=%lld sleeper_cpu_ns=%lld", &spin_ns, &sleep_ns),
		     2, "stdout: %s", r.out);
	cr_assert_geq(spin_ns, 300000000LL);
	cr_assert_leq(busy, spin_ns / 1e3 + 1000, "spinner sampled %.0f us, own %lld ns", busy,
		      spin_ns);
	cr_assert_leq(idle, sleep_ns / 1e3 + 1000, "sleeper sampled %.0f us, own %lld ns", idle,
		      sleep_ns);
	cr_assert_gt(busy, sleep_ns / 1e3 + 1000,
		     "spinner sampled %.0f us: more than the sleeper ever used (%lld ns)", busy,
		     sleep_ns);
	/* the label is the name at the write, not at the thread's first record */
	yajl_val renamed = host_agg_thread(t, "main-renamed");
	cr_assert_not_null(renamed, "the main thread's last name");
	cr_assert_eq(isc_trace_int(renamed, "thread_id", 0),
		     isc_trace_int(t, "trace_metadata/pid", -1));
	yajl_val c = isc_trace_find(t, "counter", "cpu_time", 0);
	cr_assert_str_eq(isc_trace_str(c, "metadata/unit"), "us");
	struct stat st;
	if (stat("/proc/self/schedstat", &st) == 0) {
		cr_assert_geq(isc_trace_count(t, "counter", "wait_time"), 1);
	}
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* True when some frame of e's stack starts with fn. */
static bool stack_has(yajl_val e, const char *fn)
{
	yajl_val s = isc_trace_get(e, "metadata/stack");
	for (size_t i = 0; s && YAJL_IS_ARRAY(s) && i < YAJL_GET_ARRAY(s)->len; i++) {
		const char *f = YAJL_GET_STRING(YAJL_GET_ARRAY(s)->values[i]);
		if (f && strncmp(f, fn, strlen(fn)) == 0) {
			return true;
		}
	}
	return false;
}

static void stacks_are_symbolised_with(const char *const env[])
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-alloc"), "large", NULL };
	yajl_val t = host_trace(argv, env, &r);
	yajl_val m = isc_trace_find(t, "memory_event", "malloc", 0);
	cr_assert_not_null(m);
	yajl_val s = isc_trace_get(m, "metadata/stack");
	cr_assert(YAJL_IS_ARRAY(s) && YAJL_GET_ARRAY(s)->len >= 2 && YAJL_GET_ARRAY(s)->len <= 8,
		  "%s", env[1]);
	cr_assert(stack_has(m, "wl_alloc_large+0x"), "innermost frames are the program's: %s",
		  YAJL_GET_STRING(YAJL_GET_ARRAY(s)->values[0]));
	cr_assert(stack_has(m, "main+0x"), "%s", env[1]);
	yajl_tree_free(t);
	isc_run_free(&r);

	const char *argv2[] = { isc_test_workload("wl-syscalls"), "slow", NULL };
	t = host_trace(argv2, env, &r);
	yajl_val ns = isc_trace_find(t, "cpu_syscall", "nanosleep", 0);
	cr_assert_not_null(ns);
	cr_assert(stack_has(ns, "wl_slow_sleep+0x"), "%s", env[1]);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* From the sampler (the default), and walked by the unwind tables with sampling off. */
Test(samplers, stacks_are_symbolised)
{
	const char *sampled[] = { "INFERSCOPE_STACKS=8", "INFERSCOPE_CPU_SAMPLE=100", NULL };
	const char *unsampled[] = { "INFERSCOPE_STACKS=8", "INFERSCOPE_CPU_SAMPLE=0", NULL };
	stacks_are_symbolised_with(sampled);
	stacks_are_symbolised_with(unsampled);
}

/* Without INFERSCOPE_STACKS, no stack as strings; with CPU sampling on (the default)
 * the event refers to an interned stack instead, and with it off it has none. */
Test(samplers, no_stack_strings_by_default)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-alloc"), "large", NULL };
	yajl_val t = host_trace(argv, NULL, &r);
	yajl_val m = isc_trace_find(t, "memory_event", "malloc", 0);
	cr_assert_not_null(m);
	cr_assert_null(isc_trace_get(m, "metadata/stack"));
	long long id = isc_trace_int(m, "stack_id", 0);
	cr_assert_gt(id, 0, "a sampled allocation carries the stack of its call");
	cr_assert_eq(isc_trace_int(m, "metadata/stack_id", 0), id);
	yajl_val stacks = isc_trace_get(t, "stacks/stacks");
	cr_assert(stacks && YAJL_IS_ARRAY(stacks) && (size_t)id <= YAJL_GET_ARRAY(stacks)->len);
	yajl_tree_free(t);
	isc_run_free(&r);
	const char *off[] = { "INFERSCOPE_CPU_SAMPLE=0", NULL };
	t = host_trace(argv, off, &r);
	m = isc_trace_find(t, "memory_event", "malloc", 0);
	cr_assert_not_null(m);
	cr_assert_null(isc_trace_get(m, "metadata/stack"));
	cr_assert_null(isc_trace_get(m, "stack_id"));
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* The dynamic section and symbols of an ELF file, read by hand (no tool needed). */
struct elf_view {
	char *data;
	size_t size;
	const Elf64_Shdr *dynsym, *dynstr, *dynamic;
};

static void elf_open(struct elf_view *v, const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	v->size = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	v->data = malloc(v->size);
	cr_assert_eq(fread(v->data, 1, v->size, f), v->size);
	fclose(f);
	const Elf64_Ehdr *eh = (const void *)v->data;
	cr_assert(memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64);
	const Elf64_Shdr *sh = (const void *)(v->data + eh->e_shoff);
	v->dynsym = v->dynstr = v->dynamic = NULL;
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type == SHT_DYNSYM) {
			v->dynsym = &sh[i];
			v->dynstr = &sh[sh[i].sh_link];
		} else if (sh[i].sh_type == SHT_DYNAMIC) {
			v->dynamic = &sh[i];
		}
	}
	cr_assert(v->dynsym && v->dynamic);
}

static bool elf_needs(const struct elf_view *v, const char *part)
{
	const Elf64_Dyn *d = (const void *)(v->data + v->dynamic->sh_offset);
	const char *str = v->data + v->dynstr->sh_offset;
	for (size_t i = 0; i < v->dynamic->sh_size / sizeof(*d) && d[i].d_tag != DT_NULL; i++) {
		if (d[i].d_tag == DT_NEEDED && strstr(str + d[i].d_un.d_val, part)) {
			return true;
		}
	}
	return false;
}

static bool elf_defines(const struct elf_view *v, const char *name)
{
	const Elf64_Sym *s = (const void *)(v->data + v->dynsym->sh_offset);
	const char *str = v->data + v->dynstr->sh_offset;
	for (size_t i = 0; i < v->dynsym->sh_size / sizeof(*s); i++) {
		if (s[i].st_shndx != SHN_UNDEF && strcmp(str + s[i].st_name, name) == 0) {
			return ELF64_ST_BIND(s[i].st_info) == STB_GLOBAL;
		}
	}
	return false;
}

Test(samplers, libunwind_is_not_a_dependency_and_hooks_are_exported)
{
	struct elf_view v;
	elf_open(&v, isc_test_preload());
	cr_assert(elf_needs(&v, "libc.so"), "the parser works: libc is needed");
	cr_assert_not(elf_needs(&v, "unwind"), "libunwind must only ever be dlopen'ed");
	static const char *const hooks[] = {
		"malloc",
		"free",
		"calloc",
		"realloc",
		"reallocarray",
		"posix_memalign",
		"aligned_alloc",
		"memalign",
		"valloc",
		"pvalloc",
		"mmap",
		"mmap64",
		"munmap",
		"mremap",
		"read",
		"__read_chk",
		"write",
		"pread64",
		"__pread64_chk",
		"pwritev2",
		"recv",
		"__recvfrom_chk",
		"sendmmsg",
		"accept4",
		"connect",
		"open64",
		"__open_2",
		"openat64",
		"__openat64_2",
		"close",
		"fsync",
		"ioctl",
		"poll",
		"__poll_chk",
		"epoll_pwait",
		"clock_nanosleep",
		"pthread_mutex_lock",
		"pthread_cond_wait",
		"sem_clockwait",
		"waitpid",
		"wait4",
		NULL,
	};
	for (int i = 0; hooks[i]; i++) {
		cr_expect(elf_defines(&v, hooks[i]), "%s is not exported", hooks[i]);
	}
	cr_assert_not(elf_defines(&v, "isc_host_attach"), "internals stay hidden");
	free(v.data);
}

static bool file_has(const char *path, const char *text)
{
	char buf[8192];
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		return false;
	}
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, text) != NULL;
}

Test(samplers, numa_where_the_kernel_shows_it)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("wl-alloc"), "large", NULL };
	yajl_val t = host_trace(argv, NULL, &r);
	bool task = file_has("/proc/self/sched", "numa_pages_migrated");
	bool system = file_has("/proc/vmstat", "numa_pages_migrated");
	yajl_val numa = isc_trace_get(t, "trace_metadata/numa");
	cr_assert_eq(numa != NULL, task || system);
	size_t events = isc_trace_count(t, "memory_event", "numa_migration");
	cr_assert_eq(events, task ? 1 : 0);
	if (task) {
		yajl_val e = isc_trace_find(t, "memory_event", "numa_migration", 0);
		cr_assert_geq(isc_trace_int(e, "metadata/numa_pages_migrated", -1), 0);
		cr_assert_eq(isc_trace_num(e, "duration_us", -1), 0, "an instant at the flush");
		cr_assert_geq(isc_trace_num(e, "timestamp_start_us", 0),
			      isc_trace_num(t, "trace_metadata/end_us", 1e30) - 1e6,
			      "at the end of the run");
	}
	yajl_val main_thread = host_agg_thread(t, "wl-alloc");
	cr_assert_not_null(main_thread);
	cr_assert_geq(isc_trace_int(main_thread, "numa_node", -1), 0, "the thread's node");
	yajl_tree_free(t);
	isc_run_free(&r);
}
