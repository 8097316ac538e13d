/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An endpoint: the UDP port's datagrams to their connections, by the
 * connection ID this server issued (the connection's slot inside it,
 * masked by a keyed hash of the ID's random part: not a readable field)
 * or, before the client has learnt one, by its first destination ID;
 * an Initial for none begins a connection, a version not spoken gets
 * Version Negotiation, anything else is counted and dropped. What a
 * connection sends goes out as ngtcp2 writes it, paced by ngtcp2, and
 * its next deadline is a timer of the shard's wheel.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gnutls/crypto.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include "ewyk_tls.h"
#include "quic_priv.h"

/* QUIC takes TLS 1.3 only, without the middlebox compatibility mode
 * (RFC 9001 8.4), AEAD suites of the TCP default. */
#define QUIC_PRIORITY "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:" \
	"+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:-GROUP-ALL:" \
	"+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1:" \
	"%DISABLE_TLS13_COMPAT_MODE"
/* How long a Retry's token is good for: a round trip, and then some. */
#define QUIC_RETRY_TOKEN_LIFE (10 * NGTCP2_SECONDS)
/* A NEW_TOKEN's: the client's next visit, within a day (and within one
 * rotation of the keys, a reload). */
#define QUIC_NEW_TOKEN_LIFE (24 * 3600 * NGTCP2_SECONDS)
/* Datagrams one flush may send before the others get their turn. */
#define QUIC_BURST 64

#define NS_PER_MS 1000000ull

uint64_t
quic_now_ns(const struct quic_endpoint *e)
{
	return net_now_us(e->conf.ns) * 1000;
}

/* The mask of a connection ID's slot: a keyed hash of its random part. */
static uint32_t
slot_mask(const struct quic_endpoint *e, const uint8_t *cid)
{
	uint8_t digest[32];
	uint32_t m;

	gnutls_hmac_fast(GNUTLS_MAC_SHA256, e->secret, QUIC_SECRET_LEN,
			cid + 4, QUIC_CID_LEN - 4, digest);
	memcpy(&m, digest, 4);
	return m;
}

int
quic_cid_new(struct quic_conn *c, ngtcp2_cid *cid, uint8_t *token)
{
	struct quic_endpoint *e = c->e;
	uint32_t v;

	if (c->ncids == QUIC_CIDS_MAX)
		return -1;
	cid->datalen = QUIC_CID_LEN;
	if (gnutls_rnd(GNUTLS_RND_NONCE, cid->data + 4, QUIC_CID_LEN - 4) != 0)
		return -1;
	v = c->slot ^ slot_mask(e, cid->data);
	memcpy(cid->data, &v, 4);
	if (token != NULL && ngtcp2_crypto_generate_stateless_reset_token(token,
			e->secret, QUIC_SECRET_LEN, cid) != 0)
		return -1;
	memcpy(c->cids[c->ncids++], cid->data, QUIC_CID_LEN);
	return 0;
}

void
quic_cid_forget(struct quic_conn *c, const ngtcp2_cid *cid)
{
	uint8_t i;

	for (i = 0; i < c->ncids; i++)
		if (cid->datalen == QUIC_CID_LEN &&
				memcmp(c->cids[i], cid->data, QUIC_CID_LEN) == 0) {
			memcpy(c->cids[i], c->cids[--c->ncids], QUIC_CID_LEN);
			return;
		}
}

/* The connection a destination ID names, or NULL. */
static struct quic_conn *
conn_find(struct quic_endpoint *e, const uint8_t *dcid, size_t len)
{
	struct quic_conn *c;
	uint32_t slot;
	uint8_t k;

	if (len == QUIC_CID_LEN) {
		memcpy(&slot, dcid, 4);
		slot ^= slot_mask(e, dcid);
		if (slot < e->conf.max_conns && e->conns[slot].live) {
			c = &e->conns[slot];
			for (k = 0; k < c->ncids; k++)
				if (memcmp(c->cids[k], dcid, len) == 0)
					return c;
		}
	}
	/* The client's own first ID, until it takes one of ours: among the
	 * handshakes under way only (Retry bounds them under a flood). */
	for (c = e->handshaking; c != NULL; c = c->hs_next)
		if (c->odcid.datalen == len &&
				memcmp(c->odcid.data, dcid, len) == 0)
			return c;
	return NULL;
}

/* A datagram out, counted; true when lib/net took it. */
static bool
udp_out(struct quic_endpoint *e, const struct net_udp_dgram *d)
{
	struct quic_stats *st = e->conf.stats;

	if (net_udp_send(e->conf.ns, d) != 0) {
		st->send_errors++;
		return false;
	}
	st->dgrams_out++;
	st->bytes_out += d->len;
	return true;
}

const char *
quic_date(struct quic_endpoint *e, size_t *len)
{
	time_t now = time(NULL);
	struct tm tm;

	if (now != e->date_sec) {
		e->date_sec = now;
		gmtime_r(&now, &tm);
		e->date_len = strftime(e->date, sizeof(e->date),
				"%a, %d %b %Y %H:%M:%S GMT", &tm);
	}
	*len = e->date_len;
	return e->date;
}

/* Puts a datagram of c's out on the path ngtcp2 chose. */
static void
send_dgram(struct quic_conn *c, const ngtcp2_path *p, uint8_t ecn,
		const uint8_t *data, size_t len)
{
	struct net_udp_dgram d = c->path;
	const struct sockaddr *l = (const struct sockaddr *)p->local.addr;
	const struct sockaddr *r = (const struct sockaddr *)p->remote.addr;

	if (r->sa_family == AF_INET6) {
		const struct sockaddr_in6 *l6 = (const void *)l;
		const struct sockaddr_in6 *r6 = (const void *)r;

		memcpy(d.local.v6, &l6->sin6_addr, 16);
		d.local_port = ntohs(l6->sin6_port);
		d.peer.family = NET_AF_INET6;
		d.peer.ip = net_ip6((const uint8_t *)&r6->sin6_addr);
		d.peer_port = ntohs(r6->sin6_port);
	} else {
		const struct sockaddr_in *l4 = (const void *)l;
		const struct sockaddr_in *r4 = (const void *)r;

		d.local = net_ip4(l4->sin_addr.s_addr);
		d.local_port = ntohs(l4->sin_port);
		d.peer.family = NET_AF_INET;
		d.peer.ip = net_ip4(r4->sin_addr.s_addr);
		d.peer_port = ntohs(r4->sin_port);
	}
	d.ecn = ecn;
	d.data = data;
	d.len = (uint16_t)len;
	udp_out(c->e, &d);
}

static void
arm(struct quic_conn *c, uint64_t at_ns)
{
	if (at_ns == UINT64_MAX)
		net_timer_cancel(c->e->conf.ns, &c->timer);
	else
		net_timer_arm(c->e->conf.ns, &c->timer,
				(at_ns + NS_PER_MS - 1) / NS_PER_MS);
}

/* The closing or draining period: three probe timeouts (RFC 9000 10.2). */
static void
close_later(struct quic_conn *c)
{
	c->closing = true;
	arm(c, quic_now_ns(c->e) + 3 * ngtcp2_conn_get_pto(c->qc));
}

void
quic_conn_fail(struct quic_conn *c, int liberr)
{
	ngtcp2_connection_close_error cc;

	if (c->closing)
		return;
	if (liberr == NGTCP2_ERR_DRAINING) {
		close_later(c);
		return;
	}
	if (liberr == NGTCP2_ERR_DROP_CONN || liberr == NGTCP2_ERR_RETRY) {
		quic_conn_free(c);
		return;
	}
	if (liberr == NGTCP2_ERR_CALLBACK_FAILURE && c->h3err != 0)
		ngtcp2_connection_close_error_set_application_error(&cc,
				c->h3err, NULL, 0);
	else
		ngtcp2_connection_close_error_set_transport_error_liberr(&cc,
				liberr, NULL, 0);
	quic_conn_close(c, &cc);
}

void
quic_conn_close(struct quic_conn *c, const ngtcp2_connection_close_error *cc)
{
	ngtcp2_path_storage ps;
	ngtcp2_pkt_info pi = { 0 };
	ngtcp2_ssize n;

	if (c->closing)
		return;
	ngtcp2_path_storage_zero(&ps);
	n = ngtcp2_conn_write_connection_close(c->qc, &ps.path, &pi, c->e->out,
			sizeof(c->e->out), cc, quic_now_ns(c->e));
	if (n > 0)
		send_dgram(c, &ps.path, pi.ecn, c->e->out, (size_t)n);
	close_later(c);
}

void
quic_conn_flush(struct quic_conn *c)
{
	struct quic_endpoint *e = c->e;
	uint64_t ts = quic_now_ns(e);
	ngtcp2_path_storage ps;
	unsigned int sent = 0;

	/* Inside ngtcp2's read (a body read woken by its bytes): not now,
	 * ngtcp2 forbids it; the read's own flush follows. */
	if (c->closing || c->reading)
		return;
	if (e->draining && c->h3 != NULL && c->streams == NULL) {
		quic_conn_end(c);	/* its last stream is done */
		return;
	}
	ngtcp2_path_storage_zero(&ps);
	while (sent < QUIC_BURST) {
		uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE;
		ngtcp2_pkt_info pi = { 0 };
		nghttp3_vec vec[16];
		nghttp3_ssize nv = 0;
		ngtcp2_ssize n, taken = -1;
		int64_t sid = -1;
		int fin = 0;

		if (c->h3 != NULL && ngtcp2_conn_get_max_data_left(c->qc) > 0) {
			nv = nghttp3_conn_writev_stream(c->h3, &sid, &fin, vec,
					QUIC_DIM(vec));
			if (nv < 0) {
				c->h3err = nghttp3_err_infer_quic_app_error_code(
						(int)nv);
				quic_conn_fail(c, NGTCP2_ERR_CALLBACK_FAILURE);
				return;
			}
		}
		if (fin)
			flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
		n = ngtcp2_conn_writev_stream(c->qc, &ps.path, &pi, e->out,
				sizeof(e->out), &taken, flags, sid,
				(const ngtcp2_vec *)vec, (size_t)nv, ts);
		if (n < 0) {
			if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
				nghttp3_conn_block_stream(c->h3, sid);
				continue;
			}
			if (n == NGTCP2_ERR_STREAM_SHUT_WR) {
				nghttp3_conn_shutdown_stream_write(c->h3, sid);
				continue;
			}
			if (n == NGTCP2_ERR_WRITE_MORE) {
				if (nghttp3_conn_add_write_offset(c->h3, sid,
						(size_t)taken) != 0)
					break;
				continue;
			}
			quic_conn_fail(c, (int)n);
			return;
		}
		if (taken >= 0 && nghttp3_conn_add_write_offset(c->h3, sid,
				(size_t)taken) != 0) {
			quic_conn_fail(c, NGTCP2_ERR_INTERNAL);
			return;
		}
		if (n == 0)
			break;
		send_dgram(c, &ps.path, pi.ecn, e->out, (size_t)n);
		sent++;
	}
	ngtcp2_conn_update_pkt_tx_time(c->qc, ts);
	/* A burst cut short goes on at the next millisecond at the latest. */
	arm(c, sent == QUIC_BURST ?
			QUIC_MIN(ngtcp2_conn_get_expiry(c->qc), ts + NS_PER_MS) :
			ngtcp2_conn_get_expiry(c->qc));
}

