/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Not a test: the network stack's work per request, in one family, for
 * app/bench/net_instr.sh to count under callgrind. One established
 * connection (window scale, timestamps and SACK negotiated) on the TCP
 * harness's real stack; each request is a 100-byte segment from the peer,
 * which also acknowledges the last answer, and the answer a 400-byte
 * segment the stack sends: the receive path (Ethernet, IP, TCP parsing and
 * checksum, the connection's lookup, ACK processing, delivery) and the
 * send path (the segment built and summed, flushed). Only net_rx(),
 * tcp_write(), tcp_output() and net_flush() are counted (the script's
 * --toggle-collect): not the harness building the peer's frames.
 *
 *   TH_FAMILY=6 build/tests/tcp/net-instr 20000
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

/* Large answers in flight. */
unsigned int th_pool_mbufs = 16383;

#define IRS 1000u

int
main(int argc, char **argv)
{
	static char request[100], answer[400];
	unsigned int n = argc > 1 ? (unsigned int)atoi(argv[1]) : 10000, i;
	struct th *h = th_new(NULL);
	struct th_seg s = th_seg_from(IRS, 0, TCP_SYN);
	uint32_t iss, seq = IRS + 1, acked;
	struct th_out o;

	memset(request, 'q', sizeof(request));
	memset(answer, 'a', sizeof(answer));
	th_opt_mss(&s, 1400);
	th_opt_wscale(&s, 7);
	th_opt_sack_ok(&s);
	th_opt_ts(&s, 1, 0);
	iss = th_handshake(h, 40000, IRS, s.opts, s.optlen, 65535);
	acked = iss + 1;
	for (i = 0; i < n; i++) {
		s = th_seg_from(seq, acked, TCP_ACK | TCP_PSH);
		th_opt_ts(&s, 2 + i, 1);
		s.data = request;
		s.len = sizeof(request);
		th_inject(h, &s);	/* net_rx() and net_flush() */
		seq += sizeof(request);
		if (tcp_write(h->ns, h->app.conn, answer, sizeof(answer)) !=
				sizeof(answer))
			return 1;
		tcp_output(h->ns, h->app.conn);
		net_flush(h->ns);
		acked += sizeof(answer);
		th_set_rcv_space(h, 65535);	/* the request was consumed */
		h->app.got_len = 0;
		th_drain(h);
	}
	/* The last answer reached the peer as sent. */
	s = th_seg_from(seq, acked, TCP_ACK);
	th_opt_ts(&s, 2 + n, 1);
	th_inject(h, &s);
	if (th_next(h, &o) || h->app.conn->snd_una != acked)
		return 1;
	printf("%u requests over IPv%u\n", n, th_family() == NET_AF_INET6 ? 6 : 4);
	th_free(h);
	return 0;
}
