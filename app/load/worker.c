/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A worker: one lcore's shard of the load. Its loop polls its queue pair
 * through its own stack, opens connections (tcp_open(): local ports that
 * RSS brings back to this queue), hands requests to them as the loop
 * says (closed: as answers come back; open: at their due times, queued
 * while no connection has room, so that a stall of the server shows in
 * the latencies instead of slowing the client), and counts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "load.h"

#define RX_BURST 32
#define OPENS_PER_POLL 256	/* SYNs a poll may send */
/* Handshakes under way at once: below a server's usual SYN backlog, so
 * that opening many connections does not turn into SYN cookies and
 * retransmitted SYNs. */
#define CONNECTING_MAX 512
#define TIMEOUT_SCAN 1024	/* connections a poll looks at for timeouts */
#define CLOSE_LINGER_MS 2000	/* FINs and TIME-WAIT given this long at the end */

volatile bool load_quit;
uint64_t load_tsc_hz;

static inline uint64_t
tsc_ms(uint64_t tsc)
{
	return tsc / (load_tsc_hz / 1000);
}

static uint16_t
tx_burst(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct load_worker *w = ctx;

	return rte_eth_tx_burst(w->port, w->queue, pkts, n);
}

const struct load_conf *
conn_conf(const struct load_conn *c)
{
	return c->w->conf;
}

/* The transport: plain TCP ------------------------------------------- */

static uint32_t
tcp_t_write(struct load_conn *c, const void *p, uint32_t n)
{
	return tcp_write(c->w->ns, c->tc, p, n);
}

static int
tcp_t_established(struct load_conn *c)
{
	return conn_ready(c, c->proto);
}

static uint32_t
tcp_t_space(struct load_conn *c)
{
	return tcp_send_space(c->w->ns, c->tc);
}

static void
tcp_t_push(struct load_conn *c)
{
	tcp_output(c->w->ns, c->tc);
}

static void
tcp_t_close(struct load_conn *c)
{
	tcp_close(c->w->ns, c->tc);
}

static void
tcp_t_abort(struct load_conn *c)
{
	tcp_abort(c->w->ns, c->tc);
}

static const struct load_transport tcp_transport = {
	.established = tcp_t_established,
	.write = tcp_t_write,
	.space = tcp_t_space,
	.push = tcp_t_push,
	.close = tcp_t_close,
	.abort = tcp_t_abort,
};

/* Requests ------------------------------------------------------------ */

uint64_t
worker_due(const struct load_worker *w, uint64_t seq)
{
	/* start + seq x period, the period's fraction kept exactly */
	return w->start_tsc + seq * w->period_tsc +
		(uint64_t)(((unsigned __int128)seq * w->period_frac) >> 32);
}

/* The next request to send now, and when it was due: closed loop, any
 * left in the budget, due now; open loop, only those whose time came. */
static bool
take_request(struct load_worker *w, uint64_t now, uint64_t *seq,
		uint64_t *due)
{
	if (w->next_seq >= w->budget || w->holding)
		return false;
	if (w->conf->rate > 0) {
		*due = worker_due(w, w->next_seq);
		if (*due > now)
			return false;
	} else {
		*due = now;
	}
	*seq = w->next_seq++;
	return true;
}

static bool
conn_has_room(const struct load_conn *c)
{
	return c->state == CONN_OPEN && !c->retire &&
		c->inflight < c->w->conf->depth && c->issued < c->quota &&
		!(c->w->conf->new_conn && c->sent_on_conn > 0);
}

static void
conn_send(struct load_conn *c, uint64_t seq, uint64_t due, uint64_t now)
{
	struct load_worker *w = c->w;

	if (c->proto->send(c, seq, due) != 0) {
		/* No room after all (a full send queue): it waits its turn
		 * again, its due time kept. */
		w->next_seq = seq;
		return;
	}
	c->inflight++;
	w->inflight++;
	c->sent_on_conn++;
	c->issued++;
	c->last_tsc = now;
	w->stats.started++;
}

