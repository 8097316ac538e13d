/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewyk-load: an HTTP load generator on ewyk's own TCP. Each worker lcore
 * is a shard of its own, as in ewykd: one queue pair of the port, its
 * stack (lib/net), its connections and their HTTP state, its counters.
 * Only the main lcore reads the counters of the others (progress lines,
 * the summary), with relaxed loads of words the owner alone writes.
 */
#ifndef EWYK_LOAD_H
#define EWYK_LOAD_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>

#include "ewyk_tls.h"
#include "net_addr.h"
#include "net_stack.h"

#define LOAD_URLS_MAX 256
#define LOAD_PATH_MAX 2048
#define LOAD_WORKERS_MAX 64
#define LOAD_DEPTH_MAX 1024	/* -m: streams or pipelined requests */

/* One request to send, as given by URL, -d or -i. */
struct load_url {
	char method[16];
	char path[LOAD_PATH_MAX];	/* origin-form target */
	uint8_t *body;			/* NULL: none */
	uint32_t body_len;
	char *h1_head;			/* the HTTP/1.1 request head, built once */
	uint32_t h1_head_len;
};

enum load_proto_kind { LOAD_H2C, LOAD_H1 };

struct load_conf {
	/* the port (ewykd's options for its own side) */
	uint16_t port_id;
	uint32_t ip;			/* network order; 0: none */
	uint8_t prefix;
	uint16_t ip_count;		/* --ip-count: addresses from ip on */
	uint8_t ip6[16];
	uint8_t prefix6;		/* 0: no IPv6 */
	uint16_t mtu;
	uint32_t mbufs;
	/* the target: every URL's authority and scheme are the same */
	struct net_addr server;
	uint16_t server_port;
	bool tls;			/* https:// */
	char sni[256];			/* --sni; "": none (an address is none) */
	const char *tls_priority;	/* --tls-priority; NULL: lib/tls's */
	char authority[300];		/* Host / :authority */
	struct load_url urls[LOAD_URLS_MAX];
	uint32_t nb_urls;
	/* the load, in h2load's words */
	uint64_t requests;		/* -n; 0 with -D: until the time */
	uint32_t clients;		/* -c */
	uint32_t depth;			/* -m */
	double duration_s;		/* -D; 0: until -n are done */
	double rate;			/* --rate: requests/s, open loop; 0: closed */
	bool new_conn;			/* --new-conn */
	enum load_proto_kind proto;
	double timeout_s;		/* no answer this long: the request times out */
	double hold_s;			/* --hold: idle connections kept this long */
	uint32_t sample;		/* --sample: requests per second while held */
	/* answers checked */
	int expect_status;		/* 0: any 2xx or 3xx */
	int64_t expect_length;		/* -1: not checked */
	bool check_digest;
	uint8_t expect_sha256[32];
	char json[PATH_MAX];		/* --json FILE, or "" */
	bool quiet;			/* no progress lines */
};

/* Errors by kind; names are the JSON keys. */
#define LOAD_ERRORS(X) \
	X(connect) X(reset) X(closed) X(protocol) X(timeout) \
	X(status) X(length) X(digest) X(tls_handshake)

enum load_err {
#define LOAD_ERR_ENUM(n) LOAD_ERR_##n,
	LOAD_ERRORS(LOAD_ERR_ENUM)
#undef LOAD_ERR_ENUM
	LOAD_ERR__COUNT
};

const char *load_err_name(enum load_err e);

/*
 * A latency histogram in the manner of HdrHistogram: 2^LH_SUB_BITS
 * buckets per power of two of nanoseconds, so a value is known within
 * 1/2^LH_SUB_BITS (under 1 %) from 1 ns to over an hour.
 */
#define LH_SUB_BITS 7
#define LH_SUB (1u << LH_SUB_BITS)
#define LH_BUCKETS (LH_SUB * (43 - LH_SUB_BITS + 1))

struct load_hist {
	uint64_t count;
	uint64_t min_ns;
	uint64_t max_ns;
	uint64_t bucket[LH_BUCKETS];
};

void hist_record(struct load_hist *h, uint64_t ns);
void hist_merge(struct load_hist *dst, const struct load_hist *src);
/* The value at or under which a fraction q of the samples lie: its
 * bucket's highest value, never above the maximum seen; 0 when empty. */
