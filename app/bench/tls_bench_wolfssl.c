/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wolfSSL 5.5 over memory: I/O callbacks copy into and out of the
 * connection's pipes. Debian builds it without the AES-NI and the SP
 * (P-256 assembly) options (see docs/tls.md), which is what ewyk would get
 * from the package. Servers keep no session cache: tickets only.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wolfssl/options.h>
#include <wolfssl/ssl.h>
#include <wolfssl/wolfio.h>

#include "tls_bench.h"

struct wolf_ctx {
	WOLFSSL_CTX *ctx;
	bool server;
	int version;
};

struct pipes {
	struct tb_pipe *in, *out;
};

static int
io_send(WOLFSSL *ssl, char *buf, int sz, void *ctx)
{
	struct pipes *p = ctx;
	size_t n = tb_pipe_write(p->out, buf, (size_t)sz);

	(void)ssl;
	return n == 0 ? WOLFSSL_CBIO_ERR_WANT_WRITE : (int)n;
}

static int
io_recv(WOLFSSL *ssl, char *buf, int sz, void *ctx)
{
	struct pipes *p = ctx;
	size_t n = tb_pipe_read(p->in, buf, (size_t)sz);

	(void)ssl;
	return n == 0 ? WOLFSSL_CBIO_ERR_WANT_READ : (int)n;
}

static const char *
w_version(void)
{
	static char v[32];

	snprintf(v, sizeof(v), "wolfSSL %s", wolfSSL_lib_version());
	return v;
}

static int
w_init(void)
{
	return wolfSSL_Init() == WOLFSSL_SUCCESS ? 0 : -1;
}

