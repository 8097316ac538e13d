/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The access log: per shard, a ring of free records and a ring of filled
 * ones (single producer, single consumer each way), and one writer thread
 * for the process that drains the filled ones, formats them (combined or
 * JSON) and writes them, then gives the records back. The data path only
 * copies a few fields and reads the TSC: the time of day, the address's
 * text and every escape are the writer's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "access_log.h"
#include "ewyk_serve.h"

#define RECORDS_PER_SHARD 16384	/* a power of two: the rings' size */
#define SHARDS_MAX 128
#define WRITE_BUF (256 * 1024)
#define IDLE_US 5000	/* a shard's ring holds 16 ms of lines at 1 M/s */
#define WRITER_NICE (-10)
#define WRITE_BATCH 256

struct access_ring {
	struct serve_log *log;
	struct rte_ring *free;	/* writer -> shard */
	struct rte_ring *full;	/* shard -> writer */
	struct access_rec *recs;
	uint16_t shard;
};

struct serve_log {
	char path[4096];	/* "-": standard output */
	enum serve_log_format format;
	int fd;
	pthread_t writer;
	bool started;
	bool stop;
	bool reopen;
	uint64_t base_tsc;	/* the TSC and the time of day at open */
	struct timespec base_ts;
	uint64_t hz;
	pthread_mutex_t lock;	/* rings added at start-up */
	struct access_ring *rings[SHARDS_MAX];
	uint16_t nrings;
	struct serve_log_stats st;
	char buf[WRITE_BUF];
	size_t used;
	time_t stamp_sec;	/* the time of day formatted last */
	char stamp[40];
	struct net_addr addr_of;	/* the address formatted last */
	char addr[INET6_ADDRSTRLEN];
};

static int
open_path(const char *path)
{
	if (strcmp(path, "-") == 0)
		return dup(STDOUT_FILENO);
	return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
}

/* Formatting, on the writer ------------------------------------------- */

static void
put(struct serve_log *l, const char *p, size_t n)
{
	if (n > sizeof(l->buf) - l->used)
		n = sizeof(l->buf) - l->used;
	memcpy(l->buf + l->used, p, n);
	l->used += n;
}

