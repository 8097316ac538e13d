/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a run measured: the latency histogram, the progress line each
 * second, and the summary in h2load's words (its lines are parsed by
 * scripts written for h2load) with a latency line, and as JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "load.h"

static const char *const err_names[] = {
#define LOAD_ERR_NAME(n) #n,
	LOAD_ERRORS(LOAD_ERR_NAME)
#undef LOAD_ERR_NAME
};

const char *
load_err_name(enum load_err e)
{
	return err_names[e];
}

static unsigned int
hist_index(uint64_t ns)
{
	unsigned int e, idx;

	if (ns < LH_SUB)
		return (unsigned int)ns;
	e = 63u - (unsigned int)__builtin_clzll(ns);	/* ns >= 2^e */
	idx = (e - LH_SUB_BITS + 1) * LH_SUB +
		(unsigned int)((ns >> (e - LH_SUB_BITS)) & (LH_SUB - 1));
	return idx < LH_BUCKETS ? idx : LH_BUCKETS - 1;
}

/* The highest value that lands in bucket i. */
static uint64_t
hist_high(unsigned int i)
{
	unsigned int k = i / LH_SUB, s = i % LH_SUB;

	if (k == 0)
		return i;
	return (((uint64_t)LH_SUB + s) << (k - 1)) + (1ull << (k - 1)) - 1;
}

void
hist_record(struct load_hist *h, uint64_t ns)
{
	if (h->count == 0 || ns < h->min_ns)
		h->min_ns = ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->count++;
	h->bucket[hist_index(ns)]++;
}

void
hist_merge(struct load_hist *dst, const struct load_hist *src)
{
	unsigned int i;

	if (src->count == 0)
		return;
	if (dst->count == 0 || src->min_ns < dst->min_ns)
		dst->min_ns = src->min_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	dst->count += src->count;
	for (i = 0; i < LH_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
}

uint64_t
hist_percentile(const struct load_hist *h, double q)
{
	uint64_t rank, seen = 0;
	unsigned int i;

	if (h->count == 0)
		return 0;
	rank = (uint64_t)(q * (double)h->count + 0.999999);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < LH_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank)
			return hist_high(i) < h->max_ns ? hist_high(i) : h->max_ns;
	}
	return h->max_ns;
}

static uint64_t
rd(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void
report_sum(struct load_worker *ws, uint16_t n, struct load_stats *sum)
{
	uint16_t i;
	unsigned int k;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < n; i++) {
		const struct load_stats *s = &ws[i].stats;

		sum->started += rd(&s->started);
		sum->done += rd(&s->done);
		sum->succeeded += rd(&s->succeeded);
		sum->failed += rd(&s->failed);
		sum->errored += rd(&s->errored);
		sum->timeouts += rd(&s->timeouts);
		for (k = 0; k < RTE_DIM(s->status); k++)
			sum->status[k] += rd(&s->status[k]);
		for (k = 0; k < LOAD_ERR__COUNT; k++)
			sum->err[k] += rd(&s->err[k]);
		sum->bytes_in += rd(&s->bytes_in);
		sum->header_bytes += rd(&s->header_bytes);
		sum->body_bytes += rd(&s->body_bytes);
		sum->conns_opened += rd(&s->conns_opened);
		sum->conns_established += rd(&s->conns_established);
		sum->conns_open += rd(&s->conns_open);
		sum->busy_tsc += rd(&s->busy_tsc);
		sum->idle_tsc += rd(&s->idle_tsc);
	}
}

void
report_progress(struct load_worker *ws, uint16_t n, double elapsed_s)
{
	static uint64_t last_done;
	static double last_s;
	struct load_stats sum;
	uint16_t i, holding = 0;
	double dt;

	report_sum(ws, n, &sum);
	for (i = 0; i < n; i++)
		holding += __atomic_load_n(&ws[i].holding, __ATOMIC_RELAXED);
	dt = elapsed_s - last_s;
	/* "holding" once every worker's requests are done and --hold keeps
	 * its connections open: scripts measure the server then. */
	printf("%s: %.1fs, %.0f req/s, %" PRIu64 " done, %" PRIu64
			" succeeded, %" PRIu64 " errored, %" PRIu64
			" timeout, %" PRIu64 " connections open\n",
			holding == n ? "holding" : "progress", elapsed_s,
			dt > 0 ? (double)(sum.done - last_done) / dt : 0.0,
			sum.done, sum.succeeded, sum.errored, sum.timeouts,
			sum.conns_open);
	fflush(stdout);
	last_done = sum.done;
	last_s = elapsed_s;
}

