/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: lib/http's HTTP/1.1 server, a conversation played from
 * the input (records: see fuzz_http.h) on the scripted transport of the
 * unit tests. Invariants, besides no crash and no sanitizer report:
 *  - every answer is given back exactly once (the harness counts, ASan
 *    sees any other leak), nothing is written after close() or abort();
 *  - every connection ends, answered and closed, or reset;
 *  - what the server wrote parses as HTTP/1.1 responses: status line,
 *    header block, Content-Length or chunked framing (a HEAD's answer has
 *    no body: allowed when the input holds "HEAD"), a body without either only under Connection: close, and
 *    nothing after a Connection: close answer;
 *  - pipeline order: an answer of a test handler carries X-Seq, its
 *    request's place in the connection's pipeline: these rise from one
 *    answer to the next, and never past the answer's own place;
 *  - every request queued for a handler is answered, unless the
 *    connection was reset;
 *  - bad input is answered, never just reset: a reset only cuts an answer
 *    that is under way.
 * Output after "101 Switching Protocols" or a prior-knowledge HTTP/2
 * preface is HTTP/2's, checked by fuzz_h2.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "fuzz_http.h"

/* How the responses at an offset parse. */
enum parsed {
	P_BAD,		/* not a response */
	P_WHOLE,	/* responses, up to the end */
	P_OPEN,		/* ... the last cut short (a reset, or still on its way) */
};

/* Of the answers parsed so far. */
struct count {
	unsigned int finals;	/* final answers */
	unsigned int seqs;	/* ... with X-Seq */
	long last_seq;		/* the last X-Seq, -1 before */
};

struct resp_check {
	const uint8_t *p;
	size_t len;
	uint8_t *failed;	/* offsets known to fail, a bit each */
	struct count n;		/* at the end (of the parse that held) */
	bool upgraded;		/* 101: HTTP/2 follows */
	bool head_sent;		/* the client sent "HEAD" somewhere */
	bool want_open;		/* look for a reading whose last answer is cut */
	bool to_close;		/* the last body ends with the connection */
	char why[160];
};

