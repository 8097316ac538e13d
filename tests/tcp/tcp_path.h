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

#endif /* EWYK_TCP_PATH_H */
