/* SPDX-License-Identifier: MIT */
/*
 * Hostile traces. Names that carry terminal controls (ESC [2J clears the screen, \r
 * rewrites the line, OSC sets the title, a C1 CSI) and markup: no output of the command
 * carries one raw, and the markdown (rendered as HTML by GitHub and GitLab) carries no
 * tag. A small gzip of many tiny events: --max-memory stops the command with exit 3.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "helpers.h"

/* Each name of the trace and what it becomes: a kernel, a scope, a function, a file,
 * the thread (JSON escapes; \u009b is the C1 CSI). */
static const char *const swaps[][2] = {
	{ "\"gemm_kernel\"", "\"gemm\\u001b[2J\\r<script>alert(1)</script>_kernel\"" },
	{ "\"prepare\"", "\"prep\\u001b[31m<img src=x onerror=alert(2)>are\"" },
	{ "\"forward\"", "\"for\\u001b]0;pwned\\u0007ward\\u009b2J\"" },
	{ "\"model.py\"", "\"mod\\r\\u007fel<script>.py\"" },
	{ "\"python3\"", "\"py\\u001b[2Jthon<script>\"" },
};

static char dir[] = "/tmp/isc-escape-XXXXXX";

static char *replace_all(char *s, const char *from, const char *to)
{
	size_t lf = strlen(from), lt = strlen(to), n = 0;
	for (char *p = strstr(s, from); p != NULL; p = strstr(p + lf, from)) {
		n++;
	}
	cr_assert_gt(n, 0, "%s is not in the trace", from);
	char *out = malloc(strlen(s) + n * lt + 1), *o = out;
	for (char *p = s, *q; (q = strstr(p, from)) != NULL || *p; p = q + lf) {
		if (q == NULL) {
			strcpy(o, p);
			o += strlen(p);
			break;
		}
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, to, lt);
		o += lt;
	}
	*o = '\0';
	free(s);
	return out;
}

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
	char *s = slurp(data_path("stacks/stacks-gpu.json"), NULL);
	cr_assert_not_null(s);
	for (size_t i = 0; i < sizeof(swaps) / sizeof(swaps[0]); i++) {
		s = replace_all(s, swaps[i][0], swaps[i][1]);
	}
	char path[512];
	snprintf(path, sizeof(path), "%s/hostile.json", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(s, f);
	fclose(f);
	free(s);
}

static void teardown(void)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* The first control character of s (n bytes), or -1: C0 but the newline and the tab,
 * DEL, and C1 in UTF-8. */
static long first_control(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ||
		    (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
		     (unsigned char)s[i + 1] <= 0x9f)) {
			return (long)i;
		}
	}
	return -1;
}

/* The first tag in markdown: tag not escaped by a backslash. */
static const char *raw_tag(const char *md, const char *tag)
{
	const char *p = strstr(md, tag);
	while (p != NULL && p > md && p[-1] == '\\') {
		p = strstr(p + 1, tag);
	}
	return p;
}

static char *analyze(const char *args, int *status, char **err)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' %s", dir, getenv("ISC_ANALYZE"), args);
	char *out = NULL;
	*status = run(cmd, &out, err);
	cr_assert_not_null(out);
	return out;
}

TestSuite(hostile, .init = setup, .fini = teardown);

Test(hostile, markdown_has_no_control_and_no_tag)
{
	int st;
	char *out = analyze("hostile.json", &st, NULL);
	cr_assert_eq(st, 0);
	long at = first_control(out, strlen(out));
	cr_assert_eq(at, -1, "raw control byte at %ld: ...%.40s", at,
		     out + (at > 20 ? at - 20 : 0));
	cr_assert_null(raw_tag(out, "<script"), "%s", out);
	cr_assert_null(raw_tag(out, "<img"), "%s", out);
	/* The names are there, escaped: in table cells and in the bullet lines. */
	cr_assert_not_null(strstr(out, "gemm\\x1b[2J\\x0d\\<script>"), "%s", out);
	int bullets = 0;
	for (const char *p = strstr(out, "- "); p != NULL; p = strstr(p + 1, "- ")) {
		const char *bol = p;
		while (bol > out && bol[-1] == ' ') {
			bol--;
		}
		const char *eol = strchr(p, '\n');
		const char *hit = strstr(p, "\\<script>");
		bullets += (bol == out || bol[-1] == '\n') && hit != NULL &&
			   (eol == NULL || hit < eol);
	}
	cr_assert_gt(bullets, 0, "no bullet line names the kernel: %s", out);
	free(out);
}

