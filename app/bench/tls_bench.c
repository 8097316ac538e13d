/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tls-bench: the TLS libraries Debian 12 ships, measured the way ewyk
 * would run one over its own TCP: in memory, client and server on the same
 * thread, records passed through memory pipes by the libraries' own
 * transport hooks (custom BIO, push/pull, I/O callbacks). No socket, no
 * kernel.
 *
 * For each library, on one thread and on two threads at once (each with
 * its own contexts, as two lcores would have: shared locks inside the
 * library show as lost scaling):
 *   - full handshakes (TLS 1.3 ECDSA P-256, TLS 1.3 RSA-2048, TLS 1.2
 *     ECDSA P-256; X25519 key exchange, AES-128-GCM);
 *   - resumed handshakes by ticket (TLS 1.3 psk_dhe_ke, TLS 1.2);
 *   - records: AES-128-GCM at 16 KB and 1.4 KB, ChaCha20-Poly1305 at 16 KB.
 * "Server CPU" is the thread CPU time spent inside the server's calls
 * (connection set-up, handshake, free; encryption for records), so the
 * client's half of the pair is not counted; "pair" rates are wall-clock
 * rates of the whole in-memory pair. Then, on one thread, what the server
 * holds and allocates: per context, per full handshake, per idle
 * connection (with and without the library's buffer release) and per
 * request on an established connection (every heap allocation of the
 * process is counted: tls_bench_alloc.c).
 *
 * Each figure is the median of --rounds rounds of --ms milliseconds.
 */

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tls_bench.h"

#define MAX_THREADS 2
#define MAX_ROUNDS 99
#define WARMUP_NS (50 * 1000 * 1000ull)
#define BULK_BATCH (512 * 1024)	/* ciphertext per encrypt/decrypt batch */
#define IDLE_CONNS 32
#define REQ_BYTES 100
#define RESP_BYTES 1400
#define REQ_COUNT 1000

static const struct tb_backend *const backends[] = {
	&tb_openssl,
#ifdef TB_HAVE_GNUTLS
	&tb_gnutls,
#endif
#ifdef TB_HAVE_WOLFSSL
	&tb_wolfssl,
#endif
};
#define N_BACKENDS (sizeof(backends) / sizeof(backends[0]))

enum row_kind { ROW_FULL, ROW_RESUMED, ROW_RECORDS };

struct row {
	const char *name;
	enum row_kind kind;
	struct tb_conf conf;
	size_t record;		/* ROW_RECORDS: plaintext per record */
};

static const struct row rows[] = {
	{ "full 1.3 ECDSA-P256", ROW_FULL, { 13, TB_ECDSA_P256, TB_AES128_GCM, false }, 0 },
	{ "full 1.3 RSA-2048", ROW_FULL, { 13, TB_RSA_2048, TB_AES128_GCM, false }, 0 },
	{ "full 1.2 ECDSA-P256", ROW_FULL, { 12, TB_ECDSA_P256, TB_AES128_GCM, false }, 0 },
	{ "resumed 1.3 ticket", ROW_RESUMED, { 13, TB_ECDSA_P256, TB_AES128_GCM, false }, 0 },
	{ "resumed 1.2 ticket", ROW_RESUMED, { 12, TB_ECDSA_P256, TB_AES128_GCM, false }, 0 },
	{ "AES-128-GCM 16KB", ROW_RECORDS, { 13, TB_ECDSA_P256, TB_AES128_GCM, false }, 16384 },
	{ "AES-128-GCM 1.4KB", ROW_RECORDS, { 13, TB_ECDSA_P256, TB_AES128_GCM, false }, 1400 },
	{ "ChaCha20-Poly1305 16KB", ROW_RECORDS, { 13, TB_ECDSA_P256, TB_CHACHA20_POLY1305, false }, 16384 },
};
#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

/* One thread's run of one row. */
struct worker {
	const struct tb_backend *b;
	const struct row *row;
	const struct tb_creds *creds;
	uint64_t run_ns;
	pthread_barrier_t *start;
	void *sctx, *cctx;
	struct tb_pipe c2s, s2c;
	/* results */
	uint64_t ops, srv_ns, cli_ns, wall_ns;
	uint64_t cpu_ns;	/* the thread's whole CPU time while measured */
	long vcsw;		/* voluntary context switches meanwhile: it
				 * blocked (a contended lock; nothing else here
				 * sleeps) */
	int err;
};

/* A connection's two ends. */
struct pair {
	void *s, *c;
	const struct tb_pipe *s_in, *c_in;
};

static uint64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t
cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static uint64_t
wall_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* Runs expr as the server: booked to it, its CPU time added up in srv_ns. */
#define AS_SERVER(w, expr) __extension__ ({			\
	uint64_t t0_;						\
	tb_side_set(TB_SERVER);					\
	t0_ = cpu_ns();						\
	__typeof__(expr) r_ = (expr);				\
	(w)->srv_ns += cpu_ns() - t0_;				\
	tb_side_set(TB_OTHER);					\
	r_; })