/* As many requests as the connection has room for and the loop allows.
 * Returns whether the connection has room left. */
static bool
conn_fill(struct load_conn *c, uint64_t now)
{
	uint64_t seq, due;

	while (conn_has_room(c)) {
		uint64_t before = c->inflight;

		if (!take_request(c->w, now, &seq, &due))
			return true;
		conn_send(c, seq, due, now);
		if (c->inflight == before)
			return false;
	}
	return false;
}

/* Room to be used once requests are due (open loop), or samples. */
static void
list_free(struct load_worker *w, struct load_conn *c)
{
	if (c->listed_free || w->conf->rate == 0)
		return;
	c->listed_free = true;
	w->free_list[w->nb_free++] = c->id;
}

/* The slots to open: a FIFO, whose front alone a poll looks at, as far as
 * it opens (a million slots are not walked each poll). */
static void
list_open(struct load_worker *w, struct load_conn *c)
{
	if (c->listed_open)
		return;
	c->listed_open = true;
	w->open_list[(w->open_head + w->nb_open_list++) % w->nb_conns] = c->id;
}

static struct load_conn *
open_front(struct load_worker *w)
{
	return &w->conns[w->open_list[w->open_head]];
}

static void
open_pop(struct load_worker *w)
{
	w->open_head = (w->open_head + 1) % w->nb_conns;
	w->nb_open_list--;
}

/* After input or an established handshake: more requests, what they
 * wrote sent, or the connection closed once its last answer is in. */
static void
conn_after(struct load_conn *c, uint64_t now, bool in_upcall)
{
	if (c->state != CONN_OPEN)
		return;
	if ((c->retire || (c->w->conf->new_conn && c->sent_on_conn > 0)) &&
			c->inflight == 0) {
		c->state = CONN_CLOSING;
		c->tr->close(c);
		if (!in_upcall)
			c->tr->push(c);
		return;
	}
	if (conn_fill(c, now))
		list_free(c->w, c);
	c->proto->flush(c);
	if (!in_upcall)
		c->tr->push(c);
}

static inline uint64_t
tsc_to_ns(uint64_t tsc)
{
	return (uint64_t)((double)tsc * 1e9 / (double)load_tsc_hz);
}

void
conn_answered(struct load_conn *c, const struct load_req_end *e)
{
	const struct load_conf *conf = c->w->conf;
	struct load_stats *st = &c->w->stats;
	uint64_t now = rte_get_tsc_cycles();
	enum load_err bad = LOAD_ERR__COUNT;
	unsigned int cls = e->status / 100;

	c->inflight--;
	c->w->inflight--;
	c->last_tsc = now;
	st->done++;
	st->status[cls >= 2 && cls <= 5 ? cls : 1]++;
	if (conf->expect_status != 0 ? e->status != conf->expect_status :
			(e->status < 200 || e->status >= 400))
		bad = LOAD_ERR_status;
	else if ((e->content_length >= 0 &&
			e->body_len != (uint64_t)e->content_length) ||
			(conf->expect_length >= 0 &&
			e->body_len != (uint64_t)conf->expect_length))
		bad = LOAD_ERR_length;
	else if (conf->check_digest && (e->digest == NULL ||
			memcmp(e->digest, conf->expect_sha256, 32) != 0))
		bad = LOAD_ERR_digest;
	if (bad == LOAD_ERR__COUNT) {
		st->succeeded++;
	} else {
		st->failed++;
		st->err[bad]++;
	}
	hist_record(&st->lat, tsc_to_ns(now > e->due_tsc ? now - e->due_tsc : 0));
}

void
conn_request_lost(struct load_conn *c, enum load_err kind)
{
	c->inflight--;
	c->w->inflight--;
	c->w->stats.err[kind]++;
	if (kind == LOAD_ERR_timeout)
		c->w->stats.timeouts++;
	else
		c->w->stats.errored++;
}

