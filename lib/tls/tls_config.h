/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration as the connections see it (private to lib/tls): a
 * generation of credentials, each shard's own, and the ticket keys.
 */
#ifndef EWYK_TLS_CONFIG_H
#define EWYK_TLS_CONFIG_H

#include <pthread.h>
#include <stdatomic.h>

#include <gnutls/gnutls.h>

#include "ewyk_tls.h"

#define TLS_TICKET_KEYS 4	/* a ring: readers copy the newest */
#define TLS_TICKET_KEY_LEN 64	/* GnuTLS's master key */

/* One shard's credentials and priority cache in a generation; sessions is
 * the count of that shard's connections on them (its owner's only). */
struct tls_shard_creds {
	gnutls_certificate_credentials_t creds;
	/* With several pairs, each with those whose certificates have the
	 * same names (an ECDSA and an RSA one: GnuTLS then chooses by the
	 * client's algorithms): for an SNI one of them names by a wildcard
	 * only (tls_gen_pick()). */
	gnutls_certificate_credentials_t pair[TLS_PAIRS_MAX];
	gnutls_priority_t prio;
	uint32_t sessions;
} __attribute__((aligned(64)));

/* What one load built: immutable once published, freed by whoever lets
 * it go last (the configuration, or a shard whose last connection on it
 * closed). */
struct tls_gen {
	uint64_t id;
	_Atomic int holders;	/* the shards that took it and have not left
				 * it, and the configuration while it is the
				 * current one */
	uint16_t shards;
	uint16_t n_pairs;
	gnutls_x509_crt_t crt[TLS_PAIRS_MAX];	/* each pair's, to match SNI */
	char names[TLS_PAIRS_MAX][512];	/* its DNS names, each ending '\n' */
	struct tls_shard_creds per[];
};

/* For an SNI no certificate names exactly, the pair one names by a
 * wildcard (RFC 6125: "*.b.test" names "x.b.test", one label); -1 when
 * one names it exactly (GnuTLS chooses among those itself) or none does
 * (the default pair answers). */
int tls_gen_pick(const struct tls_gen *g, const char *host);

struct tls_config {
	struct tls_conf conf;	/* its strings copied below */
	char paths[TLS_PAIRS_MAX][3][4096];
	char priority[1024];
	/* The current generation; a shard takes a reference under the lock
	 * when cur_id tells it that a reload made a new one. */
	pthread_mutex_t gen_lock;
	struct tls_gen *cur;
	_Atomic uint64_t cur_id;
	uint64_t next_gen;
	/* Ticket keys: the newest is keys[seq % TLS_TICKET_KEYS]. */
	uint8_t keys[TLS_TICKET_KEYS][TLS_TICKET_KEY_LEN];
	_Atomic uint64_t key_seq;
	uint64_t key_born_s;
	/* For tls_config_info(), on any thread. */
	pthread_mutex_t info_lock;
	struct tls_config_info info;
};

/* The current generation, with a reference for the caller. */
struct tls_gen *tls_gen_take(struct tls_config *cfg);
/* Whether g is the current one (an atomic load: the data path's check). */
static inline bool
tls_gen_current(struct tls_config *cfg, const struct tls_gen *g)
{
	return g != NULL && atomic_load_explicit(&cfg->cur_id,
			memory_order_acquire) == g->id;
}
/* Lets a reference go: the last one frees the generation. */
void tls_gen_release(struct tls_gen *g);
/* The newest ticket key, copied (any thread). */
void tls_ticket_key(struct tls_config *cfg, uint8_t key[TLS_TICKET_KEY_LEN]);
/* A priority cache from a GnuTLS priority string, refused (with a line in
 * err) when GnuTLS does not take it or it enables anything older than
 * TLS 1.2, or neither 1.2 nor 1.3. */
int tls_priority_load(const char *str, gnutls_priority_t *prio, char *err,
		size_t errlen);

#endif /* EWYK_TLS_CONFIG_H */
