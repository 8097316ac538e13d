/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "timer_wheel.h"

void
tw_init(struct timer_wheel *w, uint64_t now)
{
	memset(w, 0, sizeof(*w));
	w->now = now;
}

static void
link_into(struct tw_timer **head, struct tw_timer *t)
{
	t->next = *head;
	if (t->next != NULL)
		t->next->pprev = &t->next;
	t->pprev = head;
	*head = t;
}

static void
unlink_timer(struct tw_timer *t)
{
	*t->pprev = t->next;
	if (t->next != NULL)
		t->next->pprev = t->pprev;
	t->next = NULL;
	t->pprev = NULL;
}

void
tw_arm(struct timer_wheel *w, struct tw_timer *t, uint64_t expire)
{
	if (tw_is_armed(t))
		unlink_timer(t);
	else
		w->armed++;
	/* A due timer goes in the next slot to be scanned. */
	if (expire <= w->now)
		expire = w->now + 1;
	t->expire = expire;
	link_into(&w->slot[expire & (TW_SLOTS - 1)], t);
}

void
tw_arm_soon(struct timer_wheel *w, struct tw_timer *t)
{
	if (tw_is_armed(t))
		unlink_timer(t);
	else
		w->armed++;
	t->expire = w->now;
	link_into(&w->soon, t);
}

void
tw_cancel(struct timer_wheel *w, struct tw_timer *t)
{
	if (!tw_is_armed(t))
		return;
	unlink_timer(t);
	w->armed--;
}

static unsigned int
run_slot(struct timer_wheel *w, unsigned int idx, uint64_t now, tw_fire_fn fire,
		void *ctx)
{
	struct tw_timer *t = w->slot[idx], *next;
	unsigned int fired = 0;

	/* Walk carefully: a callback may arm or cancel any timer, including
	 * the next one in this slot. Restart from the head after each fire. */
	while (t != NULL) {
		next = t->next;
		if (t->expire <= now) {
			unlink_timer(t);
			w->armed--;
			fire(t, ctx);
			fired++;
			t = w->slot[idx];
			continue;
		}
		t = next;
	}
	return fired;
}

unsigned int
tw_advance(struct timer_wheel *w, uint64_t now, tw_fire_fn fire, void *ctx)
{
	unsigned int fired = 0;
	uint64_t tick;

	/* Those armed soon first; one armed again from its own callback
	 * waits for the advance after this one. */
	if (w->soon != NULL) {
		struct tw_timer *batch = w->soon;

		w->soon = NULL;
		batch->pprev = &batch;
		while (batch != NULL) {
			struct tw_timer *t = batch;

			unlink_timer(t);
			w->armed--;
			fire(t, ctx);
			fired++;
		}
	}
	if (now <= w->now)
		return fired;
	if (w->armed == 0) {
		w->now = now;
		return fired;
	}
	if (now - w->now >= TW_SLOTS) {
		/* A long gap: every slot is due once; scan each one. */
		unsigned int i;

		w->now = now;
		for (i = 0; i < TW_SLOTS; i++)
			fired += run_slot(w, i, now, fire, ctx);
		return fired;
	}
	for (tick = w->now + 1; tick <= now; tick++) {
		w->now = tick;
		fired += run_slot(w, tick & (TW_SLOTS - 1), tick, fire, ctx);
	}
	return fired;
}
