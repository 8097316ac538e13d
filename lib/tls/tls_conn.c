/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A shard's TLS connections: the TLS port's TCP upcalls below, the
 * transport HTTP writes through above, and the record layer between.
 *
 * In: a segment's bytes are GnuTLS's pull source for the time of the
 * upcall (nothing staged once established); each record decrypted is
 * lent to http_conn_recv() and given back at once, or held when HTTP
 * took only part (its receive space was smaller than a record), until
 * HTTP makes room. Out: HTTP's writes gather in the shard's cork buffer
 * into records of up to 16 KB (nghttp2 writes a 9-byte frame header,
 * then the frame), which GnuTLS encrypts into its own buffer and pushes
 * into tcp_write(); a write of a whole record or more skips the cork.
 * space() promises only what fits with every record's overhead, so a
 * push never meets a full send queue.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tls_conn.h"
#include "tls_mem.h"

static const struct http_transport tls_transport;
static void on_deadline(struct net_timer *t);
static void on_resume(struct net_timer *t);

/* Connections ------------------------------------------------------------- */

void
tls_conn_hold(struct tls_conn *tc)
{
	tc->depth++;
}

static void
hs_wait_leave(struct tls_conn *tc)
{
	struct tls_shard *sh = tc->sh;

	if (!tc->hs_waiting)
		return;
	if (tc->wait_prev != NULL)
		tc->wait_prev->wait_next = tc->wait_next;
	else
		sh->hs_wait_head = tc->wait_next;
	if (tc->wait_next != NULL)
		tc->wait_next->wait_prev = tc->wait_prev;
	else
		sh->hs_wait_tail = tc->wait_prev;
	tc->wait_next = tc->wait_prev = NULL;
	tc->hs_waiting = false;
}

static void
hs_wait_join(struct tls_conn *tc)
{
	struct tls_shard *sh = tc->sh;

	tc->hs_waiting = true;
	tc->wait_next = NULL;
	tc->wait_prev = sh->hs_wait_tail;
	if (sh->hs_wait_tail != NULL)
		sh->hs_wait_tail->wait_next = tc;
	else
		sh->hs_wait_head = tc;
	sh->hs_wait_tail = tc;
}

static void
hs_take(struct tls_conn *tc, struct tls_hs *hs)
{
	hs->in_len = hs->in_off = hs->out_len = hs->out_off = 0;
	tc->hs = hs;
}

void
tls_hs_free(struct tls_shard *sh, struct tls_hs *hs)
{
	struct tls_conn *tc;

	/* TCP acknowledged a waiting ClientHello and holds it: nothing from
	 * the client comes to say that a staging is free, so it is handed
	 * over here and TCP offers the held bytes at its next flush. */
	while ((tc = sh->hs_wait_head) != NULL) {
		hs_wait_leave(tc);
		if (tc->state != TC_HANDSHAKE || tc->tcp == NULL)
			continue;	/* failed meanwhile */
		hs_take(tc, hs);
		tcp_set_rcv_space(sh->conf.ns, tc->tcp, TLS_HS_IN);
		return;
	}
	hs->free_next = sh->free_hs;
	sh->free_hs = hs;
}

/* The shard takes up the newest generation of credentials (after a
 * reload), and lets the one it leaves go once no connection is on it. */
static void
gen_adopt(struct tls_shard *sh)
{
	struct tls_gen *old = sh->gen;

	if (tls_gen_current(sh->conf.cfg, old))
		return;
	sh->gen = tls_gen_take(sh->conf.cfg);
	if (sh->gen == NULL) {
		sh->gen = old;	/* the configuration is being destroyed */
		return;
	}
	sh->st->gen_switches++;
	if (old != NULL && old->per[sh->conf.id].sessions == 0)
		tls_gen_release(old);
}

static void
gen_leave(struct tls_shard *sh, struct tls_gen *g)
{
	if (--g->per[sh->conf.id].sessions == 0 && g != sh->gen)
		tls_gen_release(g);
}

