/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BBR v1 as Linux ships it (net/ipv4/tcp_bbr.c), in bytes rather than
 * packets. BBR models the path by its bottleneck bandwidth (the windowed
 * max of the delivery rate, tcp_rate.c, over 10 round trips) and its
 * round-trip propagation time (the min RTT of 10 s), and sends at a pacing
 * rate of gain x bandwidth with cwnd = cwnd_gain x BDP: STARTUP at 2/ln 2
 * until the bandwidth grows by less than a quarter in three rounds, DRAIN
 * at its inverse until the pipe holds one BDP, PROBE_BW cycling the gains
 * 5/4, 3/4 and six rounds of 1, PROBE_RTT at 4 segments for 200 ms and a
 * round when the min RTT is 10 s old. A loss does not lower the model:
 * only packet conservation in the first round of a recovery, cwnd back to
 * where it was after it. Also as Linux's: the ACK aggregation allowance.
 * Not Linux's long-term bandwidth sampling for token-bucket policers.
 */
#include <string.h>

#include <rte_random.h>

#include "tcp_impl.h"

#define BBR_SCALE 8
#define BBR_UNIT (1 << BBR_SCALE)
#define BBR_HIGH_GAIN (BBR_UNIT * 2885 / 1000 + 1)	/* 2/ln(2) */
#define BBR_DRAIN_GAIN (BBR_UNIT * 1000 / 2885)
#define BBR_CWND_GAIN (BBR_UNIT * 2)
#define BBR_CYCLE_LEN 8
#define BBR_CYCLE_RAND 7	/* a random phase to start, not the 3/4 */
#define BBR_BW_RTTS (BBR_CYCLE_LEN + 2)
#define BBR_MIN_RTT_WIN_MS 10000
#define BBR_PROBE_RTT_MS 200
#define BBR_CWND_MIN_SEGS 4
#define BBR_FULL_BW_THRESH (BBR_UNIT * 5 / 4)
#define BBR_FULL_BW_CNT 3
#define BBR_PACING_MARGIN_PCT 1
#define BBR_INIT_CWND_SEGS 10
#define BBR_EXTRA_ACKED_WIN_RTTS 5
#define BBR_EXTRA_ACKED_MAX_US 100000
#define BBR_ACK_EPOCH_RESET_SEGS (1u << 20)

static const uint16_t bbr_pacing_gain[BBR_CYCLE_LEN] = {
	BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT,
	BBR_UNIT, BBR_UNIT, BBR_UNIT,
};

/* Linux's minmax_running_max(): the max of a window of win round trips
 * kept in three samples. */
static void
bw_filter_reset(struct tcp_bbr *b, uint32_t t, uint64_t v)
{
	b->bw[0].t = b->bw[1].t = b->bw[2].t = t;
	b->bw[0].v = b->bw[1].v = b->bw[2].v = v;
}

static void
bw_filter_update(struct tcp_bbr *b, uint32_t win, uint32_t t, uint64_t v)
{
	struct tcp_bbr_sample val = { t, v }, *s = b->bw;
	uint32_t dt;

	if (v >= s[0].v || t - s[2].t > win) {
		bw_filter_reset(b, t, v);
		return;
	}
	if (v >= s[1].v)
		s[2] = s[1] = val;
	else if (v >= s[2].v)
		s[2] = val;
	dt = t - s[0].t;
	if (dt > win) {
		s[0] = s[1];
		s[1] = s[2];
		s[2] = val;
		if (t - s[0].t > win) {
			s[0] = s[1];
			s[1] = s[2];
			s[2] = val;
		}
	} else if (s[1].t == s[0].t && dt > win / 4) {
		s[2] = s[1] = val;
	} else if (s[2].t == s[1].t && dt > win / 2) {
		s[2] = val;
	}
}

static uint64_t
max_bw(const struct tcp_bbr *b)
{
	return b->bw[0].v;
}

/* BDP x gain, bytes; the initial window before any RTT. */
static uint32_t
bdp(const struct tcp_conn *c, uint64_t bw, uint32_t gain)
{
	uint64_t w;

	if (c->bbr.min_rtt_us == UINT32_MAX)
		return BBR_INIT_CWND_SEGS * (uint32_t)c->mss;
	w = bw * c->bbr.min_rtt_us / 1000000;
	return (uint32_t)RTE_MIN((w * gain + BBR_UNIT - 1) >> BBR_SCALE,
			(uint64_t)UINT32_MAX / 2);
}

