/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The request runtime of one shard: what runs between lib/http's server,
 * which parses requests and writes answers, and the handlers, which see
 * only the handler API (ewyk_http.h). It turns each routed request into a
 * self-contained task and hands it to lib/exec's Eat What You Kill
 * strategy, which consumes it inline, on a fiber, with the shard handed to
 * a reserved lcore, or on the blocking pool; it parks a fiber (or blocks a
 * pool thread) on the handler's waits and ends them on the shard's owner;
 * it streams request and answer bodies, fetches from upstreams
 * (ewyk_fetch()), keeps the journaled store's API, and brings every answer
 * back to the owner (inline, or through a completion ring). It implements
 * the parts of ewyk_http.h that lib/http does not.
 *
 * The embedder (app/ewykd) owns the process: EAL, ports, the shard's poll
 * loop, telemetry. Per shard it creates a runtime over the shard's network
 * stack, and its strategy's produce() callback polls the ports and then
 * serve_poll(), returning serve_next_task() when one is ready. Only the
 * shard's owner calls in, but for the read-only statistics.
 */
#ifndef EWYK_SERVE_H
#define EWYK_SERVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ewyk_exec.h"
#include "ewyk_http.h"
#include "http_route.h"
#include "http_server.h"
#include "http_upstream.h"
#include "lat_hist.h"
#include "net_addr.h"

struct http_sites;
struct net_stack;
struct serve;
struct serve_log;
struct store;
struct tls_config;
struct tls_shard;
struct tls_stats;
struct quic_stats;
struct quic_tokens;

/* The access log's line format. */
enum serve_log_format {
	SERVE_LOG_COMBINED,	/* as Apache's and nginx's "combined" */
	SERVE_LOG_JSON,		/* one JSON object per line */
};

struct serve_log_stats {
	uint64_t lines;		/* written */
	uint64_t drops;		/* exchanges unlogged: a shard's ring full */
	uint64_t write_errors;	/* writes or reopens that failed */
	uint64_t reopens;
};

/* Time of an lcore, in TSC cycles, by what it did: the embedder counts
 * its polls, the runtime the handlers the lcore runs, those run inside a
 * poll too (lib/http's inline routes: static files), which the embedder
 * takes out of the poll's time. An array indexed by lcore id, shared by
 * the shards. On lcores, tasks add up to the strategy's PC, PIC, EPC and
 * FIBER counts; PEC tasks run on the blocking pool. */
struct serve_lcore_time {
	uint64_t producing;	/* polls that found work, handlers left out */
	uint64_t idle;		/* polls that found none, and sleeps */
	uint64_t consuming;	/* handlers run on the lcore */
	uint64_t tasks;		/* handlers run on the lcore */
} __attribute__((aligned(64)));

struct serve_conf {
	uint16_t id;			/* the shard's: names its ring */
	struct net_stack *ns;		/* TCP, the clock and the timers */
	const struct ewyk_router *router;	/* read-only once serving */
	const struct http_sites *sites;	/* by Host, router shared; may be NULL */
	/* Per-route counters' slots: every route's id is below (with sites,
	 * http_sites_number_routes()'s count); 0: HTTP_ROUTES_MAX, the
	 * router's alone. */
	uint32_t route_ids;
	/* The strategy: its producer is the embedder's poll loop. */
	struct ewyk_task *(*produce)(void *ctx);
	void *produce_ctx;
	struct ewyk_executor exec;	/* the reserved lcores, the pool */
	enum ewyk_mode mode;
	uint64_t watch_ns;		/* watched hand-off; 0: EPC as Jetty */
	uint32_t fibers;		/* 0: FIBER handlers run BLOCKING */
	uint32_t fiber_stack_kb;
	/* The HTTP server, on TCP port listen_port (host order). */
	uint16_t listen_port;
	struct http_stats *http_stats;
	uint32_t max_conns;
	uint32_t header_timeout_ms;
	uint32_t keepalive_timeout_ms;
	uint32_t max_head_bytes;	/* an HTTP/1.1 request head; 0: 16 KiB */
	uint32_t max_target;		/* a request target; 0: 8 KiB */
	uint32_t max_body;		/* a body gathered whole; 0: 1 MiB */
	uint32_t body_buffers;		/* such bodies at once; 0: 16 */
	/* TLS on port tls_port (host order), into the same HTTP server, with
	 * the process's configuration (NULL: no TLS port) and the shard's
	 * counters. Handshake steps are tasks of the strategy, or with
	 * tls_inline all run on the owner as they come (a baseline). */
	struct tls_config *tls;
	uint16_t tls_port;
	struct tls_stats *tls_stats;
	bool tls_inline;
	/* Not NULL: a full handshake goes to a helper only while this says
	 * the helper's CPUs have room, else it runs inline (--tls-offload
	 * auto). */
	const atomic_bool *tls_room;
	/* HTTP/3 over QUIC on UDP port quic_port (host order), with the TLS
	 * configuration's certificates (tls required), into the same
	 * routes and dispatch; the endpoint's counters. */
	bool http3;
	uint16_t quic_port;
	uint32_t quic_retry_threshold;	/* handshakes under way, then Retry */
	uint32_t quic_conn_mem;		/* bytes a connection may hold */
	uint32_t quic_handshake_timeout_ms;
	struct quic_stats *quic_stats;
	struct quic_tokens *quic_tokens;	/* address tokens' keys */
	/* Upstreams for ewyk_fetch() and the proxy; NULL: none. */
	const struct upstream_conf *upstream;
	/* Clients whose forwarded fields a proxied request passes on
	 * (--trusted-forwarder): ntrusted blocks, read-only. */
	const struct net_prefix *trusted;
	uint16_t ntrusted;
	struct serve_lcore_time *lcore_time;	/* NULL: not counted */
	struct serve_log *log;		/* the access log; NULL: none */
};

