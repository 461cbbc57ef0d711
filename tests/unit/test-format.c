/* SPDX-License-Identifier: MIT */
/* The JSON emitter and the signal-safe formatter. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "format/json-writer.h"
#include "common/log.h"

static char out[8192];
static size_t out_len;

static int sink(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	memcpy(out + out_len, buf, len);
	out_len += len;
	return 0;
}

static struct isc_json j;
static char small[7]; /* tiny buffer: every value crosses a flush boundary */

static void begin(void)
{
	out_len = 0;
	isc_json_init(&j, small, sizeof(small), sink, NULL);
}

static const char *end(void)
{
	isc_json_flush(&j);
	out[out_len] = '\0';
	return out;
}

Test(json, structure_and_commas)
{
	begin();
	isc_json_begin_object(&j);
	isc_json_kv_int(&j, "a", -12);
	isc_json_key(&j, "b");
	isc_json_begin_array(&j);
	isc_json_uint(&j, 1);
	isc_json_null(&j);
	isc_json_bool(&j, true);
	isc_json_begin_object(&j);
	isc_json_end_object(&j);
	isc_json_end_array(&j);
	isc_json_kv_string(&j, "c", "x");
	isc_json_end_object(&j);
	cr_assert_str_eq(end(), "{\"a\":-12,\"b\":[1,null,true,{}],\"c\":\"x\"}");
}

Test(json, escaping_and_invalid_utf8)
{
	begin();
	isc_json_string(&j, "q\"b\\n\n\t\x01 \xc3\xa9");
	cr_assert_str_eq(end(), "\"q\\\"b\\\\n\\n\\t\\u0001 \xc3\xa9\"");
	begin();
	isc_json_string_n(&j,
			  "a\xff"
			  "b\xc3",
			  4);
	cr_assert_str_eq(end(),
			 "\"a\xef\xbf\xbd"
			 "b\xef\xbf\xbd\"",
			 "invalid bytes become U+FFFD");
}

Test(json, numbers)
{
	begin();
	isc_json_begin_array(&j);
	isc_json_ns_as_us(&j, 1234567);
	isc_json_ns_as_us(&j, 5);
	isc_json_ns_as_us(&j, -1500);
	isc_json_double(&j, 3.14159, 3);
	isc_json_double(&j, 2.5, 6);
	isc_json_double(&j, -0.0004, 3);
	isc_json_double(&j, NAN, 3);
	isc_json_int(&j, INT64_MIN);
	isc_json_hex(&j, 0x7f00dead);
	isc_json_end_array(&j);
	cr_assert_str_eq(end(), "[1234.567,0.005,-1.500,3.142,2.5,0,null,-9223372036854775808,"
				"\"0x7f00dead\"]");
}

Test(log, formatter)
{
	char b[128];
	isc_fmt(b, sizeof(b), "%s=%d %u %ld %zu %x %c %% %p", "k", -5, 7u, -9l, (size_t)12, 255u,
		'z', (void *)0x10);
	cr_assert_str_eq(b, "k=-5 7 -9 12 ff z % 0x10");
	isc_fmt(b, 8, "%s", "truncated output");
	cr_assert_str_eq(b, "truncat");
}
