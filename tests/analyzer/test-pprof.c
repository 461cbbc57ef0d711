/* SPDX-License-Identifier: MIT */
/*
 * -f pprof decoded back with the protobuf-c code generated from our profile.proto: the
 * totals are the CPU samples' weights and the kernel time of launches with stacks. Where
 * go is installed, `go tool pprof -top` must read the file too.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "profile.pb-c.h"
#include "analyzer/report/report.h"
#include "analyzer/model/stacks.h"

Test(pprof, decodes_with_the_right_totals)
{
	struct isc_trace *t = load("stacks/stacks-gpu.json");
	struct isc_analysis *a = analyse(t, NULL);
	size_t n;
	uint8_t *buf = pprof_bytes(t, a, &n);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, n, buf);
	cr_assert_not_null(p, "the profile does not decode");
	cr_assert_eq(p->n_sample_type, 2);
	cr_assert_str_eq(p->string_table[0], "");
	cr_assert_str_eq(p->string_table[p->sample_type[0]->type], "cpu");
	cr_assert_str_eq(p->string_table[p->sample_type[0]->unit], "nanoseconds");
	cr_assert_str_eq(p->string_table[p->sample_type[1]->type], "gpu_kernel");
	cr_assert_eq(p->period, 10000000); /* 100 Hz */
	int64_t cpu = 0, gpu = 0, want_cpu = 0, want_gpu = 0;
	for (size_t i = 0; i < p->n_sample; i++) {
		cr_assert_eq(p->sample[i]->n_value, 2);
		cpu += p->sample[i]->value[0];
		gpu += p->sample[i]->value[1];
		for (size_t k = 0; k < p->sample[i]->n_location_id; k++) {
			uint64_t id = p->sample[i]->location_id[k];
			cr_assert(id >= 1 && id <= p->n_location);
			cr_assert_eq(p->location[id - 1]->id, id);
		}
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		struct isc_stack_ref r;
		want_cpu += e->type == ISC_T_CPU_SAMPLE ? (int64_t)e->v.bytes : 0;
		const struct isc_ev *launch =
			e->type == ISC_T_KERNEL ? isc_trace_launch_of(t, e) : NULL;
		want_gpu += launch != NULL && isc_stack_of(t, launch, &r) ? e->dur : 0;
	}
	cr_assert_gt(want_gpu, 0);
	cr_assert_eq(cpu, want_cpu);
	cr_assert_eq(gpu, want_gpu);
	/* The launching stack names forward() in model.py. */
	bool forward = false;
	for (size_t i = 0; i < p->n_function; i++) {
		forward |= strcmp(p->string_table[p->function[i]->name], "forward") == 0 &&
			   strcmp(p->string_table[p->function[i]->filename], "model.py") == 0;
	}
	cr_assert(forward);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	if (system("command -v go >/dev/null 2>&1") == 0) {
		/* the file as the command writes it, gzip and all */
		char path[] = "/tmp/isc-pprof-XXXXXX", cmd[8192], *out = NULL, *err = NULL;
		int fd = mkstemp(path);
		cr_assert_geq(fd, 0);
		close(fd);
		snprintf(cmd, sizeof(cmd), "'%s' -f pprof -o %s '%s' && go tool pprof -top %s",
			 getenv("ISC_ANALYZE"), path, data_path("stacks/stacks-gpu.json"), path);
		cr_assert_eq(run(cmd, &out, &err), 0, "go tool pprof: %s", err);
		unlink(path);
		cr_assert(strstr(out, "THPVariable_cpu") != NULL || strstr(out, "tokenize") != NULL,
			  "%s", out);
		free(out);
		free(err);
	} else {
		cr_log_info("go is not installed: go tool pprof not tried");
	}
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* A native frame with a line table: pprof's function names the source file (the mapping
 * names the binary) and each location its line. */
Test(pprof, native_lines_as_source_file_and_line)
{
	struct isc_trace *t = load("stacks/stacks-lines.json");
	struct isc_analysis *a = analyse(t, NULL);
	size_t n;
	uint8_t *buf = pprof_bytes(t, a, &n);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, n, buf);
	cr_assert_not_null(p);
	unsigned seen = 0;
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Line *ln = p->location[i]->line[0];
		const Perftools__Profiles__Function *fn = p->function[ln->function_id - 1];
		const char *name = p->string_table[fn->name];
		const char *file = p->string_table[fn->filename];
		const char *bin =
			p->string_table[p->mapping[p->location[i]->mapping_id - 1]->filename];
		if (strcmp(name, "crunch") == 0) {
			cr_assert(ln->line == 20 || ln->line == 21 || ln->line == 5, "%lld",
				  (long long)ln->line);
			cr_assert_str_eq(file, ln->line == 5 ? "vec.h" : "hot.c");
			cr_assert_str_eq(bin, "hot");
			seen++;
		}
	}
	cr_assert_eq(seen, 3, "a location for each of crunch's three lines");
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* A trace whose stacks give their modules' mappings (what the recorder writes, also into
 * a flight recorder's segments): pprof's Mapping has the file's path, build id, memory
 * range and file offset, and each location its address in memory (base + offset). */
Test(pprof, mappings_filled_from_the_trace)
{
	struct isc_trace *t = load("stacks/stacks-mapped.json");
	struct isc_analysis *a = analyse(t, NULL);
	size_t n;
	uint8_t *buf = pprof_bytes(t, a, &n);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, n, buf);
	cr_assert_not_null(p);
	cr_assert_eq(p->n_mapping, 2);
	unsigned seen = 0;
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		const Perftools__Profiles__Function *fn = p->function[l->line[0]->function_id - 1];
		cr_assert(l->mapping_id >= 1 && l->mapping_id <= p->n_mapping);
		const Perftools__Profiles__Mapping *m = p->mapping[l->mapping_id - 1];
		cr_assert(l->address >= m->memory_start && l->address < m->memory_limit,
			  "%#llx in its mapping", (unsigned long long)l->address);
		const char *name = p->string_table[fn->name];
		if (strcmp(name, "crunch") == 0) {
			cr_assert_eq(l->address, 0x5554f000u + 0x1210);
			cr_assert_str_eq(p->string_table[m->filename], "/srv/bin/hot");
			cr_assert_str_eq(p->string_table[m->build_id], "4c1d0a");
			cr_assert_eq(m->memory_start, 0x55550000u);
			cr_assert_eq(m->memory_limit, 0x55551400u);
			cr_assert_eq(m->file_offset, 0x1000u);
			seen++;
		} else if (strcmp(name, "__libc_start_main") == 0) {
			cr_assert_str_eq(p->string_table[m->filename],
					 "/lib/x86_64-linux-gnu/libc.so.6");
			cr_assert_eq(m->file_offset, 0x26000u);
			seen++;
		}
	}
	cr_assert_eq(seen, 2);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}
