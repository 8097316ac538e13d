/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.1 on a connection: requests parsed from a bounded input buffer,
 * pipelined up to HTTP1_PIPELINE deep with answers in request order,
 * request bodies (Content-Length and chunked) gathered for a handler or
 * read as they come by the route's reader, keep-alive and its timeouts. Every
 * connection starts here; the HTTP/2 preface or "Upgrade: h2c" hands it
 * to the connection layer for the switch.
 */
#ifndef EWYK_HTTP1_PROTO_H
#define EWYK_HTTP1_PROTO_H

#include <stddef.h>
#include <stdint.h>

struct http_conn;

#define HTTP1_PIPELINE 16	/* requests read ahead of their answers */

extern const struct http_proto http1_proto;

/* Bytes of one connection's HTTP/1.1 state (c->h1_mem), with an input
 * buffer of in_max bytes. */
size_t http1_state_size(uint32_t in_max);
/* Starts HTTP/1.1 on a new connection, in c->h1_mem. */
void http1_open(struct http_conn *c);

#endif /* EWYK_HTTP1_PROTO_H */
