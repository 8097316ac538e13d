/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTTP server over lib/net's TCP: the transport table that writes
 * into a shard's TCP connections, and the TCP upcalls that feed the
 * connection layer.
 */
#ifndef EWYK_HTTP_TCP_H
#define EWYK_HTTP_TCP_H

#include <stdint.h>

struct http_server;
struct net_stack;

/* The transport of http_server_conf; its context is the net_stack. */
extern const struct http_transport http_tcp_transport;

/* Makes s the upper layer of the connections to TCP port (host order) of
 * ns: 0, or net_stack_listen()'s error. */
int http_tcp_attach(struct http_server *s, struct net_stack *ns,
		uint16_t port);

#endif /* EWYK_HTTP_TCP_H */