/* Linux's bbr_quantization_budget(): room for three bursts of the
 * pacing (bbr_tso_segs_goal(), about a millisecond of data each), the
 * sender's and the receiver's batching, and in the gain cycle's probing
 * phase more. */
static uint32_t
quantization_budget(const struct tcp_conn *c, uint32_t cwnd)
{
	uint32_t segs = (cwnd + c->mss - 1) / c->mss +
		3 * tcp_pace_burst_segs(c);

	segs = (segs + 1) & ~1u;	/* even, for delayed ACKs */
	if (c->bbr.mode == TCP_BBR_PROBE_BW && c->bbr.cycle_idx == 0)
		segs += 2;
	return segs * c->mss;
}

static uint32_t
inflight(const struct tcp_conn *c, uint64_t bw, uint32_t gain)
{
	return quantization_budget(c, bdp(c, bw, gain));
}

static void
set_pacing_rate(struct tcp_conn *c, uint64_t bw, uint32_t gain)
{
	uint64_t rate = bw * gain >> BBR_SCALE;

	rate = rate * (100 - BBR_PACING_MARGIN_PCT) / 100;
	/* In STARTUP the rate never falls (its samples are still low). */
	if (c->bbr.full_bw_reached || rate > c->pacing_rate)
		c->pacing_rate = rate;
}

/* Before any sample: high_gain x cwnd per SRTT (1 ms without one). */
static void
init_pacing_rate_from_rtt(struct tcp_conn *c)
{
	uint32_t rtt_us = c->srtt_us;

	if (rtt_us != 0)
		c->bbr.has_seen_rtt = true;
	else
		rtt_us = 1000;
	c->pacing_rate = ((uint64_t)c->cwnd * 1000000 / rtt_us) *
		BBR_HIGH_GAIN >> BBR_SCALE;
}

static void
save_cwnd(struct tcp_conn *c)
{
	struct tcp_bbr *b = &c->bbr;

	if (b->prev_ca_state < TCP_CA_RECOVERY && b->mode != TCP_BBR_PROBE_RTT)
		b->prior_cwnd = c->cwnd;
	else	/* loss recovery or PROBE_RTT lowered it: keep the best */
		b->prior_cwnd = RTE_MAX(b->prior_cwnd, c->cwnd);
}

static void
advance_cycle_phase(struct net_stack *ns, struct tcp_conn *c)
{
	c->bbr.cycle_idx = (uint8_t)((c->bbr.cycle_idx + 1) &
			(BBR_CYCLE_LEN - 1));
	c->bbr.cycle_us = c->delivered_us;
	ns->stats->tcp.bbr_cycles++;
}

static void
reset_probe_bw_mode(struct net_stack *ns, struct tcp_conn *c)
{
	c->bbr.mode = TCP_BBR_PROBE_BW;
	c->bbr.cycle_idx = (uint8_t)(BBR_CYCLE_LEN - 1 -
			rte_rand_max(BBR_CYCLE_RAND));
	advance_cycle_phase(ns, c);
}

static void
reset_mode(struct net_stack *ns, struct tcp_conn *c)
{
	if (!c->bbr.full_bw_reached)
		c->bbr.mode = TCP_BBR_STARTUP;
	else
		reset_probe_bw_mode(ns, c);
}

static void
bbr_init(struct tcp_conn *c)
{
	struct tcp_bbr *b = &c->bbr;

	memset(b, 0, sizeof(*b));
	/* RFC 6928's initial window, as NewReno's */
	c->cwnd = RTE_MIN(10u * c->mss, RTE_MAX(2u * c->mss, 14600u));
	c->ssthresh = UINT32_MAX;
	c->hs_state = TCP_HS_OFF;
	c->flags |= TCP_F_PACING;
	b->next_rtt_delivered = c->delivered;
	b->min_rtt_us = c->min_rtt_us;
	b->prev_ca_state = TCP_CA_OPEN;
	b->mode = TCP_BBR_STARTUP;
	b->pacing_gain = BBR_HIGH_GAIN;
	b->cwnd_gain = BBR_HIGH_GAIN;
	init_pacing_rate_from_rtt(c);
}