/* Runs expr as the client (booked to it, not timed). */
#define AS_CLIENT(expr) __extension__ ({			\
	tb_side_set(TB_CLIENT);					\
	__typeof__(expr) r_ = (expr);				\
	tb_side_set(TB_OTHER);					\
	r_; })

static int
fail(struct worker *w, const char *what)
{
	if (w->err == 0)
		fprintf(stderr, "tls-bench: %s, %s: %s\n", w->b->name, w->row->name,
				what);
	w->err = -1;
	return -1;
}

static void
pipes_reset(struct worker *w)
{
	w->c2s.rd = w->c2s.wr = 0;
	w->s2c.rd = w->s2c.wr = 0;
}

static int
free_conn(const struct tb_backend *b, void *conn)
{
	b->conn_free(conn);
	return 0;
}

static void
pair_free(struct worker *w, struct pair *p)
{
	if (p->s != NULL)
		AS_SERVER(w, free_conn(w->b, p->s));
	if (p->c != NULL)
		AS_CLIENT(free_conn(w->b, p->c));
	p->s = p->c = NULL;
}

/* A connection, handshake done on both ends; resumed as asked or an
 * error. */
static int
pair_open(struct worker *w, struct pair *p, void *session)
{
	const struct tb_backend *b = w->b;
	bool cdone = false, sdone = false;
	int rc;

	pipes_reset(w);
	p->s_in = &w->c2s;
	p->c_in = &w->s2c;
	p->s = AS_SERVER(w, b->conn_new(w->sctx, &w->c2s, &w->s2c, NULL));
	p->c = AS_CLIENT(b->conn_new(w->cctx, &w->s2c, &w->c2s, session));
	if (p->s == NULL || p->c == NULL)
		return fail(w, "connection set-up failed");
	for (int i = 0; i < 16 && !(cdone && sdone); i++) {
		if (!cdone) {
			rc = AS_CLIENT(b->handshake(p->c));
			if (rc < 0)
				return fail(w, "client handshake failed");
			cdone = rc == 1;
		}
		if (!sdone) {
			rc = AS_SERVER(w, b->handshake(p->s));
			if (rc < 0)
				return fail(w, "server handshake failed");
			sdone = rc == 1;
		}
	}
	if (!cdone || !sdone)
		return fail(w, "handshake did not finish");
	if (b->resumed(p->s) != (session != NULL))
		return fail(w, session != NULL ? "not resumed" : "resumed unasked");
	return 0;
}

/* The client takes in what the server sent after the handshake (TLS 1.3
 * tickets): a read that finds no application data. */
static int
client_drain(struct worker *w, struct pair *p)
{
	uint8_t buf[256];
	long n = AS_CLIENT(w->b->read(p->c, buf, sizeof(buf)));

	return n == 0 ? 0 : fail(w, "unexpected data after the handshake");
}

static void *
ticket_session(struct worker *w)
{
	struct pair p = { 0 };
	void *session = NULL;

	if (pair_open(w, &p, NULL) == 0 && client_drain(w, &p) == 0) {
		session = AS_CLIENT(w->b->session_get(p.c));
		if (session == NULL)
			fail(w, "no resumable session (ticket)");
	}
	pair_free(w, &p);
	return session;
}