static void
on_timer(struct net_timer *t)
{
	struct quic_conn *c = (struct quic_conn *)((char *)t -
			offsetof(struct quic_conn, timer));
	int rc;

	if (c->closing) {
		quic_conn_free(c);
		return;
	}
	rc = ngtcp2_conn_handle_expiry(c->qc, quic_now_ns(c->e));
	if (rc == NGTCP2_ERR_IDLE_CLOSE || rc == NGTCP2_ERR_HANDSHAKE_TIMEOUT) {
		if (rc == NGTCP2_ERR_IDLE_CLOSE)
			c->e->conf.stats->idle_timeouts++;
		else
			c->e->conf.stats->handshake_timeouts++;
		quic_conn_free(c);	/* silently (RFC 9000 10.1) */
		return;
	}
	if (rc != 0) {
		quic_conn_fail(c, rc);
		return;
	}
	quic_conn_flush(c);
}

void
quic_conn_handshake_done(struct quic_conn *c)
{
	c->handshake_done = true;
	*c->hs_pprev = c->hs_next;
	if (c->hs_next != NULL)
		c->hs_next->hs_pprev = c->hs_pprev;
}

void
quic_conn_free(struct quic_conn *c)
{
	struct quic_endpoint *e = c->e;
	struct quic_stats *st = e->conf.stats;

	quic_h3_streams_end(c);
	net_timer_cancel(e->conf.ns, &c->timer);
	if (!c->handshake_done) {
		quic_conn_handshake_done(c);	/* off the list */
		st->handshaking--;
		st->failed++;
	}
	quic_conn_fini(c);
	c->live = false;
	c->gen++;
	st->conns--;
	st->closed++;
	e->free_slots[e->nfree++] = c->slot;
}

