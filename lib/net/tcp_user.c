/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The calls of the upper layer: open, write, close, abort, output, the
 * receive space it pushes, and the accessors that keep the connection
 * opaque. They call output, the timers' arming and the connection table.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "tcp_impl.h"

struct tcp_conn *
tcp_connect_addr(struct net_stack *ns, const struct net_addr *raddr,
		uint16_t rport, uint16_t lport, const uint8_t peer_mac[6])
{
	uint8_t local = NET_LOCAL_V4;
	int route = net_route(ns, raddr, &local);
	/* Off every link: the first port with the family (tcp_open()
	 * refuses such peers before). */
	uint8_t port = 0;

	while (route < 0 && port < ns->nb_ports &&
			!net_port_has(ns, port, raddr->family))
		port++;
	if (route >= 0)
		port = (uint8_t)route;
	else if (port == ns->nb_ports)
		return NULL;
	return tcp_connect_from(ns, port, local, raddr, rport, lport, peer_mac);
}

struct tcp_conn *
tcp_connect_from(struct net_stack *ns, uint8_t port, uint8_t local,
		const struct net_addr *raddr, uint16_t rport, uint16_t lport,
		const uint8_t peer_mac[6])
{
	struct tcp_tuple k;
	struct tcp_conn *c;

	if (tcp_lookup(ns, port, local, &raddr->ip, rport, lport) != NULL)
		return NULL;
	c = tcp_conn_new(ns, port, local, &raddr->ip, rport, lport, peer_mac);
	if (c == NULL)
		return NULL;
	c->flags |= TCP_F_ACTIVE | TCP_F_OPT_WS | TCP_F_OPT_SACK | TCP_F_OPT_TS;
	c->rcv_wscale = tcp_our_wscale(ns);
	c->ts_recent = 0;
	c->mss = tcp_mss_for(ns, c);
	c->state = TCP_SYN_SENT;
	k = (struct tcp_tuple){ raddr->family, net_local_addr(ns, port, local),
		&c->raddr, lport, rport };
	c->iss = tcp_isn(ns, &k);
	c->snd_una = c->iss;
	c->snd_max = c->iss;
	ns->stats->tcp.active_opens++;
	ns->stats->tcp.ip6_active_opens += raddr->family == NET_AF_INET6;
	tcp_send_syn(ns, c);
	c->flags |= TCP_F_RTT_TIMING;
	c->rtt_seq = c->iss;
	c->rtt_start_us = ns->now_us;
	tcp_arm_rexmit(ns, c);
	return c;
}

struct tcp_conn *
tcp_connect(struct net_stack *ns, uint32_t raddr, uint16_t rport,
		uint16_t lport, const uint8_t peer_mac[6])
{
	struct net_addr a = { net_ip4(raddr), NET_AF_INET };

	return tcp_connect_addr(ns, &a, rport, lport, peer_mac);
}

void
tcp_close(struct net_stack *ns, struct tcp_conn *c)
{
	switch (c->state) {
	case TCP_SYN_SENT:
		tcp_conn_kill(ns, c);
		return;
	case TCP_SYN_RECEIVED:
	case TCP_ESTABLISHED:
		if (c->state == TCP_SYN_RECEIVED)
			ns->stats->tcp_syn_recv--;
		c->state = TCP_FIN_WAIT_1;
		break;
	case TCP_CLOSE_WAIT:
		c->state = TCP_LAST_ACK;
		break;
	default:
		return;		/* already closing */
	}
	c->flags |= TCP_F_FIN_QUEUED;
	if (!(c->flags & TCP_F_IN_INPUT))
		tcp_transmit(ns, c);
}

void
tcp_abort(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->state == TCP_CLOSED || tcp_is_dead(c))
		return;
	tcp_conn_reset(ns, c);
}

void
tcp_output(struct net_stack *ns, struct tcp_conn *c)
{
	tcp_transmit(ns, c);
}

/*
 * New mbufs a send queue may take: what is left of the stack's budget
 * (cfg.sndq_mbufs_max), UINT32_MAX without one (snd_buf is then the
 * limit). Without a budget the queues could hold every mbuf of the pool,
 * no ACK could then be received to free them (the RX ring refills from
 * the same pool), and nothing would move again. An empty queue may always
 * take one: its connection has no ACK to wait for, so it must move by
 * itself.
 */
static uint32_t
sndq_new_mbufs(const struct net_stack *ns, const struct tcp_sndq *q)
{
	uint64_t held = ns->stats->tcp_sndq_mbufs, max = ns->cfg.sndq_mbufs_max;

	if (max == 0)
		return UINT32_MAX;
	if (held < max)
		return (uint32_t)(max - held);
	return q->count == 0 ? 1 : 0;
}

/* A connection asked for room the budget did not give: no ACK of its own
 * may come to say when to try again (its queue may be empty, or hold
 * less than it waits to write whole), so the stack calls it back when
 * the budget frees (tcp_wake_sndq_waiters()). The stack's record of
 * waiters is state beside the const view a room query has. */
static void
note_sndq_wait(const struct net_stack *ns, const struct tcp_conn *c)
{
	struct net_stack *w = (struct net_stack *)(uintptr_t)ns;
	struct tcp_conn *wc = (struct tcp_conn *)(uintptr_t)c;

	if (wc->sndq_wait)
		return;
	wc->sndq_wait = 1;
	w->sndq_waiters++;
	w->stats->tcp.sndq_budget_waits++;
}

