/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/tls in process: handshakes (TLS 1.3 and 1.2, ALPN, resumption),
 * steps run inline, queued and on another thread, HTTP/1.1 over the
 * records, small writes gathered into one record, a record HTTP takes in
 * parts (the rest offered again when HTTP made room as it took), a
 * ClientHello queued for a staging, close_notify, the handshake timeout,
 * reloads and their generations, reloads refused, the ticket key's
 * rotation, and no staging held by an idle connection. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "http_harness.h"
#include "tcp_harness.h"
#include "tls_conn.h"		/* white-box: the shard's staging */
#include "tls_harness.h"

#define GET_A "GET /a.txt HTTP/1.1\r\nHost: ewyk.test\r\n\r\n"
#define GET_Q "GET /q/x HTTP/1.1\r\nHost: e\r\n\r\n"

static unsigned int
free_staging(const struct tlsh *h)
{
	unsigned int n = 0;
	const struct tls_hs *hs;

	for (hs = h->sh->free_hs; hs != NULL; hs = hs->free_next)
		n++;
	return n;
}

static void
get_a(struct tlsc *c)
{
	char out[4096];

	assert_true(tlsc_exchange(c, GET_A, HH_A_TXT, out, sizeof(out)));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK\r\n"));
}

static void
one_conversation(enum tlsh_offload mode, const char *priority,
		gnutls_protocol_t want)
{
	struct tlsh *h = tlsh_new(mode, 10000);
	struct tlsc c;

	tlsc_open(h, &c, 40000);
	assert_int_equal(tlsc_handshake(&c, "http/1.1", priority, NULL), 0);
	assert_int_equal(gnutls_protocol_get_version(c.s), want);
	get_a(&c);
	get_a(&c);
	assert_int_equal(h->st.handshakes_full, 1);
	assert_int_equal(want == GNUTLS_TLS1_3 ? h->st.tls13 : h->st.tls12, 1);
	assert_int_equal(h->st.alpn_http11, 1);
	if (mode == TLSH_INLINE)
		assert_int_equal(h->st.hs_steps_offloaded, 0);
	else
		assert_true(h->st.hs_steps_offloaded >= 1);
	/* Established and idle: every staging is back in the pool. */
	assert_int_equal(free_staging(h), 8);
	assert_int_equal(h->st.handshaking, 0);
	tlsc_close(&c);
	tlsc_free(&c);
	tlsh_free(h);
}

static void
test_tls13_inline(void **state)
{
	(void)state;
	one_conversation(TLSH_INLINE, NULL, GNUTLS_TLS1_3);
}

static void
test_tls12_inline(void **state)
{
	(void)state;
	one_conversation(TLSH_INLINE, "NORMAL:-VERS-ALL:+VERS-TLS1.2",
			GNUTLS_TLS1_2);
}

static void
test_tls13_steps_queued(void **state)
{
	(void)state;
	one_conversation(TLSH_QUEUED, NULL, GNUTLS_TLS1_3);
}

static void
test_steps_on_another_thread(void **state)
{
	(void)state;
	one_conversation(TLSH_THREAD, NULL, GNUTLS_TLS1_3);
	one_conversation(TLSH_THREAD, "NORMAL:-VERS-ALL:+VERS-TLS1.2",
			GNUTLS_TLS1_2);
}

/* An answer's head and body are two writes; they leave as one record. */
static void
test_small_writes_gathered(void **state)
{
	struct tlsh *h = tlsh_new(TLSH_INLINE, 10000);
	struct tlsc c;
	uint64_t before;

	(void)state;
	tlsc_open(h, &c, 40001);
	assert_int_equal(tlsc_handshake(&c, "http/1.1", NULL, NULL), 0);
	get_a(&c);
	before = h->st.records_out;
	get_a(&c);
	assert_int_equal(h->st.records_out - before, 1);
	tlsc_close(&c);
	tlsc_free(&c);
	tlsh_free(h);
}

/* ALPN h2: the server's first frame, right after the client's preface
 * and SETTINGS, is its SETTINGS. */
