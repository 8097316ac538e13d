/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/2 on a connection (h2c, by prior knowledge or upgrade): one
 * nghttp2 server session per connection, fed with nghttp2_session_mem_recv
 * and drained by nghttp2_session_send, whose callback only queues into
 * the transport as room allows (nghttp2 keeps the rest); DATA of bodies
 * already in memory is written by the send-data callback straight into
 * the transport. Requests go through the connection layer's routing to
 * the handlers; no I/O inside nghttp2.
 */
#ifndef EWYK_H2_PROTO_H
#define EWYK_H2_PROTO_H

#include <stddef.h>

struct http_conn;
struct http_head;

#define H2_RCV_SPACE (64 * 1024)	/* nghttp2 takes what comes */

extern const struct http_proto h2_proto;

/* A session for c, with our SETTINGS queued; NULL when out of memory. */
void *h2_open(struct http_conn *c);
/* Upgrade from HTTP/1.1 (RFC 7540 3.2, "Upgrade: h2c"): the session
 * starts with the client's HTTP2-Settings (base64url) and answers the
 * upgraded request r on stream 1. NULL on bad settings or no memory. */
void *h2_open_upgrade(struct http_conn *c, const char *settings_b64,
		size_t settings_len, const struct http_head *r);

#endif /* EWYK_H2_PROTO_H */
