/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connection table of a shard: a fixed array of connections allocated at
 * start-up, a LIFO free list (a recycled slot is likely still in cache) and
 * an open-addressing index from (the stack's port, its local address,
 * remote address, remote port, local port) with linear probing and
 * backward-shift deletion, so no tombstones build up. Both families share
 * the table; an IPv4 key hashes as it did before there was IPv6.
 * The hash is keyed by a per-start secret: peers cannot aim at one bucket.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_random.h>

#include "tcp_impl.h"

static __rte_always_inline uint64_t
fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

/* An IPv6 peer's other 12 bytes, mixed with the secret first: a plain
 * fold of them would let one who holds many prefixes make keys that
 * collide whatever the secret. Out of line: the keys of a port's first
 * IPv4 address never come here (its further ones do, their zeros mixed
 * with local alone). */
static __rte_noinline uint64_t
hash6_rest(const struct net_stack *ns, uint8_t local, const union net_ip *raddr)
{
	return fmix64(((uint64_t)raddr->w[1] << 32 | raddr->w[2]) ^
			ns->hash_seed) + raddr->w[3] + local;
}

static __rte_always_inline uint32_t
hash_key(const struct net_stack *ns, uint8_t port, uint8_t local,
		const union net_ip *raddr, uint16_t rport, uint16_t lport)
{
	uint64_t k = ((uint64_t)raddr->w[0] << 32 | (uint64_t)rport << 16 |
			lport) ^ ns->hash_seed;

	if (unlikely(local != NET_LOCAL_V4))
		k ^= hash6_rest(ns, local, raddr);
	k += port * 0x9e3779b97f4a7c15ULL;
	return (uint32_t)fmix64(k);
}

int
tcp_table_init(struct net_stack *ns)
{
	uint32_t n = ns->cfg.max_conns, size = 1, i;

	while (size < 2 * n)
		size <<= 1;
	ns->conns = rte_zmalloc("tcp_conns", sizeof(*ns->conns) * n,
			RTE_CACHE_LINE_SIZE);
	ns->index = rte_zmalloc("tcp_index", sizeof(*ns->index) * size,
			RTE_CACHE_LINE_SIZE);
	ns->out = rte_malloc("tcp_out", sizeof(*ns->out) * size, 0);
	if (ns->conns == NULL || ns->index == NULL || ns->out == NULL ||
			tcp_pace_init(ns) < 0) {
		rte_free(ns->conns);
		rte_free(ns->index);
		rte_free(ns->out);
		tcp_pace_fini(ns);
		return -1;
	}
	ns->out_head = ns->out_tail = 0;
	tcp_bufs_init(ns);
	tcp_rcvq_init(ns);
	ns->index_mask = size - 1;
	for (i = n; i-- > 0;) {
		struct tcp_conn *c = &ns->conns[i];

		c->index = i;
		c->state = TCP_CLOSED;
		tw_timer_init(&c->rexmit);
		tw_timer_init(&c->linger);
		tw_timer_init(&c->delack);
		tw_timer_init(&c->idle);
		c->free_next = ns->free_list;
		ns->free_list = c;
	}
	return 0;
}

void
tcp_table_fini(struct net_stack *ns)
{
	uint32_t i;

	if (ns->conns == NULL)
		return;
	for (i = 0; i < ns->cfg.max_conns; i++) {
		struct tcp_conn *c = &ns->conns[i];

		if (c->state == TCP_CLOSED)
			continue;
		if (c->state != TCP_TIME_WAIT && c->state != TCP_SYN_RECEIVED &&
				c->state != TCP_SYN_SENT)
			tcp_send_rst(ns, c);
		tcp_conn_free(ns, c);
	}
	tcp_bufs_fini(ns);
	rte_free(ns->conns);
	rte_free(ns->index);
	rte_free(ns->out);
	tcp_pace_fini(ns);
	tcp_rcvq_fini(ns);
	ns->out = NULL;
	ns->out_head = ns->out_tail = 0;
	ns->conns = NULL;
	ns->index = NULL;
}

struct tcp_conn *
tcp_lookup(struct net_stack *ns, uint8_t port, uint8_t local,
		const union net_ip *raddr, uint16_t rport, uint16_t lport)
{
	uint32_t i = hash_key(ns, port, local, raddr, rport, lport) &
		ns->index_mask;

	for (;; i = (i + 1) & ns->index_mask) {
		uint32_t slot = ns->index[i];
		struct tcp_conn *c;

		if (slot == 0)
			return NULL;
		c = &ns->conns[slot - 1];
		if (c->rport == rport && c->lport == lport && c->port == port &&
				c->local == local && net_ip_eq(&c->raddr, raddr))
			return c;
	}
}

