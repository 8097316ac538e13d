/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The static files' answers as a client sees them, over HTTP/1.1 and
 * HTTP/2 alike (http_harness.h): validators, the preconditions and their
 * order (RFC 9110 13), If-Range, precompressed siblings, Cache-Control,
 * the directory redirect and OPTIONS. One table of exchanges runs over
 * both protocols. And a reload's swap of the tree while an answer from
 * the old one is still going out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "http_harness.h"
#include "http_priv.h"
#include "www.h"

#define LM_A "Sun, 13 Sep 2020 12:26:41 GMT"	/* /a.txt's mtime */
#define LM_A_BEFORE "Sun, 13 Sep 2020 12:26:40 GMT"
#define LM_A_AFTER "Sunday, 13-Sep-20 12:26:42 GMT"	/* RFC 850's form */
#define WRONG "\"0000000000000000\""

struct exchange {
	const char *what;
	const char *method;
	const char *path;
	/* Request fields, name and value in turn. In a value, "@A" stands
	 * for /a.txt's entity tag, "@E", "@G", "@B" for /enc.txt's, of
	 * its identity, gzip and br representations. */
	const char *fields[9];
	int status;
	const char *body;	/* NULL: none at all */
	const char *has[6];	/* "name: value" fields of the answer */
	const char *lacks[4];	/* names it must not have */
};

