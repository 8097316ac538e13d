/* SPDX-License-Identifier: BSD-3-Clause */
/* Private to lib/net: a connection's state and what the TCP modules share. */
#ifndef EWYK_TCP_IMPL_H
#define EWYK_TCP_IMPL_H

#include "net_priv.h"
#include "pkt.h"
#include "tcp.h"
#include "timer_wheel.h"

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

/*
 * A connection's three rings (the send queue's chunks, the out-of-order
 * segments, the scoreboard) live in a block of its own, struct tcp_bufs,
 * taken from the shard's pool when the connection first has something to
 * keep (data to send, a segment out of order) and given back once all
 * three are empty again (tcp_bufs.c): an idle connection holds only its
 * counts, a few hundred bytes. Where a ring's pointer is NULL its count
 * is zero.
 */

/* Send queue: the byte stream from snd_una on, as a ring of mbufs holding
 * data. Segments are built from refcounted clones of these, so a
 * retransmission copies nothing. */
#define TCP_SNDQ_SLOTS 64

struct tcp_sndq {
	struct rte_mbuf **chunk;	/* TCP_SNDQ_SLOTS, or NULL */
	uint16_t head;
	uint16_t count;
	uint32_t head_off;	/* bytes of chunk[head] already acknowledged */
	uint32_t bytes;		/* bytes queued from snd_una */
};

/* Received out-of-order segments, kept (as received mbufs) in sequence
 * order without overlap, up to TCP_OOO_SEGS and the receive window. */
#define TCP_OOO_SEGS 32

struct tcp_ooo_ring {
	struct rte_mbuf *m[TCP_OOO_SEGS];
	uint32_t seq[TCP_OOO_SEGS];
	uint16_t off[TCP_OOO_SEGS];	/* payload offset in the mbuf */
	uint16_t len[TCP_OOO_SEGS];
};

struct tcp_ooo {
	struct tcp_ooo_ring *a;	/* or NULL */
	uint8_t n;
	uint32_t last_seq;	/* most recent arrival: first SACK block */
};

/* The scoreboard (RFC 6675) and RACK's transmit record (RFC 8985): one
 * entry per segment sent and not yet cumulatively acknowledged, in
 * sequence order, covering [snd_una, snd_max) without gaps. An entry holds
 * its end (the start is the previous entry's end, or snd_una), when it was
 * last (re)sent and in which order, and what is known of it. Running
 * tallies of SACKed, lost and retransmitted bytes give the pipe without a
 * walk. At most TCP_SEG_RING segments are in flight: new data waits when
 * the ring is full. */
#define TCP_SEG_RING 128	/* a power of two */

#define TCP_SEG_SACKED 0x01	/* the peer holds it (SACK) */
#define TCP_SEG_LOST 0x02	/* marked lost: to be retransmitted */
#define TCP_SEG_RETRANS 0x04	/* retransmitted, not since found lost */
#define TCP_SEG_EVER_RETRANS 0x08	/* sent more than once (RTT ambiguity) */

struct tcp_seg {
	uint32_t end;
	uint32_t xmit_ms;	/* last transmission, low bits of the clock */
	uint32_t xmit_no;	/* per-connection transmission order */
	uint8_t flags;
};

struct tcp_block {
	uint32_t start;
	uint32_t end;
};

