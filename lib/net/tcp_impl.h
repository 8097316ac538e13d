/* SPDX-License-Identifier: BSD-3-Clause */
/* Private to lib/net: a connection's state and what the TCP modules share. */
#ifndef EWYK_TCP_IMPL_H
#define EWYK_TCP_IMPL_H

#include <bsd/sys/tree.h>

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
 * A connection's send-side rings (the send queue's chunks, the
 * scoreboard) live in a block of its own, struct tcp_bufs, taken from the
 * shard's pool when the connection first has something to send and given
 * back once both are empty again (tcp_bufs.c); the receive queue's
 * storage comes from other pools, taken while it holds something
 * (tcp_rcvq.c): an idle connection holds only its counts. Where a ring's
 * pointer is NULL its count is zero.
 */

/* Send queue: the byte stream from snd_una on, as mbufs holding data,
 * their pointers in a chain of 1 KiB chunks from the shard's pool (taken
 * as the queue grows, given back as soon as drained). Every mbuf but the
 * last is full (tcp_write() alone fills them), so byte k of the queue is
 * in mbuf (head_off + k) / room: a walk over chunks, then arithmetic.
 * The chain's ends and a cursor (the last chunk a lookup reached, near
 * snd_nxt: sending new data walks no further) live in struct tcp_bufs.
 * Segments are built from refcounted clones of the mbufs, so a
 * retransmission copies nothing. */
#define TCP_SNDQ_CHUNK_MBUFS 127

struct tcp_sndq_chunk {
	struct tcp_sndq_chunk *next;
	struct rte_mbuf *m[TCP_SNDQ_CHUNK_MBUFS];
};

struct tcp_sndq_chain {
	struct tcp_sndq_chunk *head;	/* NULL while empty */
	struct tcp_sndq_chunk *tail;
	struct tcp_sndq_chunk *cur;	/* NULL: none */
	uint32_t cur_no;	/* its place from head */
};

struct tcp_sndq {
	struct tcp_sndq_chain *ch;	/* in struct tcp_bufs, or NULL */
	uint16_t first;		/* the head chunk's first mbuf */
	uint32_t count;		/* mbufs */
	uint32_t head_off;	/* bytes of the first mbuf already acknowledged */
	uint32_t bytes;		/* bytes queued from snd_una */
};

/* The receive queue (tcp_rcvq.c): received segments the upper layer has
 * not taken, kept as the mbufs they came in, without overlap. The first
 * `held` are in order, [rcv_read, rcv_nxt) without gaps (acknowledged,
 * waiting for the upper layer's room); the others are out of order, after
 * a hole (SACKed), in runs of consecutive segments. Its storage (a block
 * with the queue's ends, chains of chunks of segments, the runs: private
 * to tcp_rcvq.h) comes from the shard's pools while the queue holds
 * something: most connections never hold anything. */
struct tcp_rcvq_blk;

struct tcp_rcvq {
	struct tcp_rcvq_blk *blk;	/* NULL while empty */
	uint32_t n;		/* segments queued */
	uint32_t held;		/* of them, in order */
	uint32_t last_seq;	/* most recent out-of-order arrival: first SACK block */
};

/* The scoreboard (RFC 6675) and RACK's transmit record (RFC 8985): one
 * entry per segment sent and not yet cumulatively acknowledged, covering
 * [snd_una, snd_max) without gaps, each with its bounds, when it was last
 * (re)sent and in which order, and what is known of it. Running tallies
 * of SACKed, lost and retransmitted bytes give the pipe without a walk.
 *
 * The entries are nodes of the shard's pool (tcp_config.sb_nodes at
 * most, made as needed), kept two ways: a red-black tree by sequence
 * (BSD's <sys/tree.h>), so that a SACK block or an ACK finds its entry in
 * log(n) steps whatever the flight, and a list in send order of those
 * RACK still times (neither SACKed nor marked lost and waiting to be
 * resent), so that RACK looks only at the oldest. tcp_config.sb_segs
 * bounds a connection's entries: new data waits when it is reached or the
 * pool is out. Only tcp_sack.c changes them: everyone else walks them
 * through tcp_sb_*(). */
#define TCP_SEG_SACKED 0x01	/* the peer holds it (SACK) */
#define TCP_SEG_LOST 0x02	/* marked lost: to be retransmitted */
#define TCP_SEG_RETRANS 0x04	/* retransmitted, not since found lost */
#define TCP_SEG_EVER_RETRANS 0x08	/* sent more than once (RTT ambiguity) */
#define TCP_SEG_APP_LIMITED 0x10	/* sent while the sender was app-limited */