uint64_t hist_percentile(const struct load_hist *h, double q);

/* A worker's counters: written by its owner only. */
struct load_stats {
	uint64_t started;	/* requests sent */
	uint64_t done;		/* answered whole, checked or not */
	uint64_t succeeded;	/* done, and every check passed */
	uint64_t failed;	/* done, and a check did not pass */
	uint64_t errored;	/* no answer: the connection broke */
	uint64_t timeouts;	/* no answer in time */
	uint64_t status[6];	/* by class: [2] 2xx ... [5] 5xx, [1] other */
	uint64_t err[LOAD_ERR__COUNT];
	uint64_t bytes_in;	/* what TCP handed up */
	uint64_t header_bytes;	/* HTTP/1.1 heads (h2: HEADERS payload) */
	uint64_t body_bytes;
	uint64_t conns_opened;
	uint64_t conns_established;
	uint64_t conns_open;	/* gauge */
	uint64_t busy_tsc;	/* polls that found work */
	uint64_t idle_tsc;	/* polls that found none */
	struct load_hist lat;	/* per request, from when it was due */
} __rte_cache_aligned;

struct load_worker;
struct load_conn;

/* How a connection's bytes move: plain TCP, or a TLS session between the
 * protocol and TCP (tls.c). */
struct load_transport {
	/* TCP is established: the connection is ready, or TLS's session
	 * begins (its handshake keeps it connecting until over). 0, or <0
	 * with no memory. */
	int (*established)(struct load_conn *c);
	/* TCP's bytes, for a transport between it and the protocol; NULL:
	 * they go to the protocol as they are. */
	void (*recv)(struct load_conn *c, const uint8_t *data, uint32_t len);
	uint32_t (*write)(struct load_conn *c, const void *p, uint32_t n);
	uint32_t (*space)(struct load_conn *c);
	/* Push what was written outside a receive upcall. */
	void (*push)(struct load_conn *c);
	void (*close)(struct load_conn *c);
	void (*abort)(struct load_conn *c);
};

/* A protocol's side of a connection. */
struct load_proto {
	/* Established: state set up (the HTTP/2 preface and SETTINGS). */
	int (*start)(struct load_conn *c);
	/* Sends request number seq, due at due_tsc (a free slot exists). */
	int (*send)(struct load_conn *c, uint64_t seq, uint64_t due_tsc);
	/* Bytes from the server; <0: the connection is broken. */
	int (*recv)(struct load_conn *c, const uint8_t *p, uint32_t n);
	/* Send room came back; and whatever was submitted goes out. */
	void (*flush)(struct load_conn *c);
	/* The server closed its side; <0: answers were cut short. */
	int (*peer_closed)(struct load_conn *c);
	/* Requests in flight are lost (counted by the caller); state freed. */
	void (*fini)(struct load_conn *c);
};

extern const struct load_proto load_h1;
extern const struct load_proto load_h2;
extern const struct load_transport load_tls_transport;

enum conn_state { CONN_FREE, CONN_CONNECTING, CONN_OPEN, CONN_CLOSING };

/* One client connection: a slot that may be reopened (--new-conn, or
 * after the server closed). */
struct load_conn {
	struct load_worker *w;
	struct tcp_conn *tc;
	struct tls_client *tls;	/* https: from TCP's handshake to its close */
	const struct load_transport *tr;
	const struct load_proto *proto;
	void *pstate;		/* the protocol's */
	uint32_t id;
	uint8_t state;		/* enum conn_state */
	bool listed_free;	/* on the worker's list of slots with room */
	bool listed_open;	/* on the worker's list of slots to open */
	bool retire;		/* close once its answers are in */
	uint32_t inflight;
	uint32_t sent_on_conn;	/* --new-conn: one, then close */
	/* Closed loop with -n: its share of the requests, as h2load gives
	 * each client n / c of them; and how many it sent. */
	uint64_t quota;
	uint64_t issued;
	uint64_t last_tsc;	/* last sent or received: timeouts */
};

