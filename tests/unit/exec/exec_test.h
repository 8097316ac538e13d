/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers shared by the lib/exec unit tests. */

#ifndef EXEC_TEST_H
#define EXEC_TEST_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t
test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline void
test_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Poll cond(arg) until true or timeout_ms passed; returns the last value. */
static inline bool
test_wait_until(bool (*cond)(void *), void *arg, unsigned int timeout_ms)
{
	uint64_t end = test_now_ms() + timeout_ms;

	while (!cond(arg)) {
		if (test_now_ms() >= end)
			return cond(arg);
		sched_yield();
		test_sleep_ms(1);
	}
	return true;
}

/* xorshift64*, one state per thread. */
static inline uint64_t
test_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

#endif /* EXEC_TEST_H */
