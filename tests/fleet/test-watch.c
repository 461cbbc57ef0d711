/* SPDX-License-Identifier: MIT */
/*
 * inferscope watch: segment names, the kernel classifier, the metrics of a directory
 * (--once) against the analyzer's own JSON result, the profile beside each segment
 * against `inferscope-analyze -f pprof`, and the live server: HTTP, content negotiation,
 * segments closed and removed while it runs, promtool on its exposition; a flood of
 * clients trickling bytes delays no scrape, and a head over 8 KiB is answered 431.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fleet-util.h"
#include "watch/kernel-class.h"
#include "watch/segments.h"

TestSuite(watch, .init = fleet_dir_setup, .fini = fleet_dir_teardown, .timeout = 240);

static const char *env(const char *name)
{
	const char *v = getenv(name);
	cr_assert(v != NULL && *v != '\0', "%s is not set (meson test sets it)", name);
	return v;
}

static const char *in_dir(const char *name)
{
	static char buf[4][4200];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", fleet_dir, name);
	return buf[k];
}

/* Output of a shell command (the test's own commands: fixed strings and temp paths). */
static char *sh(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t cap = 1 << 16, n = 0;
	char *out = malloc(cap + 1);
	size_t r;
	while ((r = fread(out + n, 1, cap - n, p)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			out = realloc(out, cap + 1);
		}
	}
	out[n] = '\0';
	int st = pclose(p);
	if (status != NULL) {
		*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	}
	return out;
}

/* The value of the sample line that starts with prefix, or NAN. */
static double sample(const char *text, const char *prefix)
{
	for (const char *l = text; l != NULL && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, prefix, strlen(prefix)) == 0) {
			return atof(l + strlen(prefix));
		}
	}
	return NAN;
}

Test(watch, segment_names)
{
	struct isc_segname s;
	cr_assert(isc_segment_name("trace.4242.seg-000017.spill", &s));
	cr_assert_eq(s.pid, 4242);
	cr_assert_eq(s.seq, 17);
	cr_assert(isc_segment_name("my.trace.json.77.seg-1234567.spill", &s));
	cr_assert_eq(s.pid, 77);
	cr_assert_eq(s.seq, 1234567);
	cr_assert_not(isc_segment_name("trace.4242.seg-000017.spill.part", &s), "still written");
	cr_assert_not(isc_segment_name("trace.4242.seg-000017.spill.pb.gz", &s), "a profile");
	cr_assert_not(isc_segment_name("trace.4242.spill", &s), "a plain spill");
	cr_assert_not(isc_segment_name("trace.seg-000017.spill", &s), "no pid");
	cr_assert_not(isc_segment_name("trace.42x.seg-000017.spill", &s));
	cr_assert_not(isc_segment_name("trace.42.seg-.spill", &s));
	cr_assert_not(isc_segment_name("trace.42.seg-00a1.spill", &s));
}

Test(watch, kernel_classes)
{
	static const struct {
		const char *name;
		enum isc_kclass c;
	} cases[] = {
		{ "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn", ISC_KC_GEMM },
		{ "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm>", ISC_KC_GEMM },
		{ "sm90_xmma_gemm_f16f16_f16f32", ISC_KC_GEMM },
		{ "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64>>", ISC_KC_ATTENTION },
		{ "void at::native::(anonymous)::cunn_SoftMaxForward", ISC_KC_ATTENTION },
		{ "paged_attention_v2_kernel", ISC_KC_ATTENTION },
		{ "ncclDevKernel_AllReduce_Sum_f32_RING_LL", ISC_KC_COMMUNICATION },
		{ "ncclKernel_AllGather_RING_LL_Sum_int8_t", ISC_KC_COMMUNICATION },
		{ "void at::native::vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>",
		  ISC_KC_ELEMENTWISE },
		{ "triton_poi_fused_add_mul_0", ISC_KC_ELEMENTWISE },
		{ "layernorm_fwd", ISC_KC_ELEMENTWISE },
		{ "void at::native::unrolled_elementwise_kernel<direct_copy_kernel_cuda>",
		  ISC_KC_COPY },
		{ "CatArrayBatchedCopy", ISC_KC_COPY },
		{ "my_custom_kernel", ISC_KC_OTHER },
		{ "", ISC_KC_OTHER },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum isc_kclass c = isc_kernel_class(cases[i].name);
		cr_expect_eq(c, cases[i].c, "%s: %s, expected %s", cases[i].name,
			     isc_kclass_name(c), isc_kclass_name(cases[i].c));
	}
	cr_assert_eq(isc_kernel_class(NULL), ISC_KC_OTHER);
	cr_assert_str_eq(isc_kclass_name(ISC_KC_COMMUNICATION), "communication");
}

