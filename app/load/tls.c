/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * https: a connection's bytes through a TLS client session of lib/tls
 * (tls_client_*), between the protocol and TCP. The connection stays
 * connecting until the handshake is over, then carries the protocol
 * ALPN chose (h2, else HTTP/1.1); a handshake that fails is counted as
 * tls_handshake, and a request is given up for it as for a connection
 * refused. Writes gather into records until the transport's push, which
 * the worker calls after each upcall.
 */
#include <rte_cycles.h>

#include "load.h"

static int
on_established(void *arg, bool h2)
{
	struct load_conn *c = arg;
	struct load_worker *w = c->w;

	if (w->tls_version == NULL) {
		w->tls_version = tls_client_version(c->tls);
		w->tls_cipher = tls_client_cipher(c->tls);
	}
	if (conn_ready(c, h2 ? &load_h2 : &load_h1) != 0) {
		conn_fail(c, LOAD_ERR_protocol);
		return -1;
	}
	return 0;
}

static int
on_recv(void *arg, const uint8_t *data, uint32_t len)
{
	struct load_conn *c = arg;

	if (c->state != CONN_OPEN)
		return 0;	/* closing: what comes is not asked for */
	if (c->proto->recv(c, data, len) < 0) {
		conn_fail(c, LOAD_ERR_protocol);
		return -1;
	}
	return 0;
}

static void
on_peer_closed(void *arg)
{
	conn_peer_closed(arg);
}

/* The session closed itself (its alert queued): TCP closes after it. A
 * handshake's failure is counted when TCP lets the connection go. */
static void
on_failed(void *arg, enum tls_fail_reason why, bool handshake)
{
	struct load_conn *c = arg;

	(void)why;
	if (!handshake) {
		conn_fail(c, LOAD_ERR_protocol);
		return;
	}
	if (c->tc != NULL)
		tcp_close(c->w->ns, c->tc);
}

static const struct tls_client_upcalls upcalls = {
	.established = on_established,
	.recv = on_recv,
	.peer_closed = on_peer_closed,
	.failed = on_failed,
};

/* The transport ------------------------------------------------------ */

static int
tls_t_established(struct load_conn *c)
{
	const struct load_conf *conf = conn_conf(c);

	c->tls = tls_client_new(c->w->tls, c->tc, conf->sni[0] != '\0' ?
			conf->sni : NULL, &upcalls, c);
	return c->tls != NULL ? 0 : -1;
}

static void
tls_t_recv(struct load_conn *c, const uint8_t *data, uint32_t len)
{
	tls_client_recv(c->tls, data, len);
	conn_after_input(c);
}

static uint32_t
tls_t_write(struct load_conn *c, const void *p, uint32_t n)
{
	return tls_client_write(c->tls, p, n);
}

static uint32_t
tls_t_space(struct load_conn *c)
{
	return tls_client_space(c->tls);
}

static void
tls_t_push(struct load_conn *c)
{
	tls_client_push(c->tls);
}

static void
tls_t_close(struct load_conn *c)
{
	tls_client_close(c->tls);
}

static void
tls_t_abort(struct load_conn *c)
{
	tcp_abort(c->w->ns, c->tc);
}

const struct load_transport load_tls_transport = {
	.established = tls_t_established,
	.recv = tls_t_recv,
	.write = tls_t_write,
	.space = tls_t_space,
	.push = tls_t_push,
	.close = tls_t_close,
	.abort = tls_t_abort,
};
