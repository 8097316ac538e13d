/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_body_pool.h"
#include "http_priv.h"

static uint64_t heap_copies;

uint64_t
http_answer_heap_copies(void)
{
	return __atomic_load_n(&heap_copies, __ATOMIC_RELAXED);
}

static bool
copy_str(struct ewyk_request *q, struct http_str *dst, struct http_str src)
{
	if (src.len > sizeof(q->buf) - q->used)
		return false;
	memcpy(q->buf + q->used, src.p, src.len);
	dst->p = q->buf + q->used;
	dst->len = src.len;
	q->used += src.len;
	return true;
}

int
http_req_fill(struct ewyk_request *q, const struct http_head *r,
		const struct http_route *rt, int http_version)
{
	uint32_t i, ml = r->method_str.len;

	q->used = 0;
	q->method = r->method;
	if (ml >= sizeof(q->method_name))
		ml = sizeof(q->method_name) - 1;
	memcpy(q->method_name, r->method_str.p, ml);
	q->method_name[ml] = '\0';
	q->http_version = (uint8_t)http_version;
	q->may_block = false;
	q->committed = false;
	q->nheaders = 0;
	q->rest_off = rt != NULL && rt->match == EWYK_MATCH_PREFIX ?
		rt->path_len : r->path.len;
	http_answer_init(&q->ans);
	if (rt != NULL && (rt->flags & HTTP_ROUTE_INLINE)) {
		/* Answered before the head goes: nothing need be copied. */
		q->path = r->path;
		q->query = r->query;
		q->nheaders = r->nheaders;
		q->hdr = r->headers;
		q->body = (struct http_str){ r->body, r->body != NULL ?
			r->body_len : 0 };
		return 0;
	}
	q->hdr = q->headers;
	if (!copy_str(q, &q->path, r->path) || !copy_str(q, &q->query, r->query))
		return -ENOSPC;
	for (i = 0; i < r->nheaders; i++) {
		if (!copy_str(q, &q->headers[i].name, r->headers[i].name) ||
				!copy_str(q, &q->headers[i].value,
				r->headers[i].value))
			return -ENOSPC;
		q->nheaders++;
	}
	q->body = (struct http_str){ NULL, 0 };
	if (r->body == NULL)
		return 0;
	if (r->body_slot != NULL) {
		/* Large: the request takes the buffer, not a copy. */
		q->body = (struct http_str){ r->body, r->body_len };
		q->body_slot = r->body_slot;
		return 0;
	}
	return copy_str(q, &q->body, (struct http_str){ r->body,
			r->body_len }) ? 0 : -ENOSPC;
}

void
http_req_release_body_slot(struct ewyk_request *q)
{
	http_body_slot_free(q->body_slot);
	q->body_slot = NULL;
}

/* Request accessors ------------------------------------------------------ */

static struct ewyk_str
estr(struct http_str s)
{
	return (struct ewyk_str){ s.p, s.len };
}

const char *
ewyk_request_method(const struct ewyk_request *q)
{
	return q->method_name;
}

struct ewyk_str
ewyk_request_path(const struct ewyk_request *q)
{
	return estr(q->path);
}

struct ewyk_str
ewyk_request_rest(const struct ewyk_request *q)
{
	return (struct ewyk_str){ q->path.p + q->rest_off,
		q->path.len - q->rest_off };
}

struct ewyk_str
ewyk_request_query(const struct ewyk_request *q)
{
	return estr(q->query);
}

bool
ewyk_request_param(const struct ewyk_request *q, const char *name,
		struct ewyk_str *value)
{
	size_t nl = strlen(name);
	uint32_t i = 0;

	while (i < q->query.len) {
		uint32_t e = i;

		while (e < q->query.len && q->query.p[e] != '&')
			e++;
		if (e - i >= nl && memcmp(q->query.p + i, name, nl) == 0 &&
				(e - i == nl || q->query.p[i + nl] == '=')) {
			uint32_t v = i + (uint32_t)nl + (e - i > nl);

			*value = (struct ewyk_str){ q->query.p + v, e - v };
			return true;
		}
		i = e + 1;
	}
	return false;
}

bool
http_headers_find(const struct http_header *h, uint32_t n,
		const char *name, struct ewyk_str *value)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (http_str_eq_nocase(h[i].name, name)) {
			*value = estr(h[i].value);
			return true;
		}
	return false;
}

bool
http_headers_at(const struct http_header *h, uint32_t n, size_t i,
		struct ewyk_str *name, struct ewyk_str *value)
{
	if (i >= n)
		return false;
	*name = estr(h[i].name);
	*value = estr(h[i].value);
	return true;
}

bool
ewyk_request_header(const struct ewyk_request *q, const char *name,
		struct ewyk_str *value)
{
	return http_headers_find(q->hdr, q->nheaders, name, value);
}

