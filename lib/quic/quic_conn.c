/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One connection's QUIC and TLS: ngtcp2's server state, a GnuTLS session
 * that ngtcp2's crypto helper drives (TLS 1.3, ALPN "h3" required), and
 * the upcalls that pass stream events on to HTTP/3. The handshake's
 * crypto runs inside ngtcp2_conn_read_pkt(), on the shard's owner.
 * Congestion control is ngtcp2's CUBIC, paced by ngtcp2.
 */
#include <string.h>

#include <gnutls/crypto.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include "ewyk_tls.h"
#include "quic_priv.h"

/* Windows: a stream's and the connection's flow control, enough for a
 * path of 50 ms at 100 MB/s once ngtcp2 has grown them. */
#define QUIC_STREAM_WINDOW (256u << 10)
#define QUIC_CONN_WINDOW (1u << 20)
#define QUIC_MAX_WINDOW (6u << 20)

static const gnutls_datum_t alpn_h3 = { (unsigned char *)"h3", 2 };

static struct quic_conn *
conn_of(void *user_data)
{
	return user_data;
}

static void
rand_bytes(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
	(void)ctx;
	(void)gnutls_rnd(GNUTLS_RND_NONCE, dest, len);
}

static int
new_cid(ngtcp2_conn *qc, ngtcp2_cid *cid, uint8_t *token, size_t cidlen,
		void *user_data)
{
	(void)qc;
	(void)cidlen;
	return quic_cid_new(conn_of(user_data), cid, token) == 0 ? 0 :
		NGTCP2_ERR_CALLBACK_FAILURE;
}

static int
forget_cid(ngtcp2_conn *qc, const ngtcp2_cid *cid, void *user_data)
{
	(void)qc;
	quic_cid_forget(conn_of(user_data), cid);
	return 0;
}

static int
handshake_completed(ngtcp2_conn *qc, void *user_data)
{
	struct quic_conn *c = conn_of(user_data);
	struct quic_stats *st = c->e->conf.stats;

	(void)qc;
	quic_conn_handshake_done(c);
	st->handshaking--;
	st->handshakes++;
	quic_new_token(c);
	return quic_h3_start(c);
}

static int
recv_stream_data(ngtcp2_conn *qc, uint32_t flags, int64_t id,
		uint64_t offset, const uint8_t *data, size_t len,
		void *user_data, void *stream_user_data)
{
	(void)qc;
	(void)offset;
	(void)stream_user_data;
	return quic_h3_recv(conn_of(user_data), id, data, len,
			(flags & NGTCP2_STREAM_DATA_FLAG_FIN) != 0);
}

static int
acked_stream_data(ngtcp2_conn *qc, int64_t id, uint64_t offset,
		uint64_t len, void *user_data, void *stream_user_data)
{
	(void)qc;
	(void)offset;
	(void)stream_user_data;
	return quic_h3_acked(conn_of(user_data), id, len);
}

static int
stream_close(ngtcp2_conn *qc, uint32_t flags, int64_t id, uint64_t code,
		void *user_data, void *stream_user_data)
{
	(void)qc;
	(void)stream_user_data;
	return quic_h3_stream_close(conn_of(user_data), id, code,
			(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET) != 0);
}

static int
stream_reset(ngtcp2_conn *qc, int64_t id, uint64_t final_size, uint64_t code,
		void *user_data, void *stream_user_data)
{
	(void)qc;
	(void)final_size;
	(void)code;
	(void)stream_user_data;
	return quic_h3_stream_reset(conn_of(user_data), id);
}

static int
stream_stop_sending(ngtcp2_conn *qc, int64_t id, uint64_t code,
		void *user_data, void *stream_user_data)
{
	(void)qc;
	(void)code;
	(void)stream_user_data;
	return quic_h3_stream_reset(conn_of(user_data), id);
}

static int
extend_max_stream_data(ngtcp2_conn *qc, int64_t id, uint64_t max_data,
		void *user_data, void *stream_user_data)
{
	(void)qc;
	(void)max_data;
	(void)stream_user_data;
	return quic_h3_unblock(conn_of(user_data), id);
}

static int
extend_max_remote_streams_bidi(ngtcp2_conn *qc, uint64_t max_streams,
		void *user_data)
{
	struct quic_conn *c = conn_of(user_data);

	(void)qc;
	if (c->h3 != NULL)
		nghttp3_conn_set_max_client_streams_bidi(c->h3, max_streams);
	return 0;
}

static const ngtcp2_callbacks callbacks = {
	.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb,
	.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
	.handshake_completed = handshake_completed,
	.encrypt = ngtcp2_crypto_encrypt_cb,
	.decrypt = ngtcp2_crypto_decrypt_cb,
	.hp_mask = ngtcp2_crypto_hp_mask_cb,
	.recv_stream_data = recv_stream_data,
	.acked_stream_data_offset = acked_stream_data,
	.stream_close = stream_close,
	.rand = rand_bytes,
	.get_new_connection_id = new_cid,
	.remove_connection_id = forget_cid,
	.update_key = ngtcp2_crypto_update_key_cb,
	.stream_reset = stream_reset,
	.extend_max_remote_streams_bidi = extend_max_remote_streams_bidi,
	.extend_max_stream_data = extend_max_stream_data,
	.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
	.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
	.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
	.stream_stop_sending = stream_stop_sending,
	.version_negotiation = ngtcp2_crypto_version_negotiation_cb,
};

