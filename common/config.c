/* SPDX-License-Identifier: MIT */
#include "common/config.h"

#include <signal.h>
#include <stdbool.h>
#include <sys/auxv.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

#define F(field) offsetof(struct isc_config, field), sizeof(((struct isc_config *)0)->field)
#define NS_PER_S 1000000000ll

/*
 * The table. Keep it in the order of man/libinferscope.7's ENVIRONMENT section.
 */
static const struct isc_cfg_entry table[] = {
	{ "INFERSCOPE_ENABLE", ISC_CFG_BOOL, F(enable), "1", 0, 0,
	  "0 turns the library into a pass-through: nothing is recorded or written" },
	{ "INFERSCOPE_OUTPUT", ISC_CFG_STRING, F(output), "trace.json", 0, 0,
	  "trace file of the process the user started; descendants write <stem>.<pid>.json beside "
	  "it" },
	{ "INFERSCOPE_DEBUG", ISC_CFG_INT, F(debug), "0", 0, 2,
	  "1 prints what the library does (files written, CUPTI status), 2 adds debug detail" },
	{ "INFERSCOPE_MAX_MEMORY", ISC_CFG_SIZE, F(max_memory), "256M", 1 << 20, 1ll << 40,
	  "memory for event buffers; when full, new events are dropped and counted" },
	{ "INFERSCOPE_SPILL", ISC_CFG_BOOL, F(spill), "1", 0, 0,
	  "1 writes full buffers to <output>.<pid>.spill while the process runs (survives "
	  "SIGKILL)" },
	{ "INFERSCOPE_DELAY", ISC_CFG_DURATION, F(delay_ns), "0", 0, 100000 * NS_PER_S,
	  "start recording this long after the process starts (e.g. 30s)" },
	{ "INFERSCOPE_DURATION", ISC_CFG_DURATION, F(duration_ns), "0", 0, 100000 * NS_PER_S,
	  "stop recording this long after recording started; 0 records until exit" },
	{ "INFERSCOPE_START_PAUSED", ISC_CFG_BOOL, F(start_paused), "0", 0, 0,
	  "1 records nothing until inferscope_capture_start() (or cudaProfilerStart())" },
	{ "INFERSCOPE_SNAPSHOT_SIGNAL", ISC_CFG_SIGNAL, F(snapshot_signal), "", 0, 0,
	  "signal (e.g. SIGUSR2) that writes a snapshot trace without stopping the process" },
	{ "INFERSCOPE_HANDLE_SIGNALS", ISC_CFG_BOOL, F(handle_signals), "0", 0, 0,
	  "1 writes the trace on SIGTERM/SIGINT when the program leaves them at their default" },
	{ "INFERSCOPE_TICK", ISC_CFG_DURATION, F(tick_ns), "10ms", 1000000, 10 * NS_PER_S,
	  "period of the collector thread (spilling, CPU-time samples)" },
	{ "INFERSCOPE_MODE", ISC_CFG_STRING, F(mode), "default", 0, 0,
	  "continuous keeps recording into rotating segment files (a flight recorder, bounded by "
	  "INFERSCOPE_RETAIN); default writes one trace at the end" },
	{ "INFERSCOPE_SEGMENT", ISC_CFG_DURATION, F(segment_ns), "10s", 10000000, 100000 * NS_PER_S,
	  "continuous mode: a segment is closed after this long" },
	{ "INFERSCOPE_SEGMENT_SIZE", ISC_CFG_SIZE, F(segment_size), "64M", 1 << 20, 1ll << 40,
	  "continuous mode: a segment is closed before it grows beyond this size" },
	{ "INFERSCOPE_RETAIN", ISC_CFG_STRING, F(retain), "1G", 0, 0,
	  "continuous mode: keep the newest segments covering this long (10m) or this many bytes "
	  "(2G), or both (10m,2G); older ones are deleted and counted" },
	{ "INFERSCOPE_LISTEN", ISC_CFG_BOOL, F(listen), "1", 0, 0,
	  "1 answers `inferscope capture` on a Unix socket in $XDG_RUNTIME_DIR/inferscope" },
	{ "INFERSCOPE_MALLOC", ISC_CFG_BOOL, F(hook_malloc), "1", 0, 0,
	  "0 turns off the malloc-family hooks" },
	{ "INFERSCOPE_MALLOC_SAMPLE", ISC_CFG_SIZE, F(malloc_sample), "512K", 0, 1ll << 40,
	  "mean bytes between sampled allocation events (Poisson byte sampling); 0 records all" },
	{ "INFERSCOPE_MALLOC_THRESHOLD", ISC_CFG_SIZE, F(malloc_threshold), "1M", 0, 1ll << 50,
	  "allocations of at least this size are always recorded" },
	{ "INFERSCOPE_SYSCALLS", ISC_CFG_BOOL, F(hook_syscalls), "1", 0, 0,
	  "0 turns off the system-call and wait hooks" },
	{ "INFERSCOPE_SYSCALL_THRESHOLD", ISC_CFG_DURATION, F(syscall_threshold_ns), "10us", 0,
	  10 * NS_PER_S, "system calls and waits at least this long are recorded as events" },
	{ "INFERSCOPE_STACKS", ISC_CFG_INT, F(stacks), "0", 0, 64,
	  "frames of call stack on sampled allocations and slow system calls; 0 = off" },
	{ "INFERSCOPE_CPU_SAMPLE", ISC_CFG_INT, F(cpu_sample_hz), "100", 0, 10000,
	  "CPU samples (native and Python stacks) per second of each thread's CPU time; 0 = off" },
	{ "INFERSCOPE_LIBUNWIND", ISC_CFG_BOOL, F(libunwind), "0", 0, 0,
	  "1 lets CPU samples fall back to libunwind where unwind tables end (it opens a pipe "
	  "the program can see)" },
	{ "INFERSCOPE_CUDA", ISC_CFG_BOOL, F(hook_cuda), "1", 0, 0,
	  "0 turns off the CUDA runtime hooks" },
	{ "INFERSCOPE_CUPTI", ISC_CFG_BOOL, F(cupti), "1", 0, 0,
	  "0 turns off the GPU timeline (CUPTI)" },
	{ "INFERSCOPE_CUPTI_LIB", ISC_CFG_STRING, F(cupti_lib), "", 0, 0,
	  "path of the libcupti to load (default: the one matching the loaded CUDA runtime)" },
	{ "INFERSCOPE_NVTX", ISC_CFG_BOOL, F(nvtx), "1", 0, 0,
	  "0 stops InferScope from taking NVTX ranges through NVTX_INJECTION64_PATH" },
	{ "INFERSCOPE_CUPTI_BUFFER_SIZE", ISC_CFG_SIZE, F(cupti_buffer_size), "4M", 1024, 1ll << 30,
	  "size of one CUPTI activity buffer" },
	{ "INFERSCOPE_CUPTI_BUFFERS", ISC_CFG_INT, F(cupti_buffers), "64", 1, 4096,
	  "CUPTI buffers held at once; beyond, CUPTI drops records and the trace counts them" },
	{ "INFERSCOPE_CUPTI_CLOCK_CALLBACK", ISC_CFG_BOOL, F(cupti_clock_callback), "1", 0, 0,
	  "0 leaves CUPTI on its own clock and shifts its timestamps by a calibrated offset" },
	{ NULL, 0, 0, 0, NULL, 0, 0, NULL },
};

