/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP output: the send queue, segment construction and the send loop.
 * Payload reaches the wire as refcounted clones of the send-queue mbufs,
 * chained behind a header mbuf, so sending and resending copy nothing; tiny
 * payloads, and devices without chained-mbuf TX, get a copy instead.
 */
#include <string.h>

#include <rte_mbuf.h>

#include "cksum.h"
#include "tcp_impl.h"

#define TCP_COPY_MAX 128	/* below this a copy is cheaper than a clone */
#define TCP_CHUNK_ROOM(m) ((m)->buf_len)

struct seg_spec {
	const uint8_t *dmac;
	uint32_t saddr;		/* network order */
	uint32_t daddr;
	uint16_t sport;		/* host order */
	uint16_t dport;
	uint32_t seq;
	uint32_t ack;
	uint8_t flags;
	uint16_t win;
	const uint8_t *opts;
	uint8_t optlen;		/* multiple of 4 */
};

static inline void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Writes Ethernet, IPv4 and TCP headers into a new mbuf; the TCP checksum
 * is left for finish_segment() once the payload is attached. */
static struct rte_mbuf *
start_segment(struct net_stack *ns, const struct seg_spec *s,
		uint16_t payload_len)
{
	uint16_t tcp_len = (uint16_t)(TCP_HDR_MIN + s->optlen);
	uint16_t hlen = (uint16_t)(ETH_HDR_LEN + IPV4_HDR_MIN + tcp_len);
	struct rte_mbuf *m = net_alloc(ns);
	uint8_t *p, *ip, *tcp;
	uint16_t sum;

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, hlen);
	if (p == NULL) {	/* a pool with tiny buffers: refuse, do not crash */
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(p, s->dmac, 6);
	memcpy(p + 6, ns->ifc->mac, 6);
	wr16(p + 12, ETHERTYPE_IPV4);
	ip = p + ETH_HDR_LEN;
	ip[0] = 0x45;
	ip[1] = 0;
	wr16(ip + 2, (uint16_t)(IPV4_HDR_MIN + tcp_len + payload_len));
	wr16(ip + 4, ns->ip_id++);
	wr16(ip + 6, 0x4000);	/* DF: we do path MTU the plain way */
	ip[8] = 64;
	ip[9] = IPPROTO_TCP_;
	ip[10] = ip[11] = 0;
	memcpy(ip + 12, &s->saddr, 4);
	memcpy(ip + 16, &s->daddr, 4);
	sum = cksum_buf(ip, IPV4_HDR_MIN);
	memcpy(ip + 10, &sum, 2);
	tcp = ip + IPV4_HDR_MIN;
	wr16(tcp, s->sport);
	wr16(tcp + 2, s->dport);
	wr32(tcp + 4, s->seq);
	wr32(tcp + 8, s->ack);
	tcp[12] = (uint8_t)((tcp_len / 4) << 4);
	tcp[13] = s->flags;
	wr16(tcp + 14, s->win);
	tcp[16] = tcp[17] = tcp[18] = tcp[19] = 0;
	if (s->optlen)
		memcpy(tcp + TCP_HDR_MIN, s->opts, s->optlen);
	return m;
}

static void
finish_segment(struct net_stack *ns, struct rte_mbuf *m)
{
	uint8_t *ip = rte_pktmbuf_mtod_offset(m, uint8_t *, ETH_HDR_LEN);
	uint16_t l4_len = (uint16_t)(rte_pktmbuf_pkt_len(m) - ETH_HDR_LEN -
			IPV4_HDR_MIN);
	uint32_t saddr, daddr;
	struct rte_mbuf *seg;
	struct cksum c;
	uint16_t sum;

	memcpy(&saddr, ip + 12, 4);
	memcpy(&daddr, ip + 16, 4);
	cksum_init(&c);
	cksum_pseudo_ipv4(&c, saddr, daddr, IPPROTO_TCP_, l4_len);
	cksum_feed(&c, ip + IPV4_HDR_MIN,
			rte_pktmbuf_data_len(m) - ETH_HDR_LEN - IPV4_HDR_MIN);
	for (seg = m->next; seg != NULL; seg = seg->next)
		cksum_feed(&c, rte_pktmbuf_mtod(seg, void *),
				rte_pktmbuf_data_len(seg));
	sum = cksum_finish(&c);
	memcpy(ip + IPV4_HDR_MIN + 16, &sum, 2);
	ns->stats->tcp_segs_out++;
	net_tx(ns, m);
}

