/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.1 head parser (RFC 9112): requests, and the answers of upstreams.
 * Zero copy: the head points into the caller's buffer. Strict where
 * leniency lets requests be smuggled: no obs-fold, no bare CR or LF, no whitespace before a colon, no control
 * characters, one consistent Content-Length, no Content-Length beside
 * Transfer-Encoding.
 */
#ifndef EWYK_HTTP1_PARSE_H
#define EWYK_HTTP1_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "http_head.h"

/*
 * Parses the request head at buf. Returns its length once complete, 0 when
 * more bytes are needed, or the negated HTTP status to answer with (400,
 * 414, 417, 431, 501, 505) when the request is bad. The target is in
 * origin-form, absolute-form (RFC 9112 3.2.2: "http://host/path"; its
 * authority then stands for the Host field, which an HTTP/1.1 request
 * must still have), or "*" for OPTIONS; at most HTTP_MAX_TARGET bytes
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

/* Whether a comma-separated list (a field's value) names token, in any
 * case. */
bool http1_list_has(struct http_str v, const char *token);

/* Status to send when the buffer is full but the head is incomplete. */
int http1_overflow_status(const char *buf, size_t len);

#endif /* EWYK_HTTP1_PARSE_H */