struct tcp_seg {
	RB_ENTRY(tcp_seg) by_seq;
	struct tcp_seg *sent_prev;	/* send order, while RACK times it */
	struct tcp_seg *sent_next;
	uint32_t start;
	uint32_t end;
	uint32_t xmit_us;	/* last transmission, low bits of the clock */
	uint32_t xmit_no;	/* per-connection transmission order */
	/* The delivery rate's state when it was last sent (tcp_rate.c):
	 * bytes delivered then and when, and the start of that send
	 * phase. */
	uint32_t tx_delivered;
	uint32_t tx_delivered_us;
	uint32_t tx_first_us;
	uint8_t flags;
	bool timed;		/* in the send-order list */
	uint16_t unit;		/* its segments' payload when new data went
				 * as a TSO frame, else 0 (sack_edge()) */
};

struct tcp_block {
	uint32_t start;
	uint32_t end;
};

RB_HEAD(tcp_sb_tree, tcp_seg);
RB_PROTOTYPE(tcp_sb_tree, tcp_seg, by_seq, tcp_seg_cmp)

#define TCP_SB_SEGS 8192	/* tcp_config.sb_segs's default */

struct tcp_sb {
	struct tcp_sb_tree tree;
	struct tcp_seg *first;	/* lowest sequence, NULL: empty */
	struct tcp_seg *last;
	struct tcp_seg *sent_first;	/* oldest timed */
	struct tcp_seg *sent_last;
	/* No entry below it is marked lost and waits to be resent (NULL:
	 * look from the first): the resend walk starts there. */
	struct tcp_seg *lost_hint;
	/* The last ACK's SACK blocks, on entry boundaries, all SACKed then
	 * (Linux's recv_sack_cache): the next ACK's walk skips them. */
	struct tcp_block sack_cache[TCP_MAX_SACK];
	uint8_t n_sack_cache;
};

/* BBR v1's model of the path, as Linux's tcp_bbr.c keeps it, in bytes:
 * the windowed max of the delivery rate over 10 round trips (three
 * samples: Linux's minmax), the min RTT of 10 s, the round trips counted
 * by delivered data, the mode and its gains, the pipe-full test, PROBE_RTT
 * and the ACK aggregation estimate. */
struct tcp_bbr_sample {
	uint32_t t;		/* round trip count */
	uint64_t v;		/* bytes per second */
};

struct tcp_bbr {
	struct tcp_bbr_sample bw[3];
	uint64_t full_bw;	/* bw at the last growth of a quarter */
	uint64_t min_rtt_stamp_ms;
	uint64_t probe_rtt_done_ms;	/* 0: not yet timed */
	uint32_t cycle_us;	/* start of the gain cycle's phase */
	uint32_t ack_epoch_us;
	uint32_t min_rtt_us;	/* UINT32_MAX: none */
	uint32_t rtt_cnt;
	uint32_t next_rtt_delivered;
	uint32_t prior_cwnd;
	uint32_t ack_epoch_acked;
	uint32_t extra_acked[2];
	uint16_t pacing_gain;	/* in 1/256 */
	uint16_t cwnd_gain;
	uint8_t mode;		/* enum tcp_bbr_mode */
	uint8_t prev_ca_state;	/* enum tcp_ca_state */
	uint8_t cycle_idx;
	uint8_t full_bw_cnt;
	uint8_t extra_acked_win_rtts;
	uint8_t extra_acked_win_idx;
	bool round_start;
	bool full_bw_reached;
	bool packet_conservation;
	bool idle_restart;
	bool probe_rtt_round_done;
	bool has_seen_rtt;
};

struct tcp_bufs {
	struct tcp_sndq_chain sndq;
	struct tcp_sb sb;
};

#define TCP_F_FIN_QUEUED 0x0001	/* close requested: FIN follows the data */
#define TCP_F_ACK_NOW 0x0002	/* an ACK is owed now */
#define TCP_F_IN_INPUT 0x0004	/* inside segment processing: defer frees */
#define TCP_F_RTT_TIMING 0x0008	/* our SYN is being timed (Karn) */
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
#define TCP_F_UNDO 0x10000	/* undo_marker is set: a reduction may be undone */
#define TCP_F_FRTO 0x20000	/* F-RTO (RFC 5682) watches this timeout */
#define TCP_F_FRTO_NEW 0x40000	/* F-RTO sends new data, not retransmissions */
#define TCP_F_FIN_OWED 0x80000	/* the peer's FIN, told once held data is taken */
#define TCP_F_DELIVER 0x100000	/* room was pushed: offer held data at the flush */
#define TCP_F_PACING 0x200000	/* congestion control paces: pacing_rate holds */
#define TCP_F_LISTED 0x400000	/* waits in the stack's out list */