/* Every request in flight lost, counted as kind. */
static void
conn_lose_all(struct load_conn *c, enum load_err kind)
{
	while (c->inflight > 0)
		conn_request_lost(c, kind);
}

void
conn_fail(struct load_conn *c, enum load_err kind)
{
	if (c->tc == NULL || c->state == CONN_FREE)
		return;
	conn_lose_all(c, kind);
	c->state = CONN_CLOSING;
	c->tr->abort(c);	/* the closed upcall runs now */
}

/* A connection attempt failed (TCP's or TLS's handshake): counted as
 * kind, and a request given up for it, so that a run against a server
 * that is not there, or will not shake hands, ends. */
static void
attempt_failed(struct load_worker *w, struct load_conn *c, enum load_err kind)
{
	if (w->time_up)
		return;	/* ended by the run's end, not by the server */
	w->stats.err[kind]++;
	if (w->next_seq < w->budget && c->issued < c->quota && !w->holding) {
		w->next_seq++;
		c->issued++;
		w->stats.errored++;
	}
}

/* A slot that cannot be opened (no local port left): given up, and its
 * share of -n with it, so that the run still ends. */
static void
slot_given_up(struct load_worker *w, struct load_conn *c)
{
	uint64_t left;

	w->stats.err[LOAD_ERR_connect]++;
	c->listed_open = false;
	if (c->quota == UINT64_MAX || w->holding || c->issued >= c->quota ||
			w->next_seq >= w->budget)
		return;
	left = RTE_MIN(c->quota - c->issued, w->budget - w->next_seq);
	c->issued += left;
	w->next_seq += left;
	w->stats.errored += left;
}

/* The connection's upcalls -------------------------------------------- */

int
conn_ready(struct load_conn *c, const struct load_proto *p)
{
	c->state = CONN_OPEN;
	c->w->connecting--;
	c->w->stats.conns_established++;
	c->proto = p;
	if (c->proto->start(c) != 0)
		return -1;
	conn_after(c, rte_get_tsc_cycles(), true);
	return 0;
}

static int
on_established(void *ctx, struct tcp_conn *tc)
{
	struct load_worker *w = ctx;
	struct load_conn *c = tcp_app(tc);

	/* Everything is taken as it comes: the window stays wide open. */
	tcp_set_rcv_space(w->ns, tc, 4u << 20);
	return c->tr->established(c);
}

static uint32_t
on_recv(void *ctx, struct tcp_conn *tc, const uint8_t *data, uint32_t len)
{
	struct load_worker *w = ctx;
	struct load_conn *c = tcp_app(tc);

	w->stats.bytes_in += len;
	if (c->tr->recv != NULL) {
		c->tr->recv(c, data, len);
		return len;
	}
	if (c->state != CONN_OPEN)
		return len;	/* closing: what comes is not asked for */
	if (c->proto->recv(c, data, len) < 0) {
		conn_fail(c, LOAD_ERR_protocol);
		return len;
	}
	conn_after(c, rte_get_tsc_cycles(), true);
	return len;
}

void
conn_after_input(struct load_conn *c)
{
	conn_after(c, rte_get_tsc_cycles(), true);
	if (c->tls != NULL)
		tls_client_push(c->tls);
}

static void
on_sent(void *ctx, struct tcp_conn *tc)
{
	struct load_conn *c = tcp_app(tc);

	(void)ctx;
	if (c->tls != NULL)
		tls_client_sent(c->tls);
	conn_after_input(c);
}

void
conn_peer_closed(struct load_conn *c)
{
	if (c->state == CONN_OPEN && c->proto->peer_closed(c) < 0) {
		conn_fail(c, LOAD_ERR_protocol);
		return;
	}
	/* What was still asked of it will not come. */
	conn_lose_all(c, LOAD_ERR_closed);
	if (c->state == CONN_OPEN || c->state == CONN_CLOSING) {
		c->state = CONN_CLOSING;
		c->tr->close(c);
	}
}

