/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conditional and range requests on a static file (RFC 9110 13, 14): the
 * request's fields, gathered in one pass over its head, then evaluated
 * against the representation chosen (a file, or one of its precompressed
 * siblings) in the order of RFC 9110 13.2.2: If-Match, else
 * If-Unmodified-Since (412); If-None-Match, else If-Modified-Since (304
 * for GET and HEAD); then If-Range, which decides whether a Range applies.
 */
#ifndef EWYK_HTTP_COND_H
#define EWYK_HTTP_COND_H

#include <stdbool.h>
#include <stdint.h>

#include "http_req.h"
#include "http_token.h"
#include "www.h"

enum http_cond_field {
	HTTP_COND_IF_MATCH,
	HTTP_COND_IF_NONE_MATCH,
	HTTP_COND_IF_MODIFIED_SINCE,
	HTTP_COND_IF_UNMODIFIED_SINCE,
	HTTP_COND_IF_RANGE,
	HTTP_COND_RANGE,
	HTTP_COND_ACCEPT_ENCODING,
	HTTP_COND_FIELDS,
};

/* The first line of each field present, and which came on more than one
 * line: an entity-tag list on several lines is one list, a date on
 * several is invalid (RFC 9110 5.3, 13.1.3). */
struct http_cond {
	uint32_t present;	/* 1 << field */
	uint32_t repeated;
	const struct http_str *f[HTTP_COND_FIELDS];	/* where present */
	const struct http_header *h;	/* the head, for repeated lines */
	uint32_t n;
};

void http_cond_fields(struct http_cond *c, const struct http_header *h,
		uint32_t n);

/* A field's first line, or NULL when the request has none. */
static inline const struct http_str *
http_cond_field(const struct http_cond *c, enum http_cond_field k)
{
	return c->present & (1u << k) ? c->f[k] : NULL;
}

/*
 * The preconditions of RFC 9110 13.2.2 steps 1 to 4 on the
 * representation rep: 0 when they hold (go on), 412 when If-Match or
 * If-Unmodified-Since fails, 304 when If-None-Match or If-Modified-Since
 * fails on a GET or HEAD (412 on another method). Fields other methods
 * ignore (OPTIONS) must not be given here.
 */
int http_cond_check(const struct http_cond *c, const struct www_file *rep,
		bool get_or_head);

/* Whether the request's Range applies to rep: there is one, and no
 * If-Range or one that holds (RFC 9110 13.1.5: the entity tag strongly
 * matches, or the date is rep's Last-Modified and that is a strong
 * validator). When it does not, the whole file is the answer. */
bool http_cond_range_applies(const struct http_cond *c,
		const struct www_file *rep);

/*
 * Whether a list of entity tags (If-Match, If-None-Match) names etag:
 * with strong comparison, a weak tag ("W/...") matches nothing; with weak
 * comparison the "W/" is ignored. "*" is not a member: the caller decides
 * what it means.
 */
bool http_etag_in_list(const struct http_str *list, const char *etag,
		size_t etag_len, bool strong);

/*
 * A single byte range (RFC 9110 14.1.2): "bytes=A-B", "bytes=A-" or
 * "bytes=-N". Returns 1 with [*from, *to] set, 0 to ignore the header
 * (absent, malformed or several ranges: the whole file is the answer), or
 * -1 when the range cannot be satisfied (416).
 */
int http_parse_range(const struct http_str *range, uint64_t size,
		uint64_t *from, uint64_t *to);

#endif /* EWYK_HTTP_COND_H */