/* cwnd's bound: the send loop reads windows as int32, and a window that
 * grows while the application, not cwnd, limits the flight (a LAN's
 * slow start, which never meets a loss) would pass 2^31 after some 2 GB. */
#define TCP_CWND_MAX (1u << 30)

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
	uint32_t flags;
	uint8_t state;
	uint8_t backoff;	/* consecutive timeouts */
	uint8_t dupacks;
	uint8_t acks_owed;	/* full segments received since our last ACK */
	uint8_t quick_acks;	/* data segments still acknowledged at once */
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
	uint32_t rack_xmit_us;	/* of the most recently sent segment delivered */
	uint32_t rack_xmit_no;
	uint32_t rack_end;
	uint32_t rack_rtt_us;	/* of that segment */
	uint32_t rack_fack;	/* highest end SACKed or acknowledged */
	uint32_t min_rtt_us;	/* UINT32_MAX before a sample */
	uint32_t dsack_round;	/* snd_max when the multiplier last grew */
	uint32_t tlp_end;	/* snd_max after the outstanding probe */
	uint32_t xmit_no;	/* transmissions so far */
	/* scoreboard tallies, bytes */
	uint32_t sacked_bytes;
	uint32_t lost_bytes;
	uint32_t retrans_bytes;
	uint32_t nsegs;		/* the scoreboard's entries */
	uint32_t ts_offset;	/* random per connection (RFC 7323): here, it
				 * fills what would be padding */
	/* the delivery rate (tcp_rate.c, Linux's tcp_rate.c): bytes
	 * delivered (acknowledged or SACKed), when the last were, the send
	 * time of the most recently delivered segment, and the delivered
	 * mark past which samples are no longer app-limited (0: none) */
	uint32_t delivered;
	uint32_t delivered_us;
	uint32_t first_tx_us;
	uint32_t app_limited;
	/* pacing (tcp_pace.c): bytes per second, the earliest time the next
	 * segment may leave, the slot in the shard's pacing heap (+1) */
	uint64_t pacing_rate;
	uint64_t pace_next_us;
	uint32_t pace_slot;
	/* the send buffer, grown by tcp_sndbuf.c (0: tcp_config.snd_buf) */
	uint32_t sndbuf;
	/* congestion control's own state (CUBIC) */
	uint64_t cc_epoch_ms;	/* start of the current epoch, 0 = none */
	uint32_t cc_w_max;	/* bytes */
	uint32_t cc_w_max_prior;	/* before the last loss: for an undo */
	uint32_t cc_w_est;	/* bytes, the Reno-friendly estimate */
	uint32_t cc_origin;	/* cwnd at the start of the epoch */
	uint32_t cc_k_ms;	/* time to reach W_max */
	/* HyStart++ (RFC 9406) in the initial slow start */
	uint8_t hs_state;	/* enum tcp_hystart */
	uint8_t hs_css_rounds;	/* rounds spent in CSS */
	uint8_t hs_samples;	/* RTT samples this round */
	uint32_t hs_round_end;	/* snd_max when the round began */
	uint32_t hs_last_min_us;	/* the last round's least RTT */
	uint32_t hs_cur_min_us;		/* this round's */
	uint32_t hs_css_base_us;	/* the round's that began CSS */
	/* Undo of a window reduction proven spurious (RFC 3708, RFC 3522,
	 * RFC 5682), as Linux: what the window was, where the episode
	 * began, how many of its retransmissions no D-SACK has shown
	 * needless yet (-1: none sent), the TSval of its first. */
	uint32_t prior_cwnd;
	uint32_t prior_ssthresh;
	uint32_t undo_marker;
	int16_t undo_retrans;
	uint32_t retrans_stamp;
	struct tcp_bbr bbr;	/* BBR's model (tcp_bbr.c) */
	/* receive sequence space */
	uint32_t irs;
	uint32_t rcv_nxt;
	uint32_t rcv_adv;	/* right edge of the last advertised window */
	uint32_t rcv_space;	/* what the upper layer can take now */
	uint32_t rcv_read;	/* what the upper layer took: held data starts */
	uint32_t last_ack_sent;
	/* the receive buffer (tcp_rcvbuf.c): its size, what the upper layer
	 * took in the round trip measured from rcvq_seq at rcvq_time_us, and
	 * the most it took in one; the receiver's RTT, measured by the time
	 * a window takes to arrive (from rcv_rtt_seq at rcv_rtt_time_us) */
	uint32_t rcvbuf;
	uint32_t rcvq_space;
	uint32_t rcvq_seq;
	uint32_t rcv_rtt_us;
	uint32_t rcv_rtt_seq;
	uint64_t rcvq_time_us;
	uint64_t rcv_rtt_time_us;
	uint64_t rcvbuf_used_ms;	/* data came or was taken: not idle */
	/* the starts of a time of sending held back by the peer's window,
	 * and of a window advertised closed (0: not in one) */
	uint64_t rwnd_limited_since_us;
	uint64_t zero_window_since_us;
	/* timestamps (RFC 7323) */
	uint32_t ts_recent;
	uint64_t ts_recent_ms;
	uint64_t last_rx_ms;	/* for keepalive and idle */
	uint64_t invalid_ack_next_ms;	/* earliest answer to an unacceptable segment */
	/* RFC 6298 estimator, microseconds */
	uint32_t srtt_us;	/* 0: no sample yet */
	uint32_t rttvar_us;
	uint32_t rto_us;
	uint32_t rtt_seq;	/* the handshake's, timed (Karn) */
	uint64_t rtt_start_us;
	struct tcp_sndq sndq;
	struct tcp_rcvq rcvq;
	struct tcp_sb *sb;	/* in struct tcp_bufs, or NULL */
};

