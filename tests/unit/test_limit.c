/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The routes' limits per client address (lib/serve/limit.c) on a clock of
 * the test's own: 1,000 ticks a second.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "limit.h"

#define HZ 1000

static struct limit_stats st;

static struct net_addr
v4(uint32_t a)
{
	return (struct net_addr){ .ip = net_ip4(a), .family = NET_AF_INET };
}

static struct net_addr
v6(uint64_t prefix, uint64_t host)
{
	struct net_addr a = { .family = NET_AF_INET6 };

	memcpy(a.ip.v6, &prefix, 8);
	memcpy(a.ip.v6 + 8, &host, 8);
	return a;
}

static struct limit_table *
table(uint32_t entries)
{
	struct limit_table *lt;

	memset(&st, 0, sizeof(st));
	lt = limit_table_create(entries, 0x5eed, &st);
	assert_non_null(lt);
	return lt;
}

static enum limit_verdict
admit(struct limit_table *lt, const struct http_limit *l, const void *route,
		struct net_addr a, uint64_t now, struct limit_hold *hold)
{
	struct limit_hold none;

	return limit_admit(lt, l, route, &a, now, HZ, hold != NULL ? hold :
			&none);
}

/* 10 a second without a burst: one each 100 ticks, none between. */
static void
test_rate_without_burst(void **state)
{
	struct limit_table *lt = table(LIMIT_ENTRIES);
	struct http_limit l = { .rps = 10 };
	int r;

	(void)state;
	assert_int_equal(admit(lt, &l, &r, v4(1), 1000, NULL), LIMIT_PASS);
	assert_int_equal(admit(lt, &l, &r, v4(1), 1050, NULL), LIMIT_RATE);
	assert_int_equal(admit(lt, &l, &r, v4(1), 1100, NULL), LIMIT_PASS);
	assert_int_equal(admit(lt, &l, &r, v4(1), 1199, NULL), LIMIT_RATE);
	assert_int_equal(admit(lt, &l, &r, v4(1), 1200, NULL), LIMIT_PASS);
	/* Another client has its own allowance. */
	assert_int_equal(admit(lt, &l, &r, v4(2), 1200, NULL), LIMIT_PASS);
	assert_int_equal(st.rate_refused, 2);
	limit_table_free(lt);
}

/* A burst of 3 beyond the rate: four at once, then one each 100 ticks;
 * an idle second gives the burst back whole, never more. */
static void
test_burst(void **state)
{
	struct limit_table *lt = table(LIMIT_ENTRIES);
	struct http_limit l = { .rps = 10, .burst = 3 };
	int r, i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(admit(lt, &l, &r, v4(1), 5000, NULL),
				LIMIT_PASS);
	assert_int_equal(admit(lt, &l, &r, v4(1), 5000, NULL), LIMIT_RATE);
	assert_int_equal(admit(lt, &l, &r, v4(1), 5100, NULL), LIMIT_PASS);
	assert_int_equal(admit(lt, &l, &r, v4(1), 5100, NULL), LIMIT_RATE);
	for (i = 0; i < 4; i++)
		assert_int_equal(admit(lt, &l, &r, v4(1), 9000, NULL),
				LIMIT_PASS);
	assert_int_equal(admit(lt, &l, &r, v4(1), 9000, NULL), LIMIT_RATE);
	limit_table_free(lt);
}

/* Two in progress at most; a third when one is over. A refused request
 * holds nothing, and costs no rate. */
static void
test_conns(void **state)
{
	struct limit_table *lt = table(LIMIT_ENTRIES);
	struct http_limit l = { .conns = 2 };
	struct limit_hold a, b, c;
	int r;

	(void)state;
	assert_int_equal(admit(lt, &l, &r, v4(7), 1, &a), LIMIT_PASS);
	assert_int_equal(admit(lt, &l, &r, v4(7), 1, &b), LIMIT_PASS);
	assert_int_equal(admit(lt, &l, &r, v4(7), 1, &c), LIMIT_CONNS);
	assert_int_equal(c.slot, LIMIT_NO_HOLD);
	limit_release(lt, &a);
	assert_int_equal(a.slot, LIMIT_NO_HOLD);
	limit_release(lt, &a);	/* twice: nothing more */
	assert_int_equal(admit(lt, &l, &r, v4(7), 2, &c), LIMIT_PASS);
	assert_int_equal(admit(lt, &l, &r, v4(7), 2, &a), LIMIT_CONNS);
	assert_int_equal(st.conns_refused, 2);
	limit_release(lt, &b);
	limit_release(lt, &c);
	l.rps = 1;
	assert_int_equal(admit(lt, &l, &r, v4(7), 3, &a), LIMIT_PASS);
	limit_release(lt, &a);
	limit_table_free(lt);
}

