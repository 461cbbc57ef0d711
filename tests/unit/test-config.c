/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "common/config.h"

static const char *const *fake_env;

static const char *fake_get(const char *name)
{
	size_t n = strlen(name);
	for (const char *const *e = fake_env; e && *e; e++) {
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') {
			return *e + n + 1;
		}
	}
	return NULL;
}

Test(config, defaults)
{
	struct isc_config c;
	fake_env = NULL;
	cr_assert_eq(isc_config_load(&c, fake_get), 0);
	cr_assert(c.enable);
	cr_assert_str_eq(c.output, "trace.json");
	cr_assert_eq(c.max_memory, 256ull << 20);
	cr_assert_eq(c.malloc_sample, 512ull << 10);
	cr_assert_eq(c.syscall_threshold_ns, 10000);
	cr_assert_eq(c.tick_ns, 10000000);
	cr_assert_eq(c.snapshot_signal, 0);
}

Test(config, values_and_units)
{
	static const char *const env[] = {
		"INFERSCOPE_OUTPUT=/tmp/x.json",
		"INFERSCOPE_MAX_MEMORY=1G",
		"INFERSCOPE_DELAY=1.5s",
		"INFERSCOPE_DURATION=250ms",
		"INFERSCOPE_SNAPSHOT_SIGNAL=SIGUSR2",
		"INFERSCOPE_SPILL=off",
		"INFERSCOPE_SYSCALL_THRESHOLD=50us",
		"INFERSCOPE_STACKS=16",
		NULL,
	};
	struct isc_config c;
	fake_env = env;
	cr_assert_eq(isc_config_load(&c, fake_get), 0);
	cr_assert_str_eq(c.output, "/tmp/x.json");
	cr_assert_eq(c.max_memory, 1ull << 30);
	cr_assert_eq(c.delay_ns, 1500000000ull);
	cr_assert_eq(c.duration_ns, 250000000ull);
	cr_assert_eq(c.snapshot_signal, SIGUSR2);
	cr_assert(!c.spill);
	cr_assert_eq(c.syscall_threshold_ns, 50000);
	cr_assert_eq(c.stacks, 16);
}

Test(config, bad_values_fall_back_to_defaults, .init = cr_redirect_stderr)
{
	static const char *const env[] = {
		"INFERSCOPE_MAX_MEMORY=lots", "INFERSCOPE_DEBUG=7",
		"INFERSCOPE_SPILL=maybe",     "INFERSCOPE_SNAPSHOT_SIGNAL=SIGSEGV",
		"INFERSCOPE_OUTPUT=",	      NULL,
	};
	struct isc_config c;
	fake_env = env;
	cr_assert_eq(isc_config_load(&c, fake_get), 5);
	cr_assert_eq(c.max_memory, 256ull << 20);
	cr_assert_eq(c.debug, 0);
	cr_assert(c.spill);
	cr_assert_eq(c.snapshot_signal, 0);
	cr_assert_str_eq(c.output, "trace.json");
	cr_assert_str_eq(isc_config_effective(3), "256M", "the effective value is the default");
	fflush(stderr);
	cr_assert_stderr_neq_str("");
}

Test(config, parsers)
{
	uint64_t v;
	bool b;
	int s;
	cr_assert(isc_parse_size("64K", &v) && v == 65536);
	cr_assert(isc_parse_size("2mib", &v) && v == 2 << 20);
	cr_assert(!isc_parse_size("-1", &v));
	cr_assert(!isc_parse_size("1X", &v));
	cr_assert(isc_parse_duration("10us", &v) && v == 10000);
	cr_assert(isc_parse_duration("2", &v) && v == 2000000000ull, "plain numbers are seconds");
	cr_assert(isc_parse_duration("1m", &v) && v == 60000000000ull);
	cr_assert(!isc_parse_duration("", &v));
	cr_assert(isc_parse_bool("Yes", &b) && b);
	cr_assert(isc_parse_bool("0", &b) && !b);
	cr_assert(!isc_parse_bool("2", &b));
	cr_assert(isc_parse_signal("USR1", &s) && s == SIGUSR1);
	cr_assert(isc_parse_signal("", &s) && s == 0);
	cr_assert(isc_parse_signal("35", &s) && s == 35);
	cr_assert(!isc_parse_signal("9", &s), "SIGKILL cannot be a snapshot signal");
}

/* Each variable has its own entry in ENVIRONMENT (a tagged paragraph: .TP, then a line
 * naming it), not only a mention elsewhere in the page. */
Test(config, every_variable_is_documented)
{
	FILE *f = fopen(ISC_MAN_DIR "/libinferscope.7", "r");
	cr_assert_not_null(f, "man/libinferscope.7 exists");
	static char page[1 << 18];
	size_t n = fread(page, 1, sizeof(page) - 1, f);
	page[n] = '\0';
	fclose(f);
	char *env = strstr(page, "\n.SH ENVIRONMENT\n");
	cr_assert_not_null(env, "libinferscope.7 has an ENVIRONMENT section");
	char *end = strstr(env + 1, "\n.SH ");
	if (end != NULL) {
		*end = '\0';
	}
	for (const struct isc_cfg_entry *e = isc_config_table(); e->name; e++) {
		bool found = false;
		for (char *p = strstr(env, e->name); p != NULL && !found;
		     p = strstr(p + 1, e->name)) {
			/* ".TP\n.B NAME" (or .BR, .BI), NAME whole */
			char *line = p;
			while (line > env && line[-1] != '\n') {
				line--;
			}
			size_t k = strlen(e->name);
			found = strncmp(line, ".B", 2) == 0 && line > env + 4 &&
				strncmp(line - 4, ".TP\n", 4) == 0 &&
				(p[k] == '\n' || p[k] == ' ' || p[k] == '\\');
		}
		cr_expect(found, "%s has no entry in libinferscope.7's ENVIRONMENT", e->name);
	}
}