/* The gpu-bound workload's recorded trace: gemm_bf16_large, flash_attention_fwd and
 * layernorm_fwd kernels, pid 2171 on host vm. */
#define GPU_SEG "trace.2171.seg-000001.spill"

/* The analyzer's JSON breakdown of the same trace: category -> share. */
static double analyzer_share(const char *trace, const char *category)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd),
		 "%s -f json %s | python3 -c \"import json,sys; r=json.load(sys.stdin); "
		 "b=r['timeline_breakdown']; t=sum(c['duration_us'] for c in b); "
		 "print([c['duration_us']/t for c in b if c['category']=='%s'][0])\"",
		 env("ISC_ANALYZE"), trace, category);
	char *out = sh(cmd, NULL);
	double v = atof(out);
	free(out);
	return v;
}

Test(watch, once_metrics_match_the_analyzer)
{
	char src[4200];
	snprintf(src, sizeof(src), "%s/workloads/gpu-bound.json.gz", env("ISC_DATA"));
	fleet_put_segment(src, in_dir(GPU_SEG));
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "%s --once %s", env("ISC_WATCH"), fleet_dir);
	int st;
	char *m = sh(cmd, &st);
	cr_assert_eq(st, 0, "%s", m);
	const char *lp = "{host=\"vm\",pid=\"2171\"";
	char key[256];
	double sum = 0;
	static const char *const cats[] = { "cpu_preprocessing", "h2d_copy", "gpu_compute",
					    "d2h_copy",		 "idle",     "framework_overhead" };
	for (size_t i = 0; i < 6; i++) {
		snprintf(key, sizeof(key), "inferscope_breakdown_ratio%s,category=\"%s\"} ", lp,
			 cats[i]);
		double v = sample(m, key);
		cr_assert(!isnan(v), "no %s in\n%s", key, m);
		double want = analyzer_share(in_dir(GPU_SEG), cats[i]);
		cr_expect(fabs(v - want) < 1e-6, "%s: %g, the analyzer says %g", cats[i], v, want);
		sum += v;
	}
	cr_expect(fabs(sum - 1) < 1e-9, "the shares sum to %g", sum);
	snprintf(key, sizeof(key), "inferscope_verdict%s,inferscope_verdict=\"gpu_bound\"} ", lp);
	cr_expect_eq(sample(m, key), 1);
	snprintf(key, sizeof(key), "inferscope_verdict%s,inferscope_verdict=\"cpu_bound\"} ", lp);
	cr_expect_eq(sample(m, key), 0);
	/* 120 x 2 ms gemm, 60 x 1.5 ms attention, 60 x 0.3 ms layernorm (the workload's
	 * registered durations: tests/workloads/c/gpu-bound.c) */
	static const struct {
		const char *cat;
		double s;
	} gpu[] = { { "gemm", 0.240 },
		    { "attention", 0.090 },
		    { "elementwise", 0.018 },
		    { "communication", 0 },
		    { "other", 0 } };
	for (size_t i = 0; i < sizeof(gpu) / sizeof(gpu[0]); i++) {
		snprintf(key, sizeof(key),
			 "inferscope_gpu_seconds_total%s,gpu=\"0\",category=\"%s\"} ", lp,
			 gpu[i].cat);
		cr_expect(fabs(sample(m, key) - gpu[i].s) < 1e-9, "%s: %g s, expected %g s",
			  gpu[i].cat, sample(m, key), gpu[i].s);
	}
	snprintf(key, sizeof(key), "inferscope_cuda_launches_total%s} ", lp);
	cr_expect_eq(sample(m, key), 240, "one launch per kernel");
	snprintf(key, sizeof(key), "inferscope_segments_total%s} ", lp);
	cr_expect_eq(sample(m, key), 1);
	snprintf(key, sizeof(key), "inferscope_gpu_busy_ratio%s,gpu=\"0\"} ", lp);
	double busy = sample(m, key);
	cr_expect(busy > 0.97 && busy <= 1.0, "GPU busy %g", busy);
	cr_expect_eq(sample(m, "inferscope_watch_segments_total{result=\"analysed\"} "), 1);
	cr_expect(strstr(m, "# EOF") == NULL, "text 0.0.4 has no EOF marker");
	free(m);
	/* OpenMetrics: counters' families without _total, the verdict a stateset, EOF */
	snprintf(cmd, sizeof(cmd), "%s --once --openmetrics %s", env("ISC_WATCH"), fleet_dir);
	m = sh(cmd, &st);
	cr_assert_eq(st, 0);
	cr_expect_not_null(strstr(m, "# TYPE inferscope_verdict stateset\n"));
	cr_expect_not_null(strstr(m, "# TYPE inferscope_cuda_launches counter\n"));
	cr_expect_not_null(strstr(m, "\ninferscope_cuda_launches_total{"));
	size_t n = strlen(m);
	cr_expect(n > 6 && strcmp(m + n - 6, "# EOF\n") == 0, "ends with # EOF");
	free(m);
}