static void
test_alpn_h2_starts_http2(void **state)
{
	static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
		"\x00\x00\x00\x04\x00\x00\x00\x00\x00";
	struct tlsh *h = tlsh_new(TLSH_INLINE, 10000);
	gnutls_datum_t proto;
	uint8_t frame[64];
	struct tlsc c;
	ssize_t n = GNUTLS_E_AGAIN;
	int pumps = 0;

	(void)state;
	tlsc_open(h, &c, 40002);
	assert_int_equal(tlsc_handshake(&c, "h2", NULL, NULL), 0);
	assert_int_equal(gnutls_alpn_get_selected_protocol(c.s, &proto), 0);
	assert_int_equal(proto.size, 2);
	assert_int_equal(h->st.alpn_h2, 1);
	assert_int_equal(gnutls_record_send(c.s, preface, sizeof(preface) - 1),
			sizeof(preface) - 1);
	while (n == GNUTLS_E_AGAIN && pumps++ < 100) {
		tlsh_pump(h);
		n = gnutls_record_recv(c.s, frame, sizeof(frame));
	}
	assert_true(n >= 9);
	assert_int_equal(frame[3], 4);	/* SETTINGS */
	assert_int_equal(h->hh->stats.h2_conns, 1);
	tlsc_close(&c);
	tlsc_free(&c);
	tlsh_free(h);
}

/* ALPN h2 is HTTP/2 from the first byte: an HTTP/1.1 request there is no
 * preface, and gets no HTTP/1.1 answer. */
static void
test_alpn_h2_is_not_sniffed(void **state)
{
	struct tlsh *h = tlsh_new(TLSH_INLINE, 10000);
	char out[4096];
	struct tlsc c;

	(void)state;
	tlsc_open(h, &c, 40008);
	assert_int_equal(tlsc_handshake(&c, "h2", NULL, NULL), 0);
	assert_false(tlsc_exchange(&c, GET_A, "HTTP/1.1", out, sizeof(out)));
	assert_int_equal(h->hh->stats.requests, 0);
	tlsc_close(&c);
	tlsc_free(&c);
	tlsh_free(h);
}

/* A session to resume: a handshake (prio NULL: TLS 1.3), a request
 * (TLS 1.3's ticket comes after the handshake), its data in sess. */
static void
session_of(struct tlsh *h, uint16_t sport, const char *prio,
		gnutls_datum_t *sess)
{
	struct tlsc c;

	tlsc_open(h, &c, sport);
	assert_int_equal(tlsc_handshake(&c, "http/1.1", prio, NULL), 0);
	get_a(&c);
	assert_int_equal(gnutls_session_get_data2(c.s, sess), 0);
	tlsc_close(&c);
	tlsc_free(&c);
}

/* Whether a handshake offering sess resumed it (else it was a full one). */
static bool
resumes(struct tlsh *h, uint16_t sport, const char *prio,
		const gnutls_datum_t *sess)
{
	struct tlsc c;
	bool resumed;

	tlsc_open(h, &c, sport);
	assert_int_equal(tlsc_handshake(&c, "http/1.1", prio, sess), 0);
	resumed = gnutls_session_is_resumed(c.s);
	get_a(&c);
	tlsc_close(&c);
	tlsc_free(&c);
	return resumed;
}

static void
test_resumption(void **state)
{
	struct tlsh *h = tlsh_new(TLSH_INLINE, 10000);
	gnutls_datum_t sess;
	int v;

	(void)state;
	for (v = 0; v < 2; v++) {
		const char *prio = v == 0 ? NULL : "NORMAL:-VERS-ALL:+VERS-TLS1.2";

		session_of(h, (uint16_t)(40010 + v * 2), prio, &sess);
		assert_true(resumes(h, (uint16_t)(40011 + v * 2), prio, &sess));
		gnutls_free(sess.data);
	}
	assert_int_equal(h->st.handshakes_resumed, 2);
	tlsh_free(h);
}

/* The ticket key rotated when due: a ticket of the key before no longer
 * resumes (a full handshake instead), one of the new key does, and the
 * next rotation is due a whole period later. */
static void
test_ticket_key_rotation(void **state)
{
	struct tlsh *h = tlsh_new(TLSH_INLINE, 10000);
	uint64_t now = (uint64_t)time(NULL);
	struct tls_config_info info;
	gnutls_datum_t old, fresh;

	(void)state;
	h->cfg->conf.ticket_rotate_s = 3600;	/* white-box: ewykd's option */
	session_of(h, 40030, NULL, &old);
	assert_false(tls_config_tick(h->cfg, now + 60));	/* not due */
	assert_true(tls_config_tick(h->cfg, now + 3600));
	assert_false(tls_config_tick(h->cfg, now + 3660));
	tls_config_info(h->cfg, &info);
	assert_int_equal(info.ticket_rotations, 1);
	assert_false(resumes(h, 40031, NULL, &old));
	session_of(h, 40032, NULL, &fresh);
	assert_true(resumes(h, 40033, NULL, &fresh));
	assert_int_equal(h->st.handshakes_resumed, 1);
	gnutls_free(old.data);
	gnutls_free(fresh.data);
	tlsh_free(h);
}