/* Per route, per shard: requests and their latency from production to
 * the answer handed back to the owner. */
struct serve_route_stats {
	struct lat_hist lat;
	uint64_t errors;	/* 5xx answers */
} __attribute__((aligned(64)));

/* Fiber handlers and their waits. */
struct serve_fiber_stats {
	uint32_t waiting;	/* gauge: waits armed (fibers and threads) */
	uint64_t parks;
	uint64_t wakes;		/* by ewyk_wait_wake() */
	uint64_t timeouts;
	uint64_t cancelled;	/* the client left */
	uint64_t no_stack;	/* a stack could not be made: 503 */
};

/* ewyk_fetch()'s handles, as many as upstream connections. */
struct serve_fetch_stats {
	uint32_t size;
	uint32_t in_use;	/* gauge */
	uint32_t peak;
	uint64_t started;	/* fetches under way on a handle */
	uint64_t queued;	/* had to wait for a free handle */
	uint64_t left_open;	/* closed by their handler's return */
};

/* The routes' limits per client address (limit.h). */
struct limit_stats {
	uint64_t rate_refused;	/* 429: beyond limit-rps and limit-burst */
	uint64_t conns_refused;	/* 429: limit-conns in progress */
	uint64_t evicted;	/* a client's entry taken while it owed */
	uint64_t untracked;	/* served uncounted: its set all held */
};

/* Written by the owner, read by telemetry (relaxed loads). */
/* Answers a route's compress = on deflated, on the owner. */
struct serve_compress {
	uint64_t answers;	/* gzipped */
	uint64_t in_bytes;	/* before */
	uint64_t out_bytes;	/* after */
	uint64_t busy;		/* sent as they were: every compressor busy */
	uint32_t streams;	/* compressors at work (gauge) */
};

/* --tls-offload auto without room on the helpers' CPUs: a full
 * handshake's costly step inline at most once per TLS_INLINE_GAP_US. */
#define TLS_INLINE_GAP_US 1000

struct tls_inline_budget {
	uint64_t next_us;	/* the next step may run inline from then */
	uint64_t inlined;	/* kept inline: no room on the helpers' CPUs */
	uint64_t spilled;	/* handed over all the same: one ran inline
				 * within the gap */
};

struct serve_stats {
	uint64_t overloaded;	/* no task free: 503 */
	struct tls_inline_budget tls_inline;
	uint64_t deferred;	/* handlers that asked for the pool */
	uint64_t completions;	/* answers through the ring */
	uint64_t stale;		/* answers for connections gone */
	struct serve_fiber_stats fib;
	struct serve_fetch_stats fetch;
	struct upstream_stats upstream[UPSTREAM_MAX];
	struct limit_stats limits;
	struct serve_compress compress;
	struct serve_route_stats *routes;	/* by route id */
	uint32_t nroutes;
};

/* Start-up, once the executors run: the server, the tasks, the ring,
 * the fibers, the upstream client. NULL when out of memory. */
struct serve *serve_create(const struct serve_conf *conf);
/* After production stopped for good, before the network stack goes: the
 * upstream connections are reset. */
void serve_close(struct serve *sv);
/* Once the network stack is gone (its connections' ends reached the
 * server): frees everything. */
void serve_destroy(struct serve *sv);

struct ewyk_strategy *serve_strategy(const struct serve *sv);
const struct serve_stats *serve_stats(const struct serve *sv);
struct ewyk_fiber_pool *serve_fibers(const struct serve *sv);	/* or NULL */
const struct tls_shard *serve_tls(const struct serve *sv);	/* or NULL */

/* On the owner, every turn of the poll loop after the ports: answers
 * that came back, durable writes, fetches waiting for a handle (the
 * server's and the upstreams' timeouts are timers of the shard's wheel,
 * run by net_timers()). Returns the work done. */