size_t
ewyk_request_header_count(const struct ewyk_request *q)
{
	return q->nheaders;
}

bool
ewyk_request_header_at(const struct ewyk_request *q, size_t i,
		struct ewyk_str *name, struct ewyk_str *value)
{
	return http_headers_at(q->hdr, q->nheaders, i, name, value);
}

struct ewyk_str
ewyk_request_body(const struct ewyk_request *q)
{
	return estr(q->body);
}

int
ewyk_request_http_version(const struct ewyk_request *q)
{
	return q->http_version;
}

bool
ewyk_request_may_block(const struct ewyk_request *q)
{
	return q->may_block;
}

/* Answers ----------------------------------------------------------------- */

void
http_answer_init(struct http_answer *a)
{
	a->status = 0;
	a->kind = HTTP_BODY_UNSET;
	a->nheaders = 0;
	a->hused = 0;
	a->body = NULL;
	a->len = 0;
	a->done = NULL;
	a->hold = NULL;
	a->heap = NULL;
	a->src.done = NULL;
}

/* Fields the server owns: it frames the body and the connection. Picked
 * by length first: every answer's header passes here. */
static bool
reserved_field(const char *name, size_t len)
{
	switch (len) {
	case 2:
		return strcasecmp(name, "te") == 0;
	case 4:
		return strcasecmp(name, "date") == 0;
	case 6:
		return strcasecmp(name, "server") == 0;
	case 7:
		return strcasecmp(name, "upgrade") == 0;
	case 10:
		return strcasecmp(name, "connection") == 0 ||
			strcasecmp(name, "keep-alive") == 0;
	case 14:
		return strcasecmp(name, "content-length") == 0;
	case 16:
		return strcasecmp(name, "proxy-connection") == 0;
	case 17:
		return strcasecmp(name, "transfer-encoding") == 0;
	default:
		return false;
	}
}

int
http_answer_add_field(struct http_answer *a, const char *name, size_t nl,
		const char *value, size_t vl)
{
	/* names and values so far */
	size_t used = a->hused - HTTP_FIELD_FRAMING * (size_t)a->nheaders;
	char *p;

	if (a->nheaders == HTTP_ANSWER_HEADERS ||
			nl + vl > EWYK_RESPONSE_HEADERS_MAX - used)
		return -ENOSPC;
	p = a->hbuf + a->hused;
	memcpy(p, name, nl);	/* HTTP/2 lower-cases it when it sends */
	p[nl] = ':';
	p[nl + 1] = ' ';
	memcpy(p + nl + 2, value, vl);
	p[nl + 2 + vl] = '\r';
	p[nl + 3 + vl] = '\n';
	a->h[a->nheaders++] = (struct http_answer_header){ a->hused,
		(uint16_t)nl, (uint16_t)(a->hused + nl + 2), (uint16_t)vl };
	a->hused = (uint16_t)(a->hused + nl + vl + HTTP_FIELD_FRAMING);
	return 0;
}

void
http_answer_remove_field(struct http_answer *a, unsigned int i)
{
	uint16_t start, span;
	unsigned int j;

	if (i >= a->nheaders)
		return;
	start = a->h[i].name;
	span = (uint16_t)(a->h[i].name_len + a->h[i].value_len +
			HTTP_FIELD_FRAMING);
	memmove(a->hbuf + start, a->hbuf + start + span,
			(size_t)(a->hused - start - span));
	for (j = i + 1; j < a->nheaders; j++) {
		a->h[j - 1] = a->h[j];
		a->h[j - 1].name = (uint16_t)(a->h[j - 1].name - span);
		a->h[j - 1].value = (uint16_t)(a->h[j - 1].value - span);
	}
	a->nheaders--;
	a->hused = (uint16_t)(a->hused - span);
}

bool
http_field_ok(const char *name, const char *value)
{
	size_t i;

	if (!http_is_token(name))
		return false;
	for (i = 0; value[i] != '\0'; i++)
		if ((unsigned char)value[i] < ' ' && value[i] != '\t')
			return false;
	return true;
}

/* A handler's field: checked, since it ends up on the wire as given. */
static int
add_header(struct http_answer *a, const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value);

	if (!http_field_ok(name, value) || reserved_field(name, nl))
		return -EINVAL;
	return http_answer_add_field(a, name, nl, value, vl);
}

int
ewyk_respond_header(struct ewyk_request *q, const char *name,
		const char *value)
{
	if (name == NULL || value == NULL || q->ans.kind != HTTP_BODY_UNSET ||
			q->committed)
		return -EINVAL;
	return add_header(&q->ans, name, value);
}

