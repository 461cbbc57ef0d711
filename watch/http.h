/* SPDX-License-Identifier: MIT */
/*
 * A small HTTP/1.1 server for one thread and a poll(2) loop: GET and HEAD, one request
 * per connection (the response says "Connection: close"), bounded request size, bounded
 * clients. Enough for a Prometheus scraper and curl; no TLS, no keep-alive, no chunked
 * bodies.
 *
 * No client can hold the server: a request head must arrive whole within
 * ISC_HTTP_REQUEST_MS of its connection (an absolute deadline that bytes trickling in do
 * not move), a response must be taken within ISC_HTTP_RESPONSE_MS, and with every slot
 * taken a new connection evicts the client that has waited longest for its head. A head
 * over ISC_HTTP_REQUEST_MAX is answered 431, and the rest of what the client sends is
 * read and dropped after the answer (a lingering close) so that the client reads the
 * status rather than a reset.
 */
#ifndef ISC_WATCH_HTTP_H
#define ISC_WATCH_HTTP_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ISC_HTTP_CLIENTS 32
#define ISC_HTTP_REQUEST_MAX 8192
#define ISC_HTTP_REQUEST_MS 5000   /* from the connection to the end of the head */
#define ISC_HTTP_RESPONSE_MS 10000 /* from the response's start to its last byte */
#define ISC_HTTP_LINGER_MS 5000	   /* reading and dropping after the response */

struct isc_http_request {
	const char *method, *target; /* target: path and query, as sent */
	const char *accept;	     /* the Accept header's value, "" when absent */
};

struct isc_http_response {
	int status;
	const char *content_type;
	char *body; /* malloc'd, freed by the server */
	size_t len;
};

/* Fills the response (status 0 leaves it to the server: 500). */
typedef void (*isc_http_handler)(void *ctx, const struct isc_http_request *rq,
				 struct isc_http_response *rs);

struct isc_http_client {
	int fd;
	char req[ISC_HTTP_REQUEST_MAX + 1];
	size_t n;
	char *out; /* the whole response, once the request is complete */
	size_t out_len, out_off;
	bool lingering;	     /* response sent: reading until the client closes */
	int64_t since_ms;    /* the connection */
	int64_t deadline_ms; /* absolute, for the step it is at (head, response, linger) */
};

struct isc_http {
	int fd; /* listening socket, -1 none */
	struct isc_http_client c[ISC_HTTP_CLIENTS];
	size_t n;
	char bound[128]; /* address:port actually bound (port 0 picks one) */
};

/* Listens on "HOST:PORT" ("[::1]:9464" for IPv6). Returns 0, or -errno with err set. */
int isc_http_listen(struct isc_http *h, const char *addr, char *err, size_t cap);
void isc_http_close(struct isc_http *h);
/* The descriptors to poll (listening socket first); returns their number. */
size_t isc_http_pollfds(const struct isc_http *h, struct pollfd *pf, size_t cap);
/* Handles what poll reported on the descriptors isc_http_pollfds gave, now_ms being a
 * monotonic clock in milliseconds (clients past their deadline are dropped). */
void isc_http_service(struct isc_http *h, const struct pollfd *pf, size_t n, int64_t now_ms,
		      isc_http_handler handler, void *ctx);

#endif /* ISC_WATCH_HTTP_H */
