/* SPDX-License-Identifier: MIT */
#include "tests/common/isc-test.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const char *isc_test_preload(void)
{
	return ISC_PRELOAD_PATH;
}

const char *isc_test_workload(const char *name)
{
	static char buf[4096];
	snprintf(buf, sizeof(buf), "%s/%s", ISC_WORKLOAD_DIR, name);
	return buf;
}

/* environ minus LD_PRELOAD/INFERSCOPE_* of the runner, plus extra and the preload */
static char **build_env(const char *const extra[], bool preload, char *preload_buf)
{
	size_t n = 0, m = 0;
	while (environ[n]) {
		n++;
	}
	while (extra && extra[m]) {
		m++;
	}
	char **env = calloc(n + m + 2, sizeof(char *));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
		    strncmp(environ[i], "INFERSCOPE_", 11) != 0) {
			env[k++] = environ[i];
		}
	}
	for (size_t i = 0; i < m; i++) {
		env[k++] = (char *)extra[i];
	}
	if (preload) {
		snprintf(preload_buf, 4200, "LD_PRELOAD=%s", isc_test_preload());
		env[k++] = preload_buf;
	}
	env[k] = NULL;
	return env;
}

static void append(char **buf, size_t *len, size_t *cap, const char *data, size_t n)
{
	if (*len + n + 1 > *cap) {
		*cap = (*len + n + 1) * 2;
		*buf = realloc(*buf, *cap);
	}
	memcpy(*buf + *len, data, n);
	*len += n;
	(*buf)[*len] = '\0';
}

static void drain(int out_fd, int err_fd, struct isc_run *r)
{
	size_t out_cap = 0, err_cap = 0;
	struct pollfd p[2] = { { out_fd, POLLIN, 0 }, { err_fd, POLLIN, 0 } };
	char buf[65536];
	append(&r->out, &r->out_len, &out_cap, "", 0);
	append(&r->err, &r->err_len, &err_cap, "", 0);
	int open_fds = 2;
	while (open_fds > 0) {
		if (poll(p, 2, -1) < 0 && errno != EINTR) {
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) {
				continue;
			}
			ssize_t k = read(p[i].fd, buf, sizeof(buf));
			if (k <= 0) {
				close(p[i].fd);
				p[i].fd = -1;
				open_fds--;
			} else if (i == 0) {
				append(&r->out, &r->out_len, &out_cap, buf, (size_t)k);
			} else {
				append(&r->err, &r->err_len, &err_cap, buf, (size_t)k);
			}
		}
	}
}

int isc_test_run(const char *const argv[], const char *const env[], bool preload, const char *cwd,
		 struct isc_run *r)
{
	int out[2], err[2];
	char preload_buf[4200];
	memset(r, 0, sizeof(*r));
	if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
		return -errno;
	}
	char **envp = build_env(env, preload, preload_buf);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		if (cwd && chdir(cwd) != 0) {
			_exit(126);
		}
		execve(argv[0], (char *const *)argv, envp);
		_exit(127);
	}
	free(envp);
	close(out[1]);
	close(err[1]);
	if (pid < 0) {
		return -errno;
	}
	drain(out[0], err[0], r);
	while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR) {
	}
	return 0;
}

void isc_run_free(struct isc_run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

char *isc_test_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	char *buf = malloc(4096);
	snprintf(buf, 4096, "%s/isc-test-XXXXXX", t && *t ? t : "/tmp");
	if (mkdtemp(buf) == NULL) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void isc_test_rmrf(const char *dir)
{
	if (dir) {
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
}

bool isc_test_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

yajl_val isc_test_load_json(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	size_t got = fread(buf, 1, (size_t)n, f);
	fclose(f);
	buf[got] = '\0';
	char err[512];
	yajl_val v = yajl_tree_parse(buf, err, sizeof(err));
	free(buf);
	if (v == NULL) {
		fprintf(stderr, "%s: %s\n", path, err);
	}
	return v;
}

yajl_val isc_trace_get(yajl_val obj, const char *path)
{
	const char *parts[16];
	char copy[512];
	size_t n = 0;
	snprintf(copy, sizeof(copy), "%s", path);
	for (char *save = NULL, *p = strtok_r(copy, "/", &save); p && n < 15;
	     p = strtok_r(NULL, "/", &save)) {
		parts[n++] = p;
	}
	parts[n] = NULL;
	return yajl_tree_get(obj, parts, yajl_t_any);
}

const char *isc_trace_str(yajl_val obj, const char *path)
{
	yajl_val v = isc_trace_get(obj, path);
	return YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
}

long long isc_trace_int(yajl_val obj, const char *path, long long fallback)
{
	yajl_val v = isc_trace_get(obj, path);
	return YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : fallback;
}

double isc_trace_num(yajl_val obj, const char *path, double fallback)
{
	yajl_val v = isc_trace_get(obj, path);
	return YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : fallback;
}

yajl_val isc_trace_events(yajl_val trace)
{
	yajl_val v = isc_trace_get(trace, "events");
	return YAJL_IS_ARRAY(v) ? v : NULL;
}

static bool matches(yajl_val e, const char *type, const char *name)
{
	const char *t = isc_trace_str(e, "type");
	const char *n = isc_trace_str(e, "name");
	return (!type || (t && strcmp(t, type) == 0)) && (!name || (n && strcmp(n, name) == 0));
}

size_t isc_trace_count(yajl_val trace, const char *type, const char *name)
{
	yajl_val ev = isc_trace_events(trace);
	size_t c = 0;
	for (size_t i = 0; ev && i < YAJL_GET_ARRAY(ev)->len; i++) {
		c += matches(YAJL_GET_ARRAY(ev)->values[i], type, name);
	}
	return c;
}

yajl_val isc_trace_find(yajl_val trace, const char *type, const char *name, size_t k)
{
	yajl_val ev = isc_trace_events(trace);
	for (size_t i = 0; ev && i < YAJL_GET_ARRAY(ev)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(ev)->values[i];
		if (matches(e, type, name) && k-- == 0) {
			return e;
		}
	}
	return NULL;
}

static char *test_dir;

void isc_test_dir_setup(void)
{
	test_dir = isc_test_tmpdir();
	cr_assert_not_null(test_dir);
}

void isc_test_dir_teardown(void)
{
	isc_test_rmrf(test_dir);
	free(test_dir);
	test_dir = NULL;
}

const char *isc_test_dir(void)
{
	return test_dir;
}

const char *isc_test_in_dir(const char *name)
{
	static char buf[8][4096];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", test_dir, name);
	return buf[k];
}

const char *isc_test_env(const char *name)
{
	const char *v = getenv(name);
	cr_assert_not_null(v, "%s is not set (run through meson test)", name);
	return v;
}

const char *isc_test_nth_path(const char *list, size_t i)
{
	static char buf[8][PATH_MAX];
	static unsigned next;
	const char *p = list;
	for (; i > 0 && p; i--) {
		p = strchr(p, ':');
		p = p ? p + 1 : NULL;
	}
	if (p == NULL || *p == '\0') {
		return NULL;
	}
	size_t n = strcspn(p, ":");
	char *out = buf[next++ % 8];
	snprintf(out, PATH_MAX, "%.*s", (int)n, p);
	return out;
}