static void
conn_free(struct tls_conn *tc)
{
	struct tls_shard *sh = tc->sh;

	net_timer_cancel(sh->conf.ns, &tc->deadline);
	net_timer_cancel(sh->conf.ns, &tc->resume);
	hs_wait_leave(tc);
	tls_cork_drop(&sh->cork, tc);
	tls_mem_enter();	/* buffers GnuTLS still holds go back too */
	if (tc->held != NULL)
		gnutls_packet_deinit(tc->held);
	if (tc->s != NULL)
		gnutls_deinit(tc->s);
	tls_mem_leave();
	if (tc->hs != NULL)
		tls_hs_free(sh, tc->hs);
	if (tc->state == TC_HANDSHAKE)
		sh->st->handshaking--;
	gen_leave(sh, tc->gen);
	sh->st->conns--;
	memset(tc, 0, sizeof(*tc));
	tc->sh = sh;
	net_timer_init(&tc->deadline, on_deadline);
	net_timer_init(&tc->resume, on_resume);
	tc->free_next = sh->free_conns;
	sh->free_conns = tc;
}

bool
tls_conn_unhold(struct tls_conn *tc)
{
	if (--tc->depth > 0 || !tc->gone || tc->step_out)
		return true;
	conn_free(tc);
	return false;
}

static void
on_deadline(struct net_timer *t)
{
	struct tls_conn *tc = container_of(t, struct tls_conn, deadline);

	if (tc->state != TC_HANDSHAKE)
		return;
	if (tc->step_out) {
		tc->timed_out = true;	/* failed when the step is back */
		return;
	}
	tls_conn_hold(tc);
	tls_hs_fail(tc, TLS_FAIL_timeout, true);
	tls_conn_unhold(tc);
}

/* The transport's pull and push ------------------------------------------ */

ssize_t
tls_pull(gnutls_transport_ptr_t p, void *buf, size_t len)
{
	struct tls_conn *tc = p;

	return tls_pull_from(tc->s, tc->in, tc->in_len, &tc->in_off, buf, len);
}

ssize_t
tls_push(gnutls_transport_ptr_t p, const void *data, size_t len)
{
	struct tls_conn *tc = p;
	struct tls_hs *hs = tc->hs;
	uint32_t n;

	if (tc->state != TC_HANDSHAKE)
		return tls_push_to(tc->s, tc->sh->conf.ns, tc->tcp, data, len);
	/* A step's flight, for the owner to write. */
	n = TLS_HS_OUT - hs->out_len;
	if (n > len)
		n = (uint32_t)len;
	memcpy(hs->out + hs->out_len, data, n);
	hs->out_len += n;
	if (n == 0) {
		gnutls_transport_set_errno(tc->s, EAGAIN);
		return -1;
	}
	return n;
}

/* Records out ------------------------------------------------------------- */

/* Fatal: the connection ends with GnuTLS's alert, then FIN. */
static void
session_fail(struct tls_conn *tc, int rc)
{
	tc->sh->st->errors++;
	tc->state = TC_CLOSED;
	if (tc->tcp != NULL) {
		tls_mem_enter();
		gnutls_alert_send_appropriate(tc->s, rc);
		tls_mem_leave();
	}
	/* HTTP lets the connection go; TCP closes after the alert. */
	if (tc->http != NULL)
		http_conn_peer_closed(tc->http);
	if (tc->tcp != NULL)
		tcp_close(tc->sh->conf.ns, tc->tcp);
}

int
tls_record_send(gnutls_session_t s, struct tls_stats *st, const uint8_t *p,
		uint32_t n, bool *pending)
{
	tls_mem_enter();
	while (n > 0) {
		ssize_t r = gnutls_record_send(s, p, n);

		if (r == GNUTLS_E_AGAIN) {
			/* GnuTLS has the record; it goes at the next sent
			 * upcall. space() should have made this impossible. */
			*pending = true;
			st->records_out++;
			st->bytes_out += n;
			break;
		}
		if (r < 0) {
			tls_mem_leave();
			return (int)r;
		}
		st->records_out++;
		st->bytes_out += (uint64_t)r;
		p += r;
		n -= (uint32_t)r;
	}
	tls_mem_leave();
	return 0;
}