Test(watch, profile_beside_each_segment)
{
	char src[4200];
	snprintf(src, sizeof(src), "%s/stacks/stacks-gpu.json", env("ISC_DATA"));
	fleet_put_segment(src, in_dir("app.31.seg-000002.spill"));
	char cmd[12000];
	snprintf(cmd, sizeof(cmd), "%s --once %s >/dev/null", env("ISC_WATCH"), fleet_dir);
	int st;
	free(sh(cmd, &st));
	cr_assert_eq(st, 0);
	const char *pb = in_dir("app.31.seg-000002.spill.pb.gz");
	if (!fleet_exists(pb)) {
		cr_skip_test("pprof is not built in (meson -Dpprof=enabled)");
	}
	/* the same bytes as inferscope-analyze -f pprof: one writer, deterministic */
	snprintf(cmd, sizeof(cmd), "%s -f pprof -o %s %s && cmp %s %s && stat -c %%a %s",
		 env("ISC_ANALYZE"), in_dir("want.pb.gz"), in_dir("app.31.seg-000002.spill"),
		 in_dir("want.pb.gz"), pb, pb);
	char *out = sh(cmd, &st);
	cr_assert_eq(st, 0, "the watcher's profile differs from -f pprof's: %s", out);
	cr_expect_str_eq(out, "600\n", "a profile is private like its segment");
	free(out);
	const char *go = getenv("ISC_GO");
	if (go != NULL && *go != '\0') {
		snprintf(cmd, sizeof(cmd),
			 "HOME=%s GOCACHE=%s/gocache %s tool pprof -top -sample_index=cpu %s 2>&1",
			 fleet_dir, fleet_dir, go, pb);
		out = sh(cmd, &st);
		cr_expect_eq(st, 0, "go tool pprof: %s", out);
		cr_expect_not_null(strstr(out, "Type: cpu"), "%s", out);
		free(out);
	}
}

/* The server's address from its log ("listening on http://ADDR/metrics"). */
static char *start_watch(pid_t *pid, const char *log)
{
	const char *argv[] = { env("ISC_WATCH"), "--listen", "127.0.0.1:0", "--rescan", "0.5",
			       "--verbose",	 fleet_dir,  NULL };
	*pid = fleet_spawn(argv, log);
	char *addr = fleet_wait_line(log, "listening on http://", 60);
	cr_assert_not_null(addr, "the watcher did not start");
	*strchr(addr, '/') = '\0';
	return addr;
}

/* Polls /metrics until needle appears (bounded); returns the exposition. */
static char *wait_metrics(const char *addr, const char *needle)
{
	for (int i = 0; i < 600; i++) {
		char *body = NULL;
		if (fleet_http(addr, "GET", "/metrics", NULL, &body, NULL, NULL) == 200 &&
		    strstr(body, needle) != NULL) {
			return body;
		}
		free(body);
		fleet_sleep_ms(100);
	}
	cr_assert_fail("no '%s' on /metrics within 60 s", needle);
	return NULL;
}

