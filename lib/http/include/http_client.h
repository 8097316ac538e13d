/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTTP/1.1 side of a client, I/O-free: request heads as they are sent,
 * and the answers of a server read back in order, pipelined or not, fed as
 * the transport hands the bytes over, in any pieces. Heads are parsed by
 * http1_parse_response(), bodies by http1_body_decode(), so the client
 * reads with the server's own strictness. A head split across two feeds
 * is gathered in a buffer taken on that first need and given back once the
 * head is read: an idle reader holds no buffer.
 */
#ifndef EWYK_HTTP_CLIENT_H
#define EWYK_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http1_body.h"
#include "http_head.h"

#define H1_ANSWER_HEAD_MAX 16384	/* the longest answer head taken */

/* What the head callback says of the body that follows. */
enum h1_answer_body {
	H1_ANSWER_BODY,		/* framed as the head says */
	H1_ANSWER_NO_BODY,	/* the answer to a HEAD request */
	H1_ANSWER_STOP = -1,	/* the caller gives up on the connection */
};

struct h1_answer_cb {
	/* A final answer's head (1xx are skipped); the head points into
	 * the fed bytes or the reader's buffer, valid for the call only. */
	int (*head)(void *ctx, const struct http_head *h);
	/* Body bytes, as they come (none for a body-less answer). */
	void (*data)(void *ctx, const uint8_t *p, size_t n);
	/* The answer is whole: body_len bytes of body; keep_alive false
	 * when the server said it closes. */
	void (*done)(void *ctx, uint64_t body_len, bool keep_alive);
};

struct h1_answers {
	struct http1_body body;
	bool in_body;
	bool keep_alive;	/* of the answer being read */
	uint32_t held_len;
	char *held;		/* a head split across feeds, or NULL */
};

void h1_answers_init(struct h1_answers *a);
/* Gives back the buffer of a split head, if any. */
void h1_answers_fini(struct h1_answers *a);
/* Whether an answer is begun and not whole: a close now cuts it short. */
bool h1_answers_partial(const struct h1_answers *a);
/*
 * Reads len bytes at in: each whole answer, and the body bytes so far of
 * the last one, told through cb. Returns 0, or -1 when the answers are
 * malformed (a bad head or chunked framing, a head over
 * H1_ANSWER_HEAD_MAX, a 101 nobody asked for) or the head callback said
 * stop: the connection cannot be read on.
 */
int h1_answers_feed(struct h1_answers *a, const uint8_t *in, size_t len,
		const struct h1_answer_cb *cb, void *ctx);
/* The server closed after the bytes fed: an answer read until the close
 * ends here (done is called). Returns 0, or -1 when an answer is cut
 * short. */
int h1_answers_closed(struct h1_answers *a, const struct h1_answer_cb *cb,
		void *ctx);

/* A request head: "METHOD TARGET HTTP/1.1", Host, a Content-Length when
 * body_len > 0 or the method sends one, "Connection: close" when asked,
 * then extra (whole "Name: value\r\n" lines, or NULL). Returns its length,
 * or 0 when cap is too small. */
size_t h1_request_head(char *out, size_t cap, const char *method,
		const char *target, const char *authority, uint64_t body_len,
		bool close, const char *extra);

#endif /* EWYK_HTTP_CLIENT_H */
