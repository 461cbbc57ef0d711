/* SPDX-License-Identifier: MIT */
/*
 * The flight recorder (INFERSCOPE_MODE=continuous) and capture windows on demand
 * (`inferscope capture`): segments rotate and are complete spill files, retention
 * bounds the bytes on disk under a heavy load, exit/SIGTERM/abort freeze the retained
 * segments as a trace, SIGKILL leaves them readable; a window covers exactly N steps,
 * every process of a family answers, and wrong requests fail clearly.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/common/isc-test.h"

TestSuite(recorder, .init = isc_test_dir_setup, .fini = isc_test_dir_teardown, .timeout = 240);

#define MAX_ENV 16

struct server {
	pid_t pid;
	FILE *out;
};

/* Starts wl-server under the preload in the test directory; waits for "ready". */
static void server_start(struct server *s, const char *const args[], const char *const env[])
{
	int p[2];
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	s->pid = fork();
	cr_assert(s->pid >= 0);
	if (s->pid == 0) {
		const char *argv[8] = { isc_test_workload("wl-server") };
		for (int i = 0; args[i] && i < 6; i++) {
			argv[i + 1] = args[i];
		}
		dup2(p[1], 1);
		int e = open(isc_test_in_dir("server.err"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(e, 2);
		if (chdir(isc_test_dir()) != 0) {
			_exit(126);
		}
		setenv("LD_PRELOAD", isc_test_preload(), 1);
		setenv("XDG_RUNTIME_DIR", isc_test_dir(), 1);
		for (int i = 0; env && env[i]; i++) {
			putenv((char *)env[i]);
		}
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	s->out = fdopen(p[0], "r");
	char line[64] = "";
	cr_assert_not_null(fgets(line, sizeof(line), s->out), "the server did not start");
	cr_assert_eq(strncmp(line, "ready ", 6), 0, "server said: %s", line);
}

/* Until pid's control socket accepts (10 s at most): a server that has just forked its
 * workers has its listener away for a quiet period (lifecycle.c, fork). */
static bool listening(int pid)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/inferscope/%d.sock", isc_test_dir(), pid);
	for (int i = 0; i < 1000; i++) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
		if (fd >= 0) {
			close(fd);
		}
		if (ok) {
			return true;
		}
		usleep(10000);
	}
	return false;
}

static int server_wait(struct server *s)
{
	int st = 0;
	while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR) {
	}
	fclose(s->out);
	return st;
}

/* `inferscope capture ARGS...` with the test directory's socket directory. */
static int capture(const char *const args[], struct isc_run *r)
{
	static char xdg[4200];
	const char *argv[12] = { ISC_LAUNCHER_PATH, "capture" };
	for (int i = 0; args[i] && i < 9; i++) {
		argv[i + 2] = args[i];
	}
	snprintf(xdg, sizeof(xdg), "XDG_RUNTIME_DIR=%s", isc_test_dir());
	const char *env[] = { xdg, NULL };
	cr_assert_eq(isc_test_run(argv, env, false, isc_test_dir(), r), 0);
	return WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
}

/* Files in the test directory whose names contain part; total bytes in *bytes. */
static int count_files(const char *part, long long *bytes)
{
	DIR *d = opendir(isc_test_dir());
	struct dirent *e;
	int n = 0;
	if (bytes) {
		*bytes = 0;
	}
	while (d && (e = readdir(d)) != NULL) {
		struct stat st;
		if (strstr(e->d_name, part) && stat(isc_test_in_dir(e->d_name), &st) == 0) {
			n++;
			if (bytes) {
				*bytes += st.st_size;
			}
		}
	}
	if (d) {
		closedir(d);
	}
	return n;
}

static const char *trace_of(pid_t pid)
{
	static char name[64];
	snprintf(name, sizeof(name), "trace.%d.json", (int)pid);
	return isc_test_in_dir(name);
}

/* A closed segment: the spill magic, then a META block with the recorder member. */
static void check_segment(const char *path)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY);
	cr_assert(fd >= 0, "%s", path);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	cr_assert(n > 80, "%s is %zd bytes", path, n);
	buf[n] = '\0';
	cr_assert_eq(memcmp(buf, "ISCSPILL", 8), 0);
	uint32_t type;
	memcpy(&type, buf + 64, 4);
	cr_assert_eq(type, 1, "the first block is META");
	cr_assert(memmem(buf, (size_t)n, "\"recorder\":{\"mode\":\"continuous\"", 31) != NULL);
}

