/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What HTTP/1.1 and HTTP/2 share below the message: tokens (RFC 9110
 * 5.6.2), the methods, strings that point into a buffer and their
 * case-blind comparison, and a Content-Length value. Neither protocol's
 * own: both parse with these.
 */
#ifndef EWYK_HTTP_TOKEN_H
#define EWYK_HTTP_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

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

/* Bytes in someone else's buffer, not NUL-terminated. */
struct http_str {
	const char *p;
	uint32_t len;
};

/* The value of a hex digit, either case; -1 for anything else. */
static inline int
http_hex_digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

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

const char *http_method_name(enum http_method m);
/* Idempotent (RFC 9110 9.2.2): may be sent again after a failure. */
bool http_method_idempotent(enum http_method m);
/* The method of a name; HTTP_OTHER for one not listed. */
enum http_method http_method_lookup(struct http_str s);

/* The same, inline for most requests' method: no search, no call. */
static inline enum http_method
http_method_parse(struct http_str s)
{
	if (s.len == 3 && memcmp(s.p, "GET", 3) == 0)
		return HTTP_GET;
	return http_method_lookup(s);
}

#endif /* EWYK_HTTP_TOKEN_H */
