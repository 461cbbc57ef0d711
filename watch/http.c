/* SPDX-License-Identifier: MIT */
#include "watch/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* "host:port" or "[v6]:port" into its parts; false when malformed. */
static bool split_addr(const char *addr, char *host, size_t hcap, const char **port)
{
	const char *colon = strrchr(addr, ':');
	if (colon == NULL || colon[1] == '\0') {
		return false;
	}
	const char *h = addr;
	size_t n = (size_t)(colon - addr);
	if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
		h++;
		n -= 2;
	}
	if (n == 0 || n >= hcap) {
		return false;
	}
	memcpy(host, h, n);
	host[n] = '\0';
	*port = colon + 1;
	return true;
}

static void describe_bound(struct isc_http *h)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	int port = 0;
	if (getsockname(h->fd, (struct sockaddr *)&ss, &len) == 0) {
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;
			inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
			port = ntohs(a->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
			inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
			port = ntohs(a->sin6_port);
		}
	}
	snprintf(h->bound, sizeof(h->bound), ss.ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d", host,
		 port);
}

int isc_http_listen(struct isc_http *h, const char *addr, char *err, size_t cap)
{
	memset(h, 0, sizeof(*h));
	h->fd = -1;
	char host[256];
	const char *port;
	if (!split_addr(addr, host, sizeof(host), &port)) {
		snprintf(err, cap, "--listen: expected HOST:PORT, got '%s'", addr);
		return -EINVAL;
	}
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	int g = getaddrinfo(host, port, &hints, &ai);
	if (g != 0) {
		snprintf(err, cap, "--listen %s: %s", addr, gai_strerror(g));
		return -EINVAL;
	}
	int e = EADDRNOTAVAIL;
	for (struct addrinfo *p = ai; p != NULL && h->fd < 0; p = p->ai_next) {
		int fd = socket(p->ai_family, p->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		int one = 1;
		if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
		    bind(fd, p->ai_addr, p->ai_addrlen) == 0 && listen(fd, 64) == 0) {
			h->fd = fd;
		} else {
			e = errno;
			if (fd >= 0) {
				close(fd);
			}
		}
	}
	freeaddrinfo(ai);
	if (h->fd < 0) {
		snprintf(err, cap, "--listen %s: %s", addr, strerror(e));
		return -e;
	}
	describe_bound(h);
	return 0;
}

static void drop(struct isc_http *h, size_t i)
{
	close(h->c[i].fd);
	free(h->c[i].out);
	h->c[i] = h->c[--h->n];
}

void isc_http_close(struct isc_http *h)
{
	while (h->n > 0) {
		drop(h, h->n - 1);
	}
	if (h->fd >= 0) {
		close(h->fd);
		h->fd = -1;
	}
}

size_t isc_http_pollfds(const struct isc_http *h, struct pollfd *pf, size_t cap)
{
	size_t k = 0;
	if (h->fd >= 0 && k < cap) {
		/* always: a full table makes room (accept_all) */
		pf[k++] = (struct pollfd){ h->fd, POLLIN, 0 };
	}
	for (size_t i = 0; i < h->n && k < cap; i++) {
		const struct isc_http_client *c = &h->c[i];
		pf[k++] = (struct pollfd){ c->fd, c->out && !c->lingering ? POLLOUT : POLLIN, 0 };
	}
	return k;
}

static const char *reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 431:
		return "Request Header Fields Too Large";
	default:
		return "Internal Server Error";
	}
}

/* The value of header name in the request head (NUL-terminated lines), or "". */
static const char *header(char *head, const char *name)
{
	size_t n = strlen(name);
	for (char *line = strstr(head, "\r\n"); line != NULL; line = strstr(line + 2, "\r\n")) {
		char *l = line + 2;
		if (strncasecmp(l, name, n) == 0 && l[n] == ':') {
			char *v = l + n + 1;
			while (*v == ' ' || *v == '\t') {
				v++;
			}
			char *end = strstr(v, "\r\n");
			if (end != NULL) {
				*end = '\0';
			}
			return v;
		}
	}
	return "";
}