enum tcp_hystart {
	TCP_HS_OFF,		/* not the initial slow start, or it ended */
	TCP_HS_SS,		/* slow start, watching the rounds' RTTs */
	TCP_HS_CSS,		/* Conservative Slow Start */
};

/* What one ACK did, gathered as it acknowledges and SACKs segments
 * (Linux's tcp_clean_rtx_queue() and tcp_sacktag_one()): the RTT of the
 * oldest segment it newly acknowledges, of the oldest it newly SACKs
 * (both never sent twice), of the newest of them (UINT32_MAX: no
 * sample), whether it acknowledged a resent segment (Karn's rule then
 * forbids the first) or delivered one never resent and sent before the
 * episode began (F-RTO's test, RFC 5682 3.1); then the bytes it
 * acknowledged, SACKed, and whether it carried a D-SACK. */
struct tcp_ack_info {
	const struct tcp_view *t;	/* the segment */
	uint64_t now_us;
	uint32_t seq_rtt_us;
	uint32_t sack_rtt_us;
	uint32_t ca_rtt_us;
	bool retrans_acked;
	bool orig_delivered;
	bool dsack;
	bool dup;		/* a duplicate ACK (RFC 5681) */
	uint32_t acked;		/* snd_una moved by this much */
	uint32_t sacked;	/* newly SACKed bytes */
	/* for controllers that model the path (tcp_rate.c): bytes newly
	 * delivered, newly marked lost, the pipe before the ACK; the rate
	 * sample from the most recently sent segment delivered (its
	 * transmission order, the delivered count and time when it was
	 * sent, its send phase), then the sample itself: bytes delivered
	 * over interval_us (valid only when rs_valid) */
	uint32_t delivered;
	uint32_t losses;
	uint32_t prior_in_flight;
	bool rs_has_prior;
	bool rs_app_limited;
	bool rs_valid;
	uint32_t rs_xmit_no;
	uint32_t rs_prior_delivered;
	uint32_t rs_prior_us;
	uint32_t rs_send_us;
	uint32_t rs_delivered;
	uint32_t rs_interval_us;
};

static inline void
tcp_ack_info_init(struct tcp_ack_info *ai, const struct tcp_view *t,
		uint64_t now_us)
{
	ai->t = t;
	ai->now_us = now_us;
	ai->seq_rtt_us = UINT32_MAX;
	ai->sack_rtt_us = UINT32_MAX;
	ai->ca_rtt_us = UINT32_MAX;
	ai->retrans_acked = false;
	ai->orig_delivered = false;
	ai->dsack = false;
	ai->dup = false;
	ai->acked = 0;
	ai->sacked = 0;
	ai->delivered = 0;
	ai->losses = 0;
	ai->prior_in_flight = 0;
	ai->rs_has_prior = false;
	ai->rs_app_limited = false;
	ai->rs_valid = false;
}

enum tcp_bbr_mode {
	TCP_BBR_STARTUP,
	TCP_BBR_DRAIN,
	TCP_BBR_PROBE_BW,
	TCP_BBR_PROBE_RTT,
};

/* Linux's congestion states, as BBR tells them apart. */
enum tcp_ca_state {
	TCP_CA_OPEN,
	TCP_CA_RECOVERY,
	TCP_CA_LOSS,
};

static inline enum tcp_ca_state
tcp_ca_state(const struct tcp_conn *c)
{
	return (c->flags & TCP_F_LOSS) ? TCP_CA_LOSS :
		(c->flags & TCP_F_RECOVERY) ? TCP_CA_RECOVERY : TCP_CA_OPEN;
}

