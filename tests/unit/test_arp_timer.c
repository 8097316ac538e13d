/* SPDX-License-Identifier: BSD-3-Clause */
/* The shared ARP cache and the per-shard timer wheel. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arp_cache.h"
#include "timer_wheel.h"

static void
test_arp_insert_lookup_refresh(void **state)
{
	struct arp_cache *c = calloc(1, sizeof(*c));
	const uint8_t m1[6] = { 2, 0, 0, 0, 0, 1 }, m2[6] = { 2, 0, 0, 0, 0, 2 };
	uint8_t out[6];

	(void)state;
	arp_cache_init(c, 1000);
	assert_false(arp_cache_lookup(c, 0x0100a8c0, out, 0));
	assert_true(arp_cache_update(c, 0x0100a8c0, m1, 10));
	assert_true(arp_cache_lookup(c, 0x0100a8c0, out, 20));
	assert_memory_equal(out, m1, 6);
	assert_true(arp_cache_update(c, 0x0100a8c0, m2, 30));	/* moved */
	assert_true(arp_cache_lookup(c, 0x0100a8c0, out, 40));
	assert_memory_equal(out, m2, 6);
	assert_int_equal(arp_cache_count(c, 40), 1);
	/* expired after its TTL */
	assert_false(arp_cache_lookup(c, 0x0100a8c0, out, 30 + 1001));
	free(c);
}

static void
test_arp_full_set_replaces_oldest(void **state)
{
	struct arp_cache *c = calloc(1, sizeof(*c));
	uint8_t mac[6] = { 2, 0, 0, 0, 0, 0 }, out[6];
	uint32_t ip, first = 0, inserted = 0;

	(void)state;
	arp_cache_init(c, 100000);
	/* Many more addresses than the cache holds: it stays bounded, keeps
	 * the newest, and never loses an entry just written. */
	for (ip = 1; ip <= 10 * ARP_CACHE_SETS * ARP_CACHE_WAYS; ip++) {
		mac[5] = (uint8_t)ip;
		assert_true(arp_cache_update(c, ip, mac, ip));
		assert_true(arp_cache_lookup(c, ip, out, ip));
		assert_int_equal(out[5], (uint8_t)ip);
		if (first == 0)
			first = ip;
		inserted++;
	}
	assert_true(arp_cache_count(c, ip) <= ARP_CACHE_SETS * ARP_CACHE_WAYS);
	assert_false(arp_cache_lookup(c, first, out, ip));
	assert_true(inserted > ARP_CACHE_SETS * ARP_CACHE_WAYS);
	free(c);
}

struct fired {
	int n;
	uint64_t at[16];
	struct tw_timer *which[16];
	struct timer_wheel *w;
	struct tw_timer *rearm;
	struct tw_timer *again;	/* armed soon again from its own fire */
};

static void
on_fire(struct tw_timer *t, void *ctx)
{
	struct fired *f = ctx;

	f->which[f->n] = t;
	f->at[f->n++] = f->w->now;
	if (t == f->rearm) {
		f->rearm = NULL;
		tw_arm(f->w, t, f->w->now + 5);
	}
	if (t == f->again) {
		f->again = NULL;
		tw_arm_soon(f->w, t);
	}
}

static void
test_wheel_order_cancel_rearm(void **state)
{
	struct timer_wheel *w = calloc(1, sizeof(*w));
	struct tw_timer a, b, c, far;
	struct fired f = { 0 };

	(void)state;
	tw_init(w, 100);
	f.w = w;
	tw_timer_init(&a);
	tw_timer_init(&b);
	tw_timer_init(&c);
	tw_timer_init(&far);
	tw_arm(w, &a, 110);
	tw_arm(w, &b, 105);
	tw_arm(w, &c, 107);
	tw_arm(w, &far, 100 + TW_SLOTS + 3);	/* same slot, next round */
	tw_cancel(w, &c);
	f.rearm = &b;
	assert_int_equal(tw_advance(w, 104, on_fire, &f), 0);
	assert_int_equal(tw_advance(w, 111, on_fire, &f), 3);	/* b, b again, a */
	assert_ptr_equal(f.which[0], &b);
	assert_int_equal(f.at[0], 105);
	/* a and the re-armed b share tick 110, in either order */
	assert_int_equal(f.at[1], 110);
	assert_int_equal(f.at[2], 110);
	assert_true((f.which[1] == &a && f.which[2] == &b) ||
			(f.which[1] == &b && f.which[2] == &a));
	assert_false(tw_is_armed(&a));
	assert_true(tw_is_armed(&far));
	/* the far timer is skipped on its slot's first pass */
	assert_int_equal(tw_advance(w, 100 + TW_SLOTS, on_fire, &f), 0);
	assert_int_equal(tw_advance(w, 100 + TW_SLOTS + 3, on_fire, &f), 1);
	assert_ptr_equal(f.which[3], &far);
	assert_int_equal(w->armed, 0);
	free(w);
}

static void
test_wheel_long_gap_and_past_expiry(void **state)
{
	struct timer_wheel *w = calloc(1, sizeof(*w));
	struct tw_timer t[8];
	struct fired f = { 0 };
	int i;

	(void)state;
	tw_init(w, 0);
	f.w = w;
	for (i = 0; i < 8; i++) {
		tw_timer_init(&t[i]);
		tw_arm(w, &t[i], (uint64_t)i * 700);	/* t[0] in the past: next tick */
	}
	assert_int_equal(tw_advance(w, 1, on_fire, &f), 1);
	/* a jump of many revolutions fires everything due, once */
	assert_int_equal(tw_advance(w, 10 * TW_SLOTS, on_fire, &f), 7);
	assert_int_equal(w->armed, 0);
	free(w);
}

/* Soon fires at the next advance within the same tick; armed again from
 * its callback, at the advance after; cancelled, never. */
static void
test_wheel_soon_fires_within_the_tick(void **state)
{
	struct timer_wheel *w = calloc(1, sizeof(*w));
	struct tw_timer s, gone, later;
	struct fired f = { 0 };

	(void)state;
	tw_init(w, 50);
	f.w = w;
	tw_timer_init(&s);
	tw_timer_init(&gone);
	tw_timer_init(&later);
	tw_arm(w, &later, 50);			/* the past: next tick only */
	tw_arm_soon(w, &s);
	tw_arm_soon(w, &gone);
	tw_cancel(w, &gone);
	f.again = &s;
	assert_true(tw_is_armed(&s));
	assert_int_equal(tw_advance(w, 50, on_fire, &f), 1);
	assert_ptr_equal(f.which[0], &s);
	assert_int_equal(f.at[0], 50);
	assert_true(tw_is_armed(&s));		/* again, for the next advance */
	assert_int_equal(tw_advance(w, 50, on_fire, &f), 1);
	assert_false(tw_is_armed(&s));
	assert_false(tw_is_armed(&gone));
	assert_int_equal(tw_advance(w, 50, on_fire, &f), 0);
	assert_int_equal(tw_advance(w, 51, on_fire, &f), 1);
	assert_ptr_equal(f.which[2], &later);
	assert_int_equal(w->armed, 0);
	free(w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arp_insert_lookup_refresh),
		cmocka_unit_test(test_arp_full_set_replaces_oldest),
		cmocka_unit_test(test_wheel_order_cancel_rearm),
		cmocka_unit_test(test_wheel_long_gap_and_past_expiry),
		cmocka_unit_test(test_wheel_soon_fires_within_the_tick),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