/*
 * Application data from conn, whose input is in: a read may consume a
 * record that carries none (a TLS 1.3 ticket, a key update) and say "again"
 * although more is waiting, so it is repeated while bytes remain.
 */
static long
read_record(const struct tb_backend *b, void *conn, const struct tb_pipe *in,
		void *buf, size_t cap)
{
	long r;
	int tries = 8;

	do
		r = b->read(conn, buf, cap);
	while (r == 0 && tb_pipe_used(in) > 0 && --tries > 0);
	return r;
}

/* Handshakes (full, or resumed from session) until deadline. */
static void
run_handshakes(struct worker *w, void *session, uint64_t deadline)
{
	struct pair p = { 0 };

	while (w->err == 0 && wall_ns() < deadline) {
		if (pair_open(w, &p, session) == 0)
			w->ops++;
		pair_free(w, &p);
	}
}

/* Records from server to client until deadline, in batches: the server's
 * encryption timed as server CPU, the client's decryption as client CPU. */
static void
run_records(struct worker *w, struct pair *p, uint64_t deadline)
{
	static const uint8_t src[16384];
	uint8_t dst[16384];
	size_t rec = w->row->record;

	while (w->err == 0 && wall_ns() < deadline) {
		uint64_t n = 0, t0;
		size_t got = 0;

		tb_side_set(TB_SERVER);
		t0 = cpu_ns();
		while (tb_pipe_used(&w->s2c) < BULK_BATCH) {
			if (w->b->write(p->s, src, rec) != (long)rec) {
				fail(w, "record write failed");
				break;
			}
			n++;
		}
		w->srv_ns += cpu_ns() - t0;
		tb_side_set(TB_CLIENT);
		t0 = cpu_ns();
		while (w->err == 0 && got < n * rec) {
			long r = read_record(w->b, p->c, &w->s2c, dst, sizeof(dst));

			if (r <= 0) {
				fail(w, "record read failed");
				break;
			}
			got += (size_t)r;
		}
		w->cli_ns += cpu_ns() - t0;
		tb_side_set(TB_OTHER);
		w->ops += n;
	}
}

/* One phase of a worker (warm-up or measured) until deadline. */
static void
run_phase(struct worker *w, void *session, struct pair *p, uint64_t deadline)
{
	if (w->row->kind == ROW_RECORDS)
		run_records(w, p, deadline);
	else
		run_handshakes(w, session, deadline);
}

static long
voluntary_switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	void *session = NULL;
	struct pair p = { 0 };
	uint64_t t0;

	w->sctx = w->b->ctx_new(true, &w->row->conf, w->creds);
	w->cctx = w->b->ctx_new(false, &w->row->conf, w->creds);
	if (w->sctx == NULL || w->cctx == NULL)
		fail(w, "context set-up failed");
	if (w->err == 0 && w->row->kind == ROW_RESUMED)
		session = ticket_session(w);
	if (w->err == 0 && w->row->kind == ROW_RECORDS &&
			pair_open(w, &p, NULL) == 0)
		client_drain(w, &p);
	if (w->err == 0)
		run_phase(w, session, &p, wall_ns() + WARMUP_NS);
	w->ops = w->srv_ns = w->cli_ns = 0;
	pthread_barrier_wait(w->start);
	w->vcsw = voluntary_switches();
	w->cpu_ns = cpu_ns();
	t0 = wall_ns();
	if (w->err == 0)
		run_phase(w, session, &p, t0 + w->run_ns);
	w->wall_ns = wall_ns() - t0;
	w->cpu_ns = cpu_ns() - w->cpu_ns;
	w->vcsw = voluntary_switches() - w->vcsw;
	pair_free(w, &p);
	if (session != NULL)
		w->b->session_free(session);
	if (w->sctx != NULL)
		w->b->ctx_free(w->sctx);
	if (w->cctx != NULL)
		w->b->ctx_free(w->cctx);
	return NULL;
}

/* Per-round figures of a row at a thread count. */
struct sample {
	double srv_ns;		/* server CPU per op, mean over threads */
	double cli_ns;		/* client CPU per op (records: decryption) */
	double rate;		/* ops per second of wall time, all threads */
	double par;		/* CPU time of all threads over wall time: how
				 * many really ran at once */
	double vcsw;		/* voluntary switches per 1000 ops */
};

