/* SPDX-License-Identifier: MIT */
/* The command: golden reports, exit codes, --validate against the schema, writers. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "helpers.h"

static const char *analyze(void)
{
	const char *p = getenv("ISC_ANALYZE");
	cr_assert_not_null(p, "ISC_ANALYZE is not set (run through meson test)");
	return p;
}

/* Output of the command run in the data folder, so that paths in reports are relative. */
static int in_data(const char *args, char **out, char **err)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' %s", data_path(""), analyze(), args);
	return run(cmd, out, err);
}

/* The volatile field of a report (regen.sh applies the same). */
static void normalise(char *s)
{
	const char *tag = "inferscope-analyze ";
	for (char *p = strstr(s, tag); p != NULL; p = strstr(p + 1, tag)) {
		char *v = p + strlen(tag), *e = v;
		while ((*e >= '0' && *e <= '9') || *e == '.') {
			e++;
		}
		if (e > v) {
			memmove(v + 7, e, strlen(e) + 1);
			memcpy(v, "VERSION", 7);
		}
	}
}

static void golden(const char *input, const char *name)
{
	char args[512], gold[512];
	snprintf(args, sizeof(args), "'%s'", input);
	char *out = NULL;
	cr_assert_eq(in_data(args, &out, NULL), 0, "%s", input);
	normalise(out);
	snprintf(gold, sizeof(gold), "%s/../golden/%s.md", data_path(""), name);
	char *want = slurp(gold, NULL);
	cr_assert_not_null(want, "%s missing: run tests/analyzer/regen.sh", gold);
	cr_assert_str_eq(out, want,
			 "%s differs from its golden (tests/analyzer/regen.sh "
			 "regenerates after a deliberate change)",
			 name);
	free(out);
	free(want);
}

Test(cli, golden_reports)
{
	static const char *const names[] = {
		"balanced",	"cpu-bound-tokenize", "cupti-refused",	 "gpu-bound", "io-wait",
		"launch-bound", "malloc-in-loop",     "pageable-copies", "pipelined", "sync-heavy"
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char in[256];
		snprintf(in, sizeof(in), "scenarios/%s.json", names[i]);
		golden(in, names[i]);
	}
	golden("kineto/simple_add_a100.pt.trace.json.gz", "simple_add_a100");
	static const char *const wl[] = { "alloc-churn",    "balanced",		"copy-pageable",
					  "cpu-preprocess", "gpu-bound",	"io-wait",
					  "launch-bound",   "sync-every-kernel" };
	for (size_t i = 0; i < sizeof(wl) / sizeof(wl[0]); i++) {
		char in[256], name[64];
		snprintf(in, sizeof(in), "workloads/%s.json.gz", wl[i]);
		snprintf(name, sizeof(name), "wl-%s", wl[i]);
		golden(in, name);
	}
}

Test(cli, exit_codes)
{
	char *err = NULL;
	cr_assert_eq(in_data("", NULL, NULL), 2, "no trace is a usage error");
	cr_assert_eq(in_data("--bogus x.json", NULL, NULL), 2);
	cr_assert_eq(in_data("-f pdf scenarios/balanced.json", NULL, NULL), 2);
	cr_assert_eq(in_data("--window 5 scenarios/balanced.json", NULL, NULL), 2);
	cr_assert_eq(in_data("--window-scope nothing scenarios/balanced.json", NULL, NULL), 2);
	cr_assert_eq(in_data("/nonexistent/trace.json", NULL, &err), 3);
	cr_assert(strstr(err, "/nonexistent/trace.json: cannot open") != NULL, "%s", err);
	free(err);
	cr_assert_eq(in_data("validate/bad/thread-id-string.json", NULL, &err), 3);
	cr_assert(strstr(err, "event 1 (byte") != NULL, "%s", err);
	free(err);
	cr_assert_eq(in_data("--list-rules", NULL, NULL), 0);
	cr_assert_eq(in_data("-o /nonexistent/dir/report.md scenarios/balanced.json", NULL, NULL),
		     4);
}

