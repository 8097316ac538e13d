/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewyk_tls: TLS 1.3 and 1.2 between lib/net's TCP and lib/http, on GnuTLS
 * in memory (docs/tls.md).
 *
 * Towards lib/http a TLS connection is a struct http_transport, the table
 * http_tcp.c fills for cleartext; towards lib/net it is the upcalls of the
 * TLS port's listener. Records are decrypted straight out of the received
 * segment and lent to the HTTP connection; what HTTP writes is gathered
 * into full records and encrypted into TCP's send queue.
 *
 * Two parts:
 * - the configuration (struct tls_config), process-wide: the certificate
 *   and key pairs, OCSP responses, the priority string, the ticket keys.
 *   Built and reloaded on one thread (the main one), read by the shards.
 *   Each load builds every shard's own credentials and priority cache, so
 *   that no two lcores share a GnuTLS object but the immutable ones.
 * - a shard's TLS (struct tls_shard): its connections, owned and touched
 *   by the shard's owner only, except for a handshake step handed to the
 *   embedder (tls_shard_conf.offload): a full handshake costs hundreds of
 *   microseconds, which the embedder runs wherever its execution strategy
 *   says (tls_work_run()), and brings back to the owner
 *   (tls_work_done()). One thread at a time touches a session.
 *
 * lib/tls sees lib/net's and lib/http's public headers and GnuTLS, nothing
 * of the runtime that embeds it.
 */
#ifndef EWYK_TLS_H
#define EWYK_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gnutls_session_int;	/* GnuTLS's gnutls_session_t */
struct http_server;
struct net_stack;
struct tcp_conn;
struct tls_config;
struct tls_shard;
struct tls_work;

#define TLS_PAIRS_MAX 8		/* --tls-cert/--tls-key pairs */
#define TLS_NAME_MAX 128	/* a certificate's name as reported */
#define TLS_ERR_LEN 512

/* The AEAD-only default: TLS 1.3 and 1.2, AES-GCM and ChaCha20-Poly1305,
 * ECDHE on X25519 or P-256, ECDSA or RSA signatures; no CBC, no RSA key
 * exchange, no DHE, the server's order (AES-GCM first). */
#define TLS_PRIORITY_DEFAULT "NONE:+VERS-TLS1.3:+VERS-TLS1.2:" \
	"+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:+AEAD:" \
	"+ECDHE-ECDSA:+ECDHE-RSA:+GROUP-X25519:+GROUP-SECP256R1:" \
	"+SIGN-ECDSA-SECP256R1-SHA256:+SIGN-ECDSA-SECP384R1-SHA384:" \
	"+SIGN-ECDSA-SHA256:+SIGN-ECDSA-SHA384:+SIGN-ECDSA-SHA512:" \
	"+SIGN-RSA-PSS-RSAE-SHA256:+SIGN-RSA-PSS-RSAE-SHA384:" \
	"+SIGN-RSA-PSS-RSAE-SHA512:+SIGN-RSA-SHA256:+SIGN-RSA-SHA384:" \
	"+SIGN-RSA-SHA512:+SIGN-EDDSA-ED25519:+COMP-NULL:+CTYPE-X509:" \
	"%SERVER_PRECEDENCE"

/* One certificate (PEM, with its chain after it) and its private key
 * (PEM), and optionally a DER OCSP response to staple; paths. */
struct tls_pair_conf {
	const char *cert;
	const char *key;
	const char *ocsp;	/* NULL: none */
};

struct tls_conf {
	struct tls_pair_conf pairs[TLS_PAIRS_MAX];	/* the first: default */
	unsigned int n_pairs;
	const char *priority;		/* GnuTLS syntax; NULL: the default */
	uint32_t handshake_timeout_ms;	/* from the SYN's ACK to Finished */
	uint32_t ticket_rotate_s;	/* a new ticket key this often; 0: never */
	uint16_t shards;		/* credentials are built for each */
};

/* Loads and checks every pair, the priority string and the OCSP files,
 * builds each shard's credentials and the first ticket key. Refused with
 * a line in err (naming files, never a key's content): a file missing or
 * unreadable, a key readable by anyone but its owner, a key that is not
 * the certificate's, a certificate expired or not yet valid, a priority
 * string GnuTLS refuses or that leaves out TLS 1.2 and 1.3. NULL then. */
