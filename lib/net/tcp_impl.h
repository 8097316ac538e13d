/* SPDX-License-Identifier: BSD-3-Clause */
/* Private to the TCP modules: table, input, output and timers. */
#ifndef EWYK_TCP_IMPL_H
#define EWYK_TCP_IMPL_H

#include "net_stack.h"
#include "pkt.h"
#include "tcp.h"

/* Sequence-space comparisons (RFC 9293 3.4), wrap-safe. */
#define SEQ_LT(a, b) ((int32_t)((a) - (b)) < 0)
#define SEQ_LEQ(a, b) ((int32_t)((a) - (b)) <= 0)
#define SEQ_GT(a, b) ((int32_t)((a) - (b)) > 0)
#define SEQ_GEQ(a, b) ((int32_t)((a) - (b)) >= 0)

#define TCP_HDR_OPT_MAX 40
#define TCP_WIN_FIELD_MAX 65535u
#define TCP_DUPTHRESH 3
#define TCP_TS_LEN 12		/* NOP NOP kind len val ecr */

/* table */
int tcp_table_init(struct net_stack *ns);
void tcp_table_fini(struct net_stack *ns);
struct tcp_conn *tcp_lookup(struct net_stack *ns, uint32_t raddr,
		uint16_t rport, uint16_t lport);
struct tcp_conn *tcp_conn_new(struct net_stack *ns, uint32_t raddr,
		uint16_t rport, uint16_t lport);
/* Unhooks and recycles; calls the closed upcall if the app holds it. */
void tcp_conn_free(struct net_stack *ns, struct tcp_conn *c);

/* input: returns true if it kept m (queued out of order) */
bool tcp_input(struct net_stack *ns, struct rte_mbuf *m,
		const struct ipv4_view *ip, const struct tcp_view *t,
		const uint8_t *src_mac);

/* sequence numbers and cookies */
uint32_t tcp_isn(const struct net_stack *ns, uint32_t laddr, uint16_t lport,
		uint32_t raddr, uint16_t rport);
uint32_t tcp_cookie_make(const struct net_stack *ns, uint32_t laddr,
		uint16_t lport, uint32_t raddr, uint16_t rport, uint32_t irs,
		uint16_t mss, uint16_t *mss_used);
/* The MSS the cookie encodes, or -1 if it is not ours or expired. */
int tcp_cookie_check(const struct net_stack *ns, uint32_t laddr,
		uint16_t lport, uint32_t raddr, uint16_t rport, uint32_t irs,
		uint32_t cookie);

/* SACK scoreboard and out-of-order queue */
void tcp_sack_update(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_options *o, uint32_t ack);
uint32_t tcp_sack_bytes(const struct tcp_conn *c);
uint32_t tcp_sack_high(const struct tcp_conn *c);
bool tcp_sack_hole(const struct tcp_conn *c, uint32_t from, uint32_t *start,
		uint32_t *len);
uint32_t tcp_sack_pipe(const struct tcp_conn *c);
bool tcp_sack_skip(const struct tcp_conn *c, uint32_t *seq, uint32_t *limit);
bool tcp_ooo_insert(struct tcp_conn *c, struct rte_mbuf *m, uint32_t seq,
		uint16_t off, uint16_t len);
void tcp_ooo_deliver(struct net_stack *ns, struct tcp_conn *c);
void tcp_ooo_free(struct tcp_conn *c);
int tcp_ooo_blocks(const struct tcp_conn *c, struct tcp_block *out, int max);

/* output */
void tcp_send_syn(struct net_stack *ns, struct tcp_conn *c);
void tcp_send_syn_ack(struct net_stack *ns, struct tcp_conn *c);
/* A SYN-ACK for a SYN cookie: no connection exists. */
void tcp_send_cookie_syn_ack(struct net_stack *ns, const struct ipv4_view *ip,
		const struct tcp_view *t, const uint8_t *src_mac, uint32_t cookie,
		uint16_t mss);
/* Resends up to one segment of [seq, seq + len) (fast retransmit, SACK
 * recovery); returns the sequence space sent, 0 if nothing went. */
uint32_t tcp_send_range(struct net_stack *ns, struct tcp_conn *c, uint32_t seq,
		uint32_t len);
void tcp_send_keepalive(struct net_stack *ns, struct tcp_conn *c);
void tcp_send_ack(struct net_stack *ns, struct tcp_conn *c);
void tcp_send_rst(struct net_stack *ns, struct tcp_conn *c);
void tcp_send_probe(struct net_stack *ns, struct tcp_conn *c);
/* RST answering a segment that has no connection (RFC 9293 3.10.7.1). */
void tcp_reply_rst(struct net_stack *ns, const struct ipv4_view *ip,
		const struct tcp_view *t, const uint8_t *src_mac);
/* Drop acknowledged bytes from the send queue. */
void tcp_sndq_drop(struct tcp_sndq *q, uint32_t bytes);
void tcp_sndq_free(struct tcp_sndq *q);
uint32_t tcp_rcv_window(const struct tcp_conn *c);
bool tcp_window_grew(const struct tcp_conn *c);

/* Largest payload of a segment carrying optlen bytes of options. */
static inline uint32_t
tcp_seg_max(const struct tcp_conn *c, uint32_t optlen)
{
	return c->mss > optlen + 8 ? c->mss - optlen : 8;
}

/* timers */
void tcp_timer_fire(struct tw_timer *t, void *ctx);
void tcp_arm_rexmit(struct net_stack *ns, struct tcp_conn *c);
void tcp_arm_send_timer(struct net_stack *ns, struct tcp_conn *c);
void tcp_cancel_delack(struct net_stack *ns, struct tcp_conn *c);

#endif /* EWYK_TCP_IMPL_H */