static void
update_bw(struct tcp_conn *c, const struct tcp_ack_info *ai)
{
	struct tcp_bbr *b = &c->bbr;
	uint64_t bw;

	b->round_start = false;
	if (!ai->rs_valid)
		return;
	/* A round trip: what was delivered when the segment this ACK
	 * delivers was sent has passed the round's mark. */
	if (SEQ_GEQ(ai->rs_prior_delivered, b->next_rtt_delivered)) {
		b->next_rtt_delivered = c->delivered;
		b->rtt_cnt++;
		b->round_start = true;
		b->packet_conservation = false;
	}
	bw = (uint64_t)ai->rs_delivered * 1000000 / ai->rs_interval_us;
	/* An app-limited sample tells of the application, not the path,
	 * unless it beats the model. */
	if (!ai->rs_app_limited || bw >= max_bw(b))
		bw_filter_update(b, BBR_BW_RTTS, b->rtt_cnt, bw);
}

/* Linux's bbr_update_ack_aggregation(): data ACKed beyond what the
 * bandwidth explains, the max of 5 to 10 round trips, becomes cwnd
 * (at most 100 ms of the bandwidth) once the pipe is full. */
static void
update_ack_aggregation(struct tcp_conn *c, const struct tcp_ack_info *ai)
{
	struct tcp_bbr *b = &c->bbr;
	uint64_t expected;
	uint32_t extra;

	if (ai->delivered == 0 || !ai->rs_valid)
		return;
	if (b->round_start) {
		b->extra_acked_win_rtts = (uint8_t)RTE_MIN(0x1F,
				b->extra_acked_win_rtts + 1);
		if (b->extra_acked_win_rtts >= BBR_EXTRA_ACKED_WIN_RTTS) {
			b->extra_acked_win_rtts = 0;
			b->extra_acked_win_idx ^= 1;
			b->extra_acked[b->extra_acked_win_idx] = 0;
		}
	}
	expected = max_bw(b) * (c->delivered_us - b->ack_epoch_us) / 1000000;
	if (b->ack_epoch_acked <= expected || (uint64_t)b->ack_epoch_acked +
			ai->delivered >= (uint64_t)BBR_ACK_EPOCH_RESET_SEGS *
			c->mss) {
		b->ack_epoch_acked = 0;
		b->ack_epoch_us = c->delivered_us;
		expected = 0;
	}
	b->ack_epoch_acked += ai->delivered;
	extra = (uint32_t)RTE_MIN(b->ack_epoch_acked - expected,
			(uint64_t)c->cwnd);
	if (extra > b->extra_acked[b->extra_acked_win_idx])
		b->extra_acked[b->extra_acked_win_idx] = extra;
}

static uint32_t
ack_aggregation_cwnd(const struct tcp_conn *c)
{
	const struct tcp_bbr *b = &c->bbr;
	uint64_t most;

	if (!b->full_bw_reached)
		return 0;
	most = max_bw(b) * BBR_EXTRA_ACKED_MAX_US / 1000000;
	return (uint32_t)RTE_MIN((uint64_t)RTE_MAX(b->extra_acked[0],
			b->extra_acked[1]), most);
}

static bool
is_next_cycle_phase(const struct tcp_conn *c, const struct tcp_ack_info *ai)
{
	const struct tcp_bbr *b = &c->bbr;
	bool full_length = c->delivered_us - b->cycle_us > b->min_rtt_us;

	if (b->pacing_gain == BBR_UNIT)
		return full_length;
	/* Probing: until the pipe holds gain x BDP, or a loss says it
	 * will not; draining: until it holds one BDP. */
	if (b->pacing_gain > BBR_UNIT)
		return full_length && (ai->losses > 0 || ai->prior_in_flight >=
				inflight(c, max_bw(b), b->pacing_gain));
	return full_length || ai->prior_in_flight <=
		inflight(c, max_bw(b), BBR_UNIT);
}

static void
check_full_bw_reached(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_ack_info *ai)
{
	struct tcp_bbr *b = &c->bbr;

	if (b->full_bw_reached || !b->round_start || ai->rs_app_limited)
		return;
	if (max_bw(b) >= b->full_bw * BBR_FULL_BW_THRESH >> BBR_SCALE) {
		b->full_bw = max_bw(b);
		b->full_bw_cnt = 0;
		return;
	}
	if (++b->full_bw_cnt >= BBR_FULL_BW_CNT) {
		b->full_bw_reached = true;
		ns->stats->tcp.bbr_full_bw++;
	}
}

static void
check_drain(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_bbr *b = &c->bbr;

	if (b->mode == TCP_BBR_STARTUP && b->full_bw_reached) {
		b->mode = TCP_BBR_DRAIN;	/* drain the queue it made */
		c->ssthresh = inflight(c, max_bw(b), BBR_UNIT);
	}
	if (b->mode == TCP_BBR_DRAIN && tcp_pipe(c) <=
			inflight(c, max_bw(b), BBR_UNIT))
		reset_probe_bw_mode(ns, c);
}