/* Builds the response for a complete request head; false when out of memory. */
static bool respond(struct isc_http_client *c, isc_http_handler handler, void *ctx, int status)
{
	struct isc_http_response rs = { status, "text/plain; charset=utf-8", NULL, 0 };
	bool head = false;
	if (status == 0) {
		char *sp1 = strchr(c->req, ' ');
		char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
		char *eol = strstr(c->req, "\r\n");
		if (sp1 == NULL || sp2 == NULL || eol == NULL || sp2 > eol ||
		    strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
			rs.status = 400;
		} else {
			*sp1 = *sp2 = '\0';
			head = strcmp(c->req, "HEAD") == 0;
			if (!head && strcmp(c->req, "GET") != 0) {
				rs.status = 405;
			} else {
				struct isc_http_request rq = { c->req, sp1 + 1, "" };
				rq.accept = header(sp2 + 1, "Accept");
				handler(ctx, &rq, &rs);
				rs.status = rs.status ? rs.status : 500;
			}
		}
	}
	if (rs.body == NULL && rs.status != 200) {
		char msg[64];
		int m = snprintf(msg, sizeof(msg), "%d %s\n", rs.status, reason(rs.status));
		rs.body = strndup(msg, (size_t)m);
		rs.len = rs.body ? (size_t)m : 0;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL) {
		free(rs.body);
		return false;
	}
	fprintf(f,
		"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		"Connection: close\r\n\r\n",
		rs.status, reason(rs.status), rs.content_type, rs.len);
	if (!head && rs.len > 0) {
		fwrite(rs.body, 1, rs.len, f);
	}
	free(rs.body);
	if (fclose(f) != 0) {
		free(buf);
		return false;
	}
	c->out = buf;
	c->out_len = len;
	c->out_off = 0;
	return true;
}

/* Reads and drops what a client still sends after its response, until it closes. */
static bool on_linger(struct isc_http_client *c)
{
	char sink[4096];
	ssize_t r = recv(c->fd, sink, sizeof(sink), 0);
	return r > 0 || (r < 0 && (errno == EAGAIN || errno == EINTR));
}

/* Reads what arrived; false when the client is to be dropped. */
static bool on_readable(struct isc_http_client *c, isc_http_handler handler, void *ctx,
			int64_t now_ms)
{
	if (c->lingering) {
		return on_linger(c);
	}
	ssize_t r = recv(c->fd, c->req + c->n, ISC_HTTP_REQUEST_MAX - c->n, 0);
	if (r <= 0) {
		return r < 0 && (errno == EAGAIN || errno == EINTR);
	}
	c->n += (size_t)r;
	c->req[c->n] = '\0';
	int status = -1;
	if (strstr(c->req, "\r\n\r\n") != NULL) {
		status = 0;
	} else if (c->n == ISC_HTTP_REQUEST_MAX) {
		status = 431;
	}
	if (status < 0) {
		return true;
	}
	c->deadline_ms = now_ms + ISC_HTTP_RESPONSE_MS;
	return respond(c, handler, ctx, status);
}

/* Sends what is left; false when failed (the client is dropped). Once all is sent, the
 * client lingers: our side is shut, and what it still sends is read until it closes, so
 * that unread bytes do not turn the close into a reset that loses the response. */
static bool on_writable(struct isc_http_client *c, int64_t now_ms)
{
	ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
	if (w < 0) {
		return errno == EAGAIN || errno == EINTR;
	}
	c->out_off += (size_t)w;
	if (c->out_off == c->out_len) {
		shutdown(c->fd, SHUT_WR);
		c->lingering = true;
		c->deadline_ms = now_ms + ISC_HTTP_LINGER_MS;
	}
	return true;
}

/* With every slot taken: the client still waiting for its head that came first (the
 * slowest sender), else the one that came first. */
static void evict(struct isc_http *h)
{
	size_t pick = 0;
	bool reading = false;
	for (size_t i = 0; i < h->n; i++) {
		bool r = h->c[i].out == NULL;
		if ((r && !reading) || (r == reading && h->c[i].since_ms < h->c[pick].since_ms)) {
			pick = i;
			reading = r;
		}
	}
	drop(h, pick);
}

static void accept_all(struct isc_http *h, int64_t now_ms)
{
	for (;;) {
		int fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			return;
		}
		if (h->n == ISC_HTTP_CLIENTS) {
			evict(h);
		}
		struct isc_http_client *c = &h->c[h->n++];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->since_ms = now_ms;
		c->deadline_ms = now_ms + ISC_HTTP_REQUEST_MS;
	}
}

void isc_http_service(struct isc_http *h, const struct pollfd *pf, size_t n, int64_t now_ms,
		      isc_http_handler handler, void *ctx)
{
	/* clients first, by descriptor (drop() reorders the table), then new ones */
	for (size_t k = 1; k < n; k++) {
		size_t i = 0;
		while (i < h->n && h->c[i].fd != pf[k].fd) {
			i++;
		}
		if (i == h->n || pf[k].revents == 0) {
			continue;
		}
		struct isc_http_client *c = &h->c[i];
		bool keep;
		if (pf[k].revents & (POLLERR | POLLNVAL)) {
			keep = false;
		} else if (c->out != NULL && !c->lingering) {
			keep = on_writable(c, now_ms);
		} else {
			keep = on_readable(c, handler, ctx, now_ms);
		}
		if (!keep) {
			drop(h, i);
		}
	}
	for (size_t i = h->n; i-- > 0;) {
		if (now_ms >= h->c[i].deadline_ms) {
			drop(h, i);
		}
	}
	if (n > 0 && pf[0].fd == h->fd && (pf[0].revents & POLLIN)) {
		accept_all(h, now_ms);
	}
}
