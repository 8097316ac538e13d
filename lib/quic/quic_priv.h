/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside lib/quic: an endpoint's connections (quic_endpoint.c: datagrams,
 * connection IDs, sending, timers), each one's QUIC and TLS state
 * (quic_conn.c) and its HTTP/3 streams (quic_h3.c).
 */
#ifndef EWYK_QUIC_PRIV_H
#define EWYK_QUIC_PRIV_H

#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include <gnutls/gnutls.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include "ewyk_quic.h"
#include "http_req.h"
#include "net_stack.h"

#define QUIC_CID_LEN 16		/* the IDs this server issues */
#define QUIC_CIDS_MAX 8		/* issued at once per connection */
#define QUIC_DGRAM_MAX 1452	/* an Ethernet MTU less IPv6 and UDP */
#define QUIC_SECRET_LEN 32
#define QUIC_STREAMS_BIDI 100	/* requests at once per connection */
#define H3_HEAD_BUF 8192	/* a request head's names and values */
#define QUIC_STREAMS_KEPT 256	/* spare streams an endpoint keeps */
#define H3_CHUNK 16384		/* a streamed answer's piece */
#define H3_SOURCE_HELD 65536	/* a streamed answer's bytes not yet
				 * acknowledged, at most: then its source
				 * waits for the client */

/* A piece of a streamed answer, lent to nghttp3 until acknowledged. */
struct h3_chunk {
	struct h3_chunk *next;
	uint32_t len;
	uint32_t acked;
	uint8_t data[H3_CHUNK];
};

#define QUIC_DIM(a) (sizeof(a) / sizeof((a)[0]))
#define QUIC_MIN(a, b) ((a) < (b) ? (a) : (b))

struct quic_conn;

/* A request stream of HTTP/3: its head as it arrives, then its answer. */
struct h3_stream {
	int64_t id;
	struct quic_conn *c;
	struct h3_stream *next, **pprev;	/* the connection's list */
	struct http_head head;
	uint32_t hused;
	bool head_over;		/* larger than H3_HEAD_BUF: 431 */
	bool pseudo_bad;	/* a malformed request (RFC 9114 4.3.1) */
	bool body_over;		/* past max_body: 413 */
	bool body_busy;		/* no body buffer free: 503 */
	bool dispatched;	/* offered to the embedder */
	bool answered;		/* its answer is submitted */
	struct http_answer *ans;	/* the embedder's, until released */
	struct http_answer *own;	/* an answer made here (errors) */
	const uint8_t *out;	/* the body not yet handed to nghttp3 */
	uint64_t out_left;	/* of it; of a source's known length */
	/* a streamed answer (HTTP_BODY_STREAM): what its source gave, oldest
	 * first, until acknowledged */
	struct h3_chunk *chunks, **chunks_tail;
	uint32_t unacked;	/* bytes in chunks */
	bool src_deferred;	/* its source had nothing: quic_resume() */
	bool src_held;		/* H3_SOURCE_HELD out: until acknowledged */
	/* a body read as it arrives: its unread bytes, oldest first (acked
	 * is what was read of the first); bounded by the stream's window,
	 * which opens again only as they are read */
	bool streamed;
	bool in_end;		/* the client's FIN came */
	bool in_failed;		/* reset by the client, or the stream gone */
	bool in_stopped;	/* no more wanted: STOP_SENDING */
	struct h3_chunk *in, **in_tail;
	uint64_t in_unread;
	char code[4];
	char length[24];
	uint32_t body_len;
	/* past body[]: the whole body in one of the shard's body buffers;
	 * the request takes it when dispatched */
	struct http_body_slot *slot;
	char hbuf[H3_HEAD_BUF];
	char body[EWYK_REQUEST_BODY_MAX];	/* gathered whole */
};

struct quic_conn {
	struct quic_endpoint *e;
	uint32_t slot;
	uint32_t gen;		/* bumped as the slot is reused */
	bool live;
	bool handshake_done;
	bool reading;		/* inside ngtcp2_conn_read_pkt() */
	/* ngtcp2's and nghttp3's memory, counted against conf.conn_mem */
	size_t mem;
	ngtcp2_mem ngtcp2_mem;
	nghttp3_mem nghttp3_mem;
	bool closing;		/* CONNECTION_CLOSE sent or received: only
				 * the timer's end is left */
	uint64_t h3err;		/* HTTP/3's error code to close with */
	ngtcp2_conn *qc;
	nghttp3_conn *h3;
	gnutls_session_t tls;
	void *creds_held;
	ngtcp2_crypto_conn_ref ref;
	ngtcp2_cid odcid;	/* the client's first destination ID */
	uint8_t cids[QUIC_CIDS_MAX][QUIC_CID_LEN];
	uint8_t ncids;
	struct net_udp_dgram path;	/* the local end and the peer of the
					 * last datagram; data unused */
	struct net_timer timer;
	struct h3_stream *streams;
	/* On the endpoint's list of handshakes under way (found by the
	 * client's first ID), until the handshake is done or c ends. */
	struct quic_conn *hs_next, **hs_pprev;
};

