/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handshake, in steps: each step gives GnuTLS what the client sent
 * (staged: the step may run on another thread, after the segment is
 * gone) and takes back its flight (staged too: only the owner writes to
 * TCP). The first step of a full handshake signs and runs a key exchange,
 * hundreds of microseconds, so it goes to the embedder's offload hook as
 * a costly step; the steps that only check the client's Finished run
 * inline. The owner counts what a step did once it is back
 * (tls_work_done()): a step touches the session and its staging only.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "tls_conn.h"
#include "tls_mem.h"

const gnutls_datum_t tls_alpn_protos[2] = {
	{ (unsigned char *)"h2", 2 },
	{ (unsigned char *)"http/1.1", 8 },
};

static uint64_t
thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* After the ClientHello: the pair its SNI names, by a wildcard too
 * (GnuTLS's own choice among several pairs compares names exactly). */
static int
pick_pair(gnutls_session_t s)
{
	struct tls_conn *tc = gnutls_transport_get_ptr(s);
	char host[256];
	int i;

	if (tls_server_name(s, host, sizeof(host)) == 0)
		return 0;	/* no SNI: the default pair */
	i = tls_gen_pick(tc->gen, host);
	if (i < 0)
		return 0;
	return gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE,
			tc->gen->per[tc->sh->conf.id].pair[i]);
}

/* The session, on the first step: the shard's credentials and priority
 * cache of the connection's generation, the newest ticket key, ALPN, and
 * 0-RTT off (no GNUTLS_ENABLE_EARLY_DATA). */
static int
session_new(struct tls_conn *tc)
{
	const struct tls_shard_creds *sc = &tc->gen->per[tc->sh->conf.id];
	uint8_t key[TLS_TICKET_KEY_LEN];
	gnutls_datum_t kd = { key, sizeof(key) };
	int rc;

	rc = gnutls_init(&tc->s, GNUTLS_SERVER | GNUTLS_NONBLOCK);
	if (rc < 0) {
		tc->s = NULL;
		return rc;
	}
	tls_ticket_key(tc->sh->conf.cfg, key);
	rc = gnutls_priority_set(tc->s, sc->prio);
	if (rc == 0)
		rc = gnutls_credentials_set(tc->s, GNUTLS_CRD_CERTIFICATE,
				sc->creds);
	if (rc == 0)
		rc = gnutls_session_ticket_enable_server(tc->s, &kd);
	gnutls_memset(key, 0, sizeof(key));
	if (rc == 0)
		rc = gnutls_alpn_set_protocols(tc->s, tls_alpn_protos, 2,
				GNUTLS_ALPN_SERVER_PRECEDENCE);
	if (rc < 0)
		return rc;
	if (tc->sh->conf.cfg->conf.ticket_rotate_s > 0)
		gnutls_db_set_cache_expiration(tc->s,
				(int)tc->sh->conf.cfg->conf.ticket_rotate_s);
	gnutls_handshake_set_max_packet_length(tc->s, TLS_HELLO_MAX);
	gnutls_transport_set_ptr(tc->s, tc);
	if (tc->gen->n_pairs > 1)
		gnutls_handshake_set_post_client_hello_function(tc->s,
				pick_pair);
	gnutls_transport_set_pull_function(tc->s, tls_pull);
	gnutls_transport_set_push_function(tc->s, tls_push);
	return 0;
}

enum tls_work_cost
tls_work_cost(const struct tls_work *w)
{
	return (enum tls_work_cost)w->cost;
}

void
tls_work_run(struct tls_work *w)
{
	struct tls_conn *tc = w->tc;
	struct tls_hs *hs = tc->hs;
	uint64_t t0 = thread_ns();

	w->again = false;
	if (tc->s == NULL) {
		w->rc = session_new(tc);
		if (w->rc < 0)
			goto out;
	}
	tc->in = hs->in;
	tc->in_off = hs->in_off;
	tc->in_len = w->in_end;
	w->rc = gnutls_handshake(tc->s);
	hs->in_off = tc->in_off;
	tc->in = NULL;
	if (w->rc == GNUTLS_E_AGAIN)
		w->again = gnutls_record_get_direction(tc->s) == 1;
	else if (w->rc < 0 && !gnutls_error_is_fatal(w->rc))
		w->again = true;	/* a warning alert: go on */
	else if (w->rc < 0)
		/* Its alert joins the staged flight. */
		gnutls_alert_send_appropriate(tc->s, w->rc);
out:
	w->cpu_ns = thread_ns() - t0;
}