/* A packet written in e->out for no connection, back to d's sender;
 * true when sent. */
static bool
reply(struct quic_endpoint *e, const struct net_udp_dgram *d, ngtcp2_ssize n)
{
	struct net_udp_dgram out = *d;

	if (n <= 0)
		return false;
	out.data = e->out;
	out.len = (uint16_t)n;
	return udp_out(e, &out);
}

/* Version Negotiation for a client that spoke none of ours (RFC 9000 6). */
static void
negotiate(struct quic_endpoint *e, const struct net_udp_dgram *d,
		const ngtcp2_version_cid *vc)
{
	static const uint32_t versions[] = { NGTCP2_PROTO_VER_V1 };
	uint8_t unused;

	if (gnutls_rnd(GNUTLS_RND_NONCE, &unused, 1) == 0 && reply(e, d,
			ngtcp2_pkt_write_version_negotiation(e->out,
			sizeof(e->out), unused, vc->scid, vc->scidlen,
			vc->dcid, vc->dcidlen, versions, 1)))
		e->conf.stats->version_negotiations++;
}

/* A Retry: the client comes back with the token, which only this
 * endpoint's secret makes, for its address (RFC 9000 8.1.2). */
static void
retry(struct quic_endpoint *e, const struct net_udp_dgram *d,
		const ngtcp2_pkt_hd *hd)
{
	uint8_t token[NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN], key[QUIC_SECRET_LEN];
	struct sockaddr_storage local, remote;
	ngtcp2_cid scid = { .datalen = QUIC_CID_LEN };
	ngtcp2_path path;
	ngtcp2_ssize n;

	if (gnutls_rnd(GNUTLS_RND_NONCE, scid.data, QUIC_CID_LEN) != 0 ||
			!quic_tokens_key(e->conf.tokens, 0, key))
		return;
	quic_path_of(d, &path, &local, &remote);
	n = ngtcp2_crypto_generate_retry_token(token, key,
			QUIC_SECRET_LEN, hd->version, path.remote.addr,
			path.remote.addrlen, &scid, &hd->dcid, quic_now_ns(e));
	if (n > 0 && reply(e, d, ngtcp2_crypto_write_retry(e->out,
			sizeof(e->out), hd->version, &hd->scid, &scid,
			&hd->dcid, token, (size_t)n)))
		e->conf.stats->retries++;
}