/* The certificate a new connection is served, copied into cert. */
static void
served_certificate(struct tlsh *h, uint16_t sport, gnutls_datum_t *cert)
{
	const gnutls_datum_t *peer;
	struct tlsc c;

	tlsc_open(h, &c, sport);
	assert_int_equal(tlsc_handshake(&c, "http/1.1", NULL, NULL), 0);
	peer = gnutls_certificate_get_peers(c.s, NULL);
	assert_non_null(peer);
	cert->size = peer->size;
	cert->data = malloc(peer->size);
	assert_non_null(cert->data);
	memcpy(cert->data, peer->data, peer->size);
	tlsc_close(&c);
	tlsc_free(&c);
}

/* A reload of files that make no usable pair changes nothing: each is
 * refused with its reason and counted, and new connections are still
 * served the certificate of before. */
/* The pair an SNI picks when GnuTLS's exact comparison finds none: an
 * exact name anywhere leaves GnuTLS's choice (-1), else the first pair
 * whose wildcard names it (one label), else the default (-1). */
static void
test_wildcard_pick(void **state)
{
	static const char *const names[] = { "a.test", "*.b.test", "x.b.test",
		"*.c.test" };
	char paths[4][2][PATH_MAX], err[TLS_ERR_LEN];
	struct tls_conf conf = { .n_pairs = 4, .shards = 1 };
	struct tlsh *h = tlsh_new(TLSH_INLINE, 10000);
	struct tls_config *cfg;
	struct tls_gen *g;
	unsigned int i;

	(void)state;
	for (i = 0; i < 4; i++) {
		snprintf(paths[i][0], PATH_MAX, "%s/pick%u.pem", h->dir, i);
		snprintf(paths[i][1], PATH_MAX, "%s/pick%u.key", h->dir, i);
		tlsh_write_named_pair(paths[i][0], paths[i][1], names[i], -60,
				86400);
		conf.pairs[i] = (struct tls_pair_conf){ paths[i][0],
			paths[i][1], NULL };
	}
	cfg = tls_config_create(&conf, err, sizeof(err));
	if (cfg == NULL)
		fail_msg("tls_config_create: %s", err);
	g = tls_gen_take(cfg);
	assert_int_equal(tls_gen_pick(g, "a.test"), -1);	/* exact */
	assert_int_equal(tls_gen_pick(g, "x.b.test"), -1);	/* exact beats *.b */
	assert_int_equal(tls_gen_pick(g, "y.b.test"), 1);
	assert_int_equal(tls_gen_pick(g, "Y.B.TEST"), 1);
	assert_int_equal(tls_gen_pick(g, "q.c.test"), 3);
	assert_int_equal(tls_gen_pick(g, "z.y.b.test"), -1);	/* one label */
	assert_int_equal(tls_gen_pick(g, "b.test"), -1);
	assert_int_equal(tls_gen_pick(g, "other.test"), -1);
	assert_non_null(g->per[0].pair[1]);
	tls_gen_release(g);
	tls_config_destroy(cfg);
	tlsh_free(h);
}

static void
test_reload_refuses_what_cannot_serve(void **state)
{
	static const struct {
		long from_s, to_s;	/* the certificate's, from now */
		bool other_key;		/* the key file left as it was */
		const char *says;
	} bad[] = {
		{ -3600, 86400, true, "does not match the certificate of" },
		{ -7200, -60, false, "expired on" },
		{ 3600, 86400, false, "not valid before" },
	};
	struct tlsh *h = tlsh_new(TLSH_INLINE, 10000);
	char err[TLS_ERR_LEN], other[PATH_MAX];
	struct tls_config_info info;
	gnutls_datum_t before, now;
	size_t i;

	(void)state;
	snprintf(other, sizeof(other), "%s/other-key.pem", h->dir);
	served_certificate(h, 40040, &before);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tlsh_write_pair(h->cert, bad[i].other_key ? other : h->key,
				bad[i].from_s, bad[i].to_s);
		err[0] = '\0';
		if (tls_config_reload(h->cfg, err, sizeof(err)) != -1 ||
				strstr(err, bad[i].says) == NULL)
			fail_msg("reload %zu taken or not said: '%s'", i, err);
		served_certificate(h, (uint16_t)(40041 + i), &now);
		assert_int_equal(now.size, before.size);
		assert_memory_equal(now.data, before.data, before.size);
		free(now.data);
	}
	tls_config_info(h->cfg, &info);
	assert_int_equal(info.reload_failures, 3);
	assert_int_equal(info.reloads, 0);
	assert_int_equal(info.generation, 1);
	assert_int_equal(h->st.gen_switches, 1);	/* the shard's first */
	free(before.data);
	tlsh_free(h);
}