struct tcp_conn *
tcp_conn_new(struct net_stack *ns, uint8_t port, uint8_t local,
		const union net_ip *raddr, uint16_t rport, uint16_t lport,
		const uint8_t peer_mac[6])
{
	struct tcp_conn *c = ns->free_list;
	const struct net_listener *l = net_listener(ns, lport);
	uint32_t i;

	if (c == NULL)
		return NULL;
	if (l == NULL && ns->nb_listeners > 0)
		l = &ns->listeners[0];	/* tcp_connect()'s */
	ns->free_list = c->free_next;
	i = hash_key(ns, port, local, raddr, rport, lport) & ns->index_mask;
	while (ns->index[i] != 0)
		i = (i + 1) & ns->index_mask;
	ns->index[i] = c->index + 1;

	/* Keep the slot's identity (index, generation) and its timers
	 * (all idle); reset the rest. */
	memset(&c->flags, 0, offsetof(struct tcp_conn, sndq) -
			offsetof(struct tcp_conn, flags));
	c->free_next = NULL;
	c->app = NULL;
	c->up = l != NULL ? l->up : NULL;
	c->up_ctx = l != NULL ? l->ctx : NULL;
	c->rcvq = (struct tcp_rcvq){ .blk = NULL };
	c->raddr = *raddr;
	c->rport = rport;
	c->lport = lport;
	c->port = port;
	c->local = local;
	c->rto_us = ns->cfg.rto_init_ms * 1000;
	c->rcv_space = ns->cfg.rcv_space;
	memcpy(c->peer_mac, peer_mac, 6);
	c->ts_offset = (uint32_t)rte_rand();
	c->last_rx_ms = ns->now_ms;
	c->quick_acks = TCP_QUICK_ACKS;
	memset(&c->sndq, 0, sizeof(c->sndq));
	ns->stats->tcp_conns_open++;
	ns->stats->tcp_conns_open6 += net_local_is_v6(local);
	return c;
}

static void
index_remove(struct net_stack *ns, struct tcp_conn *c)
{
	uint32_t mask = ns->index_mask;
	uint32_t i = hash_key(ns, c->port, c->local, &c->raddr, c->rport,
			c->lport) & mask;
	uint32_t j;

	while (ns->index[i] != c->index + 1)
		i = (i + 1) & mask;
	/* Backward-shift: pull later entries of the probe run into the hole
	 * when their home slot does not lie between the hole and them. */
	for (j = (i + 1) & mask; ns->index[j] != 0; j = (j + 1) & mask) {
		struct tcp_conn *o = &ns->conns[ns->index[j] - 1];
		uint32_t home = hash_key(ns, o->port, o->local, &o->raddr,
				o->rport, o->lport) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			ns->index[i] = ns->index[j];
			i = j;
		}
	}
	ns->index[i] = 0;
}

void
tcp_release_app(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->app != NULL && c->up != NULL)
		c->up->closed(c->up_ctx, c);
	c->app = NULL;
	c->rcv_space = ns->cfg.rcv_space;	/* no upper layer to say */
}

void
tcp_conn_free(struct net_stack *ns, struct tcp_conn *c)
{
	tcp_release_app(ns, c);
	if (c->state == TCP_SYN_RECEIVED)
		ns->stats->tcp_syn_recv--;
	else if (c->state == TCP_TIME_WAIT)
		ns->stats->tcp_time_wait--;
	tw_cancel(&ns->wheel, &c->rexmit);
	tw_cancel(&ns->wheel, &c->linger);
	tw_cancel(&ns->wheel, &c->delack);
	tw_cancel(&ns->wheel, &c->idle);
	tcp_sndq_free(ns, &c->sndq);
	tcp_rcvq_free(ns, c);
	tcp_rcvbuf_release(ns, c);
	tcp_pace_cancel(ns, c);
	tcp_bufs_put(ns, c);
	tcp_sndq_wait_end(ns, c);
	index_remove(ns, c);
	c->state = TCP_CLOSED;
	c->gen++;
	c->free_next = ns->free_list;
	ns->free_list = c;
	ns->stats->tcp_conns_open--;
	ns->stats->tcp_conns_open6 -= net_local_is_v6(c->local);
	ns->stats->tcp_conns_closed++;
}

void
tcp_conn_kill(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->flags & TCP_F_IN_INPUT)
		c->flags |= TCP_F_DEAD;
	else
		tcp_conn_free(ns, c);
}

void
tcp_conn_reset(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->state != TCP_TIME_WAIT && c->state != TCP_SYN_SENT)
		tcp_send_rst(ns, c);
	tcp_conn_kill(ns, c);
}