static void
conn_spec(const struct tcp_conn *c, struct seg_spec *s, uint32_t seq,
		uint8_t flags, uint16_t win)
{
	memset(s, 0, sizeof(*s));
	s->dmac = c->peer_mac;
	s->saddr = c->laddr;
	s->daddr = c->raddr;
	s->sport = c->lport;
	s->dport = c->rport;
	s->seq = seq;
	s->ack = c->rcv_nxt;
	s->flags = flags;
	s->win = win;
}

uint32_t
tcp_rcv_window(struct net_stack *ns, struct tcp_conn *c)
{
	uint32_t space = ns->up != NULL ? ns->up->rcv_space(ns->up_ctx, c) : 0;

	if (space > TCP_ADV_WIN_MAX)
		space = TCP_ADV_WIN_MAX;
	/* Never move the right edge back (RFC 9293 3.8.6.2.1). */
	if (SEQ_LT(c->rcv_nxt + space, c->rcv_adv))
		space = c->rcv_adv - c->rcv_nxt;
	return space;
}

static uint16_t
advertise(struct net_stack *ns, struct tcp_conn *c)
{
	uint32_t win = tcp_rcv_window(ns, c);

	c->rcv_adv = c->rcv_nxt + win;
	return (uint16_t)win;
}

void
tcp_send_syn_ack(struct net_stack *ns, struct tcp_conn *c)
{
	uint8_t opts[4] = { 2, 4, 0, 0 };	/* MSS */
	uint16_t our_mss = (uint16_t)(ns->ifc->mtu - IPV4_HDR_MIN - TCP_HDR_MIN);
	struct seg_spec s;
	struct rte_mbuf *m;

	wr16(opts + 2, our_mss);
	conn_spec(c, &s, c->iss, TCP_SYN | TCP_ACK, advertise(ns, c));
	s.opts = opts;
	s.optlen = sizeof(opts);
	m = start_segment(ns, &s, 0);
	if (m != NULL)
		finish_segment(ns, m);
	c->snd_nxt = c->iss + 1;
	c->snd_max = c->iss + 1;
}

void
tcp_send_ack(struct net_stack *ns, struct tcp_conn *c)
{
	struct seg_spec s;
	struct rte_mbuf *m;

	conn_spec(c, &s, c->snd_nxt, TCP_ACK, advertise(ns, c));
	m = start_segment(ns, &s, 0);
	if (m != NULL)
		finish_segment(ns, m);
	c->flags &= ~TCP_F_ACK_NOW;
}

void
tcp_send_rst(struct net_stack *ns, struct tcp_conn *c)
{
	struct seg_spec s;
	struct rte_mbuf *m;

	conn_spec(c, &s, c->snd_nxt, TCP_RST | TCP_ACK, 0);
	m = start_segment(ns, &s, 0);
	if (m != NULL) {
		ns->stats->tcp_resets_out++;
		finish_segment(ns, m);
	}
}

void
tcp_reply_rst(struct net_stack *ns, const struct ipv4_view *ip,
		const struct tcp_view *t, const uint8_t *src_mac)
{
	struct seg_spec s;
	struct rte_mbuf *m;

	if (t->flags & TCP_RST)
		return;		/* never answer a reset */
	memset(&s, 0, sizeof(s));
	s.dmac = src_mac;
	s.saddr = ip->dst;
	s.daddr = ip->src;
	s.sport = t->dport;
	s.dport = t->sport;
	if (t->flags & TCP_ACK) {
		s.seq = t->ack;
		s.flags = TCP_RST;
	} else {
		s.ack = t->seq + t->len + !!(t->flags & TCP_SYN) +
			!!(t->flags & TCP_FIN);
		s.flags = TCP_RST | TCP_ACK;
	}
	m = start_segment(ns, &s, 0);
	if (m != NULL) {
		ns->stats->tcp_resets_out++;
		finish_segment(ns, m);
	}
}

/* Send queue ------------------------------------------------------------ */

static inline struct rte_mbuf **
sndq_slot(struct tcp_sndq *q, uint16_t i)
{
	return &q->chunk[(q->head + i) % TCP_SNDQ_SLOTS];
}