/* A byte a field's text keeps as it is. */
static inline bool
plain_byte(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

/* A field as nginx writes it: '"', '\' and bytes outside printable
 * ASCII as \xHH, so that no line can be forged by a request; JSON's
 * escapes in the JSON format. */
static void
put_escaped(struct serve_log *l, const char *p, size_t n, bool json)
{
	static const char hex[] = "0123456789abcdef";
	/* Kept in locals: a store through a char pointer may alias l->used,
	 * which would be reloaded and stored again for every byte. */
	char *out = l->buf;
	size_t used = l->used, room = sizeof(l->buf) - 6, i = 0;

	while (i < n && used < room) {
		size_t run = i;
		unsigned char c;

		while (run < n && plain_byte((unsigned char)p[run]))
			run++;
		if (run - i > room - used)
			run = i + (room - used);
		memcpy(out + used, p + i, run - i);
		used += run - i;
		i = run;
		if (i == n || used >= room)
			break;
		c = (unsigned char)p[i++];
		if (json) {
			memcpy(out + used, "\\u00", 4);
			used += 4;
		} else {
			out[used++] = '\\';
			out[used++] = 'x';
		}
		out[used++] = hex[c >> 4];
		out[used++] = hex[c & 15];
	}
	l->used = used;
}

#define put_lit(l, s) put(l, s, sizeof(s) - 1)

static void
put_str(struct serve_log *l, const char *s)
{
	put(l, s, strlen(s));
}

/* Decimal, without printf: the writer formats a line in well under a
 * microsecond. */
static void
put_u64(struct serve_log *l, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[sizeof(tmp) - ++n] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	put(l, tmp + sizeof(tmp) - n, n);
}

/* The client's address as text, kept while the next line's is the same. */
static const char *
addr_text(struct serve_log *l, const struct access_rec *r)
{
	if (r->peer.family == 0)
		return "-";
	if (r->peer.family != l->addr_of.family ||
			memcmp(&r->peer.ip, &l->addr_of.ip, sizeof(r->peer.ip)) != 0) {
		l->addr_of = r->peer;
		net_addr_format(&r->peer, 0, l->addr, sizeof(l->addr));
	}
	return l->addr;
}

static struct timespec
wall_of(const struct serve_log *l, uint64_t tsc)
{
	uint64_t d = tsc > l->base_tsc ? tsc - l->base_tsc : 0;
	uint64_t ns = (d / l->hz) * 1000000000ull +
		(d % l->hz) * 1000000000ull / l->hz + (uint64_t)l->base_ts.tv_nsec;
	struct timespec t = { l->base_ts.tv_sec + (time_t)(ns / 1000000000ull),
		(long)(ns % 1000000000ull) };

	return t;
}

static const char *
stamp(struct serve_log *l, time_t sec)
{
	struct tm tm;

	if (sec != l->stamp_sec) {
		gmtime_r(&sec, &tm);
		strftime(l->stamp, sizeof(l->stamp), l->format == SERVE_LOG_JSON ?
				"%Y-%m-%dT%H:%M:%S" : "%d/%b/%Y:%H:%M:%S +0000", &tm);
		l->stamp_sec = sec;
	}
	return l->stamp;
}

static void
format(struct serve_log *l, const struct access_rec *r)
{
	struct timespec t = wall_of(l, r->end_tsc);
	uint64_t us = (r->end_tsc - r->start_tsc) * 1000000 / l->hz;
	const char *proto = r->version == 3 ? "HTTP/3" :
		r->version == 2 ? "HTTP/2.0" : "HTTP/1.1";
	size_t ml = strnlen(r->method, sizeof(r->method));
	char frac[7];
	int i;

	if (l->format == SERVE_LOG_JSON) {
		for (i = 5; i >= 0; i--, t.tv_nsec /= 10)
			frac[i] = (char)('0' + (t.tv_nsec / 1000) % 10);
		frac[6] = '\0';
		put_lit(l, "{\"time\":\"");
		put_str(l, stamp(l, t.tv_sec));
		put_lit(l, ".");
		put(l, frac, 6);
		put_lit(l, "Z\",\"remote_addr\":\"");
		put_str(l, addr_text(l, r));
		put_lit(l, "\",\"remote_port\":");
		put_u64(l, r->port);
		put_lit(l, ",\"method\":\"");
		put_escaped(l, r->method, ml, true);
		put_lit(l, "\",\"target\":\"");
		put_escaped(l, r->target, r->target_len, true);
		put_lit(l, "\",\"protocol\":\"");
		put_str(l, proto);
		put_lit(l, "\",\"status\":");
		put_u64(l, r->status);
		if (r->bytes_known) {
			put_lit(l, ",\"bytes\":");
			put_u64(l, r->bytes);
		}
		put_lit(l, ",\"duration_us\":");
		put_u64(l, us);
		put_lit(l, ",\"shard\":");
		put_u64(l, r->shard);
		put_lit(l, ",\"referer\":\"");
		put_escaped(l, r->referer, r->referer_len, true);
		put_lit(l, "\",\"user_agent\":\"");
		put_escaped(l, r->ua, r->ua_len, true);
		put_lit(l, "\"}\n");
		return;
	}
	put_str(l, addr_text(l, r));
	put_lit(l, " - - [");
	put_str(l, stamp(l, t.tv_sec));
	put_lit(l, "] \"");
	put_escaped(l, r->method, ml, false);
	put_lit(l, " ");
	put_escaped(l, r->target, r->target_len, false);
	put_lit(l, " ");
	put_str(l, proto);
	put_lit(l, "\" ");
	put_u64(l, r->status);
	put_lit(l, " ");
	if (r->bytes_known && r->bytes > 0)
		put_u64(l, r->bytes);
	else
		put_lit(l, "-");
	put_lit(l, " \"");
	if (r->referer_len > 0)
		put_escaped(l, r->referer, r->referer_len, false);
	else
		put_lit(l, "-");
	put_lit(l, "\" \"");
	if (r->ua_len > 0)
		put_escaped(l, r->ua, r->ua_len, false);
	else
		put_lit(l, "-");
	put_lit(l, "\"\n");
}

static void
flush(struct serve_log *l)
{
	size_t off = 0;

	while (off < l->used) {
		ssize_t n = write(l->fd, l->buf + off, l->used - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			__atomic_fetch_add(&l->st.write_errors, 1,
					__ATOMIC_RELAXED);
			break;
		}
		off += (size_t)n;
	}
	l->used = 0;
}

/* Everything the rings hold now, written; returns the lines. */
static unsigned int
drain(struct serve_log *l)
{
	void *recs[64];
	unsigned int total = 0, n, i;
	uint16_t k;

	for (k = 0; k < __atomic_load_n(&l->nrings, __ATOMIC_ACQUIRE); k++) {
		struct access_ring *r = l->rings[k];

		while ((n = rte_ring_sc_dequeue_burst(r->full, recs, 64,
				NULL)) > 0) {
			for (i = 0; i < n; i++) {
				if (sizeof(l->buf) - l->used < 2048)
					flush(l);
				format(l, recs[i]);
			}
			/* Formatted: the records go back. */
			rte_ring_sp_enqueue_burst(r->free, recs, n, NULL);
			total += n;
		}
	}
	flush(l);
	__atomic_fetch_add(&l->st.lines, total, __ATOMIC_RELAXED);
	return total;
}

static void
reopen(struct serve_log *l)
{
	int fd = open_path(l->path);

	if (fd < 0) {
		__atomic_fetch_add(&l->st.write_errors, 1, __ATOMIC_RELAXED);
		return;		/* the old file goes on */
	}
	close(l->fd);
	l->fd = fd;
	__atomic_fetch_add(&l->st.reopens, 1, __ATOMIC_RELAXED);
}

static void *
writer(void *arg)
{
	struct serve_log *l = arg;

	/* The thread shares a CPU with the main lcore (and, on a small host,
	 * with whatever else runs there): at a higher priority it drains the
	 * rings as soon as it wakes, so they do not fill while it waits for
	 * its turn. It sleeps most of the time, so it takes little. Without
	 * CAP_SYS_NICE it runs at the process's priority. */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), WRITER_NICE);
	for (;;) {
		bool stop = __atomic_load_n(&l->stop, __ATOMIC_ACQUIRE);
		unsigned int n;

		if (__atomic_exchange_n(&l->reopen, false, __ATOMIC_ACQ_REL))
			reopen(l);
		n = drain(l);
		if (n == 0 && stop)
			return NULL;	/* drained after the stop */
		/* A pass that found few lines waits for more: fewer, larger
		 * writes, and the thread's CPU stays small beside the shards'. */
		if (n < WRITE_BATCH)
			usleep(IDLE_US);
	}
}