static int
run_row(const struct tb_backend *b, const struct row *row,
		const struct tb_creds *creds, int threads, uint64_t run_ns,
		struct sample *out)
{
	struct worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	pthread_barrier_t start;
	uint64_t bufs_ok = 1;
	int err = 0;

	pthread_barrier_init(&start, NULL, (unsigned)threads);
	memset(w, 0, sizeof(w));
	for (int i = 0; i < threads; i++) {
		w[i] = (struct worker){ .b = b, .row = row, .creds = creds,
			.run_ns = run_ns, .start = &start };
		w[i].c2s.buf = malloc(TB_PIPE_CAP);
		w[i].s2c.buf = malloc(TB_PIPE_CAP);
		bufs_ok &= w[i].c2s.buf != NULL && w[i].s2c.buf != NULL;
	}
	if (!bufs_ok) {
		fprintf(stderr, "tls-bench: out of memory\n");
		err = -1;
	}
	for (int i = 0; err == 0 && i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker_main, &w[i]) != 0) {
			fprintf(stderr, "tls-bench: cannot start a thread\n");
			exit(1);
		}
	memset(out, 0, sizeof(*out));
	for (int i = 0; err == 0 && i < threads; i++) {
		pthread_join(tid[i], NULL);
		if (w[i].err != 0 || w[i].ops == 0) {
			err = -1;
			continue;
		}
		out->srv_ns += (double)w[i].srv_ns / (double)w[i].ops / threads;
		out->cli_ns += (double)w[i].cli_ns / (double)w[i].ops / threads;
		out->rate += (double)w[i].ops * 1e9 / (double)w[i].wall_ns;
		out->par += (double)w[i].cpu_ns / (double)w[i].wall_ns;
		out->vcsw += (double)w[i].vcsw * 1000 / (double)w[i].ops;
	}
	for (int i = 0; i < threads; i++) {
		free(w[i].c2s.buf);
		free(w[i].s2c.buf);
	}
	pthread_barrier_destroy(&start);
	return err;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct figures {
	double srv_ns, cli_ns, rate, par, vcsw;
};

static struct figures
medians(const struct sample *s, int n)
{
	double a[MAX_ROUNDS], b[MAX_ROUNDS], c[MAX_ROUNDS], d[MAX_ROUNDS],
	       e[MAX_ROUNDS];

	for (int i = 0; i < n; i++) {
		a[i] = s[i].srv_ns;
		b[i] = s[i].cli_ns;
		c[i] = s[i].rate;
		d[i] = s[i].par;
		e[i] = s[i].vcsw;
	}
	return (struct figures){ median(a, n), median(b, n), median(c, n),
		median(d, n), median(e, n) };
}

static void
print_row(const struct tb_backend *b, const struct row *row,
		const struct figures *one, const struct figures *two)
{
	if (row->kind == ROW_RECORDS) {
		double mb = (double)row->record / 1e6;

		printf("%-8s %-23s %9.0f %9.0f %9.0f   %9.0f %9.0f %5.2f %4.2f %5.1f\n",
				b->name, row->name, mb / (one->srv_ns / 1e9),
				mb / (one->cli_ns / 1e9), one->rate * mb,
				mb / (two->srv_ns / 1e9), two->rate * mb,
				two->rate / one->rate, two->par, two->vcsw);
	} else {
		printf("%-8s %-23s %9.1f %9.0f %9.0f   %9.1f %9.0f %5.2f %4.2f %5.1f\n",
				b->name, row->name, one->srv_ns / 1e3,
				1e9 / one->srv_ns, one->rate, two->srv_ns / 1e3,
				two->rate, two->rate / one->rate, two->par, two->vcsw);
	}
	fflush(stdout);
}

static void
print_failed(const struct tb_backend *b, const struct row *row)
{
	printf("%-8s %-23s   (failed: see the error above)\n", b->name, row->name);
	fflush(stdout);
}

/* ---- memory: one thread, TLS 1.3 ECDSA P-256 AES-128-GCM ---- */

