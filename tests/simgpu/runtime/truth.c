/* SPDX-License-Identifier: MIT */
/*
 * Ground truth: every operation the virtual device executed, every API call and
 * every allocation, kept in memory and written as JSON (SIMGPU_TRUTH=path) when
 * the library is unloaded, i.e. after the program's exit handlers (so after a
 * profiler's own flush). Test suites compare a profiler's trace against it;
 * truth/truth-reader.h loads it. The format is described in tests/simgpu/README.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/simgpu/runtime/sim.h"

#define MAX_OPS (4u << 20)
#define MAX_APIS (4u << 20)
#define MAX_MEMS (1u << 20)

struct api_entry {
	const char *name;
	uint32_t cbid;
	uint32_t correlation_id;
	uint32_t thread_id;
	uint8_t domain;
	uint8_t hidden;
	int result;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t wait_from;
	uint64_t wait_to;
};

struct mem_entry {
	const char *what;
	uintptr_t address;
	uint64_t bytes;
	uint64_t time_ns;
	uint32_t thread_id;
	int kind;
	int device;
};

struct vec {
	void *items;
	size_t n;
	size_t cap;
	size_t dropped;
};

static struct vec ops;
static struct vec apis;
static struct vec mems;
static pid_t init_pid;

/* Caller holds the lock. */
static void *push(struct vec *v, size_t size, size_t max)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 1024;
		void *grown;

		if (v->n >= max || !(grown = realloc(v->items, cap * size))) {
			v->dropped++;
			return NULL;
		}
		v->items = grown;
		v->cap = cap;
	}
	return (char *)v->items + size * v->n++;
}

void isc_sim_truth_init(void)
{
	init_pid = getpid();
}

void isc_sim_truth_op(const struct simgpu_op *op)
{
	struct simgpu_op *slot = push(&ops, sizeof(*op), MAX_OPS);

	if (slot) {
		*slot = *op;
	}
}

void isc_sim_truth_api(const struct isc_sim_call *c)
{
	struct api_entry *e;

	if (!isc_sim_cfg.truth_api) {
		return;
	}
	pthread_mutex_lock(&isc_sim_lock);
	e = push(&apis, sizeof(*e), MAX_APIS);
	if (e) {
		e->name = c->api.name;
		e->cbid = c->api.cbid;
		e->correlation_id = c->api.correlation_id;
		e->thread_id = c->api.thread_id;
		e->domain = c->api.domain;
		e->hidden = c->api.hidden;
		e->result = c->api.result;
		e->start_ns = c->api.start_ns;
		e->end_ns = c->api.end_ns;
		e->wait_from = c->wait_from;
		e->wait_to = c->wait_to;
	}
	pthread_mutex_unlock(&isc_sim_lock);
}

void isc_sim_truth_mem(const char *what, const void *ptr, size_t bytes, int kind, int device)
{
	struct mem_entry *e;

	pthread_mutex_lock(&isc_sim_lock);
	e = push(&mems, sizeof(*e), MAX_MEMS);
	if (e) {
		e->what = what;
		e->address = (uintptr_t)ptr;
		e->bytes = bytes;
		e->time_ns = isc_sim_now();
		e->thread_id = isc_sim_tid();
		e->kind = kind;
		e->device = device;
	}
	pthread_mutex_unlock(&isc_sim_lock);
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			fprintf(f, "\\%c", ch);
		} else if (ch < 0x20) {
			fprintf(f, "\\u%04x", ch);
		} else {
			fputc(ch, f);
		}
	}
	fputc('"', f);
}

static const char *copy_kind_name(uint8_t k)
{
	switch (k) {
	case SIMGPU_COPY_HTOD:
		return "HtoD";
	case SIMGPU_COPY_DTOH:
		return "DtoH";
	case SIMGPU_COPY_DTOD:
		return "DtoD";
	case SIMGPU_COPY_HTOH:
		return "HtoH";
	case SIMGPU_COPY_PTOP:
		return "PtoP";
	default:
		return "unknown";
	}
}

