/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The client side of lib/tls: a session over a TCP connection the
 * embedder opened and whose upcalls it keeps (a load generator's). The
 * server side's pieces serve it: the pull from a segment and the push
 * into TCP, the cork, the record sender and its room, the priority check,
 * ALPN's list, the failure reasons, the counters. What differs is the
 * handshake: a client runs it inline, at once, its input being the
 * segment itself (nothing staged), and its flights go straight to
 * tcp_write().
 *
 * In: a segment's bytes are GnuTLS's pull source for the time of
 * tls_client_recv(); each record decrypted goes to the recv upcall and
 * is given back at once (the embedder takes everything). Out: writes
 * gather in the context's cork buffer into records of up to 16 KB, for
 * one session at a time, until tls_client_push().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tls_conn.h"
#include "tls_mem.h"

enum { TCL_HANDSHAKE, TCL_OPEN, TCL_CLOSED };

struct tls_client_ctx {
	struct tls_client_conf conf;
	struct tls_stats *st;
	gnutls_certificate_credentials_t creds;	/* none trusted: no checks */
	gnutls_priority_t prio;
	struct tls_cork cork;		/* the embedder's small writes */
};

struct tls_client {
	struct tls_client_ctx *cx;
	struct tcp_conn *tcp;		/* NULL once TCP let it go */
	gnutls_session_t s;
	const struct tls_client_upcalls *up;
	void *arg;
	/* The pull source: a received segment, for the time of the call. */
	const uint8_t *in;
	uint32_t in_len;
	uint32_t in_off;
	uint32_t rec_max;
	uint16_t overhead;
	uint8_t state;
	uint8_t depth;			/* inside our own calls: no free */
	bool gone;			/* freed at the end of the call */
	bool send_pending;		/* GnuTLS holds a record for TCP */
	bool eof;			/* close_notify received */
	bool bye_sent;
};

struct tls_client_ctx *
tls_client_ctx_create(const struct tls_client_conf *conf, char *err,
		size_t errlen)
{
	struct tls_client_ctx *cx;

	if (conf->ns == NULL || conf->stats == NULL) {
		snprintf(err, errlen, "TLS client: no stack or counters");
		return NULL;
	}
	cx = calloc(1, sizeof(*cx));
	if (cx == NULL) {
		snprintf(err, errlen, "TLS client: out of memory");
		return NULL;
	}
	cx->conf = *conf;
	cx->st = conf->stats;
	if (tls_priority_load(conf->priority != NULL ? conf->priority :
			TLS_PRIORITY_DEFAULT, &cx->prio, err, errlen) != 0)
		goto fail;
	if (gnutls_certificate_allocate_credentials(&cx->creds) < 0) {
		cx->creds = NULL;
		snprintf(err, errlen, "TLS client: out of memory");
		goto fail;
	}
	cx->conf.priority = NULL;	/* the caller's string: not kept */
	return cx;
fail:
	tls_client_ctx_destroy(cx);
	return NULL;
}

void
tls_client_ctx_destroy(struct tls_client_ctx *cx)
{
	if (cx == NULL)
		return;
	if (cx->creds != NULL)
		gnutls_certificate_free_credentials(cx->creds);
	if (cx->prio != NULL)
		gnutls_priority_deinit(cx->prio);
	free(cx);
}

/* Sessions ----------------------------------------------------------------- */

static ssize_t
client_pull(gnutls_transport_ptr_t p, void *buf, size_t len)
{
	struct tls_client *tc = p;

	return tls_pull_from(tc->s, tc->in, tc->in_len, &tc->in_off, buf, len);
}

/* Flights and records alike go straight to TCP: the owner runs all. */
static ssize_t
client_push(gnutls_transport_ptr_t p, const void *data, size_t len)
{
	struct tls_client *tc = p;

	return tls_push_to(tc->s, tc->cx->conf.ns, tc->tcp, data, len);
}

static void
hold(struct tls_client *tc)
{
	tc->depth++;
}

static void
unhold(struct tls_client *tc)
{
	struct tls_client_ctx *cx = tc->cx;

	if (--tc->depth > 0 || !tc->gone)
		return;
	tls_cork_drop(&cx->cork, tc);
	if (tc->state == TCL_HANDSHAKE)
		cx->st->handshaking--;
	cx->st->conns--;
	tls_mem_enter();
	gnutls_deinit(tc->s);
	tls_mem_leave();
	free(tc);
}

/* The session ends: GnuTLS's alert for rc queued, the embedder told. */
static void
fail(struct tls_client *tc, int rc, enum tls_fail_reason why, bool handshake)
{
	struct tls_stats *st = tc->cx->st;

	if (handshake) {
		st->failed[why]++;
		st->handshaking--;
	} else {
		st->errors++;
	}
	tc->state = TCL_CLOSED;
	if (tc->tcp != NULL && rc < 0) {
		tls_mem_enter();
		gnutls_alert_send_appropriate(tc->s, rc);
		tls_mem_leave();
	}
	tc->up->failed(tc->arg, why, handshake);
}

static void
established(struct tls_client *tc)
{
	struct tls_stats *st = tc->cx->st;
	bool h2;

	tc->state = TCL_OPEN;
	tls_count_established(st, tc->s);
	h2 = tls_count_alpn(st, tc->s);
	tls_record_sizes(tc->s, &tc->rec_max, &tc->overhead);
	if (tc->up->established(tc->arg, h2) < 0)
		tc->state = TCL_CLOSED;	/* the embedder closes it */
}

/* The handshake as far as the input goes; a warning alert is let pass
 * (a few of them: a peer that sends nothing else is refused). */
static void
handshake(struct tls_client *tc)
{
	unsigned int tries = 0;
	int rc;

	do
		rc = gnutls_handshake(tc->s);
	while (rc < 0 && rc != GNUTLS_E_AGAIN && !gnutls_error_is_fatal(rc) &&
			++tries < TLS_HS_STEPS_MAX);
	if (rc == 0)
		established(tc);
	else if (rc != GNUTLS_E_AGAIN)
		fail(tc, rc, tls_fail_reason_of(rc), true);
}

struct tls_client *
tls_client_new(struct tls_client_ctx *cx, struct tcp_conn *tcp,
		const char *sni, const struct tls_client_upcalls *up, void *arg)
{
	struct tls_client *tc = calloc(1, sizeof(*tc));
	int rc;

	if (tc == NULL)
		return NULL;
	rc = gnutls_init(&tc->s, GNUTLS_CLIENT | GNUTLS_NONBLOCK);
	if (rc < 0) {
		free(tc);
		return NULL;
	}
	rc = gnutls_priority_set(tc->s, cx->prio);
	if (rc == 0)
		rc = gnutls_credentials_set(tc->s, GNUTLS_CRD_CERTIFICATE,
				cx->creds);
	if (rc == 0)
		rc = cx->conf.h2 ? gnutls_alpn_set_protocols(tc->s,
				tls_alpn_protos, 2, 0) :
			gnutls_alpn_set_protocols(tc->s, &tls_alpn_protos[1],
				1, 0);
	if (rc == 0 && sni != NULL)
		rc = gnutls_server_name_set(tc->s, GNUTLS_NAME_DNS, sni,
				strlen(sni));
	if (rc < 0) {
		gnutls_deinit(tc->s);
		free(tc);
		return NULL;
	}
	tc->cx = cx;
	tc->tcp = tcp;
	tc->up = up;
	tc->arg = arg;
	tc->state = TCL_HANDSHAKE;
	gnutls_transport_set_ptr(tc->s, tc);
	gnutls_transport_set_pull_function(tc->s, client_pull);
	gnutls_transport_set_push_function(tc->s, client_push);
	cx->st->conns++;
	cx->st->handshaking++;
	hold(tc);
	handshake(tc);	/* the ClientHello */
	unhold(tc);
	return tc;
}

/* Records in --------------------------------------------------------------- */

static void
read_records(struct tls_client *tc)
{
	struct tls_stats *st = tc->cx->st;
	unsigned int stalls = 0;

	tls_mem_enter();
	while (tc->state == TCL_OPEN && !tc->gone && !tc->eof) {
		uint32_t before = tc->in_off;
		gnutls_packet_t pkt = NULL;
		ssize_t n = gnutls_record_recv_packet(tc->s, &pkt);
		gnutls_datum_t d;
		int rc;

		if (n > 0) {
			st->records_in++;
			st->bytes_in += (uint64_t)n;
			gnutls_packet_get(pkt, &d, NULL);
			rc = tc->up->recv(tc->arg, d.data, d.size);
			gnutls_packet_deinit(pkt);
			if (rc < 0)
				break;
			continue;
		}
		if (pkt != NULL)
			gnutls_packet_deinit(pkt);
		/* After a post-handshake message (a session ticket) GnuTLS
		 * says "again" with bytes of the segment left: they are read
		 * now, as the segment is not kept (twice without progress:
		 * GnuTLS wants no more). */
		if ((n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) &&
				tc->in_off < tc->in_len &&
				(tc->in_off > before || stalls++ < 2))
			continue;
		if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED)
			break;
		if (n == 0) {
			st->close_notify_received++;
			tc->eof = true;
			tc->up->peer_closed(tc->arg);
			break;
		}
		if (n == GNUTLS_E_REHANDSHAKE) {
			/* A TLS 1.2 server asked to renegotiate: declined,
			 * the connection goes on. */
			st->renegotiations_refused++;
			gnutls_alert_send(tc->s, GNUTLS_AL_WARNING,
					GNUTLS_A_NO_RENEGOTIATION);
			continue;
		}
		tls_mem_leave();
		fail(tc, (int)n, TLS_FAIL_bad_record, false);
		return;
	}
	tls_mem_leave();
}