struct tcp_bufs {
	struct rte_mbuf *chunk[TCP_SNDQ_SLOTS];
	struct tcp_ooo_ring ooo;
	struct tcp_seg segs[TCP_SEG_RING];
	struct tcp_bufs *free_next;
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
#define TCP_F_TLP_SENT 0x4000	/* a probe's episode is open (RFC 8985 7) */
#define TCP_F_REO_ARMED 0x0040	/* the rexmit timer is RACK's reordering timer */
#define TCP_F_TLP_RXT 0x0080	/* the outstanding probe was a retransmission */
#define TCP_F_LOSS 0x8000	/* recovering from a timeout until recover */

struct tcp_conn {
	struct tw_timer rexmit;	/* retransmission and persist */
	struct tw_timer linger;	/* TIME-WAIT and FIN-WAIT-2 */
	struct tw_timer delack;	/* delayed ACK */
	struct tw_timer idle;	/* keepalive and idle timeout */
	struct tcp_conn *free_next;
	const struct tcp_upcalls *up;	/* the stack's, or tcp_open()'s */
	void *up_ctx;
	void *app;		/* upper layer's state */
	uint32_t index;		/* slot in the shard's table */
	uint32_t gen;		/* bumped on free: stale references see it */
	uint32_t out_epoch;	/* == the stack's: waits in its out list */
	uint16_t flags;
	uint8_t state;
	uint8_t backoff;	/* consecutive timeouts */
	uint8_t dupacks;
	uint8_t acks_owed;	/* full segments received since our last ACK */
	uint8_t ka_probes;	/* keepalive probes unanswered */
	uint8_t snd_wscale;	/* shift of the windows the peer sends */
	uint8_t rcv_wscale;	/* shift of the windows we send */
	uint8_t rack_reord;	/* reordering seen (RFC 8985 RACK.reord) */
	uint8_t reo_wnd_mult;	/* RACK.reo_wnd_mult */
	uint8_t sndq_wait;	/* refused send space by the send queues' budget */
	uint8_t reo_wnd_persist;	/* recoveries left before the multiplier resets */
	uint8_t port;		/* the stack's port it came by and answers by */
	uint8_t tlp_probes;	/* tail loss probes sent in this episode */
	/* Which of the port's addresses is our end (enum net_local), and so
	 * the family: with raddr's 16 bytes it fits where IPv4's two
	 * addresses and padding were, and the slot is no larger. */
	uint8_t local;
	uint8_t peer_mac[6];
	uint16_t lport;		/* host order */
	uint16_t rport;
	uint16_t mss;		/* largest segment we send, options included */
	union net_ip raddr;
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
	/* PRR (RFC 6937) */
	uint32_t prr_delivered;
	uint32_t prr_out;
	uint32_t recover_fs;
	/* RACK (RFC 8985) and TLP */
	uint32_t rack_xmit_ms;	/* of the most recently sent segment delivered */
	uint32_t rack_xmit_no;
	uint32_t rack_end;
	uint32_t rack_rtt;	/* ms, of that segment */
	uint32_t rack_fack;	/* highest end SACKed or acknowledged */
	uint32_t min_rtt;	/* ms; UINT32_MAX before a sample */
	uint32_t dsack_round;	/* snd_max when the multiplier last grew */
	uint32_t tlp_end;	/* snd_max after the outstanding probe */
	uint32_t xmit_no;	/* transmissions so far */
	/* scoreboard tallies, bytes */
	uint32_t sacked_bytes;
	uint32_t lost_bytes;
	uint32_t retrans_bytes;
	uint16_t seg_head;
	uint16_t nsegs;
	uint32_t ts_offset;	/* random per connection (RFC 7323): here, it
				 * fills what would be padding */
	/* congestion control's own state (CUBIC) */
	uint64_t cc_epoch_ms;	/* start of the current epoch, 0 = none */
	uint32_t cc_w_max;	/* bytes */
	uint32_t cc_w_est;	/* bytes, the Reno-friendly estimate */
	uint32_t cc_origin;	/* cwnd at the start of the epoch */
	uint32_t cc_k_ms;	/* time to reach W_max */
	/* receive sequence space */
	uint32_t irs;
	uint32_t rcv_nxt;
	uint32_t rcv_adv;	/* right edge of the last advertised window */
	uint32_t rcv_space;	/* what the upper layer can take now */
	uint32_t last_ack_sent;
	/* timestamps (RFC 7323) */
	uint32_t ts_recent;
	uint64_t ts_recent_ms;
	uint64_t last_rx_ms;	/* for keepalive and idle */
	uint64_t invalid_ack_next_ms;	/* earliest answer to an unacceptable segment */
	/* RFC 6298 estimator, milliseconds */
	uint32_t srtt;
	uint32_t rttvar;
	uint32_t rto;
	uint32_t rtt_seq;
	uint64_t rtt_start;
	struct tcp_sndq sndq;
	struct tcp_ooo ooo;
	struct tcp_seg *segs;	/* TCP_SEG_RING; valid: seg_head, nsegs */
};

/* Congestion control behind a small interface: NewReno and CUBIC. Times
 * are the stack's clock in milliseconds. */
struct tcp_cc_ops {
	const char *name;
	void (*init)(struct tcp_conn *c);
	/* New data acknowledged outside recovery. */
	void (*acked)(struct tcp_conn *c, uint32_t bytes, uint64_t now_ms);
	/* Loss detected (RACK, duplicate ACKs, a TLP that repaired one):
	 * set ssthresh and cwnd. */
	void (*enter_recovery)(struct tcp_conn *c, uint64_t now_ms);
	/* Recovery without SACK ended with a full acknowledgement (with
	 * SACK, PRR's recovery ends at ssthresh, tcp_recovery.c). */
	void (*exit_recovery)(struct tcp_conn *c);
	/* Retransmission timeout. */
	void (*timeout)(struct tcp_conn *c, uint64_t now_ms);
};

extern const struct tcp_cc_ops tcp_cc_newreno;
extern const struct tcp_cc_ops tcp_cc_cubic;


/* Sequence-space comparisons (RFC 9293 3.4), wrap-safe. */
#define SEQ_LT(a, b) ((int32_t)((a) - (b)) < 0)
#define SEQ_LEQ(a, b) ((int32_t)((a) - (b)) <= 0)
#define SEQ_GT(a, b) ((int32_t)((a) - (b)) > 0)
#define SEQ_GEQ(a, b) ((int32_t)((a) - (b)) >= 0)

#define TCP_HDR_OPT_MAX 40
#define TCP_WIN_FIELD_MAX 65535u
#define TCP_DUPTHRESH 3
/* Tail loss probes per episode before the RTO: RFC 8985 sends one; a
 * second, a PTO later, keeps a probe or ACK that is lost too from costing
 * the minimum RTO (hundreds of round trips on a sub-millisecond path). */
#define TCP_TLP_MAX 2
#define TCP_TS_LEN 12		/* NOP NOP kind len val ecr */

static inline uint8_t
tcp_family(const struct tcp_conn *c)
{
	return net_local_is_v6(c->local) ? NET_AF_INET6 : NET_AF_INET;
}

/* The IP header before a segment of the family. */
static inline uint16_t
tcp_ip_hdr_len(uint8_t family)
{
	return family == NET_AF_INET6 ? IPV6_HDR_LEN : IPV4_HDR_MIN;
}

/* The connection's rings (tcp_bufs.c): taken now if it has none (false:
 * no memory for them); given back when the connection goes (they must be
 * empty then: nsegs is cleared), or by tcp_bufs_put_idle(). */
bool tcp_bufs_get(struct net_stack *ns, struct tcp_conn *c);
void tcp_bufs_put(struct net_stack *ns, struct tcp_conn *c);
void tcp_bufs_fini(struct net_stack *ns);

static inline bool
tcp_bufs_take(struct net_stack *ns, struct tcp_conn *c)
{
	return likely(c->segs != NULL) || tcp_bufs_get(ns, c);
}

/* After input: with all three rings empty, they go back, once more than
 * cfg.bufs_keep connections hold some. */
static inline void
tcp_bufs_put_idle(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->segs != NULL && ns->stats->tcp_bufs_used > ns->cfg.bufs_keep &&
			c->sndq.count == 0 && c->nsegs == 0 && c->ooo.n == 0)
		tcp_bufs_put(ns, c);
}

