/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP output: segment construction, the send queue's acknowledged end, the
 * send loop and the arming of the retransmission timer. Payload reaches the
 * wire as refcounted clones of the send-queue mbufs, chained behind a header
 * mbuf, so sending and resending copy nothing; tiny payloads, and devices
 * without chained-mbuf TX, get a copy instead. Nothing here calls input, the
 * timers' handlers or the user calls, but at the flush: a connection whose
 * upper layer pushed room is offered its held data first (input's
 * tcp_deliver_held()).
 */
#include <string.h>

#include <rte_mbuf.h>

#include "cksum.h"
#include "tcp_impl.h"

#define TCP_COPY_MAX 128	/* below this a copy is cheaper than a clone */
#define TCP_TSO_SEGS 44		/* a TSO frame's segments without pacing:
				 * 64 KB less headers, Linux's GSO size */

struct seg_spec {
	uint8_t port;		/* of the stack: the way out */
	uint8_t family;
	const uint8_t *dmac;
	const union net_ip *saddr;
	const union net_ip *daddr;
	uint16_t sport;		/* host order */
	uint16_t dport;
	uint32_t seq;
	uint32_t ack;
	uint8_t flags;
	uint16_t win;
	const uint8_t *opts;
	uint8_t optlen;		/* multiple of 4 */
};

/* Writes Ethernet, IP (either family) and TCP headers into a new mbuf;
 * the TCP checksum is left for finish_segment() once the payload is
 * attached. */
static struct rte_mbuf *
start_segment(struct net_stack *ns, const struct seg_spec *s,
		uint32_t payload_len)
{
	uint16_t tcp_len = (uint16_t)(TCP_HDR_MIN + s->optlen);
	uint16_t ip_len = tcp_ip_hdr_len(s->family);
	uint16_t hlen = (uint16_t)(ETH_HDR_LEN + ip_len + tcp_len);
	struct rte_mbuf *m = net_alloc(ns);
	uint8_t *p, *ip, *tcp;

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, hlen);
	if (p == NULL) {	/* a pool with tiny buffers: refuse, do not crash */
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(p, s->dmac, 6);
	memcpy(p + 6, net_ifc(ns, s->port)->mac, 6);
	ip = p + ETH_HDR_LEN;
	if (s->family == NET_AF_INET6) {
		pkt_wr16(p + 12, ETHERTYPE_IPV6);
		ip6_hdr_fill(ip, s->saddr, s->daddr, IPPROTO_TCP_, NET_TTL,
				(uint16_t)(tcp_len + payload_len));
	} else {
		pkt_wr16(p + 12, ETHERTYPE_IPV4);
		ip[0] = 0x45;
		ip[1] = 0;
		pkt_wr16(ip + 2, (uint16_t)(IPV4_HDR_MIN + tcp_len + payload_len));
		pkt_wr16(ip + 4, ns->ip_id++);
		pkt_wr16(ip + 6, 0x4000);	/* DF: we do path MTU the plain way */
		ip[8] = NET_TTL;
		ip[9] = IPPROTO_TCP_;
		ip[10] = ip[11] = 0;
		memcpy(ip + 12, &s->saddr->v4, 4);
		memcpy(ip + 16, &s->daddr->v4, 4);
	}
	/* The checksums are settled in finish_segment(), once the
	 * payload is attached and offload can be decided. */
	tcp = ip + ip_len;
	pkt_wr16(tcp, s->sport);
	pkt_wr16(tcp + 2, s->dport);
	pkt_wr32(tcp + 4, s->seq);
	pkt_wr32(tcp + 8, s->ack);
	tcp[12] = (uint8_t)((tcp_len / 4) << 4);
	tcp[13] = s->flags;
	pkt_wr16(tcp + 14, s->win);
	tcp[16] = tcp[17] = tcp[18] = tcp[19] = 0;
	if (s->optlen)
		memcpy(tcp + TCP_HDR_MIN, s->opts, s->optlen);
	return m;
}

/* Checksum offload of a chain whose inner pieces have odd lengths is not
 * to be trusted: net_tap's software emulation sums each piece in its own
 * byte lane and gets it wrong. Such segments are summed here. */
static bool
offload_ok(const struct rte_mbuf *m)
{
	for (; m->next != NULL; m = m->next)
		if (m->data_len & 1)
			return false;
	return true;
}

/* Sends the segment, or with tso_segsz a frame the device cuts into
 * segments of that much payload (TSO), each with these headers: the
 * sequence number, IP length and checksums its own, FIN and PSH on the
 * last alone. */
static void
finish_segment(struct net_stack *ns, const struct seg_spec *s,
		struct rte_mbuf *m, uint16_t tso_segsz)
{
	uint16_t ip_len = tcp_ip_hdr_len(s->family);
	uint16_t tcp_len = (uint16_t)(TCP_HDR_MIN + s->optlen);
	uint8_t *ip = rte_pktmbuf_mtod_offset(m, uint8_t *, ETH_HDR_LEN);
	uint32_t l4_len = rte_pktmbuf_pkt_len(m) - ETH_HDR_LEN - ip_len;
	uint32_t segs = 1;
	struct rte_mbuf *seg;
	struct cksum c;
	uint16_t sum;

