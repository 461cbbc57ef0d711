/* SPDX-License-Identifier: MIT */
/*
 * Trace writing speed: a spill of N records (scopes, counters, marks with metadata in
 * the proportions a Python inference loop produces) converted to InferScope JSON.
 * Prints events/s and MB/s. Usage: bench-trace-write [EVENTS] [DIR]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "format/encode.h"
#include "preload/core/intern.h"
#include "format/spill.h"
#include "format/convert.h"

#define BLOCK 1023

static void fill(struct isc_event *e, uint64_t i, const uint32_t *names)
{
	memset(e, 0, sizeof(*e));
	e->ts = 1000000000ull + i * 1500;
	e->tid = 1000 + (uint32_t)(i % 4);
	switch (i % 8) {
	case 0:
	case 1:
	case 2:
	case 3:
	case 4: /* scopes */
		e->dur = 1200 + i % 977;
		e->kind = ISC_EV_SCOPE;
		e->name = names[i % 64];
		e->aux = (uint32_t)(i % 3) | (1u << 16);
		e->u.scope.scope_id = i + 1;
		e->u.scope.parent_id = i % 3 ? i : 0;
		e->u.scope.parent_name = names[(i + 1) % 64];
		e->u.scope.cpu = (int32_t)(i % 2);
		e->u.scope.alloc_bytes = i % 5 * 4096;
		break;
	default: /* counters */
		e->kind = ISC_EV_COUNTER;
		e->name = names[64 + i % 2];
		e->u.counter.value.i = (int64_t)(i * 10);
		e->u.counter.unit = ISC_UNIT_US;
		break;
	}
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	char spill_path[4096], out_path[4096], name[32];
	uint32_t names[66];
	static struct isc_event block[BLOCK];
	struct isc_spill s;

	isc_intern_init(1 << 20, 1 << 12);
	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "scope_name_%02d", i);
		names[i] = isc_intern_cstr(name);
	}
	names[64] = isc_intern_cstr("cpu_time");
	names[65] = isc_intern_cstr("live_heap");
	snprintf(spill_path, sizeof(spill_path), "%s/bench-%d.spill", dir, (int)getpid());
	if (argc > 3) {
		snprintf(out_path, sizeof(out_path), "%s", argv[3]);
	} else {
		snprintf(out_path, sizeof(out_path), "%s/bench-%d.json", dir, (int)getpid());
	}
	if (isc_spill_create(&s, spill_path, 1, 1000000000ull) < 0) {
		perror(spill_path);
		return 1;
	}
	static const char meta[] = "{\"pid\":1,\"start_us\":1000000.000}";
	uint64_t from = ISC_INTERN_FIRST, pub = isc_intern_published();
	isc_spill_queue(&s, ISC_BLK_META, meta, strlen(meta), NULL, 0);
	isc_spill_queue(&s, ISC_BLK_STRINGS, &from, 8, isc_intern_arena() + from, pub - from);
	isc_spill_sync(&s);
	for (uint64_t i = 0; i < n; i += BLOCK) {
		struct isc_spill_events h = { 1000, (uint32_t)(n - i < BLOCK ? n - i : BLOCK) };
		for (uint32_t k = 0; k < h.count; k++) {
			fill(&block[k], i + k, names);
		}
		isc_spill_queue(&s, ISC_BLK_EVENTS, &h, sizeof(h), block,
				h.count * sizeof(block[0]));
		isc_spill_sync(&s);
	}
	isc_spill_close(&s);

	int in = open(spill_path, O_RDONLY);
	int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	struct isc_convert_result res;
	static const char trailer[] = "{\"end_reason\":\"exit\"}";
	struct isc_convert_opts o = { .trailer_meta = trailer,
				      .trailer_meta_len = sizeof(trailer) - 1 };
	uint64_t t0 = isc_now();
	int r = isc_trace_convert(in, out, &o, &res);
	uint64_t t1 = isc_now();
	close(in);
	close(out);
	unlink(spill_path);
	if (argc <= 3) {
		unlink(out_path); /* only the file we named ourselves */
	}
	if (r < 0) {
		fprintf(stderr, "convert failed: %s\n", strerror(-r));
		return 1;
	}
	double secs = (double)(t1 - t0) / 1e9;
	printf("trace-write events=%llu seconds=%.3f events_per_s=%.0f MB_per_s=%.1f "
	       "bytes_per_event=%.1f\n",
	       (unsigned long long)res.events, secs, res.events / secs, res.bytes / secs / 1e6,
	       (double)res.bytes / res.events);
	return 0;
}