void
tls_client_recv(struct tls_client *tc, const uint8_t *data, uint32_t len)
{
	hold(tc);
	tc->in = data;
	tc->in_len = len;
	tc->in_off = 0;
	if (tc->state == TCL_HANDSHAKE)
		handshake(tc);
	/* What followed the server's Finished is records. */
	read_records(tc);
	tc->in = NULL;
	tc->in_len = tc->in_off = 0;
	unhold(tc);
}

/* Records out -------------------------------------------------------------- */

/* The cork's sender: n bytes encrypted into TCP. */
static bool
cork_send(void *owner, const uint8_t *p, uint32_t n)
{
	struct tls_client *tc = owner;
	int rc;

	if (tc->state != TCL_OPEN)
		return false;
	rc = tls_record_send(tc->s, tc->cx->st, p, n, &tc->send_pending);
	if (rc < 0)
		fail(tc, rc, TLS_FAIL_bad_record, false);
	return tc->state == TCL_OPEN;
}

uint32_t
tls_client_space(struct tls_client *tc)
{
	struct tls_client_ctx *cx = tc->cx;

	if (tc->state != TCL_OPEN || tc->bye_sent || tc->tcp == NULL ||
			tc->send_pending)
		return 0;
	return tls_record_room(tcp_send_space(cx->conf.ns, tc->tcp),
			tls_cork_held(&cx->cork, tc), tc->rec_max,
			tc->overhead);
}