Test(watch, live_server)
{
	char src[4200];
	snprintf(src, sizeof(src), "%s/workloads/gpu-bound.json.gz", env("ISC_DATA"));
	fleet_put_segment(src, in_dir(GPU_SEG));
	pid_t pid;
	char *addr = start_watch(&pid, in_dir("watch.log"));
	char *body = wait_metrics(addr, "inferscope_segments_total{host=\"vm\",pid=\"2171\"} 1");
	free(body);
	char *ctype = NULL;
	int s = fleet_http(
		addr, "GET", "/metrics",
		"application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5", &body,
		NULL, &ctype);
	cr_assert_eq(s, 200);
	cr_expect_str_eq(ctype, "application/openmetrics-text; version=1.0.0; charset=utf-8");
	cr_expect_not_null(strstr(body, "# EOF\n"));
	free(body);
	free(ctype);
	s = fleet_http(addr, "GET", "/metrics", NULL, &body, NULL, &ctype);
	cr_expect_str_eq(ctype, "text/plain; version=0.0.4; charset=utf-8");
	free(ctype);
	/* promtool's linter reads the 0.0.4 exposition */
	const char *promtool = getenv("ISC_PROMTOOL");
	if (promtool != NULL && *promtool != '\0') {
		FILE *f = fopen(in_dir("metrics.txt"), "w");
		fputs(body, f);
		fclose(f);
		char cmd[9000];
		snprintf(cmd, sizeof(cmd), "%s check metrics < %s 2>&1", promtool,
			 in_dir("metrics.txt"));
		int st;
		char *out = sh(cmd, &st);
		cr_expect_eq(st, 0, "promtool check metrics: %s", out);
		cr_expect_str_eq(out, "", "promtool has something to say: %s", out);
		free(out);
	}
	free(body);
	cr_expect_eq(fleet_http(addr, "GET", "/nothing", NULL, NULL, NULL, NULL), 404);
	cr_expect_eq(fleet_http(addr, "POST", "/metrics", NULL, NULL, NULL, NULL), 405);
	s = fleet_http(addr, "HEAD", "/metrics", NULL, &body, NULL, NULL);
	cr_expect_eq(s, 200);
	cr_expect_str_eq(body, "", "HEAD has no body");
	free(body);
	/* a second segment of the same process closes (inotify): the totals add up, the
	 * gauges are the latest segment's */
	fleet_put_segment(src, in_dir("trace.2171.seg-000002.spill"));
	body = wait_metrics(addr, "inferscope_segments_total{host=\"vm\",pid=\"2171\"} 2");
	cr_expect_eq(sample(body, "inferscope_cuda_launches_total{host=\"vm\",pid=\"2171\"} "),
		     480);
	cr_expect_eq(sample(body, "inferscope_verdict{host=\"vm\",pid=\"2171\","
				  "inferscope_verdict=\"gpu_bound\"} "),
		     1);
	free(body);
	/* the profile of a segment, over HTTP too */
	const char *pb = in_dir("trace.2171.seg-000002.spill.pb.gz");
	if (fleet_exists(pb)) {
		size_t len = 0;
		s = fleet_http(addr, "GET",
			       "/debug/pprof/profile?segment=trace.2171.seg-000002.spill", NULL,
			       &body, &len, NULL);
		cr_expect_eq(s, 200);
		cr_expect(len > 2 && (unsigned char)body[0] == 0x1f &&
				  (unsigned char)body[1] == 0x8b,
			  "gzip'd profile");
		free(body);
		cr_expect_eq(fleet_http(addr, "GET", "/debug/pprof/profile?segment=../x.spill",
					NULL, NULL, NULL, NULL),
			     404);
		/* the recorder drops the segment past its bound: its profile goes too */
		cr_assert_eq(unlink(in_dir("trace.2171.seg-000002.spill")), 0);
		for (int i = 0; i < 600 && fleet_exists(pb); i++) {
			fleet_sleep_ms(100);
		}
		cr_expect_not(fleet_exists(pb), "the profile outlived its segment");
	}
	/* a segment that is not a trace: counted as failed, the server goes on */
	FILE *f = fopen(in_dir("trace.99.seg-000001.spill"), "w");
	fputs("not a trace\n", f);
	fclose(f);
	body = wait_metrics(addr, "inferscope_watch_segments_total{result=\"failed\"} 1");
	free(body);
	int st = fleet_stop(pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "SIGTERM: exit 0 (status %#x)", st);
	free(addr);
}

/* A TCP connection to "127.0.0.1:PORT"; -1 when refused. */
static int tcp_connect(const char *addr)
{
	const char *colon = strrchr(addr, ':');
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(atoi(colon + 1)) };
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

#define FLOOD 50

struct flood {
	const char *addr;
	atomic_bool stop, running;
	atomic_int connected, cut;
};

/* FLOOD loopback clients that send a request line, then a header byte each every
 * 500 ms, never ending the head, for 40 s at most; counts those the server closed. */