static void *
w_ctx_new(bool server, const struct tb_conf *conf, const struct tb_creds *creds)
{
	struct wolf_ctx *w = calloc(1, sizeof(*w));
	WOLFSSL_METHOD *m;
	int groups[] = { WOLFSSL_ECC_X25519, WOLFSSL_ECC_SECP256R1 };
	bool chacha = conf->cipher == TB_CHACHA20_POLY1305;
	const char *ciphers;

	if (w == NULL)
		return NULL;
	w->server = server;
	w->version = conf->version;
	if (conf->version == 13) {
		m = server ? wolfTLSv1_3_server_method() : wolfTLSv1_3_client_method();
		ciphers = chacha ? "TLS13-CHACHA20-POLY1305-SHA256" :
				"TLS13-AES128-GCM-SHA256";
	} else {
		m = server ? wolfTLSv1_2_server_method() : wolfTLSv1_2_client_method();
		ciphers = chacha ?
			"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305" :
			"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256";
	}
	w->ctx = wolfSSL_CTX_new(m);
	if (w->ctx == NULL ||
			wolfSSL_CTX_set_cipher_list(w->ctx, ciphers) != WOLFSSL_SUCCESS ||
			wolfSSL_CTX_UseSupportedCurve(w->ctx, WOLFSSL_ECC_X25519) !=
				WOLFSSL_SUCCESS ||
			wolfSSL_CTX_UseSupportedCurve(w->ctx, WOLFSSL_ECC_SECP256R1) !=
				WOLFSSL_SUCCESS ||
			(conf->version == 13 &&
			 wolfSSL_CTX_set_groups(w->ctx, groups, 2) != WOLFSSL_SUCCESS))
		goto fail;
	wolfSSL_CTX_SetIORecv(w->ctx, io_recv);
	wolfSSL_CTX_SetIOSend(w->ctx, io_send);
	wolfSSL_CTX_set_verify(w->ctx, WOLFSSL_VERIFY_NONE, NULL);
	if (server) {
		wolfSSL_CTX_set_session_cache_mode(w->ctx, WOLFSSL_SESS_CACHE_OFF);
		if (wolfSSL_CTX_use_certificate_buffer(w->ctx,
				(const unsigned char *)creds->cert[conf->key],
				(long)strlen(creds->cert[conf->key]),
				WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS ||
				wolfSSL_CTX_use_PrivateKey_buffer(w->ctx,
				(const unsigned char *)creds->key[conf->key],
				(long)strlen(creds->key[conf->key]),
				WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS)
			goto fail;
	}
	return w;
fail:
	fprintf(stderr, "wolfssl: context setup failed\n");
	if (w->ctx != NULL)
		wolfSSL_CTX_free(w->ctx);
	free(w);
	return NULL;
}

static void
w_ctx_free(void *ctx)
{
	struct wolf_ctx *w = ctx;

	wolfSSL_CTX_free(w->ctx);
	free(w);
}

struct wolf_conn {
	WOLFSSL *ssl;
	struct pipes io;
	bool server;
};

static void *
w_conn_new(void *ctx, struct tb_pipe *in, struct tb_pipe *out, void *session)
{
	struct wolf_ctx *w = ctx;
	struct wolf_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->server = w->server;
	c->io.in = in;
	c->io.out = out;
	c->ssl = wolfSSL_new(w->ctx);
	if (c->ssl == NULL)
		goto fail;
	wolfSSL_SetIOReadCtx(c->ssl, &c->io);
	wolfSSL_SetIOWriteCtx(c->ssl, &c->io);
	if (!w->server) {
		if (w->version == 13 &&
				wolfSSL_UseKeyShare(c->ssl, WOLFSSL_ECC_X25519) !=
					WOLFSSL_SUCCESS)
			goto fail;
		if (w->version == 12 &&
				wolfSSL_UseSessionTicket(c->ssl) != WOLFSSL_SUCCESS)
			goto fail;
		if (session != NULL &&
				wolfSSL_set_session(c->ssl, session) != WOLFSSL_SUCCESS)
			goto fail;
	}
	return c;
fail:
	fprintf(stderr, "wolfssl: connection setup failed\n");
	if (c->ssl != NULL)
		wolfSSL_free(c->ssl);
	free(c);
	return NULL;
}

static void
w_conn_free(void *conn)
{
	struct wolf_conn *c = conn;

	wolfSSL_free(c->ssl);
	free(c);
}

static long
result(WOLFSSL *ssl, int rc)
{
	int err = wolfSSL_get_error(ssl, rc);
	char msg[WOLFSSL_MAX_ERROR_SZ];

	if (err == WOLFSSL_ERROR_WANT_READ || err == WOLFSSL_ERROR_WANT_WRITE)
		return 0;
	fprintf(stderr, "wolfssl: %s\n", wolfSSL_ERR_error_string((unsigned long)err,
			msg));
	return -1;
}

static int
w_handshake(void *conn)
{
	struct wolf_conn *c = conn;
	int rc = c->server ? wolfSSL_accept(c->ssl) : wolfSSL_connect(c->ssl);

	return rc == WOLFSSL_SUCCESS ? 1 : (int)result(c->ssl, rc);
}

static long
w_write(void *conn, const void *buf, size_t len)
{
	struct wolf_conn *c = conn;
	int rc = wolfSSL_write(c->ssl, buf, (int)len);

	return rc > 0 ? rc : result(c->ssl, rc);
}

static long
w_read(void *conn, void *buf, size_t cap)
{
	struct wolf_conn *c = conn;
	int rc = wolfSSL_read(c->ssl, buf, (int)cap);

	return rc > 0 ? rc : result(c->ssl, rc);
}

static void *
w_session_get(void *conn)
{
	return wolfSSL_get1_session(((struct wolf_conn *)conn)->ssl);
}

static void
w_session_free(void *session)
{
	wolfSSL_SESSION_free(session);
}

static bool
w_resumed(void *conn)
{
	return wolfSSL_session_reused(((struct wolf_conn *)conn)->ssl) == 1;
}

const struct tb_backend tb_wolfssl = {
	.name = "wolfssl",
	.version = w_version,
	.init = w_init,
	.ctx_new = w_ctx_new,
	.ctx_free = w_ctx_free,
	.conn_new = w_conn_new,
	.conn_free = w_conn_free,
	.handshake = w_handshake,
	.write = w_write,
	.read = w_read,
	.session_get = w_session_get,
	.session_free = w_session_free,
	.resumed = w_resumed,
	.release_note = "no release mode",
};