uint32_t
tls_client_write(struct tls_client *tc, const void *data, uint32_t len)
{
	struct tls_client_ctx *cx = tc->cx;
	struct tls_client *other = cx->cork.owner;
	uint32_t room = tls_client_space(tc), done;

	if (len > room)
		len = room;
	if (len == 0)
		return 0;
	hold(tc);
	if (other != NULL && other != tc) {
		/* Another session's record first: it was not pushed. */
		tls_cork_flush(&cx->cork, cork_send);
		if (other->tcp != NULL)
			tcp_output(cx->conf.ns, other->tcp);
	}
	done = tls_cork_write(&cx->cork, tc, data, len, tc->rec_max, cork_send);
	unhold(tc);
	return done;
}

void
tls_client_push(struct tls_client *tc)
{
	hold(tc);
	if (tc->cx->cork.owner == tc)
		tls_cork_flush(&tc->cx->cork, cork_send);
	if (tc->tcp != NULL)
		tcp_output(tc->cx->conf.ns, tc->tcp);
	unhold(tc);
}

void
tls_client_sent(struct tls_client *tc)
{
	hold(tc);
	if (tc->state == TCL_HANDSHAKE &&
			gnutls_record_get_direction(tc->s) == 1) {
		handshake(tc);	/* a flight TCP had no room for */
	} else if (tc->state == TCL_OPEN && tc->send_pending) {
		tls_mem_enter();
		if (gnutls_record_send(tc->s, NULL, 0) != GNUTLS_E_AGAIN)
			tc->send_pending = false;
		tls_mem_leave();
	}
	unhold(tc);
}

bool
tls_client_peer_closed(struct tls_client *tc)
{
	bool ended = tc->state == TCL_HANDSHAKE;

	hold(tc);
	if (ended)
		fail(tc, 0, TLS_FAIL_peer_closed, true);
	unhold(tc);
	return ended;
}

void
tls_client_close(struct tls_client *tc)
{
	struct tls_client_ctx *cx = tc->cx;

	hold(tc);
	if (cx->cork.owner == tc)
		tls_cork_flush(&cx->cork, cork_send);
	if (tc->tcp != NULL && !tc->bye_sent) {
		if (tc->state == TCL_OPEN) {
			tls_mem_enter();
			gnutls_bye(tc->s, GNUTLS_SHUT_WR);
			tls_mem_leave();
			cx->st->close_notify_sent++;
		}
		tc->bye_sent = true;
		tcp_close(cx->conf.ns, tc->tcp);
	}
	unhold(tc);
}

void
tls_client_free(struct tls_client *tc)
{
	tc->tcp = NULL;
	tc->gone = true;
	hold(tc);
	unhold(tc);
}

bool
tls_client_established(const struct tls_client *tc)
{
	return tc->state == TCL_OPEN;
}

const char *
tls_client_version(const struct tls_client *tc)
{
	if (tc->state != TCL_OPEN)
		return NULL;
	return gnutls_protocol_get_name(gnutls_protocol_get_version(tc->s));
}

const char *
tls_client_cipher(const struct tls_client *tc)
{
	if (tc->state != TCL_OPEN)
		return NULL;
	return gnutls_ciphersuite_get(tc->s);
}
