/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: datagrams to a shard's QUIC endpoint (lib/quic on
 * ngtcp2 and nghttp3) through a real net_stack, with tests/tls's harness
 * for the stack and the certificates. Input: records of a control byte
 * and a 16-bit length (big endian), then that many bytes: the payload of a
 * UDP datagram to 198.18.0.2:443 from 198.18.0.1, its source port
 * 40000 + (ctl & 7) (eight clients, migrations between them reachable);
 * ctl bit 3 advances the clock 20 ms after, bit 4 a second.
 *
 * Then the clock passes the idle timeout. Invariants besides no crash and
 * no sanitizer report: no connection is left, and every answer handed to
 * the endpoint came back through its released hook.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cksum.h"
#include "ewyk_quic.h"
#include "http_req.h"
#include "tcp_harness.h"
#include "tls_harness.h"

#define QUIC_PORT 443
#define IDLE_MS 500
#define ANSWERS 64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tlsh *h;
static struct quic_endpoint *ep;
static struct quic_stats stats;
static struct http_answer answers[ANSWERS];
static bool lent[ANSWERS];
static unsigned int out;	/* answers handed out, not back */

static void
invariant(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_quic: invariant broken: %s\n", what);
		abort();
	}
}

/* Every request a short answer of its own, as an inline route gives. */
static int
request(void *ctx, const struct http_head *r, struct http_origin o,
		char *allow, size_t allow_cap, struct http_answer **ans)
{
	unsigned int i;

	(void)ctx;
	(void)r;
	(void)o;
	(void)allow;
	(void)allow_cap;
	for (i = 0; i < ANSWERS; i++)
		if (!lent[i]) {
			lent[i] = true;
			out++;
			http_answer_init(&answers[i]);
			http_answer_text(&answers[i], 200, "fuzzed\n");
			*ans = &answers[i];
			return HTTP_DISPATCH_ANSWERED;
		}
	return 503;
}

static void
released(void *ctx, struct http_answer *a)
{
	unsigned int i = (unsigned int)(a - answers);

	(void)ctx;
	invariant(i < ANSWERS && lent[i], "an answer released twice or "
			"never lent");
	http_answer_release(a);
	lent[i] = false;
	out--;
}

/* Bodies of paths under /up are read as they come, each read as soon as
 * it is at hand, as a proxy's upstream side would. */
static bool
streams_body(void *ctx, const struct http_head *r, struct http_origin o)
{
	(void)ctx;
	(void)o;
	return r->path.len >= 3 && memcmp(r->path.p, "/up", 3) == 0;
}

static void
body_ready(void *ctx, struct http_origin o)
{
	uint8_t buf[5000];
	long n;

	(void)ctx;
	while ((n = quic_body_read(ep, o, buf, sizeof(buf))) > 0)
		invariant(n <= (long)sizeof(buf), "a body read past its buffer");
	invariant(n == 0 || n == -1 || n == HTTP_SOURCE_AGAIN,
			"a body read says bytes, again, the end or broken");
}

static void
free_all(void)
{
	quic_endpoint_destroy(ep);
	tlsh_free(h);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct quic_conf c = {
		.id = 0, .port = QUIC_PORT, .max_conns = 16,
		.idle_timeout_ms = IDLE_MS, .handshake_timeout_ms = IDLE_MS,
		.retry_threshold = 4,
		.request = request, .released = released, .stats = &stats,
		.streams_body = streams_body, .body_ready = body_ready,
	};

	(void)argc;
	(void)argv;
	h = tlsh_new(TLSH_INLINE, 1000);
	c.ns = h->th->ns;
	c.tls = h->cfg;
	ep = quic_endpoint_create(&c);
	invariant(ep != NULL, "the endpoint is made");
	atexit(free_all);
	return 0;
}

/* A datagram from the peer's port sport, summed as a client's is. */
static void
datagram(uint16_t sport, const uint8_t *payload, size_t len)
{
	static const uint8_t peer_mac[6] = { 2, 0, 0, 0, 0, 1 };
	static uint8_t f[14 + 20 + 8 + 65535];
	uint16_t udp_len = (uint16_t)(8 + len), sum;
	uint32_t src = TH_PEER_IP, dst = TH_LOCAL_IP;
	uint8_t *ip = f + 14, *u = ip + 20;
	struct cksum c;

	memcpy(f, h->th->ifc.mac, 6);
	memcpy(f + 6, peer_mac, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[2] = (uint8_t)((20 + udp_len) >> 8);
	ip[3] = (uint8_t)(20 + udp_len);
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	sum = cksum_buf(ip, 20);
	memcpy(ip + 10, &sum, 2);
	u[0] = (uint8_t)(sport >> 8);
	u[1] = (uint8_t)sport;
	u[2] = QUIC_PORT >> 8;
	u[3] = QUIC_PORT & 0xff;
	u[4] = (uint8_t)(udp_len >> 8);
	u[5] = (uint8_t)udp_len;
	u[6] = u[7] = 0;
	memcpy(u + 8, payload, len);
	cksum_init(&c);
	cksum_pseudo_ipv4(&c, src, dst, 17, udp_len);
	cksum_feed(&c, u, udp_len);
	sum = cksum_finish(&c);
	if (sum == 0)
		sum = 0xffff;
	memcpy(u + 6, &sum, 2);
	th_rx_frame(h->th, 0, f, (uint16_t)(14 + 20 + udp_len));
	th_drain(h->th);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	if (h == NULL)
		LLVMFuzzerInitialize(NULL, NULL);
	while (off + 3 <= size) {
		uint8_t ctl = data[off];
		size_t len = (size_t)data[off + 1] << 8 | data[off + 2];

		off += 3;
		if (len > size - off)
			len = size - off;
		if (len > 1472)
			len = 1472;	/* an Ethernet MTU's UDP payload */
		datagram((uint16_t)(40000 + (ctl & 7)), data + off, len);
		off += len;
		if (ctl & 8)
			th_advance(h->th, 20);
		if (ctl & 16)
			th_advance(h->th, 1000);
		th_drain(h->th);
	}
	/* Past the idle and handshake timeouts (and three probe timeouts of
	 * a closing connection's), a step at a time, as the shard's timers
	 * run. */
	for (int i = 0; i < 2 * IDLE_MS / 10 + 100; i++) {
		th_advance(h->th, 10);
		th_drain(h->th);
	}
	if (quic_endpoint_conns(ep) != 0)
		fprintf(stderr, "fuzz_quic: %u open, %u handshaking; %llu "
				"accepted, %llu closed, %llu idle timeouts\n",
				quic_endpoint_conns(ep), stats.handshaking,
				(unsigned long long)stats.accepted,
				(unsigned long long)stats.closed,
				(unsigned long long)stats.idle_timeouts);
	invariant(quic_endpoint_conns(ep) == 0, "a connection outlives its "
			"idle timeout");
	invariant(out == 0, "an answer was never given back");
	invariant(stats.mem_bytes == 0, "ngtcp2's or nghttp3's memory outlives "
			"its connection");
	return 0;
}