static bool
is_tchar(int c)
{
	return isalnum(c) || (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* The end of the line at at (its CR), or SIZE_MAX when incomplete. */
static size_t
line_end(const struct resp_check *rc, size_t at)
{
	const uint8_t *cr = memchr(rc->p + at, '\r', rc->len - at);

	if (cr == NULL || (size_t)(cr - rc->p) + 1 >= rc->len)
		return SIZE_MAX;
	return (size_t)(cr - rc->p);
}

#define BAD(...) do {							\
	snprintf(rc->why, sizeof(rc->why), __VA_ARGS__);		\
	return P_BAD;							\
} while (0)

/* A chunked body at *at: its end, P_OPEN when cut short. */
static enum parsed
chunked_body(struct resp_check *rc, size_t *at)
{
	for (;;) {
		size_t e = line_end(rc, *at), i;
		uint64_t n = 0;

		if (e == SIZE_MAX)
			return P_OPEN;
		if (rc->p[e + 1] != '\n' || e == *at || e - *at > 16)
			BAD("chunk size line at %zu", *at);
		for (i = *at; i < e; i++) {
			if (!isxdigit(rc->p[i]))
				BAD("chunk size at %zu", *at);
			n = n * 16 + (uint64_t)(isdigit(rc->p[i]) ? rc->p[i] - '0' :
					tolower(rc->p[i]) - 'a' + 10);
		}
		*at = e + 2;
		if (n == 0)
			break;
		if (rc->len - *at < n + 2)
			return P_OPEN;
		if (memcmp(rc->p + *at + n, "\r\n", 2) != 0)
			BAD("no CRLF after chunk data at %zu", *at + n);
		*at += n + 2;
	}
	if (rc->len - *at < 2)
		return P_OPEN;
	if (memcmp(rc->p + *at, "\r\n", 2) != 0)
		BAD("trailers after the last chunk at %zu", *at);
	*at += 2;
	return P_WHOLE;
}

static enum parsed parse_from(struct resp_check *rc, size_t at,
		struct count n);

static enum parsed
open_end(struct resp_check *rc, struct count n)
{
	rc->n = n;
	return P_OPEN;
}

/* What follows the answer at at, which ended at end. */
static enum parsed
after(struct resp_check *rc, size_t at, size_t end, bool close,
		struct count n)
{
	if (!close)
		return parse_from(rc, end, n);
	if (end != rc->len)
		BAD("bytes after a Connection: close answer at %zu", at);
	rc->n = n;
	return P_WHOLE;
}

/* The response whose head starts at at. */
static enum parsed
parse_one(struct resp_check *rc, size_t at, struct count n)
{
	size_t e = line_end(rc, at), i;
	int status;
	int64_t clen = -1;
	bool chunked = false, close = false, has_seq = false;
	bool octets = false, etag = false;
	long seq = -1;
	enum parsed r, r2;

	if (rc->len - at < 9 && memcmp(rc->p + at, "HTTP/1.1 ", rc->len - at) == 0)
		return P_OPEN;
	if (rc->len - at >= 9 && memcmp(rc->p + at, "HTTP/1.1 ", 9) != 0)
		BAD("no status line at %zu", at);
	if (e == SIZE_MAX)
		return P_OPEN;
	if (e - at < 13 || !isdigit(rc->p[at + 9]) || !isdigit(rc->p[at + 10]) ||
			!isdigit(rc->p[at + 11]) || rc->p[at + 12] != ' ' ||
			rc->p[e + 1] != '\n')
		BAD("status line at %zu", at);
	status = atoi((const char *)rc->p + at + 9);
	if (status < 100 || status > 599)
		BAD("status %d at %zu", status, at);
	for (i = at + 13; i < e; i++)
		if (rc->p[i] < 0x20 || rc->p[i] == 0x7f)
			BAD("reason phrase at %zu", at);
	/* The header block. */
	for (i = e + 2;; ) {
		size_t le = line_end(rc, i), c;
		const char *name = (const char *)rc->p + i;

		if (le == SIZE_MAX)
			return P_OPEN;
		if (rc->p[le + 1] != '\n')
			BAD("bare CR at %zu", le);
		if (le == i) {
			i = le + 2;
			break;
		}
		for (c = i; c < le && is_tchar(rc->p[c]); c++)
			;
		if (c == i || c == le || rc->p[c] != ':')
			BAD("header name at %zu", i);
		for (c++; c < le; c++)
			if ((rc->p[c] < 0x20 && rc->p[c] != '\t') || rc->p[c] == 0x7f)
				BAD("header value at %zu", i);
		if (strncasecmp(name, "Content-Length:", 15) == 0) {
			char *end;

			if (clen >= 0)
				BAD("two Content-Length at %zu", i);
			clen = strtoll(name + 15, &end, 10);
			if (clen < 0 || (const uint8_t *)end != rc->p + le)
				BAD("Content-Length at %zu", i);
		} else if (strncasecmp(name, "Transfer-Encoding: chunked\r", 27) == 0) {
			chunked = true;
		} else if (strncasecmp(name, "Transfer-Encoding:", 18) == 0) {
			BAD("Transfer-Encoding at %zu", i);
		} else if (strncasecmp(name, "Connection: close\r", 18) == 0) {
			close = true;
		} else if (strncasecmp(name, "Content-Type: application/"
				"octet-stream\r", 39) == 0) {
			octets = true;
		} else if (strncasecmp(name, "ETag:", 5) == 0) {
			etag = true;
		} else if (strncasecmp(name, "X-Seq: ", 7) == 0) {
			has_seq = true;
			seq = strtol(name + 7, NULL, 10);
		}
		i = le + 2;
	}
	if (chunked && clen >= 0)
		BAD("Content-Length and chunked at %zu", at);
	if (status == 101) {
		rc->upgraded = true;
		return P_WHOLE;		/* HTTP/2 from here on */
	}
	if (status < 200)
		return parse_from(rc, i, n);	/* interim */
	/* X-Seq counts the requests that took a place in the pipeline (a
	 * refusal with nothing owed is written at once, without one). */
	if (has_seq && (seq <= n.last_seq || seq > (long)n.finals))
		BAD("answer %u at %zu carries X-Seq %ld after %ld: out of order",
				n.finals, at, seq, n.last_seq);
	n.finals++;
	if (has_seq) {
		n.seqs++;
		n.last_seq = seq;
	}
	if (status != 204 && status != 304) {
		size_t body = i;
		struct count n0;
		/* The echo of a body (the harness's /echo, a body-stream
		 * route: the request's Content-Length, else chunked): no ETag
		 * of a file, no X-Seq of a test handler. /echo takes no HEAD,
		 * so it is never a HEAD's. */
		bool echo = octets && !etag && !has_seq;

		if (chunked) {
			r = chunked_body(rc, &body);
		} else if (clen >= 0) {
			body += (size_t)clen;
			r = body > rc->len ? P_OPEN : P_WHOLE;
		} else {
			if (!close)
				BAD("answer at %zu has no framing and no close", at);
			rc->to_close = true;
			return open_end(rc, n);	/* the close ends it */
		}
		if (r == P_WHOLE) {
			r = after(rc, at, body, close, n);
		} else if (r == P_OPEN) {
			open_end(rc, n);
		}
		/* Or the answer of a HEAD: no body. The reading sought is
		 * the one whose end is whole, or cut short under want_open. */
		if (!rc->head_sent || echo ||
				r == (rc->want_open ? P_OPEN : P_WHOLE))
			return r;
		n0 = rc->n;
		r2 = after(rc, at, i, close, n);
		if (r2 == (rc->want_open ? P_OPEN : P_WHOLE) || r == P_BAD)
			return r2;
		rc->n = n0;
		return r;
	}
	return after(rc, at, i, close, n);
}

static enum parsed
parse_from(struct resp_check *rc, size_t at, struct count n)
{
	enum parsed r;

	if (at == rc->len) {
		rc->n = n;
		return P_WHOLE;
	}
	if (rc->failed[at / 8] & (1u << (at % 8)))
		return P_BAD;
	r = parse_one(rc, at, n);
	/* Offsets that failed are not parsed again; under want_open, a
	 * reading that ends whole is no better than a failed one. */
	if (r == P_BAD || (rc->want_open && r != P_OPEN))
		rc->failed[at / 8] |= (uint8_t)(1u << (at % 8));
	return r;
}

static bool
is_h2(const struct hh_conn *k)
{
	/* The server's SETTINGS first: a prior-knowledge HTTP/2 session. */
	return k->out_len >= 9 && k->out[3] == 0x04 && k->out[4] == 0 &&
		memcmp(k->out + 5, "\0\0\0\0", 4) == 0;
}

static void
check_conn(const struct fh *f, unsigned int i, bool head_sent)
{
	const struct hh_conn *k = f->k[i];
	struct resp_check rc = { .p = k->out, .len = k->out_len,
		.head_sent = head_sent };
	enum parsed r;

	if (getenv("FUZZ_HTTP_DUMP") != NULL)	/* to see a failure */
		fprintf(stderr, "%.*s\n[%u bytes, closed %d aborted %d reset %d]\n",
				(int)k->out_len, k->out, k->out_len, k->closed, k->aborted,
				f->reset[i]);
	if (is_h2(k))
		return;
	rc.failed = calloc(k->out_len / 8 + 1, 1);
	fh_check(rc.failed != NULL, "no memory");
	r = parse_from(&rc, 0, (struct count){ 0, 0, -1 });
	if (r == P_WHOLE && k->aborted && head_sent) {
		/* Any answer may be a HEAD's, bodiless, or not: after a
		 * reset, the reading wanted is one whose last answer is cut
		 * short (say, an echo's head, its body not yet begun). */
		memset(rc.failed, 0, k->out_len / 8 + 1);
		rc.want_open = true;
		if (parse_from(&rc, 0, (struct count){ 0, 0, -1 }) == P_OPEN)
			r = P_OPEN;
	}
	free(rc.failed);
	fh_check(r != P_BAD, "connection %u: %s", i, rc.why);
	/* Cut short only by a reset, ours or the peer's (an echo whose
	 * client leaves amid the body is cut so), or by the close that ends
	 * a body without framing. */
	fh_check(r == P_WHOLE || (rc.to_close && k->closed) ||
			k->aborted || f->reset[i],
			"connection %u: an answer cut short", i);
	/* A reset of ours only cuts an answer under way (or follows a
	 * reset of the peer's, or a 101). */
	fh_check(!k->aborted || r == P_OPEN || f->reset[i],
			"connection %u: reset with no answer under way (%u written)",
			i, rc.n.finals);
	if (!k->aborted && !f->reset[i])
		fh_check(rc.n.seqs == k->queued || rc.upgraded,
				"connection %u: %u requests queued, %u answered",
				i, k->queued, rc.n.seqs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fh f;
	unsigned int i;

	fh_start(&f, NULL, 0);
	fh_play(&f, data, size);
	for (i = 0; i < FH_CONNS; i++)
		if (f.k[i] != NULL)
			check_conn(&f, i, memmem(data, size, "HEAD", 4) != NULL);
	fh_end(&f);
	return 0;
}