/* Per-connection accounting the protocols call. */
struct load_req_end {
	uint64_t due_tsc;
	int status;
	uint64_t body_len;
	int64_t content_length;	/* -1: none said */
	const uint8_t *digest;	/* SHA-256 of the body, or NULL */
};
void conn_answered(struct load_conn *c, const struct load_req_end *e);
/* A request the connection could not answer: counted as kind. */
void conn_request_lost(struct load_conn *c, enum load_err kind);
/* The protocol broke the connection (bad answer): reset it. */
void conn_fail(struct load_conn *c, enum load_err kind);
/* The worker's configuration and its clock's TSC rate. */
const struct load_conf *conn_conf(const struct load_conn *c);
/* The connection carries HTTP now (TCP's handshake, or TLS's, is over),
 * in protocol p: <0 when p cannot start. */
int conn_ready(struct load_conn *c, const struct load_proto *p);
/* In an upcall, after input: more requests, what they wrote pushed. */
void conn_after_input(struct load_conn *c);
/* The server said it sends no more (FIN, or TLS's close_notify). */
void conn_peer_closed(struct load_conn *c);

/* The worker of an lcore. */
struct load_worker {
	uint16_t id;
	uint16_t queue;
	uint16_t port;
	/* between the protocol and TCP (https's); NULL: plain TCP */
	const struct load_transport *transport;
	struct net_stack *ns;
	struct net_stats net_stats;
	const struct load_conf *conf;
	struct load_conn *conns;
	uint32_t nb_conns;
	uint32_t *free_list;	/* slots with room for a request */
	uint32_t nb_free;
	uint32_t *open_list;	/* slots to open, a FIFO of nb_conns */
	uint32_t open_head;
	uint32_t nb_open_list;
	uint64_t budget;	/* requests this worker sends; UINT64_MAX: -D */
	uint64_t next_seq;	/* requests handed out so far */
	uint64_t start_tsc;
	uint64_t end_tsc;	/* -D's end; UINT64_MAX: none */
	uint64_t period_tsc;	/* open loop: between two due times */
	uint64_t period_frac;	/* its fraction, in 1/2^32 of a TSC tick */
	uint64_t timeout_tsc;
	uint64_t hold_end_tsc;
	bool holding;
	uint64_t next_sample_tsc;
	uint64_t inflight;	/* requests sent and not answered or lost */
	uint32_t connecting;	/* handshakes under way */
	uint64_t unresolved_tsc;	/* since the next hop was first asked
					 * for and not known; 0: known */
	uint64_t end_run_tsc;	/* when the load stopped */
	bool time_up;		/* -D's end or a signal: closing all */
	/* Worker 0 prints the progress lines when no main lcore is free to */
	bool report_self;
	struct load_worker *all;
	uint16_t nb_all;
	volatile bool finished;	/* read by the main lcore */
	struct load_stats stats;
	/* https: the worker's TLS client, its counters, and what its first
	 * session agreed (GnuTLS's static names) for the summary */
	struct tls_client_ctx *tls;
	struct tls_stats tls_stats;
	const char *tls_version;
	const char *tls_cipher;
};

int worker_init(struct load_worker *w, uint16_t id, uint16_t nb_workers,
		const struct load_conf *conf, const struct net_if *ifc,
		struct arp_cache *arp, struct net_nd *nd,
		const struct net_rss *rss, struct rte_mempool *pool);
/* The worker's loop, until its load is done or the run is stopped. */
int worker_run(void *arg);
void worker_fini(struct load_worker *w);
/* Open loop: the due time of request seq. */
uint64_t worker_due(const struct load_worker *w, uint64_t seq);
/* The worker's connection slot has room again. */
void worker_conn_room(struct load_worker *w, struct load_conn *c);
/* The slot is closed and may be opened again. */
void worker_conn_gone(struct load_worker *w, struct load_conn *c);

extern volatile bool load_quit;
extern uint64_t load_tsc_hz;

/* Options: 0, or 2 with one line on stderr (1: --help printed). */
int load_options_parse(struct load_conf *conf, int argc, char **argv);
void load_options_usage(FILE *out);

/* The sum of the workers' counters and histograms. */
void report_sum(struct load_worker *ws, uint16_t n, struct load_stats *sum);
void report_progress(struct load_worker *ws, uint16_t n, double elapsed_s);
/* h2load's summary lines and the latency line; the JSON file if asked.
 * Returns 0, or -1 when the JSON file cannot be written. */
int report_summary(const struct load_conf *conf, struct load_worker *ws,
		uint16_t n, double elapsed_s);

#endif /* EWYK_LOAD_H */
