/* SPDX-License-Identifier: MIT */
/*
 * inferscope-watch (`inferscope watch DIR`): follows a directory of closed segments,
 * analyses each once with the analyzer's stages, keeps the latest result per process
 * (host and pid) and serves it as OpenMetrics on /metrics; writes each segment's CPU
 * samples and GPU time by launching stack as pprof beside it (SEGMENT.pb.gz), removed
 * with the segment. One thread: poll over the listening socket, the clients and
 * inotify; a segment is analysed between two polls (a scrape waits for at most one).
 * Exit codes: 0 (SIGTERM, SIGINT, or --once done), 2 usage, 3 the directory or the
 * address cannot be used.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "isc-config.h"
#include "watch/watch.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const struct option options[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "rescan", required_argument, NULL, 'r' },
	{ "no-pprof", no_argument, NULL, 'P' },
	{ "once", no_argument, NULL, '1' },
	{ "openmetrics", no_argument, NULL, 'O' },
	{ "thresholds", required_argument, NULL, 't' },
	{ "max-processes", required_argument, NULL, 'm' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: inferscope watch [OPTIONS] DIR\n"
		"Follows DIR, where processes recording with INFERSCOPE_MODE=continuous close\n"
		"their segments (BASE.PID.seg-NNNNNN.spill), analyses each closed segment once\n"
		"and serves the latest result of every process as OpenMetrics on /metrics.\n\n"
		"  -l, --listen ADDR:PORT  where to serve (default 127.0.0.1:9464; port 0 picks\n"
		"                          one; the address is printed on standard error)\n"
		"      --rescan SECONDS    list DIR this often besides inotify (default 10)\n"
		"      --no-pprof          do not write SEGMENT.pb.gz beside each segment\n"
		"      --once              analyse what DIR holds, print the metrics, exit\n"
		"      --openmetrics       with --once: OpenMetrics instead of text 0.0.4\n"
		"      --thresholds FILE   verdict thresholds, as inferscope-analyze takes them\n"
		"      --max-processes N   processes kept (default 4096; the least recently\n"
		"                          updated goes first)\n"
		"  -v, --verbose           one line per analysed segment on standard error\n"
		"  -h, --help              this text\n"
		"  -V, --version           the version\n\n"
		"HTTP: GET /metrics (OpenMetrics when the Accept header asks for it, else\n"
		"Prometheus text 0.0.4), GET /debug/pprof/profile?segment=NAME (NAME.pb.gz).\n"
		"Exit status: 0 stopped by SIGTERM/SIGINT or --once done, 2 usage error,\n"
		"3 DIR or the address cannot be used.\n");
}

static int parse_number(const char *opt, const char *arg, double lo, double hi, double *out)
{
	char *end = NULL;
	double v = strtod(arg, &end);
	if (*arg == '\0' || *end != '\0' || !(v >= lo && v <= hi)) {
		fprintf(stderr, "inferscope watch: %s: expected a number from %g to %g, got '%s'\n",
			opt, lo, hi, arg);
		return -1;
	}
	*out = v;
	return 0;
}

/* Returns -1 to go on, or an exit status. */
static int parse(int argc, char **argv, struct isc_watch_opts *o)
{
	int opt;
	double v;
	while ((opt = getopt_long(argc, argv, "l:vhV", options, NULL)) != -1) {
		switch (opt) {
		case 'l':
			o->listen = optarg;
			break;
		case 'r':
			if (parse_number("--rescan", optarg, 0.1, 86400, &v) < 0) {
				return 2;
			}
			o->rescan_ms = (int)(v * 1000);
			break;
		case 'P':
			o->pprof = false;
			break;
		case '1':
			o->once = true;
			break;
		case 'O':
			o->openmetrics = true;
			break;
		case 't':
			o->thresholds = optarg;
			break;
		case 'm':
			if (parse_number("--max-processes", optarg, 1, 1 << 20, &v) < 0) {
				return 2;
			}
			o->max_procs = (size_t)v;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("inferscope watch %s\n", ISC_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "inferscope watch: %s (see --help)\n",
			optind == argc ? "no directory given" : "one directory only");
		return 2;
	}
	o->dir = argv[optind];
	return -1;
}

int main(int argc, char **argv)
{
	struct isc_watch_opts o = {
		.listen = "127.0.0.1:9464", .rescan_ms = 10000, .pprof = true, .max_procs = 4096
	};
	int r = parse(argc, argv, &o);
	if (r >= 0) {
		return r;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: poll returns EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return isc_watch_run(&o, &stop);
}