struct tls_config *tls_config_create(const struct tls_conf *conf, char *err,
		size_t errlen);
/* After every shard is destroyed. */
void tls_config_destroy(struct tls_config *cfg);
/* Reads the same files again (SIGHUP, /ewyk/tls_reload), on the thread
 * that created cfg: new connections get the new certificates, existing
 * ones go on with theirs, which are freed once the last of their
 * connections is gone. 0, or -1 with err (the old ones stay). */
int tls_config_reload(struct tls_config *cfg, char *err, size_t errlen);
/* On that thread too, now and then: the ticket key's rotation schedule.
 * now_s: wall-clock seconds. Returns true when the key was replaced. */
bool tls_config_tick(struct tls_config *cfg, uint64_t now_s);

/* What the configuration serves, for telemetry. */
struct tls_cert_info {
	char name[TLS_NAME_MAX];	/* the first DNS name, or the CN */
	char key_type[8];		/* "ECDSA", "RSA", "EdDSA" */
	int64_t not_after;		/* expiry, seconds since the epoch */
	bool ocsp;			/* a response is stapled */
};

struct tls_config_info {
	unsigned int n_certs;
	struct tls_cert_info certs[TLS_PAIRS_MAX];
	uint64_t generation;		/* 1 at start, +1 per reload */
	uint64_t reloads;
	uint64_t reload_failures;
	uint64_t ticket_rotations;
	uint64_t ticket_key_age_s;
	char priority[1024];
};

/* On any thread: a snapshot (the certificates of the current generation). */
void tls_config_info(struct tls_config *cfg, struct tls_config_info *info);

/* Why handshakes failed. */
#define TLS_FAIL_REASONS(X) \
	X(timeout) X(bad_record) X(no_common_cipher) X(protocol_version) \
	X(bad_message) X(alert_received) X(peer_closed) X(too_large) \
	X(internal)

enum tls_fail_reason {
#define TLS_FAIL_ENUM(n) TLS_FAIL_##n,
	TLS_FAIL_REASONS(TLS_FAIL_ENUM)
#undef TLS_FAIL_ENUM
	TLS_FAIL__COUNT
};

extern const char *const tls_fail_names[TLS_FAIL__COUNT];

/* The ciphers the default may pick, and one slot for others. */
enum tls_cipher_slot {
	TLS_CIPHER_AES_128_GCM,
	TLS_CIPHER_AES_256_GCM,
	TLS_CIPHER_CHACHA20_POLY1305,
	TLS_CIPHER_OTHER,
	TLS_CIPHER__COUNT
};

extern const char *const tls_cipher_names[TLS_CIPHER__COUNT];

/* Counters of one shard, written by its owner, read by telemetry. */
struct tls_stats {
	uint64_t accepted;		/* TCP connections to the TLS port */
	uint64_t refused;		/* no TLS slot free: RST */
	uint64_t handshakes_full;
	uint64_t handshakes_resumed;
	uint64_t failed[TLS_FAIL__COUNT];
	uint64_t tls12;
	uint64_t tls13;
	uint64_t alpn_h2;
	uint64_t alpn_http11;
	uint64_t alpn_none;
	uint64_t cipher[TLS_CIPHER__COUNT];
	uint64_t hs_steps_offloaded;	/* handed to the embedder */
	uint64_t hs_steps_inline;	/* run on the owner at once */
	uint64_t hs_waits;		/* a ClientHello waited: no staging free */
	uint64_t hs_cpu_ns;		/* CPU time of handshake steps */
	uint64_t renegotiations_refused;
	uint64_t close_notify_sent;
	uint64_t close_notify_received;
	uint64_t records_in;
	uint64_t records_out;
	uint64_t records_held;		/* HTTP took one in parts */
	uint64_t bytes_in;		/* plaintext */
	uint64_t bytes_out;		/* plaintext */
	uint64_t errors;		/* fatal record errors after the handshake */
	uint64_t gen_switches;		/* credentials taken up after a reload */
	uint32_t conns;			/* gauge: TLS connections */
	uint32_t handshaking;		/* gauge */
} __attribute__((aligned(64)));

