/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The access log, as the rest of the runtime feeds it: a record per
 * exchange, taken from the shard's ring of free ones when the request is
 * dispatched (or refused), completed when its answer is let go, then
 * queued for the writer thread. Nothing here waits or allocates: with no
 * free record the exchange goes unlogged and is counted.
 */
#ifndef EWYK_SERVE_ACCESS_LOG_H
#define EWYK_SERVE_ACCESS_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "http_head.h"
#include "net_addr.h"

struct access_ring;
struct serve_log;

#define ACCESS_TARGET_MAX 256	/* longer targets are cut, said with "..." */
#define ACCESS_FIELD_MAX 128	/* User-Agent, Referer */

struct access_rec {
	uint64_t start_tsc;
	uint64_t end_tsc;
	uint64_t bytes;		/* the answer's body, as far as known */
	uint16_t status;
	uint8_t version;	/* 1 or 2 */
	uint8_t bytes_known;
	uint16_t shard;
	uint16_t port;		/* the client's */
	struct net_addr peer;
	uint16_t target_len, ua_len, referer_len;
	char method[16];
	char target[ACCESS_TARGET_MAX];
	char ua[ACCESS_FIELD_MAX];
	char referer[ACCESS_FIELD_MAX];
};

/* A shard's rings on log (start-up; the log frees them when it closes):
 * NULL when out of memory. */
struct access_ring *access_ring_create(struct serve_log *log, uint16_t shard);
/* A free record with the request's fields filled (h NULL: a head that
 * could not be parsed), or NULL (counted). */
struct access_rec *access_rec_take(struct access_ring *r,
		const struct http_head *h, int version,
		const struct net_addr *peer, uint16_t port);
/* The exchange is over, with status: the record goes to the writer. */
void access_rec_done(struct access_ring *r, struct access_rec *rec,
		int status);

#endif /* EWYK_SERVE_ACCESS_LOG_H */