	/* With TSO, the pseudo header's sum without the length, which each
	 * segment has its own (as DPDK's rte_ipv4_phdr_cksum()). */
	cksum_init(&c);
	cksum_pseudo(&c, s->family, s->saddr, s->daddr, IPPROTO_TCP_,
			tso_segsz != 0 ? 0 : (uint16_t)l4_len);
	/* A TSO frame's chain was checked in send_data(): the device sums
	 * every segment it cuts. */
	if (tso_segsz != 0 || (net_ifc(ns, s->port)->tx_cksum_offload &&
			offload_ok(m))) {
		/* The device sums the segment; it wants the pseudo header's
		 * sum, folded but not complemented, in the checksum field. */
		sum = (uint16_t)~cksum_finish(&c);
		m->ol_flags |= s->family == NET_AF_INET6 ?
			RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_TCP_CKSUM :
			RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM |
			RTE_MBUF_F_TX_TCP_CKSUM;
		m->l2_len = ETH_HDR_LEN;
		m->l3_len = ip_len;
		if (tso_segsz != 0) {
			segs = (l4_len - tcp_len + tso_segsz - 1) / tso_segsz;
			m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
			m->l4_len = tcp_len;
			m->tso_segsz = tso_segsz;
			ns->stats->tcp.tso_frames++;
		}
	} else {
		if (s->family == NET_AF_INET) {
			sum = cksum_buf(ip, IPV4_HDR_MIN);
			memcpy(ip + 10, &sum, 2);
		}
		cksum_feed(&c, ip + ip_len,
				rte_pktmbuf_data_len(m) - ETH_HDR_LEN - ip_len);
		for (seg = m->next; seg != NULL; seg = seg->next)
			cksum_feed(&c, rte_pktmbuf_mtod(seg, void *),
					rte_pktmbuf_data_len(seg));
		sum = cksum_finish(&c);
	}
	memcpy(ip + ip_len + 16, &sum, 2);
	ns->stats->tcp.segs_out += segs;
	ns->stats->tcp.ip6_segs_out += s->family == NET_AF_INET6 ? segs : 0;
	net_tx(ns, s->port, m);
}

/* Options of a segment: timestamps and SACK blocks when negotiated.
 * Returns their length (a multiple of 4). */
static uint8_t
data_options(struct net_stack *ns, struct tcp_conn *c, uint8_t *o)
{
	uint8_t n = 0;

	if (c->flags & TCP_F_OPT_TS) {
		o[0] = 1;
		o[1] = 1;
		o[2] = 8;
		o[3] = 10;
		pkt_wr32(o + 4, (uint32_t)ns->now_ms + c->ts_offset);
		pkt_wr32(o + 8, c->ts_recent);
		n = TCP_TS_LEN;
	}
	if ((c->flags & TCP_F_OPT_SACK) && tcp_rcvq_has_holes(c)) {
		struct tcp_block b[4];
		int k, nb = tcp_rcvq_blocks(c, b, (TCP_HDR_OPT_MAX - n - 4) / 8);

		o[n] = 1;
		o[n + 1] = 1;
		o[n + 2] = 5;
		o[n + 3] = (uint8_t)(2 + 8 * nb);
		for (k = 0; k < nb; k++) {
			pkt_wr32(o + n + 4 + 8 * k, b[k].start);
			pkt_wr32(o + n + 8 + 8 * k, b[k].end);
		}
		n = (uint8_t)(n + 4 + 8 * nb);
	}
	return n;
}

/* The room the upper layer pushed and the receive buffer, less what the
 * buffer holds for it. */
uint32_t
tcp_rcv_window(const struct tcp_conn *c)
{
	uint64_t room = (uint64_t)c->rcv_space + c->rcvbuf;
	uint32_t held = tcp_rcvq_held_bytes(c);
	uint32_t max = TCP_WIN_FIELD_MAX << c->rcv_wscale;
	uint32_t space = room > held ? (uint32_t)RTE_MIN(room - held,
			(uint64_t)UINT32_MAX) : 0;

	if (space > max)
		space = max;
	/* Never move the right edge back (RFC 9293 3.8.6.2.1). */
	if (SEQ_LT(c->rcv_nxt + space, c->rcv_adv))
		space = c->rcv_adv - c->rcv_nxt;
	return space;
}