/* The process's log ---------------------------------------------------- */

struct serve_log *
serve_log_open(const char *path, enum serve_log_format format, char *err,
		size_t errlen)
{
	struct serve_log *l = calloc(1, sizeof(*l));

	if (l == NULL || strlen(path) >= sizeof(l->path)) {
		snprintf(err, errlen, "%s", l == NULL ? strerror(ENOMEM) :
				"path too long");
		free(l);
		return NULL;
	}
	snprintf(l->path, sizeof(l->path), "%s", path);
	l->format = format;
	l->fd = open_path(path);
	if (l->fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(l);
		return NULL;
	}
	pthread_mutex_init(&l->lock, NULL);
	l->hz = rte_get_tsc_hz();
	clock_gettime(CLOCK_REALTIME, &l->base_ts);
	l->base_tsc = rte_get_tsc_cycles();
	l->stamp_sec = -1;
	if (pthread_create(&l->writer, NULL, writer, l) != 0) {
		snprintf(err, errlen, "cannot start its writer thread");
		close(l->fd);
		free(l);
		return NULL;
	}
	pthread_setname_np(l->writer, "ewyk-access-log");
	l->started = true;
	return l;
}

void
serve_log_reopen(struct serve_log *l)
{
	if (l != NULL)
		__atomic_store_n(&l->reopen, true, __ATOMIC_RELEASE);
}

const struct serve_log_stats *
serve_log_stats(const struct serve_log *l)
{
	return &l->st;
}

void
serve_log_close(struct serve_log *l)
{
	uint16_t k;

	if (l == NULL)
		return;
	__atomic_store_n(&l->stop, true, __ATOMIC_RELEASE);
	pthread_join(l->writer, NULL);
	drain(l);	/* what came after the thread's last look */
	for (k = 0; k < l->nrings; k++) {
		struct access_ring *r = l->rings[k];

		rte_ring_free(r->free);
		rte_ring_free(r->full);
		free(r->recs);
		free(r);
	}
	close(l->fd);
	free(l);
}

