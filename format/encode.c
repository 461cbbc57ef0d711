/* SPDX-License-Identifier: MIT */
#include "format/encode.h"
#include "format/vocab.h"

#include <string.h>

const char *isc_strings_get(const struct isc_strings *s, uint32_t id, size_t *len)
{
	/* entries are 4-aligned: any other id comes from a corrupt spill */
	if (id < ISC_INTERN_FIRST || id % 4 != 0 ||
	    (size_t)id + sizeof(struct isc_intern_entry) > s->size) {
		return NULL;
	}
	const struct isc_intern_entry *e = (const void *)(s->base + id);
	if (!(e->len_ready & ISC_INTERN_READY)) {
		return NULL;
	}
	uint32_t n = e->len_ready & ~ISC_INTERN_READY;
	if ((size_t)id + sizeof(*e) + n > s->size) {
		return NULL;
	}
	if (len) {
		*len = n;
	}
	return e->s;
}

void isc_enc_begin_named(struct isc_enc *e, const char *type, const char *name, size_t n,
			 const struct isc_event *r)
{
	struct isc_json *j = e->j;
	isc_json_begin_object(j);
	isc_json_kv_uint(j, ISC_KEY_ID, e->next_id++);
	isc_json_kv_string(j, ISC_KEY_TYPE, type);
	isc_json_key(j, ISC_KEY_NAME);
	isc_json_string_n(j, name ? name : "", name ? n : 0);
	isc_json_key(j, ISC_KEY_TIMESTAMP_START_US);
	isc_json_ns_as_us(j, (int64_t)r->ts);
	isc_json_key(j, ISC_KEY_DURATION_US);
	isc_json_ns_as_us(j, (int64_t)r->dur);
	isc_json_key(j, ISC_KEY_METADATA);
	isc_json_begin_object(j);
	isc_json_kv_uint(j, ISC_KEY_THREAD_ID, r->tid);
	if (e->tag_segment) {
		isc_json_kv_uint(j, ISC_KEY_EXEC_SEGMENT, e->segment);
	}
}

void isc_enc_begin(struct isc_enc *e, const char *type, uint32_t name_id, const struct isc_event *r)
{
	size_t n = 0;
	const char *s = isc_strings_get(e->strings, name_id, &n);
	isc_enc_begin_named(e, type, s, n, r);
}

void isc_enc_end(struct isc_enc *e)
{
	isc_json_end_object(e->j);
	if (e->stack_id) { /* the contract's place: a member of the event */
		isc_json_kv_uint(e->j, "stack_id", e->stack_id);
		e->stack_id = 0;
	}
	isc_json_end_object(e->j);
	e->written++;
}

void isc_enc_kv_name(struct isc_enc *e, const char *key, uint32_t name_id)
{
	size_t n;
	const char *s = isc_strings_get(e->strings, name_id, &n);
	isc_json_key(e->j, key);
	if (s) {
		isc_json_string_n(e->j, s, n);
	} else {
		isc_json_null(e->j);
	}
}

/* Text bytes live in the first 16 and the last 32 bytes of a record; the header's
 * tid, kind and flags in between stay valid so the record is still identifiable. */
size_t isc_enc_text(const struct isc_event *recs, unsigned n, uint64_t len, char *out, size_t cap)
{
	size_t w = 0;
	for (unsigned i = 0; i < n && w < len && w < cap; i++) {
		const unsigned char *b = (const unsigned char *)&recs[i];
		if (recs[i].kind != ISC_EV_TEXT) {
			break;
		}
		for (size_t k = 0; k < 48 && w < len && w < cap; k++) {
			out[w++] = (char)b[k < 16 ? k : k + 16];
		}
	}
	return w;
}

void isc_text_fill(struct isc_event *recs, uint32_t tid, const char *s, size_t len)
{
	unsigned n = isc_text_records(len);
	size_t r = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned char *b = (unsigned char *)&recs[i];
		memset(b, 0, sizeof(recs[i]));
		recs[i].tid = tid;
		recs[i].kind = ISC_EV_TEXT;
		for (size_t k = 0; k < 48 && r < len; k++) {
			b[k < 16 ? k : k + 16] = (unsigned char)s[r++];
		}
	}
}