static void
on_peer_closed(void *ctx, struct tcp_conn *tc)
{
	struct load_conn *c = tcp_app(tc);

	(void)ctx;
	/* A FIN in TLS's handshake fails it (its failed upcall closes). */
	if (c->tls != NULL && tls_client_peer_closed(c->tls))
		return;
	conn_peer_closed(c);
}

static void
on_closed(void *ctx, struct tcp_conn *tc)
{
	struct load_worker *w = ctx;
	struct load_conn *c = tcp_app(tc);

	if (c->state == CONN_CONNECTING) {
		w->connecting--;
		/* TCP's handshake was over when TLS has a session */
		attempt_failed(w, c, c->tls != NULL ? LOAD_ERR_tls_handshake :
				LOAD_ERR_connect);
	} else {
		conn_lose_all(c, LOAD_ERR_reset);
	}
	if (c->tls != NULL) {
		tls_client_free(c->tls);
		c->tls = NULL;
	}
	c->proto->fini(c);
	c->pstate = NULL;
	c->tc = NULL;
	c->state = CONN_FREE;
	c->retire = false;
	c->inflight = 0;
	w->stats.conns_open--;
	worker_conn_gone(w, c);
}

static const struct tcp_upcalls conn_upcalls = {
	.accepted = on_established,
	.recv = on_recv,
	.sent = on_sent,
	.peer_closed = on_peer_closed,
	.closed = on_closed,
};

void
worker_conn_room(struct load_worker *w, struct load_conn *c)
{
	list_free(w, c);
}

void
worker_conn_gone(struct load_worker *w, struct load_conn *c)
{
	list_open(w, c);
}

/* Opening ------------------------------------------------------------- */

enum want { WANT_NOW, WANT_LATER, WANT_NEVER };

/* Whether a closed slot should open: keep-alive slots stay open while
 * there is work for them (never again once the run has none for them);
 * --new-conn slots in the open loop open for a request that is due. */
static enum want
slot_wanted(struct load_worker *w, const struct load_conn *c, uint64_t now,
		uint32_t connecting)
{
	uint64_t due_now;

	if (w->holding || w->next_seq >= w->budget || c->issued >= c->quota ||
			load_quit)
		return WANT_NEVER;
	if (!w->conf->new_conn || w->conf->rate == 0)
		return WANT_NOW;
	/* open loop, a connection per request: as many opening as due */
	due_now = w->next_seq;
	while (due_now < w->budget && due_now - w->next_seq <= connecting &&
			worker_due(w, due_now) <= now)
		due_now++;
	return due_now - w->next_seq > connecting ? WANT_NOW : WANT_LATER;
}

static void
open_slots(struct load_worker *w, uint64_t now)
{
	uint32_t opened = 0, n = w->nb_open_list;
	static bool warned_ports;

	while (n-- > 0 && opened < OPENS_PER_POLL &&
			w->connecting < CONNECTING_MAX) {
		struct load_conn *c = open_front(w);
		struct tcp_conn *tc;
		enum want want;
		int err;

		if (c->state != CONN_FREE) {
			open_pop(w);
			c->listed_open = false;
			continue;
		}
		want = slot_wanted(w, c, now, w->connecting);
		if (want == WANT_LATER)
			break;
		if (want == WANT_NEVER) {
			open_pop(w);
			c->listed_open = false;
			continue;
		}
		tc = tcp_open_addr(w->ns, &w->conf->server,
				w->conf->server_port, &conn_upcalls, w, &err);
		if (tc == NULL) {
			if (err == -EADDRNOTAVAIL || err == -ENETUNREACH) {
				open_pop(w);
				slot_given_up(w, c);
				if (!warned_ports && err == -EADDRNOTAVAIL)
					fprintf(stderr, "ewyk-load: worker %u: "
							"no local port left for "
							"another connection\n",
							w->id);
				warned_ports = true;
				continue;
			}
			/* The next hop is being resolved (ARP, ND), or no
			 * slot is free yet: later; but a next hop that has
			 * not answered for --timeout fails every attempt. */
			if (err == -EAGAIN && w->unresolved_tsc == 0)
				w->unresolved_tsc = now;
			if (err == -EAGAIN && now - w->unresolved_tsc >
					w->timeout_tsc) {
				open_pop(w);
				c->listed_open = false;
				attempt_failed(w, c, LOAD_ERR_connect);
				list_open(w, c);	/* to the back */
				continue;
			}
			break;
		}
		open_pop(w);
		w->unresolved_tsc = 0;
		tcp_set_app(tc, c);
		c->tc = tc;
		c->tr = w->transport != NULL ? w->transport : &tcp_transport;
		c->state = CONN_CONNECTING;
		c->listed_open = false;
		c->sent_on_conn = 0;
		c->inflight = 0;
		c->last_tsc = now;
		w->stats.conns_opened++;
		w->stats.conns_open++;
		w->connecting++;
		opened++;
	}
}