static void *flood_main(void *arg)
{
	struct flood *f = arg;
	int fd[FLOOD];
	bool cut[FLOOD] = { false };
	for (int i = 0; i < FLOOD; i++) {
		fd[i] = tcp_connect(f->addr);
		if (fd[i] < 0 ||
		    send(fd[i], "GET /metrics HTTP/1.1\r\nX", 25, MSG_NOSIGNAL) != 25) {
			cut[i] = true;
			atomic_fetch_add(&f->cut, 1);
		}
		atomic_fetch_add(&f->connected, 1);
	}
	for (int k = 0; k < 80 && !atomic_load(&f->stop); k++) {
		fleet_sleep_ms(500);
		for (int i = 0; i < FLOOD; i++) {
			char b;
			if (cut[i]) {
				continue;
			}
			ssize_t r = recv(fd[i], &b, 1, MSG_DONTWAIT);
			if (r == 0 || (r < 0 && errno != EAGAIN) ||
			    send(fd[i], "x", 1, MSG_NOSIGNAL) != 1) {
				cut[i] = true;
				atomic_fetch_add(&f->cut, 1);
			}
		}
	}
	atomic_store(&f->running, false);
	for (int i = 0; i < FLOOD; i++) {
		if (fd[i] >= 0) {
			close(fd[i]);
		}
	}
	return NULL;
}

Test(watch, slow_clients_delay_no_scrape)
{
	pid_t pid;
	char *addr = start_watch(&pid, in_dir("watch.log"));
	/* a 16 KiB head sent as a client does, in pieces: the answer is 431, read after the
	 * client has sent it all, not a reset that loses it */
	static char big[16 * 1024];
	int n = snprintf(big, sizeof(big), "GET /metrics HTTP/1.1\r\nX-Big: ");
	memset(big + n, 'a', sizeof(big) - 5 - (size_t)n);
	memcpy(big + sizeof(big) - 5, "\r\n\r\n", 4);
	int fd = tcp_connect(addr);
	cr_assert(fd >= 0);
	for (size_t off = 0; off < sizeof(big) - 1;) {
		size_t piece = sizeof(big) - 1 - off < 4096 ? sizeof(big) - 1 - off : 4096;
		ssize_t w = send(fd, big + off, piece, MSG_NOSIGNAL);
		cr_assert(w > 0, "sending the head: %s", strerror(errno));
		off += (size_t)w;
		fleet_sleep_ms(20);
	}
	shutdown(fd, SHUT_WR);
	char reply[256] = "";
	struct pollfd p = { fd, POLLIN, 0 };
	ssize_t got = poll(&p, 1, 30000) == 1 ? recv(fd, reply, sizeof(reply) - 1, 0) : -1;
	close(fd);
	cr_assert(got > 0, "no answer to a head over 8 KiB: %s", got < 0 ? strerror(errno) : "EOF");
	cr_assert_eq(strncmp(reply, "HTTP/1.1 431 ", 13), 0, "%s", reply);

	struct flood f = { .addr = addr };
	atomic_store(&f.running, true);
	pthread_t th;
	pthread_create(&th, NULL, flood_main, &f);
	while (atomic_load(&f.connected) < FLOOD) {
		fleet_sleep_ms(10);
	}
	char *body = NULL;
	int s = fleet_http(addr, "GET", "/metrics", NULL, &body, NULL, NULL);
	bool during = atomic_load(&f.running);
	free(body);
	cr_assert_eq(s, 200, "the scrape behind the flood failed");
	cr_assert(during, "the scrape was answered only after the flood ended");
	/* every trickler is cut: evicted, or at its absolute deadline, bytes arriving or not */
	while (atomic_load(&f.running) && atomic_load(&f.cut) < FLOOD) {
		fleet_sleep_ms(50);
	}
	int cut = atomic_load(&f.cut);
	atomic_store(&f.stop, true);
	pthread_join(th, NULL);
	cr_assert_eq(cut, FLOOD, "only %d of %d trickling clients were cut", cut, FLOOD);
	fleet_stop(pid);
	free(addr);
}