static void analyze_ok(const char *path)
{
	struct isc_run r;
	const char *argv[] = { ISC_ANALYZE_PATH, path, "--format", "json", NULL };
	cr_assert_eq(isc_test_run(argv, NULL, false, NULL, &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "analyze %s: %s", path, r.err);
	isc_run_free(&r);
}

Test(recorder, segments_rotate_retain_and_freeze_at_exit)
{
	const char *args[] = { "2000", "5", "1.5", NULL };
	const char *env[] = { "INFERSCOPE_MODE=continuous", "INFERSCOPE_SEGMENT=100ms",
			      "INFERSCOPE_RETAIN=500ms", NULL };
	struct server s;
	server_start(&s, args, env);
	int st = server_wait(&s);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cr_assert_eq(count_files(".spill.part", NULL), 0, "every segment is closed at exit");
	int kept = count_files(".spill", NULL);
	cr_assert(kept >= 2, "%d segments kept", kept);
	yajl_val t = isc_test_load_json(trace_of(s.pid));
	cr_assert_not_null(t);
	long long first = isc_trace_int(t, "trace_metadata/retention/first_segment", -1);
	long long last = isc_trace_int(t, "trace_metadata/retention/last_segment", -1);
	long long dropped = isc_trace_int(t, "trace_metadata/retention/dropped_segments", -1);
	cr_assert_eq(last - first + 1, kept, "the trace holds the %d kept segments", kept);
	cr_assert_eq(dropped, first - 1, "segments before the first kept were dropped");
	cr_assert(dropped > 0 &&
		  isc_trace_int(t, "trace_metadata/retention/dropped_records", 0) > 0);
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/end_reason"), "exit");
	cr_assert(isc_trace_count(t, "cpu_call", "step") > 0);
	yajl_tree_free(t);
	char name[96];
	snprintf(name, sizeof(name), "trace.%d.seg-%06lld.spill", (int)s.pid, last);
	check_segment(isc_test_in_dir(name));
	analyze_ok(isc_test_in_dir(name));
}

/* The closed segments of pid, oldest first, into names (at most max); returns the count. */
static int segments_of(pid_t pid, char names[][96], int max)
{
	char prefix[64];
	int n = 0;
	snprintf(prefix, sizeof(prefix), "trace.%d.seg-", (int)pid);
	DIR *d = opendir(isc_test_dir());
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL && n < max) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && len > 6 &&
		    strcmp(e->d_name + len - 6, ".spill") == 0) {
			snprintf(names[n++], 96, "%s", e->d_name);
		}
	}
	if (d) {
		closedir(d);
	}
	qsort(names, (size_t)n, 96, (int (*)(const void *, const void *))strcmp);
	return n;
}

/* `go tool pprof -raw` of a profile: its samples, locations (with function names) and
 * mappings as text; NULL where go is not installed. */