/* Open loop: requests whose time came, to connections with room. */
static void
feed_free(struct load_worker *w, uint64_t now)
{
	while (w->nb_free > 0 && w->next_seq < w->budget &&
			worker_due(w, w->next_seq) <= now) {
		struct load_conn *c = &w->conns[w->free_list[--w->nb_free]];

		c->listed_free = false;
		if (!conn_has_room(c))
			continue;
		conn_after(c, now, false);
	}
}

/* Requests in flight too long: counted as timeouts, their connection
 * reset (and opened again). A slice of the connections per poll. */
static void
check_timeouts(struct load_worker *w, uint64_t now, uint32_t *cursor)
{
	uint32_t i;

	for (i = 0; i < TIMEOUT_SCAN && i < w->nb_conns; i++) {
		struct load_conn *c = &w->conns[*cursor];

		*cursor = *cursor + 1 == w->nb_conns ? 0 : *cursor + 1;
		if ((c->state == CONN_OPEN && c->inflight > 0) ||
				c->state == CONN_CONNECTING) {
			/* last_tsc may be later than this poll's start */
			if (c->last_tsc >= now ||
					now - c->last_tsc <= w->timeout_tsc)
				continue;
			if (c->state == CONN_CONNECTING) {
				c->tr->abort(c);	/* counted as connect */
				continue;
			}
			conn_lose_all(c, LOAD_ERR_timeout);
			conn_fail(c, LOAD_ERR_timeout);
		}
	}
}

/* --hold with --sample: a request now and then on the held connections,
 * each in turn, to show they still serve. */
static void
sample(struct load_worker *w, uint64_t now, uint32_t *cursor)
{
	uint64_t period = load_tsc_hz * w->conf->clients /
		((uint64_t)w->conf->sample * w->nb_conns + 1);
	uint32_t tried;

	if (w->conf->sample == 0 || now < w->next_sample_tsc)
		return;
	w->next_sample_tsc = now + (period > 0 ? period : 1);
	for (tried = 0; tried < w->nb_conns; tried++) {
		struct load_conn *c = &w->conns[*cursor];

		*cursor = *cursor + 1 == w->nb_conns ? 0 : *cursor + 1;
		if (c->state != CONN_OPEN || c->inflight > 0)
			continue;
		c->quota++;	/* a request beyond its share */
		conn_send(c, w->next_seq++, now, now);
		c->proto->flush(c);
		c->tr->push(c);
		return;
	}
}

static bool
all_answered(const struct load_worker *w)
{
	return w->next_seq >= w->budget && w->inflight == 0;
}

static void
poll_once(struct load_worker *w, uint64_t tsc)
{
	struct rte_mbuf *pkts[RX_BURST];
	uint16_t got = rte_eth_rx_burst(w->port, w->queue, pkts, RX_BURST);
	uint64_t now_ms = tsc_ms(tsc);

	net_rx(w->ns, 0, pkts, got, now_ms);
	net_timers(w->ns, now_ms);
}

/* Closes what is open, then waits a little for the FINs. Requests still
 * in flight when the time is up (-D, or a signal) are not answers that
 * failed: they are left out of the counts, as h2load does; so are the
 * connections still opening (a TLS handshake under way, or a SYN). */
