/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TLS conversations scripted in process: lib/tls's shard over a real
 * net_stack (tests/tcp's harness: captured TX, a virtual clock) and
 * lib/http's server (tests/unit's HTTP harness: its routes, /a.txt among
 * them), with GnuTLS clients as peers over a minimal TCP of the test's
 * own. A certificate and key are made at start-up (ECDSA P-256,
 * self-signed, for ewyk.test) in a temporary directory.
 *
 * Handshake steps run inline, or (offload) are queued by the shard's hook
 * and run by tlsh_pump(), on a thread of their own when asked, as a
 * reserved lcore or a pool thread would.
 */
#ifndef EWYK_TLS_HARNESS_H
#define EWYK_TLS_HARNESS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gnutls/gnutls.h>

#include "ewyk_tls.h"

#define TLSH_PORT 443
#define TLSH_CLIENTS 10
#define TLSH_STEPS 64
#define TLSH_RX (1u << 20)

enum tlsh_offload {
	TLSH_INLINE,		/* no hook: the shard runs every step */
	TLSH_QUEUED,		/* the hook queues; tlsh_pump() runs them */
	TLSH_THREAD,		/* ... each on a thread of its own */
};

struct tlsh;

/* A client: its TCP and its GnuTLS session. */
struct tlsc {
	struct tlsh *h;
	gnutls_session_t s;	/* NULL until tlsc_handshake() */
	gnutls_certificate_credentials_t cred;
	uint16_t sport;
	uint32_t snd_una;	/* the server acknowledged up to here */
	uint32_t snd_nxt;	/* sent up to here */
	uint32_t wnd;		/* the server's window, as last said */
	uint8_t *tx;		/* from snd_una: sent, then not yet sent */
	uint32_t tx_len;
	uint32_t rcv_nxt;
	bool fin;		/* the server closed */
	bool reset;		/* the server reset */
	uint8_t *rx;		/* from the server, not yet pulled */
	uint32_t rx_len;
	uint32_t rx_off;
};

struct tlsh {
	struct th *th;
	struct hh *hh;
	struct tls_config *cfg;
	struct tls_shard *sh;
	struct tls_stats st;
	enum tlsh_offload offload;
	bool hold_steps;	/* tlsh_pump() leaves queued steps be */
	struct tls_work *steps[TLSH_STEPS];
	unsigned int nsteps;
	struct tlsc *clients[TLSH_CLIENTS];
	char dir[PATH_MAX - 32];
	char cert[PATH_MAX];
	char key[PATH_MAX];
};

/* A shard listening on TLSH_PORT; timeout_ms is the handshake's. */
struct tlsh *tlsh_new(enum tlsh_offload offload, uint32_t timeout_ms);
void tlsh_free(struct tlsh *h);
/* Runs queued steps, advances the clock by a millisecond, hands the
 * segments the stack sent to their clients (and acknowledges them). */
void tlsh_pump(struct tlsh *h);
/* Writes the certificate files again, with a fresh key and certificate. */
void tlsh_new_certificate(struct tlsh *h);
/* A fresh key and a self-signed certificate of it for ewyk.test, valid
 * from from_s to to_s seconds from now, written to those paths. */
void tlsh_write_pair(const char *cert_path, const char *key_path, long from_s,
		long to_s);
/* The same for the name cn (a wildcard too), its only DNS name. */
void tlsh_write_named_pair(const char *cert_path, const char *key_path,
		const char *cn, long from_s, long to_s);

/* The client's TCP connection from sport (three-way handshake). */
void tlsc_open(struct tlsh *h, struct tlsc *c, uint16_t sport);
/* Raw bytes to the server, as TCP data: sent as the server's window
 * allows, the rest when it opens. */
void tlsc_send_raw(struct tlsc *c, const void *data, size_t len);
/* TLS over it: alpn ("h2", "http/1.1" or NULL), a priority string (NULL:
 * NORMAL), a session to resume (NULL: none). 0, or GnuTLS's error. */
int tlsc_handshake(struct tlsc *c, const char *alpn, const char *priority,
		const gnutls_datum_t *resume);
/* Sends an HTTP/1.1 request and reads until want is in the answer; the
 * answer (NUL-terminated) in out. False when it never came. */
bool tlsc_exchange(struct tlsc *c, const char *request, const char *want,
		char *out, size_t cap);
/* close_notify, then FIN. */
void tlsc_close(struct tlsc *c);
/* RST: the connection is gone at once. */
void tlsc_reset(struct tlsc *c);
void tlsc_free(struct tlsc *c);

#endif /* EWYK_TLS_HARNESS_H */
