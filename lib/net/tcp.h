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

/* Received out-of-order segments, kept (as received mbufs) in sequence
 * order without overlap, up to TCP_OOO_SEGS and the receive window. */
#define TCP_OOO_SEGS 32

struct tcp_ooo {
	struct rte_mbuf *m[TCP_OOO_SEGS];
	uint32_t seq[TCP_OOO_SEGS];
	uint16_t off[TCP_OOO_SEGS];	/* payload offset in the mbuf */
	uint16_t len[TCP_OOO_SEGS];
	uint8_t n;
	uint32_t last_seq;	/* most recent arrival: first SACK block */
};

/* What the peer reported as received above snd_una (RFC 2018), merged. */
#define TCP_SACK_HOLES 8

struct tcp_block {
	uint32_t start;
	uint32_t end;
};

#define TCP_F_FIN_QUEUED 0x0001	/* close requested: FIN follows the data */
#define TCP_F_ACK_NOW 0x0002	/* an ACK is owed now */
#define TCP_F_IN_INPUT 0x0004	/* inside segment processing: defer frees */
#define TCP_F_RTT_TIMING 0x0008	/* rtt_seq is being timed (Karn) */
#define TCP_F_RECOVERY 0x0010	/* fast recovery (RFC 6582 / RFC 6675) */
#define TCP_F_DEAD 0x0020	/* freed when input unwinds */
#define TCP_F_OPT_WS 0x0100	/* window scaling negotiated (RFC 7323) */
#define TCP_F_OPT_TS 0x0200	/* timestamps negotiated */
#define TCP_F_OPT_SACK 0x0400	/* SACK permitted both ways (RFC 2018) */
#define TCP_F_COOKIE 0x0800	/* born from a SYN cookie */
#define TCP_F_ACTIVE 0x1000	/* we sent the first SYN */
#define TCP_F_TLP_ARMED 0x2000	/* the rexmit timer is a tail loss probe */
#define TCP_F_TLP_SENT 0x4000	/* one probe per flight (RFC 8985 7) */

struct tcp_conn {
	struct tw_timer rexmit;	/* retransmission and persist */
	struct tw_timer linger;	/* TIME-WAIT and FIN-WAIT-2 */
	struct tw_timer delack;	/* delayed ACK */
	struct tw_timer idle;	/* keepalive and idle timeout */
	struct tcp_conn *free_next;
	void *app;		/* upper layer's state */
	uint32_t rcv_space;	/* what the upper layer can take now */
	uint32_t index;		/* slot in the shard's table */
	uint32_t gen;		/* bumped on free: stale references see it */
	uint16_t flags;
	uint8_t state;
	uint8_t backoff;	/* consecutive timeouts */
	uint8_t dupacks;
	uint8_t acks_owed;	/* full segments received since our last ACK */
	uint8_t ka_probes;	/* keepalive probes unanswered */
	uint8_t snd_wscale;	/* shift of the windows the peer sends */
	uint8_t rcv_wscale;	/* shift of the windows we send */
	uint8_t nsacked;
	uint8_t peer_mac[6];
	uint32_t laddr;		/* network order */
	uint32_t raddr;
	uint16_t lport;		/* host order */
	uint16_t rport;
	uint16_t mss;		/* largest segment we send, options included */
	/* send sequence space (RFC 9293 3.3.1) */
	uint32_t iss;
	uint32_t snd_una;
	uint32_t snd_nxt;
	uint32_t snd_max;	/* highest sequence sent; snd_nxt < it while retransmitting */
	uint32_t snd_wnd;	/* scaled */
	uint32_t snd_wl1;
	uint32_t snd_wl2;
	uint32_t max_sndwnd;	/* largest window the peer offered */
	uint32_t cwnd;		/* congestion window, bytes (RFC 5681) */
	uint32_t ssthresh;
	uint32_t recover;	/* snd_max when recovery began (RFC 6582) */
	uint32_t high_rxt;	/* highest byte retransmitted in recovery */
	uint32_t rxt_mark;	/* snd_max when snd_una's hole was last resent */
	/* receive sequence space */
	uint32_t irs;
	uint32_t rcv_nxt;
	uint32_t rcv_adv;	/* right edge of the last advertised window */
	uint32_t last_ack_sent;
	/* timestamps (RFC 7323) */
	uint32_t ts_recent;
	uint32_t ts_offset;	/* random per connection */
	uint64_t ts_recent_ms;
	uint64_t last_rx_ms;	/* for keepalive and idle */
	/* RFC 6298 estimator, milliseconds */
	uint32_t srtt;
	uint32_t rttvar;
	uint32_t rto;
	uint32_t rtt_seq;
	uint64_t rtt_start;
	struct tcp_block sacked[TCP_SACK_HOLES];
	struct tcp_sndq sndq;
	struct tcp_ooo ooo;
};

/* Congestion control behind a small interface; NewReno is the first. */
struct tcp_cc_ops {
	const char *name;
	void (*init)(struct tcp_conn *c);
	/* New data acknowledged outside recovery. */
	void (*acked)(struct tcp_conn *c, uint32_t bytes);
	/* Loss detected by duplicate ACKs or SACK: set ssthresh and cwnd. */
	void (*enter_recovery)(struct tcp_conn *c);
	/* Recovery ended with a full acknowledgement. */
	void (*exit_recovery)(struct tcp_conn *c);
	/* Retransmission timeout. */
	void (*timeout)(struct tcp_conn *c);
};

extern const struct tcp_cc_ops tcp_cc_newreno;

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

void tcp_set_app(struct tcp_conn *c, void *app);
void *tcp_app(const struct tcp_conn *c);
/* The bytes the upper layer can take now; the window follows it. */
void tcp_set_rcv_space(struct net_stack *ns, struct tcp_conn *c,
		uint32_t bytes);
uint64_t net_now_ms(const struct net_stack *ns);
/* Free room in the send queue, in bytes. */
uint32_t tcp_send_space(const struct net_stack *ns, const struct tcp_conn *c);
/* Queue bytes (copied) for sending; returns how many fit. */
uint32_t tcp_write(struct net_stack *ns, struct tcp_conn *c, const void *data,
		uint32_t len);
/* Send FIN after the queued data. */
void tcp_close(struct net_stack *ns, struct tcp_conn *c);
/* Active open towards raddr:rport (network/host order) from lport; the
 * accepted upcall runs once established. NULL when no slot is free. */
struct tcp_conn *tcp_connect(struct net_stack *ns, uint32_t raddr,
		uint16_t rport, uint16_t lport, const uint8_t peer_mac[6]);
/* Send RST and drop the connection now (closed upcall follows). */
void tcp_abort(struct net_stack *ns, struct tcp_conn *c);
/* Transmit what the windows allow; the stack calls it after input and
 * timers, the upper layer after writing outside an upcall. */
void tcp_output(struct net_stack *ns, struct tcp_conn *c);

#endif /* EWYK_TCP_H */