static char *pprof_raw(const char *pb)
{
	if (ISC_GO_PATH[0] == '\0') {
		return NULL;
	}
	char home[4200], cache[4200];
	snprintf(home, sizeof(home), "HOME=%s", isc_test_dir());
	snprintf(cache, sizeof(cache), "GOCACHE=%s/gocache", isc_test_dir());
	const char *argv[] = { ISC_GO_PATH, "tool", "pprof", "-raw", pb, NULL };
	const char *env[] = { home, cache, NULL };
	struct isc_run r;
	cr_assert_eq(isc_test_run(argv, env, false, NULL, &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "go tool pprof %s: %s", pb,
		  r.err);
	char *out = r.out;
	r.out = NULL;
	isc_run_free(&r);
	return out;
}

/* Whether `pprof -raw` lists a sample: a line "COUNT VALUE: LOCATION-IDS" between the
 * column header after "Samples:" and "Locations". */
static bool profile_has_samples(const char *raw)
{
	const char *from = strstr(raw, "\nSamples:\n"), *to = strstr(raw, "\nLocations\n");
	if (from == NULL || to == NULL || to < from) {
		return false;
	}
	from = strchr(from + 10, '\n'); /* past the column header */
	const char *colon = from != NULL ? strchr(from, ':') : NULL;
	return colon != NULL && colon < to;
}

/* The mappings section of `pprof -raw` names the program's file (and no mapping is
 * empty: "Main binary filename not available" is the symptom of one). */
static void expect_mapping_of_the_program(const char *raw, const char *what)
{
	const char *maps = strstr(raw, "\nMappings\n");
	cr_assert_not_null(maps, "%s: no mappings in the profile:\n%s", what, raw);
	cr_assert_not_null(strstr(maps, isc_test_workload("wl-server")),
			   "%s: no mapping names the program:\n%s", what, maps);
	cr_assert_null(strstr(raw, "Main binary filename not available"), "%s", what);
}

/*
 * Continuous mode with CPU samples: each segment the recorder closes carries the
 * symbols and modules of its stacks, so that where the process is gone (the analyzer
 * reading the segments, the watcher reading each alone) the frames are named - the
 * workload's function, demangled - and pprof's mappings name the program. Retention
 * deletes the oldest segments meanwhile: the later ones lose nothing by it.
 */
Test(recorder, segments_carry_their_symbols)
{
	const char *args[] = { "2000", "1", "1.5", "spin", NULL };
	const char *env[] = { "INFERSCOPE_MODE=continuous", "INFERSCOPE_SEGMENT=200ms",
			      "INFERSCOPE_RETAIN=700ms", "INFERSCOPE_CPU_SAMPLE=1000", NULL };
	struct server s;
	server_start(&s, args, env);
	int st = server_wait(&s);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	yajl_val t = isc_test_load_json(trace_of(s.pid));
	cr_assert_not_null(t);
	long long dropped = isc_trace_int(t, "trace_metadata/retention/dropped_segments", -1);
	long long last = isc_trace_int(t, "trace_metadata/retention/last_segment", -1);
	long long bytes = isc_trace_int(t, "trace_metadata/retention/symbols/bytes", -1);
	long long ns = isc_trace_int(t, "trace_metadata/retention/symbols/ns", -1);
	long long pcs = isc_trace_int(t, "trace_metadata/retention/symbols/addresses", -1);
	yajl_tree_free(t);
	cr_assert_gt(dropped, 0, "retention deleted the oldest segments");
	cr_assert_gt(pcs, 0, "the segments' addresses were symbolised");
	cr_log_info("symbols at segment close: %lld segments, %lld addresses, %lld bytes, "
		    "%lld us in all (%lld bytes and %lld us a segment)",
		    last, pcs, bytes, ns / 1000, bytes / last, ns / 1000 / last);

	char seg[64][96];
	int n = segments_of(s.pid, seg, 64);
	cr_assert_geq(n, 2, "%d segments kept", n);
	/* the kept segments analysed together: the markdown names the function */
	const char *argv[68] = { ISC_ANALYZE_PATH, "--format", "markdown" };
	for (int i = 0; i < n; i++) {
		argv[3 + i] = strdup(isc_test_in_dir(seg[i]));
	}
	struct isc_run r;
	cr_assert_eq(isc_test_run(argv, NULL, false, NULL, &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
	cr_assert_not_null(strstr(r.out, "segsymbols::burn"), "markdown:\n%s", r.out);
	cr_assert_null(strstr(r.out, "| 0x0"), "markdown:\n%s", r.out);
	isc_run_free(&r);
	for (int i = 0; i < n; i++) {
		free((void *)argv[3 + i]);
	}

	/* each kept segment alone through the watcher: SEGMENT.pb.gz names it too */
	const char *wargv[] = { ISC_WATCH_PATH, "--once", isc_test_dir(), NULL };
	cr_assert_eq(isc_test_run(wargv, NULL, false, NULL, &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
	isc_run_free(&r);
	char pb[200];
	snprintf(pb, sizeof(pb), "%.95s.pb.gz", seg[n - 1]);
	if (access(isc_test_in_dir(pb), F_OK) != 0) {
		cr_skip_test("pprof is not built in (meson -Dpprof=enabled)");
	}
	int named = 0;
	for (int i = 0; i < n; i++) {
		snprintf(pb, sizeof(pb), "%.95s.pb.gz", seg[i]);
		char *raw = pprof_raw(isc_test_in_dir(pb));
		if (raw == NULL) {
			cr_log_warn("go is not installed: the profiles are not decoded");
			break;
		}
		/* a segment may hold no sample: the last one's tail after the spin, or one
		 * where a loaded machine ran the program too little for a timer tick */
		if (profile_has_samples(raw)) {
			cr_assert_not_null(strstr(raw, "segsymbols::burn"), "%s:\n%s", pb, raw);
			expect_mapping_of_the_program(raw, pb);
			named++;
		}
		free(raw);
	}
	cr_assert(named >= 2 || ISC_GO_PATH[0] == '\0', "%d of %d segments have samples", named, n);
	/* and inferscope-analyze -f pprof of the kept segments together */
	const char *pargv[] = { ISC_ANALYZE_PATH,
				"-f",
				"pprof",
				"-o",
				isc_test_in_dir("all.pb.gz"),
				isc_test_in_dir(seg[0]),
				isc_test_in_dir(seg[n - 1]),
				NULL };
	cr_assert_eq(isc_test_run(pargv, NULL, false, NULL, &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
	isc_run_free(&r);
	char *raw = pprof_raw(isc_test_in_dir("all.pb.gz"));
	if (raw != NULL) {
		cr_assert_not_null(strstr(raw, "segsymbols::burn"), "%s", raw);
		expect_mapping_of_the_program(raw, "all.pb.gz");
		free(raw);
	}
}

/* 1 M events/s and more (no pause, 2000 marks a step) for 2 s: the bytes on disk never
 * exceed INFERSCOPE_RETAIN. Sampled from here while the server writes. */
Test(recorder, disk_use_within_the_bound_under_load)
{
	const char *args[] = { "0", "2000", "2", NULL };
	const char *env[] = { "INFERSCOPE_MODE=continuous", "INFERSCOPE_RETAIN=4M",
			      "INFERSCOPE_MAX_MEMORY=64M", NULL };
	struct server s;
	server_start(&s, args, env);
	long long peak = 0, bytes;
	int st = 0;
	while (waitpid(s.pid, &st, WNOHANG) == 0) {
		count_files(".seg-", &bytes);
		peak = bytes > peak ? bytes : peak;
		usleep(2000);
	}
	fclose(s.out);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	count_files(".seg-", &bytes);
	peak = bytes > peak ? bytes : peak;
	cr_assert(peak <= 4ll << 20, "segments took %lld bytes, the bound is %lld", peak,
		  4ll << 20);
	yajl_val t = isc_test_load_json(trace_of(s.pid));
	cr_assert_not_null(t);
	long long dropped = isc_trace_int(t, "trace_metadata/retention/dropped_records", 0);
	size_t kept = isc_trace_count(t, "instant", "tick");
	cr_log_info("peak %lld bytes; %zu marks kept, %lld records dropped by retention", peak,
		    kept, dropped);
	cr_assert(dropped > (long long)kept, "most of the load was rotated out");
	yajl_tree_free(t);
}

Test(recorder, sigterm_freezes_sigkill_leaves_segments)
{
	const char *args[] = { "1000", "5", "30", NULL };
	const char *env[] = { "INFERSCOPE_MODE=continuous", "INFERSCOPE_SEGMENT=100ms", NULL };
	struct server s;
	server_start(&s, args, env);
	usleep(300000);
	kill(s.pid, SIGTERM);
	int st = server_wait(&s);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "dies of SIGTERM as without us");
	yajl_val t = isc_test_load_json(trace_of(s.pid));
	cr_assert_not_null(t);
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/end_reason"), "signal");
	yajl_tree_free(t);

	server_start(&s, args, env);
	usleep(300000);
	kill(s.pid, SIGKILL);
	server_wait(&s);
	cr_assert(!isc_test_exists(trace_of(s.pid)), "SIGKILL writes no trace");
	char name[96];
	snprintf(name, sizeof(name), "trace.%d.seg-000001.spill", (int)s.pid);
	check_segment(isc_test_in_dir(name));
	/* The open segment stays as .part, unless the kill fell inside a rotation, after the
	 * closed segment's rename and before the next one's creation (retention runs there):
	 * then every record is in closed segments. */
	int parts = count_files(".spill.part", NULL);
	cr_assert_leq(parts, 1, "%d open segments", parts);
	if (parts == 0) {
		cr_log_warn("killed inside a segment rotation: no open segment");
	}
	DIR *d = opendir(isc_test_dir());
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		/* a torn last block is fine; its header and META are there whenever the kill
		 * fell (segments_appear_whole) */
		if (strstr(e->d_name, ".spill.part")) {
			check_segment(isc_test_in_dir(e->d_name));
			analyze_ok(isc_test_in_dir(e->d_name));
		}
	}
	closedir(d);

	/* A segment that is no spill beside a good one: the good one is read, the other
	 * named with why. */
	char bad[96], first[4200];
	snprintf(bad, sizeof(bad), "trace.%d.seg-999999.spill", (int)s.pid);
	snprintf(first, sizeof(first), "%s", isc_test_in_dir(name));
	FILE *f = fopen(isc_test_in_dir(bad), "w");
	cr_assert_not_null(f);
	fputs("not a spill", f);
	fclose(f);
	struct isc_run r;
	const char *argv[] = { ISC_ANALYZE_PATH, first, isc_test_in_dir(bad), "-f", "json", NULL };
	cr_assert_eq(isc_test_run(argv, NULL, false, NULL, &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
	char want[160];
	snprintf(want, sizeof(want), "%s: skipped, not a spill segment of this version", bad);
	cr_assert(strstr(r.err, want) != NULL, "%s", r.err);
	cr_assert(strstr(r.err, "1 segment(s) unreadable, skipped") != NULL, "%s", r.err);
	isc_run_free(&r);
}

/* A segment is shown only with its header and META: written under a hidden name, it
 * appears as .part by a rename, never created empty under that name, so a SIGKILL at any
 * moment leaves no .part that reads as nothing. */
Test(recorder, segments_appear_whole)
{
	const char *args[] = { "1000", "5", "0.6", NULL };
	const char *env[] = { "INFERSCOPE_MODE=continuous", "INFERSCOPE_SEGMENT=50ms", NULL };
	int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	cr_assert(in >= 0);
	cr_assert(inotify_add_watch(in, isc_test_dir(), IN_CREATE | IN_MOVED_TO) >= 0);
	struct server s;
	server_start(&s, args, env);
	int st = server_wait(&s);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	static char buf[1 << 20] __attribute__((aligned(__alignof__(struct inotify_event))));
	int created = 0, shown = 0, staged = 0;
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *)p;
			bool part = ev->len > 0 && strstr(ev->name, ".spill.part") != NULL;
			cr_assert_not(ev->mask & IN_Q_OVERFLOW);
			created += part && (ev->mask & IN_CREATE);
			shown += part && (ev->mask & IN_MOVED_TO);
			staged += ev->len > 0 && ev->name[0] == '.' && (ev->mask & IN_CREATE);
			p += sizeof(*ev) + ev->len;
		}
	}
	close(in);
	cr_assert_eq(created, 0, "%d segments created empty under their .part name", created);
	cr_assert(shown >= 3 && staged == shown, "%d segments shown, %d staged", shown, staged);
	cr_assert_eq(count_files(".spill.new", NULL), 0, "no staged segment left");
}

Test(recorder, abort_freezes_and_dies_of_sigabrt)
{
	const char *args[] = { "1000", "5", "0.3", "abort", NULL };
	const char *env[] = { "INFERSCOPE_MODE=continuous", NULL };
	struct server s;
	server_start(&s, args, env);
	int st = server_wait(&s);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "status %d", st);
	yajl_val t = isc_test_load_json(trace_of(s.pid));
	cr_assert_not_null(t);
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/end_reason"), "crash");
	cr_assert(isc_trace_count(t, "cpu_call", "step") > 0);
	yajl_tree_free(t);
	analyze_ok(trace_of(s.pid));
}

/* The window's trace: exactly n step scopes, each inside the window. */
static void check_window(const char *path, size_t n)
{
	yajl_val t = isc_test_load_json(path);
	cr_assert_not_null(t, "%s", path);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "step"), n);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "work"), n, "and nothing of the next step");
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/snapshot_reason"), "capture");
	yajl_tree_free(t);
}