/* A shard's TLS. */
struct tls_shard_conf {
	uint16_t id;			/* the shard's index: its credentials */
	struct net_stack *ns;
	struct http_server *http;	/* established connections go to it */
	struct tls_config *cfg;
	uint32_t max_conns;		/* TLS connections at once */
	uint32_t max_handshakes;	/* handshakes under way at once */
	/*
	 * Optional: takes a handshake step (cost says how long it runs) to
	 * run it anywhere with tls_work_run(), then calls tls_work_done() on
	 * the owner. Returns 0, or < 0 to refuse (the step then runs inline).
	 * NULL: every step runs inline, on the owner.
	 */
	int (*offload)(void *ctx, struct tls_work *w);
	void *offload_ctx;
	struct tls_stats *stats;
};

struct tls_shard *tls_shard_create(const struct tls_shard_conf *conf);
/* Listens on TCP port (host order) of the stack: 0 or net_stack_listen()'s
 * error. */
int tls_shard_listen(struct tls_shard *sh, uint16_t port);
/* Once its stack is gone (every connection closed) and no step is out. */
void tls_shard_destroy(struct tls_shard *sh);
/* Steps handed out and not yet done: the embedder waits for 0 before
 * destroying the shard. */
uint32_t tls_shard_steps_out(const struct tls_shard *sh);

/* A handshake step as the embedder sees it. */
enum tls_work_cost {
	TLS_WORK_CHEAP,		/* tens of microseconds: run it inline */
	TLS_WORK_COSTLY,	/* a signature, a key exchange: hundreds */
};

enum tls_work_cost tls_work_cost(const struct tls_work *w);
/* On any thread, one at a time: the step's computation. */
void tls_work_run(struct tls_work *w);
/* On the shard's owner, after tls_work_run() returned (and its writes are
 * visible: the embedder's hand-back orders them): its output goes to
 * TCP, and the connection goes on. */
void tls_work_done(struct tls_work *w);

/*
 * The client side (tls_client.c): TLS sessions over TCP connections the
 * embedder opened itself (tcp_open()) and whose upcalls it keeps, handing
 * their bytes here; a load generator's. One context per lcore (its own
 * credentials and priority cache, and one cork buffer), touched by that
 * lcore only. The server's certificate is not verified: the client
 * measures, it does not trust (as h2load). Each session's handshake runs
 * inline, at once: a client has no polling to keep short.
 */
struct tls_client_ctx;
struct tls_client;

/* Whether GnuTLS takes a priority string, with TLS 1.2 or 1.3 and nothing
 * older (as --tls-priority): 0, or -1 with a line in err. */
int tls_priority_check(const char *str, char *err, size_t errlen);

/* The DNS name a server session's client asked for (SNI), into buf,
 * NUL-terminated: its length, or 0 when none (or cap is too small). Which
 * site its requests may name, over TCP's TLS and QUIC's alike. */
size_t tls_server_name(struct gnutls_session_int *s, char *buf, size_t cap);

struct tls_client_conf {
	struct net_stack *ns;
	const char *priority;	/* GnuTLS syntax; NULL: TLS_PRIORITY_DEFAULT */
	bool h2;		/* ALPN offers h2, then http/1.1; else http/1.1 */
	struct tls_stats *stats;	/* the client's counters */
};

/* NULL with a line in err: a priority string refused (as the server's
 * --tls-priority), or no memory. */
struct tls_client_ctx *tls_client_ctx_create(const struct tls_client_conf *conf,
		char *err, size_t errlen);
/* Once every session is freed. */
void tls_client_ctx_destroy(struct tls_client_ctx *cx);