unsigned int serve_poll(struct serve *sv);
/* The next task to consume (a new request, or a woken fiber), or NULL. */
struct ewyk_task *serve_next_task(struct serve *sv);
/* True when no task waits to be consumed. */
bool serve_idle(const struct serve *sv);
/* Graceful stop: connections finish what they were asked, GOAWAY,
 * pooled upstream connections close. */
void serve_drain(struct serve *sv);
/* Starts production on reserved worker idx; -1 when it is not idle. */
int serve_start(struct serve *sv, struct ewyk_reserved *reserved,
		unsigned int idx);
/* Main lcore, now and then: an owner inside one inline task for longer
 * than stuck_ms loses the shard to an idle reserved lcore (a CAS on the
 * strategy's word; the old owner leaves when its task ends). */
void serve_watchdog(struct serve *sv, struct ewyk_reserved *reserved,
		uint64_t now_ms, uint32_t stuck_ms);
/* On the owner as production stops for good, then on the main lcore
 * until the pools are idle, and once after they stopped: the answers they
 * posted are written, and handlers still waiting (a pool thread's wait,
 * which only the owner could end) are cancelled. Returns what it did. */
unsigned int serve_finish(struct serve *sv);
/* Anywhere, once the drain's time is up: handlers sleeping on a thread
 * (ewyk_sleep() on a pool thread, or on an lcore that handed the shard
 * over) wake at once with -ECANCELED, and no thread sleeps from then on. */
void serve_cut_sleeps(struct serve *sv);

/*
 * The access log, for the process: a line per exchange (combined or
 * JSON) written by a thread of its own from per-shard rings, so that no
 * shard ever waits for it; an exchange that finds its shard's ring full
 * goes unlogged, counted as a drop. path "-" is standard output. NULL
 * with the reason in err when the file cannot be opened.
 */
struct serve_log *serve_log_open(const char *path,
		enum serve_log_format format, char *err, size_t errlen);
/* The file opened again (after logrotate moved it), by the writer. */
void serve_log_reopen(struct serve_log *l);
const struct serve_log_stats *serve_log_stats(const struct serve_log *l);
/* Once every shard has stopped: what is queued is written, then closed. */
void serve_log_close(struct serve_log *l);

/* The journaled store behind ewyk_state_*(): before any handler runs,
 * plugins' init included; NULL at the end. */
void serve_state_attach(struct store *st);

/* Built-in routes, written against the handler API like any plugin. */
/* The demonstration and test routes: /echo, /bytes, /upload, /delay,
 * /blocking-delay, /spin, /either, and /kv/ over kv (in memory). */
int serve_demo_routes_add(struct ewyk_router *r, struct store *kv);
/* /v1/state/KEY over the journaled store (the one attached for the state
 * API); a fiber handler when there are fibers. token: "" for none, else
 * every request must bring "Authorization: Bearer TOKEN" (401 without). */
int serve_state_routes_add(struct ewyk_router *r, struct store *state,
		bool fibers, const char *token);
/* /proxy/NAME/REST to the upstream NAME, when there are upstreams. */
int serve_proxy_route_add(struct ewyk_router *r);

/* A route of the configuration file ([route NAME]): its path matched at
 * a '/' boundary (prefix) or whole (exact), and what it does. */
enum serve_route_kind {
	SERVE_ROUTE_ROOT,	/* files: the path after the prefix in files */
	SERVE_ROUTE_UPSTREAM,	/* forwarded to the upstream named target */
	SERVE_ROUTE_REDIRECT,	/* code to target, {host} and {uri} filled */
	SERVE_ROUTE_STATUS,	/* code, its reason for a body */
	SERVE_ROUTE_PLUGIN,	/* named: a plugin's handler */
};

struct http_static;

struct serve_route {
	const char *path;
	bool exact;
	enum serve_route_kind kind;
	const struct http_static *files;	/* ROOT's tree */
	const char *target;	/* UPSTREAM's name, REDIRECT's URL */
	const struct http_named *named;	/* PLUGIN's handler */
	uint16_t code;
	bool strip_prefix;	/* UPSTREAM: the path after the prefix */
	bool compress;		/* UPSTREAM, PLUGIN: gzip text answers a client
				 * takes */
	bool websocket;		/* UPSTREAM: WebSockets passed on (HTTP/1.1) */
	const char *const *headers;	/* "NAME: VALUE", added to answers */
	uint16_t nb_headers;
	struct http_limit limit;	/* per client address; zeros: none */
};

/* Adds route sr (the caller's, for as long as r serves) to r. 0, or the
 * negative errno of ewyk_route_add(). */
int serve_route_add(struct ewyk_router *r, const struct serve_route *sr);

#endif /* EWYK_SERVE_H */