/* Whether hd's token is one these keys made (the newest, or the one
 * before), for d's address, and not stale: a Retry's (the client's first
 * destination ID then in odcid) or a NEW_TOKEN's. */
static bool
token_good(struct quic_endpoint *e, const struct net_udp_dgram *d,
		const ngtcp2_pkt_hd *hd, ngtcp2_cid *odcid)
{
	bool retry = hd->token.base[0] == NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY;
	struct sockaddr_storage local, remote;
	uint8_t key[QUIC_SECRET_LEN];
	ngtcp2_path path;
	unsigned int age;

	quic_path_of(d, &path, &local, &remote);
	for (age = 0; quic_tokens_key(e->conf.tokens, age, key); age++)
		if ((retry ? ngtcp2_crypto_verify_retry_token(odcid,
				hd->token.base, hd->token.len, key,
				QUIC_SECRET_LEN, hd->version, path.remote.addr,
				path.remote.addrlen, &hd->dcid,
				QUIC_RETRY_TOKEN_LIFE, quic_now_ns(e)) :
				ngtcp2_crypto_verify_regular_token(hd->token.base,
				hd->token.len, key, QUIC_SECRET_LEN,
				path.remote.addr, path.remote.addrlen,
				QUIC_NEW_TOKEN_LIFE, quic_now_ns(e))) == 0)
			return true;
	return false;
}