static const struct exchange table[] = {
	{ "a file: its validators, no Vary or Cache-Control",
	  "GET", "/a.txt", { NULL }, 200, HH_A_TXT,
	  .has = { "etag: @A", "last-modified: " LM_A, "content-type: text/plain; "
	    "charset=utf-8", "accept-ranges: bytes" },
	  .lacks = { "vary", "cache-control", "content-encoding" } },

	/* If-None-Match in all its forms (RFC 9110 13.1.2) */
	{ "If-None-Match, the current tag", "GET", "/a.txt",
	  { "If-None-Match", "@A", NULL }, 304, NULL, .has = { "etag: @A" },
	  .lacks = { "content-type" } },
	{ "If-None-Match, a wrong tag: the file", "GET", "/a.txt",
	  { "If-None-Match", WRONG, NULL }, 200, HH_A_TXT,
	  .has = { "etag: @A" } },
	{ "If-None-Match, a tag as long, one byte off", "GET", "/a.txt",
	  { "If-None-Match", "\"0123456789abcdeg\"", NULL }, 200, HH_A_TXT,
	  .has = { NULL } },
	{ "If-None-Match: *", "GET", "/a.txt", { "If-None-Match", "*", NULL },
	  304, NULL,
	  .has = { NULL } },
	{ "If-None-Match, weak comparison of W/", "GET", "/a.txt",
	  { "If-None-Match", "W/@A", NULL }, 304, NULL,
	  .has = { NULL } },
	{ "If-None-Match, a list naming it", "GET", "/a.txt",
	  { "If-None-Match", WRONG ", W/\"x\", @A", NULL }, 304, NULL,
	  .has = { NULL } },
	{ "If-None-Match, a list not naming it", "GET", "/a.txt",
	  { "If-None-Match", WRONG ", W/" WRONG, NULL }, 200, HH_A_TXT,
	  .has = { NULL } },
	{ "If-None-Match on HEAD", "HEAD", "/a.txt",
	  { "If-None-Match", "@A", NULL }, 304, NULL,
	  .has = { NULL } },
	/* with Range: the 304 wins (13.2.2: preconditions first) */
	{ "If-None-Match and a Range it satisfies", "GET", "/a.txt",
	  { "If-None-Match", "@A", "Range", "bytes=0-3", NULL }, 304, NULL,
	  .has = { NULL }, .lacks = { "content-range" } },
	{ "If-None-Match and a Range past the end", "GET", "/a.txt",
	  { "If-None-Match", "@A", "Range", "bytes=100-", NULL }, 304, NULL,
	  .has = { NULL }, .lacks = { "content-range" } },
	{ "If-None-Match of another tag and a Range", "GET", "/a.txt",
	  { "If-None-Match", WRONG, "Range", "bytes=0-3", NULL }, 206, "abcd",
	  .has = { "content-range: bytes 0-3/27" } },

	/* If-Modified-Since (13.1.3) */
	{ "If-Modified-Since, the file's date", "GET", "/a.txt",
	  { "If-Modified-Since", LM_A, NULL }, 304, NULL,
	  .has = { NULL } },
	{ "If-Modified-Since, later, RFC 850's form", "GET", "/a.txt",
	  { "If-Modified-Since", LM_A_AFTER, NULL }, 304, NULL,
	  .has = { NULL } },
	{ "If-Modified-Since, a second before", "GET", "/a.txt",
	  { "If-Modified-Since", LM_A_BEFORE, NULL }, 200, HH_A_TXT,
	  .has = { NULL } },
	{ "If-Modified-Since, not a date", "GET", "/a.txt",
	  { "If-Modified-Since", "yesterday", NULL }, 200, HH_A_TXT,
	  .has = { NULL } },
	{ "If-None-Match before If-Modified-Since", "GET", "/a.txt",
	  { "If-None-Match", WRONG, "If-Modified-Since", LM_A, NULL }, 200,
	  HH_A_TXT,
	  .has = { NULL } },

	/* If-Match (13.1.1) and If-Unmodified-Since (13.1.4): 412 */
	{ "If-Match, the current tag", "GET", "/a.txt",
	  { "If-Match", "@A", NULL }, 200, HH_A_TXT,
	  .has = { NULL } },
	{ "If-Match, a wrong tag", "GET", "/a.txt",
	  { "If-Match", WRONG, NULL }, 412, "412 Precondition Failed\n",
	  .has = { NULL }, .lacks = { "etag" } },
	{ "If-Match, weak: strong comparison fails", "GET", "/a.txt",
	  { "If-Match", "W/@A", NULL }, 412, "412 Precondition Failed\n",
	  .has = { NULL } },
	{ "If-Match: *", "GET", "/a.txt", { "If-Match", "*", NULL }, 200,
	  HH_A_TXT,
	  .has = { NULL } },
	{ "If-Unmodified-Since, a second before", "GET", "/a.txt",
	  { "If-Unmodified-Since", LM_A_BEFORE, NULL }, 412,
	  "412 Precondition Failed\n",
	  .has = { NULL } },
	{ "If-Unmodified-Since, the file's date", "GET", "/a.txt",
	  { "If-Unmodified-Since", LM_A, NULL }, 200, HH_A_TXT,
	  .has = { NULL } },
	{ "If-Match before If-Unmodified-Since", "GET", "/a.txt",
	  { "If-Match", "@A", "If-Unmodified-Since", LM_A_BEFORE, NULL }, 200,
	  HH_A_TXT,
	  .has = { NULL } },
	{ "412 before 304", "GET", "/a.txt",
	  { "If-Match", WRONG, "If-None-Match", "@A", NULL }, 412,
	  "412 Precondition Failed\n",
	  .has = { NULL } },
	{ "412 before a Range", "GET", "/a.txt",
	  { "If-Match", WRONG, "Range", "bytes=0-3", NULL }, 412,
	  "412 Precondition Failed\n",
	  .has = { NULL } },

	/* If-Range (13.1.5): a stale validator gets the whole file */
	{ "If-Range, the current tag", "GET", "/a.txt",
	  { "Range", "bytes=2-5", "If-Range", "@A", NULL }, 206, "cdef",
	  .has = { "content-range: bytes 2-5/27" } },
	{ "If-Range, a stale tag", "GET", "/a.txt",
	  { "Range", "bytes=2-5", "If-Range", WRONG, NULL }, 200, HH_A_TXT,
	  .has = { NULL }, .lacks = { "content-range" } },
	{ "If-Range, a weak tag never matches", "GET", "/a.txt",
	  { "Range", "bytes=2-5", "If-Range", "W/@A", NULL }, 200, HH_A_TXT,
	  .has = { NULL }, .lacks = { "content-range" } },
	{ "If-Range, the file's date (strong: years old)", "GET", "/a.txt",
	  { "Range", "bytes=2-5", "If-Range", LM_A, NULL }, 206, "cdef",
	  .has = { NULL } },
	{ "If-Range, an earlier date", "GET", "/a.txt",
	  { "Range", "bytes=2-5", "If-Range", LM_A_BEFORE, NULL }, 200,
	  HH_A_TXT,
	  .has = { NULL } },
	{ "If-Range, a later date: exact or nothing", "GET", "/a.txt",
	  { "Range", "bytes=2-5", "If-Range", LM_A_AFTER, NULL }, 200,
	  HH_A_TXT,
	  .has = { NULL } },
	{ "If-Range, a stale tag and a Range past the end: no 416", "GET",
	  "/a.txt", { "Range", "bytes=100-", "If-Range", WRONG, NULL }, 200,
	  HH_A_TXT,
	  .has = { NULL } },

	/* precompressed siblings */
	{ "no Accept-Encoding: identity, with Vary and Cache-Control",
	  "GET", "/enc.txt", { NULL }, 200, HH_ENC_TXT,
	  .has = { "vary: Accept-Encoding", "cache-control: public, max-age=60",
	    "etag: @E", "content-type: text/plain; charset=utf-8" },
	  .lacks = { "content-encoding" } },
	{ "gzip", "GET", "/enc.txt", { "Accept-Encoding", "gzip", NULL }, 200,
	  HH_ENC_GZ, .has = { "content-encoding: gzip", "vary: Accept-Encoding",
	    "etag: @G", "content-type: text/plain; charset=utf-8",
	    "cache-control: public, max-age=60" } },
	{ "br before gzip on a tie", "GET", "/enc.txt",
	  { "Accept-Encoding", "gzip, deflate, br", NULL }, 200, HH_ENC_BR,
	  .has = { "content-encoding: br", "etag: @B" } },
	{ "q-values", "GET", "/enc.txt",
	  { "Accept-Encoding", "br;q=0.5, gzip;q=0.8", NULL }, 200, HH_ENC_GZ,
	  .has = { "content-encoding: gzip" } },
	{ "identity;q=0", "GET", "/enc.txt",
	  { "Accept-Encoding", "identity;q=0, gzip", NULL }, 200, HH_ENC_GZ,
	  .has = { NULL } },
	{ "gzip;q=0: identity", "GET", "/enc.txt",
	  { "Accept-Encoding", "gzip;q=0", NULL }, 200, HH_ENC_TXT,
	  .has = { "vary: Accept-Encoding" }, .lacks = { "content-encoding" } },
	{ "*", "GET", "/enc.txt", { "Accept-Encoding", "*", NULL }, 200,
	  HH_ENC_BR,
	  .has = { NULL } },
	{ "a range of the encoded bytes", "GET", "/enc.txt",
	  { "Accept-Encoding", "gzip", "Range", "bytes=0-3", NULL }, 206,
	  "GZIP", .has = { "content-range: bytes 0-3/15", "content-encoding: gzip",
	    "vary: Accept-Encoding" } },
	{ "304 of the encoding's tag, with Vary and Cache-Control", "GET",
	  "/enc.txt", { "Accept-Encoding", "gzip", "If-None-Match", "@G",
	  NULL }, 304, NULL, .has = { "etag: @G", "vary: Accept-Encoding",
	    "cache-control: public, max-age=60" } },
	{ "identity's tag does not validate the gzip one", "GET", "/enc.txt",
	  { "Accept-Encoding", "gzip", "If-None-Match", "@E", NULL }, 200,
	  HH_ENC_GZ,
	  .has = { NULL } },
	{ "If-Range of identity's tag on the gzip one: whole", "GET",
	  "/enc.txt", { "Accept-Encoding", "gzip", "Range", "bytes=0-3",
	  "If-Range", "@E", NULL }, 200, HH_ENC_GZ,
	  .has = { NULL } },
	{ "412 says Vary too", "GET", "/enc.txt",
	  { "If-Match", WRONG, NULL }, 412, "412 Precondition Failed\n",
	  .has = { "vary: Accept-Encoding" } },
	{ "a sibling by its own name: a gzip file, not an encoding", "GET",
	  "/enc.txt.gz", { "Accept-Encoding", "gzip", NULL }, 200, HH_ENC_GZ,
	  .has = { "content-type: application/gzip", "etag: @G" },
	  .lacks = { "content-encoding", "vary" } },
	{ "only a .gz beside it: br asked, identity", "GET", "/gz-only.txt",
	  { "Accept-Encoding", "br", NULL }, 200, "plain\n",
	  .has = { "vary: Accept-Encoding" } },

	/* directories and OPTIONS */
	{ "a directory without its slash", "GET", "/sub", { NULL }, 301,
	  "301 Moved Permanently\n", .has = { "location: /sub/" } },
	{ "... with its query", "GET", "/sub?a=1&b", { NULL }, 301,
	  "301 Moved Permanently\n", .has = { "location: /sub/?a=1&b" } },
	{ "... percent-encoded as it came", "HEAD", "/s%75b", { NULL }, 301,
	  NULL, .has = { "location: /s%75b/" } },
	{ "... with its slash", "GET", "/sub/", { NULL }, 200, "sub\n",
	  .has = { NULL } },
	{ "OPTIONS of a file", "OPTIONS", "/a.txt", { NULL }, 204, NULL,
	  .has = { "allow: GET, HEAD, OPTIONS" }, .lacks = { "content-type" } },
	{ "OPTIONS of nothing", "OPTIONS", "/nothing", { NULL }, 404,
	  "404 Not Found\n",
	  .has = { NULL } },
	{ "OPTIONS ignores preconditions", "OPTIONS", "/a.txt",
	  { "If-Match", WRONG, NULL }, 204, NULL,
	  .has = { NULL } },
	{ "OPTIONS *: every route's methods", "OPTIONS", "*", { NULL }, 200, "",
	  .has = { "allow: GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH" } },
};