/* The window field of a segment; records the edge it advertises. */
static uint16_t
advertise(struct tcp_conn *c, bool syn)
{
	uint32_t win = tcp_rcv_window(c), field;

	if (syn) {	/* never scaled */
		field = RTE_MIN(win, TCP_WIN_FIELD_MAX);
		c->rcv_adv = c->rcv_nxt + field;
		return (uint16_t)field;
	}
	/* Round up rather than shrink an edge already advertised. */
	field = win >> c->rcv_wscale;
	if (SEQ_LT(c->rcv_nxt + (field << c->rcv_wscale), c->rcv_adv))
		field++;
	field = RTE_MIN(field, TCP_WIN_FIELD_MAX);
	c->rcv_adv = c->rcv_nxt + (field << c->rcv_wscale);
	return (uint16_t)field;
}

static void
conn_spec(struct net_stack *ns, struct tcp_conn *c, struct seg_spec *s,
		uint32_t seq, uint8_t flags, uint8_t *opts)
{
	memset(s, 0, sizeof(*s));
	s->port = c->port;
	s->family = tcp_family(c);
	s->dmac = c->peer_mac;
	s->saddr = net_local_addr(ns, c->port, c->local);
	s->daddr = &c->raddr;
	s->sport = c->lport;
	s->dport = c->rport;
	s->seq = seq;
	s->ack = c->rcv_nxt;
	s->flags = flags;
	s->win = (flags & TCP_RST) ? 0 : advertise(c, flags & TCP_SYN);
	if (!(flags & TCP_RST))
		tcp_zero_window(ns, c, s->win == 0);
	if (opts != NULL && !(flags & (TCP_SYN | TCP_RST))) {
		s->opts = opts;
		s->optlen = data_options(ns, c, opts);
	}
	if (flags & TCP_ACK) {
		/* Any ACK we send settles what was owed. */
		c->last_ack_sent = c->rcv_nxt;
		c->acks_owed = 0;
		c->flags &= ~TCP_F_ACK_NOW;
		tw_cancel(&ns->wheel, &c->delack);
	}
}

static void
send_bare(struct net_stack *ns, struct tcp_conn *c, uint32_t seq, uint8_t flags)
{
	uint8_t opts[TCP_HDR_OPT_MAX];
	struct seg_spec s;
	struct rte_mbuf *m;

	conn_spec(ns, c, &s, seq, flags, opts);
	m = start_segment(ns, &s, 0);
	if (m != NULL)
		finish_segment(ns, &s, m, 0);
}

/* SYN and SYN-ACK options: MSS, then what the peer offered (or, for our
 * own SYN, everything we support). */
static uint8_t
syn_options(struct net_stack *ns, struct tcp_conn *c, uint8_t *o)
{
	/* What we can take: the port's MTU, whatever the path's. */
	uint16_t our_mss = (uint16_t)(net_ifc(ns, c->port)->mtu -
			tcp_ip_hdr_len(tcp_family(c)) - TCP_HDR_MIN);
	uint8_t n = 4;

	o[0] = 2;
	o[1] = 4;
	pkt_wr16(o + 2, our_mss);
	if (c->flags & TCP_F_OPT_WS) {
		o[n] = 1;
		o[n + 1] = 3;
		o[n + 2] = 3;
		o[n + 3] = c->rcv_wscale;
		n += 4;
	}
	if (c->flags & TCP_F_OPT_SACK) {
		o[n] = 1;
		o[n + 1] = 1;
		o[n + 2] = 4;
		o[n + 3] = 2;
		n += 4;
	}
	if (c->flags & TCP_F_OPT_TS) {
		o[n] = 1;
		o[n + 1] = 1;
		o[n + 2] = 8;
		o[n + 3] = 10;
		pkt_wr32(o + n + 4, (uint32_t)ns->now_ms + c->ts_offset);
		pkt_wr32(o + n + 8, c->ts_recent);
		n += TCP_TS_LEN;
	}
	return n;
}

static void
send_syn_common(struct net_stack *ns, struct tcp_conn *c, uint8_t flags)
{
	uint8_t opts[TCP_HDR_OPT_MAX];
	struct seg_spec s;
	struct rte_mbuf *m;

	conn_spec(ns, c, &s, c->iss, flags, NULL);
	s.opts = opts;
	s.optlen = syn_options(ns, c, opts);
	m = start_segment(ns, &s, 0);
	if (m != NULL)
		finish_segment(ns, &s, m, 0);
	c->snd_nxt = c->iss + 1;
	if (SEQ_LT(c->snd_max, c->snd_nxt))
		c->snd_max = c->snd_nxt;
}

void
tcp_send_syn(struct net_stack *ns, struct tcp_conn *c)
{
	send_syn_common(ns, c, TCP_SYN);
}

void
tcp_send_syn_ack(struct net_stack *ns, struct tcp_conn *c)
{
	send_syn_common(ns, c, TCP_SYN | TCP_ACK);
}

/* The addresses of an answer to a received segment, without a
 * connection: on the port it came by. */
static void
answer_spec(struct net_stack *ns, struct seg_spec *s, const struct ip_view *ip,
		const struct tcp_view *t, const uint8_t *src_mac)
{
	memset(s, 0, sizeof(*s));
	s->port = ns->cur_port;
	s->family = ip->family;
	s->dmac = src_mac;
	s->saddr = &ip->dst;
	s->daddr = &ip->src;
	s->sport = t->dport;
	s->dport = t->sport;
}