void
quic_new_token(struct quic_conn *c)
{
	uint8_t token[NGTCP2_CRYPTO_MAX_REGULAR_TOKENLEN], key[QUIC_SECRET_LEN];
	struct sockaddr_storage local, remote;
	ngtcp2_path path;
	ngtcp2_ssize n;

	if (!quic_tokens_key(c->e->conf.tokens, 0, key))
		return;
	quic_path_of(&c->path, &path, &local, &remote);
	n = ngtcp2_crypto_generate_regular_token(token, key, QUIC_SECRET_LEN,
			path.remote.addr, path.remote.addrlen,
			quic_now_ns(c->e));
	if (n > 0 && ngtcp2_conn_submit_new_token(c->qc, token,
			(size_t)n) == 0)
		c->e->conf.stats->new_tokens++;
}

static struct quic_conn *
accept_conn(struct quic_endpoint *e, const struct net_udp_dgram *d,
		const ngtcp2_pkt_hd *hd, const ngtcp2_cid *odcid)
{
	struct quic_stats *st = e->conf.stats;
	struct quic_conn *c;

	if (e->nfree == 0) {
		st->refused++;
		return NULL;
	}
	if (e->creds_held == NULL ||
			!tls_creds_current(e->conf.tls, e->creds_held)) {
		if (e->creds_held != NULL)
			tls_creds_release(e->creds_held);
		e->creds = tls_creds_take(e->conf.tls, e->conf.id,
				&e->creds_held);
	}
	if (e->creds == NULL) {
		st->refused++;
		return NULL;
	}
	c = &e->conns[e->free_slots[e->nfree - 1]];
	c->ncids = 0;
	c->streams = NULL;
	c->handshake_done = false;
	c->closing = false;
	c->h3err = 0;
	c->path = *d;
	c->path.data = NULL;
	net_timer_init(&c->timer, on_timer);
	if (quic_conn_start(c, d, hd, odcid) != 0) {
		st->refused++;
		return NULL;
	}
	e->nfree--;
	c->live = true;
	c->hs_next = e->handshaking;
	if (e->handshaking != NULL)
		e->handshaking->hs_pprev = &c->hs_next;
	c->hs_pprev = &e->handshaking;
	e->handshaking = c;
	st->accepted++;
	st->conns++;
	st->handshaking++;
	return c;
}

