/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shard's HTTP/3 endpoint (h3.c), and where an origin's answer goes:
 * the HTTP server's connections or the QUIC endpoint's streams.
 */
#ifndef EWYK_SERVE_H3_H
#define EWYK_SERVE_H3_H

#include <stdbool.h>
#include <stdint.h>

#include "http_server.h"

struct serve;
struct net_addr;

/* With --http3 (serve_conf.http3): the endpoint on quic_port. */
int h3_create(struct serve *sv);
void h3_destroy(struct serve *sv);

bool serve_answer(struct serve *sv, struct http_origin o,
		struct http_answer *a);
bool serve_peer(struct serve *sv, struct http_origin o, struct net_addr *addr,
		uint16_t *port);
bool serve_awaits(struct serve *sv, struct http_origin o);
/* The source of o's streamed answer has more: false when its connection
 * or stream is gone. */
bool serve_resume(struct serve *sv, struct http_origin o);
/* Reads o's request body as it arrives: bytes, HTTP_SOURCE_AGAIN, 0 at
 * its end, -1 when broken (http_server_body_read()'s contract). */
long serve_body_read(struct serve *sv, struct http_origin o, void *buf,
		size_t cap);
/* o's handler is done: an HTTP/3 body not read to its end is refused
 * (over TCP the HTTP server deals with what is left itself). */
void serve_body_done(struct serve *sv, struct http_origin o);
/* Whether o came over TLS or QUIC. */
bool serve_secure(struct serve *sv, struct http_origin o);

#endif /* EWYK_SERVE_H3_H */
