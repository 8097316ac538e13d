/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.1 request-head parser (RFC 9112). Zero copy: the request points
 * into the caller's buffer. Strict where leniency lets requests be smuggled:
 * no obs-fold, no bare CR or LF, no whitespace before a colon, no control
 * characters, one consistent Content-Length, no Content-Length beside
 * Transfer-Encoding.
 */
#ifndef EWYK_HTTP1_PARSE_H
#define EWYK_HTTP1_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#define HTTP_MAX_HEADERS 64
#define HTTP1_MAX_TARGET 8192	/* the default limit of a request target */

enum http_method {
	HTTP_GET,
	HTTP_HEAD,
	HTTP_POST,
	HTTP_PUT,
	HTTP_DELETE,
	HTTP_OPTIONS,
	HTTP_PATCH,
	HTTP_TRACE,
	HTTP_CONNECT,
	HTTP_OTHER,
};

/* tchar (RFC 9110 5.6.2): the characters of a token, a field name. */
extern const bool http_tchar[256];

static inline bool
http_is_tchar(unsigned char c)
{
	return http_tchar[c];
}

/* A token: one tchar or more, NUL-terminated (a method, a field name). */
static inline bool
http_is_token(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (!http_is_tchar((unsigned char)*s))
			return false;
	return true;
}

struct http_str {
	const char *p;
	uint32_t len;
};

struct http_header {
	struct http_str name;
	struct http_str value;
};

/* A request head: parsed from HTTP/1.1 by http1_parse_request(), or
 * gathered from an HTTP/2 HEADERS frame (names lower case) into the same
 * shape, so that routing and handlers see one kind of request. */
struct http_head {
	enum http_method method;
	struct http_str method_str;
	struct http_str target;
	struct http_str path;	/* target up to '?' ("/" for an
				 * absolute-form target without a path) */
	struct http_str query;	/* after '?', may be empty */
	struct http_str authority;	/* an absolute-form target's; the
					 * Host field's value then */
	uint8_t minor;		/* HTTP/1.<minor> */
	uint16_t status;	/* a response's (http1_parse_response) */
	bool keep_alive;
	bool chunked;
	bool expect_continue;
	bool upgrade;		/* a request has an Upgrade field */
	int64_t content_length;	/* -1 when absent */
	const char *body;	/* set by the server when it holds the whole */
	uint32_t body_len;	/* (small) body for a dispatched handler */
	uint32_t nheaders;
	struct http_header headers[HTTP_MAX_HEADERS];
};

/*
 * Parses the request head at buf. Returns its length once complete, 0 when
 * more bytes are needed, or the negated HTTP status to answer with (400,
 * 414, 417, 431, 501, 505) when the request is bad. The target is in
 * origin-form, absolute-form (RFC 9112 3.2.2: "http://host/path"; its
 * authority then stands for the Host field, which an HTTP/1.1 request
 * must still have), or "*" for OPTIONS; at most HTTP1_MAX_TARGET bytes
 * (414).
 */
int http1_parse_request(const char *buf, size_t len, struct http_head *r);
/* The same with a target of at most max_target bytes. */
int http1_parse_request_max(const char *buf, size_t len, struct http_head *r,
		uint32_t max_target);

/*
 * Parses a response head at buf (an upstream's): the status, the header
 * fields, the framing (content_length, chunked) and keep_alive. Returns its
 * length once complete, 0 when more bytes are needed, or -502 when it is
 * malformed or framed in a way that cannot be followed.
 */
int http1_parse_response(const char *buf, size_t len, struct http_head *r);

/* Status to send when the buffer is full but the head is incomplete. */
int http1_overflow_status(const char *buf, size_t len);
/* A Content-Length value: 1 to 18 digits into *n; false for anything
 * else. */
bool http_parse_length(struct http_str v, int64_t *n);

/* Case-insensitive header lookup; NULL when absent. */
const struct http_str *http_head_find(const struct http_head *r,
		const char *name);

const char *http_method_name(enum http_method m);
/* Idempotent (RFC 9110 9.2.2): may be sent again after a failure. */
bool http_method_idempotent(enum http_method m);
/* The method of a name; HTTP_OTHER for one not listed. */
enum http_method http_method_parse(struct http_str s);
/* Whether s is the n bytes at lit, ignoring case. */
static inline bool
http_str_eq_nocase_n(struct http_str s, const char *lit, size_t n)
{
	return s.len == n && strncasecmp(s.p, lit, n) == 0;
}

/* Whether s is lit, ignoring case. Inline: with a literal, its length is
 * known at compile time and most names differ by length alone. */
static inline bool
http_str_eq_nocase(struct http_str s, const char *lit)
{
	return http_str_eq_nocase_n(s, lit, strlen(lit));
}

#endif /* EWYK_HTTP1_PARSE_H */