static const char *mem_kind_name(int k)
{
	switch (k) {
	case SIMGPU_MEM_PAGEABLE:
		return "pageable";
	case SIMGPU_MEM_PINNED:
		return "pinned";
	case SIMGPU_MEM_DEVICE:
		return "device";
	case SIMGPU_MEM_MANAGED:
		return "managed";
	default:
		return "unknown";
	}
}

static void write_op(FILE *f, const struct simgpu_op *op)
{
	static const char *const types[] = { "unknown", "kernel", "memcpy", "memset" };

	fprintf(f, "{\"type\":\"%s\",\"name\":", types[op->type <= 3 ? op->type : 0]);
	put_string(f, op->name);
	fprintf(f,
		",\"device\":%d,\"stream\":%" PRIu32 ",\"enqueue_ns\":%" PRIu64
		",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"correlation_id\":%" PRIu32
		",\"thread_id\":%" PRIu32 ",\"api\":\"%s\",\"hidden\":%s,\"async\":%s"
		",\"graph_id\":%" PRIu32 ",\"graph_node_id\":%" PRIu64,
		op->device, op->stream_id, op->enqueue_ns, op->start_ns, op->end_ns,
		op->correlation_id, op->thread_id,
		op->api_domain == SIMGPU_DOMAIN_DRIVER ? "driver" : "runtime",
		op->hidden ? "true" : "false", op->async ? "true" : "false", op->graph_id,
		op->graph_node_id);
	if (op->type == SIMGPU_OP_KERNEL) {
		fprintf(f,
			",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"dynamic_smem\":%u"
			",\"static_smem\":%u,\"registers\":%u,\"launch_seq\":%" PRIu64,
			op->grid[0], op->grid[1], op->grid[2], op->block[0], op->block[1],
			op->block[2], op->dynamic_smem, op->static_smem, op->registers,
			op->launch_seq);
	} else if (op->type == SIMGPU_OP_MEMCPY) {
		fprintf(f,
			",\"bytes\":%" PRIu64 ",\"copy_kind\":\"%s\",\"src_kind\":\"%s\""
			",\"dst_kind\":\"%s\",\"peer_device\":%d",
			op->bytes, copy_kind_name(op->copy_kind), mem_kind_name(op->src_kind),
			mem_kind_name(op->dst_kind), op->peer_device);
	} else {
		fprintf(f, ",\"bytes\":%" PRIu64 ",\"value\":%u,\"dst_kind\":\"%s\"", op->bytes,
			op->memset_value, mem_kind_name(op->dst_kind));
	}
	fputc('}', f);
}

static void write_api(FILE *f, const struct api_entry *e)
{
	fputs("{\"name\":", f);
	put_string(f, e->name);
	fprintf(f,
		",\"domain\":\"%s\",\"cbid\":%" PRIu32 ",\"correlation_id\":%" PRIu32
		",\"thread_id\":%" PRIu32 ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
		",\"result\":%d,\"hidden\":%s",
		e->domain == SIMGPU_DOMAIN_DRIVER ? "driver" : "runtime", e->cbid,
		e->correlation_id, e->thread_id, e->start_ns, e->end_ns, e->result,
		e->hidden ? "true" : "false");
	if (e->wait_to) {
		fprintf(f, ",\"blocked_from_ns\":%" PRIu64 ",\"blocked_to_ns\":%" PRIu64,
			e->wait_from, e->wait_to);
	}
	fputc('}', f);
}

static void write_mem(FILE *f, const struct mem_entry *e)
{
	fprintf(f,
		"{\"what\":\"%s\",\"address\":\"0x%" PRIxPTR "\",\"bytes\":%" PRIu64
		",\"kind\":\"%s\",\"device\":%d,\"time_ns\":%" PRIu64 ",\"thread_id\":%" PRIu32 "}",
		e->what, e->address, e->bytes, mem_kind_name(e->kind), e->device, e->time_ns,
		e->thread_id);
}