/* Congestion control behind a small interface: NewReno, CUBIC, BBR. */
struct tcp_cc_ops {
	const char *name;
	void (*init)(struct tcp_conn *c);
	/* New data acknowledged outside recovery (not for cong_control's). */
	void (*acked)(struct tcp_conn *c, const struct tcp_ack_info *ai);
	/* Loss detected (RACK, duplicate ACKs, a TLP that repaired one):
	 * set ssthresh and cwnd. */
	void (*enter_recovery)(struct tcp_conn *c);
	/* Recovery without SACK ended with a full acknowledgement (with
	 * SACK, PRR's recovery ends at ssthresh, tcp_recovery.c). */
	void (*exit_recovery)(struct tcp_conn *c);
	/* Retransmission timeout. */
	void (*timeout)(struct tcp_conn *c);
	/* The reduction was spurious (tcp_undo.c restored ssthresh): put
	 * back the controller's own state; returns cwnd (Linux's
	 * undo_cwnd). */
	uint32_t (*undo)(struct tcp_conn *c);
	/* A controller that models the path (BBR) sets cwnd and the pacing
	 * rate itself, on every ACK once losses are marked, from the
	 * delivery rate sample (Linux's cong_control): then neither PRR
	 * nor acked() sets cwnd. NULL for the others. */
	void (*cong_control)(struct net_stack *ns, struct tcp_conn *c,
			const struct tcp_ack_info *ai);
	/* Sending starts with nothing in flight (CA_EVENT_TX_START). */
	void (*tx_start)(struct net_stack *ns, struct tcp_conn *c);
};

extern const struct tcp_cc_ops tcp_cc_newreno;
extern const struct tcp_cc_ops tcp_cc_cubic;
extern const struct tcp_cc_ops tcp_cc_bbr;


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
/* Data segments acknowledged at once on a new connection, and again after
 * the peer was silent longer than an RTO (Linux's quickack mode,
 * TCP_MAX_QUICKACKS): a peer whose Nagle holds its second small write
 * for our ACK (a TLS Finished, then the request) waits no delack_ms. */
#define TCP_QUICK_ACKS 16
/* Added to the probe timeout of a flight of more than one segment:
 * Linux's TCP_TIMEOUT_MIN (two jiffies), against the timers' granularity
 * and the peer's scheduling. */
#define TCP_PTO_MIN_EXTRA_US 2000

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

/* The scoreboard's walk: entries in sequence order, NULL past either
 * end. An entry stays where it is while the walk splits it: next() then
 * gives its second half. */
static inline int
tcp_seg_cmp(const struct tcp_seg *a, const struct tcp_seg *b)
{
	return SEQ_LT(a->start, b->start) ? -1 : a->start != b->start;
}

static inline uint32_t
tcp_sb_count(const struct tcp_conn *c)
{
	return c->nsegs;
}

static inline struct tcp_seg *
tcp_sb_first(const struct tcp_conn *c)
{
	return c->sb == NULL ? NULL : c->sb->first;
}

static inline struct tcp_seg *
tcp_sb_last(const struct tcp_conn *c)
{
	return c->sb == NULL ? NULL : c->sb->last;
}

static inline struct tcp_seg *
tcp_sb_next(const struct tcp_conn *c, struct tcp_seg *s)
{
	(void)c;
	return RB_NEXT(tcp_sb_tree, &c->sb->tree, s);
}

static inline struct tcp_seg *
tcp_sb_prev(const struct tcp_conn *c, struct tcp_seg *s)
{
	(void)c;
	return RB_PREV(tcp_sb_tree, &c->sb->tree, s);
}

static inline uint32_t
tcp_sb_start(const struct tcp_conn *c, const struct tcp_seg *s)
{
	(void)c;
	return s->start;
}

/* The timed entries, oldest transmission first (RACK's walk). */
static inline struct tcp_seg *
tcp_sb_sent_first(const struct tcp_conn *c)
{
	return c->sb == NULL ? NULL : c->sb->sent_first;
}

/* The first entry ending after seq, NULL if none (tcp_sack.c). */
struct tcp_seg *tcp_sb_find(const struct tcp_conn *c, uint32_t seq);

/* The connection's rings (tcp_bufs.c): taken now if it has none (false:
 * no memory for them); given back when the connection goes (they must be
 * empty then: the scoreboard is cleared), or by tcp_bufs_put_idle(). */
void tcp_bufs_init(struct net_stack *ns);
bool tcp_bufs_get(struct net_stack *ns, struct tcp_conn *c);
void tcp_bufs_put(struct net_stack *ns, struct tcp_conn *c);
void tcp_bufs_fini(struct net_stack *ns);
/* The pool of tcp_write_ref()'s blocks (tcp_ext.c). */
void tcp_ext_init(struct net_stack *ns);
void tcp_ext_fini(struct net_stack *ns);

