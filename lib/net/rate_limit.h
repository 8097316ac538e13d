/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A per-shard budget of answers per second, for answers that a flood of
 * forged frames could otherwise multiply (challenge ACKs, ARP replies).
 * As Linux's challenge ACK limit since CVE-2016-5696, each second's budget
 * is drawn at random between half and one and a half times the limit, so
 * that an off-path attacker cannot count what is left of it to learn
 * whether a guess hit a connection.
 */
#ifndef EWYK_RATE_LIMIT_H
#define EWYK_RATE_LIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_random.h>

struct rate_limit {
	uint32_t per_sec;	/* 0: no limit */
	uint32_t left;		/* of this second's budget */
	uint64_t second;	/* now_ms / 1000 of the budget */
};

static inline void
rate_limit_init(struct rate_limit *rl, uint32_t per_sec)
{
	rl->per_sec = per_sec;
	rl->left = 0;
	rl->second = UINT64_MAX;
}

/* true: answer (one of this second's budget taken); false: stay silent. */
static inline bool
rate_limit_take(struct rate_limit *rl, uint64_t now_ms)
{
	if (rl->per_sec == 0)
		return true;
	if (now_ms / 1000 != rl->second) {
		rl->second = now_ms / 1000;
		rl->left = (rl->per_sec + 1) / 2 +
			(uint32_t)rte_rand_max(rl->per_sec);
	}
	if (rl->left == 0)
		return false;
	rl->left--;
	return true;
}

#endif /* EWYK_RATE_LIMIT_H */
