/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <gnutls/crypto.h>
#include <gnutls/x509.h>

#include "http_harness.h"
#include "tcp_harness.h"
#include "tls_harness.h"

#define ISS 3000000u
#define MSS 1460
#define PUMPS_MAX 3000

static void
write_datum(const char *path, const gnutls_datum_t *d, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, d->data, d->size), (ssize_t)d->size);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* A self-signed ECDSA P-256 certificate for ewyk.test valid from
 * from_s to to_s seconds from now, and its key. */
void
tlsh_write_pair(const char *cert_path, const char *key_path, long from_s,
		long to_s)
{
	tlsh_write_named_pair(cert_path, key_path, "ewyk.test", from_s, to_s);
}

void
tlsh_write_named_pair(const char *cert_path, const char *key_path,
		const char *cn, long from_s, long to_s)
{
	gnutls_x509_privkey_t key;
	gnutls_x509_crt_t crt;
	gnutls_datum_t out;
	time_t now = time(NULL);
	unsigned char serial[8];

	assert_int_equal(gnutls_x509_privkey_init(&key), 0);
	assert_int_equal(gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
			GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0), 0);
	assert_int_equal(gnutls_x509_crt_init(&crt), 0);
	assert_int_equal(gnutls_x509_crt_set_version(crt, 3), 0);
	assert_int_equal(gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof(serial)), 0);
	serial[0] &= 0x7f;
	assert_int_equal(gnutls_x509_crt_set_serial(crt, serial,
			sizeof(serial)), 0);
	assert_int_equal(gnutls_x509_crt_set_activation_time(crt, now + from_s),
			0);
	assert_int_equal(gnutls_x509_crt_set_expiration_time(crt, now + to_s),
			0);
	assert_int_equal(gnutls_x509_crt_set_dn_by_oid(crt,
			GNUTLS_OID_X520_COMMON_NAME, 0, cn, strlen(cn)), 0);
	assert_int_equal(gnutls_x509_crt_set_subject_alt_name(crt,
			GNUTLS_SAN_DNSNAME, cn, (unsigned int)strlen(cn),
			GNUTLS_FSAN_SET), 0);
	assert_int_equal(gnutls_x509_crt_set_key(crt, key), 0);
	assert_int_equal(gnutls_x509_crt_sign2(crt, crt, key,
			GNUTLS_DIG_SHA256, 0), 0);
	assert_int_equal(gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM,
			&out), 0);
	write_datum(cert_path, &out, 0644);
	gnutls_free(out.data);
	assert_int_equal(gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM,
			&out), 0);
	write_datum(key_path, &out, 0600);
	gnutls_free(out.data);
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(key);
}

static int
offload(void *ctx, struct tls_work *w)
{
	struct tlsh *h = ctx;

	assert_true(h->nsteps < TLSH_STEPS);
	h->steps[h->nsteps++] = w;
	return 0;
}

static void *
step_thread(void *arg)
{
	tls_work_run(arg);
	return NULL;
}

struct tlsh *
tlsh_new(enum tlsh_offload mode, uint32_t timeout_ms)
{
	struct tlsh *h = calloc(1, sizeof(*h));
	struct tls_conf conf = { .n_pairs = 1, .shards = 1 };
	struct tls_shard_conf sc;
	char err[TLS_ERR_LEN];

	assert_non_null(h);
	h->offload = mode;
	h->th = th_new(NULL);
	h->hh = hh_new(0, 0);
	snprintf(h->dir, sizeof(h->dir), "%s/ewyk_tlsh_XXXXXX",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(h->dir));
	snprintf(h->cert, sizeof(h->cert), "%s/cert.pem", h->dir);
	snprintf(h->key, sizeof(h->key), "%s/key.pem", h->dir);
	tlsh_new_certificate(h);
	conf.pairs[0].cert = h->cert;
	conf.pairs[0].key = h->key;
	conf.handshake_timeout_ms = timeout_ms;
	h->cfg = tls_config_create(&conf, err, sizeof(err));
	if (h->cfg == NULL)
		fail_msg("tls_config_create: %s", err);
	sc = (struct tls_shard_conf){
		.id = 0,
		.ns = h->th->ns,
		.http = h->hh->srv,
		.cfg = h->cfg,
		.max_conns = 16,
		.max_handshakes = 8,
		.offload = mode == TLSH_INLINE ? NULL : offload,
		.offload_ctx = h,
		.stats = &h->st,
	};
	h->sh = tls_shard_create(&sc);
	assert_non_null(h->sh);
	assert_int_equal(tls_shard_listen(h->sh, TLSH_PORT), 0);
	return h;
}

void
tlsh_new_certificate(struct tlsh *h)
{
	tlsh_write_pair(h->cert, h->key, -3600, 30 * 86400);
}