/* table */
int tcp_table_init(struct net_stack *ns);
void tcp_table_fini(struct net_stack *ns);
/* A connection is known by its port, which of the port's addresses is
 * its end, its ports and the remote address: the same peer may reach two
 * ports (or two addresses) of the stack at once. */
struct tcp_conn *tcp_lookup(struct net_stack *ns, uint8_t port, uint8_t local,
		const union net_ip *raddr, uint16_t rport, uint16_t lport);
/* A fresh connection towards the peer at raddr:rport by port, or NULL. */
struct tcp_conn *tcp_conn_new(struct net_stack *ns, uint8_t port,
		uint8_t local, const union net_ip *raddr, uint16_t rport,
		uint16_t lport, const uint8_t peer_mac[6]);
/* The active open of tcp_connect_addr() from the port's address local. */
struct tcp_conn *tcp_connect_from(struct net_stack *ns, uint8_t port,
		uint8_t local, const struct net_addr *raddr, uint16_t rport,
		uint16_t lport, const uint8_t peer_mac[6]);
/* Unhooks and recycles; calls the closed upcall if the app holds it. */
void tcp_conn_free(struct net_stack *ns, struct tcp_conn *c);
/* Frees now, or marks it to be freed once input unwinds. */
void tcp_conn_kill(struct net_stack *ns, struct tcp_conn *c);
/* RST to the peer (where it may hold state), then tcp_conn_kill. */
void tcp_conn_reset(struct net_stack *ns, struct tcp_conn *c);
/* The closed upcall, if the upper layer holds the connection. */
void tcp_release_app(struct net_stack *ns, struct tcp_conn *c);

static inline bool
tcp_is_dead(const struct tcp_conn *c)
{
	return c->flags & TCP_F_DEAD;
}

/* input: returns true if it kept m (queued out of order) */
bool tcp_input(struct net_stack *ns, struct rte_mbuf *m,
		const struct ip_view *ip, const struct tcp_view *t,
		const uint8_t *src_mac);
