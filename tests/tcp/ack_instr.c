/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Not a test: the stack's work per ACK of a bulk sender with SEGS segments
 * in flight, for app/bench/ack_instr.sh to count under callgrind (only
 * measured_ack(): the ACK's processing in net_rx() and net_flush(), what
 * it lets out, and the peer's segment being built).
 * One connection of the TCP harness's real stack (window scale,
 * timestamps, SACK), MSS-sized segments.
 *
 *   ack   steady state: each ACK acknowledges the next two segments, and
 *         the peer's window, SEGS segments past the ACK, lets two new
 *         ones out; ACKS of them.
 *   sack  the flight's first segment is lost: each ACK stays at it and
 *         its SACK block grows by two segments, until SEGS are SACKed
 *         (RACK marks the hole lost, recovery resends it); SEGS / 2 of
 *         them.
 *
 *   build/tests/tcp/ack-instr ack|sack SEGS [ACKS]
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rte_mbuf.h>

#include "tcp_harness.h"

/* Flights of up to 8 MB. */
unsigned int th_pool_mbufs = 16383;

#define IRS 1000u
#define SNDBUF (12u << 20)

static uint8_t data[1 << 20];

static void
peer_ack(struct th *h, uint32_t to, uint32_t win_bytes,
		const uint32_t (*block)[2])
{
	static uint32_t tsval = 2;
	struct th_seg s = th_seg_from(IRS + 1, to, TCP_ACK);

	s.win = (uint16_t)RTE_MIN((win_bytes + 127) >> 7, 65535u);
	th_opt_ts(&s, tsval++, 1);
	if (block != NULL)
		th_opt_sack(&s, block, 1);
	th_inject(h, &s);	/* net_rx() and net_flush() */
}

/* An ACK of the measured loop: callgrind counts inside this alone (the
 * flight's opening and the harness's draining are not counted). */
__attribute__((noinline)) void measured_ack(struct th *h, uint32_t to,
		uint32_t win_bytes, const uint32_t (*block)[2]);
__attribute__((noinline)) void
measured_ack(struct th *h, uint32_t to, uint32_t win_bytes,
		const uint32_t (*block)[2])
{
	peer_ack(h, to, win_bytes, block);
}

/* Keeps the send queue full: the sender is never the limit. */
static void
fill(struct th *h)
{
	while (tcp_send_space(h->ns, h->app.conn) >= sizeof(data))
		tcp_write(h->ns, h->app.conn, data, sizeof(data));
}

int
main(int argc, char **argv)
{
	bool sack = argc > 1 && strcmp(argv[1], "sack") == 0;
	uint32_t segs = argc > 2 ? (uint32_t)atoi(argv[2]) : 128;
	uint32_t acks = argc > 3 ? (uint32_t)atoi(argv[3]) : 20000;
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	struct tcp_config cfg;
	struct tcp_conn *c;
	uint32_t iss, una, seg, i;
	uint64_t out_before;
	struct th *h;

	tcp_config_defaults(&cfg);
	cfg.snd_buf = SNDBUF;
	h = th_new(&cfg);
	h->unchecked = true;
	th_opt_mss(&s, 1460);
	th_opt_wscale(&s, 7);
	th_opt_sack_ok(&s);
	th_opt_ts(&s, 1, 0);
	iss = th_handshake(h, 40000, IRS, s.opts, s.optlen, 65535);
	c = h->app.conn;
	seg = tcp_seg_max(c, TCP_TS_LEN);
	una = iss + 1;
	/* The flight opened, in steps (the harness captures 4096 frames):
	 * the peer's window holds it at segs. */
	c->cwnd = 1u << 30;
	c->ssthresh = 1u << 30;
	th_advance(h, 50);
	fill(h);
	for (i = 1024; i < segs + 1024; i += 1024) {
		peer_ack(h, una, RTE_MIN(i, segs) * seg, NULL);
		th_drain(h);
	}
	if (c->snd_max - c->snd_una < (segs - 1) * seg) {
		fprintf(stderr, "ack-instr: %u bytes in flight, not %u\n",
				c->snd_max - c->snd_una, segs * seg);
		return 1;
	}
	th_advance(h, 50);
	out_before = h->stats.tcp.segs_out;
	if (!sack) {
		for (i = 0; i < acks; i++) {
			una += 2 * seg;
			measured_ack(h, una, segs * seg, NULL);
			th_drain(h);
			fill(h);
		}
	} else {
		uint32_t block[1][2] = { { una + seg, una + seg } };

		for (i = 0; i < segs / 2 - 1; i++) {
			block[0][1] += 2 * seg;
			measured_ack(h, una, segs * seg, block);
			th_drain(h);
		}
		acks = i;
		if (h->stats.tcp.retransmits == 0) {
			fprintf(stderr, "ack-instr: the hole was never resent\n");
			return 1;
		}
	}
	printf("%u ACKs, %u segments in flight (%u bytes), %s, %.2f segments "
			"out per ACK\n", acks, segs, segs * seg,
			sack ? "SACK" : "cumulative",
			(double)(h->stats.tcp.segs_out - out_before) / acks);
	th_free(h);
	return 0;
}
