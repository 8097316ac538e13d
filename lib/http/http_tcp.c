/* SPDX-License-Identifier: BSD-3-Clause */
#include "http_server.h"
#include "http_tcp.h"
#include "net_stack.h"
#include "tcp.h"

/* Transport: the connection layer's calls into TCP. */

static uint32_t
t_write(void *ctx, void *t, const void *data, uint32_t len)
{
	return tcp_write(ctx, t, data, len);
}

static uint32_t
t_write_ref(void *ctx, void *t, const void *data, uint32_t len,
		const struct tcp_ref *ref)
{
	return tcp_write_ref(ctx, t, data, len, ref);
}

static uint32_t
t_space(void *ctx, void *t)
{
	return tcp_send_space(ctx, t);
}

static void
t_close(void *ctx, void *t)
{
	tcp_close(ctx, t);
}

static void
t_abort(void *ctx, void *t)
{
	tcp_abort(ctx, t);
}

static void
t_output(void *ctx, void *t)
{
	tcp_output(ctx, t);
}

static void
t_rcv_space(void *ctx, void *t, uint32_t bytes)
{
	tcp_set_rcv_space(ctx, t, bytes);
}

static uint64_t
t_now_ms(void *ctx)
{
	return net_now_ms(ctx);
}

/* Deadlines on the shard's one wheel, beside TCP's own timers. */
static void
t_timer_arm(void *ctx, struct net_timer *tm, uint64_t at_ms)
{
	net_timer_arm(ctx, tm, at_ms);
}

static void
t_timer_cancel(void *ctx, struct net_timer *tm)
{
	net_timer_cancel(ctx, tm);
}

static void
t_peer(void *ctx, void *t, struct net_addr *addr, uint16_t *port)
{
	(void)ctx;
	tcp_peer(t, addr, port);
}

static uint32_t
t_rtt_us(void *ctx, void *t)
{
	(void)ctx;
	return tcp_rtt_us(t);
}

const struct http_transport http_tcp_transport = {
	.write = t_write,
	.write_ref = t_write_ref,
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
};

/* Upcalls: TCP's calls into the connection layer. */

static int
on_accepted(void *ctx, struct tcp_conn *c)
{
	struct http_conn *hc = http_conn_accept(ctx, c);

	if (hc == NULL)
		return -1;
	tcp_set_app(c, hc);
	return 0;
}

static uint32_t
on_recv(void *ctx, struct tcp_conn *c, const uint8_t *data, uint32_t len)
{
	(void)ctx;
	return http_conn_recv(tcp_app(c), data, len);
}

static void
on_sent(void *ctx, struct tcp_conn *c)
{
	(void)ctx;
	http_conn_writable(tcp_app(c));
}

static void
on_peer_closed(void *ctx, struct tcp_conn *c)
{
	(void)ctx;
	http_conn_peer_closed(tcp_app(c));
}

static void
on_closed(void *ctx, struct tcp_conn *c)
{
	(void)ctx;
	http_conn_closed(tcp_app(c));
	tcp_set_app(c, NULL);
}

static const struct tcp_upcalls upcalls = {
	.accepted = on_accepted,
	.recv = on_recv,
	.sent = on_sent,
	.peer_closed = on_peer_closed,
	.closed = on_closed,
};

int
http_tcp_attach(struct http_server *s, struct net_stack *ns, uint16_t port)
{
	return net_stack_listen(ns, port, &upcalls, s);
}
