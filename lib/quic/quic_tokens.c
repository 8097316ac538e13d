/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keys of QUIC's address tokens (Retry's and NEW_TOKEN's), one ring
 * for every shard's endpoint: a token one shard issued is good on any
 * other, and a reload rotates the keys. A rotation writes the slot after
 * the newest, then publishes it: readers use the newest and the one
 * before, which the next rotation leaves whole (QUIC_TOKEN_KEYS is 3), so
 * a token outlives one rotation and no more.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "quic_priv.h"

#define QUIC_TOKEN_KEYS 3

struct quic_tokens {
	_Atomic uint64_t seq;	/* the newest is key[seq % QUIC_TOKEN_KEYS] */
	uint8_t key[QUIC_TOKEN_KEYS][QUIC_SECRET_LEN];
};

struct quic_tokens *
quic_tokens_new(void)
{
	struct quic_tokens *t = calloc(1, sizeof(*t));

	if (t == NULL || gnutls_rnd(GNUTLS_RND_KEY, t->key[0],
			QUIC_SECRET_LEN) != 0) {
		free(t);
		return NULL;
	}
	atomic_init(&t->seq, 0);
	return t;
}

void
quic_tokens_free(struct quic_tokens *t)
{
	if (t == NULL)
		return;
	gnutls_memset(t->key, 0, sizeof(t->key));
	free(t);
}

int
quic_tokens_rotate(struct quic_tokens *t)
{
	uint64_t seq = atomic_load_explicit(&t->seq, memory_order_relaxed);

	if (gnutls_rnd(GNUTLS_RND_KEY, t->key[(seq + 1) % QUIC_TOKEN_KEYS],
			QUIC_SECRET_LEN) != 0)
		return -1;
	atomic_store_explicit(&t->seq, seq + 1, memory_order_release);
	return 0;
}

uint64_t
quic_tokens_rotations(const struct quic_tokens *t)
{
	return atomic_load_explicit(&t->seq, memory_order_relaxed);
}

bool
quic_tokens_key(const struct quic_tokens *t, unsigned int age,
		uint8_t key[QUIC_SECRET_LEN])
{
	uint64_t seq = atomic_load_explicit(&t->seq, memory_order_acquire);

	if (age >= QUIC_TOKEN_KEYS - 1 || age > seq)
		return false;
	memcpy(key, t->key[(seq - age) % QUIC_TOKEN_KEYS], QUIC_SECRET_LEN);
	return true;
}
