/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The request a handler sees and the answer it leaves, behind the public
 * ewyk_http.h. A request is self-contained: method, path,
 * query, headers and body are copied into its own buffer, so it outlives
 * the connection's input and can run on any thread; but for an
 * HTTP_ROUTE_INLINE route, whose handler runs and answers inside the
 * dispatch, they are borrowed from the parsed head instead. The answer stays with
 * it until the connection's owner has written it out, then
 * http_answer_release() returns what it borrowed.
 */
#ifndef EWYK_HTTP_REQ_H
#define EWYK_HTTP_REQ_H

#include <stdbool.h>
#include <stdint.h>

#include "ewyk_http.h"
#include "http_head.h"

struct http_route;

/* A head as large as HTTP/2's header list limit, and a body. */
#define HTTP_REQ_HEAD_MAX 16384
#define HTTP_REQ_BUF (HTTP_REQ_HEAD_MAX + EWYK_REQUEST_BODY_MAX)
#define HTTP_ANSWER_HEADERS 16
#define HTTP_ANSWER_INLINE 4160
/* Returned by a streamed answer's read() inside lib/http (the proxy):
 * nothing now, http_server_resume() when there is. */
#define HTTP_SOURCE_AGAIN (-2)	/* copied bodies up to this stay inline */

enum http_body_kind {
	HTTP_BODY_UNSET,	/* the handler has not answered */
	HTTP_BODY_BYTES,	/* copied or borrowed: body, len */
	HTTP_BODY_STREAM,	/* from src */
};

struct http_answer_header {
	uint16_t name, name_len;	/* offsets into hbuf */
	uint16_t value, value_len;
};

/* The fields of an answer lie in its hbuf as HTTP/1.1 sends them, each
 * "name: value\r\n": the head copies them in one piece, HTTP/2 points at
 * the names and values. Their names and values may take
 * EWYK_RESPONSE_HEADERS_MAX bytes. */
#define HTTP_FIELD_FRAMING 4	/* ": " and CRLF */

struct http_answer {
	int status;
	uint8_t kind;
	uint8_t nheaders;
	uint16_t hused;
	struct http_answer_header h[HTTP_ANSWER_HEADERS];
	char hbuf[EWYK_RESPONSE_HEADERS_MAX +
		HTTP_FIELD_FRAMING * HTTP_ANSWER_HEADERS];
	const uint8_t *body;
	uint64_t len;
	void (*done)(void *arg);	/* borrowed bytes go back */
	/* NULL, or another hold on the borrowed bytes, given back by its
	 * own done: the transport may then point at them until sent */
	void (*hold)(void *arg);
	void *done_arg;
	struct ewyk_source src;
	void *heap;		/* a copy larger than inline */
	uint8_t inline_body[HTTP_ANSWER_INLINE];
};

struct ewyk_request {
	enum http_method method;
	char method_name[16];
	uint8_t http_version;
	bool may_block;
	bool committed;		/* its answer went out while the handler
				 * ran (ewyk_respond_begin()): no other */
	struct http_str path;
	struct http_str query;
	uint32_t rest_off;	/* where the route's path ends */
	uint32_t nheaders;
	const struct http_header *hdr;	/* headers, or the head's (inline) */
	struct http_header headers[HTTP_MAX_HEADERS];
	struct http_str body;
	struct http_body_slot *body_slot;	/* body's buffer, when a slot;
						 * NULL between requests */
	struct http_answer ans;
	uint32_t used;
	char buf[HTTP_REQ_BUF];
};

/* Copies a parsed request (HTTP/1.1, or HTTP/2 headers gathered into the
 * same shape) for route rt; for an HTTP_ROUTE_INLINE route, points at it
 * (r must outlive the handler's run). A body in one of the server's body
 * slots (r->body_slot) is not copied: the request takes the slot, and
 * gives it back with http_req_release_body(). -ENOSPC when it does not
 * fit (and nothing is taken). */
int http_req_fill(struct ewyk_request *q, const struct http_head *r,
		const struct http_route *rt, int http_version);
void http_req_release_body_slot(struct ewyk_request *q);

/* A tunnel's answer (a WebSocket passed on): 101 (HTTP/2's extended
 * CONNECT: 200), and the other side's bytes as its body, as they come.
 * For the proxy, whose upstream client takes a 101 only to a tunnel's
 * request. 0 or -EINVAL. */
int http_respond_tunnel(struct ewyk_request *q, const struct ewyk_source *src);

/* Gives the body's slot (if any) back to its server, once the handler is
 * done with the request; on the owner. */
static inline void
http_req_release_body(struct ewyk_request *q)
{
	if (q->body_slot != NULL)
		http_req_release_body_slot(q);
}
#define HTTP_TEXT_PLAIN "text/plain; charset=utf-8"

/* A field a handler gives (NUL-terminated): a token for a name, a value
 * without CR, LF or other controls but tab. */
bool http_field_ok(const char *name, const char *value);
/* Looking up fields of a head kept as http_headers, for the handler API:
 * the first of that name (case-insensitive), and the i-th. */
bool http_headers_find(const struct http_header *h, uint32_t n,
		const char *name, struct ewyk_str *value);
bool http_headers_at(const struct http_header *h, uint32_t n, size_t i,
		struct ewyk_str *name, struct ewyk_str *value);

/* Clears the answer before a handler runs. */
void http_answer_init(struct http_answer *a);
/* Sets a plain answer: a short copied text body (Retry-After on 503). */
void http_answer_text(struct http_answer *a, int status, const char *text);
/*
 * The answer to a request refused or failed before any handler: "404 Not
 * Found\n" and the like, Retry-After on 503, Allow on 405 when allow is
 * given. Every error either protocol sends is made here; its body is
 * static, so the answer itself need not outlive its serialization.
 */
void http_answer_error(struct http_answer *a, int status, const char *allow);
/* Adds a field known to be valid and not the server's own (no check:
 * handlers' fields go through ewyk_respond_header; a configured route's
 * were checked when the configuration was read), whatever the answer's
 * state. */
/* Takes field i out (the later ones move down one). */
void http_answer_remove_field(struct http_answer *a, unsigned int i);
int http_answer_add_field(struct http_answer *a, const char *name, size_t nl,
		const char *value, size_t vl);
/* Gives back what the answer borrowed; call once, on the owner. */
void http_answer_release(struct http_answer *a);

/* The body of an error answer (http_answer_error()): "404 Not
 * Found\n"; static. */
const char *http_error_text(int status);

#endif /* EWYK_HTTP_REQ_H */