void
tcp_sndq_drop(struct tcp_sndq *q, uint32_t bytes)
{
	q->bytes -= bytes;
	bytes += q->head_off;
	while (q->count > 0) {
		struct rte_mbuf *m = q->chunk[q->head];

		if (bytes < m->data_len)
			break;
		bytes -= m->data_len;
		rte_pktmbuf_free(m);
		q->chunk[q->head] = NULL;
		q->head = (uint16_t)((q->head + 1) % TCP_SNDQ_SLOTS);
		q->count--;
	}
	q->head_off = q->count > 0 ? bytes : 0;
}

void
tcp_sndq_free(struct tcp_sndq *q)
{
	while (q->count > 0) {
		rte_pktmbuf_free(q->chunk[q->head]);
		q->chunk[q->head] = NULL;
		q->head = (uint16_t)((q->head + 1) % TCP_SNDQ_SLOTS);
		q->count--;
	}
	q->bytes = 0;
	q->head_off = 0;
}

static uint32_t
tail_room(struct tcp_sndq *q)
{
	struct rte_mbuf *t;

	if (q->count == 0)
		return 0;
	t = *sndq_slot(q, (uint16_t)(q->count - 1));
	return RTE_MBUF_DIRECT(t) ? rte_pktmbuf_tailroom(t) : 0;
}

uint32_t
tcp_send_space(const struct net_stack *ns, const struct tcp_conn *c)
{
	struct tcp_sndq *q = (struct tcp_sndq *)(uintptr_t)&c->sndq;
	uint32_t by_bytes, by_slots;

	if (c->flags & TCP_F_FIN_QUEUED || c->state == TCP_CLOSED)
		return 0;
	by_bytes = ns->cfg.snd_buf > q->bytes ? ns->cfg.snd_buf - q->bytes : 0;
	by_slots = tail_room(q) + (uint32_t)(TCP_SNDQ_SLOTS - q->count) *
		(uint32_t)(rte_pktmbuf_data_room_size(ns->pool));
	return RTE_MIN(by_bytes, by_slots);
}

uint32_t
tcp_write(struct net_stack *ns, struct tcp_conn *c, const void *data,
		uint32_t len)
{
	struct tcp_sndq *q = &c->sndq;
	const uint8_t *src = data;
	uint32_t done = 0;

	len = RTE_MIN(len, tcp_send_space(ns, c));
	while (done < len) {
		uint32_t room = tail_room(q), n;
		struct rte_mbuf *t;
		char *dst;

		if (room == 0) {
			if (q->count == TCP_SNDQ_SLOTS)
				break;
			t = net_alloc(ns);
			if (t == NULL)
				break;
			t->data_off = 0;	/* payload only: use the whole buffer */
			*sndq_slot(q, q->count) = t;
			q->count++;
			room = rte_pktmbuf_tailroom(t);
		}
		t = *sndq_slot(q, (uint16_t)(q->count - 1));
		n = RTE_MIN(room, len - done);
		dst = rte_pktmbuf_append(t, (uint16_t)n);
		memcpy(dst, src + done, n);
		done += n;
	}
	q->bytes += done;
	return done;
}

/* Attach bytes [off, off + len) of the queue (off from snd_una) to m:
 * clones when the device takes chains, a copy otherwise. */
static int
attach_payload(struct net_stack *ns, struct rte_mbuf *m, struct tcp_sndq *q,
		uint32_t off, uint32_t len)
{
	bool copy = !ns->ifc->tx_multiseg || len <= TCP_COPY_MAX;
	uint16_t i = 0;

	off += q->head_off;
	while (off >= (*sndq_slot(q, i))->data_len) {
		off -= (*sndq_slot(q, i))->data_len;
		i++;
	}
	while (len > 0) {
		struct rte_mbuf *ch = *sndq_slot(q, i);
		uint32_t n = RTE_MIN(len, ch->data_len - off);

		if (copy) {
			char *dst = rte_pktmbuf_append(m, (uint16_t)n);

			if (dst == NULL)
				return -1;
			memcpy(dst, rte_pktmbuf_mtod_offset(ch, char *, off), n);
		} else {
			struct rte_mbuf *cl = rte_pktmbuf_clone(ch, ns->pool);

			if (cl == NULL) {
				net_count_drop(ns, NET_DROP_NO_MBUF);
				return -1;
			}
			rte_pktmbuf_adj(cl, (uint16_t)off);
			rte_pktmbuf_trim(cl, (uint16_t)(cl->data_len - n));
			if (rte_pktmbuf_chain(m, cl) != 0) {
				rte_pktmbuf_free(cl);
				return -1;
			}
		}
		len -= n;
		off = 0;
		i++;
	}
	return 0;
}