Test(watch, usage_errors)
{
	char cmd[8192];
	int st;
	snprintf(cmd, sizeof(cmd), "%s 2>&1", env("ISC_WATCH"));
	char *out = sh(cmd, &st);
	cr_expect_eq(st, 2);
	cr_expect_not_null(strstr(out, "no directory given"), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s --once /nonexistent/dir 2>&1", env("ISC_WATCH"));
	out = sh(cmd, &st);
	cr_expect_eq(st, 3);
	cr_expect_not_null(strstr(out, "/nonexistent/dir"), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s --listen nonsense %s 2>&1", env("ISC_WATCH"), fleet_dir);
	out = sh(cmd, &st);
	cr_expect_eq(st, 3);
	cr_expect_not_null(strstr(out, "HOST:PORT"), "%s", out);
	free(out);
	/* the launcher hands `inferscope watch` on */
	snprintf(cmd, sizeof(cmd), "%s watch --help", env("ISC_LAUNCHER"));
	out = sh(cmd, &st);
	cr_expect_eq(st, 0);
	cr_expect_not_null(strstr(out, "Usage: inferscope watch"), "%s", out);
	free(out);
}

/* A real spill: a workload on the simulated GPU under the preload, killed with SIGKILL,
 * its spill renamed as the recorder closes a segment (the same format). */
Test(watch, spill_of_a_killed_process_as_a_segment)
{
	const char *bin = getenv("ISC_WORKLOADS"), *preload = getenv("ISC_PRELOAD");
	if (bin == NULL || *bin == '\0' || preload == NULL || *preload == '\0') {
		cr_skip_test("the simulated-GPU workloads are not built (no CUDA headers)");
	}
	char cmd[8192];
	snprintf(cmd, sizeof(cmd),
		 "cd %s && (INFERSCOPE_OUTPUT=app.json LD_PRELOAD=%s %s/wl-sync-every-kernel "
		 ">/dev/null 2>&1 & p=$!; for i in $(seq 200); do ls app.$p.spill && break; "
		 "sleep 0.02; done >/dev/null; sleep 0.1; kill -9 $p; wait $p; "
		 "for f in app.*.spill; do mv $f ${f%%.spill}.seg-000001.spill && echo ${f#app.}; "
		 "done) 2>/dev/null",
		 fleet_dir, preload, bin);
	char *out = sh(cmd, NULL);
	int pid = atoi(out);
	free(out);
	if (pid <= 0) {
		cr_skip_test("the killed workload left no spill file");
	}
	snprintf(cmd, sizeof(cmd), "%s --once %s", env("ISC_WATCH"), fleet_dir);
	int st;
	char *m = sh(cmd, &st);
	cr_assert_eq(st, 0, "%s", m);
	char host[256] = "", key[512];
	gethostname(host, sizeof(host) - 1);
	cr_expect_eq(sample(m, "inferscope_watch_segments_total{result=\"analysed\"} "), 1, "%s",
		     m);
	cr_expect_eq(sample(m, "inferscope_watch_segments_total{result=\"failed\"} "), 0);
	snprintf(key, sizeof(key), "inferscope_segments_total{host=\"%s\",pid=\"%d\"} ", host, pid);
	cr_expect_eq(sample(m, key), 1, "no %s in\n%s", key, m);
	snprintf(key, sizeof(key), "inferscope_cuda_launches_total{host=\"%s\",pid=\"%d\"} ", host,
		 pid);
	double launches = sample(m, key);
	cr_expect(launches > 0, "launches recorded before the kill: %g", launches);
	/* one cudaDeviceSynchronize per kernel: as many syncs as launches, give or take the
	 * iteration the kill cut */
	snprintf(key, sizeof(key), "inferscope_cuda_syncs_total{host=\"%s\",pid=\"%d\"} ", host,
		 pid);
	double syncs = sample(m, key);
	cr_expect(fabs(syncs - launches) <= 2, "%g syncs for %g launches", syncs, launches);
	free(m);
}

/* A hard link makes a name appear with IN_CREATE alone, which the watcher does not
 * follow (a segment is closed by a rename): only the periodic listing finds it. */
Test(watch, rescan_finds_what_inotify_misses)
{
	char src[4200];
	snprintf(src, sizeof(src), "%s/workloads/gpu-bound.json.gz", env("ISC_DATA"));
	pid_t pid;
	char *addr = start_watch(&pid, in_dir("watch.log"));
	fleet_put_segment(src, in_dir("staging.json"));
	cr_assert_eq(link(in_dir("staging.json"), in_dir(GPU_SEG)), 0);
	char *body = wait_metrics(addr, "inferscope_segments_total{host=\"vm\",pid=\"2171\"} 1");
	free(body);
	int st = fleet_stop(pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	free(addr);
}