/* The entity tags "@A", "@E", "@G", "@B" stand for. */
static const char *
tag_of(struct hh *h, char which)
{
	const struct www_file *e = www_find(h->statics.www, "/enc.txt", 8);

	switch (which) {
	case 'A':
		return www_find(h->statics.www, "/a.txt", 6)->etag;
	case 'E':
		return e->etag;
	case 'G':
		return e->coded[WWW_GZIP]->etag;
	case 'B':
		return e->coded[WWW_BR]->etag;
	}
	fail_msg("no tag @%c", which);
	return NULL;
}

static void
expand(struct hh *h, const char *in, char *out, size_t cap)
{
	size_t n = 0;

	for (; *in != '\0' && n + 20 < cap; in++) {
		if (*in == '@' && in[1] != '\0') {
			n += (size_t)snprintf(out + n, cap - n, "%s",
					tag_of(h, *++in));
			continue;
		}
		out[n++] = *in;
	}
	out[n] = '\0';
}

/* What came back, the same for both protocols: names lower-cased,
 * "name: value\n" each. */
struct answer {
	int status;
	char fields[2048];
	const uint8_t *body;
	size_t len;
	bool body_sent;
};

static void
check(struct hh *h, const struct exchange *x, const struct answer *a,
		const char *proto)
{
	char want[256], line[300];
	size_t i;

	if (a->status != x->status)
		fail_msg("%s, %s: status %d, not %d\n%s", proto, x->what,
				a->status, x->status, a->fields);
	if (x->body == NULL && a->len != 0)
		fail_msg("%s, %s: a body of %zu bytes", proto, x->what, a->len);
	if (x->body != NULL && (a->len != strlen(x->body) ||
			memcmp(a->body, x->body, a->len) != 0))
		fail_msg("%s, %s: body \"%.*s\"", proto, x->what, (int)a->len,
				a->body);
	for (i = 0; i < 6 && x->has[i] != NULL; i++) {
		expand(h, x->has[i], want, sizeof(want));
		snprintf(line, sizeof(line), "%s\n", want);
		if (strstr(a->fields, line) == NULL)
			fail_msg("%s, %s: no \"%s\" in\n%s", proto, x->what, want,
					a->fields);
	}
	for (i = 0; i < 4 && x->lacks[i] != NULL; i++) {
		char all[sizeof(a->fields) + 1];

		snprintf(all, sizeof(all), "\n%s", a->fields);
		snprintf(line, sizeof(line), "\n%s: ", x->lacks[i]);
		if (strstr(all, line) != NULL)
			fail_msg("%s, %s: has %s\n%s", proto, x->what,
					x->lacks[i], a->fields);
	}
}

