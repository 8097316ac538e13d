/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the TLS layer's input, through tests/tls's harness
 * (lib/tls's shard over a real net_stack and lib/http's server, a GnuTLS
 * client as the peer). One connection per input:
 *
 *   byte 0, flags: bit 0 a real handshake first (bit 1: TLS 1.2, else
 *   1.3; bit 2: ALPN h2, else http/1.1), bit 3 the handshake steps wait
 *   until a chunk asks for them (bytes then arrive while a step is out)
 *   then chunks: a control byte and a 16-bit length, then that many bytes:
 *     ctl bit 0  the bytes go through the client's session (encrypted
 *                records of HTTP), else raw onto TCP (ClientHellos,
 *                records, garbage)
 *     ctl bit 1  the clock advances 50 ms after
 *     ctl bit 2  the queued steps run first
 *     ctl bit 3  the client sends close_notify after
 *
 * Then the steps run, the clock passes the handshake timeout, and the
 * client resets. Invariants besides no crash and no sanitizer report: the
 * shard has no connection and no handshake left, no staging out of its
 * pool, no step out, and every answer went back (the HTTP harness).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "http_harness.h"
#include "tcp_harness.h"
#include "tls_conn.h"
#include "tls_harness.h"

#define TIMEOUT_MS 200

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tlsh *h;
static uint16_t next_port = 10000;

static void
invariant(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_tls: invariant broken: %s\n", what);
		abort();
	}
}

/* The harness's certificate directory goes with the process. */
static void
free_harness(void)
{
	tlsh_free(h);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	h = tlsh_new(TLSH_QUEUED, TIMEOUT_MS);
	atexit(free_harness);
	return 0;
}

static unsigned int
free_staging(void)
{
	unsigned int n = 0;
	const struct tls_hs *hs;

	for (hs = h->sh->free_hs; hs != NULL; hs = hs->free_next)
		n++;
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tlsc c;
	uint8_t flags;
	size_t off = 1;
	bool secured = false;
	int i;

	if (h == NULL)
		LLVMFuzzerInitialize(NULL, NULL);
	if (size < 1)
		return 0;
	flags = data[0];
	next_port = (uint16_t)(next_port >= 60000 ? 10000 : next_port + 1);
	tlsc_open(h, &c, next_port);
	h->hold_steps = false;
	if (flags & 1) {
		const char *prio = (flags & 2) ?
			"NORMAL:-VERS-ALL:+VERS-TLS1.2" : NULL;

		secured = tlsc_handshake(&c, (flags & 4) ? "h2" : "http/1.1",
				prio, NULL) == 0;
		invariant(secured, "a real client's handshake fails");
	}
	h->hold_steps = (flags & 8) != 0;
	while (off + 3 <= size && !c.reset) {
		uint8_t ctl = data[off];
		size_t len = (size_t)data[off + 1] << 8 | data[off + 2];

		off += 3;
		if (len > size - off)
			len = size - off;
		if (ctl & 4) {
			h->hold_steps = false;
			tlsh_pump(h);
			h->hold_steps = (flags & 8) != 0;
		}
		if ((ctl & 1) && secured) {
			gnutls_record_send(c.s, data + off, len);
		} else {
			tlsc_send_raw(&c, data + off, len);
		}
		off += len;
		tlsh_pump(h);
		if (secured) {
			char buf[4096];

			while (gnutls_record_recv(c.s, buf, sizeof(buf)) > 0)
				;
		}
		if (ctl & 2)
			for (i = 0; i < 50; i++)
				tlsh_pump(h);
		if ((ctl & 8) && secured)
			gnutls_bye(c.s, GNUTLS_SHUT_WR);
	}
	h->hold_steps = false;
	for (i = 0; i < TIMEOUT_MS + 10; i++)
		tlsh_pump(h);
	if (!c.reset)
		tlsc_reset(&c);
	tlsc_free(&c);
	for (i = 0; i < 5; i++)
		tlsh_pump(h);
	invariant(h->nsteps == 0 && tls_shard_steps_out(h->sh) == 0,
			"a step left out");
	invariant(h->st.conns == 0, "a connection left open");
	invariant(h->st.handshaking == 0, "a handshake left counted");
	invariant(free_staging() == 8, "a handshake staging not given back");
	return 0;
}