/* The largest segment we may send to c's peer (options included). */
uint16_t tcp_mss_for(const struct net_stack *ns, const struct tcp_conn *c);
/* An ICMPv6 Packet Too Big (ip: the message): NET_OK when it named a
 * segment of a connection in its window, whose path MTU it lowered. */
enum net_drop tcp_ptb_input(struct net_stack *ns, const struct ip_view *ip);

/* sequence numbers and cookies, over a connection's four-tuple (the
 * addresses of ip's family: a received segment's, dst ours) */
struct tcp_tuple {
	uint8_t family;
	const union net_ip *laddr;
	const union net_ip *raddr;
	uint16_t lport;		/* host order */
	uint16_t rport;
};

/* The four-tuple of a received segment's connection. */
static inline struct tcp_tuple
tcp_tuple_in(const struct ip_view *ip, const struct tcp_view *t)
{
	struct tcp_tuple k = { ip->family, &ip->dst, &ip->src, t->dport,
		t->sport };

	return k;
}

uint32_t tcp_isn(const struct net_stack *ns, const struct tcp_tuple *k);
uint32_t tcp_cookie_make(const struct net_stack *ns, const struct tcp_tuple *k,
		uint32_t irs, uint16_t mss, uint16_t *mss_used);
/* The MSS the cookie encodes, or -1 if it is not ours or expired. */
int tcp_cookie_check(const struct net_stack *ns, const struct tcp_tuple *k,
		uint32_t irs, uint32_t cookie);

/* Scoreboard (per-segment record) and out-of-order queue */
static inline struct tcp_seg *
tcp_seg_at(struct tcp_conn *c, uint32_t i)
{
	return &c->segs[(c->seg_head + i) & (TCP_SEG_RING - 1)];
}

/* Start of entry i: the previous entry's end, or snd_una. */
static inline uint32_t
tcp_seg_start(struct tcp_conn *c, uint32_t i)
{
	return i == 0 ? c->snd_una : tcp_seg_at(c, i - 1)->end;
}

/* Bytes the network holds (RFC 6675 pipe, as Linux's in_flight). */
static inline uint32_t
tcp_pipe(const struct tcp_conn *c)
{
	uint32_t out = c->snd_max - c->snd_una - c->sacked_bytes -
		c->lost_bytes;

	return (int32_t)out < 0 ? c->retrans_bytes : out + c->retrans_bytes;
}

/* Records a (re)transmission of [seq, end) at the stack's clock. */
void tcp_seg_sent(struct net_stack *ns, struct tcp_conn *c, uint32_t seq,
		uint32_t end);
/* Forgets entries the cumulative ACK covers; counts what it delivered
 * to RACK. Call before snd_una moves. */
void tcp_seg_acked(struct net_stack *ns, struct tcp_conn *c, uint32_t ack);
/* RACK (RFC 8985 6.2 steps 2 and 3): a segment was delivered (SACKed or
 * newly acknowledged). */
void tcp_rack_delivered(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_seg *s);
/* The peer's SACK blocks into the scoreboard. Returns the bytes newly
 * SACKed; *dsack is set if one reported a duplicate (RFC 2883). */
uint32_t tcp_sack_update(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_options *o, uint32_t ack, bool *dsack);
/* Marks every entry not SACKed lost (after a timeout). */
void tcp_seg_mark_all_lost(struct tcp_conn *c);
/* Marks lost the entries not SACKed whose payload is over max bytes (a
 * path MTU fell below them); returns the bytes marked. */
uint32_t tcp_seg_mark_lost_above(struct tcp_conn *c, uint32_t max);
/* RACK (RFC 8985 6.2): marks lost what was sent a reordering window
 * before the most recently delivered segment. Returns the bytes newly
 * marked and sets *timeout to when the next may be (0: none). */
uint32_t tcp_rack_detect(struct net_stack *ns, struct tcp_conn *c,
		uint32_t *timeout);
/* RACK.reo_wnd (RFC 8985 6.2.4), ms. */
uint32_t tcp_rack_reo_wnd(const struct tcp_conn *c);
/* Per ACK of a SACK connection, once the scoreboard and snd_una are
 * up to date: RACK, the end of a probe's episode, entering, leaving and
 * pacing (PRR) fast recovery. delivered: bytes newly acknowledged or
 * SACKed; advanced: snd_una moved (the send timer is re-armed). */
void tcp_recovery_ack(struct net_stack *ns, struct tcp_conn *c,
		uint32_t delivered, bool dsack, bool advanced);