static void
h1_exchange(struct hh *h, struct hh_conn *k, const struct exchange *x,
		struct answer *a)
{
	char req[1024], v[256];
	struct hh_resp r;
	const char *p, *e;
	size_t n, o = 0, i;

	n = (size_t)snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: h\r\n",
			x->method, x->path);
	for (i = 0; x->fields[i] != NULL; i += 2) {
		expand(h, x->fields[i + 1], v, sizeof(v));
		n += (size_t)snprintf(req + n, sizeof(req) - n, "%s: %s\r\n",
				x->fields[i], v);
	}
	snprintf(req + n, sizeof(req) - n, "\r\n");
	hh_sends(k, req);
	if (!hh_resp_next(k, &r, strcmp(x->method, "HEAD") == 0))
		fail_msg("HTTP/1.1, %s: no answer", x->what);
	a->status = r.status;
	a->body = r.body;
	a->len = r.body_len;
	/* the fields past the status line, names lower-cased */
	for (p = strstr(r.head, "\r\n") + 2; (e = strstr(p, "\r\n")) != p;
			p = e + 2) {
		const char *colon = memchr(p, ':', (size_t)(e - p));

		for (i = 0; p + i < colon; i++)
			a->fields[o++] = (char)tolower((unsigned char)p[i]);
		o += (size_t)snprintf(a->fields + o, sizeof(a->fields) - o,
				"%.*s\n", (int)(e - colon), colon);
	}
	a->fields[o] = '\0';
	if (x->status == 204 || x->status == 304 ||
			strcmp(x->method, "HEAD") == 0)
		assert_int_equal(k->rd, k->out_len);	/* nothing after */
}