/* Sends [seq, seq + len) of the queue, with FIN after it if asked. */
static bool
send_data(struct net_stack *ns, struct tcp_conn *c, uint32_t seq, uint32_t len,
		bool fin)
{
	uint8_t flags = TCP_ACK;
	struct seg_spec s;
	struct rte_mbuf *m;

	if (fin)
		flags |= TCP_FIN;
	if (len > 0 && seq + len == c->snd_una + c->sndq.bytes)
		flags |= TCP_PSH;
	conn_spec(c, &s, seq, flags, advertise(ns, c));
	m = start_segment(ns, &s, (uint16_t)len);
	if (m == NULL)
		return false;
	if (len > 0 && attach_payload(ns, m, &c->sndq, seq - c->snd_una,
			len) != 0) {
		rte_pktmbuf_free(m);
		return false;
	}
	finish_segment(ns, m);
	return true;
}

/* The FIN rides on the segment that carries the last queued byte (or goes
 * alone), once: after it, snd_nxt is past the end of the queue. */
static bool
fin_after(const struct tcp_conn *c, uint32_t len)
{
	return (c->flags & TCP_F_FIN_QUEUED) &&
		c->snd_nxt + len == c->snd_una + c->sndq.bytes;
}

void
tcp_send_probe(struct net_stack *ns, struct tcp_conn *c)
{
	/* The first unacknowledged byte, into a zero window (RFC 9293
	 * 3.8.6.1). snd_nxt stays: if the window opens without the byte
	 * being taken, sending resumes from it. */
	if (c->sndq.bytes > 0 && send_data(ns, c, c->snd_una, 1, false) &&
			SEQ_GT(c->snd_una + 1, c->snd_max))
		c->snd_max = c->snd_una + 1;
}

void
tcp_output(struct net_stack *ns, struct tcp_conn *c)
{
	switch (c->state) {
	case TCP_ESTABLISHED:
	case TCP_CLOSE_WAIT:
	case TCP_FIN_WAIT_1:
	case TCP_CLOSING:
	case TCP_LAST_ACK:
		break;
	case TCP_FIN_WAIT_2:
	case TCP_TIME_WAIT:
		if (c->flags & TCP_F_ACK_NOW)
			tcp_send_ack(ns, c);
		return;
	default:
		return;
	}
	for (;;) {
		uint32_t off = c->snd_nxt - c->snd_una;
		uint32_t avail = c->sndq.bytes > off ? c->sndq.bytes - off : 0;
		int32_t usable = (int32_t)(c->snd_una + RTE_MIN(c->snd_wnd,
				c->cwnd) - c->snd_nxt);
		uint32_t len = RTE_MIN(avail, (uint32_t)RTE_MAX(usable, 0));
		bool fin;

		len = RTE_MIN(len, c->mss);
		fin = fin_after(c, len);
		if (len == 0 && !fin) {
			if (c->flags & TCP_F_ACK_NOW)
				tcp_send_ack(ns, c);
			/* Zero window with data waiting: probe on the timer. */
			if (avail > 0 && c->snd_una == c->snd_max)
				tcp_arm_rexmit(ns, c);
			return;
		}
		if (!send_data(ns, c, c->snd_nxt, len, fin))
			return;		/* out of mbufs: the timer retries */
		if (SEQ_LT(c->snd_nxt, c->snd_max))
			ns->stats->tcp_retransmits++;
		else if (!(c->flags & TCP_F_RTT_TIMING)) {
			c->flags |= TCP_F_RTT_TIMING;
			c->rtt_seq = c->snd_nxt;
			c->rtt_start = ns->now_ms;
		}
		c->snd_nxt += len + fin;
		if (SEQ_GT(c->snd_nxt, c->snd_max))
			c->snd_max = c->snd_nxt;
		c->flags &= ~TCP_F_ACK_NOW;
		if (!tw_is_armed(&c->rexmit))
			tcp_arm_rexmit(ns, c);
		if (fin)
			return;
	}
}
