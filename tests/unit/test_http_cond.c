/* SPDX-License-Identifier: BSD-3-Clause */
/* The pieces of a static file's answer, alone: HTTP-dates, entity-tag
 * lists, the precondition order of RFC 9110 13.2.2, If-Range, byte
 * ranges, and the choice of a precompressed sibling by Accept-Encoding. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "http_accept.h"
#include "http_cond.h"
#include "http_date.h"

#define NOW 1700000000	/* Tue, 14 Nov 2023 22:13:20 GMT */

static int64_t
date(const char *s)
{
	int64_t t;

	return http_date_parse(s, strlen(s), NOW, &t) ? t : INT64_MIN;
}

static void
test_dates(void **state)
{
	char out[HTTP_DATE_LEN + 1];

	(void)state;
	/* RFC 9110 5.6.7's example in its three forms */
	assert_int_equal(date("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
	assert_int_equal(date("Sunday, 06-Nov-94 08:49:37 GMT"), 784111777);
	assert_int_equal(date("Sun Nov  6 08:49:37 1994"), 784111777);
	assert_int_equal(date("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
	assert_int_equal(date("Wed, 31 Dec 1969 23:59:59 GMT"), -1);
	assert_int_equal(date("Tue, 29 Feb 2000 12:00:00 GMT"), 951825600);
	/* RFC 850's two digits: more than 50 years ahead is the century
	 * before (from 2023, 73 is 2073, 74 is 1974) */
	assert_int_equal(date("Sunday, 06-Nov-73 08:49:37 GMT"),
			date("Mon, 06 Nov 2073 08:49:37 GMT"));
	assert_int_equal(date("Wednesday, 06-Nov-74 08:49:37 GMT"),
			date("Wed, 06 Nov 1974 08:49:37 GMT"));
	/* what is not an HTTP-date */
	static const char *const bad[] = {
		"", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37",
		"Sun, 06 nov 1994 08:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT",
		"Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 29 Feb 1900 08:49:37 GMT",
		"Sun, 06 Nov 1994 24:49:37 GMT", "Sun, 06 Nov 1994 08:60:37 GMT",
		"Sun, 6 Nov 1994 08:49:37 GMT ", "Sun, 06 Nov 1994 08:49:37 GMT, "
		"Mon, 07 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT",
		"Funday, 06-Nov-94 08:49:37 GMT", "Sun Nov 6 08:49:37 1994",
		"1994-11-06T08:49:37Z", "784111777",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (date(bad[i]) != INT64_MIN)
			fail_msg("took \"%s\"", bad[i]);
	http_date_format(784111777, out);
	assert_string_equal(out, "Sun, 06 Nov 1994 08:49:37 GMT");
	http_date_format(0, out);
	assert_string_equal(out, "Thu, 01 Jan 1970 00:00:00 GMT");
	http_date_format(951782400 + 86399, out);
	assert_string_equal(out, "Tue, 29 Feb 2000 23:59:59 GMT");
	for (int64_t t = 0; t < 4102444800; t += 7777777) {
		http_date_format(t, out);
		assert_int_equal(date(out), t);
	}
}

static bool
in_list(const char *list, const char *etag, bool strong)
{
	struct http_str l = { list, (uint32_t)strlen(list) };

	return http_etag_in_list(&l, etag, strlen(etag), strong);
}

static void
test_entity_tag_lists(void **state)
{
	(void)state;
	assert_true(in_list("\"abc\"", "\"abc\"", true));
	assert_false(in_list("\"abd\"", "\"abc\"", false));	/* wrong tag */
	assert_false(in_list("\"abcd\"", "\"abc\"", false));	/* longer */
	assert_false(in_list("\"ab\"", "\"abc\"", false));	/* shorter */
	assert_false(in_list("\"xyz\"", "\"abc\"", false));	/* same length */
	assert_true(in_list("W/\"abc\"", "\"abc\"", false));	/* weak: W/ off */
	assert_false(in_list("W/\"abc\"", "\"abc\"", true));	/* strong: never */
	assert_true(in_list("\"x\", \"y\",W/\"abc\"", "\"abc\"", false));
	assert_true(in_list(" \"x\" ,\t\"abc\" , ", "\"abc\"", true));
	assert_false(in_list("\"x\", \"y\"", "\"abc\"", false));
	assert_true(in_list("\"a,b\", \"abc\"", "\"abc\"", true));  /* a comma
								     * inside */
	assert_false(in_list("\"a,\"abc\"\"", "\"abc\"", true));
	assert_false(in_list("abc", "\"abc\"", false));	/* unquoted */
	assert_false(in_list("*", "\"abc\"", false));	/* not a member */
	assert_false(in_list("", "\"abc\"", false));
	assert_false(in_list("\"abc", "\"abc\"", false));	/* unclosed */
}

/* A representation, and requests of given fields against it. */
static struct www_file rep = {
	.etag = "\"0123456789abcdef\"", .etag_len = 18,
	.mtime = 784111777, .date_strong = true,
};

struct req {
	struct http_header h[8];
	uint32_t n;
	struct http_cond c;
};

static struct req *
req(struct req *r, ...)
{
	va_list ap;
	const char *name;

	r->n = 0;
	va_start(ap, r);
	while ((name = va_arg(ap, const char *)) != NULL) {
		const char *value = va_arg(ap, const char *);

		r->h[r->n++] = (struct http_header){
			{ name, (uint32_t)strlen(name) },
			{ value, (uint32_t)strlen(value) } };
	}
	va_end(ap);
	http_cond_fields(&r->c, r->h, r->n);
	return r;
}

static int
check(struct req *r)
{
	return http_cond_check(&r->c, &rep, true);
}

#define ETAG "\"0123456789abcdef\""
#define OTHER "\"fedcba9876543210\""
#define LM "Sun, 06 Nov 1994 08:49:37 GMT"
#define BEFORE "Sun, 06 Nov 1994 08:49:36 GMT"
#define AFTER "Sun, 06 Nov 1994 08:49:38 GMT"

static void
test_preconditions(void **state)
{
	struct req r;

	(void)state;
	assert_int_equal(check(req(&r, "Host", "h", NULL)), 0);
	/* If-None-Match: weak comparison, lists, "*" (13.1.2) */
	assert_int_equal(check(req(&r, "If-None-Match", ETAG, NULL)), 304);
	assert_int_equal(check(req(&r, "if-none-match", OTHER, NULL)), 0);
	assert_int_equal(check(req(&r, "If-None-Match", "W/" ETAG, NULL)), 304);
	assert_int_equal(check(req(&r, "If-None-Match", OTHER ", " ETAG, NULL)),
			304);
	assert_int_equal(check(req(&r, "If-None-Match", "*", NULL)), 304);
	assert_int_equal(check(req(&r, "If-None-Match", OTHER, "If-None-Match",
			ETAG, NULL)), 304);	/* a list on two lines */
	assert_int_equal(http_cond_check(&req(&r, "If-None-Match", ETAG,
			NULL)->c, &rep, false), 412);	/* not GET or HEAD */
	/* If-Modified-Since (13.1.3): only without If-None-Match */
	assert_int_equal(check(req(&r, "If-Modified-Since", LM, NULL)), 304);
	assert_int_equal(check(req(&r, "If-Modified-Since", AFTER, NULL)), 304);
	assert_int_equal(check(req(&r, "If-Modified-Since", BEFORE, NULL)), 0);
	assert_int_equal(check(req(&r, "If-None-Match", OTHER,
			"If-Modified-Since", LM, NULL)), 0);	/* INM wins */
	assert_int_equal(check(req(&r, "If-Modified-Since", "yesterday",
			NULL)), 0);
	assert_int_equal(check(req(&r, "If-Modified-Since", LM,
			"If-Modified-Since", LM, NULL)), 0);	/* a list */
	assert_int_equal(http_cond_check(&req(&r, "If-Modified-Since", LM,
			NULL)->c, &rep, false), 0);	/* GET and HEAD only */
	/* If-Match: strong comparison, "*" (13.1.1) */
	assert_int_equal(check(req(&r, "If-Match", ETAG, NULL)), 0);
	assert_int_equal(check(req(&r, "If-Match", OTHER, NULL)), 412);
	assert_int_equal(check(req(&r, "If-Match", "W/" ETAG, NULL)), 412);
	assert_int_equal(check(req(&r, "If-Match", OTHER ", " ETAG, NULL)), 0);
	assert_int_equal(check(req(&r, "If-Match", "*", NULL)), 0);
	/* If-Unmodified-Since (13.1.4): only without If-Match */
	assert_int_equal(check(req(&r, "If-Unmodified-Since", LM, NULL)), 0);
	assert_int_equal(check(req(&r, "If-Unmodified-Since", BEFORE, NULL)),
			412);
	assert_int_equal(check(req(&r, "If-Match", ETAG,
			"If-Unmodified-Since", BEFORE, NULL)), 0);	/* IM wins */
	assert_int_equal(check(req(&r, "If-Unmodified-Since", "not a date",
			NULL)), 0);
	/* 13.2.2: 412 before 304 */
	assert_int_equal(check(req(&r, "If-Match", OTHER, "If-None-Match",
			ETAG, NULL)), 412);
	assert_int_equal(check(req(&r, "If-Unmodified-Since", BEFORE,
			"If-Modified-Since", LM, NULL)), 412);
	assert_int_equal(check(req(&r, "If-Match", ETAG, "If-None-Match",
			ETAG, NULL)), 304);
}

static bool
applies(struct req *r)
{
	return http_cond_range_applies(&r->c, &rep);
}

static void
test_if_range(void **state)
{
	struct www_file weak_date = rep;
	struct req r;

	(void)state;
	assert_false(applies(req(&r, "If-Range", ETAG, NULL)));	/* no Range */
	assert_true(applies(req(&r, "Range", "bytes=0-1", NULL)));
	assert_true(applies(req(&r, "Range", "bytes=0-1", "If-Range", ETAG,
			NULL)));
	assert_false(applies(req(&r, "Range", "bytes=0-1", "If-Range", OTHER,
			NULL)));	/* stale: the whole file */
	assert_false(applies(req(&r, "Range", "bytes=0-1", "If-Range",
			"W/" ETAG, NULL)));	/* weak tags never match */
	assert_true(applies(req(&r, "Range", "bytes=0-1", "If-Range", LM,
			NULL)));
	assert_false(applies(req(&r, "Range", "bytes=0-1", "If-Range", AFTER,
			NULL)));	/* a date must be exact */
	assert_false(applies(req(&r, "Range", "bytes=0-1", "If-Range",
			"garbage", NULL)));
	assert_false(applies(req(&r, "Range", "bytes=0-1", "Range",
			"bytes=2-3", NULL)));	/* two ranges */
	weak_date.date_strong = false;
	assert_false(http_cond_range_applies(&req(&r, "Range", "bytes=0-1",
			"If-Range", LM, NULL)->c, &weak_date));
	assert_true(http_cond_range_applies(&req(&r, "Range", "bytes=0-1",
			"If-Range", ETAG, NULL)->c, &weak_date));
}

static enum www_coding
coding(const char *ae, unsigned int have)
{
	struct http_str v = { ae, ae != NULL ? (uint32_t)strlen(ae) : 0 };

	return http_accept_coding(ae != NULL ? &v : NULL, have);
}

#define BOTH (1u << WWW_BR | 1u << WWW_GZIP)
#define GZ (1u << WWW_GZIP)
#define NONE WWW_CODINGS

static void
test_accept_encoding(void **state)
{
	(void)state;
	assert_int_equal(coding(NULL, BOTH), NONE);
	assert_int_equal(coding("", BOTH), NONE);
	assert_int_equal(coding("gzip", BOTH), WWW_GZIP);
	assert_int_equal(coding("gzip, deflate, br", BOTH), WWW_BR);
	assert_int_equal(coding("gzip, deflate, br", GZ), WWW_GZIP);
	assert_int_equal(coding("br", GZ), NONE);
	assert_int_equal(coding("x-gzip", BOTH), WWW_GZIP);
	assert_int_equal(coding("GZIP;Q=0.5", BOTH), WWW_GZIP);
	assert_int_equal(coding("br;q=0.5, gzip", BOTH), WWW_GZIP);
	assert_int_equal(coding("br;q=0.5, gzip;q=0.4", BOTH), WWW_BR);
	assert_int_equal(coding("gzip;q=0, br;q=0", BOTH), NONE);
	assert_int_equal(coding("gzip;q=0", GZ), NONE);
	assert_int_equal(coding("*", BOTH), WWW_BR);
	assert_int_equal(coding("*;q=0.5, br;q=0", BOTH), WWW_GZIP);
	assert_int_equal(coding("*;q=0", BOTH), NONE);
	assert_int_equal(coding("identity", BOTH), NONE);
	assert_int_equal(coding("identity;q=0, gzip", BOTH), WWW_GZIP);
	assert_int_equal(coding("identity, gzip;q=0.5", BOTH), NONE);
	assert_int_equal(coding("identity;q=0.4, gzip;q=0.5", BOTH), WWW_GZIP);
	assert_int_equal(coding("gzip;q=2", BOTH), NONE);	/* malformed */
	assert_int_equal(coding("gzip;q=0.1234", BOTH), NONE);
	assert_int_equal(coding("gzip ; q=1.000 , br;q=1.0", BOTH), WWW_BR);
	assert_int_equal(coding("compress, deflate", BOTH), NONE);
	assert_int_equal(coding("gzip", 0), NONE);
}

/* Range: one byte range (RFC 9110 14.1.2), clamped to the file; past its
 * end unsatisfiable (-1: 416); anything else ignored (0: the whole file). */
static void
test_byte_ranges(void **state)
{
	static const struct {
		const char *h;
		uint64_t size;
		int r;
		uint64_t from, to;
	} cases[] = {
		{ "bytes=2-5", 27, 1, 2, 5 },
		{ "bytes=26-", 27, 1, 26, 26 },
		{ "bytes=27-", 27, -1, 0, 0 },
		{ "bytes=27-30", 27, -1, 0, 0 },
		{ "bytes=0-100", 27, 1, 0, 26 },
		{ "bytes=-5", 27, 1, 22, 26 },
		{ "bytes=-100", 27, 1, 0, 26 },
		{ "bytes=-0", 27, -1, 0, 0 },
		{ "bytes=0-", 0, -1, 0, 0 },
		{ "bytes=5-2", 27, 0, 0, 0 },
		{ "bytes=1-2,4-5", 27, 0, 0, 0 },
		{ "items=1-2", 27, 0, 0, 0 },
		{ "bytes=1-2x", 27, 0, 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_str h = { cases[i].h, (uint32_t)strlen(cases[i].h) };
		uint64_t from = 0, to = 0;
		int r = http_parse_range(&h, cases[i].size, &from, &to);

		if (r != cases[i].r || (r > 0 && (from != cases[i].from ||
				to != cases[i].to)))
			fail_msg("%s of %llu: %d %llu-%llu, want %d %llu-%llu",
					cases[i].h,
					(unsigned long long)cases[i].size, r,
					(unsigned long long)from,
					(unsigned long long)to, cases[i].r,
					(unsigned long long)cases[i].from,
					(unsigned long long)cases[i].to);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dates),
		cmocka_unit_test(test_entity_tag_lists),
		cmocka_unit_test(test_preconditions),
		cmocka_unit_test(test_if_range),
		cmocka_unit_test(test_byte_ranges),
		cmocka_unit_test(test_accept_encoding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
