/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP connections of one shard. The upper layer (HTTP) sees a connection
 * through a callbacks table, in the manner of nghttp2: the stack calls up on
 * accept, data, acknowledged data and close; the upper layer writes bytes,
 * closes or aborts. The stack never blocks and never allocates outside its
 * mempool.
 */
#ifndef EWYK_TCP_H
#define EWYK_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include "timer_wheel.h"

struct rte_mbuf;
struct net_stack;

enum tcp_state {
	TCP_CLOSED,
	TCP_LISTEN,
	TCP_SYN_SENT,
	TCP_SYN_RECEIVED,
	TCP_ESTABLISHED,
	TCP_FIN_WAIT_1,
	TCP_FIN_WAIT_2,
	TCP_CLOSING,
	TCP_TIME_WAIT,
	TCP_CLOSE_WAIT,
	TCP_LAST_ACK,
	TCP_STATE__COUNT
};

const char *tcp_state_name(enum tcp_state s);

/* Send queue: the byte stream from snd_una on, as a ring of mbufs holding
 * data. Segments are built from refcounted clones of these, so a
 * retransmission copies nothing. */
#define TCP_SNDQ_SLOTS 64

struct tcp_sndq {
	struct rte_mbuf *chunk[TCP_SNDQ_SLOTS];
	uint16_t head;
	uint16_t count;
	uint32_t head_off;	/* bytes of chunk[head] already acknowledged */
	uint32_t bytes;		/* bytes queued from snd_una */
};

#define TCP_F_FIN_QUEUED 0x01	/* close requested: FIN follows the data */
#define TCP_F_ACK_NOW 0x02	/* an ACK is owed */
#define TCP_F_IN_INPUT 0x04	/* inside segment processing: defer frees */
#define TCP_F_RTT_TIMING 0x08	/* rtt_seq is being timed (Karn) */

struct tcp_conn {
	struct tw_timer rexmit;	/* retransmission and persist */
	struct tw_timer linger;	/* TIME-WAIT */
	struct tcp_conn *free_next;
	void *app;		/* upper layer's state */
	uint32_t index;		/* slot in the shard's table */
	uint32_t gen;		/* bumped on free: stale references see it */
	uint8_t state;
	uint8_t flags;
	uint8_t backoff;	/* consecutive timeouts */
	uint8_t peer_mac[6];
	uint32_t laddr;		/* network order */
	uint32_t raddr;
	uint16_t lport;		/* host order */
	uint16_t rport;
	uint16_t mss;		/* largest segment we send */
	/* send sequence space (RFC 9293 3.3.1) */
	uint32_t iss;
	uint32_t snd_una;
	uint32_t snd_nxt;
	uint32_t snd_max;	/* highest sequence sent; snd_nxt < it while retransmitting */
	uint32_t snd_wnd;
	uint32_t snd_wl1;
	uint32_t snd_wl2;
	uint32_t cwnd;		/* congestion window, bytes (RFC 5681) */
	uint32_t ssthresh;
	/* receive sequence space */
	uint32_t irs;
	uint32_t rcv_nxt;
	uint32_t rcv_adv;	/* right edge of the last advertised window */
	/* RFC 6298 estimator, milliseconds */
	uint32_t srtt;
	uint32_t rttvar;
	uint32_t rto;
	uint32_t rtt_seq;
	uint64_t rtt_start;
	struct tcp_sndq sndq;
};

struct tcp_upcalls {
	/* A handshake completed. Return 0 and set c->app, or <0 to refuse
	 * (the peer gets a RST). */
	int (*accepted)(void *ctx, struct tcp_conn *c);
	/* In-order bytes. Return how many were taken (all, unless the
	 * advertised window was ignored); the rest are dropped unacknowledged. */
	uint32_t (*recv)(void *ctx, struct tcp_conn *c, const uint8_t *data,
			uint32_t len);
	/* Room in the receive window the upper layer can offer. */
	uint32_t (*rcv_space)(void *ctx, struct tcp_conn *c);
	/* Acknowledged data freed send space. */
	void (*sent)(void *ctx, struct tcp_conn *c);
	/* The peer sent FIN: no more data will come. */
	void (*peer_closed)(void *ctx, struct tcp_conn *c);
	/* The connection is gone (closed, reset or timed out); c->app must
	 * be released. c is reused afterwards. */
	void (*closed)(void *ctx, struct tcp_conn *c);
};

/* Free room in the send queue, in bytes. */
uint32_t tcp_send_space(const struct net_stack *ns, const struct tcp_conn *c);
/* Queue bytes (copied) for sending; returns how many fit. */
uint32_t tcp_write(struct net_stack *ns, struct tcp_conn *c, const void *data,
		uint32_t len);
/* Send FIN after the queued data. */
void tcp_close(struct net_stack *ns, struct tcp_conn *c);
/* Send RST and drop the connection now (closed upcall follows). */
void tcp_abort(struct net_stack *ns, struct tcp_conn *c);
/* Transmit what the windows allow; the stack calls it after input and
 * timers, the upper layer after writing outside an upcall. */
void tcp_output(struct net_stack *ns, struct tcp_conn *c);

#endif /* EWYK_TCP_H */