struct mem_figures {
	int64_t ctx_bytes;	/* a server context with its certificate */
	double hs_allocs;	/* per full handshake, server side */
	double hs_bytes;	/* allocated during it (not net) */
	int64_t hs_peak;	/* highest live during it, above the start */
	int64_t idle_bytes;	/* an idle connection after one request */
	double req_allocs;	/* per request on an established connection */
};

/* A request and its answer on an established pair. */
static int
exchange(struct worker *w, struct pair *p)
{
	static const uint8_t req[REQ_BYTES], resp[RESP_BYTES];
	uint8_t buf[RESP_BYTES];

	if (AS_CLIENT(w->b->write(p->c, req, sizeof(req))) != REQ_BYTES ||
			AS_SERVER(w, read_record(w->b, p->s, p->s_in, buf,
					sizeof(buf))) != REQ_BYTES ||
			AS_SERVER(w, w->b->write(p->s, resp, sizeof(resp))) != RESP_BYTES ||
			AS_CLIENT(read_record(w->b, p->c, p->c_in, buf,
					sizeof(buf))) != RESP_BYTES)
		return fail(w, "request exchange failed");
	return 0;
}

static int
memory_run(struct worker *w, bool release, struct mem_figures *m)
{
	static struct tb_pipe pipes[IDLE_CONNS][2];
	struct tb_conf conf = w->row->conf;
	struct pair p = { 0 }, idle[IDLE_CONNS];
	struct tb_allocs a0, a1;
	const int hs = 20;

	conf.release_buffers = release;
	a0 = tb_allocs_get(TB_SERVER);
	w->sctx = AS_SERVER(w, w->b->ctx_new(true, &conf, w->creds));
	m->ctx_bytes = tb_allocs_get(TB_SERVER).live - a0.live;
	w->cctx = w->b->ctx_new(false, &conf, w->creds);
	if (w->sctx == NULL || w->cctx == NULL)
		return fail(w, "context set-up failed");

	/* What a full handshake allocates (after one to warm up). */
	if (pair_open(w, &p, NULL) != 0)
		return -1;
	pair_free(w, &p);
	a0 = tb_allocs_get(TB_SERVER);
	tb_allocs_reset_peak(TB_SERVER);
	for (int i = 0; i < hs; i++) {
		if (pair_open(w, &p, NULL) != 0)
			return -1;
		pair_free(w, &p);
	}
	a1 = tb_allocs_get(TB_SERVER);
	m->hs_allocs = (double)(a1.count - a0.count) / hs;
	m->hs_bytes = (double)(a1.bytes - a0.bytes) / hs;
	m->hs_peak = a1.peak - a0.live;

	/* Idle connections, each after its handshake and one request. */
	a0 = tb_allocs_get(TB_SERVER);
	for (int i = 0; i < IDLE_CONNS; i++) {
		struct tb_pipe *in = &pipes[i][0], *out = &pipes[i][1];
		bool cdone = false, sdone = false;

		if (in->buf == NULL) {
			in->buf = malloc(TB_PIPE_CAP);
			out->buf = malloc(TB_PIPE_CAP);
			if (in->buf == NULL || out->buf == NULL)
				return fail(w, "out of memory");
		}
		in->rd = in->wr = out->rd = out->wr = 0;
		idle[i].s_in = in;
		idle[i].c_in = out;
		idle[i].s = AS_SERVER(w, w->b->conn_new(w->sctx, in, out, NULL));
		idle[i].c = w->b->conn_new(w->cctx, out, in, NULL);
		if (idle[i].s == NULL || idle[i].c == NULL)
			return fail(w, "connection set-up failed");
		for (int k = 0; k < 16 && !(cdone && sdone); k++) {
			cdone = cdone || w->b->handshake(idle[i].c) == 1;
			sdone = sdone || AS_SERVER(w, w->b->handshake(idle[i].s)) == 1;
		}
		if (!cdone || !sdone || client_drain(w, &idle[i]) != 0 ||
				exchange(w, &idle[i]) != 0)
			return fail(w, "idle connection set-up failed");
	}
	m->idle_bytes = (tb_allocs_get(TB_SERVER).live - a0.live) / IDLE_CONNS;
	for (int i = 0; i < IDLE_CONNS; i++)
		pair_free(w, &idle[i]);

	/* Allocations per request once warm. */
	if (pair_open(w, &p, NULL) != 0 || client_drain(w, &p) != 0)
		return -1;
	for (int i = 0; i < 100; i++)
		if (exchange(w, &p) != 0)
			return -1;
	a0 = tb_allocs_get(TB_SERVER);
	for (int i = 0; i < REQ_COUNT; i++)
		if (exchange(w, &p) != 0)
			return -1;
	m->req_allocs = (double)(tb_allocs_get(TB_SERVER).count - a0.count) /
			REQ_COUNT;
	pair_free(w, &p);
	w->b->ctx_free(w->sctx);
	w->b->ctx_free(w->cctx);
	return 0;
}

