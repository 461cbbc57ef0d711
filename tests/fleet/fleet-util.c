/* SPDX-License-Identifier: MIT */
#include "fleet-util.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

void fleet_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

bool fleet_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

pid_t fleet_spawn(const char *const argv[], const char *log)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd < 0) {
			_exit(126);
		}
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
		int null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		setpgid(0, 0);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

int fleet_stop(pid_t pid)
{
	int st = 0;
	kill(pid, SIGTERM);
	for (int i = 0; i < 1000; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			return st;
		}
		fleet_sleep_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return st;
}

char *fleet_wait_line(const char *path, const char *needle, double timeout_s)
{
	for (int i = 0; i < (int)(timeout_s * 20); i++) {
		FILE *f = fopen(path, "r");
		char line[1024];
		while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
			char *p = strstr(line, needle);
			if (p != NULL) {
				fclose(f);
				p += strlen(needle);
				p[strcspn(p, "\n")] = '\0';
				return strdup(p);
			}
		}
		if (f != NULL) {
			fclose(f);
		}
		fleet_sleep_ms(50);
	}
	return NULL;
}

static int connect_to(const char *addr)
{
	char host[64];
	const char *colon = strrchr(addr, ':');
	if (colon == NULL || (size_t)(colon - addr) >= sizeof(host)) {
		return -1;
	}
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = '\0';
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(atoi(colon + 1)) };
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		return -1;
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { 30, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int fleet_http(const char *addr, const char *method, const char *target, const char *accept,
	       char **body, size_t *len, char **ctype)
{
	int fd = connect_to(addr);
	if (fd < 0) {
		return -1;
	}
	char req[2048];
	int n = snprintf(req, sizeof(req),
			 "%s %s HTTP/1.1\r\nHost: %s\r\n%s%s%sConnection: close\r\n\r\n", method,
			 target, addr, accept ? "Accept: " : "", accept ? accept : "",
			 accept ? "\r\n" : "");
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	size_t cap = 1 << 16, got = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;
	while ((r = read(fd, buf + got, cap - got)) > 0) {
		got += (size_t)r;
		if (got == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
		}
	}
	close(fd);
	buf[got] = '\0';
	int status = -1;
	sscanf(buf, "HTTP/1.%*d %d", &status);
	char *head_end = strstr(buf, "\r\n\r\n");
	if (ctype != NULL) {
		*ctype = NULL;
		for (char *l = strstr(buf, "\r\n"); l && head_end && l < head_end;
		     l = strstr(l + 2, "\r\n")) {
			if (strncasecmp(l + 2, "Content-Type: ", 14) == 0) {
				*ctype = strndup(l + 16, strcspn(l + 16, "\r"));
			}
		}
	}
	if (body != NULL) {
		size_t off = head_end ? (size_t)(head_end + 4 - buf) : got;
		*body = malloc(got - off + 1);
		memcpy(*body, buf + off, got - off);
		(*body)[got - off] = '\0';
		if (len != NULL) {
			*len = got - off;
		}
	}
	free(buf);
	return status;
}

int fleet_free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = 0 };
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	socklen_t l = sizeof(sa);
	getsockname(fd, (struct sockaddr *)&sa, &l);
	close(fd);
	return ntohs(sa.sin_port);
}

void fleet_put_segment(const char *src, const char *dst)
{
	char part[4200];
	snprintf(part, sizeof(part), "%s.part", dst);
	gzFile in = gzopen(src, "rb"); /* reads plain files as they are */
	cr_assert_not_null(in, "%s", src);
	FILE *out = fopen(part, "wb");
	cr_assert_not_null(out, "%s", part);
	char buf[65536];
	int n;
	while ((n = gzread(in, buf, sizeof(buf))) > 0) {
		cr_assert_eq(fwrite(buf, 1, (size_t)n, out), (size_t)n);
	}
	gzclose(in);
	cr_assert_eq(fclose(out), 0);
	cr_assert_eq(rename(part, dst), 0, "%s: %s", dst, strerror(errno));
}

char fleet_dir[32];

void fleet_dir_setup(void)
{
	snprintf(fleet_dir, sizeof(fleet_dir), "/tmp/isc-fleet-XXXXXX");
	cr_assert_not_null(mkdtemp(fleet_dir));
}

void fleet_dir_teardown(void)
{
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", fleet_dir);
	cr_expect_eq(system(cmd), 0);
}
