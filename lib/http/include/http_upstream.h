/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTTP/1.1 client of one shard, towards its upstreams (--upstream
 * NAME=ADDR:PORT), over the shard's own TCP (tcp_open_addr()). Asynchronous:
 * a fetch is started with a request and tells its events as they happen,
 * on the shard's owner, never from inside upstream_fetch_start(). Each
 * upstream has a keep-alive pool of connections per shard (LIFO reuse).
 *
 * A fetch's life: start -> (ev->head, then ev->readable as the answer body
 * comes, read with upstream_fetch_read()) or ev->failed; the caller ends
 * it with upstream_fetch_release() once, in every case. The request body,
 * if any, is pulled with ev->req_body as the upstream's window takes it;
 * upstream_fetch_body_ready() says more of it is at hand. The answer body
 * is read as the client drains: the upstream's window follows.
 */
#ifndef EWYK_HTTP_UPSTREAM_H
#define EWYK_HTTP_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_head.h"
#include "lat_hist.h"
#include "net_addr.h"

struct net_stack;
struct upstream_client;
struct upstream_fetch;

#define UPSTREAM_MAX 64	/* servers, of every pool; a bit each in a mask */
#define UPSTREAM_NAME_MAX 32
#define UPSTREAM_HEAD_MAX 8192	/* a request head as sent */
#define UPSTREAM_HEALTH_URI_MAX 128

/* Why a fetch failed, and the errno a blocking fetch (ewyk_fetch())
 * returns for it; the proxy answers 504 to the timeouts, 502 else. */
#define UPSTREAM_ERRORS(X) \
	X(connect_refused, ECONNREFUSED) X(connect_timeout, ETIMEDOUT) \
	X(unreachable, EHOSTUNREACH) X(no_conn, EBUSY) \
	X(request_head, EMSGSIZE) X(reset, ECONNRESET) \
	X(bad_answer, EPROTO) X(answer_timeout, ETIMEDOUT) \
	X(client_body, EIO)

enum upstream_err {
#define UPSTREAM_ERR_ENUM(n, e) UPSTREAM_ERR_##n,
	UPSTREAM_ERRORS(UPSTREAM_ERR_ENUM)
#undef UPSTREAM_ERR_ENUM
	UPSTREAM_ERR__COUNT
};

const char *upstream_err_name(enum upstream_err e);
/* The positive errno of the kind (UPSTREAM_ERRORS). */
int upstream_err_errno(enum upstream_err e);
/* 504 for the timeouts, 502 for the rest. */
int upstream_err_status(enum upstream_err e);

/* How a pool of several servers chooses one for a request. */
enum upstream_balance {
	UPSTREAM_ROUND_ROBIN,	/* smooth weighted round robin (nginx's) */
	UPSTREAM_LEAST_CONN,	/* fewest busy connections per weight */
	UPSTREAM_HASH,		/* highest random weight of the request's key */
};

/* One server. The servers of a pool are consecutive targets of one name,
 * and the pool's settings are repeated in each. */
struct upstream_target {
	char name[UPSTREAM_NAME_MAX];
	struct net_addr addr;	/* IPv4 or IPv6, on a port's link */
	uint16_t port;		/* host order */
	uint16_t weight;	/* 0 or 1: one share */
	bool backup;		/* only while no other is in */
	uint8_t balance;	/* enum upstream_balance */
	char hash_field[32];	/* UPSTREAM_HASH's key: this request field's
				 * value; "": the client's address */
	uint32_t health_fails;	/* consecutive failures that take it out;
				 * 0: never taken out */
	uint32_t health_interval_ms;	/* out for this long, then tried;
					 * with health_uri, probed as often */
	char health_uri[UPSTREAM_HEALTH_URI_MAX];	/* "": no probes */
	uint32_t connect_timeout_ms;	/* 0: the client's */
	uint32_t answer_timeout_ms;	/* 0: the client's */
};

struct upstream_conf {
	const struct upstream_target *targets;
	unsigned int n;
	uint32_t max_conns;		/* per shard, all upstreams */
	uint32_t connect_timeout_ms;	/* ARP and handshake */
	uint32_t answer_timeout_ms;	/* request sent to answer head; and
					 * the longest silence in a body while
					 * the client waits for it */
	uint32_t idle_timeout_ms;	/* a pooled connection closes after */
};

/* Per upstream, per shard: written by the owner, read by telemetry. */
struct upstream_stats {
	uint64_t conns_open;	/* gauge: connecting, busy or idle */
	uint64_t conns_idle;	/* gauge: in the pool */
	uint64_t opened;	/* connections opened */
	uint64_t reused;	/* requests sent on a pooled connection */
	uint64_t requests;
	uint64_t retries;	/* on a fresh connection after a stale one */
	uint64_t answers;	/* answer heads received */
	uint64_t errors[UPSTREAM_ERR__COUNT];
	uint64_t cut;		/* let go before the answer's end: reset */
	uint64_t down;		/* gauge: 1 while taken out by its failures */
	uint64_t downs;		/* times taken out */
	uint64_t failovers;	/* requests sent on to another server after
				 * this one refused or failed to connect */
	uint64_t evicted;	/* idle ones reset to make room for another's */
	uint64_t checks;	/* health_uri probes sent */
	uint64_t checks_failed;	/* of them, failed or answered 5xx */
	struct lat_hist lat;	/* fetch start to answer head, ns */
};

