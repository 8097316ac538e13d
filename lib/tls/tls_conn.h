/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A shard's TLS connections (private to lib/tls). tls_conn.c keeps the
 * shard, the TCP upcalls, the transport HTTP writes through and the
 * record layer; tls_handshake.c the handshake's steps. The owner of the
 * shard touches everything here, except a step handed out: then the step
 * has the session and its staging (struct tls_hs), and the owner only
 * appends input beyond the step's end, until tls_work_done().
 */
#ifndef EWYK_TLS_CONN_H
#define EWYK_TLS_CONN_H

#include <errno.h>
#include <string.h>

#include <gnutls/gnutls.h>

#include "ewyk_tls.h"
#include "http_server.h"
#include "net_stack.h"
#include "tcp.h"
#include "tls_config.h"

#define TLS_RECORD_MAX 16384
/* A handshake's input: a ClientHello (GnuTLS takes messages up to
 * TLS_HELLO_MAX), the records around it, and what follows Finished. */
#define TLS_HELLO_MAX 16384
#define TLS_HS_IN (TLS_HELLO_MAX + 4096)
#define TLS_HS_OUT 16384	/* a flight: certificates, their chains */
#define TLS_TICK_MS 1000
#define TLS_HS_STEPS_MAX 16	/* a handshake that needs more is refused */

/* One record's plaintext gathered from small writes (nghttp2 writes a
 * 9-byte frame header, then the frame), for one session at a time: a
 * write to another sends it first. */
struct tls_cork {
	void *owner;		/* the session whose bytes these are */
	uint32_t len;
	uint8_t buf[TLS_RECORD_MAX];
};

/* The owner's n bytes encrypted into TCP; false once the owner is no
 * longer open (nothing more goes out for it). */
typedef bool (*tls_cork_send_t)(void *owner, const uint8_t *p, uint32_t n);

/* Staging of a connection's handshake, from a shard's pool; given back
 * once the handshake is over, so that an idle connection holds none. */
struct tls_hs {
	struct tls_hs *free_next;
	uint32_t in_len;	/* staged: the owner appends here */
	uint32_t in_off;	/* taken by GnuTLS */
	uint32_t out_len;	/* written by GnuTLS */
	uint32_t out_off;	/* handed to TCP */
	uint8_t in[TLS_HS_IN];
	uint8_t out[TLS_HS_OUT];
};

/* A handshake step: what the one who runs it needs and tells. */
struct tls_work {
	struct tls_conn *tc;
	uint32_t in_end;	/* the step reads the staging up to here */
	int rc;			/* gnutls_handshake()'s */
	bool again;		/* call again without new input: the flight
				 * did not fit, or a warning alert came */
	uint8_t cost;		/* enum tls_work_cost */
	uint64_t cpu_ns;
};

enum tls_conn_state {
	TC_FREE,
	TC_HANDSHAKE,
	TC_OPEN,
	TC_CLOSED,	/* failed or closed: input is dropped */
};

struct tls_conn {
	struct tls_shard *sh;
	struct tcp_conn *tcp;		/* NULL once TCP let it go */
	struct http_conn *http;		/* once established */
	gnutls_session_t s;
	struct tls_gen *gen;		/* its credentials' generation */
	struct tls_hs *hs;		/* while handshaking */
	struct tls_work work;
	struct net_timer deadline;	/* the handshake's */
	struct net_timer resume;	/* a held record goes on */
	/* What the pull callback reads: a received segment, or the staging. */
	const uint8_t *in;
	uint32_t in_len;
	uint32_t in_off;
	/* A decrypted record HTTP could not take whole. */
	gnutls_packet_t held;
	uint32_t held_off;
	uint32_t rcv_space;		/* HTTP's */
	uint32_t rec_max;		/* plaintext per record */
	uint16_t overhead;		/* bytes a record adds */
	uint8_t state;			/* enum tls_conn_state */
	uint8_t depth;			/* inside our own calls: no free */
	uint8_t steps;			/* handshake steps run */
	bool step_out;			/* handed to the embedder */
	bool gone;			/* TCP let go meanwhile: free at end */
	bool timed_out;
	bool send_pending;		/* GnuTLS holds a record for TCP */
	bool eof;			/* close_notify received */
	bool bye_sent;
	bool hs_waiting;		/* queued for a staging */
	struct tls_conn *free_next;
	/* The queue for a staging, first come first served. */
	struct tls_conn *wait_next;
	struct tls_conn *wait_prev;
};

struct tls_shard {
	struct tls_shard_conf conf;
	struct tls_stats *st;
	struct tls_conn *conns;
	struct tls_conn *free_conns;
	struct tls_hs *hs_mem;
	struct tls_hs *free_hs;
	/* Connections whose ClientHello TCP holds until a staging frees. */
	struct tls_conn *hs_wait_head;
	struct tls_conn *hs_wait_tail;
	struct tls_gen *gen;		/* the newest this shard took */
	uint32_t steps_out;
	struct net_timer tick;		/* takes up a reload when idle */
	struct net_timer cork_flush;	/* at the next poll at the latest */
	struct tls_cork cork;		/* HTTP's small writes */
};