#define N_ENTRIES (sizeof(table) / sizeof(table[0]) - 1)

struct isc_config isc_config;
static char effective[N_ENTRIES][ISC_CFG_VALUE_MAX];

const struct isc_cfg_entry *isc_config_table(void)
{
	return table;
}

const char *isc_config_effective(size_t i)
{
	return i < N_ENTRIES ? effective[i] : NULL;
}

static bool eq_nocase(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

bool isc_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "yes", "true", "on", NULL };
	static const char *const no[] = { "0", "no", "false", "off", NULL };
	for (int i = 0; yes[i]; i++) {
		if (eq_nocase(s, yes[i])) {
			*out = true;
			return true;
		}
		if (eq_nocase(s, no[i])) {
			*out = false;
			return true;
		}
	}
	return false;
}

bool isc_parse_int(const char *s, int64_t *out)
{
	char *end;
	if (*s == '\0') {
		return false;
	}
	long long v = strtoll(s, &end, 10);
	if (*end != '\0') {
		return false;
	}
	*out = v;
	return true;
}

/* A non-negative decimal number with an optional fraction, then a suffix. */
static bool parse_scaled(const char *s, const char *const *suffixes, const double *scales,
			 double default_scale, uint64_t *out)
{
	char *end;
	if (*s == '\0' || *s == '-' || *s == '+') {
		return false;
	}
	double v = strtod(s, &end);
	if (end == s || v != v) {
		return false;
	}
	double scale = default_scale;
	if (*end != '\0') {
		int i;
		for (i = 0; suffixes[i]; i++) {
			if (eq_nocase(end, suffixes[i])) {
				scale = scales[i];
				break;
			}
		}
		if (!suffixes[i]) {
			return false;
		}
	}
	double r = v * scale;
	if (r < 0 || r > 1.8e19) {
		return false;
	}
	*out = (uint64_t)(r + 0.5);
	return true;
}