/* The client's close_notify: HTTP finishes and the server answers with
 * its own, then FIN. */
static void
test_close_notify_both_ways(void **state)
{
	struct tlsh *h = tlsh_new(TLSH_INLINE, 10000);
	char buf[64];
	struct tlsc c;
	int pumps = 0;
	ssize_t n = GNUTLS_E_AGAIN;

	(void)state;
	tlsc_open(h, &c, 40003);
	assert_int_equal(tlsc_handshake(&c, "http/1.1", NULL, NULL), 0);
	get_a(&c);
	assert_int_equal(gnutls_bye(c.s, GNUTLS_SHUT_WR), 0);
	while (n == GNUTLS_E_AGAIN && pumps++ < 100) {
		tlsh_pump(h);
		n = gnutls_record_recv(c.s, buf, sizeof(buf));
	}
	assert_int_equal(n, 0);		/* the server's close_notify */
	assert_int_equal(h->st.close_notify_received, 1);
	assert_int_equal(h->st.close_notify_sent, 1);
	assert_true(c.fin);
	tlsc_close(&c);
	tlsc_free(&c);
	tlsh_free(h);
}

/* Half a ClientHello and nothing more: reset at the deadline, counted. */
static void
test_handshake_timeout(void **state)
{
	static const uint8_t partial[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01 };
	struct tlsh *h = tlsh_new(TLSH_INLINE, 500);
	struct tlsc c;
	int i;

	(void)state;
	tlsc_open(h, &c, 40004);
	tlsc_send_raw(&c, partial, sizeof(partial));
	for (i = 0; i < 400 && !c.reset; i++)
		tlsh_pump(h);
	assert_false(c.reset);
	for (i = 0; i < 200 && !c.reset; i++)
		tlsh_pump(h);
	assert_true(c.reset);
	assert_int_equal(h->st.failed[TLS_FAIL_timeout], 1);
	assert_int_equal(h->st.handshaking, 0);
	tlsc_free(&c);
	tlsh_free(h);
}

/* Eight half ClientHellos hold every staging; a ninth client's whole
 * ClientHello is acknowledged and held by TCP, queued. When the eight
 * time out, the first staging given back is handed to it: its handshake
 * completes, well before its own deadline, and it is served. */
static void
test_queued_for_a_staging(void **state)
{
	static const uint8_t partial[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01 };
	struct tlsh *h = tlsh_new(TLSH_INLINE, 500);
	struct tlsc hold[8], c;
	int i;

	(void)state;
	for (i = 0; i < 8; i++) {
		tlsc_open(h, &hold[i], (uint16_t)(40100 + i));
		tlsc_send_raw(&hold[i], partial, sizeof(partial));
	}
	tlsh_pump(h);
	assert_int_equal(free_staging(h), 0);
	for (i = 0; i < 200; i++)
		tlsh_pump(h);
	tlsc_open(h, &c, 40200);
	assert_int_equal(tlsc_handshake(&c, "http/1.1", NULL, NULL), 0);
	assert_int_equal(h->st.hs_waits, 1);
	assert_true(h->st.failed[TLS_FAIL_timeout] >= 1);
	get_a(&c);
	for (i = 0; i < 50; i++)
		tlsh_pump(h);
	assert_int_equal(h->st.failed[TLS_FAIL_timeout], 8);
	assert_int_equal(free_staging(h), 8);
	assert_null(h->sh->hs_wait_head);
	for (i = 0; i < 8; i++) {
		assert_true(hold[i].reset);
		tlsc_free(&hold[i]);
	}
	tlsc_close(&c);
	tlsc_free(&c);
	tlsh_free(h);
}

/* White-box: how many connections hold a record, each of which must
 * offer TCP no room (the advertised edge then stays where it is). */