/* n bytes (at most a record) encrypted into TCP's send queue. */
static void
send_record(struct tls_conn *tc, const uint8_t *p, uint32_t n)
{
	int rc = tls_record_send(tc->s, tc->sh->st, p, n, &tc->send_pending);

	if (rc < 0)
		session_fail(tc, rc);
}

bool
tls_cork_flush(struct tls_cork *ck, tls_cork_send_t send)
{
	void *owner = ck->owner;
	uint32_t n = ck->len;

	ck->owner = NULL;
	ck->len = 0;
	return owner == NULL || n == 0 || send(owner, ck->buf, n);
}

uint32_t
tls_cork_write(struct tls_cork *ck, void *owner, const uint8_t *p,
		uint32_t len, uint32_t rec_max, tls_cork_send_t send)
{
	uint32_t done = 0, n;
	bool open = true;

	if (ck->owner != NULL && ck->owner != owner)
		tls_cork_flush(ck, send);
	while (done < len && open) {
		n = len - done;
		if (ck->len == 0 && n >= rec_max) {
			open = send(owner, p + done, rec_max);	/* no copy */
			done += rec_max;
			continue;
		}
		if (n > rec_max - ck->len)
			n = rec_max - ck->len;
		memcpy(ck->buf + ck->len, p + done, n);
		ck->len += n;
		ck->owner = owner;
		done += n;
		if (ck->len == rec_max)
			open = tls_cork_flush(ck, send);
	}
	return done;
}

static bool
cork_send(void *owner, const uint8_t *p, uint32_t n)
{
	struct tls_conn *tc = owner;

	if (tc->state != TC_OPEN)
		return false;
	send_record(tc, p, n);
	return tc->state == TC_OPEN;
}

static void
cork_flush(struct tls_shard *sh)
{
	tls_cork_flush(&sh->cork, cork_send);
}

static void
on_cork_flush(struct net_timer *t)
{
	struct tls_shard *sh = container_of(t, struct tls_shard, cork_flush);
	struct tls_conn *tc = sh->cork.owner;

	if (tc == NULL)
		return;
	cork_flush(sh);
	if (tc->tcp != NULL)
		tcp_output(sh->conf.ns, tc->tcp);
}

/* The end of anything that may have written: the cork goes out. */
static void
flush_mine(struct tls_conn *tc)
{
	if (tc->sh->cork.owner == tc)
		cork_flush(tc->sh);
}

static uint32_t
t_space(void *ctx, void *t)
{
	struct tls_shard *sh = ctx;
	struct tls_conn *tc = t;

	if (tc->state != TC_OPEN || tc->bye_sent || tc->tcp == NULL ||
			tc->send_pending)
		return 0;
	return tls_record_room(tcp_send_space(sh->conf.ns, tc->tcp),
			tls_cork_held(&sh->cork, tc), tc->rec_max,
			tc->overhead);
}

static uint32_t
t_write(void *ctx, void *t, const void *data, uint32_t len)
{
	struct tls_shard *sh = ctx;
	struct tls_conn *tc = t;
	uint32_t room = t_space(ctx, t), done;

	if (len > room)
		len = room;
	if (len == 0)
		return 0;
	done = tls_cork_write(&sh->cork, tc, data, len, tc->rec_max, cork_send);
	if (sh->cork.len > 0 && !net_timer_armed(&sh->cork_flush))
		net_timer_arm(sh->conf.ns, &sh->cork_flush,
				net_now_ms(sh->conf.ns));
	return done;
}

static void
t_output(void *ctx, void *t)
{
	struct tls_shard *sh = ctx;
	struct tls_conn *tc = t;

	flush_mine(tc);
	if (tc->tcp != NULL)
		tcp_output(sh->conf.ns, tc->tcp);
}

/* close_notify, then FIN after the queued records. */
static void
t_close(void *ctx, void *t)
{
	struct tls_shard *sh = ctx;
	struct tls_conn *tc = t;

	flush_mine(tc);
	if (tc->tcp == NULL || tc->bye_sent)
		return;
	if (tc->state == TC_OPEN) {
		tls_mem_enter();
		gnutls_bye(tc->s, GNUTLS_SHUT_WR);
		tls_mem_leave();
		sh->st->close_notify_sent++;
	}
	tc->bye_sent = true;
	tcp_close(sh->conf.ns, tc->tcp);
}