enum tls_fail_reason
tls_fail_reason_of(int rc)
{
	switch (rc) {
	case GNUTLS_E_UNEXPECTED_PACKET_LENGTH:
	case GNUTLS_E_UNEXPECTED_PACKET:
	case GNUTLS_E_DECRYPTION_FAILED:
	case GNUTLS_E_RECORD_OVERFLOW:
	case GNUTLS_E_TOO_MANY_EMPTY_PACKETS:
		return TLS_FAIL_bad_record;
	case GNUTLS_E_UNSUPPORTED_VERSION_PACKET:
		return TLS_FAIL_protocol_version;
	case GNUTLS_E_NO_CIPHER_SUITES:
	case GNUTLS_E_UNKNOWN_CIPHER_SUITE:
	case GNUTLS_E_INSUFFICIENT_CREDENTIALS:
	case GNUTLS_E_NO_COMMON_KEY_SHARE:
	case GNUTLS_E_UNWANTED_ALGORITHM:
	case GNUTLS_E_NO_PRIORITIES_WERE_SET:
	case GNUTLS_E_ECC_UNSUPPORTED_CURVE:
		return TLS_FAIL_no_common_cipher;
	case GNUTLS_E_WARNING_ALERT_RECEIVED:
	case GNUTLS_E_FATAL_ALERT_RECEIVED:
		return TLS_FAIL_alert_received;
	case GNUTLS_E_HANDSHAKE_TOO_LARGE:
		return TLS_FAIL_too_large;
	case GNUTLS_E_MEMORY_ERROR:
	case GNUTLS_E_INTERNAL_ERROR:
		return TLS_FAIL_internal;
	default:
		return TLS_FAIL_bad_message;
	}
}

bool
tls_hs_flush(struct tls_conn *tc)
{
	struct tls_hs *hs = tc->hs;
	uint32_t n;

	if (hs == NULL || hs->out_off == hs->out_len || tc->tcp == NULL)
		return true;
	n = tcp_write(tc->sh->conf.ns, tc->tcp, hs->out + hs->out_off,
			hs->out_len - hs->out_off);
	hs->out_off += n;
	if (hs->out_off < hs->out_len)
		return false;
	hs->out_off = hs->out_len = 0;
	return true;
}

void
tls_hs_fail(struct tls_conn *tc, enum tls_fail_reason why, bool reset)
{
	struct tls_stats *st = tc->sh->st;

	st->failed[why]++;
	st->handshaking--;
	tc->state = TC_CLOSED;
	net_timer_cancel(tc->sh->conf.ns, &tc->deadline);
	if (tc->tcp == NULL)
		return;
	if (!reset && tls_hs_flush(tc)) {
		tcp_close(tc->sh->conf.ns, tc->tcp);
		tcp_output(tc->sh->conf.ns, tc->tcp);
	} else {
		tcp_abort(tc->sh->conf.ns, tc->tcp);
	}
}

/* Whether the staging holds the whole first record of a ClientHello, or
 * anything when GnuTLS is past it (it keeps a partial record itself). */
static bool
step_ready(const struct tls_conn *tc)
{
	const struct tls_hs *hs = tc->hs;

	if (tc->steps > 0)
		return hs->in_len > hs->in_off || tc->work.again;
	if (hs->in_len < 5)
		return false;
	/* What is no handshake record, or a length beyond a record's, is for
	 * GnuTLS to refuse at once. */
	return hs->in[0] != 22 || hs->in[1] != 3 ||
		hs->in_len >= 5u + ((uint32_t)hs->in[3] << 8 | hs->in[4]) ||
		((uint32_t)hs->in[3] << 8 | hs->in[4]) > TLS_RECORD_MAX + 256;
}

/* A step after the first only checks the client's Finished (TLS 1.3, or
 * a TLS 1.2 resumption): cheap. The first, and a TLS 1.2 full
 * handshake's second (its key exchange), are not. */
static enum tls_work_cost
step_cost(const struct tls_conn *tc)
{
	if (tc->steps == 0 || tc->s == NULL)
		return TLS_WORK_COSTLY;
	if (gnutls_protocol_get_version(tc->s) == GNUTLS_TLS1_3 ||
			gnutls_session_is_resumed(tc->s))
		return TLS_WORK_CHEAP;
	return TLS_WORK_COSTLY;
}