static unsigned int
held_with_window_shut(const struct tlsh *h)
{
	unsigned int i, held = 0;

	for (i = 0; i < h->sh->conf.max_conns; i++) {
		const struct tls_conn *tc = &h->sh->conns[i];

		if (tc->held == NULL || tc->tcp == NULL)
			continue;
		held++;
		if (tc->tcp->rcv_space != 0)
			fail_msg("a record held, and TCP's receive space %u",
					tc->tcp->rcv_space);
	}
	return held;
}

/* Runs /q/'s queued handlers a few at a time and reads the answers until
 * want have come, or the pumps run out: how many came. Counts in *held
 * the times a connection was seen holding a record between pumps. */
static int
q_answers(struct tlsh *h, struct tlsc *c, char *out, size_t cap, int want,
		unsigned int *held)
{
	size_t got = 0;
	int i, pumps = 0, answers = 0;
	const char *p;

	while (answers < want && pumps++ < 4000) {
		ssize_t n;

		tlsh_pump(h);
		*held += held_with_window_shut(h);
		for (i = 0; i < 8 && h->hh->nqueued > 0; i++)
			hh_run(h->hh, 0);
		tlsh_pump(h);
		*held += held_with_window_shut(h);
		while ((n = gnutls_record_recv(c->s, out + got,
				cap - 1 - got)) > 0)
			got += (size_t)n;
		out[got] = '\0';
		for (answers = 0, p = out; (p = strstr(p, "q /q/x\n")) != NULL;
				p++)
			answers++;
	}
	return answers;
}

/* n requests to /q/ one after the other in reqs, and c connected and
 * through its handshake. */
static void
open_with_q_requests(struct tlsh *h, struct tlsc *c, uint16_t sport,
		char *reqs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		strcat(reqs, GET_Q);
	tlsc_open(h, c, sport);
	assert_int_equal(tlsc_handshake(c, "http/1.1", NULL, NULL), 0);
}

/* 800 pipelined requests in two records, to a route whose handlers the
 * test runs a few at a time: HTTP's pipeline fills, then its buffer, a
 * record is taken in part and held, and TCP asks for nothing more while
 * it is; the rest is taken as answers go, and every request is answered. */
static void
test_record_taken_in_parts(void **state)
{
	struct tlsh *h = tlsh_new(TLSH_INLINE, 10000);
	static char req[800 * sizeof(GET_Q)], out[800 * 400];
	struct tlsc c;
	size_t got;
	unsigned int held = 0;

	(void)state;
	open_with_q_requests(h, &c, 40005, req, 800);
	for (got = 0; got < strlen(req);) {
		ssize_t n = gnutls_record_send(c.s, req + got, strlen(req) - got);

		assert_true(n > 0);	/* a record at most each time */
		got += (size_t)n;
	}
	assert_int_equal(q_answers(h, &c, out, sizeof(out), 800, &held), 800);
	assert_true(h->st.records_held > 0);
	assert_true(held > 0);
	tlsc_close(&c);
	tlsc_free(&c);
	tlsh_free(h);
}

/* A record HTTP takes in part though it has room once it has parsed what
 * it took (a request's first bytes came in the record before): the rest
 * is held, and the window shut all the same. */
static void
test_held_record_shuts_the_window(void **state)
{
	struct tlsh *h = tlsh_new(TLSH_INLINE, 10000);
	static char stream[600 * sizeof(GET_Q)], out[600 * 400];
	const size_t q = sizeof(GET_Q) - 1, first = 20, big = 16384;
	unsigned int held = 0;
	struct tlsc c;
	int i;

	(void)state;
	open_with_q_requests(h, &c, 40009, stream, 600);
	assert_int_equal(gnutls_record_send(c.s, stream, first), first);
	assert_int_equal(gnutls_record_send(c.s, stream + first, big), big);
	/* Taken: the buffer's room, 20 bytes short of the record; then its
	 * pipeline's 16 requests parsed, which HTTP says it has room for. */
	for (i = 0; i < 100 && h->st.records_held == 0; i++)
		tlsh_pump(h);
	assert_int_equal(h->st.records_held, 1);
	assert_int_equal(held_with_window_shut(h), 1);
	assert_int_equal(q_answers(h, &c, out, sizeof(out),
			(int)((first + big) / q), &held), (first + big) / q);
	tlsc_close(&c);
	tlsc_free(&c);
	tlsh_free(h);
}