/* A shard's side ----------------------------------------------------- */

struct access_ring *
access_ring_create(struct serve_log *log, uint16_t shard)
{
	struct access_ring *r = calloc(1, sizeof(*r));
	char name[RTE_RING_NAMESIZE];
	uint32_t i;

	if (r == NULL)
		return NULL;
	r->log = log;
	r->shard = shard;
	snprintf(name, sizeof(name), "ewyk_logf_%u", shard);
	r->free = rte_ring_create(name, RECORDS_PER_SHARD, rte_socket_id(),
			RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	snprintf(name, sizeof(name), "ewyk_logq_%u", shard);
	r->full = rte_ring_create(name, RECORDS_PER_SHARD, rte_socket_id(),
			RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	r->recs = calloc(RECORDS_PER_SHARD, sizeof(*r->recs));
	pthread_mutex_lock(&log->lock);
	if (r->free == NULL || r->full == NULL || r->recs == NULL ||
			log->nrings == SHARDS_MAX) {
		pthread_mutex_unlock(&log->lock);
		rte_ring_free(r->free);
		rte_ring_free(r->full);
		free(r->recs);
		free(r);
		return NULL;
	}
	for (i = 0; i < RECORDS_PER_SHARD; i++)
		rte_ring_sp_enqueue(r->free, &r->recs[i]);
	log->rings[log->nrings] = r;
	__atomic_store_n(&log->nrings, log->nrings + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&log->lock);
	return r;
}

/* Copies at most cap bytes of s, a cut one ending in "...". */
static uint16_t
copy_cut(char *dst, size_t cap, struct http_str s)
{
	if (s.len <= cap) {
		memcpy(dst, s.p, s.len);
		return (uint16_t)s.len;
	}
	memcpy(dst, s.p, cap - 3);
	memcpy(dst + cap - 3, "...", 3);
	return (uint16_t)cap;
}

/* User-Agent and Referer, in one pass over the fields. */
static void
ua_and_referer(const struct http_head *h, const struct http_str **ua,
		const struct http_str **ref)
{
	uint32_t i;

	*ua = *ref = NULL;
	for (i = 0; i < h->nheaders && (*ua == NULL || *ref == NULL); i++) {
		const struct http_str *n = &h->headers[i].name;

		if (n->len == 10 && *ua == NULL &&
				strncasecmp(n->p, "user-agent", 10) == 0)
			*ua = &h->headers[i].value;
		else if (n->len == 7 && *ref == NULL &&
				strncasecmp(n->p, "referer", 7) == 0)
			*ref = &h->headers[i].value;
	}
}

struct access_rec *
access_rec_take(struct access_ring *r, const struct http_head *h,
		int version, const struct net_addr *peer, uint16_t port)
{
	const struct http_str *ua, *ref;
	struct access_rec *rec;
	void *p;

	if (rte_ring_sc_dequeue(r->free, &p) != 0) {
		__atomic_fetch_add(&r->log->st.drops, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	rec = p;
	rec->start_tsc = rte_get_tsc_cycles();
	if (h == NULL) {	/* a head that could not be parsed */
		static const struct http_head none = {
			.method_str = { "-", 1 }, .target = { "-", 1 },
		};

		h = &none;
	}
	rec->bytes = 0;
	rec->bytes_known = false;
	rec->version = (uint8_t)version;
	rec->shard = r->shard;
	rec->peer = *peer;
	rec->port = port;
	memset(rec->method, 0, sizeof(rec->method));
	memcpy(rec->method, h->method_str.p, RTE_MIN(h->method_str.len,
			sizeof(rec->method) - 1));
	rec->target_len = copy_cut(rec->target, sizeof(rec->target),
			h->target.len > 0 ? h->target : h->path);
	ua_and_referer(h, &ua, &ref);
	rec->ua_len = ua != NULL ? copy_cut(rec->ua, sizeof(rec->ua), *ua) : 0;
	rec->referer_len = ref != NULL ? copy_cut(rec->referer,
			sizeof(rec->referer), *ref) : 0;
	return rec;
}

void
access_rec_done(struct access_ring *r, struct access_rec *rec, int status)
{
	rec->end_tsc = rte_get_tsc_cycles();
	rec->status = (uint16_t)status;
	/* The full ring holds every record: it cannot be full. */
	rte_ring_sp_enqueue(r->full, rec);
}