static void
check_probe_rtt_done(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_bbr *b = &c->bbr;

	if (b->probe_rtt_done_ms == 0 || ns->now_ms <= b->probe_rtt_done_ms)
		return;
	b->min_rtt_stamp_ms = ns->now_ms;	/* a while until the next */
	c->cwnd = RTE_MAX(c->cwnd, b->prior_cwnd);
	reset_mode(ns, c);
}

static void
update_min_rtt(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_ack_info *ai)
{
	struct tcp_bbr *b = &c->bbr;
	uint32_t rtt = ai->ca_rtt_us;
	bool expired = ns->now_ms > b->min_rtt_stamp_ms + BBR_MIN_RTT_WIN_MS;

	if (rtt != UINT32_MAX && (rtt < b->min_rtt_us || expired)) {
		b->min_rtt_us = rtt;
		b->min_rtt_stamp_ms = ns->now_ms;
	}
	if (expired && !b->idle_restart && b->mode != TCP_BBR_PROBE_RTT) {
		b->mode = TCP_BBR_PROBE_RTT;	/* dip, drain the queue */
		save_cwnd(c);
		b->probe_rtt_done_ms = 0;
		ns->stats->tcp.bbr_probe_rtts++;
	}
	if (b->mode == TCP_BBR_PROBE_RTT) {
		uint32_t pipe = tcp_pipe(c);

		/* Samples of this mode are low by design. */
		c->app_limited = (c->delivered + pipe) ? c->delivered + pipe : 1;
		/* 4 segments in flight for 200 ms and a round trip */
		if (b->probe_rtt_done_ms == 0 &&
				pipe <= BBR_CWND_MIN_SEGS * (uint32_t)c->mss) {
			b->probe_rtt_done_ms = ns->now_ms + BBR_PROBE_RTT_MS;
			b->probe_rtt_round_done = false;
			b->next_rtt_delivered = c->delivered;
		} else if (b->probe_rtt_done_ms != 0) {
			if (b->round_start)
				b->probe_rtt_round_done = true;
			if (b->probe_rtt_round_done)
				check_probe_rtt_done(ns, c);
		}
	}
	if (ai->delivered > 0)
		b->idle_restart = false;
}

static void
update_gains(struct tcp_bbr *b)
{
	switch (b->mode) {
	case TCP_BBR_STARTUP:
		b->pacing_gain = BBR_HIGH_GAIN;
		b->cwnd_gain = BBR_HIGH_GAIN;
		break;
	case TCP_BBR_DRAIN:
		b->pacing_gain = BBR_DRAIN_GAIN;	/* slow, to drain */
		b->cwnd_gain = BBR_HIGH_GAIN;		/* keep cwnd */
		break;
	case TCP_BBR_PROBE_BW:
		b->pacing_gain = bbr_pacing_gain[b->cycle_idx];
		b->cwnd_gain = BBR_CWND_GAIN;
		break;
	default:	/* PROBE_RTT */
		b->pacing_gain = BBR_UNIT;
		b->cwnd_gain = BBR_UNIT;
		break;
	}
}

/* Linux's bbr_set_cwnd_to_recover_or_restore(): losses come off cwnd;
 * the first round of a recovery conserves packets (cwnd = what is in
 * flight and what this ACK delivered); its end restores cwnd. */
static bool
recover_or_restore(struct tcp_conn *c, const struct tcp_ack_info *ai,
		uint32_t *cwnd)
{
	struct tcp_bbr *b = &c->bbr;
	uint8_t prev = b->prev_ca_state, state = tcp_ca_state(c);
	uint32_t w = c->cwnd;

	if (ai->losses > 0)
		w = w > ai->losses + c->mss ? w - ai->losses : c->mss;
	if (state == TCP_CA_RECOVERY && prev != TCP_CA_RECOVERY) {
		b->packet_conservation = true;
		b->next_rtt_delivered = c->delivered;	/* a round from now */
		w = tcp_pipe(c) + ai->delivered;
	} else if (prev >= TCP_CA_RECOVERY && state < TCP_CA_RECOVERY) {
		w = RTE_MAX(w, b->prior_cwnd);
		b->packet_conservation = false;
	}
	b->prev_ca_state = state;
	if (b->packet_conservation) {
		*cwnd = RTE_MAX(w, tcp_pipe(c) + ai->delivered);
		return true;
	}
	*cwnd = w;
	return false;
}

