/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>
#include <strings.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "http1_parse.h"
#include "http_priv.h"

/* field-value characters: VCHAR, SP, HTAB, obs-text */
static bool
is_field_char(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* Finds the CRLF ending the line at p; -1 incomplete, -2 bare CR or LF.
 * One vector search for the LF: a CR inside a complete line is refused by
 * the checks every caller makes on each of its bytes (no CR is a tchar, a
 * target's byte or a field-value's). An incomplete line is searched for a
 * bare CR too, so that it is refused now, not when the buffer is full. */
static long
line_end(const char *p, const char *end)
{
	const char *lf = memchr(p, '\n', (size_t)(end - p));
	const char *cr;

	if (lf != NULL)
		return lf > p && lf[-1] == '\r' ? lf - 1 - p : -2;
	cr = memchr(p, '\r', (size_t)(end - p));
	return cr == NULL || cr + 1 == end ? -1 : -2;
}

/* An absolute-form target (RFC 9112 3.2.2): "http" or "https", "://", a
 * host that is not empty and has no userinfo (RFC 9110 4.2.1, 4.2.4),
 * then a path, a query, or nothing ("/"). Sets the authority and the
 * path with its query; false for anything else. */
static bool
absolute_form(struct http_head *r)
{
	const char *t = r->target.p, *end = t + r->target.len, *a, *p, *q;

	if (r->target.len > 7 && strncasecmp(t, "http://", 7) == 0)
		a = t + 7;
	else if (r->target.len > 8 && strncasecmp(t, "https://", 8) == 0)
		a = t + 8;
	else
		return false;
	for (p = a; p < end && *p != '/' && *p != '?'; p++)
		if (*p == '@' || *p == '#')
			return false;
	if (p == a)
		return false;
	r->authority = (struct http_str){ a, (uint32_t)(p - a) };
	q = memchr(p, '?', (size_t)(end - p));
	if (q == NULL)
		q = end;
	/* no path: the root's (RFC 9110 4.2.3) */
	r->path = q > p ? (struct http_str){ p, (uint32_t)(q - p) } :
		(struct http_str){ "/", 1 };
	r->query = q < end ? (struct http_str){ q + 1, (uint32_t)(end - q - 1) } :
		(struct http_str){ end, 0 };
	return true;
}

/* The method's tchars, the target's visible bytes (its first '?' noted on
 * the way) and the version, each scanned once. */
static int
parse_request_line(const char *p, size_t n, struct http_head *r,
		uint32_t max_target)
{
	const char *end = p + n, *sp1, *sp2, *q = NULL;

	for (sp1 = p; sp1 < end && http_is_tchar((unsigned char)*sp1); sp1++)
		;
	if (sp1 == p || sp1 == end || *sp1 != ' ')
		return -400;
	r->method_str = (struct http_str){ p, (uint32_t)(sp1 - p) };
	r->method = http_method_parse(r->method_str);

	for (sp2 = sp1 + 1; sp2 < end; sp2++) {
		unsigned char c = (unsigned char)*sp2;

		if (c <= 0x20 || c >= 0x7f)
			break;
		if (c == '?' && q == NULL)
			q = sp2;
	}
	if (sp2 == end || *sp2 != ' ' || sp2 == sp1 + 1)
		return -400;
	if (sp2 - sp1 - 1 > max_target)
		return -414;
	r->target = (struct http_str){ sp1 + 1, (uint32_t)(sp2 - sp1 - 1) };
	/* origin-form, absolute-form, or "*" for OPTIONS (RFC 9112 3.2) */
	if (r->target.p[0] != '/' && !(r->target.len == 1 &&
			r->target.p[0] == '*' && r->method == HTTP_OPTIONS) &&
			!absolute_form(r))
		return -400;

	if (end - sp2 - 1 != 8 || memcmp(sp2 + 1, "HTTP/", 5) != 0 ||
			sp2[6] < '0' || sp2[6] > '9' || sp2[7] != '.' ||
			sp2[8] < '0' || sp2[8] > '9')
		return -400;
	if (sp2[6] != '1')
		return -505;
	r->minor = (uint8_t)(sp2[8] - '0');

	if (r->path.p == NULL) {
		if (q == NULL) {
			r->path = r->target;
			r->query = (struct http_str){ sp2, 0 };
		} else {
			r->path = (struct http_str){ r->target.p,
				(uint32_t)(q - r->target.p) };
			r->query = (struct http_str){ q + 1,
				(uint32_t)(sp2 - q - 1) };
		}
	}
	return 0;
}

static int
parse_content_length(struct http_str v, int64_t *out)
{
	int64_t n;

	if (!http_parse_length(v, &n))
		return -400;
	if (*out >= 0 && *out != n)
		return -400;	/* conflicting duplicates */
	*out = n;
	return 0;
}

/* The next token of a comma-separated list at *i (RFC 9110 5.6.1), its
 * spaces trimmed; false past the last. */
static __rte_always_inline bool
next_token(struct http_str v, uint32_t *i, struct http_str *tok)
{
	uint32_t s, e;

	while (*i < v.len && (v.p[*i] == ' ' || v.p[*i] == '\t' ||
			v.p[*i] == ','))
		(*i)++;
	if (*i >= v.len)
		return false;
	s = *i;
	while (*i < v.len && v.p[*i] != ',')
		(*i)++;
	e = *i;
	while (e > s && (v.p[e - 1] == ' ' || v.p[e - 1] == '\t'))
		e--;
	*tok = (struct http_str){ v.p + s, e - s };
	return true;
}

bool
http1_list_has(struct http_str v, const char *token)
{
	struct http_str t;
	uint32_t i = 0;

	while (next_token(v, &i, &t))
		if (http_str_eq_nocase(t, token))
			return true;
	return false;
}

/* Connection: close, keep-alive, upgrade. */
static void
parse_connection(struct http_str v, struct http_head *r)
{
	struct http_str t;
	uint32_t i = 0;

	while (next_token(v, &i, &t)) {
		if (http_str_eq_nocase(t, "close"))
			r->keep_alive = false;
		else if (http_str_eq_nocase(t, "keep-alive"))
			r->keep_alive = true;
		else if (http_str_eq_nocase(t, "upgrade"))
			r->conn_upgrade = true;
	}
}

static int
header_semantics(struct http_head *r)
{
	bool host = false, te = false;
	uint32_t i;
	int rc;

	for (i = 0; i < r->nheaders; i++) {
		struct http_str n = r->headers[i].name, v = r->headers[i].value;

		if (http_str_eq_nocase(n, "host")) {
			if (host)
				return -400;	/* RFC 9112 3.2 */
			host = true;
			/* RFC 9112 3.2.2: an absolute-form target's host
			 * wins over the field's */
			if (r->authority.p != NULL)
				r->headers[i].value = r->authority;
		} else if (http_str_eq_nocase(n, "content-length")) {
			rc = parse_content_length(v, &r->content_length);
			if (rc < 0)
				return rc;
		} else if (http_str_eq_nocase(n, "transfer-encoding")) {
			if (te || !http_str_eq_nocase(v, "chunked"))
				return -501;	/* only chunked, once */
			te = true;
		} else if (http_str_eq_nocase(n, "connection")) {
			parse_connection(v, r);
		} else if (http_str_eq_nocase(n, "expect")) {
			if (!http_str_eq_nocase(v, "100-continue"))
				return -417;
			r->expect_continue = true;
		} else if (http_str_eq_nocase(n, "upgrade")) {
			r->upgrade = true;
		}
	}
	if (r->minor >= 1 && !host)
		return -400;
	if (!host && r->authority.p != NULL &&
			r->nheaders < HTTP_MAX_HEADERS) {
		/* HTTP/1.0: the target's host, for handlers, as a field */
		r->headers[r->nheaders++] = (struct http_header){
			{ "Host", 4 }, r->authority };
	}
	if (te && (r->content_length >= 0 || r->minor == 0))
		return -400;	/* RFC 9112 6.1: a smuggling vector */
	r->chunked = te;
	return 0;
}

/* The header fields from p up to the blank line. Returns the offset past
 * it, 0 when more bytes are needed, or the negated status. */
static long
parse_fields(const char *buf, const char *p, const char *end,
		struct http_head *r)
{
	long n;

	for (;;) {
		const char *colon, *v, *ve;
		uint32_t i;

		n = line_end(p, end);
		if (n == -1)
			return 0;
		if (n < 0)
			return -400;
		if (n == 0) {
			p += 2;
			break;
		}
		if (*p == ' ' || *p == '\t')
			return -400;	/* obs-fold (RFC 9112 5.2) */
		ve = p + n;
		for (colon = p; colon < ve &&
				http_is_tchar((unsigned char)*colon); colon++)
			;
		/* a space before the colon is no tchar either */
		if (colon == p || colon == ve || *colon != ':')
			return -400;
		v = colon + 1;
		for (i = 0; v + i < ve; i++)
			if (!is_field_char((unsigned char)v[i]))
				return -400;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		if (r->nheaders == HTTP_MAX_HEADERS)
			return -431;
		r->headers[r->nheaders].name =
			(struct http_str){ p, (uint32_t)(colon - p) };
		r->headers[r->nheaders].value =
			(struct http_str){ v, (uint32_t)(ve - v) };
		r->nheaders++;
		p += n + 2;
	}
	return p - buf;
}

int
http1_parse_request(const char *buf, size_t len, struct http_head *r)
{
	return http1_parse_request_max(buf, len, r, HTTP_MAX_TARGET);
}

int
http1_parse_request_max(const char *buf, size_t len, struct http_head *r,
		uint32_t max_target)
{
	const char *p = buf, *end = buf + len;
	long n;
	int rc;

	/* RFC 9112 2.2: ignore empty lines before the request line. */
	while (end - p >= 2 && p[0] == '\r' && p[1] == '\n')
		p += 2;
	n = line_end(p, end);
	if (n == -1)
		return 0;
	if (n < 0)
		return -400;
	memset(r, 0, offsetof(struct http_head, headers));
	r->content_length = -1;
	rc = parse_request_line(p, (size_t)n, r, max_target);
	if (rc < 0)
		return rc;
	r->keep_alive = r->minor >= 1;
	p += n + 2;

	n = parse_fields(buf, p, end, r);
	if (n <= 0)
		return (int)n;
	p = buf + n;
	rc = header_semantics(r);
	if (rc < 0)
		return rc;
	return (int)(p - buf);
}

int
http1_overflow_status(const char *buf, size_t len)
{
	/* No end of the request line in a full buffer: the target is huge. */
	return memchr(buf, '\n', len) == NULL ? 414 : 431;
}

/* Response framing (RFC 9112 6.3): Content-Length, or chunked alone. */
static int
response_semantics(struct http_head *r)
{
	bool te = false;
	uint32_t i;
	int rc;

	for (i = 0; i < r->nheaders; i++) {
		struct http_str n = r->headers[i].name, v = r->headers[i].value;

		if (http_str_eq_nocase(n, "content-length")) {
			rc = parse_content_length(v, &r->content_length);
			if (rc < 0)
				return rc;
		} else if (http_str_eq_nocase(n, "transfer-encoding")) {
			if (te || !http_str_eq_nocase(v, "chunked"))
				return -502;	/* a coding we cannot undo */
			te = true;
		} else if (http_str_eq_nocase(n, "connection")) {
			parse_connection(v, r);
		}
	}
	if (te && r->content_length >= 0)
		return -502;	/* RFC 9112 6.1: a smuggling vector */
	r->chunked = te;
	return 0;
}

int
http1_parse_response(const char *buf, size_t len, struct http_head *r)
{
	const char *p = buf, *end = buf + len;
	long n, i;
	int rc;

	n = line_end(p, end);
	if (n == -1)
		return 0;
	/* "HTTP/1.x NNN" and an optional reason */
	if (n < 0 || n < 12 || memcmp(p, "HTTP/1.", 7) != 0 ||
			p[7] < '0' || p[7] > '9' || p[8] != ' ' ||
			p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' ||
			p[11] < '0' || p[11] > '9' || (n > 12 && p[12] != ' '))
		return -502;
	for (i = 13; i < n; i++)	/* the reason */
		if (!is_field_char((unsigned char)p[i]))
			return -502;
	memset(r, 0, offsetof(struct http_head, headers));
	r->content_length = -1;
	r->minor = (uint8_t)(p[7] - '0');
	r->keep_alive = r->minor >= 1;
	r->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	n = parse_fields(buf, p + n + 2, end, r);
	if (n <= 0)
		return n == 0 ? 0 : -502;
	rc = response_semantics(r);
	return rc < 0 ? -502 : (int)n;
}
