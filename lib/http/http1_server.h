/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.1 over a shard's TCP: the callbacks table that net_stack calls,
 * per-connection request buffers from a per-shard free list, keep-alive and
 * static files. One instance per shard, touched only by its owner.
 */
#ifndef EWYK_HTTP1_SERVER_H
#define EWYK_HTTP1_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "http_stats.h"
#include "www.h"

struct net_stack;
struct http1_conn;

#define HTTP1_IN_MAX 8192	/* request head limit, and receive buffer */

struct http1_server {
	struct net_stack *ns;
	const struct www *www;
	struct http_stats *stats;
	struct http1_conn *conns;	/* one per TCP connection slot */
	struct http1_conn *free_list;
	uint32_t nconns;
	uint64_t date_sec;
	char date[40];		/* IMF-fixdate of date_sec */
};

int http1_server_init(struct http1_server *s, struct net_stack *ns,
		const struct www *www, struct http_stats *stats,
		uint32_t max_conns);
void http1_server_fini(struct http1_server *s);

#endif /* EWYK_HTTP1_SERVER_H */
