/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A latency histogram in microseconds with a bounded relative error:
 * four buckets per power of two (a value lands within 25 % of its
 * bucket's bounds), 0 us to over an hour in LAT_BUCKETS counters. One
 * writer (a shard's owner); readers sum several and take percentiles.
 */
#ifndef EWYK_LAT_HIST_H
#define EWYK_LAT_HIST_H

#include <stdint.h>

#define LAT_SUB 4		/* buckets per power of two */
#define LAT_BUCKETS (LAT_SUB * 33)

struct lat_hist {
	uint64_t count;
	uint64_t max_us;
	uint64_t bucket[LAT_BUCKETS];
};

static inline unsigned int
lat_bucket(uint64_t us)
{
	unsigned int e, idx;

	if (us < LAT_SUB)
		return (unsigned int)us;
	e = 63u - (unsigned int)__builtin_clzll(us);	/* us >= 2^e */
	idx = LAT_SUB * (e - 1) + (unsigned int)((us >> (e - 2)) & (LAT_SUB - 1));
	return idx < LAT_BUCKETS ? idx : LAT_BUCKETS - 1;
}

static inline void
lat_record(struct lat_hist *h, uint64_t us)
{
	h->count++;
	h->bucket[lat_bucket(us)]++;
	if (us > h->max_us)
		h->max_us = us;
}

/* Adds src into dst (a reader's sum of several writers). */
void lat_merge(struct lat_hist *dst, const struct lat_hist *src);
/* The value at or under which a fraction q (0..1] of the samples lie, as
 * its bucket's upper bound (never above the maximum seen); 0 when empty. */
uint64_t lat_percentile(const struct lat_hist *h, double q);

#endif /* EWYK_LAT_HIST_H */