static void
t_abort(void *ctx, void *t)
{
	struct tls_shard *sh = ctx;
	struct tls_conn *tc = t;

	tc->state = TC_CLOSED;
	if (tc->tcp != NULL)
		tcp_abort(sh->conf.ns, tc->tcp);
}

static void
t_rcv_space(void *ctx, void *t, uint32_t bytes)
{
	struct tls_shard *sh = ctx;
	struct tls_conn *tc = t;

	tc->rcv_space = bytes;
	if (tc->tcp == NULL || tc->state != TC_OPEN)
		return;
	if (tc->held == NULL)
		tcp_set_rcv_space(sh->conf.ns, tc->tcp, bytes);
	else if (bytes > 0)
		/* Not from inside HTTP's call: at the next poll. */
		net_timer_soon(sh->conf.ns, &tc->resume);
}

static uint64_t
t_now_ms(void *ctx)
{
	struct tls_shard *sh = ctx;

	return net_now_ms(sh->conf.ns);
}

static void
t_timer_arm(void *ctx, struct net_timer *tm, uint64_t at_ms)
{
	struct tls_shard *sh = ctx;

	net_timer_arm(sh->conf.ns, tm, at_ms);
}

static void
t_timer_cancel(void *ctx, struct net_timer *tm)
{
	struct tls_shard *sh = ctx;

	net_timer_cancel(sh->conf.ns, tm);
}

/* The access log's peer: the TCP connection's under the records. */
static void
t_peer(void *ctx, void *t, struct net_addr *addr, uint16_t *port)
{
	struct tls_conn *tc = t;

	RTE_SET_USED(ctx);
	if (tc->tcp != NULL) {
		tcp_peer(tc->tcp, addr, port);
		return;
	}
	memset(addr, 0, sizeof(*addr));
	*port = 0;
}

size_t
tls_server_name(gnutls_session_t s, char *buf, size_t cap)
{
	unsigned int type;
	size_t len = cap;

	if (gnutls_server_name_get(s, buf, &len, &type, 0) != 0 ||
			type != GNUTLS_NAME_DNS || len >= cap)
		return 0;
	buf[len] = '\0';
	return len;
}

/* Which site a request may name: the one its handshake's SNI chose. */
static size_t
t_server_name(void *ctx, void *t, char *buf, size_t cap)
{
	struct tls_conn *tc = t;

	RTE_SET_USED(ctx);
	return tls_server_name(tc->s, buf, cap);
}

/* HTTP/2's windows over TLS follow the TCP connection's round trip. */
static uint32_t
t_rtt_us(void *ctx, void *t)
{
	struct tls_conn *tc = t;

	RTE_SET_USED(ctx);
	return tc->tcp != NULL ? tcp_rtt_us(tc->tcp) : 0;
}

static const struct http_transport tls_transport = {
	.write = t_write,
	.space = t_space,
	.close = t_close,
	.abort = t_abort,
	.output = t_output,
	.rcv_space = t_rcv_space,
	.now_ms = t_now_ms,
	.timer_arm = t_timer_arm,
	.timer_cancel = t_timer_cancel,
	.peer = t_peer,
	.rtt_us = t_rtt_us,
	.server_name = t_server_name,
	.secure = true,
};

/* Records in --------------------------------------------------------------- */

/* A decrypted record to HTTP: given back, or held when HTTP took part. */
static void
deliver(struct tls_conn *tc, gnutls_packet_t pkt, uint32_t off)
{
	gnutls_datum_t d;
	uint32_t taken;

	gnutls_packet_get(pkt, &d, NULL);
	taken = off >= d.size ? 0 : http_conn_recv(tc->http, d.data + off,
			d.size - off);
	if (off + taken < d.size && tc->state == TC_OPEN && !tc->gone) {
		tc->held = pkt;
		tc->held_off = off + taken;
		tc->sh->st->records_held++;
		tcp_set_rcv_space(tc->sh->conf.ns, tc->tcp, 0);
		/* HTTP parses inside its call and may have said it has room
		 * again before the record was held (a gathered body writes
		 * nothing that would call later): the rest at the next poll. */
		if (taken > 0 && tc->rcv_space > 0)
			net_timer_soon(tc->sh->conf.ns, &tc->resume);
		return;
	}
	gnutls_packet_deinit(pkt);
}