/* The same with a request body HTTP gathers, which writes nothing that
 * would wake the connection: the record's rest is held although HTTP has
 * room again once it has moved the body on, and is offered at the next
 * poll, not when the request times out. */
static void
test_held_record_offered_again_while_a_body_gathers(void **state)
{
	static const char head[] = "POST /q/x HTTP/1.1\r\nHost: e\r\n"
		"Content-Length: 40000\r\n\r\n";
	const size_t hl = sizeof(head) - 1, first = 20, big = 16384;
	static char rec[16384], rest[40000], out[4096];
	unsigned int held = 0;
	struct tlsc c;
	struct tlsh *h = tlsh_new(TLSH_INLINE, 10000);
	size_t body_sent = big - (hl - first), off;
	ssize_t n;

	(void)state;
	tlsc_open(h, &c, 40010);
	assert_int_equal(tlsc_handshake(&c, "http/1.1", NULL, NULL), 0);
	memcpy(rec, head + first, hl - first);
	memset(rec + hl - first, 'b', big - (hl - first));
	memset(rest, 'b', sizeof(rest));
	assert_int_equal(gnutls_record_send(c.s, head, first), first);
	assert_int_equal(gnutls_record_send(c.s, rec, big), big);
	for (off = 0; off < 40000 - body_sent; off += (size_t)n) {
		n = gnutls_record_send(c.s, rest + off, 40000 - body_sent - off);
		assert_true(n > 0);
	}
	/* Within a second of the clock: the request timeout is ten. */
	assert_int_equal(q_answers(h, &c, out, sizeof(out), 1, &held), 1);
	assert_true(h->st.records_held >= 1);
	tlsc_close(&c);
	tlsc_free(&c);
	tlsh_free(h);
}

/* A reload: new connections get the new certificate, the open one goes
 * on with the old; the old generation goes once its last connection
 * does. */
static void
test_reload_generations(void **state)
{
	struct tlsh *h = tlsh_new(TLSH_INLINE, 10000);
	const gnutls_datum_t *old_cert, *new_cert;
	gnutls_datum_t keep;
	struct tls_gen *first;
	struct tlsc a, b;
	char err[TLS_ERR_LEN];

	(void)state;
	tlsc_open(h, &a, 40006);
	assert_int_equal(tlsc_handshake(&a, "http/1.1", NULL, NULL), 0);
	old_cert = gnutls_certificate_get_peers(a.s, NULL);
	keep.size = old_cert->size;
	keep.data = malloc(keep.size);
	memcpy(keep.data, old_cert->data, keep.size);
	first = h->sh->gen;
	tlsh_new_certificate(h);
	assert_int_equal(tls_config_reload(h->cfg, err, sizeof(err)), 0);
	tlsc_open(h, &b, 40007);
	assert_int_equal(tlsc_handshake(&b, "http/1.1", NULL, NULL), 0);
	new_cert = gnutls_certificate_get_peers(b.s, NULL);
	assert_true(new_cert->size != keep.size ||
			memcmp(new_cert->data, keep.data, keep.size) != 0);
	assert_true(h->sh->gen != first);
	assert_int_equal(atomic_load(&first->holders), 1);	/* a's */
	get_a(&a);
	get_a(&b);
	tlsc_close(&a);
	tlsc_free(&a);
	free(keep.data);
	tlsc_close(&b);
	tlsc_free(&b);
	assert_int_equal(h->st.gen_switches, 2);
	tlsh_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tls13_inline),
		cmocka_unit_test(test_tls12_inline),
		cmocka_unit_test(test_tls13_steps_queued),
		cmocka_unit_test(test_steps_on_another_thread),
		cmocka_unit_test(test_small_writes_gathered),
		cmocka_unit_test(test_alpn_h2_starts_http2),
		cmocka_unit_test(test_alpn_h2_is_not_sniffed),
		cmocka_unit_test(test_resumption),
		cmocka_unit_test(test_ticket_key_rotation),
		cmocka_unit_test(test_close_notify_both_ways),
		cmocka_unit_test(test_handshake_timeout),
		cmocka_unit_test(test_queued_for_a_staging),
		cmocka_unit_test(test_record_taken_in_parts),
		cmocka_unit_test(test_held_record_shuts_the_window),
		cmocka_unit_test(test_held_record_offered_again_while_a_body_gathers),
		cmocka_unit_test(test_reload_generations),
		cmocka_unit_test(test_reload_refuses_what_cannot_serve),
		cmocka_unit_test(test_wildcard_pick),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