/* An IPv6 client is its /64; routes count apart. */
static void
test_ipv6_per_64_and_per_route(void **state)
{
	struct limit_table *lt = table(LIMIT_ENTRIES);
	struct http_limit l = { .rps = 1 };
	int r1, r2;

	(void)state;
	assert_int_equal(admit(lt, &l, &r1, v6(0x20010002, 1), 0, NULL),
			LIMIT_PASS);
	assert_int_equal(admit(lt, &l, &r1, v6(0x20010002, 2), 0, NULL),
			LIMIT_RATE);
	assert_int_equal(admit(lt, &l, &r1, v6(0x20010003, 1), 0, NULL),
			LIMIT_PASS);
	assert_int_equal(admit(lt, &l, &r2, v6(0x20010002, 1), 0, NULL),
			LIMIT_PASS);
	/* An IPv4 address is not the IPv6 /64 of the same bits. */
	assert_int_equal(admit(lt, &l, &r1, v4(0x20010002), 0, NULL),
			LIMIT_PASS);
	limit_table_free(lt);
}

/* One set of four: clients that hold requests keep their entries; a
 * fifth goes through uncounted. Clients that owe rate are forgotten for
 * newcomers, the one nearest its whole allowance first. */
static void
test_bounded_set(void **state)
{
	struct limit_table *lt = table(LIMIT_WAYS);
	struct http_limit held = { .conns = 1 }, rate = { .rps = 1 };
	struct limit_hold h[5];
	int r, q;
	uint32_t i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(admit(lt, &held, &r, v4(i), 0, &h[i]),
				LIMIT_PASS);
	assert_int_equal(admit(lt, &held, &r, v4(9), 0, &h[4]), LIMIT_PASS);
	assert_int_equal(h[4].slot, LIMIT_NO_HOLD);
	assert_int_equal(st.untracked, 1);
	/* Still each one's own: a second of each is refused. */
	for (i = 0; i < 4; i++)
		assert_int_equal(admit(lt, &held, &r, v4(i), 0, NULL),
				LIMIT_CONNS);
	for (i = 0; i < 4; i++)
		limit_release(lt, &h[i]);

	/* Four clients owing a second each, from ticks 0 to 300: a newcomer
	 * takes client 0's entry (the nearest to owing nothing). */
	for (i = 0; i < 4; i++)
		assert_int_equal(admit(lt, &rate, &q, v4(i), i * 100, NULL),
				LIMIT_PASS);
	assert_int_equal(admit(lt, &rate, &q, v4(9), 400, NULL), LIMIT_PASS);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(admit(lt, &rate, &q, v4(3), 400, NULL), LIMIT_RATE);
	/* After its second, client 1's entry owes nothing: taken silently. */
	assert_int_equal(admit(lt, &rate, &q, v4(8), 1100, NULL), LIMIT_PASS);
	assert_int_equal(st.evicted, 1);
	limit_table_free(lt);
}

/* A hold outlives nothing: an entry taken by another client is not
 * charged for the old client's release. */
static void
test_release_after_the_entry_changed_hands(void **state)
{
	struct limit_table *lt = table(LIMIT_WAYS);
	struct http_limit l = { .conns = 1 }, other = { .conns = 1 };
	struct limit_hold h, k[4];
	int r, r2;
	uint32_t i;

	(void)state;
	assert_int_equal(admit(lt, &l, &r, v4(1), 0, &h), LIMIT_PASS);
	limit_release(lt, &h);
	/* Its entry now owes nothing: four clients of another route take
	 * the set, holding each. */
	for (i = 0; i < 4; i++)
		assert_int_equal(admit(lt, &other, &r2, v4(10 + i), 1, &k[i]),
				LIMIT_PASS);
	h.slot = k[0].slot;	/* a stale hold on a slot given away */
	h.gen = k[0].gen - 1;
	limit_release(lt, &h);
	assert_int_equal(admit(lt, &other, &r2, v4(10), 1, NULL), LIMIT_CONNS);
	for (i = 0; i < 4; i++)
		limit_release(lt, &k[i]);
	limit_table_free(lt);
}

static void
test_sizes(void **state)
{
	(void)state;
	assert_null(limit_table_create(3, 1, &st));
	assert_null(limit_table_create(12, 1, &st));
	limit_table_free(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_without_burst),
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_conns),
		cmocka_unit_test(test_ipv6_per_64_and_per_route),
		cmocka_unit_test(test_bounded_set),
		cmocka_unit_test(test_release_after_the_entry_changed_hands),
		cmocka_unit_test(test_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