static void write_header(FILE *f)
{
	const struct isc_sim_config *cfg = &isc_sim_cfg;

	fprintf(f,
		"{\"simgpu_truth\":1,\"pid\":%d,\"clock\":\"CLOCK_MONOTONIC\""
		",\"unit\":\"ns\",\n",
		(int)getpid());
	fprintf(f,
		"\"config\":{\"launch_cost_ns\":%" PRIu64 ",\"launch_latency_ns\":%" PRIu64
		",\"kernel_default_ns\":%" PRIu64 ",\"copy_latency_ns\":%" PRIu64
		",\"bw_h2d_pinned_gbps\":%g,\"bw_h2d_pageable_gbps\":%g,\"bw_d2h_pinned_gbps\":%g"
		",\"bw_d2h_pageable_gbps\":%g,\"bw_d2d_gbps\":%g},\n",
		cfg->launch_cost_ns, cfg->launch_latency_ns, cfg->kernel_default_ns,
		cfg->copy_latency_ns, cfg->bw_h2d_pinned, cfg->bw_h2d_pageable, cfg->bw_d2h_pinned,
		cfg->bw_d2h_pageable, cfg->bw_d2d);
	fputs("\"devices\":[", f);
	for (int i = 0; i < cfg->device_count && !cfg->no_device; i++) {
		fprintf(f, "%s{\"id\":%d,\"name\":", i ? "," : "", i);
		put_string(f, cfg->device_name);
		fputs(",\"sm_count\":132,\"compute_capability\":\"9.0\"}", f);
	}
	fputs("],\n", f);
}

/* Caller holds the lock. */
static void write_all(FILE *f)
{
	size_t i;

	write_header(f);
	fputs("\"ops\":[", f);
	for (i = 0; i < ops.n; i++) {
		fputs(i ? ",\n" : "\n", f);
		write_op(f, &((struct simgpu_op *)ops.items)[i]);
	}
	fputs("],\n\"api\":[", f);
	for (i = 0; i < apis.n; i++) {
		fputs(i ? ",\n" : "\n", f);
		write_api(f, &((struct api_entry *)apis.items)[i]);
	}
	fputs("],\n\"memory\":[", f);
	for (i = 0; i < mems.n; i++) {
		fputs(i ? ",\n" : "\n", f);
		write_mem(f, &((struct mem_entry *)mems.items)[i]);
	}
	fprintf(f, "],\n\"dropped\":{\"ops\":%zu,\"api\":%zu,\"memory\":%zu}}\n", ops.dropped,
		apis.dropped, mems.dropped);
}

SIM_EXPORT int simgpu_truth_write(const char *path)
{
	char tmp[4200];
	FILE *f;
	int err = 0;

	if (!path || !path[0] || strlen(path) > 4096) {
		return -EINVAL;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f) {
		return -errno;
	}
	pthread_mutex_lock(&isc_sim_lock);
	write_all(f);
	pthread_mutex_unlock(&isc_sim_lock);
	if (fclose(f) != 0) {
		err = -errno;
	} else if (rename(tmp, path) != 0) {
		err = -errno;
	}
	if (err) {
		unlink(tmp);
	}
	return err;
}

/* A forked child writes next to its parent's file, never over it. */
__attribute__((destructor)) static void write_at_exit(void)
{
	const char *path = isc_sim_cfg.truth_path;
	char child[4200];
	int err;

	if (!path[0] || !init_pid) {
		return;
	}
	if (getpid() != init_pid) {
		snprintf(child, sizeof(child), "%s.%d", path, (int)getpid());
		path = child;
	}
	err = simgpu_truth_write(path);
	if (err) {
		fprintf(stderr, "simgpu: cannot write the ground truth to %s: %s\n", path,
			strerror(-err));
	}
}

SIM_EXPORT size_t simgpu_op_count(void)
{
	size_t n;

	pthread_mutex_lock(&isc_sim_lock);
	n = ops.n;
	pthread_mutex_unlock(&isc_sim_lock);
	return n;
}

SIM_EXPORT int simgpu_op_get(size_t index, struct simgpu_op *out)
{
	int err = -ERANGE;

	pthread_mutex_lock(&isc_sim_lock);
	if (index < ops.n && out) {
		*out = ((struct simgpu_op *)ops.items)[index];
		err = 0;
	}
	pthread_mutex_unlock(&isc_sim_lock);
	return err;
}