void
tcp_sndq_wait_end(struct net_stack *ns, struct tcp_conn *c)
{
	if (!c->sndq_wait)
		return;
	c->sndq_wait = 0;
	ns->sndq_waiters--;
}

void
tcp_wake_sndq_waiters(struct net_stack *ns)
{
	uint64_t max = ns->cfg.sndq_mbufs_max;
	uint32_t i, gen;

	if (ns->sndq_waiters == 0 || ns->stats->tcp_sndq_mbufs > max - max / 4)
		return;
	for (i = 0; i < ns->cfg.max_conns && ns->sndq_waiters > 0; i++) {
		struct tcp_conn *c = &ns->conns[i];

		if (!c->sndq_wait)
			continue;
		tcp_sndq_wait_end(ns, c);
		if (c->app == NULL || c->state == TCP_CLOSED)
			continue;
		/* Outside input nothing else sends what the upcall writes. */
		gen = c->gen;
		c->up->sent(c->up_ctx, c);
		if (c->gen == gen && c->state != TCP_CLOSED)
			tcp_transmit(ns, c);
	}
}

/* What the send buffer takes, before the mbufs it would need: 0 once
 * the sending ended. */
static uint32_t
send_buf_room(const struct net_stack *ns, const struct tcp_conn *c)
{
	uint32_t size = tcp_sndbuf(ns, c);

	if (c->flags & TCP_F_FIN_QUEUED || c->state == TCP_CLOSED)
		return 0;
	return size > c->sndq.bytes ? size - c->sndq.bytes : 0;
}

uint32_t
tcp_send_space(const struct net_stack *ns, const struct tcp_conn *c)
{
	struct tcp_sndq *q = (struct tcp_sndq *)(uintptr_t)&c->sndq;
	uint32_t by_bytes = send_buf_room(ns, c);
	uint64_t by_budget;

	if (by_bytes == 0)
		return 0;
	by_budget = tcp_sndq_tail_room(q) + (uint64_t)sndq_new_mbufs(ns, q) *
		rte_pktmbuf_data_room_size(ns->pool);
	if (by_budget < by_bytes)
		note_sndq_wait(ns, c);
	return (uint32_t)RTE_MIN((uint64_t)by_bytes, by_budget);
}

uint32_t
tcp_write(struct net_stack *ns, struct tcp_conn *c, const void *data,
		uint32_t len)
{
	struct tcp_sndq *q = &c->sndq;
	const uint8_t *src = data;
	uint32_t done = 0;

	/* Most writes (an answer's head, a frame) fit the last chunk's
	 * room and the buffer: no new chunk to weigh against the shard's
	 * budget. */
	if (len > tcp_sndq_tail_room(q) || len > send_buf_room(ns, c))
		len = RTE_MIN(len, tcp_send_space(ns, c));
	while (done < len) {
		uint32_t room = tcp_sndq_tail_room(q), n;
		struct rte_mbuf *t;
		char *dst;

		if (room == 0) {
			if (!tcp_bufs_take(ns, c))
				break;
			t = net_alloc(ns);
			if (t == NULL)
				break;
			t->data_off = 0;	/* payload only: use the whole buffer */
			if (!tcp_sndq_push(ns, q, t)) {
				rte_pktmbuf_free(t);
				break;
			}
			room = rte_pktmbuf_tailroom(t);
		}
		t = tcp_sndq_tail(q);
		n = RTE_MIN(room, len - done);
		dst = rte_pktmbuf_append(t, (uint16_t)n);
		memcpy(dst, src + done, n);
		done += n;
	}
	q->bytes += done;
	return done;
}

void
tcp_set_rcv_space(struct net_stack *ns, struct tcp_conn *c, uint32_t bytes)
{
	c->rcv_space = bytes;
	/* Input ends with tcp_output(), which announces it. */
	if (c->flags & TCP_F_IN_INPUT)
		return;
	if (c->rcvq.held > 0 && bytes > 0) {
		/* Held data goes at the flush, not from inside the upper
		 * layer's own call. */
		c->flags |= TCP_F_DELIVER;
		tcp_output_later(ns, c);
		return;
	}
	switch (c->state) {
	case TCP_ESTABLISHED:
	case TCP_CLOSE_WAIT:
	case TCP_FIN_WAIT_1:
	case TCP_FIN_WAIT_2:
		if (tcp_window_grew(c)) {
			c->flags |= TCP_F_ACK_NOW;
			tcp_transmit(ns, c);
		}
		break;
	default:
		break;
	}
}

void
tcp_set_app(struct tcp_conn *c, void *app)
{
	c->app = app;
}

void *
tcp_app(const struct tcp_conn *c)
{
	return c->app;
}

uint32_t
tcp_rtt_us(const struct tcp_conn *c)
{
	uint32_t rtt = c->rcv_rtt_us;

	if (c->srtt_us != 0 && (rtt == 0 || c->srtt_us < rtt))
		rtt = c->srtt_us;
	return rtt;
}

void
tcp_peer(const struct tcp_conn *c, struct net_addr *addr, uint16_t *port)
{
	addr->ip = c->raddr;
	addr->family = tcp_family(c);
	*port = c->rport;
}

struct tcp_conn *
tcp_conn_get(struct net_stack *ns, uint32_t index, uint32_t gen)
{
	struct tcp_conn *c;

	if (index >= ns->cfg.max_conns)
		return NULL;
	c = &ns->conns[index];
	return c->gen == gen && c->state != TCP_CLOSED ? c : NULL;
}