void
tcp_send_cookie_syn_ack(struct net_stack *ns, const struct ip_view *ip,
		const struct tcp_view *t, const uint8_t *src_mac, uint32_t cookie,
		uint16_t mss)
{
	uint8_t opts[4] = { 2, 4, 0, 0 };
	struct seg_spec s;
	struct rte_mbuf *m;

	/* Only the MSS survives in a cookie; the other options are not
	 * offered, so the peer does not use them. */
	pkt_wr16(opts + 2, mss);
	answer_spec(ns, &s, ip, t, src_mac);
	s.seq = cookie;
	s.ack = t->seq + 1;
	s.flags = TCP_SYN | TCP_ACK;
	s.win = (uint16_t)RTE_MIN(ns->cfg.rcv_win_max, TCP_WIN_FIELD_MAX);
	s.opts = opts;
	s.optlen = sizeof(opts);
	m = start_segment(ns, &s, 0);
	if (m != NULL) {
		ns->stats->tcp.syncookies_sent++;
		finish_segment(ns, &s, m, 0);
	}
}

void
tcp_send_ack(struct net_stack *ns, struct tcp_conn *c)
{
	send_bare(ns, c, c->snd_nxt, TCP_ACK);
}

void
tcp_send_keepalive(struct net_stack *ns, struct tcp_conn *c)
{
	/* An old sequence number forces the peer to answer with an ACK. */
	send_bare(ns, c, c->snd_una - 1, TCP_ACK);
	ns->stats->tcp.keepalive_probes++;
}

void
tcp_send_rst(struct net_stack *ns, struct tcp_conn *c)
{
	send_bare(ns, c, c->snd_nxt, TCP_RST | TCP_ACK);
	ns->stats->tcp.resets_out++;
}

void
tcp_reply_rst(struct net_stack *ns, const struct ip_view *ip,
		const struct tcp_view *t, const uint8_t *src_mac)
{
	struct seg_spec s;
	struct rte_mbuf *m;

	if (t->flags & TCP_RST)
		return;		/* never answer a reset */
	answer_spec(ns, &s, ip, t, src_mac);
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
		ns->stats->tcp.resets_out++;
		finish_segment(ns, &s, m, 0);
	}
}

/* Send queue ------------------------------------------------------------ */

/* Mbuf k of the queue: chunks walked from the cursor when it is not
 * past them (new data), else from the head (a retransmission, which
 * leaves the cursor where it is). */
static struct rte_mbuf *
sndq_at(struct tcp_sndq *q, uint32_t k)
{
	struct tcp_sndq_chain *ch = q->ch;
	uint32_t g = q->first + k, no = g / TCP_SNDQ_CHUNK_MBUFS, i = 0;
	struct tcp_sndq_chunk *p = ch->head;

	if (ch->cur != NULL && ch->cur_no <= no) {
		p = ch->cur;
		i = ch->cur_no;
	}
	for (; i < no; i++)
		p = p->next;
	if (ch->cur == NULL || ch->cur_no <= no) {
		ch->cur = p;
		ch->cur_no = no;
	}
	return p->m[g % TCP_SNDQ_CHUNK_MBUFS];
}

/* Frees the first mbuf; its chunk goes back once drained. */
static void
sndq_pop(struct net_stack *ns, struct tcp_sndq *q)
{
	struct tcp_sndq_chain *ch = q->ch;
	struct tcp_sndq_chunk *h = ch->head;

	rte_pktmbuf_free(h->m[q->first]);
	ns->stats->tcp_sndq_mbufs--;
	q->count--;
	if (++q->first < TCP_SNDQ_CHUNK_MBUFS && q->count > 0)
		return;
	ch->head = h->next;
	if (ch->head == NULL)
		ch->tail = NULL;
	if (ch->cur == h)
		ch->cur = NULL;
	else if (ch->cur != NULL)
		ch->cur_no--;
	blk_pool_put(&ns->sndq_chunks, h);
	ns->stats->tcp_sndq_chunks_used--;
	q->first = 0;
}

bool
tcp_sndq_push(struct net_stack *ns, struct tcp_sndq *q, struct rte_mbuf *m)
{
	struct tcp_sndq_chain *ch = q->ch;
	uint32_t slot = (q->first + q->count) % TCP_SNDQ_CHUNK_MBUFS;

	/* Every mbuf but the last full: the lookups' arithmetic. */
	RTE_ASSERT(q->count == 0 || rte_pktmbuf_tailroom(tcp_sndq_tail(q)) == 0);
	if (ch->head == NULL || slot == 0) {
		struct tcp_sndq_chunk *n = blk_pool_get(&ns->sndq_chunks);

		if (n == NULL)
			return false;
		ns->stats->tcp_sndq_chunks_made = ns->sndq_chunks.made;
		ns->stats->tcp_sndq_chunks_used++;
		n->next = NULL;
		if (ch->head == NULL)
			ch->head = n;
		else
			ch->tail->next = n;
		ch->tail = n;
	}
	ch->tail->m[slot] = m;
	q->count++;
	ns->stats->tcp_sndq_mbufs++;
	return true;
}

