/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A sender's path for the scripted tests of loss recovery and congestion
 * control: one connection of the harness's stack with SACK and an MSS of
 * 1000, warmed up over a round trip of the test's choosing; the peer
 * (the test) acknowledges and SACKs segments by their number in the
 * stream (segment i starts at byte i * 1000 after the ISS).
 */
#ifndef EWYK_TCP_PATH_H
#define EWYK_TCP_PATH_H

#include "tcp_harness.h"

#define TP_MSS 1000

struct tp {
	struct th *h;
	struct tcp_conn *c;
	uint32_t iss;
	uint32_t irs;
	uint16_t port;		/* the peer's */
	bool ts;		/* timestamps negotiated: the peer echoes ours */
	uint32_t ts_val;	/* the peer's next TSval */
	uint32_t ts_ecr;	/* what it echoes: our last TSval it saw */
};

/* The handshake, rtt_us long, then warm segments written and each
 * acknowledged rtt_us later (none: warm 0); cfg may be NULL. With ts the
 * timestamp option is negotiated. */
struct th *tp_open(struct tp *p, const struct tcp_config *cfg, uint64_t rtt_us,
		uint32_t warm, bool ts);
/* The first byte of segment i. */
uint32_t tp_seq(const struct tp *p, uint32_t i);
/* The peer's ACK of ack (a sequence number), SACKing segments [from, to)
 * when to > from. */
void tp_ack(struct tp *p, uint32_t ack, uint32_t from, uint32_t to);
/* The same with up to four SACK blocks of segment numbers (a D-SACK
 * first: RFC 2883). */
void tp_ack_blocks(struct tp *p, uint32_t ack, const uint32_t (*blocks)[2],
		int n);
/* Queue n bytes and let the stack send what its windows allow. */
void tp_write(struct tp *p, uint32_t n);
/* Data segments captured since the last call (the last one's sequence
 * number in *last when not NULL); bare ACKs are skipped. */
unsigned int tp_sent(struct tp *p, uint32_t *last);
/* Microseconds until the stack sends something (up to a second), the
 * clock moving a microsecond at a time. */
uint64_t tp_quiet_for_us(struct tp *p);

/*
 * A simulated path for the tests of congestion control and pacing: a
 * bottleneck of rate bytes a second with an unbounded FIFO queue, a base
 * round trip of rtt_us, and a receiver (the peer) that acknowledges each
 * segment as it arrives, with SACK blocks and a D-SACK for a duplicate.
 * drop() chooses losses (tx: how many times segment seg was sent before).
 * The sender is kept supplied with data. Time jumps from event to event:
 * an ACK's arrival, a pacing time, the timers' millisecond.
 */
#define TP_SIM_SEGS (1 << 20)
#define TP_SIM_ACKS 4096

struct tp_sim_ack {
	uint64_t at_us;
	uint32_t ack;		/* segment number */
	uint32_t blocks[4][2];	/* segment numbers */
	uint8_t n;
};

struct tp_sim {
	struct tp *p;
	uint64_t rate;		/* bytes a second */
	uint32_t rtt_us;
	bool (*drop)(const struct tp_sim *s, uint32_t seg, uint32_t tx);
	uint64_t link_free_us;
	uint32_t rcv_next;	/* the receiver's next segment in order */
	uint32_t rcv_hi;	/* one past the highest it holds */
	uint8_t got[TP_SIM_SEGS];
	uint8_t sent[TP_SIM_SEGS];
	struct tp_sim_ack acks[TP_SIM_ACKS];
	uint32_t ack_head, ack_n;
	uint64_t max_queue;	/* the bottleneck's deepest queue, bytes */
	uint64_t dropped;	/* transmissions drop() took */
	uint64_t gaps;		/* sends spaced by the pacing, see tp_sim_run */
	uint64_t last_send_us;
};

/* On p's connection (warmed up: segments before first acknowledged). */
void tp_sim_init(struct tp_sim *s, struct tp *p, uint64_t rate,
		uint32_t rtt_us, uint32_t first);
/* Runs the path for us microseconds. */
void tp_sim_run(struct tp_sim *s, uint64_t us);
/* Bytes the receiver holds in order. */
uint64_t tp_sim_delivered(const struct tp_sim *s);

#endif /* EWYK_TCP_PATH_H */