Test(cli, thresholds_file)
{
	char path[] = "/tmp/isc-thr-XXXXXX";
	int fd = mkstemp(path);
	const char text[] = "verdict.min_gain_pct = 99\n";
	cr_assert_eq(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	char args[512], *out = NULL;
	snprintf(args, sizeof(args), "--thresholds %s -f json scenarios/gpu-bound.json", path);
	cr_assert_eq(in_data(args, &out, NULL), 0);
	cr_assert(strstr(out, "\"type\": \"gpu_bound\"") == NULL);
	cr_assert(strstr(out, "\"verdict.min_gain_pct\": 99") != NULL);
	free(out);
	snprintf(args, sizeof(args), "--thresholds %s.missing scenarios/gpu-bound.json", path);
	cr_assert_eq(in_data(args, NULL, NULL), 2);
	unlink(path);
}

Test(cli, json_is_valid_and_complete)
{
	char *out = NULL;
	cr_assert_eq(in_data("-f json scenarios/pageable-copies.json", &out, NULL), 0);
	char err[256];
	yajl_val root = yajl_tree_parse(out, err, sizeof(err));
	cr_assert_not_null(root, "not JSON: %s", err);
	static const char *const keys[] = {
		"analysis_version", "summary", "timeline_breakdown", "bottleneck", "suggestions",
		"statistics",	    "hta",     "data_quality"
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *path[] = { keys[i], NULL };
		cr_assert_not_null(yajl_tree_get(root, path, yajl_t_any), "%s", keys[i]);
	}
	const char *type[] = { "bottleneck", "type", NULL };
	cr_assert_str_eq(YAJL_GET_STRING(yajl_tree_get(root, type, yajl_t_string)), "memory_bound");
	const char *bd[] = { "timeline_breakdown", NULL };
	yajl_val arr = yajl_tree_get(root, bd, yajl_t_array);
	double sum = 0;
	for (size_t i = 0; i < YAJL_GET_ARRAY(arr)->len; i++) {
		const char *pct[] = { "percentage", NULL };
		sum += YAJL_GET_DOUBLE(
			yajl_tree_get(YAJL_GET_ARRAY(arr)->values[i], pct, yajl_t_number));
	}
	cr_assert(sum > 99.95 && sum < 100.05, "shares sum to %f", sum);
	yajl_tree_free(root);
	free(out);
}

/* The inputs' count in a -f json output. */
static size_t json_inputs(const char *out)
{
	yajl_val root = yajl_tree_parse(out, NULL, 0);
	cr_assert_not_null(root, "not JSON: %s", out);
	const char *path[] = { "inputs", NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_array);
	size_t n = v ? YAJL_GET_ARRAY(v)->len : 0;
	yajl_tree_free(root);
	return n;
}

/* An empty .part (a process killed as it created the segment) among other inputs is
 * skipped with a warning that names it; given alone it is refused as empty. */
Test(cli, empty_open_segment_skipped)
{
	static const char *const cases[][2] = {
		/* one process's glob: its other segment (a JSON trace named as one) is read */
		{ "trace.77.seg-*", "1 empty open segment skipped" },
		/* beside another input */
		{ "'%s' trace.77.seg-000002.spill.part", "1 empty open segment skipped" },
		{ "trace.77.seg-000002.spill.part", "byte 0: empty input" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char args[4200], cmd[16384], *out = NULL, *err = NULL;
		snprintf(args, sizeof(args), cases[i][0], data_path("scenarios/balanced.json"));
		snprintf(cmd, sizeof(cmd),
			 "(d=$(mktemp -d) && cd \"$d\" && cp '%s' trace.77.seg-000001.spill && "
			 ": >trace.77.seg-000002.spill.part && '%s' -f json %s; s=$?; rm -rf "
			 "\"$d\"; "
			 "exit $s)",
			 data_path("scenarios/balanced.json"), analyze(), args);
		int st = run(cmd, &out, &err);
		cr_assert(strstr(err, cases[i][1]) != NULL, "%s: %s", args, err);
		if (i < 2) {
			cr_assert_eq(st, 0, "%s: %s", args, err);
			cr_assert(strstr(err, " trace.77.seg-000002.spill.part\n") != NULL, "%s",
				  err);
			cr_assert_eq(json_inputs(out), 1, "%s", args);
		} else {
			cr_assert_eq(st, 3, "%s", args);
		}
		free(out);
		free(err);
	}
}

/* --validate and docs/trace-format.schema.json (python3-jsonschema) agree on every file. */
Test(cli, validator_agrees_with_schema)
{
	const char *src = getenv("ISC_SRC");
	cr_assert_not_null(src);
	char cmd[4096], *schema_out = NULL;
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && /usr/bin/python3 "
		 "'%s/tests/analyzer/schema-check.py' "
		 "'%s/docs/trace-format.schema.json' validate/good/*.json validate/bad/*.json "
		 "scenarios/*.json",
		 data_path(""), src, src);
	int st = run(cmd, &schema_out, NULL);
	if (st == 77 || st == 127) {
		free(schema_out);
		cr_skip_test("python3-jsonschema is not installed: schema comparison skipped");
	}
	cr_assert_eq(st, 0);
	int files = 0;
	for (char *line = strtok(schema_out, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		char file[512];
		cr_assert_eq(sscanf(line, "%511s", file), 1);
		bool schema_ok = strstr(line, " valid") != NULL && strstr(line, "invalid") == NULL;
		char args[600];
		snprintf(args, sizeof(args), "--validate '%s'", file);
		int r = in_data(args, NULL, NULL);
		cr_assert_eq(r == 0, schema_ok, "%s: schema says %s, --validate exits %d", file,
			     schema_ok ? "valid" : "invalid", r);
		cr_assert_eq(schema_ok, strstr(file, "bad/") == NULL, "%s is in the wrong folder",
			     file);
		files++;
	}
	cr_assert_gt(files, 30);
	free(schema_out);
}

Test(cli, chrome_export_round_trips)
{
	char tmp[] = "/tmp/isc-export-XXXXXX";
	int fd = mkstemp(tmp);
	close(fd);
	char args[512], *a = NULL, *b = NULL;
	snprintf(args, sizeof(args), "-f chrome -o %s kineto/simple_add_a100.pt.trace.json.gz",
		 tmp);
	cr_assert_eq(in_data(args, NULL, NULL), 0);
	snprintf(args, sizeof(args), "-f json %s | grep -A9 temporal_breakdown", tmp);
	cr_assert_eq(in_data(args, &a, NULL), 0);
	cr_assert_eq(in_data("-f json kineto/simple_add_a100.pt.trace.json.gz | grep -A9 "
			     "temporal_breakdown",
			     &b, NULL),
		     0);
	cr_assert_str_eq(a, b, "the export reads back to the same GPU numbers");
	char *text = slurp(tmp, NULL);
	cr_assert(strstr(text, "\"ph\":\"f\"") != NULL && strstr(text, "\"cat\":\"ac2g\"") != NULL,
		  "flows from host calls to GPU work");
	free(text);
	free(a);
	free(b);
	unlink(tmp);
}

Test(cli, html_renders_in_chromium)
{
	char tmp[] = "/tmp/isc-report-XXXXXX.html";
	int fd = mkstemps(tmp, 5);
	close(fd);
	char args[512];
	snprintf(args, sizeof(args), "-f html -o %s scenarios/sync-heavy.json", tmp);
	cr_assert_eq(in_data(args, NULL, NULL), 0);
	char *html = slurp(tmp, NULL);
	cr_assert(strstr(html, "<svg id=\"timeline\"") != NULL);
	cr_assert_null(strstr(html, "src=\"http"), "self-contained");
	cr_assert_null(strstr(html, "href=\"http"), "self-contained");
	/* the lanes the writer labelled: one host thread and one GPU stream in this trace,
	 * under the critical path's own label */
	int labelled = 0;
	for (const char *p = strstr(html, "<text class=\"lane\""); p != NULL;
	     p = strstr(p + 1, "<text class=\"lane\"")) {
		labelled++;
	}
	cr_assert_eq(labelled, 2, "one host thread, one GPU stream");
	cr_assert_not_null(strstr(html, ">critical path</text>"));
	cr_assert_not_null(strstr(html, ">GPU 0 stream "));
	free(html);
	const char *chromium = access("/usr/bin/chromium", X_OK) == 0 ? "/usr/bin/chromium" : NULL;
	if (chromium == NULL) {
		unlink(tmp);
		cr_skip_test("/usr/bin/chromium is not installed: rendering not checked");
	}
	char cmd[1024], *dom = NULL;
	snprintf(cmd, sizeof(cmd),
		 "timeout 120 %s --headless --no-sandbox --disable-gpu "
		 "--disable-background-networking --dump-dom file://%s",
		 chromium, tmp);
	cr_assert_eq(run(cmd, &dom, NULL), 0);
	unlink(tmp);
	/* The page's script measured what the browser laid out. */
	char *r = strstr(dom, "data-rendered=\"");
	cr_assert_not_null(r, "the inline script did not run");
	int lanes = 0, marks = 0, bar = 0, height = 0, overlaps = -1;
	cr_assert_eq(sscanf(r, "data-rendered=\"lanes=%d;marks=%d;bar=%d;height=%d;overlaps=%d",
			    &lanes, &marks, &bar, &height, &overlaps),
		     5, "%.80s", r);
	cr_assert_eq(lanes, labelled, "the browser laid out every labelled lane");
	cr_assert_eq(overlaps, 0, "no label lies over a mark or the critical path");
	cr_assert_gt(marks, 10);
	cr_assert(bar >= 1195 && bar <= 1200, "breakdown bar spans the width: %d", bar);
	cr_assert_gt(height, 0);
	free(dom);
}

/* Inputs the fuzzers found (scripts/fuzz.sh): each reads or fails cleanly, never crashes. */
Test(cli, fuzz_regressions)
{
	static const char *const files[] = {
		"fuzz/read-auto-64f69504.bin",	     "fuzz/read-bare-aa04c2ad.bin",
		"fuzz/read-inferscope-88c245e5.bin", "fuzz/read-kineto-63f0cadc.bin",
		"fuzz/read-spill-994897e7.bin",	     "fuzz/read-spill-13ec30c6.bin",
		"fuzz/read-kineto-poller-sum.json",  "fuzz/read-spill-49ede44e.bin",
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		static const char *const formats[] = { "md", "json", "html", "chrome" };
		for (int f = 0; f < 4; f++) {
			char args[512];
			snprintf(args, sizeof(args), "-f %s '%s'", formats[f], files[i]);
			int st = in_data(args, NULL, NULL);
			cr_assert(st == 0 || st == 3, "%s -f %s exits %d", files[i], formats[f],
				  st);
		}
	}
}