bool isc_parse_size(const char *s, uint64_t *out)
{
	static const char *const suf[] = { "b", "k",  "kb",  "kib", "m",  "mb",	 "mib",
					   "g", "gb", "gib", "t",   "tb", "tib", NULL };
	static const double sc[] = { 1,
				     1024.0,
				     1024.0,
				     1024.0,
				     1048576.0,
				     1048576.0,
				     1048576.0,
				     1073741824.0,
				     1073741824.0,
				     1073741824.0,
				     1099511627776.0,
				     1099511627776.0,
				     1099511627776.0 };
	return parse_scaled(s, suf, sc, 1, out);
}

bool isc_parse_duration(const char *s, uint64_t *out_ns)
{
	static const char *const suf[] = { "ns", "us", "ms", "s", "m", "min", "h", NULL };
	static const double sc[] = { 1, 1e3, 1e6, 1e9, 60e9, 60e9, 3600e9 };
	return parse_scaled(s, suf, sc, 1e9, out_ns);
}

bool isc_parse_signal(const char *s, int *out)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = {
		{ "USR1", SIGUSR1 },   { "USR2", SIGUSR2 }, { "HUP", SIGHUP },
		{ "QUIT", SIGQUIT },   { "PROF", SIGPROF }, { "URG", SIGURG },
		{ "WINCH", SIGWINCH }, { NULL, 0 },
	};
	if (*s == '\0') {
		*out = 0;
		return true;
	}
	const char *n = (strncasecmp(s, "SIG", 3) == 0) ? s + 3 : s;
	for (int i = 0; sigs[i].name; i++) {
		if (eq_nocase(n, sigs[i].name)) {
			*out = sigs[i].sig;
			return true;
		}
	}
	int64_t v;
	if (n == s && isc_parse_int(s, &v) && v >= SIGRTMIN && v <= SIGRTMAX) {
		*out = (int)v;
		return true;
	}
	/* Real-time signals are fine too, by number; other numbers would collide with
	 * signals the program relies on (SIGSEGV, SIGCHLD...). */
	if (n == s && isc_parse_int(s, &v) && (v == SIGUSR1 || v == SIGUSR2)) {
		*out = (int)v;
		return true;
	}
	return false;
}

bool isc_parse_retain(const char *s, uint64_t *ns, uint64_t *bytes)
{
	static const char *const dsuf[] = { "ns", "us", "ms", "s", "m", "min", "h", NULL };
	static const double dsc[] = { 1, 1e3, 1e6, 1e9, 60e9, 60e9, 3600e9 };
	char part[64];
	*ns = 0;
	*bytes = 0;
	while (*s) {
		const char *comma = strchr(s, ',');
		size_t n = comma ? (size_t)(comma - s) : strlen(s);
		if (n == 0 || n >= sizeof(part)) {
			return false;
		}
		memcpy(part, s, n);
		part[n] = '\0';
		/* the last character decides: a duration ends in s, m, n (min) or h, all in
		 * lower case; a size in a digit or an upper-case unit (M, G, B, iB) */
		char last = part[n - 1];
		bool duration = last == 's' || last == 'm' || last == 'n' || last == 'h';
		uint64_t v;
		if (duration) {
			if (!parse_scaled(part, dsuf, dsc, 1e9, &v) || v == 0) {
				return false;
			}
			*ns = v;
		} else {
			if (!isc_parse_size(part, &v) || v < (1u << 20)) {
				return false; /* a bare number is bytes; at least 1 MiB */
			}
			*bytes = v;
		}
		s += n;
		if (*s == ',') {
			s++;
		}
	}
	return *ns || *bytes;
}

static const char *type_hint(enum isc_cfg_type t)
{
	switch (t) {
	case ISC_CFG_BOOL:
		return "0 or 1";
	case ISC_CFG_INT:
		return "an integer";
	case ISC_CFG_SIZE:
		return "a size such as 512K or 256M";
	case ISC_CFG_DURATION:
		return "a duration such as 10us, 500ms or 30s";
	case ISC_CFG_SIGNAL:
		return "a signal such as SIGUSR2";
	case ISC_CFG_STRING:
		return "a path";
	}
	return "a value";
}

