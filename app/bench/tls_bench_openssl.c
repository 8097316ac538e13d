/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * OpenSSL 3.0 over memory: a custom BIO whose read and write copy from and
 * into the connection's pipes (ewyk's would take received segments and
 * fill TCP's send chunks), no BIO pair and no socket. Servers keep no
 * session cache: tickets only (stateless), one ticket per handshake.
 */

#include <stdio.h>
#include <stdlib.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tls_bench.h"

struct ossl_ctx {
	SSL_CTX *ctx;
	bool server;
};

struct pipes {
	struct tb_pipe *in, *out;
};

static BIO_METHOD *pipe_bio;

static int
bio_write(BIO *b, const char *data, size_t len, size_t *written)
{
	struct pipes *p = BIO_get_data(b);
	size_t n = tb_pipe_write(p->out, data, len);

	BIO_clear_retry_flags(b);
	if (n == 0) {
		BIO_set_retry_write(b);
		return 0;
	}
	*written = n;
	return 1;
}

static int
bio_read(BIO *b, char *buf, size_t cap, size_t *got)
{
	struct pipes *p = BIO_get_data(b);
	size_t n = tb_pipe_read(p->in, buf, cap);

	BIO_clear_retry_flags(b);
	if (n == 0) {
		BIO_set_retry_read(b);
		return 0;
	}
	*got = n;
	return 1;
}

static long
bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b;
	(void)num;
	(void)ptr;
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int
bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static int
bio_destroy(BIO *b)
{
	free(BIO_get_data(b));
	BIO_set_data(b, NULL);
	return 1;
}

static const char *
o_version(void)
{
	return OpenSSL_version(OPENSSL_VERSION);
}

static int
o_init(void)
{
	OPENSSL_init_ssl(0, NULL);
	pipe_bio = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
			"ewyk-pipe");
	if (pipe_bio == NULL)
		return -1;
	BIO_meth_set_write_ex(pipe_bio, bio_write);
	BIO_meth_set_read_ex(pipe_bio, bio_read);
	BIO_meth_set_ctrl(pipe_bio, bio_ctrl);
	BIO_meth_set_create(pipe_bio, bio_create);
	BIO_meth_set_destroy(pipe_bio, bio_destroy);
	return 0;
}

static int
load_pem(SSL_CTX *ctx, const char *cert, const char *key)
{
	BIO *cb = BIO_new_mem_buf(cert, -1), *kb = BIO_new_mem_buf(key, -1);
	X509 *x = PEM_read_bio_X509(cb, NULL, NULL, NULL);
	EVP_PKEY *pk = PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL);
	int ok = x != NULL && pk != NULL && SSL_CTX_use_certificate(ctx, x) == 1 &&
			SSL_CTX_use_PrivateKey(ctx, pk) == 1;

	X509_free(x);
	EVP_PKEY_free(pk);
	BIO_free(cb);
	BIO_free(kb);
	return ok ? 0 : -1;
}

static void *
o_ctx_new(bool server, const struct tb_conf *conf, const struct tb_creds *creds)
{
	struct ossl_ctx *o = calloc(1, sizeof(*o));
	int v = conf->version == 13 ? TLS1_3_VERSION : TLS1_2_VERSION;
	bool chacha = conf->cipher == TB_CHACHA20_POLY1305;

	if (o == NULL)
		return NULL;
	o->server = server;
	o->ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	if (o->ctx == NULL ||
			SSL_CTX_set_min_proto_version(o->ctx, v) != 1 ||
			SSL_CTX_set_max_proto_version(o->ctx, v) != 1 ||
			SSL_CTX_set_ciphersuites(o->ctx, chacha ?
				"TLS_CHACHA20_POLY1305_SHA256" :
				"TLS_AES_128_GCM_SHA256") != 1 ||
			SSL_CTX_set_cipher_list(o->ctx, chacha ?
				"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305" :
				"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256") != 1 ||
			SSL_CTX_set1_groups_list(o->ctx, "X25519:P-256") != 1)
		goto fail;
	SSL_CTX_set_session_cache_mode(o->ctx, SSL_SESS_CACHE_OFF);
	if (conf->release_buffers)
		SSL_CTX_set_mode(o->ctx, SSL_MODE_RELEASE_BUFFERS);
	if (server && (SSL_CTX_set_num_tickets(o->ctx, 1) != 1 ||
			load_pem(o->ctx, creds->cert[conf->key],
				creds->key[conf->key]) != 0))
		goto fail;
	return o;
fail:
	ERR_print_errors_fp(stderr);
	SSL_CTX_free(o->ctx);
	free(o);
	return NULL;
}

static void
o_ctx_free(void *ctx)
{
	struct ossl_ctx *o = ctx;

	SSL_CTX_free(o->ctx);
	free(o);
}

static void *
o_conn_new(void *ctx, struct tb_pipe *in, struct tb_pipe *out, void *session)
{
	struct ossl_ctx *o = ctx;
	SSL *ssl = SSL_new(o->ctx);
	BIO *b = BIO_new(pipe_bio);
	struct pipes *p = malloc(sizeof(*p));

	if (ssl == NULL || b == NULL || p == NULL) {
		SSL_free(ssl);
		BIO_free(b);
		free(p);
		return NULL;
	}
	p->in = in;
	p->out = out;
	BIO_set_data(b, p);
	SSL_set_bio(ssl, b, b);
	if (o->server)
		SSL_set_accept_state(ssl);
	else
		SSL_set_connect_state(ssl);
	if (session != NULL)
		SSL_set_session(ssl, session);
	return ssl;
}

/* Freed as after a clean close: SSL_free() of a connection that was not
 * shut down marks its session not resumable (and would take the context's
 * session lock to drop it from the cache). */
static void
o_conn_free(void *conn)
{
	SSL_set_shutdown(conn, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	SSL_free(conn);
}

static int
result(SSL *ssl, int rc)
{
	switch (SSL_get_error(ssl, rc)) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		return 0;
	default:
		ERR_print_errors_fp(stderr);
		return -1;
	}
}

static int
o_handshake(void *conn)
{
	int rc = SSL_do_handshake(conn);

	return rc == 1 ? 1 : result(conn, rc);
}

static long
o_write(void *conn, const void *buf, size_t len)
{
	size_t n;
	int rc = SSL_write_ex(conn, buf, len, &n);

	return rc == 1 ? (long)n : result(conn, rc);
}

static long
o_read(void *conn, void *buf, size_t cap)
{
	size_t n;
	int rc = SSL_read_ex(conn, buf, cap, &n);

	return rc == 1 ? (long)n : result(conn, rc);
}

static void *
o_session_get(void *conn)
{
	SSL_SESSION *s = SSL_get1_session(conn);

	if (s != NULL && !SSL_SESSION_is_resumable(s)) {
		SSL_SESSION_free(s);
		return NULL;
	}
	return s;
}

static void
o_session_free(void *session)
{
	SSL_SESSION_free(session);
}

static bool
o_resumed(void *conn)
{
	return SSL_session_reused(conn) == 1;
}

const struct tb_backend tb_openssl = {
	.name = "openssl",
	.version = o_version,
	.init = o_init,
	.ctx_new = o_ctx_new,
	.ctx_free = o_ctx_free,
	.conn_new = o_conn_new,
	.conn_free = o_conn_free,
	.handshake = o_handshake,
	.write = o_write,
	.read = o_read,
	.session_get = o_session_get,
	.session_free = o_session_free,
	.resumed = o_resumed,
	.release_note = "SSL_MODE_RELEASE_BUFFERS",
};