void
tcp_sndq_drop(struct net_stack *ns, struct tcp_sndq *q, uint32_t bytes)
{
	q->bytes -= bytes;
	bytes += q->head_off;
	while (q->count > 0) {
		uint16_t len = q->ch->head->m[q->first]->data_len;

		if (bytes < len)
			break;
		bytes -= len;
		sndq_pop(ns, q);
	}
	q->head_off = q->count > 0 ? bytes : 0;
}

void
tcp_sndq_free(struct net_stack *ns, struct tcp_sndq *q)
{
	while (q->count > 0)
		sndq_pop(ns, q);
	q->bytes = 0;
	q->head_off = 0;
}

/* Room left in the last mbuf of the queue. */
uint32_t
tcp_sndq_tail_room(struct tcp_sndq *q)
{
	struct rte_mbuf *t;

	if (q->count == 0)
		return 0;
	t = tcp_sndq_tail(q);
	return RTE_MBUF_DIRECT(t) ? rte_pktmbuf_tailroom(t) : 0;
}

/* Attach bytes [off, off + len) of the queue (off from snd_una) to m:
 * clones when the device takes chains, a copy otherwise. */
static int
attach_payload(struct net_stack *ns, uint8_t port, struct rte_mbuf *m,
		struct tcp_sndq *q, uint32_t off, uint32_t len)
{
	bool copy = !net_ifc(ns, port)->tx_multiseg || len <= TCP_COPY_MAX;
	uint32_t room = q->ch->head->m[q->first]->buf_len, i;