static inline bool
tcp_bufs_take(struct net_stack *ns, struct tcp_conn *c)
{
	return likely(c->sb != NULL) || tcp_bufs_get(ns, c);
}

/* After input: with both rings empty, they go back, once more than
 * cfg.bufs_keep connections hold some. */
static inline void
tcp_bufs_put_idle(struct net_stack *ns, struct tcp_conn *c)
{
	if (c->sb != NULL && ns->stats->tcp_bufs_used > ns->cfg.bufs_keep &&
			c->sndq.count == 0 && tcp_sb_count(c) == 0)
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

/* Offers held data to the upper layer outside input (it pushed room);
 * false: the connection is gone. */
bool tcp_deliver_held(struct net_stack *ns, struct tcp_conn *c);
/* input: returns true if it kept m (in the receive queue) */
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
/* Bytes the network holds (RFC 6675 pipe, as Linux's in_flight). */
static inline uint32_t
tcp_pipe(const struct tcp_conn *c)
{
	uint32_t out = c->snd_max - c->snd_una - c->sacked_bytes -
		c->lost_bytes;

	return (int32_t)out < 0 ? c->retrans_bytes : out + c->retrans_bytes;
}

/* The delivery rate (tcp_rate.c) */
/* A segment (entry s) goes out. */
void tcp_rate_sent(struct net_stack *ns, struct tcp_conn *c,
		struct tcp_seg *s, bool nothing_out);
/* Entry s, len bytes, was newly delivered (acknowledged or SACKed). */
void tcp_rate_delivered(struct tcp_conn *c, const struct tcp_seg *s,
		uint32_t len, struct tcp_ack_info *ai);
/* The ACK's sample, once its segments were counted. */
void tcp_rate_gen(struct net_stack *ns, struct tcp_conn *c,
		struct tcp_ack_info *ai);
/* Nothing more to send, though cwnd allows: samples from here are
 * app-limited until what is out now is delivered. */
void tcp_rate_check_app_limited(struct tcp_conn *c);

/* Pacing (tcp_pace.c) */
int tcp_pace_init(struct net_stack *ns);
void tcp_pace_fini(struct net_stack *ns);
/* Whether a segment may leave now; if not, the connection is sent to at
 * its time (pacing_waits). */
bool tcp_pace_allows(struct net_stack *ns, struct tcp_conn *c);
/* Segments a burst may have: Linux's TSO autosizing, about a millisecond
 * of data at the pacing rate, 2 to 44. */
uint32_t tcp_pace_burst_segs(const struct tcp_conn *c);
/* len bytes left: the next may follow len / pacing_rate later. */
void tcp_pace_sent(struct net_stack *ns, struct tcp_conn *c, uint32_t len);
/* Forgets a connection's turn (it is freed). */
void tcp_pace_cancel(struct net_stack *ns, struct tcp_conn *c);
/* Sends for the connections whose time came (net_timers_us). */
void tcp_pace_run(struct net_stack *ns);
/* Pacing for NewReno and CUBIC when tcp_config.pacing says so (Linux's
 * tcp_update_pacing_rate()): twice cwnd per SRTT in slow start, 1.2
 * times after. */
void tcp_pace_update(struct net_stack *ns, struct tcp_conn *c);

/* Records a (re)transmission of [seq, end) at the stack's clock; unit:
 * the payload of each of its segments when new data left as one TSO
 * frame, else 0. */
void tcp_seg_sent(struct net_stack *ns, struct tcp_conn *c, uint32_t seq,
		uint32_t end, uint16_t unit);
/* Forgets entries the cumulative ACK covers; counts what it delivered
 * to RACK. Call before snd_una moves. */
void tcp_seg_acked(struct net_stack *ns, struct tcp_conn *c, uint32_t ack,
		struct tcp_ack_info *ai);
/* RACK (RFC 8985 6.2 steps 2 and 3): s was delivered (SACKed or newly
 * acknowledged) up to end, all of it or its first part. */
void tcp_rack_delivered(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_seg *s, uint32_t end, struct tcp_ack_info *ai,
		bool by_sack);
/* The peer's SACK blocks into the scoreboard. Returns the bytes newly
 * SACKed; *dsack is set if one reported a duplicate (RFC 2883). */
uint32_t tcp_sack_update(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_options *o, uint32_t ack, bool *dsack,
		struct tcp_ack_info *ai);
/* Marks an entry lost (to be resent); returns its bytes if it was not
 * so already (or was resent since). */
uint32_t tcp_seg_mark_lost(struct tcp_conn *c, struct tcp_seg *s);
/* Marks every entry not SACKed lost (after a timeout). */
void tcp_seg_mark_all_lost(struct tcp_conn *c);
/* Clears every lost mark (a timeout found spurious). */
void tcp_seg_unmark_lost(struct tcp_conn *c);
/* Marks lost the entries not SACKed whose payload is over max bytes (a
 * path MTU fell below them); returns the bytes marked. */
uint32_t tcp_seg_mark_lost_above(struct tcp_conn *c, uint32_t max);
/* RACK (RFC 8985 6.2): marks lost what was sent a reordering window
 * before the most recently delivered segment. Returns the bytes newly
 * marked and sets *timeout to when the next may be (0: none). */
uint32_t tcp_rack_detect(struct net_stack *ns, struct tcp_conn *c,
		uint32_t *timeout);
/* RACK.reo_wnd (RFC 8985 6.2.4), microseconds. */
uint32_t tcp_rack_reo_wnd(const struct tcp_conn *c);
/* Per ACK of a SACK connection, once the scoreboard and snd_una are
 * up to date: undo, RACK, the end of a probe's episode, entering,
 * leaving and pacing (PRR) fast recovery; the send timer re-armed when
 * snd_una moved. Returns the bytes newly marked lost. */
uint32_t tcp_recovery_ack(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_ack_info *ai);

/* Undo (tcp_undo.c): RFC 3708's D-SACK, RFC 3522's timestamps (Eifel)
 * and RFC 5682's F-RTO, as Linux undoes. */
/* A reduction begins (fast recovery, a timeout): remember the window. */
void tcp_undo_init(struct tcp_conn *c);
/* A segment was retransmitted; tsval is its TSval (timestamps). */
void tcp_undo_retransmitted(struct tcp_conn *c, uint32_t tsval);
/* A D-SACK block [start, end) arrived. */
void tcp_undo_dsack(struct tcp_conn *c, uint32_t start, uint32_t end);
/* Per ACK, before loss detection: undoes what this ACK proves spurious
 * (and runs F-RTO after a timeout). Returns true when it undid. */
bool tcp_undo_ack(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_ack_info *ai);
/* A timeout: F-RTO will watch it when allowed. */
void tcp_frto_start(struct tcp_conn *c, bool new_episode);
/* RACK's reordering timer fired. */
void tcp_rack_timeout(struct net_stack *ns, struct tcp_conn *c);
/* The next entry to retransmit after *cur (from the first if NULL):
 * lost, not yet resent. true with its range, *cur then at it. */
bool tcp_seg_next_lost(struct tcp_conn *c, struct tcp_seg **cur,
		uint32_t *start, uint32_t *end);
/* The highest entry not SACKed: true with its range. */
bool tcp_seg_last_unsacked(struct tcp_conn *c, uint32_t *start,
		uint32_t *end);
/* Checks the scoreboard's invariants: entries covering [snd_una, snd_max)
 * in sequence order without gaps once the SYN is acknowledged, and the
 * tallies equal to the sums over the entries. NULL if they hold, else
 * what broke. A walk: for tests and debugging, not the data path. */
const char *tcp_sb_check(const struct tcp_conn *c);

/* The receive queue (tcp_rcvq.c) */
void tcp_rcvq_init(struct net_stack *ns);
void tcp_rcvq_fini(struct net_stack *ns);
/* Keeps [seq, seq + len) of m (payload at off), seq at or after rcv_nxt:
 * in order, or after a hole. Past the shard's budget of mbufs or the
 * connection's share, out-of-order data above it is pruned to make room.
 * false: not kept (no room, a duplicate, or no memory for the queue), the
 * caller frees m. */
bool tcp_rcvq_insert(struct net_stack *ns, struct tcp_conn *c,
		struct rte_mbuf *m, uint32_t seq, uint16_t off, uint16_t len);
/* rcv_nxt past the out-of-order entries that now follow it, which are
 * then held. */
void tcp_rcvq_advance(struct net_stack *ns, struct tcp_conn *c);
/* Offers held data to the upper layer while it takes some; the peer's
 * FIN is told once none is left. */
void tcp_rcvq_deliver(struct net_stack *ns, struct tcp_conn *c);
void tcp_rcvq_free(struct net_stack *ns, struct tcp_conn *c);
/* SACK blocks of the out-of-order entries, the most recent arrival's
 * first. */
int tcp_rcvq_blocks(const struct tcp_conn *c, struct tcp_block *out, int max);
/* Checks the receive queue's invariants: held data [rcv_read, rcv_nxt)
 * without gaps, runs above it in order with gaps between them, each
 * run's segments its range, the counts, the skip list's levels. NULL if
 * they hold, else what broke. A walk: for tests and debugging. */
const char *tcp_rcvq_check(const struct tcp_conn *c);
/* Whether data after a hole is queued (SACK blocks to send). */
static inline bool
tcp_rcvq_has_holes(const struct tcp_conn *c)
{
	return c->rcvq.n > c->rcvq.held;
}
/* Bytes held in order for the upper layer. */
static inline uint32_t
tcp_rcvq_held_bytes(const struct tcp_conn *c)
{
	return c->rcv_nxt - c->rcv_read;
}

/* The send buffer (tcp_sndbuf.c): its size now; grown after an ACK. */
static inline uint32_t
tcp_sndbuf(const struct net_stack *ns, const struct tcp_conn *c)
{
	return RTE_MAX(c->sndbuf, ns->cfg.snd_buf);
}
void tcp_sndbuf_expand(struct net_stack *ns, struct tcp_conn *c);

/* The receive buffer (tcp_rcvbuf.c) */
void tcp_rcvbuf_init(struct net_stack *ns, struct tcp_conn *c);
/* Gives the buffer back (the connection receives no more). */
void tcp_rcvbuf_release(struct net_stack *ns, struct tcp_conn *c);
/* In-order data arrived: the receiver's RTT. */
void tcp_rcvbuf_data_in(struct net_stack *ns, struct tcp_conn *c);
/* The upper layer took data: once a round trip, the buffer follows twice
 * what it took in one. */
void tcp_rcvbuf_taken(struct net_stack *ns, struct tcp_conn *c);
/* The idle timer: a grown buffer idle for TCP_RCVBUF_IDLE_MS shrinks. */
#define TCP_RCVBUF_IDLE_MS 1000
bool tcp_rcvbuf_idle_due(const struct net_stack *ns, const struct tcp_conn *c,
		uint64_t *deadline);
void tcp_rcvbuf_idle(struct net_stack *ns, struct tcp_conn *c);
/* Times of limits (telemetry): sending held by the peer's window, our
 * window closed. */
void tcp_rwnd_limited(struct net_stack *ns, struct tcp_conn *c, bool limited);
void tcp_zero_window(struct net_stack *ns, struct tcp_conn *c, bool closed);

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
/* Appends m (empty, whole buffer for data) to the queue; false if no
 * chunk could be had for it. */
bool tcp_sndq_push(struct net_stack *ns, struct tcp_sndq *q,
		struct rte_mbuf *m);
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
/* Whether another segment of new data may enter the scoreboard: below
 * the connection's bound, an entry ready in the shard's pool
 * (tcp_sack.c). */
bool tcp_seg_room(struct net_stack *ns, const struct tcp_conn *c);
/* Gives every entry back (tcp_bufs_put()). */
void tcp_sb_clear(struct net_stack *ns, struct tcp_conn *c);

/* The last mbuf of a queue that holds some. */
static inline struct rte_mbuf *
tcp_sndq_tail(const struct tcp_sndq *q)
{
	return q->ch->tail->m[(q->first + q->count - 1) % TCP_SNDQ_CHUNK_MBUFS];
}

/* Largest payload of a segment carrying optlen bytes of options. */
static inline uint32_t
tcp_seg_max(const struct tcp_conn *c, uint32_t optlen)
{
	return c->mss > optlen + 8 ? c->mss - optlen : 8;
}

/* A full segment's payload: timestamps its only option. The unit of TSO
 * frames and of SACK edges. */
static inline uint32_t
tcp_seg_full(const struct tcp_conn *c)
{
	return tcp_seg_max(c, (c->flags & TCP_F_OPT_TS) ? TCP_TS_LEN : 0);
}

/* Send after the burst (at net_flush); the list, sent. */
void tcp_output_later(struct net_stack *ns, struct tcp_conn *c);
void tcp_output_listed(struct net_stack *ns);

/* timers */
void tcp_timer_fire(struct tw_timer *t, void *ctx);
void tcp_arm_idle(struct net_stack *ns, struct tcp_conn *c);
/* An RTT sample, microseconds, into SRTT, RTTVAR and the RTO. */
void tcp_rtt_sample(struct net_stack *ns, struct tcp_conn *c, uint32_t r_us);
/* The wheel's tick (a millisecond) at or after delay_us from now: a
 * deadline of the microsecond clock on the millisecond wheel, never
 * early. */
static inline uint64_t
tcp_deadline_ms(const struct net_stack *ns, uint64_t delay_us)
{
	return (ns->now_us + delay_us + 999) / 1000;
}

#endif /* EWYK_TCP_IMPL_H */
