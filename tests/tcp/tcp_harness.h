/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A deterministic, in-process TCP harness in the manner of packetdrill: the
 * stack under test is a real net_stack on a real mempool (EAL in memory, no
 * device), its transmissions are captured instead of sent, time is a
 * virtual clock, and the peer is the test, which injects segments and
 * checks every segment the stack answers with.
 *
 * Every test runs in either family: TH_FAMILY=6 in the environment puts
 * the stack's ports and the peer on IPv6 (2001:2::/64, and 2001:2:0:1::/64
 * for the second port); the segments are the same.
 */
#ifndef EWYK_TCP_HARNESS_H
#define EWYK_TCP_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp_impl.h"	/* white-box: connection fields */

#define TH_PEER_IP 0x010012c6u	/* 198.18.0.1, network order on little-endian */
#define TH_LOCAL_IP 0x020012c6u	/* 198.18.0.2 */
#define TH_LOCAL_IP2 0x020112c6u	/* 198.18.1.2: the second port's */
#define TH_PEER2_IP 0x010112c6u	/* 198.18.1.1: on the second port's link */
#define TH_PORT 80
#define TH_MAX_CAPTURE 4096
#define TH_APP_BUF (1 << 20)

/* A segment as the test writes or reads it. */
struct th_seg {
	uint16_t sport;		/* peer's port when injecting */
	uint16_t dport;		/* the stack's; 0: TH_PORT */
	uint32_t seq;
	uint32_t ack;
	uint8_t flags;
	uint16_t win;
	uint8_t opts[40];
	uint8_t optlen;
	const void *data;
	uint16_t len;
};

/* A captured segment, parsed. */
struct th_out {
	struct tcp_view t;
	uint8_t payload[9000];
	uint32_t ip_id;
	uint64_t at;		/* virtual time of transmission, ms */
	uint64_t at_us;		/* the same, microseconds */
	uint8_t port;		/* the stack's port it left by */
	uint8_t src_mac[6];
	union net_ip saddr;
};

/* The application above the stack: records what it got. */
struct th_app {
	int accepted;
	int closed;
	int peer_closed;
	struct tcp_conn *conn;
	uint32_t rcv_space;	/* window the app offers */
	uint32_t got_len;
	uint8_t *got;		/* TH_APP_BUF bytes */
	/* Set: what it takes is checked against the byte the stream has at
	 * each offset, not kept in got (transfers past TH_APP_BUF). */
	uint8_t (*pattern)(uint32_t off);
	bool close_on_fin;	/* tcp_close() when the peer closes */
	/* takes no more than rcv_space, as HTTP/1.1 into its buffer: TCP
	 * keeps the rest (its receive buffer) */
	bool room_only;
	/* with room_only, as HTTP/1.1 parses its buffer: each whole request
	 * of serve_unit bytes taken is consumed at once, inside the call,
	 * and its bytes are room again (served counts them) */
	uint32_t serve_unit;
	uint32_t serve_in;
	unsigned int served;
	unsigned int sent_calls;	/* the sent upcall: room to write */
};

/* A port's TX callback context. */
struct th_tx {
	struct th *h;
	uint8_t port;
};

struct th {
	struct net_stack *ns;
	uint8_t family;		/* NET_AF_INET or NET_AF_INET6 */
	struct net_if ifc;
	struct arp_cache *arp;
	struct net_nd *nd;	/* IPv6: the port's */
	struct net_if ifc2;	/* th_add_port() */
	struct arp_cache *arp2;
	struct net_nd *nd2;
	struct th_tx tx[2];
	struct net_stats stats;
	struct th_app app;
	uint64_t now;		/* the virtual clock, ms: now_us / 1000 */
	uint64_t now_us;
	unsigned int n_out;	/* captured, not yet read */
	unsigned int rd;
	struct rte_mbuf *out[TH_MAX_CAPTURE];
	uint64_t out_at[TH_MAX_CAPTURE];	/* microseconds */
	uint8_t out_port[TH_MAX_CAPTURE];
	unsigned int in_use_at_start;
	/* The driver copies each frame and frees it at once, as net_af_xdp
	 * does: the stack must not read a sent mbuf. */
	bool copy_tx;
	/* A frame put in is not followed by the flush: the test writes what
	 * the upper layer would answer inside the burst, then flushes. */
	bool hold_flush;
	/* No scoreboard check after each step (its walk is the flight's
	 * length): for the benchmarks' tools, never for tests. */
	bool unchecked;
	/* TSO frames the driver cut into segments (th_tso()), and the
	 * last one's segment payload. */
	unsigned int tso_frames;
	uint16_t tso_segsz;
};

