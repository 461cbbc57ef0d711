/* SPDX-License-Identifier: MIT */
/* Spill file -> trace JSON: the one path every trace takes, and the recovery of a
 * spill that a killed process left (torn, without trailer). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/encode.h"
#include "preload/core/intern.h"
#include "tests/common/isc-test.h"
#include "format/spill.h"
#include "format/convert.h"
#include "format/symbols.h"

static char *dir;
static char spill_path[4200], json_path[4200];

static void setup(void)
{
	dir = isc_test_tmpdir();
	snprintf(spill_path, sizeof(spill_path), "%s/t.spill", dir);
	snprintf(json_path, sizeof(json_path), "%s/t.json", dir);
	cr_assert_eq(isc_intern_init(1 << 20, 1 << 12), 0);
}

static void teardown(void)
{
	isc_test_rmrf(dir);
	free(dir);
}

TestSuite(spill, .init = setup, .fini = teardown);

static struct isc_event scope_rec(uint32_t tid, const char *name, uint64_t id, uint64_t parent,
				  const char *parent_name, uint64_t ts, uint64_t dur)
{
	struct isc_event e;
	memset(&e, 0, sizeof(e));
	e.ts = ts;
	e.dur = dur;
	e.tid = tid;
	e.kind = ISC_EV_SCOPE;
	e.name = isc_intern_cstr(name);
	e.aux = parent ? 1 : 0;
	e.u.scope.scope_id = id;
	e.u.scope.parent_id = parent;
	e.u.scope.parent_name = parent_name ? isc_intern_cstr(parent_name) : 0;
	e.u.scope.cpu = 3;
	e.u.scope.alloc_bytes = 4096;
	return e;
}

/* A spill with metadata, strings and two event blocks. */
static void write_spill(bool truncate_last)
{
	struct isc_spill s;
	static struct isc_event ev[8];
	static const char meta[] = "{\"pid\":42,\"start_us\":1000.000}";
	static const char sys[] = "{\"cpu_count\":2}";
	static struct isc_spill_events h1, h2;
	uint64_t strings_from = ISC_INTERN_FIRST;

	ev[0] = scope_rec(7, "inner", 2, 1, "outer", 1100000, 1000);
	ev[1] = scope_rec(7, "outer", 1, 0, NULL, 1050000, 5000);
	/* a mark with one string pair (one KV record, one TEXT record) */
	memset(&ev[2], 0, 3 * sizeof(ev[0]));
	ev[2].ts = 1200000;
	ev[2].tid = 8;
	ev[2].kind = ISC_EV_INSTANT;
	ev[2].name = isc_intern_cstr("tick");
	ev[2].u.instant.n_kv = 1;
	ev[3].tid = 8;
	ev[3].kind = ISC_EV_KV;
	ev[3].u.kv.key = isc_intern_cstr("model");
	ev[3].u.kv.type = ISC_KV_STRING;
	ev[3].u.kv.v.text_len = 8;
	isc_text_fill(&ev[4], 8, "resnet50", 8);
	h1 = (struct isc_spill_events){ 7, 2 };
	h2 = (struct isc_spill_events){ 8, 3 };

	cr_assert_eq(isc_spill_create(&s, spill_path, 42, 1000000), 0);
	uint64_t pub = isc_intern_published();
	isc_spill_queue(&s, ISC_BLK_META, meta, strlen(meta), NULL, 0);
	isc_spill_queue(&s, ISC_BLK_SYSINFO, sys, strlen(sys), NULL, 0);
	isc_spill_queue(&s, ISC_BLK_STRINGS, &strings_from, 8, isc_intern_arena() + strings_from,
			pub - strings_from);
	isc_spill_queue(&s, ISC_BLK_EVENTS, &h1, sizeof(h1), &ev[0], 2 * sizeof(ev[0]));
	isc_spill_queue(&s, ISC_BLK_EVENTS, &h2, sizeof(h2), &ev[2], 3 * sizeof(ev[0]));
	cr_assert_eq(isc_spill_sync(&s), 0);
	isc_spill_close(&s);
	if (truncate_last) {
		cr_assert_eq(truncate(spill_path, (off_t)(s.size - 100)), 0);
	}
}