/* Records out of the pull source while HTTP takes them. */
static void
read_records(struct tls_conn *tc)
{
	struct tls_stats *st = tc->sh->st;

	tls_mem_enter();
	while (tc->held == NULL && tc->state == TC_OPEN && !tc->gone &&
			!tc->eof) {
		gnutls_packet_t pkt = NULL;
		ssize_t n = gnutls_record_recv_packet(tc->s, &pkt);

		if (n > 0) {
			st->records_in++;
			st->bytes_in += (uint64_t)n;
			deliver(tc, pkt, 0);
			continue;
		}
		if (pkt != NULL)
			gnutls_packet_deinit(pkt);
		if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED)
			break;
		if (n == 0) {
			/* close_notify: nothing more comes; HTTP finishes
			 * what it was asked, then closes (with ours). */
			st->close_notify_received++;
			tc->eof = true;
			http_conn_peer_closed(tc->http);
			break;
		}
		if (n == GNUTLS_E_REHANDSHAKE) {
			/* A TLS 1.2 client asked to renegotiate: refused. */
			st->renegotiations_refused++;
			n = GNUTLS_E_UNEXPECTED_HANDSHAKE_PACKET;
		}
		tls_mem_leave();
		session_fail(tc, (int)n);
		return;
	}
	tls_mem_leave();
}

/* The pull source is (data, len) for the time of the call; returns what
 * GnuTLS took of it. */
static uint32_t
feed(struct tls_conn *tc, const uint8_t *data, uint32_t len)
{
	uint32_t n;

	tc->in = data;
	tc->in_len = len;
	tc->in_off = 0;
	read_records(tc);
	n = tc->in_off;
	tc->in = NULL;
	tc->in_len = tc->in_off = 0;
	return n;
}

static void
on_resume(struct net_timer *t)
{
	struct tls_conn *tc = container_of(t, struct tls_conn, resume);
	gnutls_packet_t pkt = tc->held;

	if (pkt == NULL || tc->state != TC_OPEN)
		return;
	tls_conn_hold(tc);
	tc->held = NULL;
	tls_mem_enter();
	deliver(tc, pkt, tc->held_off);
	tls_mem_leave();
	if (tc->held == NULL) {
		feed(tc, NULL, 0);	/* records GnuTLS read ahead, if any */
		if (tc->held == NULL && tc->tcp != NULL)
			tcp_set_rcv_space(tc->sh->conf.ns, tc->tcp,
					tc->rcv_space);
	}
	flush_mine(tc);
	if (tc->tcp != NULL)
		tcp_output(tc->sh->conf.ns, tc->tcp);
	tls_conn_unhold(tc);
}

void
tls_conn_established(struct tls_conn *tc)
{
	struct tls_shard *sh = tc->sh;
	struct tls_hs *hs = tc->hs;
	bool h2;

	net_timer_cancel(sh->conf.ns, &tc->deadline);
	h2 = tls_count_alpn(sh->st, tc->s);
	tls_record_sizes(tc->s, &tc->rec_max, &tc->overhead);
	tc->state = TC_OPEN;
	tc->rcv_space = 0;
	tc->http = http_conn_accept_via(sh->conf.http, tc, &tls_transport, sh,
			h2);
	if (tc->http == NULL) {
		/* No HTTP slot: refused like a full server, politely. */
		t_close(sh, tc);
		tc->state = TC_CLOSED;
		return;
	}
	/* What followed Finished in the staging is the first records. */
	feed(tc, hs->in + hs->in_off, hs->in_len - hs->in_off);
	tc->hs = NULL;
	tls_hs_free(sh, hs);
	if (tc->tcp != NULL && tc->held == NULL)
		tcp_set_rcv_space(sh->conf.ns, tc->tcp, tc->rcv_space);
	flush_mine(tc);
}

/* TCP's upcalls ----------------------------------------------------------- */