/* Sets up a stack; cfg may be NULL for the defaults. */
struct th *th_new(const struct tcp_config *cfg);
/* The port offers TSO (and checksum offload, which it implies): the
 * driver cuts each TSO frame into segments as a NIC does, and the test
 * reads those. l2_in_mtu: net_tap's quirk (struct net_if). */
void th_tso(struct th *h, bool l2_in_mtu);
/* Tears down; fails the test if mbufs leaked. */
void th_free(struct th *h);

/* A segment from the peer's port 40000 with a 65535 window. */
struct th_seg th_seg_from(uint32_t seq, uint32_t ack, uint8_t flags);

/* A second port, 198.18.1.2/24 (2001:2:0:1::2/64) with MAC
 * 02:00:00:00:00:03. */
void th_add_port(struct th *h);
/* The same with ip_count IPv4 addresses from 198.18.1.2 on. */
void th_add_port_ips(struct th *h, uint16_t ip_count);

/* The test's family, by TH_FAMILY. */
uint8_t th_family(void);
/* The peer: 198.18.0.1 or 2001:2::1; on port 1's link 198.18.1.1 or
 * 2001:2:0:1::1. */
struct net_addr th_peer(const struct th *h);
struct net_addr th_peer2(const struct th *h);
/* The stack's address on a port in the test's family. */
union net_ip th_local(const struct th *h, uint8_t port);
/* The largest segment of the port's MTU: 40 or 60 bytes less. */
uint16_t th_mss(const struct th *h);
/* The peer's MAC in port's neighbour cache (ARP's or ND's). */
void th_learn(struct th *h, uint8_t port, const struct net_addr *a,
		const uint8_t mac[6]);
/* Whether frame f is an ARP request or a neighbour solicitation for a,
 * from the port's MAC and address. */
bool th_is_solicitation(const struct th *h, const uint8_t *f, uint8_t port,
		const struct net_addr *a);
/* The drop reason of a frame to an address not the port's. */
enum net_drop th_not_ours(const struct th *h);

/* A segment from the peer to the stack's address on port 0. */
void th_inject(struct th *h, const struct th_seg *s);
/* The same to dst, received on the stack's port. */
void th_inject_on(struct th *h, uint8_t port, const union net_ip *dst,
		const struct th_seg *s);
/* The same from src. */
void th_inject_from(struct th *h, uint8_t port, const union net_ip *src,
		const union net_ip *dst, const struct th_seg *s);
/* A whole frame, received on port. */
void th_rx_frame(struct th *h, uint8_t port, const void *frame, uint16_t len);
/* The next captured frame, whatever it is: its length (0: none), copied
 * into buf (up to size bytes); its port in *port. */
uint16_t th_next_frame(struct th *h, uint8_t *buf, uint16_t size,
		uint8_t *port);
/* Advance the virtual clock by ms, running timers every millisecond. */
void th_advance(struct th *h, uint64_t ms);
/* Advance it by us, running timers every microsecond (pacing, and
 * deadlines of a sub-millisecond path). */
void th_advance_us(struct th *h, uint64_t us);
/* Next captured segment, or false if none. */
bool th_next(struct th *h, struct th_out *o);
unsigned int th_pending(const struct th *h);
/* The next captured segment, which must have these flags, this sequence
 * number and (with TCP_ACK) this ACK: the test fails otherwise. */
void th_expect(struct th *h, struct th_out *o, uint8_t flags, uint32_t seq,
		uint32_t ack);
/* The room the application offers, pushed to the stack (a window that
 * opens enough is announced at once: the update is captured). */
void th_set_rcv_space(struct th *h, uint32_t bytes);
/* Drops everything captured so far. */
void th_drain(struct th *h);

/* Three-way handshake from peer port sport with ISN irs and the given SYN
 * options; returns the stack's ISS. The connection is then established. */
uint32_t th_handshake(struct th *h, uint16_t sport, uint32_t irs,
		const uint8_t *opts, uint8_t optlen, uint16_t win);

/* Option builders: append to s->opts. */
void th_opt_mss(struct th_seg *s, uint16_t mss);
void th_opt_wscale(struct th_seg *s, uint8_t shift);
void th_opt_sack_ok(struct th_seg *s);
void th_opt_ts(struct th_seg *s, uint32_t val, uint32_t ecr);
void th_opt_sack(struct th_seg *s, const uint32_t (*blocks)[2], int n);

struct rte_mempool *th_pool(void);
/* The pool's mbufs (4,095); a program defines it to have more. */
extern unsigned int th_pool_mbufs;
/* Blocks of one of the stack's pools handed out, not back. */
uint32_t th_blocks_out(const struct blk_pool *p);

#endif /* EWYK_TCP_HARNESS_H */
