/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A latency histogram in nanoseconds with a bounded relative error:
 * four buckets per power of two (a value lands within 25 % of its
 * bucket's bounds), 0 ns to over two hours (2^43 ns) in LAT_BUCKETS
 * counters. Nanoseconds, not microseconds: a static file answered in
 * 1.5 us must not read 0. One writer (a shard's owner); readers sum
 * several and take percentiles.
 */
#ifndef EWYK_LAT_HIST_H
#define EWYK_LAT_HIST_H

#include <stdint.h>

#define LAT_SUB 4		/* buckets per power of two */
#define LAT_BUCKETS (LAT_SUB * 43)

struct lat_hist {
	uint64_t count;
	uint64_t max_ns;
	uint64_t bucket[LAT_BUCKETS];
};

static inline unsigned int
lat_bucket(uint64_t ns)
{
	unsigned int e, idx;

	if (ns < LAT_SUB)
		return (unsigned int)ns;
	e = 63u - (unsigned int)__builtin_clzll(ns);	/* ns >= 2^e */
	idx = LAT_SUB * (e - 1) + (unsigned int)((ns >> (e - 2)) & (LAT_SUB - 1));
	return idx < LAT_BUCKETS ? idx : LAT_BUCKETS - 1;
}

static inline void
lat_record(struct lat_hist *h, uint64_t ns)
{
	h->count++;
	h->bucket[lat_bucket(ns)]++;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

/* TSC cycles to nanoseconds with a multiplier computed once from the
 * TSC's frequency, so that the data path multiplies and shifts where a
 * division would cost tens of cycles: ns = cycles * mult >> 32, within a
 * part in 2^31 and without overflow for any interval. */
static inline uint64_t
lat_ns_mult(uint64_t tsc_hz)
{
	/* Rounded up: a whole number of nanoseconds is not read one short. */
	return tsc_hz == 0 ? 0 :
		((UINT64_C(1000000000) << 32) + tsc_hz - 1) / tsc_hz;
}

static inline uint64_t
lat_cycles_ns(uint64_t cycles, uint64_t mult)
{
	__extension__ typedef unsigned __int128 u128;

	return (uint64_t)(((u128)cycles * mult) >> 32);
}

/* Adds src into dst (a reader's sum of several writers). */
void lat_merge(struct lat_hist *dst, const struct lat_hist *src);
/* The value at or under which a fraction q (0..1] of the samples lie, as
 * its bucket's upper bound (never above the maximum seen); 0 when empty. */
uint64_t lat_percentile(const struct lat_hist *h, double q);

#endif /* EWYK_LAT_HIST_H */