static void
close_all(struct load_worker *w, bool time_up)
{
	uint64_t until = rte_get_tsc_cycles() + load_tsc_hz / 1000 *
		CLOSE_LINGER_MS;
	uint32_t i;

	w->time_up = time_up;
	for (i = 0; i < w->nb_conns; i++) {
		struct load_conn *c = &w->conns[i];

		if (time_up) {
			w->inflight -= c->inflight;
			c->inflight = 0;
		}
		if (c->state == CONN_OPEN) {
			c->state = CONN_CLOSING;
			conn_lose_all(c, LOAD_ERR_closed);
			c->tr->close(c);
			c->tr->push(c);
		} else if (c->state == CONN_CONNECTING) {
			c->tr->abort(c);
		}
	}
	net_flush(w->ns);
	/* Then through TIME-WAIT (1 s): the ACK of a server's FIN may not
	 * reach it (on net_memif, a frame it had not read when we leave is
	 * gone with the ring), and the FIN it sends again must find us, or
	 * its connection stays open, sending that FIN, long after we left. */
	while ((w->stats.conns_open > 0 || w->net_stats.tcp_time_wait > 0) &&
			rte_get_tsc_cycles() < until) {
		poll_once(w, rte_get_tsc_cycles());
		net_flush(w->ns);
	}
}

int
worker_run(void *arg)
{
	struct load_worker *w = arg;
	uint32_t tcursor = 0, scursor = 0;
	uint64_t t0, t1, progress_tsc, last_scan = 0;

	t0 = rte_get_tsc_cycles();
	progress_tsc = w->start_tsc + load_tsc_hz;
	for (;;) {
		unsigned int before = (unsigned int)(w->stats.bytes_in +
				w->stats.started + w->stats.conns_opened);

		if (__atomic_load_n(&load_quit, __ATOMIC_RELAXED) ||
				t0 >= w->end_tsc)
			break;
		poll_once(w, t0);
		if (w->nb_open_list > 0)
			open_slots(w, t0);
		if (w->nb_free > 0)
			feed_free(w, t0);
		if (t0 - last_scan > load_tsc_hz / 100) {
			last_scan = t0;
			check_timeouts(w, t0, &tcursor);
		}
		if (w->holding)
			sample(w, t0, &scursor);
		net_flush(w->ns);
		if (!w->holding && all_answered(w)) {
			if (w->conf->hold_s == 0)
				break;
			w->holding = true;
			w->hold_end_tsc = t0 + (uint64_t)(w->conf->hold_s *
					(double)load_tsc_hz);
			w->next_sample_tsc = t0;
			w->budget = UINT64_MAX;
		}
		if (w->holding && t0 >= w->hold_end_tsc && w->inflight == 0)
			break;
		t1 = rte_get_tsc_cycles();
		if ((unsigned int)(w->stats.bytes_in + w->stats.started +
				w->stats.conns_opened) != before)
			w->stats.busy_tsc += t1 - t0;
		else
			w->stats.idle_tsc += t1 - t0;
		if (w->id == 0 && !w->conf->quiet && w->report_self &&
				t1 >= progress_tsc) {
			progress_tsc += load_tsc_hz;
			report_progress(w->all, w->nb_all,
					(double)(t1 - w->start_tsc) /
					(double)load_tsc_hz);
		}
		t0 = t1;
	}
	w->end_run_tsc = rte_get_tsc_cycles();
	close_all(w, __atomic_load_n(&load_quit, __ATOMIC_RELAXED) ||
			w->end_run_tsc >= w->end_tsc);
	__atomic_store_n(&w->finished, true, __ATOMIC_RELEASE);
	return 0;
}

