/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TCP connections of one shard. The upper layer (HTTP) sees a connection
 * through a callbacks table, in the manner of nghttp2: the stack calls up on
 * accept, data, acknowledged data and close; the upper layer writes bytes,
 * closes or aborts. The stack never blocks and never allocates outside its
 * mempool.
 */
#ifndef EWYK_TCP_H
#define EWYK_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include "net_addr.h"

struct net_stack;
/* A connection: opaque, valid until the closed upcall returns. */
struct tcp_conn;

struct tcp_upcalls {
	/* A handshake completed. Return 0 and set the app's state with
	 * tcp_set_app(), or <0 to refuse (the peer gets a RST). */
	int (*accepted)(void *ctx, struct tcp_conn *c);
	/* In-order bytes. Return how many were taken; TCP keeps the rest in
	 * the connection's receive buffer (acknowledged, within the window
	 * it advertised) and offers them again, before anything newer: at
	 * once while the upper layer takes some (it may have made room as
	 * it took), else once it pushes room with tcp_set_rcv_space() (from
	 * outside an upcall: at the next net_flush()); what it cannot keep
	 * is dropped unacknowledged. peer_closed follows the last byte. */
	uint32_t (*recv)(void *ctx, struct tcp_conn *c, const uint8_t *data,
			uint32_t len);
	/* Acknowledged data freed send space. */
	void (*sent)(void *ctx, struct tcp_conn *c);
	/* The peer sent FIN: no more data will come. */
	void (*peer_closed)(void *ctx, struct tcp_conn *c);
	/* The connection is gone (closed, reset or timed out); the app's
	 * state must be released. c is reused afterwards. */
	void (*closed)(void *ctx, struct tcp_conn *c);
};

/* The upper layer's state for a connection (NULL until it sets one). */
void tcp_set_app(struct tcp_conn *c, void *app);
void *tcp_app(const struct tcp_conn *c);
/* The connection of a slot and generation (which outlive a pointer to
 * it), or NULL once it was freed. */
struct tcp_conn *tcp_conn_get(struct net_stack *ns, uint32_t index,
		uint32_t gen);
/* The bytes the upper layer can take now, pushed whenever that changes.
 * The advertised window is it and the receive buffer's free room (up to
 * what the window scale can say); a window that opens enough to matter is
 * announced at once. Until the first call a connection has
 * tcp_config.rcv_space. */
void tcp_set_rcv_space(struct net_stack *ns, struct tcp_conn *c,
		uint32_t bytes);
/* Free room in the send queue, in bytes. */
uint32_t tcp_send_space(const struct net_stack *ns, const struct tcp_conn *c);
/* Queue bytes (copied) for sending; returns how many fit. */
uint32_t tcp_write(struct net_stack *ns, struct tcp_conn *c, const void *data,
		uint32_t len);
/* Bytes the caller keeps unchanged until told: hold(arg) when the send
 * queue takes a reference to them, done(arg) once it is gone. */
struct tcp_ref {
	void (*hold)(void *arg);
	void (*done)(void *arg);
	void *arg;
};
/* A write shorter than this is copied by tcp_write_ref(): not worth a
 * block and the caller's hold, which a caller may then skip. */
#define TCP_REF_MIN (16u * 1024)
/* tcp_write() of bytes that stay where they are until ref's done: on a
 * port whose device reads any memory, the send queue points into them
 * rather than copying them (whole mbufs; a write under 16 KiB, the tail's
 * room and the rest under an mbuf are copied). Returns how many were
 * queued; 0 also when less than 16 KiB of room is free for a longer
 * write (the sent upcall says when there is more). */
uint32_t tcp_write_ref(struct net_stack *ns, struct tcp_conn *c,
		const void *data, uint32_t len, const struct tcp_ref *ref);
/* Send FIN after the queued data. */
void tcp_close(struct net_stack *ns, struct tcp_conn *c);
/* Active open towards raddr:rport (network/host order) from lport; the
 * accepted upcall runs once established. NULL when no slot is free, or
 * no port has raddr's family. */
struct tcp_conn *tcp_connect(struct net_stack *ns, uint32_t raddr,
		uint16_t rport, uint16_t lport, const uint8_t peer_mac[6]);
/* The same towards an address of either family: out of the port whose
 * subnet (IPv6: prefix) holds it, from its address of that family (a
 * link-local peer: from the first IPv6 port's link-local address). */
struct tcp_conn *tcp_connect_addr(struct net_stack *ns,
		const struct net_addr *raddr, uint16_t rport, uint16_t lport,
		const uint8_t peer_mac[6]);
/*
 * Active open towards raddr:rport (network/host order) out of the port
 * whose subnet holds raddr, from that port's address, with its own
 * upcalls (up, ctx) rather than the stack's: the accepted upcall runs once
 * established (return 0), the closed upcall when the attempt fails
 * (refused, timed out after tcp_config.syn_retries) or the connection
 * ends. The local port is a free one whose answers that port's RSS
 * steers to this stack's queue; the next hop is raddr, resolved by ARP on
 * that port. Returns the connection, or NULL with *err: -EAGAIN (the next
 * hop is not resolved yet: an ARP request went out, try again shortly),
 * -ENETUNREACH (raddr is on no port's link: no gateway is configured),
 * -EADDRNOTAVAIL (no local port fits), -ENOMEM (no free slot).
 */
struct tcp_conn *tcp_open(struct net_stack *ns, uint32_t raddr,
		uint16_t rport, const struct tcp_upcalls *up, void *ctx, int *err);
/* tcp_open() towards an address of either family: over IPv6 the next hop
 * is resolved by neighbour discovery (a solicitation, then -EAGAIN), the
 * local port steered by RSS over IPv6's four-tuple. */
struct tcp_conn *tcp_open_addr(struct net_stack *ns,
		const struct net_addr *raddr, uint16_t rport,
		const struct tcp_upcalls *up, void *ctx, int *err);
/* The connection's round trip, microseconds, as receive autotuning sees
 * it: the smoothed RTT of what it sent, or the receiver's own measure
 * (the time a window's worth of data takes to arrive) when that is less;
 * 0 before either. The layers above size their own windows with it. */
uint32_t tcp_rtt_us(const struct tcp_conn *c);
/* The peer of a connection (for logs: inet_ntop() prints it). */
void tcp_peer(const struct tcp_conn *c, struct net_addr *addr, uint16_t *port);
/* Send RST and drop the connection now (closed upcall follows). */
void tcp_abort(struct net_stack *ns, struct tcp_conn *c);
/* Transmit what the windows allow; the stack calls it after input and
 * timers, the upper layer after writing outside an upcall. */
void tcp_output(struct net_stack *ns, struct tcp_conn *c);

#endif /* EWYK_TCP_H */