static void
test_over_http1(void **state)
{
	struct hh *h = *state;
	struct hh_conn *k = hh_connect(h);
	struct answer a;
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		h1_exchange(h, k, &table[i], &a);
		check(h, &table[i], &a, "HTTP/1.1");
	}
	assert_false(k->closed);
}

static void
test_over_http2(void **state)
{
	struct hh *h = *state;
	struct hh_h2 *c = hh_h2_new(hh_connect(h), NULL, 0, 0);
	const char *fields[9];
	char values[4][256];
	struct answer a;
	size_t i, j;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct exchange *x = &table[i];
		struct hh_stream *st;
		int32_t id;

		for (j = 0; x->fields[j] != NULL; j += 2) {
			fields[j] = x->fields[j];
			expand(h, x->fields[j + 1], values[j / 2],
					sizeof(values[0]));
			fields[j + 1] = values[j / 2];
		}
		fields[j] = NULL;
		id = hh_h2_request_with(c, x->method, x->path, fields, NULL, 0);
		hh_h2_pump(c);
		st = hh_h2_stream(c, id);
		assert_true(st->closed);
		assert_int_equal(st->error, 0);
		a.status = st->status;
		a.body = st->body;
		a.len = st->len;
		snprintf(a.fields, sizeof(a.fields), "%s", st->headers);
		check(h, x, &a, "HTTP/2");
	}
	assert_false(c->goaway);
	hh_h2_free(c);
}

/* A reload's swap: the tree replaced waits while an answer lent from it
 * is still going out, and is let go once it is back; new requests are
 * answered from the new tree at once; a second swap waits its turn. */
static void
test_swap_waits_for_answers_lent(void **state)
{
	struct hh *h = *state;
	struct hh_conn *k = hh_connect(h), *fresh = hh_connect(h);
	const struct www *tree = h->statics.www, *old = NULL;
	struct hh_resp r;
	int rounds = 0;

	k->space = 4096;
	hh_sends(k, "GET /big.bin HTTP/1.1\r\nHost: e\r\n\r\n");
	assert_false(http_static_retired(&h->statics, &old));	/* none */
	assert_int_equal(http_static_swap(&h->statics, NULL), 0);
	assert_int_equal(http_static_swap(&h->statics, tree), -EBUSY);
	hh_sends(fresh, "GET /a.txt HTTP/1.1\r\nHost: e\r\n\r\n");
	assert_true(hh_resp_next(fresh, &r, false));
	assert_int_equal(r.status, 404);	/* the new tree: none */
	while (!hh_resp_next(k, &r, false)) {
		assert_false(http_static_retired(&h->statics, &old));
		hh_give_space(k, 4096);
		assert_true(++rounds < 100);
	}
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, HH_BIG_SIZE);
	assert_memory_equal(r.body, hh_big(), HH_BIG_SIZE);
	assert_true(http_static_retired(&h->statics, &old));
	assert_ptr_equal(old, tree);
	assert_false(http_static_retired(&h->statics, &old));
	/* Back to the tree for the tear-down: nothing lent from the empty
	 * one, let go at once. */
	assert_int_equal(http_static_swap(&h->statics, tree), 0);
	assert_true(http_static_retired(&h->statics, &old));
	assert_null(old);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		HH_TEST(test_over_http1),
		HH_TEST(test_over_http2),
		HH_TEST(test_swap_waits_for_answers_lent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