void
tls_hs_next(struct tls_conn *tc)
{
	struct tls_shard *sh = tc->sh;
	struct tls_work *w = &tc->work;

	if (tc->state != TC_HANDSHAKE || tc->hs == NULL || tc->step_out ||
			!step_ready(tc) || tc->hs->out_len > tc->hs->out_off)
		return;
	if (tc->steps == TLS_HS_STEPS_MAX) {
		tls_hs_fail(tc, TLS_FAIL_bad_message, true);
		return;
	}
	w->tc = tc;
	w->in_end = tc->hs->in_len;
	w->cost = (uint8_t)step_cost(tc);
	tc->steps++;
	tc->step_out = true;
	sh->steps_out++;
	if (w->cost == TLS_WORK_COSTLY && sh->conf.offload != NULL &&
			sh->conf.offload(sh->conf.offload_ctx, w) == 0) {
		sh->st->hs_steps_offloaded++;
		return;
	}
	sh->st->hs_steps_inline++;
	tls_conn_hold(tc);
	tls_work_run(w);
	tls_work_done(w);
	tls_conn_unhold(tc);
}

void
tls_count_established(struct tls_stats *st, gnutls_session_t s)
{
	gnutls_cipher_algorithm_t c = gnutls_cipher_get(s);

	if (gnutls_session_is_resumed(s))
		st->handshakes_resumed++;
	else
		st->handshakes_full++;
	if (gnutls_protocol_get_version(s) == GNUTLS_TLS1_3)
		st->tls13++;
	else
		st->tls12++;
	st->cipher[c == GNUTLS_CIPHER_AES_128_GCM ? TLS_CIPHER_AES_128_GCM :
		c == GNUTLS_CIPHER_AES_256_GCM ? TLS_CIPHER_AES_256_GCM :
		c == GNUTLS_CIPHER_CHACHA20_POLY1305 ?
		TLS_CIPHER_CHACHA20_POLY1305 : TLS_CIPHER_OTHER]++;
	st->handshaking--;
}

bool
tls_count_alpn(struct tls_stats *st, gnutls_session_t s)
{
	gnutls_datum_t proto = { NULL, 0 };
	bool h2 = false;

	if (gnutls_alpn_get_selected_protocol(s, &proto) == 0) {
		h2 = proto.size == 2 && memcmp(proto.data, "h2", 2) == 0;
		if (h2)
			st->alpn_h2++;
		else
			st->alpn_http11++;
	} else {
		st->alpn_none++;
	}
	return h2;
}

void
tls_work_done(struct tls_work *w)
{
	struct tls_conn *tc = w->tc;
	struct tls_shard *sh = tc->sh;

	tc->step_out = false;
	sh->steps_out--;
	sh->st->hs_cpu_ns += w->cpu_ns;
	tls_conn_hold(tc);
	if (tc->gone || tc->state != TC_HANDSHAKE)
		goto out;	/* TCP let go meanwhile: freed below */
	if (!tls_hs_flush(tc)) {
		tls_hs_fail(tc, TLS_FAIL_internal, true);
		goto out;
	}
	if (w->rc == 0) {
		tls_count_established(sh->st, tc->s);
		tls_conn_established(tc);
	} else if (w->rc < 0 && gnutls_error_is_fatal(w->rc)) {
		tls_hs_fail(tc, tls_fail_reason_of(w->rc), false);
	} else if (tc->timed_out) {
		tls_hs_fail(tc, TLS_FAIL_timeout, true);
	} else {
		/* Waiting for the client: the staging goes back to the pool
		 * when empty (a round trip may be long; the session keeps
		 * what it needs), and is taken again when bytes come. */
		tls_hs_compact(tc->hs);
		tls_hs_next(tc);
		if (!tc->step_out && tc->hs != NULL && tc->hs->in_len == 0 &&
				tc->hs->out_len == 0 && !tc->work.again) {
			tls_hs_free(sh, tc->hs);
			tc->hs = NULL;
		}
		tcp_set_rcv_space(sh->conf.ns, tc->tcp, tc->hs == NULL ?
				TLS_HS_IN : TLS_HS_IN - tc->hs->in_len);
	}
	if (tc->tcp != NULL)
		tcp_output(sh->conf.ns, tc->tcp);
out:
	tls_conn_unhold(tc);
}