/* Parses one value into its field; false when the value is not acceptable. */
static bool apply(struct isc_config *cfg, const struct isc_cfg_entry *e, const char *v)
{
	char *field = (char *)cfg + e->offset;
	int64_t i;
	uint64_t u;

	switch (e->type) {
	case ISC_CFG_BOOL:
		return isc_parse_bool(v, (bool *)field);
	case ISC_CFG_INT:
		if (!isc_parse_int(v, &i) || i < e->min || i > e->max) {
			return false;
		}
		*(int *)field = (int)i; /* int and unsigned fields alike: range-checked above */
		return true;
	case ISC_CFG_SIZE:
	case ISC_CFG_DURATION:
		if (!(e->type == ISC_CFG_SIZE ? isc_parse_size(v, &u)
					      : isc_parse_duration(v, &u))) {
			return false;
		}
		if ((int64_t)u < e->min || (int64_t)u > e->max) {
			return false;
		}
		*(uint64_t *)field = u;
		return true;
	case ISC_CFG_SIGNAL:
		return isc_parse_signal(v, (int *)field);
	case ISC_CFG_STRING:
		if (strlen(v) >= e->size) {
			return false;
		}
		strcpy(field, v);
		return true;
	}
	return false;
}

static void keep(size_t i, const char *v)
{
	size_t n = strlen(v);
	if (n >= ISC_CFG_VALUE_MAX) {
		n = ISC_CFG_VALUE_MAX - 1;
	}
	memcpy(effective[i], v, n);
	effective[i][n] = '\0';
}

static size_t entry_index(const char *name)
{
	for (size_t i = 0; i < N_ENTRIES; i++) {
		if (strcmp(table[i].name, name) == 0) {
			return i;
		}
	}
	return 0;
}

/* INFERSCOPE_MODE and INFERSCOPE_RETAIN are strings with a grammar of their own. */
static int check_recorder(struct isc_config *cfg)
{
	int bad = 0;
	size_t im = entry_index("INFERSCOPE_MODE"), ir = entry_index("INFERSCOPE_RETAIN");
	if (strcmp(cfg->mode, "default") != 0 && strcmp(cfg->mode, "continuous") != 0) {
		isc_error("INFERSCOPE_MODE='%s' is not valid (expected default or continuous); "
			  "using the default 'default'",
			  cfg->mode);
		apply(cfg, &table[im], table[im].def);
		keep(im, table[im].def);
		bad++;
	}
	cfg->continuous = strcmp(cfg->mode, "continuous") == 0;
	if (!isc_parse_retain(cfg->retain, &cfg->retain_ns, &cfg->retain_bytes)) {
		isc_error(
			"INFERSCOPE_RETAIN='%s' is not valid (expected a duration such as 10m, a "
			"size of at least 1M such as 2G, or both: 10m,2G); using the default '%s'",
			cfg->retain, table[ir].def);
		apply(cfg, &table[ir], table[ir].def);
		keep(ir, table[ir].def);
		isc_parse_retain(cfg->retain, &cfg->retain_ns, &cfg->retain_bytes);
		bad++;
	}
	return bad;
}

bool isc_config_secure(void)
{
	return getauxval(AT_SECURE) != 0;
}

/* Secure execution: no variable is read (the caller's), and the library is off. */
static const char *none(const char *name)
{
	return strcmp(name, "INFERSCOPE_ENABLE") == 0 ? "0" : NULL;
}

int isc_config_load(struct isc_config *cfg, const char *(*get)(const char *name))
{
	int bad = 0;

	if (get == NULL && isc_config_secure()) {
		get = none;
	}
	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < N_ENTRIES; i++) {
		const struct isc_cfg_entry *e = &table[i];
		const char *v = get ? get(e->name) : getenv(e->name);
		apply(cfg, e, e->def);
		keep(i, e->def);
		if (v == NULL) {
			continue;
		}
		if (apply(cfg, e, v)) {
			keep(i, v);
			continue;
		}
		apply(cfg, e, e->def);
		bad++;
		isc_error("%s='%s' is not valid (expected %s); using the default '%s'", e->name, v,
			  type_hint(e->type), e->def);
	}
	bad += check_recorder(cfg);
	/* An empty output name cannot be written: the default is the documented one. */
	if (cfg->output[0] == '\0') {
		isc_error("INFERSCOPE_OUTPUT is empty; using the default '%s'", table[1].def);
		apply(cfg, &table[1], table[1].def);
		keep(1, table[1].def);
		bad++;
	}
	return bad;
}