static void capture_steps(const char *const env[])
{
	const char *args[] = { "2000", "3", "60", NULL };
	struct server s;
	server_start(&s, args, env);
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)s.pid);
	struct isc_run r;
	const char *cargs[] = { pid, "--steps", "20", "-o", "win.json", NULL };
	cr_assert_eq(capture(cargs, &r), 0, "stderr: %s", r.err);
	isc_run_free(&r);
	check_window(isc_test_in_dir("win.json"), 20);
	kill(s.pid, SIGKILL);
	server_wait(&s);
}

Test(recorder, capture_exactly_20_steps_continuous)
{
	const char *env[] = { "INFERSCOPE_MODE=continuous", NULL };
	capture_steps(env);
}

Test(recorder, capture_exactly_20_steps_paused)
{
	const char *env[] = { "INFERSCOPE_START_PAUSED=1", NULL };
	capture_steps(env);
}

Test(recorder, capture_a_family_and_refuse_what_is_wrong)
{
	const char *args[] = { "2000", "3", "60", "fork", NULL };
	struct server s;
	server_start(&s, args, NULL);
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)s.pid);
	struct isc_run r;
	cr_assert(listening(s.pid), "the server's control socket never accepted");
	/* a long window, and a second request while it runs */
	const char *longer[] = { pid, "--duration", "1s", "-o", "fam.json", NULL };
	pid_t first = fork();
	if (first == 0) {
		struct isc_run r2;
		_exit(capture(longer, &r2));
	}
	usleep(300000);
	const char *again[] = { pid, "--steps", "2", NULL };
	cr_assert_eq(capture(again, &r), 1, "stderr: %s stdout: %s status %d", r.err, r.out,
		     r.status);
	cr_assert(strstr(r.err, "already open") != NULL, "%s", r.err);
	isc_run_free(&r);
	int st;
	waitpid(first, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cr_assert(isc_test_exists(isc_test_in_dir("fam.json")));
	cr_assert_eq(count_files("fam.", NULL), 2, "the worker's window beside the server's");
	kill(s.pid, SIGKILL);
	server_wait(&s);

	const char *gone[] = { "999999999", "--steps", "2", NULL };
	cr_assert_eq(capture(gone, &r), 1);
	cr_assert(strstr(r.err, "no process") != NULL, "%s", r.err);
	isc_run_free(&r);
	snprintf(pid, sizeof(pid), "%d", (int)getpid()); /* the runner: no library */
	const char *plain[] = { pid, "--steps", "2", NULL };
	cr_assert_eq(capture(plain, &r), 1);
	cr_assert(strstr(r.err, "does not run libinferscope") != NULL, "%s", r.err);
	isc_run_free(&r);
	const char *usage[] = { pid, NULL };
	cr_assert_eq(capture(usage, &r), 2);
	isc_run_free(&r);
}