void
tlsh_free(struct tlsh *h)
{
	char cmd[PATH_MAX + 16];

	assert_int_equal(h->nsteps, 0);
	th_free(h->th);		/* every connection ends */
	assert_int_equal(h->st.conns, 0);
	tls_shard_destroy(h->sh);
	hh_free(h->hh);
	tls_config_destroy(h->cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", h->dir);
	assert_int_equal(system(cmd), 0);
	free(h);
}

static struct tlsc *
client_of(struct tlsh *h, uint16_t port)
{
	unsigned int i;

	for (i = 0; i < TLSH_CLIENTS; i++)
		if (h->clients[i] != NULL && h->clients[i]->sport == port)
			return h->clients[i];
	return NULL;
}

static void
ack(struct tlsc *c)
{
	struct th_seg s = th_seg_from(c->snd_nxt, c->rcv_nxt, TCP_ACK);

	s.dport = TLSH_PORT;
	s.sport = c->sport;
	th_inject(c->h->th, &s);
}

/* What the server's window takes of what waits, in segments. */
static void
output(struct tlsc *c)
{
	while (!c->reset) {
		uint32_t flight = c->snd_nxt - c->snd_una;
		uint32_t n = c->tx_len - flight;
		struct th_seg s;

		if (n > MSS)
			n = MSS;
		if (flight + n > c->wnd)
			n = c->wnd > flight ? c->wnd - flight : 0;
		if (n == 0)
			return;
		s = th_seg_from(c->snd_nxt, c->rcv_nxt, TCP_ACK | TCP_PSH);
		s.dport = TLSH_PORT;
		s.sport = c->sport;
		s.data = c->tx + flight;
		s.len = (uint16_t)n;
		th_inject(c->h->th, &s);
		c->snd_nxt += n;
	}
}

/* A segment from the server, in order or dropped (it comes again); its
 * ACK frees what it covers and says the window. */
static bool
take(struct tlsc *c, const struct th_out *o)
{
	if (o->t.flags & TCP_RST) {
		c->reset = true;
		return false;
	}
	if (o->t.flags & TCP_SYN) {
		c->rcv_nxt = o->t.seq + 1;
		c->wnd = o->t.win;
		return true;
	}
	if (o->t.flags & TCP_ACK) {
		uint32_t acked = o->t.ack - c->snd_una;

		if (acked > 0 && acked <= c->snd_nxt - c->snd_una) {
			/* our FIN takes a number too, and no byte */
			uint32_t data = acked > c->tx_len ? c->tx_len : acked;

			memmove(c->tx, c->tx + data, c->tx_len - data);
			c->tx_len -= data;
			c->snd_una = o->t.ack;
		}
		c->wnd = o->t.win;	/* no window scale: not offered */
	}
	if (o->t.len > 0 && o->t.seq == c->rcv_nxt) {
		assert_true(c->rx_len + o->t.len <= TLSH_RX);
		memcpy(c->rx + c->rx_len, o->t.payload, o->t.len);
		c->rx_len += o->t.len;
		c->rcv_nxt += o->t.len;
	}
	if ((o->t.flags & TCP_FIN) && o->t.seq + o->t.len == c->rcv_nxt) {
		c->rcv_nxt++;
		c->fin = true;
	}
	return o->t.len > 0 || (o->t.flags & TCP_FIN);
}

void
tlsh_pump(struct tlsh *h)
{
	bool owe[TLSH_CLIENTS] = { false };
	struct th_out o;
	unsigned int i;

	while (h->nsteps > 0 && !h->hold_steps) {
		struct tls_work *w = h->steps[0];

		memmove(h->steps, h->steps + 1, --h->nsteps * sizeof(w));
		if (h->offload == TLSH_THREAD) {
			pthread_t t;

			assert_int_equal(pthread_create(&t, NULL, step_thread, w), 0);
			assert_int_equal(pthread_join(t, NULL), 0);
		} else {
			tls_work_run(w);
		}
		tls_work_done(w);
	}
	th_advance(h->th, 1);
	while (th_next(h->th, &o)) {
		struct tlsc *c = client_of(h, o.t.dport);

		if (c == NULL || !take(c, &o))
			continue;
		for (i = 0; i < TLSH_CLIENTS; i++)
			if (h->clients[i] == c)
				owe[i] = true;
	}
	th_drain(h->th);	/* all read: the capture starts over */
	for (i = 0; i < TLSH_CLIENTS; i++) {
		if (h->clients[i] == NULL || h->clients[i]->reset)
			continue;
		if (owe[i])
			ack(h->clients[i]);
		output(h->clients[i]);	/* the window may have opened */
	}
}

void
tlsc_open(struct tlsh *h, struct tlsc *c, uint16_t sport)
{
	struct th_seg s = th_seg_from(ISS, 0, TCP_SYN);
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->h = h;
	c->sport = sport;
	c->rx = malloc(TLSH_RX);
	c->tx = malloc(TLSH_RX);
	assert_non_null(c->rx);
	assert_non_null(c->tx);
	for (i = 0; i < TLSH_CLIENTS && h->clients[i] != NULL; i++)
		;
	assert_true(i < TLSH_CLIENTS);
	h->clients[i] = c;
	s.dport = TLSH_PORT;
	s.sport = sport;
	th_opt_mss(&s, MSS);
	th_inject(h->th, &s);
	c->snd_una = c->snd_nxt = ISS + 1;
	tlsh_pump(h);		/* the SYN-ACK, then our ACK */
	assert_int_not_equal(c->rcv_nxt, 0);
}

void
tlsc_send_raw(struct tlsc *c, const void *data, size_t len)
{
	assert_true(c->tx_len + len <= TLSH_RX);
	memcpy(c->tx + c->tx_len, data, len);
	c->tx_len += (uint32_t)len;
	output(c);
}

static ssize_t
c_push(gnutls_transport_ptr_t p, const void *data, size_t len)
{
	tlsc_send_raw(p, data, len);
	return (ssize_t)len;
}

static ssize_t
c_pull(gnutls_transport_ptr_t p, void *buf, size_t len)
{
	struct tlsc *c = p;
	uint32_t n = c->rx_len - c->rx_off;

	if (n == 0) {
		if (c->fin || c->reset)
			return 0;
		gnutls_transport_set_errno(c->s, EAGAIN);
		return -1;
	}
	if (n > len)
		n = (uint32_t)len;
	memcpy(buf, c->rx + c->rx_off, n);
	c->rx_off += n;
	if (c->rx_off == c->rx_len)
		c->rx_off = c->rx_len = 0;
	return n;
}

int
tlsc_handshake(struct tlsc *c, const char *alpn, const char *priority,
		const gnutls_datum_t *resume)
{
	gnutls_datum_t proto = { (unsigned char *)alpn,
		alpn != NULL ? (unsigned int)strlen(alpn) : 0 };
	unsigned int pumps = 0;
	int rc;

	assert_int_equal(gnutls_certificate_allocate_credentials(&c->cred), 0);
	assert_int_equal(gnutls_init(&c->s, GNUTLS_CLIENT | GNUTLS_NONBLOCK), 0);
	assert_int_equal(gnutls_priority_set_direct(c->s, priority != NULL ?
			priority : "NORMAL", NULL), 0);
	assert_int_equal(gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE,
			c->cred), 0);
	assert_int_equal(gnutls_server_name_set(c->s, GNUTLS_NAME_DNS,
			"ewyk.test", 9), 0);
	if (alpn != NULL)
		assert_int_equal(gnutls_alpn_set_protocols(c->s, &proto, 1, 0), 0);
	if (resume != NULL)
		assert_int_equal(gnutls_session_set_data(c->s, resume->data,
				resume->size), 0);
	gnutls_transport_set_ptr(c->s, c);
	gnutls_transport_set_push_function(c->s, c_push);
	gnutls_transport_set_pull_function(c->s, c_pull);
	while ((rc = gnutls_handshake(c->s)) == GNUTLS_E_AGAIN &&
			pumps++ < PUMPS_MAX && !c->reset)
		tlsh_pump(c->h);
	return rc;
}