/* Returns -1 when a measurement failed. */
static int
memory_row(const struct tb_backend *b, const struct tb_creds *creds)
{
	static const struct row row = { "memory", ROW_FULL,
		{ 13, TB_ECDSA_P256, TB_AES128_GCM, false }, 0 };
	struct worker w = { .b = b, .row = &row, .creds = creds };
	struct mem_figures kept, released;
	int rc = 0;

	w.c2s.buf = malloc(TB_PIPE_CAP);
	w.s2c.buf = malloc(TB_PIPE_CAP);
	if (w.c2s.buf == NULL || w.s2c.buf == NULL ||
			memory_run(&w, false, &kept) != 0 ||
			memory_run(&w, true, &released) != 0) {
		printf("%-8s (failed: see the error above)\n", b->name);
		rc = -1;
	} else {
		printf("%-8s %7.1f %7.0f %8.1f %8.1f %8.1f %8.1f %6.1f %6.1f  %s\n",
				b->name, kept.ctx_bytes / 1024.0, kept.hs_allocs,
				kept.hs_bytes / 1024, kept.hs_peak / 1024.0,
				kept.idle_bytes / 1024.0,
				released.idle_bytes / 1024.0, kept.req_allocs,
				released.req_allocs, b->release_note);
	}
	fflush(stdout);
	free(w.c2s.buf);
	free(w.s2c.buf);
	return rc;
}

/* ---- options ---- */

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: tls-bench [--rounds N] [--ms N] [--lib NAME]... [--row TEXT]\n"
		"TLS libraries in memory (no sockets): full and resumed handshakes,\n"
		"record encryption and decryption, on 1 and 2 threads; then memory\n"
		"and allocations per context, handshake, idle connection, request.\n"
		"  --rounds N   rounds per figure, the median printed (default 3, max %d)\n"
		"  --ms N       milliseconds per round and thread count (default 400)\n"
		"  --row TEXT   only the handshake and record rows whose name has TEXT\n"
		"  --lib NAME   only this library (repeatable):", MAX_ROUNDS);
	for (size_t i = 0; i < N_BACKENDS; i++)
		fprintf(f, " %s", backends[i]->name);
	fprintf(f, "\n  --help       this text\n"
		"Exit status 1 when a measurement failed (a handshake, a resumption\n"
		"that did not resume, a record), 2 for bad options.\n");
}