struct quic_endpoint {
	struct quic_conf conf;
	gnutls_priority_t prio;
	uint8_t secret[QUIC_SECRET_LEN];	/* reset tokens, ID masks */
	struct quic_tokens *own_tokens;	/* conf.tokens when none was given */
	void *creds;		/* the newest credentials, and their hold */
	void *creds_held;
	struct quic_conn *conns;
	uint32_t *free_slots;
	uint32_t nfree;
	struct quic_conn *handshaking;	/* the list of hs_next */
	/* Streams let go, kept for the next requests (up to
	 * QUIC_STREAMS_KEPT): none allocated per request once warm. */
	struct h3_stream *spare;
	uint32_t nspare;
	bool draining;
	time_t date_sec;	/* the Date of answers, made once a second */
	size_t date_len;
	char date[40];
	uint8_t out[QUIC_DGRAM_MAX];
};

/* quic_mem.c: c's allocators for ngtcp2 and nghttp3, counted from 0. */
void quic_mem_init(struct quic_conn *c);

/* quic_tokens.c: key of age 0 (the newest) or 1 (the one before it);
 * false when there is none such. */
bool quic_tokens_key(const struct quic_tokens *t, unsigned int age,
		uint8_t key[QUIC_SECRET_LEN]);

/* quic_endpoint.c */
uint64_t quic_now_ns(const struct quic_endpoint *e);
/* RFC 9110 6.6.1's Date, formatted at most once a second. */
const char *quic_date(struct quic_endpoint *e, size_t *len);
/* A new connection ID for c (its slot inside, masked), with its
 * stateless-reset token: 0 or -1. */
int quic_cid_new(struct quic_conn *c, ngtcp2_cid *cid, uint8_t *token);
void quic_cid_forget(struct quic_conn *c, const ngtcp2_cid *cid);
/* Sends what c has to send, then arms its timer. */
void quic_conn_flush(struct quic_conn *c);
/* A NEW_TOKEN for c's client, whose address its handshake proved. */
void quic_new_token(struct quic_conn *c);
/* c's handshake is done: off the list of those under way. */
void quic_conn_handshake_done(struct quic_conn *c);
/* Ends c now: its streams' answers go back, its slot is free. */
void quic_conn_free(struct quic_conn *c);

/* Closes c with the error of a failed call (CONNECTION_CLOSE once, or
 * silence where QUIC says so; HTTP/3's code in h3err when set), then
 * lets the timer end it. */
void quic_conn_fail(struct quic_conn *c, int liberr);
void quic_conn_close(struct quic_conn *c,
		const ngtcp2_connection_close_error *cc);
/* Closes c gracefully (H3_NO_ERROR). */
void quic_conn_end(struct quic_conn *c);

/* quic_conn.c */
/* c's QUIC and TLS state for the Initial hd on path d: 0, or -1.
 * odcid: the client's first destination ID when hd answers a Retry (its
 * token checked); NULL when there was none. */
int quic_conn_start(struct quic_conn *c, const struct net_udp_dgram *d,
		const ngtcp2_pkt_hd *hd, const ngtcp2_cid *odcid);
/* Frees c's QUIC, TLS and HTTP/3 state (quic_conn_free()'s part). */
void quic_conn_fini(struct quic_conn *c);
void quic_path_of(const struct net_udp_dgram *d, ngtcp2_path *path,
		struct sockaddr_storage *local, struct sockaddr_storage *remote);

/* quic_h3.c */
/* HTTP/3 over c once its handshake is done: 0, or an ngtcp2 error. */
int quic_h3_start(struct quic_conn *c);
/* ngtcp2's stream upcalls, passed on to nghttp3. */
int quic_h3_recv(struct quic_conn *c, int64_t id, const uint8_t *data,
		size_t len, bool fin);
int quic_h3_acked(struct quic_conn *c, int64_t id, uint64_t len);
int quic_h3_stream_close(struct quic_conn *c, int64_t id, uint64_t code,
		bool has_code);
int quic_h3_stream_reset(struct quic_conn *c, int64_t id);
int quic_h3_unblock(struct quic_conn *c, int64_t id);
/* Gives back every stream's answer (the connection ends). */
void quic_h3_streams_end(struct quic_conn *c);
/* Frees the endpoint's spare streams. */
void quic_h3_spares_free(struct quic_endpoint *e);
struct h3_stream *quic_h3_stream_find(struct quic_conn *c, int64_t id);
bool quic_h3_answer(struct h3_stream *st, struct http_answer *a);
/* A streamed answer's source has more: its stream goes on. */
bool quic_h3_resume(struct h3_stream *st);
/* Bytes the application is done with: the stream's and the connection's
 * windows open by n. */
void quic_h3_consumed(struct quic_conn *c, int64_t id, uint64_t n);
struct http_origin quic_h3_origin(const struct h3_stream *st);

/* quic_h3_body.c: a request body read as it arrives */
void quic_h3_body_start(struct h3_stream *st);
/* Keeps bytes nghttp3 handed over until read: 0, or -1 out of memory. */
int quic_h3_body_in(struct h3_stream *st, const uint8_t *data, size_t len);
void quic_h3_body_end(struct h3_stream *st);
void quic_h3_body_failed(struct h3_stream *st);
long quic_h3_body_read(struct h3_stream *st, void *buf, size_t cap);
void quic_h3_body_stop(struct h3_stream *st);
void quic_h3_body_free(struct h3_stream *st);

#endif /* EWYK_QUIC_PRIV_H */