int
worker_init(struct load_worker *w, uint16_t id, uint16_t nb_workers,
		const struct load_conf *conf, const struct net_if *ifc,
		struct arp_cache *arp, struct net_nd *nd,
		const struct net_rss *rss, struct rte_mempool *pool)
{
	struct tcp_config tcfg;
	uint32_t i, max_body = 0;
	double period;

	w->id = id;
	w->queue = id;
	w->conf = conf;
	w->nb_conns = conf->clients / nb_workers +
		(id < conf->clients % nb_workers ? 1 : 0);
	if (conf->requests == 0)
		w->budget = UINT64_MAX;
	else
		w->budget = conf->requests / nb_workers +
			(id < conf->requests % nb_workers ? 1 : 0);
	for (i = 0; i < conf->nb_urls; i++)
		if (conf->urls[i].body_len > max_body)
			max_body = conf->urls[i].body_len;
	tcp_config_defaults(&tcfg);
	/* Our own closes (HTTP/2 --new-conn) leave TIME-WAIT behind. */
	tcfg.max_conns = w->nb_conns * (conf->new_conn ? 2 : 1) + 64;
	tcfg.max_time_wait = w->nb_conns + 64;
	tcfg.time_wait_ms = 1000;
	tcfg.syn_retries = 3;
	tcfg.rcv_win_max = 4u << 20;
	tcfg.snd_buf = RTE_MAX(256u * 1024, max_body + 4096);
	tcfg.rcv_space = 65536;
	/* Keep the RX ring's mbufs whatever the send queues hold. */
	tcfg.mbuf_reserve = 1024 * nb_workers + 1024;
	w->ns = net_stack_create(ifc, arp, pool, &tcfg, tx_burst, w,
			&w->net_stats, tsc_ms(rte_get_tsc_cycles()));
	if (w->ns == NULL)
		return -1;
	if (nd != NULL)
		net_stack_set_nd(w->ns, 0, nd);
	net_stack_set_rss(w->ns, 0, rss, w->queue);
	w->conns = calloc(RTE_MAX(w->nb_conns, 1u), sizeof(*w->conns));
	w->free_list = calloc(RTE_MAX(w->nb_conns, 1u), sizeof(uint32_t));
	w->open_list = calloc(RTE_MAX(w->nb_conns, 1u), sizeof(uint32_t));
	if (w->conns == NULL || w->free_list == NULL || w->open_list == NULL)
		return -1;
	for (i = 0; i < w->nb_conns; i++) {
		struct load_conn *c = &w->conns[i];

		c->w = w;
		c->id = i;
		/* closed loop with -n: n / c each, as h2load; else no share */
		c->quota = conf->rate > 0 || w->budget == UINT64_MAX ?
			UINT64_MAX : w->budget / w->nb_conns +
			(i < w->budget % w->nb_conns ? 1 : 0);
		c->proto = conf->proto == LOAD_H1 ? &load_h1 : &load_h2;
		list_open(w, c);
	}
	if (conf->tls) {
		struct tls_client_conf tconf = {
			.ns = w->ns,
			.priority = conf->tls_priority,
			.h2 = conf->proto != LOAD_H1,
			.stats = &w->tls_stats,
		};
		char err[TLS_ERR_LEN];

		w->tls = tls_client_ctx_create(&tconf, err, sizeof(err));
		if (w->tls == NULL) {
			fprintf(stderr, "ewyk-load: %s\n", err);
			return -1;
		}
	}
	period = conf->rate > 0 ? (double)load_tsc_hz * nb_workers /
		conf->rate : 0;
	w->period_tsc = (uint64_t)period;
	w->period_frac = (uint64_t)((period - (double)w->period_tsc) * 4294967296.0);
	w->timeout_tsc = (uint64_t)(conf->timeout_s * (double)load_tsc_hz);
	return 0;
}

void
worker_fini(struct load_worker *w)
{
	if (w->ns != NULL)
		net_stack_destroy(w->ns);	/* closed upcalls free the rest */
	w->ns = NULL;
	tls_client_ctx_destroy(w->tls);
	w->tls = NULL;
	free(w->conns);
	free(w->free_list);
	free(w->open_list);
}