/* Input GnuTLS took leaves the staging (never while a step is out). */
static inline void
tls_hs_compact(struct tls_hs *hs)
{
	if (hs->in_off == 0)
		return;
	memmove(hs->in, hs->in + hs->in_off, hs->in_len - hs->in_off);
	hs->in_len -= hs->in_off;
	hs->in_off = 0;
}

/* Plaintext per record and the bytes a record adds, once established. */
static inline void
tls_record_sizes(gnutls_session_t s, uint32_t *rec_max, uint16_t *overhead)
{
	size_t max = gnutls_record_get_max_size(s);

	*rec_max = max < TLS_RECORD_MAX ? (uint32_t)max : TLS_RECORD_MAX;
	*overhead = (uint16_t)gnutls_record_overhead_size(s);
}

/* What may be written into sp bytes of TCP's send space, corked bytes
 * waiting: each record of what fits adds its overhead; one more for a
 * record cut short. */
static inline uint32_t
tls_record_room(uint32_t sp, uint32_t corked, uint32_t rec_max,
		uint16_t overhead)
{
	uint32_t need = corked + (sp / rec_max + 2) * overhead;

	return sp > need ? sp - need : 0;
}

/* What the cork holds of owner's. */
static inline uint32_t
tls_cork_held(const struct tls_cork *ck, const void *owner)
{
	return ck->owner == owner ? ck->len : 0;
}

/* The owner goes: what it corked is dropped. */
static inline void
tls_cork_drop(struct tls_cork *ck, const void *owner)
{
	if (ck->owner == owner) {
		ck->owner = NULL;
		ck->len = 0;
	}
}

/* A received segment as GnuTLS's pull source: (in, in_len), *in_off
 * taken so far. */
static inline ssize_t
tls_pull_from(gnutls_session_t s, const uint8_t *in, uint32_t in_len,
		uint32_t *in_off, void *buf, size_t len)
{
	uint32_t n = in_len - *in_off;

	if (n == 0) {
		gnutls_transport_set_errno(s, EAGAIN);
		return -1;
	}
	if (n > len)
		n = (uint32_t)len;
	memcpy(buf, in + *in_off, n);
	*in_off += n;
	return n;
}

/* GnuTLS's push into TCP's send queue (tcp NULL: gone). */
static inline ssize_t
tls_push_to(gnutls_session_t s, struct net_stack *ns, struct tcp_conn *tcp,
		const void *data, size_t len)
{
	uint32_t n = tcp == NULL ? 0 : tcp_write(ns, tcp, data, (uint32_t)len);

	if (n == 0) {
		gnutls_transport_set_errno(s, EAGAIN);
		return -1;
	}
	return n;
}

/* tls_conn.c */
/* What is corked goes out through send; returns what send said (true
 * with nothing corked). */
bool tls_cork_flush(struct tls_cork *ck, tls_cork_send_t send);
/* len bytes of owner's (len fits TCP's room): whole records of them
 * straight to send, the rest gathered; another owner's cork goes out
 * first. Returns how many were taken. */
uint32_t tls_cork_write(struct tls_cork *ck, void *owner, const uint8_t *p,
		uint32_t len, uint32_t rec_max, tls_cork_send_t send);
/* n bytes (at most a record) encrypted and pushed; GnuTLS keeping one
 * for a full send queue sets *pending. 0, or GnuTLS's fatal error. */
int tls_record_send(gnutls_session_t s, struct tls_stats *st,
		const uint8_t *p, uint32_t n, bool *pending);
void tls_conn_hold(struct tls_conn *tc);
/* False when the connection was freed. */
bool tls_conn_unhold(struct tls_conn *tc);
/* The handshake is over: HTTP takes the connection, what followed
 * Finished is read as records. */
void tls_conn_established(struct tls_conn *tc);
/* Staging back to the pool, or straight to the first connection queued
 * for one. */
void tls_hs_free(struct tls_shard *sh, struct tls_hs *hs);
ssize_t tls_pull(gnutls_transport_ptr_t p, void *buf, size_t len);
ssize_t tls_push(gnutls_transport_ptr_t p, const void *data, size_t len);

/* tls_handshake.c */
/* ALPN's protocols in ewyk's order: h2, http/1.1. */
extern const gnutls_datum_t tls_alpn_protos[2];
/* Why a handshake failed, from GnuTLS's error. */
enum tls_fail_reason tls_fail_reason_of(int rc);
/* A handshake over: counted by resumption, version and cipher (and no
 * longer under way). */
void tls_count_established(struct tls_stats *st, gnutls_session_t s);
/* The protocol ALPN chose, counted; true for h2. */
bool tls_count_alpn(struct tls_stats *st, gnutls_session_t s);
/* The staging has input (or a flight to finish): run or hand out a step. */
void tls_hs_next(struct tls_conn *tc);
/* Ends the handshake: counted, the staged flight (an alert) out, TCP
 * closed; reset instead when nothing is left to say. */
void tls_hs_fail(struct tls_conn *tc, enum tls_fail_reason why, bool reset);
/* The staged flight to TCP; false when it did not all fit. */
bool tls_hs_flush(struct tls_conn *tc);

#endif /* EWYK_TLS_CONN_H */
