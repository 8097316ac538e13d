/* SPDX-License-Identifier: BSD-3-Clause */
/* Private helpers of ewyk_exec: cache lines, clock, futex. */

#ifndef EWYK_EXEC_SYS_H
#define EWYK_EXEC_SYS_H

#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#define EXEC_CACHE_LINE 64
#define exec_aligned __attribute__((aligned(EXEC_CACHE_LINE)))

#define exec_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - __builtin_offsetof(type, member)))

static inline uint64_t
exec_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The futex word is the low half of a 64-bit word, wherever it lies. */
static inline uint32_t *
exec_futex_word(void *word64)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return (uint32_t *)word64 + 1;
#else
	return (uint32_t *)word64;
#endif
}

/* Sleep while *uaddr == val. Spurious returns are fine: callers re-check. */
static inline void
exec_futex_wait(uint32_t *uaddr, uint32_t val)
{
	syscall(SYS_futex, uaddr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static inline void
exec_futex_wake(uint32_t *uaddr, int n)
{
	syscall(SYS_futex, uaddr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

#endif /* EWYK_EXEC_SYS_H */