static long
number(const char *s, long lo, long hi, const char *opt)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "tls-bench: %s wants a number from %ld to %ld, not '%s'\n",
				opt, lo, hi, s);
		exit(2);
	}
	return v;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "ms", required_argument, NULL, 'm' },
		{ "lib", required_argument, NULL, 'l' },
		{ "row", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool chosen[N_BACKENDS] = { false }, any = false, records_header = false;
	int rounds = 3, opt, failed = 0;
	long ms = 400;
	const char *only_row = NULL;
	struct tb_creds creds;
	struct sample s1[MAX_ROUNDS], s2[MAX_ROUNDS];

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			rounds = (int)number(optarg, 1, MAX_ROUNDS, "--rounds");
			break;
		case 'm':
			ms = number(optarg, 10, 60000, "--ms");
			break;
		case 'l': {
			size_t i;

			for (i = 0; i < N_BACKENDS; i++)
				if (strcmp(optarg, backends[i]->name) == 0)
					break;
			if (i == N_BACKENDS) {
				fprintf(stderr, "tls-bench: --lib: no library '%s' in this build\n",
						optarg);
				return 2;
			}
			chosen[i] = any = true;
			break;
		}
		case 'w':
			only_row = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tls-bench: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	for (size_t i = 0; i < N_BACKENDS; i++)
		if (backends[i]->init() != 0) {
			fprintf(stderr, "tls-bench: %s: cannot initialise\n",
					backends[i]->name);
			return 1;
		}
	if (tb_creds_make(&creds) != 0) {
		fprintf(stderr, "tls-bench: cannot make the certificates\n");
		return 1;
	}

	printf("tls-bench: in memory, client and server on one thread; median of %d rounds of %ld ms\n",
			rounds, ms);
	for (size_t i = 0; i < N_BACKENDS; i++)
		if (!any || chosen[i])
			printf("  %s: %s\n", backends[i]->name, backends[i]->version());
	printf("\nhandshakes: srv us = server CPU per handshake; srv/s/core = 1e6 / srv us;\n"
		"pair/s = wall-clock handshakes of the whole pair; 2 threads: each with its\n"
		"own contexts, srv us per thread, pair/s summed, x1T = 2-thread pair/s over\n"
		"1-thread; par = CPU time of both threads over wall time (2.00: they really\n"
		"ran at once; less: the machine was busy and x1T says little); vcsw =\n"
		"voluntary context switches per 1000 operations (a thread blocked: a\n"
		"contended lock, as nothing else here sleeps)\n"
		"records: enc/dec MB/s per core from the server's and the client's CPU,\n"
		"pair MB/s wall-clock (each byte encrypted and decrypted on the same thread)\n\n");
	printf("%-8s %-23s %9s %9s %9s   %9s %9s %5s %4s %5s\n", "library",
			"handshakes", "srv us", "srv/s/core", "pair/s", "2T srv us",
			"2T pair/s", "x1T", "par", "vcsw");
	for (size_t r = 0; r < N_ROWS; r++) {
		if (only_row != NULL && strstr(rows[r].name, only_row) == NULL)
			continue;
		if (rows[r].kind == ROW_RECORDS && !records_header) {
			records_header = true;
			printf("%-8s %-23s %9s %9s %9s   %9s %9s %5s %4s %5s\n",
					"library", "records", "enc MB/s", "dec MB/s",
					"pair MB/s", "2T enc", "2T pair", "x1T", "par",
					"vcsw");
		}
		for (size_t i = 0; i < N_BACKENDS; i++) {
			struct figures one, two;
			int err = 0;

			if (any && !chosen[i])
				continue;
			for (int k = 0; err == 0 && k < rounds; k++) {
				err = run_row(backends[i], &rows[r], &creds, 1,
						(uint64_t)ms * 1000000, &s1[k]);
				if (err == 0)
					err = run_row(backends[i], &rows[r], &creds, 2,
							(uint64_t)ms * 1000000, &s2[k]);
			}
			if (err != 0) {
				print_failed(backends[i], &rows[r]);
				failed++;
				continue;
			}
			one = medians(s1, rounds);
			two = medians(s2, rounds);
			print_row(backends[i], &rows[r], &one, &two);
		}
	}

	printf("\nmemory (server side, TLS 1.3 ECDSA-P256, one thread; KB = 1024 bytes of\n"
		"malloc_usable_size): ctx = a server context with its certificate; hs = per\n"
		"full handshake (allocations, KB allocated, peak KB live); idle = an idle\n"
		"connection after its handshake and one request (kept / released buffers);\n"
		"allocs per request (100 B in, 1400 B out) once warm, kept / released\n");
	printf("%-8s %7s %7s %8s %8s %8s %8s %6s %6s  %s\n", "library", "ctx KB",
			"hs allo", "hs KB", "hs peak", "idle KB", "idle rel", "req", "req rel",
			"release");
	for (size_t i = 0; i < N_BACKENDS; i++)
		if ((!any || chosen[i]) && memory_row(backends[i], &creds) != 0)
			failed++;
	tb_creds_free(&creds);
	return failed > 0 ? 1 : 0;
}
