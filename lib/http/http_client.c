/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http1_parse.h"
#include "http_client.h"

void
h1_answers_init(struct h1_answers *a)
{
	memset(a, 0, sizeof(*a));
}

void
h1_answers_fini(struct h1_answers *a)
{
	free(a->held);
	a->held = NULL;
	a->held_len = 0;
}

bool
h1_answers_partial(const struct h1_answers *a)
{
	return a->in_body || a->held_len > 0;
}

/* The framing of the body after head h (RFC 9112 6.3). */
static void
body_start(struct h1_answers *a, const struct http_head *h, int want)
{
	enum http1_framing f;

	if (want == H1_ANSWER_NO_BODY || h->status == 204 || h->status == 304)
		f = HTTP1_BODY_NONE;
	else if (h->chunked)
		f = HTTP1_BODY_CHUNKED;
	else if (h->content_length >= 0)
		f = HTTP1_BODY_LENGTH;
	else
		f = HTTP1_BODY_CLOSE;
	http1_body_start(&a->body, f, h->content_length > 0 ?
			(uint64_t)h->content_length : 0);
	a->keep_alive = h->keep_alive && f != HTTP1_BODY_CLOSE;
	a->in_body = true;
}

/* A complete head of hlen bytes at buf: 1 when it was a final answer's,
 * 0 for a 1xx, -1 to stop. */
static int
head_read(struct h1_answers *a, const char *buf, size_t len, int *hlen,
		const struct h1_answer_cb *cb, void *ctx)
{
	struct http_head h;
	int want;

	*hlen = http1_parse_response(buf, len, &h);
	if (*hlen <= 0)
		return *hlen == 0 ? 0 : -1;
	if (h.status == 101)
		return -1;
	if (h.status < 200)
		return 0;
	want = cb->head(ctx, &h);
	if (want == H1_ANSWER_STOP)
		return -1;
	body_start(a, &h, want);
	return 1;
}

/* The rest of a split head: as much of in as the buffer takes. Returns
 * the bytes of in consumed (the head's end may come short of them), 0
 * when all of in was taken and the head is still incomplete, -1 on
 * error. */
static long
held_feed(struct h1_answers *a, const uint8_t *in, size_t len,
		const struct h1_answer_cb *cb, void *ctx)
{
	uint32_t before = a->held_len;
	size_t room = H1_ANSWER_HEAD_MAX - before;
	size_t take = len < room ? len : room;
	int hlen, rc;

	memcpy(a->held + before, in, take);
	a->held_len += (uint32_t)take;
	rc = head_read(a, a->held, a->held_len, &hlen, cb, ctx);
	if (rc < 0)
		return -1;
	if (hlen == 0) {
		if (a->held_len == H1_ANSWER_HEAD_MAX)
			return -1;
		return 0;
	}
	h1_answers_fini(a);
	return (long)((uint32_t)hlen - before);
}

int
h1_answers_feed(struct h1_answers *a, const uint8_t *in, size_t len,
		const struct h1_answer_cb *cb, void *ctx)
{
	while (len > 0) {
		const uint8_t *d;
		size_t dl;
		long n;

		if (!a->in_body && a->held != NULL) {
			n = held_feed(a, in, len, cb, ctx);
			if (n < 0)
				return -1;
			if (n == 0)
				return 0;
		} else if (!a->in_body) {
			int hlen, rc = head_read(a, (const char *)in, len,
					&hlen, cb, ctx);

			if (rc < 0)
				return -1;
			if (hlen == 0) {
				if (len >= H1_ANSWER_HEAD_MAX)
					return -1;
				a->held = malloc(H1_ANSWER_HEAD_MAX);
				if (a->held == NULL)
					return -1;
				memcpy(a->held, in, len);
				a->held_len = (uint32_t)len;
				return 0;
			}
			n = hlen;
		} else {
			n = http1_body_decode(&a->body, in, len, &d, &dl);
			if (n < 0)
				return -1;
			if (dl > 0)
				cb->data(ctx, d, dl);
		}
		in += n;
		len -= (size_t)n;
		if (a->in_body && !http1_body_reading(&a->body)) {
			a->in_body = false;
			cb->done(ctx, a->body.total, a->keep_alive);
		}
	}
	return 0;
}

int
h1_answers_closed(struct h1_answers *a, const struct h1_answer_cb *cb,
		void *ctx)
{
	if (a->held_len > 0)
		return -1;
	if (!a->in_body)
		return 0;
	if (!http1_body_closed(&a->body))
		return -1;
	a->in_body = false;
	cb->done(ctx, a->body.total, false);
	return 0;
}

size_t
h1_request_head(char *out, size_t cap, const char *method, const char *target,
		const char *authority, uint64_t body_len, bool close,
		const char *extra)
{
	/* RFC 9110 8.6: a length where a body is sent, or the method
	 * expects one. */
	bool length = body_len > 0 || strcmp(method, "POST") == 0 ||
		strcmp(method, "PUT") == 0;
	char clen[48] = "";
	int n;

	if (length)
		snprintf(clen, sizeof(clen), "Content-Length: %llu\r\n",
				(unsigned long long)body_len);
	n = snprintf(out, cap, "%s %s HTTP/1.1\r\nHost: %s\r\n%s%s%s\r\n",
			method, target, authority, clen,
			close ? "Connection: close\r\n" : "",
			extra != NULL ? extra : "");
	return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}