static yajl_val convert(const char *trailer, struct isc_convert_result *res)
{
	int in = open(spill_path, O_RDONLY);
	int out = open(json_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	struct isc_convert_opts o = { .trailer_meta = trailer,
				      .trailer_meta_len = trailer ? strlen(trailer) : 0 };
	cr_assert_eq(isc_trace_convert(in, out, &o, res), 0);
	close(in);
	close(out);
	yajl_val t = isc_test_load_json(json_path);
	cr_assert_not_null(t, "the writer's output is JSON");
	return t;
}

Test(spill, roundtrip_with_trailer)
{
	struct isc_convert_result res;
	write_spill(false);
	yajl_val t = convert("{\"end_reason\":\"exit\",\"dropped_events\":{\"total\":0}}", &res);
	cr_assert_eq(res.events, 3);
	cr_assert(!res.recovered);
	cr_assert_str_eq(isc_trace_str(t, "format_version"), "1.0");
	cr_assert_eq(isc_trace_int(t, "trace_metadata/pid", 0), 42);
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/end_reason"), "exit");
	cr_assert(YAJL_IS_TRUE(isc_trace_get(t, "trace_metadata/complete")));
	cr_assert_eq(isc_trace_int(t, "system_info/cpu_count", 0), 2);
	yajl_val inner = isc_trace_find(t, "cpu_call", "inner", 0);
	cr_assert_str_eq(isc_trace_str(inner, "metadata/parent_scope"), "outer");
	cr_assert_eq(isc_trace_num(inner, "timestamp_start_us", 0), 1100.0);
	cr_assert_eq(isc_trace_num(inner, "duration_us", 0), 1.0);
	cr_assert_eq(isc_trace_int(inner, "metadata/allocations_bytes", 0), 4096);
	yajl_val tick = isc_trace_find(t, "instant", "tick", 0);
	cr_assert_str_eq(isc_trace_str(tick, "metadata/user_metadata/model"), "resnet50");
	/* relationships: outer is the parent of inner */
	yajl_val scopes = isc_trace_get(t, "relationships/scopes");
	cr_assert_eq(YAJL_GET_ARRAY(scopes)->len, 2);
	yajl_val outer = YAJL_GET_ARRAY(scopes)->values[1];
	cr_assert_str_eq(isc_trace_str(outer, "name"), "outer");
	yajl_val kids = isc_trace_get(outer, "child_ids");
	cr_assert_eq(YAJL_GET_ARRAY(kids)->len, 1);
	cr_assert_eq(YAJL_GET_INTEGER(YAJL_GET_ARRAY(kids)->values[0]), 2);
	yajl_tree_free(t);
}

Test(spill, recovery_of_a_torn_spill)
{
	struct isc_convert_result res;
	write_spill(true);
	yajl_val t = convert(NULL, &res);
	cr_assert(res.recovered);
	cr_assert(res.torn);
	cr_assert_eq(res.events, 2, "the torn block is left out, the rest is kept");
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/end_reason"), "recovered");
	cr_assert(YAJL_IS_FALSE(isc_trace_get(t, "trace_metadata/complete")));
	cr_assert(YAJL_IS_NULL(isc_trace_get(t, "trace_metadata/dropped_events")));
	yajl_tree_free(t);
}

Test(spill, not_a_spill_file)
{
	int fd = open(spill_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	char junk[256];
	memset(junk, 'x', sizeof(junk));
	cr_assert_eq(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	lseek(fd, 0, SEEK_SET);
	int out = open(json_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_eq(isc_trace_convert(fd, out, NULL, NULL), -EINVAL);
	close(fd);
	close(out);
}

Test(spill, hostile_blocks_do_not_crash)
{
	/* a valid header followed by blocks with absurd sizes and garbage records */
	write_spill(false);
	int fd = open(spill_path, O_RDWR);
	unsigned char garbage[4096];
	for (size_t i = 0; i < sizeof(garbage); i++) {
		garbage[i] = (unsigned char)(i * 2654435761u >> 13);
	}
	cr_assert_eq(pwrite(fd, garbage, sizeof(garbage), 64 + 200), (ssize_t)sizeof(garbage));
	close(fd);
	int in = open(spill_path, O_RDONLY);
	int out = open(json_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	struct isc_convert_result res;
	int r = isc_trace_convert(in, out, NULL, &res);
	close(in);
	close(out);
	cr_assert(r == 0 || r == -ENOMEM);
	yajl_val t = isc_test_load_json(json_path);
	cr_assert_not_null(t, "still valid JSON");
	yajl_tree_free(t);
}

static void query(void *ctx, uint64_t pc)
{
	struct isc_sym_builder *b = ctx;
	static const struct isc_symbol known[] = {
		{ .function = "_ZN3app4workEv",
		  .module = "app",
		  .file = "app.c",
		  .line = 12,
		  .build_id = "abcd",
		  .offset = 0x1233,
		  .path = "/opt/app",
		  .map_start = 0x55000000,
		  .map_limit = 0x55002000,
		  .map_offset = 0x1000,
		  .base = 0x54fff000 },
		{ .function = "main",
		  .module = "app",
		  .offset = 0x1100,
		  .path = "/opt/app",
		  .map_start = 0x55000000,
		  .map_limit = 0x55002000,
		  .map_offset = 0x1000,
		  .base = 0x54fff000 },
	};
	/* the leaf as it is, the return address minus 1 (frame_id's questions) */
	cr_assert(pc == 0x55000233 || pc == 0x55000100 - 1, "asked %#llx", (unsigned long long)pc);
	cr_assert(isc_sym_builder_add(b, pc, &known[pc == 0x55000233 ? 0 : 1]));
}

/*
 * A spill with a SYMBOLS block, converted with no live symboliser (as the analyzer and
 * the watcher convert a flight recorder's segments): the frames are named from the
 * block and the stacks' "mappings" give the module. A malformed block is ignored.
 */
Test(spill, symbols_block_names_the_frames_offline)
{
	static struct isc_event ev[2];
	static const char meta[] = "{\"pid\":42,\"start_us\":1000.000}";
	struct isc_spill_events h = { 9, 2 };
	const uint64_t words[2] = { 0x55000233, 0x55000100 };
	memset(ev, 0, sizeof(ev));
	ev[0] = (struct isc_event){
		.ts = 1100000, .dur = 1000000, .tid = 9, .kind = ISC_EV_CPU_SAMPLE
	};
	ev[0].u.sample.native = 2;
	ev[1].tid = 9;
	ev[1].kind = ISC_EV_STACK;
	for (unsigned k = 0; k < 2; k++) {
		memcpy((char *)&ev[1] + isc_stack_offset(k), &words[k], 8);
	}
	struct isc_sym_builder b;
	isc_sym_builder_init(&b);
	isc_stack_queries(ev, 2, query, &b);
	size_t n = 0;
	const void *block = isc_sym_builder_block(&b, &n);
	cr_assert_not_null(block);
	/* a block whose names point outside its text: skipped whole */
	static unsigned char bad[sizeof(struct isc_sym_head) + sizeof(struct isc_sym_entry) + 8];
	struct isc_sym_head bh = { 0, 1, 8, 0 };
	struct isc_sym_entry be = { .pc = 0x55000233, .function = 4000 };
	memcpy(bad, &bh, sizeof(bh));
	memcpy(bad + sizeof(bh), &be, sizeof(be));

	struct isc_spill s;
	cr_assert_eq(isc_spill_create(&s, spill_path, 42, 1000000), 0);
	isc_spill_queue(&s, ISC_BLK_META, meta, strlen(meta), NULL, 0);
	isc_spill_queue(&s, ISC_BLK_EVENTS, &h, sizeof(h), ev, sizeof(ev));
	isc_spill_queue(&s, ISC_BLK_SYMBOLS, bad, sizeof(bad), NULL, 0);
	isc_spill_queue(&s, ISC_BLK_SYMBOLS, block, n, NULL, 0);
	cr_assert_eq(isc_spill_sync(&s), 0);
	isc_spill_close(&s);
	isc_sym_builder_finish(&b);

	struct isc_convert_result res;
	yajl_val t = convert(NULL, &res);
	cr_assert_eq(isc_trace_count(t, "cpu_sample", NULL), 1);
	yajl_val frames = isc_trace_get(t, "stacks/frames");
	cr_assert(YAJL_IS_ARRAY(frames) && frames->u.array.len == 2);
	const char *want[] = { "_ZN3app4workEv", "main" };
	for (size_t i = 0; i < 2; i++) {
		yajl_val f = frames->u.array.values[i];
		cr_assert_str_eq(isc_trace_str(f, "function"), want[i]);
		cr_assert_str_eq(isc_trace_str(f, "module"), "app");
		cr_assert_eq(isc_trace_int(f, "mapping", 0), 1);
	}
	cr_assert_str_eq(isc_trace_str(frames->u.array.values[0], "file"), "app.c");
	cr_assert_str_eq(isc_trace_str(frames->u.array.values[0], "address"), "0x1233");
	yajl_val maps = isc_trace_get(t, "stacks/mappings");
	cr_assert(YAJL_IS_ARRAY(maps) && maps->u.array.len == 1, "one module");
	yajl_val m = maps->u.array.values[0];
	cr_assert_str_eq(isc_trace_str(m, "path"), "/opt/app");
	cr_assert_str_eq(isc_trace_str(m, "build_id"), "abcd");
	cr_assert_str_eq(isc_trace_str(m, "start"), "0x55000000");
	cr_assert_str_eq(isc_trace_str(m, "limit"), "0x55002000");
	cr_assert_str_eq(isc_trace_str(m, "offset"), "0x1000");
	cr_assert_str_eq(isc_trace_str(m, "base"), "0x54fff000");
	yajl_tree_free(t);
}

Test(spill, utc_formatting)
{
	char b[40];
	isc_format_utc(b, 0);
	cr_assert_str_eq(b, "1970-01-01T00:00:00.000000Z");
	isc_format_utc(b, 1795376418174458123ull);
	cr_assert_str_eq(b, "2026-11-22T19:40:18.174458Z");
	isc_format_utc(b, 951782400000000000ull); /* leap day */
	cr_assert_str_eq(b, "2000-02-29T00:00:00.000000Z");
}
