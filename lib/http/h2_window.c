/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/2's receive windows (RFC 9113 6.9): what a client may send on a
 * stream, and on the connection, that was not taken yet. They open again
 * by WINDOW_UPDATE as bytes are taken, once half of one was (as
 * nghttp2's automatic updates did, but for a body-stream route's bytes
 * only as its reader takes them). And they follow the bandwidth-delay
 * product: an update due within two round trips of the one before (half
 * the window taken that fast: the window, not the reader or the path,
 * held the client back; a client held by the window gets an update about
 * a round trip after the last, the time its next half takes to come, so
 * a bound of one round trip missed it as often as not) grants the
 * window's size again, as
 * receive autotuning does for TCP, up to a ceiling: a stream's is TCP's
 * receive buffer ceiling (no more can be in flight to us), its
 * connection's four times that (as the first sizes are, so that a few
 * stopped readers stall no other stream); and what the connections'
 * windows grow by, together, stays within the shard's budget. A window
 * keeps what it grew to until its stream or connection ends.
 */
#include <rte_common.h>

#include "h2_conn.h"

#define H2_WINDOW_LIMIT 0x7fffffffu	/* RFC 9113 6.9.1 */

static bool
window_update(struct h2_conn *h, int32_t id, uint32_t n)
{
	uint8_t p[4];

	h2_put32(p, n);
	return h2_out_frame(h, H2_WINDOW_UPDATE, 0, (uint32_t)id, p, 4, false);
}

/* What a window of size, last updated at since_ms, grows by at an update
 * now: its size again (up to max) when that came within two of TCP's
 * round trips. The clock counts milliseconds: what it says took t took
 * less than t + 1, which must be under the bound (a round trip under half
 * a millisecond never grows a window, nor needs to). */
static uint32_t
growth(const struct h2_conn *h, uint32_t size, uint64_t since_ms, uint64_t max)
{
	uint64_t took_us = (http_conn_now(h->c) - since_ms + 1) * 1000;
	uint32_t rtt_us = http_conn_rtt_us(h->c);

	max = RTE_MIN(max, (uint64_t)H2_WINDOW_LIMIT);
	if (rtt_us == 0 || took_us >= 2 * (uint64_t)rtt_us || size >= max)
		return 0;
	return (uint32_t)RTE_MIN((uint64_t)size, max - size);
}

/* The connection's window opens by what was taken, and grows within what
 * the shard's budget has left. */
static void
open_conn(struct h2_conn *h)
{
	struct http_server *srv = h->c->srv;
	uint32_t want = growth(h, h->recv_size, h->update_ms,
			(uint64_t)srv->conf.h2_window_max *
			(H2_CONN_WINDOW / H2_INITIAL_WINDOW));
	uint64_t left = srv->conf.h2_window_budget > srv->h2_window_grown ?
		srv->conf.h2_window_budget - srv->h2_window_grown : 0;
	uint32_t more = (uint32_t)RTE_MIN((uint64_t)want, left);

	if (!window_update(h, 0, h->unacked + more)) {
		h->updates_owed = true;
		return;
	}
	h->recv_window += h->unacked + more;
	h->unacked = 0;
	h->update_ms = http_conn_now(h->c);
	h->recv_size += more;
	srv->h2_window_grown += more;
	h2_stats(h)->h2_window_grows += more > 0;
	h2_stats(h)->h2_window_budget_limited += more < want;
}

/* A stream's window opens by what was taken, and grows up to its
 * connection's (a larger one could not be used). */
static void
open_stream(struct h2_conn *h, struct h2_stream *st)
{
	uint32_t more = growth(h, st->recv_size, st->update_ms,
			RTE_MIN(h->c->srv->conf.h2_window_max, h->recv_size));

	if (!window_update(h, st->id, st->unacked + more)) {
		h->updates_owed = true;
		return;
	}
	st->recv_window += (int32_t)(st->unacked + more);
	st->unacked = 0;
	st->update_ms = http_conn_now(h->c);
	st->recv_size += more;
	h2_stats(h)->h2_window_grows += more > 0;
}

void
h2_consumed(struct h2_conn *h, struct h2_stream *st, uint32_t n)
{
	h->unacked += n;
	if (h->unacked >= h->recv_size / 2)
		open_conn(h);
	if (st == NULL || st->remote_closed || st->closed)
		return;
	st->unacked += n;
	if (st->unacked >= st->recv_size / 2)
		open_stream(h, st);
}

void
h2_send_updates(struct h2_conn *h)
{
	struct h2_stream *st;

	h->updates_owed = false;
	h2_consumed(h, NULL, 0);
	for (st = h->streams; st != NULL; st = st->next)
		if (st->unacked >= st->recv_size / 2)
			h2_consumed(h, st, 0);
}

void
h2_window_release(struct h2_conn *h)
{
	h->c->srv->h2_window_grown -= h->recv_size - H2_CONN_WINDOW;
	h->recv_size = H2_CONN_WINDOW;
}