static void
on_dgram(void *ctx, struct net_stack *ns, const struct net_udp_dgram *d)
{
	struct quic_endpoint *e = ctx;
	struct quic_stats *st = e->conf.stats;
	struct sockaddr_storage local, remote;
	ngtcp2_pkt_info pi = { .ecn = d->ecn };
	ngtcp2_version_cid vc;
	struct quic_conn *c;
	ngtcp2_path path;
	int rc;

	(void)ns;
	st->dgrams_in++;
	st->bytes_in += d->len;
	if (d->len == 0) {	/* ngtcp2 asserts there is a byte */
		st->dropped++;
		return;
	}
	rc = ngtcp2_pkt_decode_version_cid(&vc, d->data, d->len, QUIC_CID_LEN);
	if (rc == NGTCP2_ERR_VERSION_NEGOTIATION) {
		negotiate(e, d, &vc);
		return;
	}
	if (rc != 0) {
		st->dropped++;
		return;
	}
	c = conn_find(e, vc.dcid, vc.dcidlen);
	if (c == NULL) {
		ngtcp2_cid odcid;
		ngtcp2_pkt_hd hd;

		if (e->draining || ngtcp2_accept(&hd, d->data, d->len) != 0 ||
				hd.type == NGTCP2_PKT_0RTT) {
			st->dropped++;
			return;
		}
		switch (hd.token.len > 0 ? hd.token.base[0] : 0) {
		case NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY:
			if (!token_good(e, d, &hd, &odcid)) {
				st->bad_tokens++;
				return;
			}
			break;
		case NGTCP2_CRYPTO_TOKEN_MAGIC_REGULAR:
			if (token_good(e, d, &hd, NULL)) {
				st->tokens_accepted++;
				break;
			}
			/* Stale, or another server's: as if it had none. */
			st->bad_tokens++;
			hd.token.len = 0;
			/* fall through */
		case 0:
			if (st->handshaking >= e->conf.retry_threshold) {
				retry(e, d, &hd);
				return;
			}
			break;
		default:
			st->bad_tokens++;
			return;
		}
		c = accept_conn(e, d, &hd, hd.token.len > 0 &&
				hd.token.base[0] == NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY ?
				&odcid : NULL);
		if (c == NULL)
			return;
	}
	if (c->closing) {
		st->dropped++;
		return;
	}
	c->path.port = d->port;
	quic_path_of(d, &path, &local, &remote);
	c->reading = true;
	rc = ngtcp2_conn_read_pkt(c->qc, &path, &pi, d->data, d->len,
			quic_now_ns(e));
	c->reading = false;
	if (rc != 0) {
		quic_conn_fail(c, rc);
		return;
	}
	quic_conn_flush(c);
}

