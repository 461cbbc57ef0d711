/* SPDX-License-Identifier: MIT */
/* Encoders of the kinds the core records: scopes, marks, counters. */
#include "format/encode.h"
#include "format/vocab.h"

static const char *source_name(unsigned s)
{
	static const char *const names[] = { "api", "python", "nvtx", "inferscope" };
	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "api";
}

unsigned isc_encode_scope(struct isc_enc *e, const struct isc_event *r, unsigned avail)
{
	const struct isc_scope_payload *p = &r->u.scope;
	struct isc_json *j = e->j;
	struct isc_scope_rec *s = isc_vec_push(&e->scopes);

	if (s) {
		s->id = p->scope_id;
		s->parent = p->parent_id;
		s->event_index = e->next_id;
		s->name = r->name;
		s->tid = r->tid;
		s->segment = e->segment;
	}
	isc_enc_begin(e, ISC_TYPE_CPU_CALL, r->name, r);
	isc_json_kv_int(j, ISC_KEY_CPU_ID, p->cpu);
	isc_json_kv_uint(j, ISC_KEY_CALL_DEPTH, r->aux & 0xffff);
	isc_json_kv_uint(j, ISC_KEY_SCOPE_ID, p->scope_id);
	if (p->parent_id != 0) {
		isc_enc_kv_name(e, "parent_scope", p->parent_name);
		isc_json_kv_uint(j, ISC_KEY_PARENT_SCOPE_ID, p->parent_id);
	} else {
		isc_json_key(j, ISC_KEY_PARENT_SCOPE);
		isc_json_null(j);
		isc_json_key(j, ISC_KEY_PARENT_SCOPE_ID);
		isc_json_null(j);
	}
	isc_json_kv_uint(j, ISC_KEY_ALLOCATIONS_BYTES, p->alloc_bytes);
	isc_json_kv_string(j, ISC_KEY_SOURCE, source_name(r->aux >> 16));
	if (r->flags & ISC_EVF_UNTERMINATED) {
		isc_json_kv_bool(j, ISC_KEY_UNTERMINATED, true);
	}
	isc_enc_end(e);
	return 1;
}

/* One key-value pair and its text records; returns records consumed or 0 if torn. */
static unsigned encode_kv(struct isc_enc *e, const struct isc_event *kv, unsigned avail)
{
	struct isc_json *j = e->j;
	const struct isc_kv_payload *p = &kv->u.kv;
	size_t n;
	const char *key = isc_strings_get(e->strings, p->key, &n);

	if (kv->kind != ISC_EV_KV) {
		return 0;
	}
	unsigned need = 1 + (p->type == ISC_KV_STRING ? isc_text_records(p->v.text_len) : 0);
	if (need > avail) {
		return 0;
	}
	isc_json_key(j, key ? key : "?");
	switch (p->type) {
	case ISC_KV_INT:
		isc_json_int(j, p->v.i);
		break;
	case ISC_KV_DOUBLE:
		isc_json_double(j, p->v.d, 6);
		break;
	case ISC_KV_STRING: {
		char buf[ISC_INTERN_MAX_LEN];
		size_t len = isc_enc_text(kv + 1, need - 1, p->v.text_len, buf, sizeof(buf));
		isc_json_string_n(j, buf, len);
		break;
	}
	default:
		isc_json_null(j);
	}
	return need;
}

unsigned isc_encode_instant(struct isc_enc *e, const struct isc_event *r, unsigned avail)
{
	const struct isc_instant_payload *p = &r->u.instant;
	struct isc_json *j = e->j;
	unsigned used = 1;

	isc_enc_begin(e, ISC_TYPE_INSTANT, r->name, r);
	isc_json_key(j, ISC_KEY_SCOPE_ID);
	if (p->scope_id) {
		isc_json_uint(j, p->scope_id);
	} else {
		isc_json_null(j);
	}
	isc_json_kv_string(j, ISC_KEY_SOURCE, source_name(p->source));
	isc_json_key(j, ISC_KEY_USER_METADATA);
	isc_json_begin_object(j);
	for (uint32_t i = 0; i < p->n_kv && used < avail; i++) {
		unsigned k = encode_kv(e, r + used, avail - used);
		if (k == 0) {
			e->skipped++;
			break;
		}
		used += k;
	}
	isc_json_end_object(j);
	isc_enc_end(e);
	return used;
}

unsigned isc_encode_counter(struct isc_enc *e, const struct isc_event *r, unsigned avail)
{
	static const char *const units[] = { "us", "bytes", "count" };
	const struct isc_counter_payload *p = &r->u.counter;
	struct isc_json *j = e->j;

	isc_enc_begin(e, ISC_TYPE_COUNTER, r->name, r);
	isc_json_key(j, ISC_KEY_VALUE);
	if (p->is_double) {
		isc_json_double(j, p->value.d, 3);
	} else {
		isc_json_int(j, p->value.i);
	}
	isc_json_kv_string(j, ISC_KEY_UNIT, p->unit < 3 ? units[p->unit] : "count");
	if (r->aux & 1) {
		isc_json_kv_uint(j, ISC_KEY_DEVICE_ID, p->device_id);
	}
	isc_enc_end(e);
	return 1;
}