static void
set_cwnd(struct tcp_conn *c, const struct tcp_ack_info *ai, uint64_t bw)
{
	struct tcp_bbr *b = &c->bbr;
	uint32_t cwnd = c->cwnd, target, acked = ai->delivered;

	if (acked == 0)
		goto done;
	if (recover_or_restore(c, ai, &cwnd))
		goto done;
	target = bdp(c, bw, b->cwnd_gain) + ack_aggregation_cwnd(c);
	target = quantization_budget(c, target);
	/* Up towards the target by what was delivered; down to it only
	 * once the pipe was found full. */
	if (b->full_bw_reached)
		cwnd = RTE_MIN(cwnd + acked, target);
	else if (cwnd < target || c->delivered < BBR_INIT_CWND_SEGS *
			(uint32_t)c->mss)
		cwnd += acked;
	cwnd = RTE_MAX(cwnd, BBR_CWND_MIN_SEGS * (uint32_t)c->mss);
done:
	c->cwnd = RTE_MIN(cwnd, TCP_CWND_MAX);
	if (b->mode == TCP_BBR_PROBE_RTT)
		c->cwnd = RTE_MIN(c->cwnd, BBR_CWND_MIN_SEGS * (uint32_t)c->mss);
}

static void
bbr_main(struct net_stack *ns, struct tcp_conn *c,
		const struct tcp_ack_info *ai)
{
	struct tcp_bbr *b = &c->bbr;

	if (b->min_rtt_stamp_ms == 0)
		b->min_rtt_stamp_ms = ns->now_ms;
	update_bw(c, ai);
	update_ack_aggregation(c, ai);
	if (b->mode == TCP_BBR_PROBE_BW && is_next_cycle_phase(c, ai))
		advance_cycle_phase(ns, c);
	check_full_bw_reached(ns, c, ai);
	check_drain(ns, c);
	update_min_rtt(ns, c, ai);
	update_gains(b);
	if (!b->has_seen_rtt && c->srtt_us != 0)
		init_pacing_rate_from_rtt(c);
	if (max_bw(b) != 0)
		set_pacing_rate(c, max_bw(b), b->pacing_gain);
	set_cwnd(c, ai, max_bw(b));
}

/* A loss found by RACK or duplicate ACKs: cwnd is remembered, the
 * model kept (bbr_ssthresh()). */
static void
bbr_enter_recovery(struct tcp_conn *c)
{
	save_cwnd(c);
}

static void
bbr_exit_recovery(struct tcp_conn *c)
{
	(void)c;	/* set_cwnd() restores it at the next ACK */
}

/* A timeout (tcp_enter_loss(), then bbr_set_state(TCP_CA_Loss)): one
 * segment, and the pipe-full test starts over. */
static void
bbr_timeout(struct tcp_conn *c)
{
	struct tcp_bbr *b = &c->bbr;

	save_cwnd(c);
	c->cwnd = c->mss;
	b->prev_ca_state = TCP_CA_LOSS;
	b->full_bw = 0;
	b->round_start = true;
}

/* An undo keeps cwnd as it is; the pipe-full test starts over. */
static uint32_t
bbr_undo(struct tcp_conn *c)
{
	c->bbr.full_bw = 0;
	c->bbr.full_bw_cnt = 0;
	return c->cwnd;
}

/* Sending after idle: in PROBE_BW at the bandwidth, not above it. */
static void
bbr_tx_start(struct net_stack *ns, struct tcp_conn *c)
{
	struct tcp_bbr *b = &c->bbr;

	if (c->app_limited == 0)
		return;
	b->idle_restart = true;
	b->ack_epoch_us = c->delivered_us;
	b->ack_epoch_acked = 0;
	if (b->mode == TCP_BBR_PROBE_BW && max_bw(b) != 0)
		set_pacing_rate(c, max_bw(b), BBR_UNIT);
	else if (b->mode == TCP_BBR_PROBE_RTT)
		check_probe_rtt_done(ns, c);
}

const struct tcp_cc_ops tcp_cc_bbr = {
	.name = "bbr",
	.init = bbr_init,
	.enter_recovery = bbr_enter_recovery,
	.exit_recovery = bbr_exit_recovery,
	.timeout = bbr_timeout,
	.undo = bbr_undo,
	.cong_control = bbr_main,
	.tx_start = bbr_tx_start,
};