bool
tlsc_exchange(struct tlsc *c, const char *request, const char *want,
		char *out, size_t cap)
{
	size_t got = 0;
	unsigned int pumps = 0;

	assert_int_equal(gnutls_record_send(c->s, request, strlen(request)),
			(ssize_t)strlen(request));
	out[0] = '\0';
	while (strstr(out, want) == NULL && pumps++ < PUMPS_MAX) {
		ssize_t n;

		tlsh_pump(c->h);
		while (got + 1 < cap && (n = gnutls_record_recv(c->s, out + got,
				cap - 1 - got)) > 0) {
			got += (size_t)n;
			out[got] = '\0';
		}
		if (c->fin && c->rx_len == 0)
			break;
	}
	return strstr(out, want) != NULL;
}

void
tlsc_close(struct tlsc *c)
{
	unsigned int pumps = 0;
	struct th_seg s;

	if (c->s != NULL)
		gnutls_bye(c->s, GNUTLS_SHUT_WR);
	while (c->tx_len > 0 && !c->reset && pumps++ < PUMPS_MAX)
		tlsh_pump(c->h);	/* FIN after the data */
	s = th_seg_from(c->snd_nxt, c->rcv_nxt, TCP_ACK | TCP_FIN);
	s.dport = TLSH_PORT;
	s.sport = c->sport;
	th_inject(c->h->th, &s);
	c->snd_nxt++;
	tlsh_pump(c->h);
}

void
tlsc_reset(struct tlsc *c)
{
	struct th_seg s = th_seg_from(c->snd_nxt, c->rcv_nxt, TCP_RST | TCP_ACK);

	s.dport = TLSH_PORT;
	s.sport = c->sport;
	th_inject(c->h->th, &s);
	tlsh_pump(c->h);
}

void
tlsc_free(struct tlsc *c)
{
	unsigned int i;

	for (i = 0; i < TLSH_CLIENTS; i++)
		if (c->h->clients[i] == c)
			c->h->clients[i] = NULL;
	if (c->s != NULL)
		gnutls_deinit(c->s);
	if (c->cred != NULL)
		gnutls_certificate_free_credentials(c->cred);
	free(c->rx);
	free(c->tx);
	memset(c, 0, sizeof(*c));
}