/* RACK's reordering timer fired. */
void tcp_rack_timeout(struct net_stack *ns, struct tcp_conn *c);
/* The next entry to retransmit at or after index *i (lost, not yet
 * resent): true with its range. */
bool tcp_seg_next_lost(struct tcp_conn *c, uint32_t *i, uint32_t *start,
		uint32_t *end);
/* The highest entry not SACKed: true with its range. */
bool tcp_seg_last_unsacked(struct tcp_conn *c, uint32_t *start,
		uint32_t *end);
bool tcp_ooo_insert(struct net_stack *ns, struct tcp_conn *c,
		struct rte_mbuf *m, uint32_t seq,
		uint16_t off, uint16_t len);
void tcp_ooo_deliver(struct net_stack *ns, struct tcp_conn *c);
void tcp_ooo_free(struct tcp_conn *c);
int tcp_ooo_blocks(const struct tcp_conn *c, struct tcp_block *out, int max);

/* output */
void tcp_send_syn(struct net_stack *ns, struct tcp_conn *c);
void tcp_send_syn_ack(struct net_stack *ns, struct tcp_conn *c);
/* A SYN-ACK for a SYN cookie: no connection exists. */
void tcp_send_cookie_syn_ack(struct net_stack *ns, const struct ip_view *ip,
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
void tcp_reply_rst(struct net_stack *ns, const struct ip_view *ip,
		const struct tcp_view *t, const uint8_t *src_mac);
/* Drop acknowledged bytes from the send queue. */
void tcp_sndq_drop(struct net_stack *ns, struct tcp_sndq *q, uint32_t bytes);
void tcp_sndq_free(struct net_stack *ns, struct tcp_sndq *q);
uint32_t tcp_sndq_tail_room(struct tcp_sndq *q);
uint32_t tcp_rcv_window(const struct tcp_conn *c);
bool tcp_window_grew(const struct tcp_conn *c);
uint8_t tcp_our_wscale(const struct net_stack *ns);
/* The send loop (tcp_output() of the upper layer). */
void tcp_transmit(struct net_stack *ns, struct tcp_conn *c);
void tcp_arm_rexmit(struct net_stack *ns, struct tcp_conn *c);
/* Connections the send queues' budget held back get their sent upcall
 * once a quarter of the budget is free again. */
void tcp_wake_sndq_waiters(struct net_stack *ns);
/* The connection no longer sends (TIME-WAIT, freed): it waits no more. */
void tcp_sndq_wait_end(struct net_stack *ns, struct tcp_conn *c);
void tcp_arm_send_timer(struct net_stack *ns, struct tcp_conn *c);
/* Whether the send timer may be a tail loss probe now. */
bool tcp_tlp_allowed(const struct tcp_conn *c);
/* Whether a probe now would be new data (the peer's window has room). */
static inline bool
tcp_tlp_new_data(const struct tcp_conn *c)
{
	uint32_t flight = c->snd_max - c->snd_una;

	return c->snd_nxt == c->snd_max && c->sndq.bytes > flight &&
		c->snd_wnd > flight;
}
/* The probe's episode is over (ACKed, or a timeout). */
static inline void
tcp_tlp_end(struct tcp_conn *c)
{
	c->flags &= ~(TCP_F_TLP_SENT | TCP_F_TLP_RXT);
	c->tlp_probes = 0;
}
/* Whether another segment of new data may enter the scoreboard. */
static inline bool
tcp_seg_room(const struct tcp_conn *c)
{
	return c->nsegs < TCP_SEG_RING;
}

static inline struct rte_mbuf **
tcp_sndq_slot(struct tcp_sndq *q, uint16_t i)
{
	return &q->chunk[(q->head + i) % TCP_SNDQ_SLOTS];
}

/* Largest payload of a segment carrying optlen bytes of options. */
static inline uint32_t
tcp_seg_max(const struct tcp_conn *c, uint32_t optlen)
{
	return c->mss > optlen + 8 ? c->mss - optlen : 8;
}

/* Send after the burst (at net_flush); the list, sent. */
void tcp_output_later(struct net_stack *ns, struct tcp_conn *c);
void tcp_output_listed(struct net_stack *ns);

/* timers */
void tcp_timer_fire(struct tw_timer *t, void *ctx);
void tcp_arm_idle(struct net_stack *ns, struct tcp_conn *c);
void tcp_rtt_sample(struct net_stack *ns, struct tcp_conn *c, uint32_t r);

#endif /* EWYK_TCP_IMPL_H */