/* h2load's unit: "1.23MB". */
static void
size_str(char *buf, size_t len, double bytes)
{
	static const char *const unit[] = { "B", "KB", "MB", "GB", "TB" };
	unsigned int u = 0;

	while (bytes >= 1024 && u < RTE_DIM(unit) - 1) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, u == 0 ? "%.0f%s" : "%.2f%s", bytes, unit[u]);
}

struct summary {
	struct load_stats sum;
	struct tls_stats tls;	/* https: the workers' sessions, summed */
	const char *tls_version;	/* the first session's */
	const char *tls_cipher;
	struct load_hist lat;
	double busy;		/* the workers' busy share, 0..1 */
	uint64_t total;
	uint64_t pct[5];	/* p50 p90 p99 p99.9 max, ns */
};

static const double pct_q[4] = { 0.50, 0.90, 0.99, 0.999 };
static const char *const pct_name[5] = { "p50", "p90", "p99", "p99.9", "max" };
static const char *const pct_key[5] = { "p50", "p90", "p99", "p99_9", "max" };

/* The workers' TLS counters, and what their first session agreed. */
static void
tls_sum(struct load_worker *ws, uint16_t n, struct summary *s)
{
	uint16_t i;
	unsigned int k;

	for (i = 0; i < n; i++) {
		const struct tls_stats *t = &ws[i].tls_stats;

		s->tls.handshakes_full += t->handshakes_full;
		s->tls.handshakes_resumed += t->handshakes_resumed;
		for (k = 0; k < TLS_FAIL__COUNT; k++)
			s->tls.failed[k] += t->failed[k];
		s->tls.tls13 += t->tls13;
		s->tls.tls12 += t->tls12;
		s->tls.alpn_h2 += t->alpn_h2;
		s->tls.alpn_http11 += t->alpn_http11;
		s->tls.alpn_none += t->alpn_none;
		s->tls.close_notify_sent += t->close_notify_sent;
		s->tls.close_notify_received += t->close_notify_received;
		s->tls.errors += t->errors;
		if (s->tls_version == NULL && ws[i].tls_version != NULL) {
			s->tls_version = ws[i].tls_version;
			s->tls_cipher = ws[i].tls_cipher;
		}
	}
}

/* The protocol the run spoke: https's as ALPN chose (h2 when any
 * connection got it). */
static const char *
proto_name(const struct load_conf *conf, const struct summary *s)
{
	if (conf->tls)
		return s->tls.alpn_h2 > 0 ? "h2" : "http/1.1";
	return conf->proto == LOAD_H1 ? "http/1.1" : "h2c";
}

static void
json_tls(FILE *f, const struct summary *s)
{
	unsigned int k;

	fprintf(f, "  \"tls\": {\"version\": \"%s\", \"cipher\": \"%s\", "
			"\"handshakes_full\": %" PRIu64 ", \"handshakes_resumed\": %"
			PRIu64 ", \"tls13\": %" PRIu64 ", \"tls12\": %" PRIu64
			", \"alpn_h2\": %" PRIu64 ", \"alpn_http11\": %" PRIu64
			", \"alpn_none\": %" PRIu64 ", \"close_notify_sent\": %"
			PRIu64 ", \"close_notify_received\": %" PRIu64
			", \"record_errors\": %" PRIu64 ", \"failed\": {",
			s->tls_version != NULL ? s->tls_version : "",
			s->tls_cipher != NULL ? s->tls_cipher : "",
			s->tls.handshakes_full, s->tls.handshakes_resumed,
			s->tls.tls13, s->tls.tls12, s->tls.alpn_h2,
			s->tls.alpn_http11, s->tls.alpn_none,
			s->tls.close_notify_sent, s->tls.close_notify_received,
			s->tls.errors);
	for (k = 0; k < TLS_FAIL__COUNT; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", tls_fail_names[k],
				s->tls.failed[k]);
	fprintf(f, "}},\n");
}

