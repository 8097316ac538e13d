/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/2 on a connection (h2c by prior knowledge or upgrade, h2 by TLS's
 * ALPN): a session of ewyk's own per connection (h2_conn.h), fed with
 * the bytes that come and writing into the transport as it has room;
 * DATA of bodies already in memory goes straight into the transport.
 * Requests go through the connection layer's routing to the handlers;
 * no I/O of its own.
 */
#ifndef EWYK_H2_PROTO_H
#define EWYK_H2_PROTO_H

#include <stddef.h>

struct http_conn;
struct http_head;

#define H2_RCV_SPACE (64 * 1024)	/* the session takes what comes */

extern const struct http_proto h2_proto;

/* A session for c, with our SETTINGS queued; NULL when out of memory. */
void *h2_open(struct http_conn *c);
/* Upgrade from HTTP/1.1 (RFC 7540 3.2, "Upgrade: h2c"): the session
 * starts with the client's HTTP2-Settings (base64url) and answers the
 * upgraded request r on stream 1. NULL on bad settings or no memory. */
void *h2_open_upgrade(struct http_conn *c, const char *settings_b64,
		size_t settings_len, const struct http_head *r);

#endif /* EWYK_H2_PROTO_H */