/* The socket fds in a descriptor table directory, as "socket:[inode]" strings. */
static int sockets(const char *dir, char found[][64], int max)
{
	char link[512], target[64];
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL && n < max) {
		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		ssize_t k = readlink(link, target, sizeof(target) - 1);
		target[k > 0 ? k : 0] = '\0';
		if (strncmp(target, "socket:", 7) == 0) {
			strcpy(found[n++], target);
		}
	}
	if (d) {
		closedir(d);
	}
	return n;
}

Test(recorder, no_descriptor_of_the_listener_in_the_program)
{
	const char *args[] = { "2000", "1", "60", NULL };
	struct server s;
	server_start(&s, args, NULL);
	char path[256], comm[64] = "";
	/* the listener starts from the collector's first tick, on a thread of its own: wait
	 * (bounded) until it accepts, as a client would, rather than expect it at once */
	cr_assert(listening(s.pid), "the control socket never accepted");
	/* the listener thread's own table holds the socket; the program's does not */
	snprintf(path, sizeof(path), "/proc/%d/task", (int)s.pid);
	DIR *d = opendir(path);
	struct dirent *e;
	char ctl[64][64], prog[64][64];
	int nctl = 0;
	while (d && (e = readdir(d)) != NULL) {
		char f[768];
		snprintf(f, sizeof(f), "%s/%s/comm", path, e->d_name);
		FILE *c = fopen(f, "r");
		if (c && fgets(comm, sizeof(comm), c) && strncmp(comm, "inferscope-ctl", 14) == 0) {
			snprintf(f, sizeof(f), "%s/%s/fd", path, e->d_name);
			nctl = sockets(f, ctl, 64);
		}
		if (c) {
			fclose(c);
		}
	}
	if (d) {
		closedir(d);
	}
	/* its listening socket, and the probe's connection until it reads the close */
	cr_assert(nctl >= 1 && nctl <= 2, "the listener thread holds its socket (%d)", nctl);
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)s.pid);
	int nprog = sockets(path, prog, 64);
	for (int i = 0; i < nprog; i++) {
		for (int k = 0; k < nctl; k++) {
			cr_expect_str_neq(prog[i], ctl[k],
					  "a socket of the listener is in the program's table");
		}
	}
	kill(s.pid, SIGKILL);
	server_wait(&s);
}
