/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hashed timer wheel, one per shard and owned by it like the rest of the
 * shard, so it moves with the shard on a hand-off. Ticks are milliseconds
 * supplied by the caller (the TSC in ewykd, a virtual clock in tests). A
 * timer further away than one revolution stays in its slot and is skipped
 * until its round comes. Timers are intrusive: no allocation.
 */
#ifndef EWYK_TIMER_WHEEL_H
#define EWYK_TIMER_WHEEL_H

#include <stdbool.h>
#include <stdint.h>

#define TW_SLOTS 1024		/* power of two */

struct tw_timer {
	struct tw_timer *next;
	struct tw_timer **pprev;	/* NULL when not armed */
	uint64_t expire;
};

struct timer_wheel {
	uint64_t now;		/* last tick processed */
	uint32_t armed;
	struct tw_timer *soon;	/* due at the next advance, whatever its tick */
	struct tw_timer *slot[TW_SLOTS];
};

typedef void (*tw_fire_fn)(struct tw_timer *t, void *ctx);

void tw_init(struct timer_wheel *w, uint64_t now);

static inline bool
tw_is_armed(const struct tw_timer *t)
{
	return t->pprev != 0;
}

static inline void
tw_timer_init(struct tw_timer *t)
{
	t->next = 0;
	t->pprev = 0;
	t->expire = 0;
}

/* Arm (or re-arm) to fire at tick expire; a tick not later than the last
 * one processed fires at the next tick. */
void tw_arm(struct timer_wheel *w, struct tw_timer *t, uint64_t expire);
/* Arm to fire at the next advance, even one within the same tick: work
 * put off only until the caller's current call has returned. */
void tw_arm_soon(struct timer_wheel *w, struct tw_timer *t);
void tw_cancel(struct timer_wheel *w, struct tw_timer *t);
/* Fire every timer due at or before now. A callback may re-arm its timer
 * or any other. Returns the number fired. */
unsigned int tw_advance(struct timer_wheel *w, uint64_t now, tw_fire_fn fire,
		void *ctx);

#endif /* EWYK_TIMER_WHEEL_H */
