/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes that lend their bytes rather than copy them (tcp_write_ref()):
 * the send queue's mbufs point into the caller's memory (a preloaded
 * static file) as DPDK external buffers, one write's mbufs sharing one
 * block of the shard's pool (the buffers' refcount, and the caller's
 * done). Segments are clones of them as of any other mbuf; when the last
 * is freed (acknowledged and out of the device's ring, on the shard's
 * lcore) the caller's done runs. Only on ports whose device reads the
 * payload with the CPU (net_if.tx_any_memory: a virtual device): one
 * that DMAs would need the caller's memory mapped for it.
 *
 * Each mbuf is filled whole (the queue's lookups count on every mbuf but
 * the last being full): the tail's room is filled by a copy first, and
 * the write's last bytes under one mbuf's room are copied too.
 */
#include "tcp_impl.h"

/* A write shorter than TCP_REF_MIN is copied (tcp.h). So is one that
 * finds less room than that, which waits for more (the next sent upcall)
 * rather than lend a sliver each ACK. */
#define EXT_PER_CHUNK 256

struct tcp_ext {
	struct rte_mbuf_ext_shared_info sh;
	struct net_stack *ns;
	void (*done)(void *arg);
	void *arg;
};

void
tcp_ext_init(struct net_stack *ns)
{
	blk_pool_init(&ns->ext_refs, "tcp_ext", sizeof(struct tcp_ext),
			EXT_PER_CHUNK, ns->cfg.ext_refs);
}

void
tcp_ext_fini(struct net_stack *ns)
{
	/* Frames still queued for a device may point at blocks: those are
	 * left (the stack is going away), not freed under them. */
	if (ns->stats->tcp_ext_refs_used == 0)
		blk_pool_fini(&ns->ext_refs);
}

static void
ext_free(void *addr, void *opaque)
{
	struct tcp_ext *x = opaque;
	struct net_stack *ns = x->ns;

	(void)addr;
	x->done(x->arg);
	ns->stats->tcp_ext_refs_used--;
	blk_pool_put(&ns->ext_refs, x);
}

/* Drops one reference; the last frees the block. */
static void
ext_put(struct tcp_ext *x)
{
	if (rte_mbuf_ext_refcnt_update(&x->sh, -1) == 0)
		ext_free(NULL, x);
}

/* Queues n bytes, whole mbufs of room bytes, each pointing into data;
 * fewer when mbufs run out. */
static uint32_t
lend(struct net_stack *ns, struct tcp_conn *c, struct tcp_ext *x,
		const uint8_t *data, uint32_t n, uint16_t room)
{
	uint32_t done = 0;

	while (done + room <= n) {
		struct rte_mbuf *m;

		if (!tcp_bufs_take(ns, c))
			break;
		m = net_alloc(ns);
		if (m == NULL)
			break;
		rte_mbuf_ext_refcnt_update(&x->sh, 1);
		rte_pktmbuf_attach_extbuf(m, (void *)(uintptr_t)(data + done),
				RTE_BAD_IOVA, room, &x->sh);
		m->data_len = room;
		m->pkt_len = room;
		if (!tcp_sndq_push(ns, &c->sndq, m)) {
			rte_pktmbuf_free(m);	/* the writer's ref holds x */
			break;
		}
		done += room;
		ns->stats->tcp.zero_copy_mbufs++;
	}
	c->sndq.bytes += done;
	return done;
}

/* A block for one write's mbufs, the caller's hold taken; NULL when the
 * pool is at its limit. */
static struct tcp_ext *
ext_new(struct net_stack *ns, const struct tcp_ref *ref)
{
	struct tcp_ext *x = blk_pool_get(&ns->ext_refs);

	if (x == NULL)
		return NULL;
	ns->stats->tcp_ext_refs_made = ns->ext_refs.made;
	ns->stats->tcp_ext_refs_used++;
	x->sh.free_cb = ext_free;
	x->sh.fcb_opaque = x;
	x->ns = ns;
	x->done = ref->done;
	x->arg = ref->arg;
	/* The writer's own reference, dropped once its mbufs are queued: a
	 * push that fails and frees its mbuf cannot free the block. */
	rte_mbuf_ext_refcnt_set(&x->sh, 1);
	ref->hold(ref->arg);
	return x;
}

uint32_t
tcp_write_ref(struct net_stack *ns, struct tcp_conn *c, const void *data,
		uint32_t len, const struct tcp_ref *ref)
{
	uint16_t room = rte_pktmbuf_data_room_size(ns->pool);
	const uint8_t *p = data;
	uint32_t space, done, whole, lent;
	struct tcp_ext *x;

	if (len < TCP_REF_MIN || ns->cfg.ext_refs == 0 ||
			!net_ifc(ns, c->port)->tx_any_memory)
		return tcp_write(ns, c, data, len);
	space = RTE_MIN(len, tcp_send_space(ns, c));
	if (space < TCP_REF_MIN)
		return 0;
	/* The tail's room, copied: then whole mbufs. */
	done = tcp_write(ns, c, data, RTE_MIN(space,
			tcp_sndq_tail_room(&c->sndq)));
	whole = (space - done) / room * room;
	if (whole > 0) {
		x = ext_new(ns, ref);
		if (x == NULL) {
			ns->stats->tcp.zero_copy_refs_full++;
			return done + tcp_write(ns, c, p + done, space - done);
		}
		lent = lend(ns, c, x, p + done, whole, room);
		ext_put(x);
		done += lent;
		if (lent < whole)
			return done;	/* out of mbufs: the rest later */
	}
	/* The write's last bytes, under an mbuf, copied; in the middle of
	 * the room they wait for the next write, which then begins on an
	 * mbuf's edge. */
	if (space == len)
		done += tcp_write(ns, c, p + done, len - done);
	return done;
}
