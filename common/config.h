/* SPDX-License-Identifier: MIT */
/*
 * Configuration: every INFERSCOPE_* variable lives in one table (config.c), is read
 * once at start and snapshotted here. A bad value gets one clear line on stderr and
 * the documented default; it never stops the host program. The table is also what
 * the trace's `configuration` object and the man page's ENVIRONMENT section list
 * (a test checks that every entry is documented in man/libinferscope.7).
 */
#ifndef ISC_CONFIG_H
#define ISC_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ISC_CFG_VALUE_MAX 256

struct isc_config {
	bool enable;
	char output[PATH_MAX];
	int debug;
	uint64_t max_memory;  /* bytes of event chunks held in memory */
	bool spill;	      /* the collector spills during the run */
	uint64_t delay_ns;    /* capture starts this long after start */
	uint64_t duration_ns; /* and lasts this long (0 = until exit) */
	bool start_paused;    /* capture starts only at inferscope_capture_start() */
	int snapshot_signal;  /* 0 = none */
	bool handle_signals;  /* flush on SIGTERM/SIGINT when their disposition is default */
	uint64_t tick_ns;     /* collector period */
	/* the flight recorder (INFERSCOPE_MODE=continuous, preload/recorder.c) */
	char mode[16];	       /* "default" or "continuous" */
	bool continuous;       /* mode is "continuous" */
	uint64_t segment_ns;   /* a segment is closed after this long */
	uint64_t segment_size; /* or when it would grow beyond this many bytes */
	char retain[64];       /* INFERSCOPE_RETAIN as given */
	uint64_t retain_ns;    /* keep closed segments covering this long (0: no bound) */
	uint64_t retain_bytes; /* keep at most this many bytes of segments (0: no bound) */
	bool listen;	       /* answer `inferscope capture` on a Unix socket */
	/* host hooks (issue: host interposition) */
	bool hook_malloc;
	bool hook_syscalls;
	uint64_t malloc_sample;	   /* mean bytes between sampled allocations; 0 = every one */
	uint64_t malloc_threshold; /* allocations at least this large are always events */
	uint64_t syscall_threshold_ns;
	unsigned stacks;	/* frames per stack, 0 = off */
	unsigned cpu_sample_hz; /* CPU samples per second of each thread's CPU time, 0 = off */
	bool libunwind;		/* CPU samples may fall back to libunwind (INFERSCOPE_LIBUNWIND) */
	/* CUDA */
	bool hook_cuda;
	bool cupti;
	char cupti_lib[PATH_MAX];
	bool nvtx;
	uint64_t cupti_buffer_size; /* bytes of one CUPTI activity buffer */
	int cupti_buffers;	    /* buffers CUPTI may hold at once; then it drops records */
	bool cupti_clock_callback;  /* CUPTI reads our clock; else a calibrated offset */
};

enum isc_cfg_type {
	ISC_CFG_BOOL,
	ISC_CFG_INT,
	ISC_CFG_SIZE,	  /* bytes, with K/M/G suffixes */
	ISC_CFG_DURATION, /* seconds, with ns/us/ms/s/m suffixes; stored in ns */
	ISC_CFG_STRING,	  /* a path or name */
	ISC_CFG_SIGNAL,	  /* SIGUSR2, USR2 or 12; empty = none */
};

struct isc_cfg_entry {
	const char *name;
	enum isc_cfg_type type;
	size_t offset;	  /* into struct isc_config */
	size_t size;	  /* of the field (strings) */
	const char *def;  /* default, as a user would write it */
	int64_t min, max; /* for INT, SIZE, DURATION (ns) */
	const char *doc;  /* one line, for --help of the launcher and the man page */
};

extern struct isc_config isc_config;

/* The table, terminated by an entry with a NULL name. */
const struct isc_cfg_entry *isc_config_table(void);

/*
 * Whether this process runs in secure-execution mode (getauxval(AT_SECURE): a
 * set-user-ID or set-group-ID program, or one with file capabilities): its environment
 * is its caller's, who may lack the privileges it runs with.
 */
bool isc_config_secure(void);

/*
 * Fills cfg from getenv-like `get` (NULL = getenv; in secure-execution mode, no
 * variable at all: every default, and INFERSCOPE_ENABLE=0, so that a caller's
 * INFERSCOPE_OUTPUT cannot make a privileged program create or replace a file). Bad values are reported with
 * isc_error() and replaced by the default. Returns the number of bad values.
 * Effective values (as strings) are kept for isc_config_effective().
 */
int isc_config_load(struct isc_config *cfg, const char *(*get)(const char *name));

/* The effective value of entry i as a string, for the trace's configuration. */
const char *isc_config_effective(size_t i);

/* Parsers, exposed for tests. Return true on success. */
bool isc_parse_bool(const char *s, bool *out);
bool isc_parse_size(const char *s, uint64_t *out);
bool isc_parse_duration(const char *s, uint64_t *out_ns);
bool isc_parse_signal(const char *s, int *out);
bool isc_parse_int(const char *s, int64_t *out);
/* INFERSCOPE_RETAIN: a duration ("10m", "90s", "1h"), a size ("2G", "512M", "100K"),
 * or both separated by a comma. Lower-case m is minutes, upper-case M is MiB. */
bool isc_parse_retain(const char *s, uint64_t *ns, uint64_t *bytes);

#endif /* ISC_CONFIG_H */