/* A session's news, called from inside tls_client_recv() and the rest. */
struct tls_client_upcalls {
	/* The handshake is over; h2: ALPN chose h2 (else http/1.1 or
	 * nothing). <0: the embedder breaks the connection. */
	int (*established)(void *arg, bool h2);
	/* Decrypted bytes, all taken. <0: the embedder broke the
	 * connection (no more records are read). */
	int (*recv)(void *arg, const uint8_t *data, uint32_t len);
	/* close_notify came: nothing more will. */
	void (*peer_closed)(void *arg);
	/* The handshake (handshake) or a record failed: the session is
	 * closed, an alert queued; the embedder closes TCP. */
	void (*failed)(void *arg, enum tls_fail_reason why, bool handshake);
};

/* A session on an established TCP connection: its ClientHello is queued
 * at once. sni: the server name to send (a DNS name), or NULL. NULL when
 * GnuTLS has no memory. */
struct tls_client *tls_client_new(struct tls_client_ctx *cx,
		struct tcp_conn *tcp, const char *sni,
		const struct tls_client_upcalls *up, void *arg);
/* From TCP's recv upcall: bytes go to the handshake, then records to the
 * recv upcall. All are taken (GnuTLS keeps a partial record). */
void tls_client_recv(struct tls_client *tc, const uint8_t *data, uint32_t len);
/* From TCP's sent upcall: a flight or record GnuTLS kept for a full send
 * queue goes on. */
void tls_client_sent(struct tls_client *tc);
/* From TCP's peer_closed upcall: true when this ended a handshake
 * (counted as failed, peer_closed, and the failed upcall ran). */
bool tls_client_peer_closed(struct tls_client *tc);
/* Once established: what tls_client_write() takes now (TCP's send space
 * less the records' overhead and what is corked). */
uint32_t tls_client_space(struct tls_client *tc);
/* Plaintext gathered into records (small writes share one); returns how
 * much was taken. */
uint32_t tls_client_write(struct tls_client *tc, const void *data,
		uint32_t len);
/* What is corked goes out as a record, and TCP sends. */
void tls_client_push(struct tls_client *tc);
/* close_notify after what was written, then FIN. */
void tls_client_close(struct tls_client *tc);
/* From TCP's closed upcall: the session is freed (at the end of the
 * session's own call, if inside one). */
void tls_client_free(struct tls_client *tc);
/* Whether the handshake is over. */
bool tls_client_established(const struct tls_client *tc);
/* The protocol's and cipher's names, for the summary; NULL before the
 * handshake is over. */
const char *tls_client_version(const struct tls_client *tc);
const char *tls_client_cipher(const struct tls_client *tc);

/*
 * The certificates for another TLS user of the shard (QUIC, lib/quic): the
 * current generation's credentials of shard id (a
 * gnutls_certificate_credentials_t), with a reference in *held that keeps
 * them until tls_creds_release(); NULL when there are none.
 * tls_creds_hold() takes another reference (one per session on them),
 * tls_creds_current() says whether a reload made newer ones since.
 */
void *tls_creds_take(struct tls_config *cfg, uint16_t id, void **held);
void tls_creds_hold(void *held);
bool tls_creds_current(struct tls_config *cfg, const void *held);
void tls_creds_release(void *held);

/*
 * Allocation caches for GnuTLS's record buffers (tls_mem.c). GnuTLS has no
 * allocator hook and takes 16.7-16.9 KB buffers from malloc for every
 * record; while a thread runs lib/tls's record calls, allocations up to
 * TLS_MEM_MAX come from that thread's own size-class cache instead. The
 * process routes its malloc through tls_mem_alloc() and tls_mem_free()
 * (libewyk_tls_malloc, linked into ewykd): NULL / false means "not mine",
 * and the call goes on to the C library.
 */
#define TLS_MEM_MAX 17408

void *tls_mem_alloc(size_t size);
bool tls_mem_free(void *p);
/* The usable size of a block of the caches, 0 for any other. */
size_t tls_mem_usable(const void *p);

struct tls_mem_stats {
	uint64_t hits;		/* served from a cache */
	uint64_t grows;		/* a class grew: a block carved anew */
	uint64_t too_large;	/* in scope, beyond TLS_MEM_MAX: to libc */
	uint64_t remote_frees;	/* freed on another thread than its own */
	uint64_t bytes;		/* carved so far */
};

/* Summed over the threads. */
void tls_mem_stats(struct tls_mem_stats *st);

#endif /* EWYK_TLS_H */
