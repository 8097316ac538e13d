/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The helper CPUs' room (ewyk_cpu_watch): samples of /proc/stat's text
 * and of the pool's busy time are injected, so every verdict is decided
 * by the numbers alone, never by this host's load.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "ewyk_exec.h"

#define MS 1000000ull	/* ns */

/* A /proc/stat of two CPUs: cpu0's user and idle ticks (100 Hz) as
 * given, cpu1 always busy (a shard's lcore, not watched). */
static const char *
stat_text(char *buf, size_t cap, unsigned long user0, unsigned long idle0,
		unsigned long t)
{
	snprintf(buf, cap, "cpu  %lu 0 0 %lu 0 0 0 0 0 0\n"
			"cpu0 %lu 0 0 %lu 0 0 0 0 0 0\n"
			"cpu1 %lu 0 0 0 0 0 0 0 0 0\n",
			user0 + t, idle0, user0, idle0, t);
	return buf;
}

static void
test_room_follows_other_work_not_the_pools(void **state)
{
	struct ewyk_cpu_watch w;
	cpu_set_t cpus;
	char b[512];

	(void)state;
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	ewyk_cpu_watch_init(&w, &cpus, 100);
	assert_true(atomic_load(&w.spare));	/* until seen otherwise */
	/* the baseline */
	assert_true(ewyk_cpu_watch_sample(&w, stat_text(b, sizeof(b), 0, 0, 0), 0));
	/* 100 ms: cpu0 90 % busy, all of it another process's: no room */
	assert_false(ewyk_cpu_watch_sample(&w,
			stat_text(b, sizeof(b), 9, 1, 10), 0));
	assert_int_equal(w.others_pct, 90);
	assert_int_equal(w.busy_samples, 1);
	/* the next 100 ms: 90 % busy again, 80 ms of it the pool's own:
	 * others take 10 %, room */
	assert_true(ewyk_cpu_watch_sample(&w,
			stat_text(b, sizeof(b), 18, 2, 20), 80 * MS));
	assert_int_equal(w.others_pct, 10);
	/* half a CPU exactly is room; a little less is not */
	assert_true(ewyk_cpu_watch_sample(&w,
			stat_text(b, sizeof(b), 23, 7, 30), 80 * MS));
	assert_false(ewyk_cpu_watch_sample(&w,
			stat_text(b, sizeof(b), 29, 11, 40), 80 * MS));
	/* a CPU that is not watched may be as busy as it likes: cpu1 is */
	assert_true(ewyk_cpu_watch_sample(&w,
			stat_text(b, sizeof(b), 29, 21, 50), 80 * MS));
}

static void
test_room_of_two_cpus_and_odd_input(void **state)
{
	struct ewyk_cpu_watch w;
	cpu_set_t cpus;

	(void)state;
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	CPU_SET(2, &cpus);
	ewyk_cpu_watch_init(&w, &cpus, 100);
	ewyk_cpu_watch_sample(&w, "cpu0 0 0 0 0 0 0 0 0\ncpu2 0 0 0 0 0 0 0 0\n", 0);
	/* one CPU full, the other idle: a whole CPU of room */
	assert_true(ewyk_cpu_watch_sample(&w,
			"cpu0 10 0 0 0 0 0 0 0\ncpu2 0 0 0 10 0 0 0 0\n", 0));
	/* both 80 % busy (iowait is idle): 0.4 CPU free, no room */
	assert_false(ewyk_cpu_watch_sample(&w,
			"cpu0 16 0 2 2 0 0 0 0\ncpu2 8 0 0 10 2 0 0 0\n", 0));
	/* text without the watched CPUs, or a clock gone back: unchanged */
	assert_false(ewyk_cpu_watch_sample(&w, "intr 1 2 3\n", 0));
	assert_false(ewyk_cpu_watch_sample(&w,
			"cpu0 1 0 0 0 0 0 0 0\ncpu2 1 0 0 0 0 0 0 0\n", 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_room_follows_other_work_not_the_pools),
		cmocka_unit_test(test_room_of_two_cpus_and_odd_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
