/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether a helper's CPUs have room: from the kernel's time accounts of
 * those CPUs (/proc/stat's cpuN lines), less what the blocking pool
 * itself spent on them, so that the pool's own work never reads as
 * someone else's. Another process busy there (a client on the same
 * host, a build) makes the room go; the pool's handshakes do not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ewyk_exec.h"

void
ewyk_cpu_watch_init(struct ewyk_cpu_watch *w, const cpu_set_t *cpus,
		unsigned int hz)
{
	memset(w, 0, sizeof(*w));
	w->cpus = *cpus;
	w->ns_per_tick = 1000000000ull / (hz != 0 ? hz : 100);
	atomic_init(&w->spare, true);	/* until seen otherwise */
}

/* The watched CPUs' ticks in all and busy in text (cpuN lines; the
 * first, "cpu ", is everyone's and skipped). */
static unsigned int
sum_ticks(const struct ewyk_cpu_watch *w, const char *text, uint64_t *total,
		uint64_t *busy)
{
	unsigned int n = 0;
	const char *p;

	*total = *busy = 0;
	for (p = text; p != NULL && *p != '\0'; p = strchr(p, '\n'),
			p = p != NULL ? p + 1 : NULL) {
		unsigned long long v[8] = { 0 };
		unsigned int cpu, i;
		uint64_t all = 0;

		if (strncmp(p, "cpu", 3) != 0 || p[3] < '0' || p[3] > '9')
			continue;
		if (sscanf(p + 3, "%u %llu %llu %llu %llu %llu %llu %llu %llu",
				&cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
				&v[6], &v[7]) < 5 || cpu >= CPU_SETSIZE ||
				!CPU_ISSET(cpu, &w->cpus))
			continue;
		for (i = 0; i < 8; i++)
			all += v[i];
		*total += all;
		*busy += all - v[3] - v[4];	/* less idle and iowait */
		n++;
	}
	return n;
}

bool
ewyk_cpu_watch_sample(struct ewyk_cpu_watch *w, const char *proc_stat,
		uint64_t pool_busy_ns)
{
	uint64_t total, busy, d_total, d_busy, d_pool, others, room;
	unsigned int n = sum_ticks(w, proc_stat, &total, &busy);
	bool spare;

	if (n == 0)
		return atomic_load_explicit(&w->spare, memory_order_relaxed);
	if (w->samples++ == 0 || total <= w->total) {
		w->total = total;
		w->busy = busy;
		w->pool_ns = pool_busy_ns;
		return atomic_load_explicit(&w->spare, memory_order_relaxed);
	}
	d_total = (total - w->total) * w->ns_per_tick;
	d_busy = (busy - w->busy) * w->ns_per_tick;
	d_pool = pool_busy_ns - w->pool_ns;
	others = d_busy > d_pool ? d_busy - d_pool : 0;
	room = d_total > others ? d_total - others : 0;
	/* Half a CPU of room, at least, over the interval. */
	spare = room * 2 * n >= d_total;
	w->total = total;
	w->busy = busy;
	w->pool_ns = pool_busy_ns;
	w->others_pct = d_total != 0 ? (unsigned int)(others * 100 * n /
			d_total) : 0;
	if (!spare)
		w->busy_samples++;
	atomic_store_explicit(&w->spare, spare, memory_order_relaxed);
	return spare;
}

bool
ewyk_cpu_watch_read(struct ewyk_cpu_watch *w, uint64_t pool_busy_ns)
{
	char buf[4096];
	size_t len = 0;
	FILE *f = fopen("/proc/stat", "r");

	if (f == NULL)
		return atomic_load_explicit(&w->spare, memory_order_relaxed);
	/* The cpu lines come first; the rest (interrupts) is not wanted. */
	while (len < sizeof(buf) - 1 && fgets(buf + len,
			(int)(sizeof(buf) - len), f) != NULL &&
			strncmp(buf + len, "cpu", 3) == 0)
		len += strlen(buf + len);
	buf[len] = '\0';
	fclose(f);
	return ewyk_cpu_watch_sample(w, buf, pool_busy_ns);
}
