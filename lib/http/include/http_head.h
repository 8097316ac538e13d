/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A message head in one shape for both protocols: parsed from HTTP/1.1
 * (http1_parse.h), or gathered from an HTTP/2 HEADERS frame (names lower
 * case), so that routing and handlers see one kind of request. Zero copy:
 * it points into its protocol's buffer.
 */
#ifndef EWYK_HTTP_HEAD_H
#define EWYK_HTTP_HEAD_H

#include <stdbool.h>
#include <stdint.h>

#include "http_token.h"

struct http_body_slot;

#define HTTP_MAX_HEADERS 64
/* The longest request target taken by default (http_server_conf's
 * max_target), and an upstream request's. */
#define HTTP_MAX_TARGET 8192

struct http_header {
	struct http_str name;
	struct http_str value;
};

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
	uint16_t status;	/* a response's */
	bool keep_alive;
	bool chunked;		/* the body's length is not known ahead */
	bool expect_continue;
	bool upgrade;		/* a request has an Upgrade field */
	bool conn_upgrade;	/* its Connection names upgrade */
	/* Taken as a tunnel by a route that passes WebSockets on: its body
	 * is what the client sends until it closes. */
	bool tunnel;
	int64_t content_length;	/* -1 when absent */
	/* The body's buffer when it is one of the server's body slots: a
	 * dispatch that takes the request takes it (http_req_fill()). */
	struct http_body_slot *body_slot;
	const char *body;	/* set by the server when it holds the whole */
	uint32_t body_len;	/* body for a dispatched handler */
	uint32_t nheaders;
	struct http_header headers[HTTP_MAX_HEADERS];
};

#endif /* EWYK_HTTP_HEAD_H */