static void
json_write(FILE *f, const struct load_conf *conf, const struct summary *s,
		struct load_worker *ws, double elapsed_s, uint16_t n)
{
	unsigned int k;

	fprintf(f, "{\n  \"elapsed_s\": %.6f,\n  \"req_per_s\": %.2f,\n",
			elapsed_s, elapsed_s > 0 ? (double)s->sum.done /
			elapsed_s : 0.0);
	fprintf(f, "  \"protocol\": \"%s\",\n  \"loop\": \"%s\",\n"
			"  \"rate\": %.3f,\n  \"clients\": %u,\n  \"depth\": %u,\n"
			"  \"new_conn\": %s,\n  \"workers\": %u,\n",
			proto_name(conf, s),
			conf->rate > 0 ? "open" : "closed", conf->rate,
			conf->clients, conf->depth,
			conf->new_conn ? "true" : "false", n);
	fprintf(f, "  \"requests\": {\"total\": %" PRIu64 ", \"started\": %"
			PRIu64 ", \"done\": %" PRIu64 ", \"succeeded\": %" PRIu64
			", \"failed\": %" PRIu64 ", \"errored\": %" PRIu64
			", \"timeout\": %" PRIu64 "},\n", s->total,
			s->sum.started, s->sum.done, s->sum.succeeded,
			s->sum.failed, s->sum.errored, s->sum.timeouts);
	fprintf(f, "  \"status\": {\"1xx_other\": %" PRIu64 ", \"2xx\": %" PRIu64
			", \"3xx\": %" PRIu64 ", \"4xx\": %" PRIu64 ", \"5xx\": %"
			PRIu64 "},\n", s->sum.status[1], s->sum.status[2],
			s->sum.status[3], s->sum.status[4], s->sum.status[5]);
	fprintf(f, "  \"errors\": {");
	for (k = 0; k < LOAD_ERR__COUNT; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", err_names[k],
				s->sum.err[k]);
	fprintf(f, "},\n  \"latency_us\": {");
	for (k = 0; k < 5; k++)
		fprintf(f, "\"%s\": %.3f, ", pct_key[k], (double)s->pct[k] / 1e3);
	fprintf(f, "\"min\": %.3f, \"count\": %" PRIu64 "},\n",
			(double)s->lat.min_ns / 1e3, s->lat.count);
	fprintf(f, "  \"bytes\": {\"total\": %" PRIu64 ", \"headers\": %" PRIu64
			", \"data\": %" PRIu64 "},\n", s->sum.bytes_in,
			s->sum.header_bytes, s->sum.body_bytes);
	fprintf(f, "  \"connections\": {\"opened\": %" PRIu64
			", \"established\": %" PRIu64 "},\n",
			s->sum.conns_opened, s->sum.conns_established);
	if (conf->tls)
		json_tls(f, s);
	fprintf(f, "  \"done_by_worker\": [");
	for (k = 0; k < n; k++)
		fprintf(f, "%s%" PRIu64, k ? ", " : "",
				__atomic_load_n(&ws[k].stats.done, __ATOMIC_RELAXED));
	fprintf(f, "],\n  \"client_busy\": %.4f\n}\n", s->busy);
}