struct quic_endpoint *
quic_endpoint_create(const struct quic_conf *conf)
{
	struct quic_endpoint *e;
	uint32_t i;
	int rc;

	if (conf->ns == NULL || conf->tls == NULL || conf->request == NULL ||
			conf->released == NULL || conf->stats == NULL ||
			conf->max_conns == 0 || conf->max_conns >= QUIC_ORIGIN) {
		fprintf(stderr, "quic: an endpoint needs a stack, "
				"certificates, hooks and connections\n");
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->conf = *conf;
	e->conns = calloc(conf->max_conns, sizeof(*e->conns));
	e->free_slots = calloc(conf->max_conns, sizeof(*e->free_slots));
	if (e->conns == NULL || e->free_slots == NULL)
		goto fail;
	for (i = 0; i < conf->max_conns; i++) {
		e->conns[i].e = e;
		e->conns[i].slot = i;
		e->free_slots[i] = conf->max_conns - 1 - i;
	}
	e->nfree = conf->max_conns;
	if (e->conf.conn_mem == 0)
		e->conf.conn_mem = QUIC_CONN_MEM_DEFAULT;
	if (e->conf.tokens == NULL) {
		e->own_tokens = quic_tokens_new();
		e->conf.tokens = e->own_tokens;
	}
	if (e->conf.tokens == NULL ||
			gnutls_rnd(GNUTLS_RND_KEY, e->secret, sizeof(e->secret)) != 0 ||
			gnutls_priority_init(&e->prio, QUIC_PRIORITY, NULL) < 0)
		goto fail;
	rc = net_udp_bind(conf->ns, conf->port, on_dgram, e);
	if (rc != 0) {
		fprintf(stderr, "quic: UDP port %u: %s\n", conf->port,
				strerror(-rc));
		gnutls_priority_deinit(e->prio);
		goto fail;
	}
	return e;
fail:
	quic_tokens_free(e->own_tokens);
	free(e->conns);
	free(e->free_slots);
	free(e);
	return NULL;
}

void
quic_endpoint_destroy(struct quic_endpoint *e)
{
	uint32_t i;

	if (e == NULL)
		return;
	for (i = 0; i < e->conf.max_conns; i++)
		if (e->conns[i].live)
			quic_conn_free(&e->conns[i]);
	quic_h3_spares_free(e);
	if (e->creds_held != NULL)
		tls_creds_release(e->creds_held);
	gnutls_priority_deinit(e->prio);
	quic_tokens_free(e->own_tokens);
	free(e->conns);
	free(e->free_slots);
	free(e);
}

void
quic_endpoint_drain(struct quic_endpoint *e)
{
	uint32_t i;

	e->draining = true;
	for (i = 0; i < e->conf.max_conns; i++) {
		struct quic_conn *c = &e->conns[i];

		if (!c->live || c->closing)
			continue;
		if (c->h3 != NULL && nghttp3_conn_shutdown(c->h3) == 0 &&
				c->streams != NULL) {
			quic_conn_flush(c);	/* GOAWAY; the streams end */
			continue;
		}
		quic_conn_end(c);
	}
}

void
quic_conn_end(struct quic_conn *c)
{
	ngtcp2_connection_close_error cc;

	ngtcp2_connection_close_error_set_application_error(&cc,
			NGHTTP3_H3_NO_ERROR, NULL, 0);
	quic_conn_close(c, &cc);
}

uint32_t
quic_endpoint_conns(const struct quic_endpoint *e)
{
	return e->conf.max_conns - e->nfree;
}

/* The live stream an origin names, or NULL. */
static struct h3_stream *
stream_of(struct quic_endpoint *e, struct http_origin o)
{
	uint32_t slot = o.index & ~QUIC_ORIGIN;
	struct quic_conn *c;

	if (!quic_origin(o) || slot >= e->conf.max_conns)
		return NULL;
	c = &e->conns[slot];
	if (!c->live || c->gen != o.gen || c->closing)
		return NULL;
	return quic_h3_stream_find(c, o.stream);
}

bool
quic_answer(struct quic_endpoint *e, struct http_origin o,
		struct http_answer *a)
{
	struct h3_stream *st = stream_of(e, o);

	if (st == NULL || !quic_h3_answer(st, a))
		return false;
	quic_conn_flush(st->c);
	return true;
}

bool
quic_resume(struct quic_endpoint *e, struct http_origin o)
{
	struct h3_stream *st = stream_of(e, o);

	if (st == NULL || !quic_h3_resume(st))
		return false;
	quic_conn_flush(st->c);
	return true;
}

long
quic_body_read(struct quic_endpoint *e, struct http_origin o, void *buf,
		size_t cap)
{
	struct h3_stream *st = stream_of(e, o);

	return st != NULL && st->streamed ? quic_h3_body_read(st, buf, cap) :
		-1;
}

void
quic_body_done(struct quic_endpoint *e, struct http_origin o)
{
	struct h3_stream *st = stream_of(e, o);

	if (st != NULL)
		quic_h3_body_stop(st);
}

bool
quic_awaits(struct quic_endpoint *e, struct http_origin o)
{
	struct h3_stream *st = stream_of(e, o);

	return st != NULL && !st->answered;
}

size_t
quic_server_name(struct quic_endpoint *e, struct http_origin o, char *buf,
		size_t cap)
{
	struct h3_stream *st = stream_of(e, o);

	return st != NULL && st->c->tls != NULL ?
		tls_server_name(st->c->tls, buf, cap) : 0;
}

bool
quic_peer(struct quic_endpoint *e, struct http_origin o, struct net_addr *addr,
		uint16_t *port)
{
	struct h3_stream *st = stream_of(e, o);

	if (st == NULL)
		return false;
	*addr = st->c->path.peer;
	*port = st->c->path.peer_port;
	return true;
}