/* A request to send: fields and strings are copied at start. */
struct upstream_req {
	struct http_str method;
	struct http_str target;		/* origin-form: path and query */
	const struct http_header *headers;	/* sent as they are */
	uint32_t nheaders;
	int64_t body_len;		/* -1: chunked, of unknown length */
	bool idempotent;		/* may be retried on a fresh connection */
	bool head;			/* HEAD: the answer has no body */
	/* A client's request passed on (a proxy's): its Host kept, and who
	 * asked, how, and through whom said (X-Forwarded-For and -Proto,
	 * Forwarded, Via); what the client said of those is not taken,
	 * unless it is trusted (a proxy in front): then its X-Forwarded-For
	 * and Forwarded go first, ours after them, and its X-Forwarded-Proto
	 * and -Host stand for ours. */
	bool forwarded;
	bool trusted;
	bool https;			/* the client's came over TLS */
	/* A WebSocket's opening handshake, passed on with its Upgrade and
	 * Connection: the body (body_len -1) goes as it comes, unframed,
	 * and a 101 answer's body is what the upstream sends until it
	 * closes. */
	bool tunnel;
	struct http_str client;		/* its address, "ADDR" */
};

struct upstream_events {
	/* The answer's head; h (fields pointing into the client's buffer)
	 * is valid during the call. body is false when no body follows. */
	void (*head)(void *arg, const struct http_head *h, bool body);
	/* More of the answer body, its end, or its failure: read again. */
	void (*readable)(void *arg);
	/* Failed before the head: answer with upstream_err_status(). */
	void (*failed)(void *arg, enum upstream_err why);
	/* The request body: fills at most cap bytes and returns how many,
	 * 0 at its end, HTTP_SOURCE_AGAIN for none now (then
	 * upstream_fetch_body_ready()), or -1 when it broke. */
	long (*req_body)(void *arg, void *buf, size_t cap);
};

/* Start-up: allocates the connections and fetches of one shard. */
struct upstream_client *upstream_client_create(struct net_stack *ns,
		const struct upstream_conf *conf, struct upstream_stats *stats);
/* Aborts what is open, frees the client. */
void upstream_client_destroy(struct upstream_client *cl);
/* Graceful stop: pooled connections close now, and no more are pooled. */
void upstream_client_drain(struct upstream_client *cl);
/* The index of the upstream of that name (its pool's first server), or
 * -1. */
int upstream_find(const struct upstream_client *cl, const char *name,
		size_t len);
/* A server of the pool whose first is first, for a request of key (its
 * hash: client address or a field's value; for UPSTREAM_HASH), none of
 * those in tried (a bit per target): of the servers in, by the pool's
 * balance; the backups only when no other is in. -1 when none is. */
int upstream_pick(struct upstream_client *cl, int first, uint64_t key,
		uint64_t tried);
/* Server idx's settings and this shard's counters of it. */
const struct upstream_target *upstream_target_of(
		const struct upstream_client *cl, int idx);
struct upstream_stats *upstream_stats_of(struct upstream_client *cl, int idx);
/* Whether a fetch that failed so may go to another server: it failed to
 * connect, so nothing of the request went out. */
bool upstream_err_before_request(enum upstream_err e);

/* Starts a fetch from upstream idx. NULL with *why when it cannot start
 * (no fetch or connection free: no_conn; off the link: unreachable; a
 * head larger than UPSTREAM_HEAD_MAX: request_head). Host is the
 * upstream's ADDR:PORT; the client's goes as X-Forwarded-Host. */
struct upstream_fetch *upstream_fetch_start(struct upstream_client *cl,
		int idx, const struct upstream_req *r,
		const struct upstream_events *ev, void *arg,
		enum upstream_err *why);
/* Answer body: bytes copied (up to cap), 0 at its end, HTTP_SOURCE_AGAIN
 * for none now (ev->readable follows), -1 when the upstream failed. */
long upstream_fetch_read(struct upstream_fetch *f, void *buf, size_t cap);
/* The answer's body has been read to its end (the next read gives 0). */
bool upstream_fetch_done(const struct upstream_fetch *f);
/* More of the request body is at hand: pull it. */
void upstream_fetch_body_ready(struct upstream_fetch *f);
/* The caller is done (answer read, failed, or the client left): a clean
 * connection goes back to the pool, one cut short is reset. No event
 * follows. */
void upstream_fetch_release(struct upstream_fetch *f);

#endif /* EWYK_HTTP_UPSTREAM_H */