static int
begin(struct ewyk_request *q, int status, const char *ctype)
{
	struct http_answer *a = &q->ans;
	int rc;

	if (a->kind != HTTP_BODY_UNSET || q->committed || status < 200 ||
			status > 599)
		return -EINVAL;
	if (ctype != NULL && (rc = add_header(a, "Content-Type", ctype)) != 0)
		return rc;
	a->status = status;
	return 0;
}

int
ewyk_respond_copy(struct ewyk_request *q, int status, const char *ctype,
		const void *body, size_t len)
{
	struct http_answer *a = &q->ans;
	int rc = begin(q, status, ctype);

	if (rc != 0)
		return rc;
	if (len > sizeof(a->inline_body)) {
		a->heap = malloc(len);
		if (a->heap == NULL)
			return -ENOMEM;
		__atomic_fetch_add(&heap_copies, 1, __ATOMIC_RELAXED);
	}
	if (len > 0)
		memcpy(a->heap != NULL ? a->heap : a->inline_body, body, len);
	a->body = a->heap != NULL ? a->heap : a->inline_body;
	a->len = len;
	a->kind = HTTP_BODY_BYTES;
	return 0;
}

int
ewyk_respond_borrow(struct ewyk_request *q, int status, const char *ctype,
		const void *body, size_t len, void (*done)(void *arg), void *arg)
{
	struct http_answer *a = &q->ans;
	int rc = (body == NULL && len > 0) ? -EINVAL : begin(q, status, ctype);

	if (rc != 0)
		return rc;
	a->body = body;
	a->len = len;
	a->done = done;
	a->hold = NULL;
	a->done_arg = arg;
	a->kind = HTTP_BODY_BYTES;
	return 0;
}

int
ewyk_respond_stream(struct ewyk_request *q, int status, const char *ctype,
		const struct ewyk_source *src)
{
	struct http_answer *a = &q->ans;
	int rc = (src == NULL || src->read == NULL || src->length < -1) ?
		-EINVAL : begin(q, status, ctype);

	if (rc != 0)
		return rc;
	a->src = *src;
	a->kind = HTTP_BODY_STREAM;
	return 0;
}

int
http_respond_tunnel(struct ewyk_request *q, const struct ewyk_source *src)
{
	int rc = ewyk_respond_stream(q, 200, NULL, src);

	/* HTTP/2's extended CONNECT is answered 200 (RFC 8441 5). */
	if (rc == 0 && q->http_version == 1)
		q->ans.status = 101;
	return rc;
}

void
http_answer_text(struct http_answer *a, int status, const char *text)
{
	/* The error answer's headers, with this text for its body. */
	http_answer_release(a);
	http_answer_error(a, status, NULL);
	a->len = strlen(text);
	if (a->len > sizeof(a->inline_body))
		a->len = sizeof(a->inline_body);
	memcpy(a->inline_body, text, a->len);
	a->body = a->inline_body;
}

#define ERROR_BODY_MAX 48	/* "431 Request Header Fields Too Large\n" */
static char error_bodies[600][ERROR_BODY_MAX];
static pthread_once_t error_bodies_once = PTHREAD_ONCE_INIT;

static void
error_bodies_init(void)
{
	int st;

	for (st = 100; st < 600; st++)
		snprintf(error_bodies[st], ERROR_BODY_MAX, "%d %s\n", st,
				http_reason(st));
}

const char *
http_error_text(int status)
{
	pthread_once(&error_bodies_once, error_bodies_init);
	return error_bodies[status >= 100 && status <= 599 ? status : 500];
}

void
http_answer_error(struct http_answer *a, int status, const char *allow)
{
	if (status < 100 || status > 599)
		status = 500;
	http_answer_init(a);
	a->status = status;
	http_answer_add_field(a, "Content-Type", 12, HTTP_TEXT_PLAIN,
			sizeof(HTTP_TEXT_PLAIN) - 1);
	/* A client limited by rate waits at most 1 / limit-rps (a whole
	 * number from 1): a second is always enough. */
	if (status == 503 || status == 429)
		http_answer_add_field(a, "Retry-After", 11, "1", 1);
	if (allow != NULL && allow[0] != '\0')
		add_header(a, "Allow", allow);
	a->body = (const uint8_t *)http_error_text(status);
	a->len = strlen((const char *)a->body);
	a->kind = HTTP_BODY_BYTES;
}

void
http_answer_release(struct http_answer *a)
{
	if (a->done != NULL)
		a->done(a->done_arg);
	if (a->kind == HTTP_BODY_STREAM && a->src.done != NULL)
		a->src.done(a->src.arg);
	free(a->heap);
	a->done = NULL;
	a->hold = NULL;
	a->src.done = NULL;
	a->heap = NULL;
	a->kind = HTTP_BODY_UNSET;
}