Test(hostile, every_text_output_has_no_control)
{
	static const char *const formats[] = { "folded", "json", "html", "chrome" };
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		char args[128];
		snprintf(args, sizeof(args), "-f %s hostile.json", formats[i]);
		int st;
		char *out = analyze(args, &st, NULL);
		cr_assert_eq(st, 0, "-f %s", formats[i]);
		long at = first_control(out, strlen(out));
		cr_assert_eq(at, -1, "-f %s: raw control byte at %ld: ...%.40s", formats[i], at,
			     out + (at > 20 ? at - 20 : 0));
		if (strcmp(formats[i], "html") == 0) {
			cr_assert_null(strstr(out, "<script>alert"), "-f html");
		}
		free(out);
	}
}

Test(hostile, pprof_strings_are_escaped)
{
	int st;
	free(analyze("-f pprof -o hostile.pb.gz hostile.json", &st, NULL));
	cr_assert_eq(st, 0);
	char cmd[1200], path[512];
	snprintf(cmd, sizeof(cmd), "gzip -dc '%s/hostile.pb.gz' >'%s/hostile.pb'", dir, dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/hostile.pb", dir);
	size_t n;
	char *m = slurp(path, &n);
	cr_assert_not_null(m);
	/* The strings are raw bytes in the message: the escaped forms are there and the
	 * raw sequences are not. */
	const char *esc = "for\\x1b]0;pwned\\x07ward\\xc2\\x9b2J";
	cr_assert_not_null(memmem(m, n, esc, strlen(esc)));
	cr_assert_null(memmem(m, n, "\x1b[2J", 4));
	cr_assert_null(memmem(m, n, "\x1b]0;", 4));
	cr_assert_null(memmem(m, n, "\xc2\x9b", 2));
	cr_assert_null(memmem(m, n, "\r\x7f", 2));
	free(m);
}

Test(hostile, error_messages_have_no_control)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/bad\x1b[2J\r<b>.json", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("{\"format_version\": \"1.0\", \"events\": [{]}", f);
	fclose(f);
	int st;
	char *err = NULL;
	free(analyze("bad*.json", &st, &err));
	cr_assert_neq(st, 0);
	cr_assert_not_null(err);
	cr_assert_not_null(strstr(err, "bad\\x1b[2J"), "%s", err);
	long at = first_control(err, strlen(err));
	cr_assert_eq(at, -1, "raw control byte in: %s", err);
	free(err);
}

/* A gzip'd InferScope trace of n tiny events, written through zlib (a few hundred KB
 * for 100,000 events, 64 bytes each once read). */
static void tiny_events(const char *name, int n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	gzFile z = gzopen(path, "wb");
	cr_assert_not_null(z);
	gzprintf(z, "{\"format_version\": \"1.0\", \"trace_metadata\": {\"pid\": 10},\n"
		    "\"events\": [\n");
	for (int i = 0; i < n; i++) {
		gzprintf(z,
			 "%s{\"id\": %d, \"type\": \"cpu_call\", \"name\": \"s\", "
			 "\"timestamp_start_us\": %d, \"duration_us\": 1, "
			 "\"metadata\": {\"thread_id\": 1}}\n",
			 i ? "," : "", i, 2 * i);
	}
	gzprintf(z, "]}\n");
	cr_assert_eq(gzclose(z), Z_OK);
}

Test(hostile, max_memory_stops_with_exit_3)
{
	tiny_events("many.json.gz", 100000);
	int st;
	char *err = NULL;
	free(analyze("--max-memory 2M many.json.gz", &st, &err));
	cr_assert_eq(st, 3, "exit %d: %s", st, err);
	cr_assert_not_null(strstr(err, "more memory than --max-memory allows"), "%s", err);
	cr_assert_not_null(strstr(err, "bound 2.10 MB"), "%s", err);
	free(err);
	/* The same trace within a bound that holds it, and within the default. */
	char *out = analyze("--max-memory 1GiB many.json.gz", &st, &err);
	cr_assert_eq(st, 0, "exit %d: %s", st, err);
	cr_assert_not_null(strstr(out, "100000 events"), "%s", out);
	free(out);
	free(err);
	free(analyze("many.json.gz", &st, NULL));
	cr_assert_eq(st, 0);
	free(analyze("--max-memory 12X many.json.gz", &st, &err));
	cr_assert_eq(st, 2);
	cr_assert_not_null(strstr(err, "--max-memory: expected a size"), "%s", err);
	free(err);
}
