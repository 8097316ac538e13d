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
#define TCP_ADV_WIN_MAX 65535u	/* no window scaling yet */

/* table */
int tcp_table_init(struct net_stack *ns);
void tcp_table_fini(struct net_stack *ns);
struct tcp_conn *tcp_lookup(struct net_stack *ns, uint32_t raddr,
		uint16_t rport, uint16_t lport);
struct tcp_conn *tcp_conn_new(struct net_stack *ns, uint32_t raddr,
		uint16_t rport, uint16_t lport);
/* Unhooks and recycles; calls the closed upcall if the app holds it. */
void tcp_conn_free(struct net_stack *ns, struct tcp_conn *c);

/* input */
void tcp_input(struct net_stack *ns, const struct ipv4_view *ip,
		const struct tcp_view *t, const uint8_t *src_mac);

/* output */
void tcp_send_syn_ack(struct net_stack *ns, struct tcp_conn *c);
void tcp_send_ack(struct net_stack *ns, struct tcp_conn *c);
void tcp_send_rst(struct net_stack *ns, struct tcp_conn *c);
void tcp_send_probe(struct net_stack *ns, struct tcp_conn *c);
/* RST answering a segment that has no connection (RFC 9293 3.10.7.1). */
void tcp_reply_rst(struct net_stack *ns, const struct ipv4_view *ip,
		const struct tcp_view *t, const uint8_t *src_mac);
/* Drop acknowledged bytes from the send queue. */
void tcp_sndq_drop(struct tcp_sndq *q, uint32_t bytes);
void tcp_sndq_free(struct tcp_sndq *q);
uint32_t tcp_rcv_window(struct net_stack *ns, struct tcp_conn *c);

/* timers */
void tcp_timer_fire(struct tw_timer *t, void *ctx);
void tcp_arm_rexmit(struct net_stack *ns, struct tcp_conn *c);

#endif /* EWYK_TCP_IMPL_H */