int
report_summary(const struct load_conf *conf, struct load_worker *ws,
		uint16_t n, double elapsed_s)
{
	char total[32], heads[32], data[32], rate[32];
	struct summary s;
	uint16_t i;
	unsigned int k;

	memset(&s, 0, sizeof(s));
	report_sum(ws, n, &s.sum);
	for (i = 0; i < n; i++)
		hist_merge(&s.lat, &ws[i].stats.lat);
	for (k = 0; k < 4; k++)
		s.pct[k] = hist_percentile(&s.lat, pct_q[k]);
	s.pct[4] = s.lat.max_ns;
	s.busy = s.sum.busy_tsc + s.sum.idle_tsc > 0 ? (double)s.sum.busy_tsc /
		(double)(s.sum.busy_tsc + s.sum.idle_tsc) : 0;
	s.total = conf->requests > 0 ? conf->requests : s.sum.started;
	/* heads and framing: all that is not body */
	s.sum.header_bytes = s.sum.bytes_in - s.sum.body_bytes;
	size_str(total, sizeof(total), (double)s.sum.bytes_in);
	size_str(heads, sizeof(heads), (double)s.sum.header_bytes);
	size_str(data, sizeof(data), (double)s.sum.body_bytes);
	size_str(rate, sizeof(rate), elapsed_s > 0 ?
			(double)s.sum.bytes_in / elapsed_s : 0);
	if (conf->tls) {
		tls_sum(ws, n, &s);
		/* h2load's lines for a TLS run, of the first session */
		printf("\nTLS Protocol: %s\nCipher: %s\nApplication protocol: "
				"%s\n", s.tls_version != NULL ? s.tls_version :
				"(none)", s.tls_cipher != NULL ? s.tls_cipher :
				"(none)", proto_name(conf, &s));
	}
	printf("\nfinished in %.2fs, %.2f req/s, %s/s\n", elapsed_s,
			elapsed_s > 0 ? (double)s.sum.done / elapsed_s : 0.0, rate);
	printf("requests: %" PRIu64 " total, %" PRIu64 " started, %" PRIu64
			" done, %" PRIu64 " succeeded, %" PRIu64 " failed, %"
			PRIu64 " errored, %" PRIu64 " timeout\n", s.total,
			s.sum.started, s.sum.done, s.sum.succeeded, s.sum.failed,
			s.sum.errored, s.sum.timeouts);
	printf("status codes: %" PRIu64 " 2xx, %" PRIu64 " 3xx, %" PRIu64
			" 4xx, %" PRIu64 " 5xx\n", s.sum.status[2],
			s.sum.status[3], s.sum.status[4], s.sum.status[5]);
	printf("traffic: %s (%" PRIu64 ") total, %s (%" PRIu64 ") headers, %s (%"
			PRIu64 ") data\n", total, s.sum.bytes_in, heads,
			s.sum.header_bytes, data, s.sum.body_bytes);
	printf("latency:");
	for (k = 0; k < 5; k++)
		printf("%s %s %.1fus", k ? "," : "", pct_name[k],
				(double)s.pct[k] / 1e3);
	printf(" (%s)\n", conf->rate > 0 ? "from when each request was due" :
			"from when each request was sent");
	printf("errors:");
	for (k = 0; k < LOAD_ERR__COUNT; k++)
		printf("%s %s %" PRIu64, k ? "," : "", err_names[k], s.sum.err[k]);
	printf("\nconnections: %" PRIu64 " opened, %" PRIu64 " established; "
			"client: %u lcore%s, %.0f %% busy\n", s.sum.conns_opened,
			s.sum.conns_established, n, n == 1 ? "" : "s",
			100 * s.busy);
	if (conf->tls) {
		uint64_t failed = 0;

		for (k = 0; k < TLS_FAIL__COUNT; k++)
			failed += s.tls.failed[k];
		printf("TLS handshakes: %" PRIu64 " full, %" PRIu64 " resumed, %"
				PRIu64 " failed; ALPN: %" PRIu64 " h2, %" PRIu64
				" http/1.1, %" PRIu64 " none\n",
				s.tls.handshakes_full, s.tls.handshakes_resumed,
				failed, s.tls.alpn_h2, s.tls.alpn_http11,
				s.tls.alpn_none);
	}
	fflush(stdout);
	if (conf->json[0] != '\0') {
		FILE *f = fopen(conf->json, "w");

		if (f == NULL)
			return -1;
		json_write(f, conf, &s, ws, elapsed_s, n);
		if (fclose(f) != 0)
			return -1;
	}
	return 0;
}