static void
sockaddr_of(const union net_ip *ip, uint8_t family, uint16_t port,
		struct sockaddr_storage *ss, ngtcp2_addr *a)
{
	memset(ss, 0, sizeof(*ss));
	if (family == NET_AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, ip->v6, 16);
		a->addrlen = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		s4->sin_addr.s_addr = ip->v4;
		a->addrlen = sizeof(*s4);
	}
	a->addr = (ngtcp2_sockaddr *)ss;
}

void
quic_path_of(const struct net_udp_dgram *d, ngtcp2_path *path,
		struct sockaddr_storage *local, struct sockaddr_storage *remote)
{
	memset(path, 0, sizeof(*path));
	sockaddr_of(&d->local, d->peer.family, d->local_port, local,
			&path->local);
	sockaddr_of(&d->peer.ip, d->peer.family, d->peer_port, remote,
			&path->remote);
}

static ngtcp2_conn *
get_conn(ngtcp2_crypto_conn_ref *ref)
{
	return ((struct quic_conn *)ref->user_data)->qc;
}

/* The TLS session: the shard's credentials (SNI picks among them as over
 * TCP), TLS 1.3 only, "h3" or nothing. */
static int
tls_start(struct quic_conn *c)
{
	struct quic_endpoint *e = c->e;

	if (gnutls_init(&c->tls, GNUTLS_SERVER | GNUTLS_NO_END_OF_EARLY_DATA) < 0)
		return -1;
	if (gnutls_priority_set(c->tls, e->prio) < 0 ||
			gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE,
					e->creds) < 0 ||
			ngtcp2_crypto_gnutls_configure_server_session(c->tls) != 0 ||
			gnutls_alpn_set_protocols(c->tls, &alpn_h3, 1,
					GNUTLS_ALPN_MANDATORY) < 0) {
		gnutls_deinit(c->tls);
		c->tls = NULL;
		return -1;
	}
	c->ref.get_conn = get_conn;
	c->ref.user_data = c;
	gnutls_session_set_ptr(c->tls, &c->ref);
	tls_creds_hold(e->creds_held);
	c->creds_held = e->creds_held;
	return 0;
}

int
quic_conn_start(struct quic_conn *c, const struct net_udp_dgram *d,
		const ngtcp2_pkt_hd *hd, const ngtcp2_cid *odcid)
{
	struct quic_endpoint *e = c->e;
	struct sockaddr_storage local, remote;
	ngtcp2_transport_params params;
	ngtcp2_settings settings;
	ngtcp2_path path;
	ngtcp2_cid scid;

	if (quic_cid_new(c, &scid, NULL) != 0)
		return -1;
	ngtcp2_settings_default(&settings);
	settings.initial_ts = quic_now_ns(e);
	settings.cc_algo = NGTCP2_CC_ALGO_CUBIC;
	settings.max_tx_udp_payload_size = QUIC_DGRAM_MAX;
	settings.max_window = QUIC_MAX_WINDOW * 4;
	settings.max_stream_window = QUIC_MAX_WINDOW;
	/* ngtcp2 holds a handshake that stopped half-way for its probe
	 * timeouts, not its idle timeout: this ends it. */
	settings.handshake_timeout = (uint64_t)e->conf.handshake_timeout_ms *
		NGTCP2_MILLISECONDS;
	ngtcp2_transport_params_default(&params);
	params.initial_max_stream_data_bidi_local = QUIC_STREAM_WINDOW;
	params.initial_max_stream_data_bidi_remote = QUIC_STREAM_WINDOW;
	params.initial_max_stream_data_uni = QUIC_STREAM_WINDOW;
	params.initial_max_data = QUIC_CONN_WINDOW;
	params.initial_max_streams_bidi = QUIC_STREAMS_BIDI;
	params.initial_max_streams_uni = 3;
	params.max_idle_timeout = (uint64_t)e->conf.idle_timeout_ms *
		NGTCP2_MILLISECONDS;
	params.original_dcid = hd->dcid;
	if (odcid != NULL) {	/* RFC 9000 7.3: the Retry's, then the first */
		params.original_dcid = *odcid;
		params.retry_scid = hd->dcid;
		params.retry_scid_present = 1;
		settings.token = hd->token;
	} else if (hd->token.len > 0) {
		/* A NEW_TOKEN's, checked: the address is proved. */
		settings.token = hd->token;
	}
	params.stateless_reset_token_present = 1;
	if (ngtcp2_crypto_generate_stateless_reset_token(
			params.stateless_reset_token, e->secret,
			QUIC_SECRET_LEN, &scid) != 0)
		return -1;
	quic_path_of(d, &path, &local, &remote);
	quic_mem_init(c);
	if (ngtcp2_conn_server_new(&c->qc, &hd->scid, &scid, &path,
			hd->version, &callbacks, &settings, &params,
			&c->ngtcp2_mem, c) != 0)
		return -1;
	if (tls_start(c) != 0) {
		ngtcp2_conn_del(c->qc);
		c->qc = NULL;
		return -1;
	}
	ngtcp2_conn_set_tls_native_handle(c->qc, c->tls);
	c->odcid = hd->dcid;
	return 0;
}

void
quic_conn_fini(struct quic_conn *c)
{
	if (c->h3 != NULL)
		nghttp3_conn_del(c->h3);
	c->h3 = NULL;
	if (c->qc != NULL)
		ngtcp2_conn_del(c->qc);
	c->qc = NULL;
	if (c->tls != NULL)
		gnutls_deinit(c->tls);
	c->tls = NULL;
	if (c->creds_held != NULL)
		tls_creds_release(c->creds_held);
	c->creds_held = NULL;
}