static int
on_accepted(void *ctx, struct tcp_conn *c)
{
	struct tls_shard *sh = ctx;
	struct tls_conn *tc = sh->free_conns;

	if (tc == NULL) {
		sh->st->refused++;
		return -1;
	}
	sh->free_conns = tc->free_next;
	tc->free_next = NULL;
	tc->tcp = c;
	tc->state = TC_HANDSHAKE;
	gen_adopt(sh);
	tc->gen = sh->gen;
	tc->gen->per[sh->conf.id].sessions++;
	sh->st->accepted++;
	sh->st->conns++;
	sh->st->handshaking++;
	tcp_set_app(c, tc);
	tcp_set_rcv_space(sh->conf.ns, c, TLS_HS_IN);
	net_timer_arm(sh->conf.ns, &tc->deadline, net_now_ms(sh->conf.ns) +
			sh->conf.cfg->conf.handshake_timeout_ms);
	return 0;
}

/* Handshake bytes are staged: the step that reads them may run
 * elsewhere, after the segment is gone. */
static uint32_t
hs_recv(struct tls_conn *tc, const uint8_t *data, uint32_t len)
{
	struct tls_shard *sh = tc->sh;
	struct tls_hs *hs = tc->hs;
	uint32_t n;

	if (hs == NULL) {
		hs = sh->free_hs;
		if (hs == NULL) {
			/* Every staging is busy (a flood of ClientHellos):
			 * not taken, TCP holds it, and the connection waits
			 * its turn for the next staging freed. */
			if (!tc->hs_waiting) {
				sh->st->hs_waits++;
				hs_wait_join(tc);
			}
			return 0;
		}
		sh->free_hs = hs->free_next;
		hs_take(tc, hs);
	}
	if (!tc->step_out)
		tls_hs_compact(hs);
	n = TLS_HS_IN - hs->in_len;
	if (n > len)
		n = len;
	memcpy(hs->in + hs->in_len, data, n);
	hs->in_len += n;
	if (n < len && !tc->step_out && hs->in_off == 0) {
		tls_hs_fail(tc, TLS_FAIL_too_large, false);
		return len;
	}
	tcp_set_rcv_space(sh->conf.ns, tc->tcp, TLS_HS_IN - hs->in_len);
	tls_hs_next(tc);
	return n;
}

static uint32_t
on_recv(void *ctx, struct tcp_conn *c, const uint8_t *data, uint32_t len)
{
	struct tls_conn *tc = tcp_app(c);
	uint32_t n;

	(void)ctx;
	tls_conn_hold(tc);
	switch (tc->state) {
	case TC_HANDSHAKE:
		n = hs_recv(tc, data, len);
		break;
	case TC_OPEN:
		/* A held record keeps the rest: not taken, TCP holds it
		 * and offers it again once the window (0 now) opens. */
		n = tc->held != NULL ? 0 : feed(tc, data, len);
		if (tc->state != TC_OPEN || tc->eof)
			n = len;	/* after close_notify: dropped */
		flush_mine(tc);
		break;
	default:
		n = len;	/* closing: dropped */
	}
	tls_conn_unhold(tc);
	return n;
}

static void
on_sent(void *ctx, struct tcp_conn *c)
{
	struct tls_conn *tc = tcp_app(c);

	(void)ctx;
	tls_conn_hold(tc);
	if (tc->state == TC_HANDSHAKE && tls_hs_flush(tc)) {
		tls_hs_next(tc);
	} else if (tc->state == TC_OPEN) {
		if (tc->send_pending) {
			tls_mem_enter();
			if (gnutls_record_send(tc->s, NULL, 0) != GNUTLS_E_AGAIN)
				tc->send_pending = false;
			tls_mem_leave();
		}
		if (!tc->send_pending)
			http_conn_writable(tc->http);
		flush_mine(tc);
	}
	tls_conn_unhold(tc);
}