	/* every mbuf but the last full: room bytes each */
	off += q->head_off;
	i = off / room;
	off %= room;
	while (len > 0) {
		struct rte_mbuf *ch = sndq_at(q, i);
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

/* Sends [seq, seq + len) of the queue, with FIN after it if asked; with
 * tso_segsz, as one frame the device cuts into segments of that much,
 * one entry of the scoreboard (as a Linux skb of several segments). */
static bool
send_data(struct net_stack *ns, struct tcp_conn *c, uint32_t seq, uint32_t len,
		bool fin, uint16_t tso_segsz)
{
	uint8_t flags = TCP_ACK, opts[TCP_HDR_OPT_MAX];
	struct seg_spec s;
	struct rte_mbuf *m;

	/* A FIN alone may find the rings given back: its scoreboard
	 * entry needs them. */
	if (!tcp_bufs_take(ns, c))
		return false;
	if (fin)
		flags |= TCP_FIN;
	if (len > 0 && seq + len == c->snd_una + c->sndq.bytes)
		flags |= TCP_PSH;
	conn_spec(ns, c, &s, seq, flags, opts);
	m = start_segment(ns, &s, len);
	if (m == NULL)
		return false;
	if (len > 0 && attach_payload(ns, c->port, m, &c->sndq, seq - c->snd_una,
			len) != 0) {
		rte_pktmbuf_free(m);
		return false;
	}
	/* The device sums a TSO frame's segments: a chain with pieces of
	 * odd length goes as segments summed here instead (offload_ok()). */
	if (tso_segsz != 0 && !offload_ok(m)) {
		ns->stats->tcp.tso_odd_chains++;
		rte_pktmbuf_free(m);
		return false;
	}
	finish_segment(ns, &s, m, tso_segsz);
	if (SEQ_LT(seq, c->snd_max)) {
		ns->stats->tcp.retransmits++;
		tcp_undo_retransmitted(c, (c->flags & TCP_F_OPT_TS) ?
				(uint32_t)ns->now_ms + c->ts_offset : 0);
	}
	if (c->flags & TCP_F_RECOVERY) {
		c->prr_out += len + fin;
		ns->stats->tcp.prr_sends++;
	}
	tcp_seg_sent(ns, c, seq, seq + len + fin, tso_segsz);
	tcp_pace_sent(ns, c, len + fin);
	return true;
}

/* Option bytes on the next data segment, to size its payload. */
static uint32_t
data_optlen(const struct tcp_conn *c)
{
	uint32_t n = (c->flags & TCP_F_OPT_TS) ? TCP_TS_LEN : 0;

	if ((c->flags & TCP_F_OPT_SACK) && tcp_rcvq_has_holes(c))
		n += 4 + 8 * RTE_MIN((uint32_t)(c->rcvq.n - c->rcvq.held),
				(TCP_HDR_OPT_MAX - n - 4) / 8);
	return n;
}

uint32_t
tcp_send_range(struct net_stack *ns, struct tcp_conn *c, uint32_t seq,
		uint32_t len)
{
	uint32_t queued_end = c->snd_una + c->sndq.bytes;
	bool fin = false;

	len = RTE_MIN(len, tcp_seg_max(c, data_optlen(c)));
	if (SEQ_GT(seq + len, queued_end))
		len = SEQ_GT(queued_end, seq) ? queued_end - seq : 0;
	/* A lost FIN goes again with the last byte, or alone. */
	if ((c->flags & TCP_F_FIN_QUEUED) && seq + len == queued_end &&
			SEQ_GT(c->snd_max, queued_end))
		fin = true;
	if (len == 0 && !fin)
		return 0;
	return send_data(ns, c, seq, len, fin, 0) ? len + fin : 0;
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
	if (c->sndq.bytes > 0 && send_data(ns, c, c->snd_una, 1, false, 0)) {
		ns->stats->tcp.window_probes++;
		if (SEQ_GT(c->snd_una + 1, c->snd_max))
			c->snd_max = c->snd_una + 1;
	}
}

/* Recovery (RFC 6675 NextSeg, rule 1): retransmit what is marked lost,
 * in sequence order, while the pipe leaves room in cwnd (which PRR sets
 * in fast recovery). One walk of the scoreboard. */
static void
retransmit_lost(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_seg *cur = NULL;
	uint32_t start, end;
	bool sent = false;

	while (c->lost_bytes > 0 && c->cwnd > tcp_pipe(c) &&
			tcp_seg_next_lost(c, &cur, &start, &end) &&
			tcp_pace_allows(ns, c)) {
		if (tcp_send_range(ns, c, start, end - start) == 0)
			break;
		sent = true;
	}
	/* The last hole resent: if that retransmission is lost too and
	 * nothing follows it, a probe finds out before the RTO would. */
	if (sent && !(c->flags & (TCP_F_TLP_ARMED | TCP_F_REO_ARMED)) &&
			tcp_tlp_allowed(c))
		tcp_arm_send_timer(ns, c);
}

/* The shift of the windows we send: enough for rcv_win_max and for the
 * receive buffer's ceiling, whichever is larger (a buffer autotuned to
 * it is offered whole). */
uint8_t
tcp_our_wscale(const struct net_stack *ns)
{
	uint32_t want = RTE_MAX(ns->cfg.rcv_win_max, ns->cfg.rcv_buf_max);
	uint8_t s = 0;

	while (s < 14 && (TCP_WIN_FIELD_MAX << s) < want)
		s++;
	return s;
}

/* The upper layer made room: tell the peer when the window at least
 * doubles what is left of it (Linux's tcp_cleanup_rbuf()), and always when
 * it reopens a window that had fallen below one segment. Less rides on the
 * ACKs of the data the window left still brings: an update for every few
 * kilobytes taken from a large buffer is a segment each for nothing (an
 * upload read 8 KB at a time: five of the six segments we sent). */
bool
tcp_window_grew(const struct tcp_conn *c)
{
	uint32_t old = SEQ_GT(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	uint32_t now = tcp_rcv_window(c);

	return now > old && (old < c->mss || now >= 2ull * old);
}

/* Timers armed as segments go out ------------------------------------- */

void
tcp_arm_rexmit(struct net_stack *ns, struct tcp_conn *c)
{
	uint64_t t = (uint64_t)c->rto_us << c->backoff;

	if (t > (uint64_t)ns->cfg.rto_max_ms * 1000)
		t = (uint64_t)ns->cfg.rto_max_ms * 1000;
	tw_arm(&ns->wheel, &c->rexmit, tcp_deadline_ms(ns, t));
}

/* TCP_TLP_MAX probes per episode; in recovery too once nothing waits to
 * be resent, where a lost tail (retransmissions included) would otherwise
 * wait for the RTO, RACK having nothing later to see. */
bool
tcp_tlp_allowed(const struct tcp_conn *c)
{
	return c->state == TCP_ESTABLISHED && c->srtt_us != 0 && c->backoff == 0 &&
		c->lost_bytes <= c->retrans_bytes && !(c->flags & TCP_F_LOSS) &&
		c->tlp_probes < TCP_TLP_MAX;
}

/* After new data goes out or an ACK moves snd_una: a tail loss probe
 * (RFC 8985 7.2) when one may be sent, else the retransmission timer. */
void
tcp_arm_send_timer(struct net_stack *ns, struct tcp_conn *c)
{
	uint64_t pto;

	c->flags &= ~(TCP_F_TLP_ARMED | TCP_F_REO_ARMED);
	if (c->snd_una == c->snd_max) {
		tw_cancel(&ns->wheel, &c->rexmit);
		return;
	}
	if (!tcp_tlp_allowed(c)) {
		tcp_arm_rexmit(ns, c);
		return;
	}
	/* PTO = 2 SRTT, plus 2 ms as Linux (TCP_TIMEOUT_MIN) against clock
	 * granularity; doubled for a second probe. A lone segment may wait
	 * for the peer's delayed ACK, which a resent one must not be taken
	 * for (RFC 8985 7.2, WCDelAckT); a probe of new data cannot be
	 * spurious, and its second segment draws that ACK at once. */
	pto = 2ull * c->srtt_us;
	pto += c->snd_max - c->snd_una <= c->mss && !tcp_tlp_new_data(c) ?
		(uint64_t)ns->cfg.delack_ms * 1000 : TCP_PTO_MIN_EXTRA_US;
	pto <<= c->tlp_probes;
	if (pto >= c->rto_us) {
		tcp_arm_rexmit(ns, c);
		return;
	}
	c->flags |= TCP_F_TLP_ARMED;
	tw_arm(&ns->wheel, &c->rexmit, tcp_deadline_ms(ns, pto));
}

/* The send loop ------------------------------------------------------- */

/*
 * After input, a connection sends at the next flush rather than at once:
 * what the upper layer wrote in answer to every segment of the burst
 * leaves in as few segments as the windows allow, and the ACK of them
 * all rides on it (as a kernel stack's read loop coalesces answers).
 * Room pushed outside input waits for the flush too, so that held data
 * is never offered from inside the upper layer's own call.
 */
void
tcp_output_later(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->flags & TCP_F_LISTED)
		return;
	/* Each slot is listed once, and a freed slot's entry is skipped
	 * (its flag went with it): twice max_conns entries never fill. If
	 * they ever did, send now, and leave held data for the next input. */
	if (ns->out_tail - ns->out_head > ns->index_mask) {
		tcp_transmit(ns, c);
		return;
	}
	c->flags |= TCP_F_LISTED;
	ns->out[ns->out_tail++ & ns->index_mask] = c->index;
}

void
tcp_output_listed(struct net_stack *ns)
{
	/* The upper layer may list connections while the list is worked
	 * through (taking held data on one, it writes to another): they go
	 * on its end, and out in this same flush; at most a ring's worth,
	 * so that two that list each other wait for the next flush. */
	uint32_t budget = ns->index_mask + 1;

	while (ns->out_head != ns->out_tail && budget-- > 0) {
		struct tcp_conn *c = &ns->conns[ns->out[ns->out_head++ &
				ns->index_mask]];

		if (!(c->flags & TCP_F_LISTED))
			continue;	/* freed since, or listed again */
		c->flags &= ~TCP_F_LISTED;
		if (c->state == TCP_CLOSED || tcp_is_dead(c))
			continue;
		/* Room pushed outside input: held data first, so that the
		 * window its taking opens goes out with what follows. */
		if (!(c->flags & TCP_F_DELIVER) || tcp_deliver_held(ns, c))
			tcp_transmit(ns, c);
	}
}

/* Largest payload of the next frame of new data: one segment (seg_max),
 * or on a port with TSO as many segments of *unit as a burst may have
 * (tcp_pace_burst_segs(), TCP_TSO_SEGS without pacing) and the device's
 * chain takes. Not in recovery nor when resending after a timeout, whose
 * segments go one by one; not when SACK blocks shorten our segments. */
static uint32_t
frame_max(struct net_stack *ns, const struct tcp_conn *c, uint32_t seg_max,
		uint32_t *unit)
{
	const struct net_if *ifc = net_ifc(ns, c->port);
	uint32_t segs;

	*unit = seg_max;
	if (!ifc->tx_tso || c->snd_nxt != c->snd_max ||
			(tcp_family(c) == NET_AF_INET6 && !ifc->tso_ipv6) ||
			(c->flags & (TCP_F_RECOVERY | TCP_F_LOSS)) ||
			seg_max != tcp_seg_full(c))
		return seg_max;
	/* net_tap (22.11) refuses a TSO frame whose segments, Ethernet
	 * header included, exceed the MTU: theirs a little shorter. */
	if (ifc->tso_l2_in_mtu)
		*unit = seg_max - ETH_HDR_LEN;
	segs = (c->flags & TCP_F_PACING) && c->pacing_rate != 0 ?
		tcp_pace_burst_segs(c) : TCP_TSO_SEGS;
	/* The IP length field, and the chain: a mbuf of the queue holds
	 * 1 KB at least, but for the ends. */
	segs = RTE_MIN(segs, (UINT16_MAX - 320u) / *unit);
	segs = RTE_MIN(segs, (ifc->tso_segs_max - 2u) * 1024u / *unit);
	return segs > 1 ? segs * *unit : seg_max;
}

/* The send loop: what the windows allow goes out, and an owed ACK. */
void
tcp_transmit(struct net_stack *ns, struct tcp_conn *c)
{
	bool by_pipe;

	switch (c->state) {
	case TCP_ESTABLISHED:
	case TCP_CLOSE_WAIT:
	case TCP_FIN_WAIT_1:
	case TCP_CLOSING:
	case TCP_LAST_ACK:
		break;
	case TCP_FIN_WAIT_2:
		/* Still receiving: a window held data's taking opened is
		 * announced, as in the states that send. */
		if (tcp_window_grew(c))
			c->flags |= TCP_F_ACK_NOW;
		/* fall through */
	case TCP_TIME_WAIT:
		if (c->flags & TCP_F_ACK_NOW)
			tcp_send_ack(ns, c);
		return;
	default:
		return;
	}
	if (tcp_window_grew(c))
		c->flags |= TCP_F_ACK_NOW;
	/* With SACK, and after a timeout, the scoreboard's pipe measures
	 * what is out (RFC 6675); NewReno counts from snd_una. */
	by_pipe = c->flags & (TCP_F_OPT_SACK | TCP_F_LOSS);
	/* F-RTO's new data goes in place of retransmissions. */
	if (by_pipe && !(c->flags & TCP_F_FRTO_NEW))
		retransmit_lost(ns, c);
	for (;;) {
		uint32_t off = c->snd_nxt - c->snd_una;
		uint32_t avail = c->sndq.bytes > off ? c->sndq.bytes - off : 0;
		int32_t by_rwnd = (int32_t)(c->snd_una + c->snd_wnd - c->snd_nxt);
		/* Limited transmit (RFC 3042): each of the first two
		 * duplicate ACKs lets one new segment out. */
		uint32_t extra = (c->flags & TCP_F_RECOVERY) ? 0 :
			RTE_MIN(c->dupacks, (uint8_t)2) * (uint32_t)c->mss;
		int32_t by_cwnd = by_pipe ?
			(int32_t)(c->cwnd - tcp_pipe(c)) :
			(int32_t)(c->snd_una + c->cwnd + extra - c->snd_nxt);
		uint32_t usable = (uint32_t)RTE_MAX(RTE_MIN(by_rwnd, by_cwnd), 0);
		uint32_t seg_max = tcp_seg_max(c, data_optlen(c)), unit;
		uint32_t len = RTE_MIN(RTE_MIN(avail, usable),
				frame_max(ns, c, seg_max, &unit));
		bool fin, room;

		/* A frame of several segments ends on a whole one, unless
		 * it takes the last of the queue. */
		if (len > seg_max && len < avail)
			len -= len % unit;

		/* The scoreboard bounds the segments in flight. */
		room = tcp_seg_room(ns, c);
		if (!room && !SEQ_LT(c->snd_nxt, c->snd_max)) {
			if (len > 0)
				ns->stats->tcp.sb_full_waits++;
			len = 0, usable = 0;
		}
		fin = fin_after(c, len) && room;

		/* Sender silly-window avoidance (RFC 9293 3.8.6.2.1): when
		 * the windows cut a segment short, it goes only if it fills
		 * half the largest window seen; otherwise wait for ACKs. */
		if (len > 0 && usable < RTE_MIN(avail, seg_max) &&
				len < c->max_sndwnd / 2)
			len = 0, fin = false;
		if (len == 0 && !fin) {
			/* Data waits and the peer's window, not cwnd, holds
			 * it (Linux's rwnd_limited). */
			tcp_rwnd_limited(ns, c, avail > 0 && by_rwnd < (int32_t)
					RTE_MIN(avail, seg_max) &&
					by_rwnd <= by_cwnd);
			tcp_rate_check_app_limited(c);
			if (c->flags & TCP_F_ACK_NOW)
				tcp_send_ack(ns, c);
			/* Zero window with data waiting: probe on the timer. */
			if (avail > 0 && c->snd_una == c->snd_max &&
					!tw_is_armed(&c->rexmit))
				tcp_arm_rexmit(ns, c);
			return;
		}
		if (!tcp_pace_allows(ns, c)) {
			/* Its turn comes from the pacing queue. */
			if (c->flags & TCP_F_ACK_NOW)
				tcp_send_ack(ns, c);
			return;
		}
		if (c->snd_una == c->snd_max && ns->cc->tx_start != NULL)
			ns->cc->tx_start(ns, c);
		if (!send_data(ns, c, c->snd_nxt, len, fin,
				len > seg_max ? (uint16_t)unit : 0)) {
			/* Out of mbufs: a frame's chain may be what does
			 * not fit; one segment may. Else the timer tries
			 * again, even with nothing in flight to time. */
			bool sent = false;

			if (len > seg_max) {
				len = seg_max;
				fin = fin_after(c, len) && room;
				sent = send_data(ns, c, c->snd_nxt, len, fin, 0);
			}
			if (!sent) {
				if (!tw_is_armed(&c->rexmit))
					tcp_arm_rexmit(ns, c);
				return;
			}
		}
		c->snd_nxt += len + fin;
		if (SEQ_GT(c->snd_nxt, c->snd_max))
			c->snd_max = c->snd_nxt;
		if (!tw_is_armed(&c->rexmit))
			tcp_arm_send_timer(ns, c);
		if (fin)
			return;
	}
}
