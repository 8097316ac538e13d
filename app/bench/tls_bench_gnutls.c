/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GnuTLS 3.7 over memory: push and pull callbacks copy into and out of the
 * connection's pipes (as Seastar runs GnuTLS over its own TCP). Servers
 * issue session tickets with one key per context (ewyk's would be shared
 * by every shard and rotated).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>

#include "tls_bench.h"

struct gt_ctx {
	bool server;
	gnutls_certificate_credentials_t cred;
	gnutls_priority_t prio;
	gnutls_datum_t ticket_key;
};

struct gt_conn {
	gnutls_session_t s;
	struct tb_pipe *in, *out;
};

static ssize_t
push(gnutls_transport_ptr_t t, const void *data, size_t len)
{
	struct gt_conn *c = t;
	size_t n = tb_pipe_write(c->out, data, len);

	if (n == 0) {
		gnutls_transport_set_errno(c->s, EAGAIN);
		return -1;
	}
	return (ssize_t)n;
}

static ssize_t
pull(gnutls_transport_ptr_t t, void *buf, size_t cap)
{
	struct gt_conn *c = t;
	size_t n = tb_pipe_read(c->in, buf, cap);

	if (n == 0) {
		gnutls_transport_set_errno(c->s, EAGAIN);
		return -1;
	}
	return (ssize_t)n;
}

static int
pull_timeout(gnutls_transport_ptr_t t, unsigned int ms)
{
	struct gt_conn *c = t;

	(void)ms;
	return tb_pipe_used(c->in) > 0;
}

static const char *
g_version(void)
{
	static char v[32];

	snprintf(v, sizeof(v), "GnuTLS %s", gnutls_check_version(NULL));
	return v;
}

static int
g_init(void)
{
	return gnutls_global_init() == GNUTLS_E_SUCCESS ? 0 : -1;
}

static void *
g_ctx_new(bool server, const struct tb_conf *conf, const struct tb_creds *creds)
{
	struct gt_ctx *g = calloc(1, sizeof(*g));
	char prio[256];
	const char *err = NULL;
	int rc;

	if (g == NULL)
		return NULL;
	g->server = server;
	snprintf(prio, sizeof(prio),
			"NORMAL:-VERS-ALL:+VERS-TLS1.%d:-CIPHER-ALL:+%s:"
			"-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA",
			conf->version == 13 ? 3 : 2,
			conf->cipher == TB_CHACHA20_POLY1305 ?
				"CHACHA20-POLY1305" : "AES-128-GCM");
	rc = gnutls_priority_init(&g->prio, prio, &err);
	if (rc == GNUTLS_E_SUCCESS)
		rc = gnutls_certificate_allocate_credentials(&g->cred);
	if (rc == GNUTLS_E_SUCCESS && server) {
		gnutls_datum_t cert = {
			(unsigned char *)creds->cert[conf->key],
			(unsigned int)strlen(creds->cert[conf->key]) };
		gnutls_datum_t key = {
			(unsigned char *)creds->key[conf->key],
			(unsigned int)strlen(creds->key[conf->key]) };

		rc = gnutls_certificate_set_x509_key_mem2(g->cred, &cert, &key,
				GNUTLS_X509_FMT_PEM, NULL, 0);
		if (rc >= 0)
			rc = gnutls_session_ticket_key_generate(&g->ticket_key);
	}
	if (rc < 0) {
		fprintf(stderr, "gnutls: %s%s%s\n", gnutls_strerror(rc),
				err != NULL ? " at " : "", err != NULL ? err : "");
		free(g);
		return NULL;
	}
	return g;
}

static void
g_ctx_free(void *ctx)
{
	struct gt_ctx *g = ctx;

	gnutls_certificate_free_credentials(g->cred);
	gnutls_priority_deinit(g->prio);
	if (g->ticket_key.data != NULL)
		gnutls_free(g->ticket_key.data);
	free(g);
}

static void *
g_conn_new(void *ctx, struct tb_pipe *in, struct tb_pipe *out, void *session)
{
	struct gt_ctx *g = ctx;
	struct gt_conn *c = calloc(1, sizeof(*c));
	int rc;

	if (c == NULL)
		return NULL;
	c->in = in;
	c->out = out;
	rc = gnutls_init(&c->s, g->server ? GNUTLS_SERVER : GNUTLS_CLIENT);
	if (rc == GNUTLS_E_SUCCESS)
		rc = gnutls_priority_set(c->s, g->prio);
	if (rc == GNUTLS_E_SUCCESS)
		rc = gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, g->cred);
	if (rc == GNUTLS_E_SUCCESS && g->server)
		rc = gnutls_session_ticket_enable_server(c->s, &g->ticket_key);
	if (rc == GNUTLS_E_SUCCESS && session != NULL)
		rc = gnutls_session_set_data(c->s, ((gnutls_datum_t *)session)->data,
				((gnutls_datum_t *)session)->size);
	if (rc != GNUTLS_E_SUCCESS) {
		fprintf(stderr, "gnutls: %s\n", gnutls_strerror(rc));
		gnutls_deinit(c->s);
		free(c);
		return NULL;
	}
	gnutls_transport_set_ptr(c->s, c);
	gnutls_transport_set_push_function(c->s, push);
	gnutls_transport_set_pull_function(c->s, pull);
	gnutls_transport_set_pull_timeout_function(c->s, pull_timeout);
	return c;
}

static void
g_conn_free(void *conn)
{
	struct gt_conn *c = conn;

	gnutls_deinit(c->s);
	free(c);
}

static long
result(long rc)
{
	if (rc >= 0)
		return rc;
	if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED)
		return 0;
	fprintf(stderr, "gnutls: %s\n", gnutls_strerror((int)rc));
	return -1;
}

static int
g_handshake(void *conn)
{
	int rc = gnutls_handshake(((struct gt_conn *)conn)->s);

	return rc == GNUTLS_E_SUCCESS ? 1 : (int)result(rc);
}

static long
g_write(void *conn, const void *buf, size_t len)
{
	return result(gnutls_record_send(((struct gt_conn *)conn)->s, buf, len));
}

static long
g_read(void *conn, void *buf, size_t cap)
{
	long rc = gnutls_record_recv(((struct gt_conn *)conn)->s, buf, cap);

	if (rc == 0)
		return -1;	/* the peer closed: not expected here */
	return result(rc);
}

static void *
g_session_get(void *conn)
{
	gnutls_datum_t *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	if (gnutls_session_get_data2(((struct gt_conn *)conn)->s, d) < 0) {
		free(d);
		return NULL;
	}
	return d;
}

static void
g_session_free(void *session)
{
	gnutls_datum_t *d = session;

	gnutls_free(d->data);
	free(d);
}

static bool
g_resumed(void *conn)
{
	return gnutls_session_is_resumed(((struct gt_conn *)conn)->s) != 0;
}

const struct tb_backend tb_gnutls = {
	.name = "gnutls",
	.version = g_version,
	.init = g_init,
	.ctx_new = g_ctx_new,
	.ctx_free = g_ctx_free,
	.conn_new = g_conn_new,
	.conn_free = g_conn_free,
	.handshake = g_handshake,
	.write = g_write,
	.read = g_read,
	.session_get = g_session_get,
	.session_free = g_session_free,
	.resumed = g_resumed,
	.release_note = "none (frees record buffers itself)",
};
