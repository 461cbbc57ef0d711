/* SPDX-License-Identifier: MIT */
/*
 * The tokenizer alone (analyzer/base/json-scan.c, no callbacks) over the "events" array of
 * a trace in memory, on 1..N threads each scanning a part split at a line that starts an
 * event, as the parallel reader splits: the tokenizing speed docs/benchmarks.md compares
 * with simdjson's. Usage: scan-bench TRACE [THREADS] [ROUNDS]; prints one line per thread
 * count with the best of ROUNDS (default 5).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyzer/base/json-scan.h"

struct job {
	const unsigned char *p;
	size_t n;
	bool first;
	int status;
};

static void *scan(void *arg)
{
	struct job *j = arg;
	static const yajl_callbacks none;
	struct isc_jscan *s = malloc(sizeof(*s));
	isc_jscan_init(s, &none, NULL);
	isc_jscan_enter_array(s, j->first);
	size_t used = 0;
	j->status = isc_jscan_feed(s, j->p, j->n, true, &used);
	isc_jscan_finish(s);
	free(s);
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The start of the line at or after `at` that begins an event (after "},\n"). */
static size_t line_start(const unsigned char *d, size_t at, size_t end)
{
	for (size_t i = at; i + 1 < end; i++) {
		if (d[i] == '\n' && d[i + 1] == '{' && i >= 2 && d[i - 1] == ',' &&
		    d[i - 2] == '}') {
			return i + 1;
		}
	}
	return end;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: scan-bench TRACE [THREADS] [ROUNDS]\n");
		return 2;
	}
	int max_threads = argc > 2 ? atoi(argv[2]) : 2, rounds = argc > 3 ? atoi(argv[3]) : 5;
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(argv[1]);
		return 1;
	}
	size_t len = (size_t)st.st_size;
	const unsigned char *d = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (d == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	const unsigned char *ev = memmem(d, len < 65536 ? len : 65536, "\"events\":[", 10);
	if (ev == NULL) {
		fprintf(stderr, "%s: no \"events\" array in the first 64 KiB\n", argv[1]);
		return 1;
	}
	/* The events end at the last "}]" (gen-trace's "relationships" and "stacks" hold none). */
	size_t from = (size_t)(ev - d) + 10, end = len;
	while (end > from + 1 && !(d[end - 2] == '}' && d[end - 1] == ']')) {
		end--;
	}
	end = end > from + 1 ? end - 1 : from;
	size_t bytes = end - from;
	for (int t = 1; t <= max_threads && t <= 64; t++) {
		struct job jobs[64];
		size_t start = from;
		for (int k = 0; k < t; k++) {
			size_t stop =
				k + 1 < t
					? line_start(d, from + bytes * (size_t)(k + 1) / (size_t)t,
						     end)
					: end;
			jobs[k] =
				(struct job){ .p = d + start, .n = stop - start, .first = k == 0 };
			start = stop;
		}
		double best = 1e30;
		for (int r = 0; r < rounds; r++) {
			pthread_t tid[64];
			double t0 = now();
			for (int k = 0; k < t; k++) {
				pthread_create(&tid[k], NULL, scan, &jobs[k]);
			}
			for (int k = 0; k < t; k++) {
				pthread_join(tid[k], NULL);
			}
			double dt = now() - t0;
			best = dt < best ? dt : best;
			for (int k = 0; k < t; k++) {
				if (jobs[k].status != ISC_JSCAN_OK) {
					fprintf(stderr, "part %d: not valid JSON\n", k);
					return 1;
				}
			}
		}
		printf("tokenizer, %d thread%s: %.1f MB in %.3f s (best of %d): %.0f MB/s\n", t,
		       t > 1 ? "s" : "", (double)bytes / 1e6, best, rounds,
		       (double)bytes / 1e6 / best);
	}
	return 0;
}
