/* SPDX-License-Identifier: BSD-3-Clause */
#include "http_priv.h"

uint64_t
lat_bucket_top(unsigned int i)
{
	unsigned int e, sub;

	if (i < LAT_SUB)
		return i;
	e = i / LAT_SUB + 1;
	sub = i % LAT_SUB;
	return (1ull << e) + ((uint64_t)(sub + 1) << (e - 2)) - 1;
}

void
lat_merge(struct lat_hist *dst, const struct lat_hist *src)
{
	unsigned int i;

	dst->count += __atomic_load_n(&src->count, __ATOMIC_RELAXED);
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	for (i = 0; i < LAT_BUCKETS; i++)
		dst->bucket[i] += __atomic_load_n(&src->bucket[i], __ATOMIC_RELAXED);
}

uint64_t
lat_percentile(const struct lat_hist *h, double q)
{
	uint64_t total = 0, rank, seen = 0, top;
	unsigned int i;

	for (i = 0; i < LAT_BUCKETS; i++)
		total += h->bucket[i];
	if (total == 0)
		return 0;
	rank = (uint64_t)(q * (double)total + 0.999999);
	if (rank == 0)
		rank = 1;
	for (i = 0; i < LAT_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank)
			break;
	}
	top = lat_bucket_top(i < LAT_BUCKETS ? i : LAT_BUCKETS - 1);
	return top < h->max_ns ? top : h->max_ns;
}