static void
on_peer_closed(void *ctx, struct tcp_conn *c)
{
	struct tls_conn *tc = tcp_app(c);

	(void)ctx;
	tls_conn_hold(tc);
	if (tc->state == TC_HANDSHAKE && !tc->step_out)
		tls_hs_fail(tc, TLS_FAIL_peer_closed, false);
	else if (tc->state == TC_OPEN && !tc->eof)
		/* FIN without close_notify: a truncation, but HTTP's framing
		 * says whether anything was lost. */
		http_conn_peer_closed(tc->http);
	tls_conn_unhold(tc);
}

static void
on_closed(void *ctx, struct tcp_conn *c)
{
	struct tls_conn *tc = tcp_app(c);

	(void)ctx;
	tcp_set_app(c, NULL);
	tc->tcp = NULL;
	if (tc->http != NULL) {
		struct http_conn *hc = tc->http;

		tc->http = NULL;
		http_conn_closed(hc);
	}
	tc->gone = true;
	tls_conn_hold(tc);
	tls_conn_unhold(tc);	/* freed now, or when the step is back */
}

static const struct tcp_upcalls tls_upcalls = {
	.accepted = on_accepted,
	.recv = on_recv,
	.sent = on_sent,
	.peer_closed = on_peer_closed,
	.closed = on_closed,
};

/* The shard --------------------------------------------------------------- */

static void
on_tick(struct net_timer *t)
{
	struct tls_shard *sh = container_of(t, struct tls_shard, tick);

	gen_adopt(sh);
	net_timer_arm(sh->conf.ns, &sh->tick, net_now_ms(sh->conf.ns) +
			TLS_TICK_MS);
}

struct tls_shard *
tls_shard_create(const struct tls_shard_conf *conf)
{
	struct tls_shard *sh;
	uint32_t i;

	if (conf->ns == NULL || conf->http == NULL || conf->cfg == NULL ||
			conf->stats == NULL || conf->max_conns == 0 ||
			conf->max_handshakes == 0)
		return NULL;
	sh = aligned_alloc(64, RTE_ALIGN_CEIL(sizeof(*sh), 64));
	if (sh == NULL)
		return NULL;
	memset(sh, 0, sizeof(*sh));
	sh->conf = *conf;
	sh->st = conf->stats;
	sh->conns = calloc(conf->max_conns, sizeof(*sh->conns));
	/* Staging is touched only while a handshake runs: pages come as
	 * used. */
	sh->hs_mem = calloc(conf->max_handshakes, sizeof(*sh->hs_mem));
	if (sh->conns == NULL || sh->hs_mem == NULL) {
		tls_shard_destroy(sh);
		return NULL;
	}
	for (i = conf->max_conns; i-- > 0;) {
		struct tls_conn *tc = &sh->conns[i];

		tc->sh = sh;
		tc->free_next = sh->free_conns;
		sh->free_conns = tc;
		net_timer_init(&tc->deadline, on_deadline);
		net_timer_init(&tc->resume, on_resume);
	}
	for (i = conf->max_handshakes; i-- > 0;)
		tls_hs_free(sh, &sh->hs_mem[i]);
	net_timer_init(&sh->cork_flush, on_cork_flush);
	net_timer_init(&sh->tick, on_tick);
	gen_adopt(sh);
	net_timer_arm(sh->conf.ns, &sh->tick, net_now_ms(sh->conf.ns) +
			TLS_TICK_MS);
	return sh;
}

int
tls_shard_listen(struct tls_shard *sh, uint16_t port)
{
	return net_stack_listen(sh->conf.ns, port, &tls_upcalls, sh);
}

uint32_t
tls_shard_steps_out(const struct tls_shard *sh)
{
	return sh->steps_out;
}

void
tls_shard_destroy(struct tls_shard *sh)
{
	uint32_t i;

	if (sh == NULL)
		return;
	if (sh->conns != NULL)
		for (i = 0; i < sh->conf.max_conns; i++) {
			struct tls_conn *tc = &sh->conns[i];

			if (tc->state == TC_FREE)
				continue;
			tls_mem_enter();
			if (tc->held != NULL)
				gnutls_packet_deinit(tc->held);
			if (tc->s != NULL)
				gnutls_deinit(tc->s);
			tls_mem_leave();
		}
	if (sh->gen != NULL)
		tls_gen_release(sh->gen);
	free(sh->conns);
	free(sh->hs_mem);
	free(sh);
}
