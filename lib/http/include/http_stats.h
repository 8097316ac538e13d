/* SPDX-License-Identifier: BSD-3-Clause */
/* HTTP counters of one shard: written by its owner, summed by telemetry. */
#ifndef EWYK_HTTP_STATS_H
#define EWYK_HTTP_STATS_H

#include <stdint.h>

#include <rte_common.h>

/* Statuses counted one by one; anything else lands in "other". */
#define HTTP_STATUSES(X) \
	X(200) X(204) X(206) X(304) X(400) X(404) X(405) X(408) X(411) \
	X(413) X(414) X(416) X(417) X(431) X(500) X(501) X(503) X(505) \
	X(201) X(507) X(301) X(412) X(101)

enum http_status_slot {
#define HTTP_STATUS_SLOT(n) HTTP_ST_##n,
	HTTP_STATUSES(HTTP_STATUS_SLOT)
#undef HTTP_STATUS_SLOT
	HTTP_ST_OTHER,
	HTTP_ST__COUNT
};

#define HTTP_METHODS 10	/* enum http_method, HTTP_OTHER included */
#define H2_ERROR_CODES 14	/* NO_ERROR .. HTTP_1_1_REQUIRED */

struct http_stats {
	uint64_t requests;
	uint64_t by_status[HTTP_ST__COUNT];
	uint64_t body_bytes_out;
	uint64_t conns_accepted;
	uint64_t conns_refused;	/* no connection state left */
	uint64_t body_errors;	/* request bodies with broken chunked framing */
	uint64_t h2_conns;	/* connections that spoke HTTP/2 */
	uint64_t h2_requests;	/* of requests, those over HTTP/2 */
	uint64_t head_timeouts;	/* 408: the request head came too slowly */
	uint64_t idle_closes;	/* keep-alive connections closed for idleness */
	uint64_t h1_releases;	/* idle HTTP/1.1 connections that gave their
				 * state back (idle_release_ms) */
	int64_t h1_released;	/* now: such connections, still open */
	uint64_t h2_reset_floods;	/* sessions ended for too many resets */
	uint64_t pipeline_full;	/* reads stopped: HTTP1_PIPELINE answers owed */
	uint64_t by_method[HTTP_METHODS];	/* by enum http_method */
	int64_t h2_streams_open;	/* now, on this shard */
	uint64_t h2_streams;		/* opened by clients */
	uint64_t h2_resets_in;		/* RST_STREAM received */
	/* what this side ended, by RFC 9113 error code */
	uint64_t h2_resets_out[H2_ERROR_CODES];	/* RST_STREAM sent */
	uint64_t h2_goaways_out[H2_ERROR_CODES];	/* GOAWAY sent */
	/* HTTP/2 memory (http_mem.c) */
	uint64_t mem_allocs;	/* blocks handed out */
	uint64_t mem_grows;	/* of them, new blocks from the heap */
	uint64_t mem_bytes;	/* held in blocks, in use or free */
	uint64_t mem_huge;	/* past the largest class: heap each time */
	/* Request bodies gathered past a request's own buffer
	 * (http_body_pool.c), and those refused. */
	uint64_t body_slots_taken;	/* bodies gathered in a slot */
	int64_t body_slots_in_use;	/* now, on this shard */
	uint64_t body_slots_short;	/* none free: 503 */
	uint64_t bodies_too_large;	/* past max_body: 413 */
	uint64_t body_timeouts;		/* 408: a gathered body stopped */
	/* HTTP/2's receive windows (h2_window.c): WINDOW_UPDATEs that
	 * grew one, and connection windows the budget held back. */
	uint64_t h2_window_grows;
	uint64_t h2_window_budget_limited;
} __rte_cache_aligned;

/* Name of an RFC 9113 error code, as a telemetry key. */
const char *h2_error_name(unsigned int code);

/* Code of a slot, 0 for "other". */
int http_slot_status(enum http_status_slot s);

#endif /* EWYK_HTTP_STATS_H */
