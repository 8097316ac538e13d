/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "http_conn.h"
#include "http_harness.h"
#include "http_static.h"

static uint8_t big[HH_BIG_SIZE];
static uint8_t body_buf[1 << 20];	/* hh_resp_next()'s bodies */

const uint8_t *
hh_big(void)
{
	return big;
}

/* The transport ------------------------------------------------------------- */

static uint32_t
t_write(void *ctx, void *t, const void *data, uint32_t len)
{
	struct hh_conn *k = t;
	uint32_t n = len < k->space ? len : k->space;

	(void)ctx;
	/* Nothing is written after close() or abort(). */
	assert_false(k->closed || k->aborted);
	if (k->out_len + n + 1 > k->out_cap) {
		k->out_cap = (k->out_len + n + 1) * 2;
		k->out = realloc(k->out, k->out_cap);
		assert_non_null(k->out);
	}
	memcpy(k->out + k->out_len, data, n);
	k->out_len += n;
	k->out[k->out_len] = '\0';
	k->space -= n;
	return n;
}

static uint32_t
t_space(void *ctx, void *t)
{
	(void)ctx;
	return ((struct hh_conn *)t)->space;
}

static void
t_close(void *ctx, void *t)
{
	(void)ctx;
	((struct hh_conn *)t)->closed = true;
}

/* http_conn_closed() follows once the upcall under way has returned:
 * settle(). */
static void
t_abort(void *ctx, void *t)
{
	(void)ctx;
	((struct hh_conn *)t)->aborted = true;
}

static void
t_output(void *ctx, void *t)
{
	struct hh_conn *k = t;

	(void)ctx;
	k->pushed = k->out_len;
}

static void
t_rcv_space(void *ctx, void *t, uint32_t bytes)
{
	(void)ctx;
	((struct hh_conn *)t)->rcv_space = bytes;
}

static uint64_t
t_now_ms(void *ctx)
{
	return ((struct hh *)ctx)->now;
}

static uint32_t
t_rtt_us(void *ctx, void *t)
{
	(void)t;
	return ((struct hh *)ctx)->rtt_us;
}

/* Deadlines on a wheel of the virtual clock, as lib/net's (hh_advance()):
 * the server's, one server at a time. */
static struct timer_wheel wheel;

static void
t_timer_arm(void *ctx, struct net_timer *tm, uint64_t at_ms)
{
	(void)ctx;
	tw_arm(&wheel, &tm->tw, at_ms);
}

static void
t_timer_cancel(void *ctx, struct net_timer *tm)
{
	(void)ctx;
	tw_cancel(&wheel, &tm->tw);
}

static void
timer_fire(struct tw_timer *t, void *ctx)
{
	struct net_timer *tm = container_of(t, struct net_timer, tw);

	(void)ctx;
	tm->fire(tm);
}

static const struct http_transport transport = {
	.write = t_write,
	.space = t_space,
	.close = t_close,
	.abort = t_abort,
	.output = t_output,
	.rcv_space = t_rcv_space,
	.now_ms = t_now_ms,
	.timer_arm = t_timer_arm,
	.timer_cancel = t_timer_cancel,
	.rtt_us = t_rtt_us,
};

static void
settle(struct hh *h)
{
	unsigned int i;

	for (i = 0; i < HH_CONNS; i++)
		if (h->conns[i].aborted && h->conns[i].c != NULL)
			hh_finish(&h->conns[i]);
}

/* The mini executor ----------------------------------------------------------- */

static void
run_handler(struct hh *h, struct hh_task *t)
{
	t->req.may_block = false;
	if (t->rt->handler(&t->req, t->rt->ctx) != EWYK_ANSWERED ||
			t->req.ans.kind == HTTP_BODY_UNSET)
		http_answer_text(&t->req.ans, 500, "500 no answer\n");
	t->state = HH_GIVEN;
	h->dispatched++;
}

static enum ewyk_result echo_handler(struct ewyk_request *q, void *ctx);
static int echo_dispatch(struct hh *h, struct hh_task *t,
		const struct http_head *r, struct http_answer **ans);

static int
dispatch(void *ctx, const struct http_route *rt, const struct http_head *r,
		int version, struct http_origin o, struct http_answer **ans)
{
	struct hh *h = ctx;
	struct hh_task *t = NULL;
	unsigned int i;

	for (i = 0; i < HH_TASKS && t == NULL; i++)
		if (h->tasks[i].state == HH_FREE)
			t = &h->tasks[i];
	if (t == NULL)
		return 503;
	/* The request is filled as ewykd fills its tasks: not zeroed first. */
	memset(t, 0, offsetof(struct hh_task, req));
	if (http_req_fill(&t->req, r, rt, version) != 0)
		return 431;
	t->rt = rt;
	t->o = o;
	t->src_off = 0;
	if (rt->flags & HTTP_ROUTE_INLINE) {
		run_handler(h, t);
		*ans = &t->req.ans;
		return HTTP_DISPATCH_ANSWERED;
	}
	if (rt->handler == echo_handler)
		return echo_dispatch(h, t, r, ans);
	t->state = HH_QUEUED;
	h->queue[h->nqueued++] = t;
	for (i = 0; i < HH_CONNS; i++)
		if (h->conns[i].c != NULL && h->conns[i].c->index == o.index)
			h->conns[i].queued++;
	return HTTP_DISPATCH_TAKEN;
}

static void
released(void *ctx, struct http_answer *a)
{
	struct hh_task *t = (struct hh_task *)((char *)a -
			offsetof(struct hh_task, req.ans));

	assert_int_equal(t->state, HH_GIVEN);	/* released once */
	http_req_release_body(&t->req);	/* as ewykd's task_free() */
	t->state = HH_FREE;
	((struct hh *)ctx)->released++;
}

bool
hh_run(struct hh *h, unsigned int i)
{
	struct hh_task *t;

	assert_true(i < h->nqueued);
	t = h->queue[i];
	memmove(&h->queue[i], &h->queue[i + 1],
			(h->nqueued - i - 1) * sizeof(h->queue[0]));
	h->nqueued--;
	run_handler(h, t);
	if (!http_server_answer(h->srv, t->o, &t->req.ans)) {
		/* As ewykd's complete(): a stale answer goes back here. */
		h->stale++;
		http_answer_release(&t->req.ans);
		released(h, &t->req.ans);
		return false;
	}
	settle(h);
	return true;
}

/* Test routes ------------------------------------------------------------- */

/* "X-Seq": where the answer goes, the HTTP/2 stream or the HTTP/1.1
 * pipeline place, so that a peer can tell which request it answers. */
static void
add_seq(struct ewyk_request *q)
{
	const struct hh_task *t = (const struct hh_task *)((char *)q -
			offsetof(struct hh_task, req));
	char v[16];

	snprintf(v, sizeof(v), "%u", t->o.stream != 0 ? t->o.stream : t->o.seq);
	assert_int_equal(ewyk_respond_header(q, "X-Seq", v), 0);
}

static enum ewyk_result
q_handler(struct ewyk_request *q, void *ctx)
{
	struct ewyk_str p = ewyk_request_path(q);
	char b[256];
	int n = snprintf(b, sizeof(b), "q %.*s\n", (int)p.len, p.p);

	(void)ctx;
	if (n >= (int)sizeof(b))	/* a long path: its answer is cut */
		n = (int)sizeof(b) - 1;
	add_seq(q);
	return ewyk_respond_copy(q, 200, "text/plain", b, (size_t)n) == 0 ?
		EWYK_ANSWERED : EWYK_DEFER;
}

static ssize_t
src_read(void *arg, void *buf, size_t cap)
{
	struct hh_task *t = arg;
	size_t n = HH_BIG_SIZE - t->src_off;

	n = n < cap ? n : cap;
	memcpy(buf, big + t->src_off, n);
	t->src_off += n;
	return (ssize_t)n;
}

static enum ewyk_result
stream_handler(struct ewyk_request *q, void *ctx)
{
	struct ewyk_source src = {
		.read = src_read,
		.arg = (char *)q - offsetof(struct hh_task, req),
		.length = HH_BIG_SIZE,
	};

	(void)ctx;
	add_seq(q);
	return ewyk_respond_stream(q, 200, "application/octet-stream",
			&src) == 0 ? EWYK_ANSWERED : EWYK_DEFER;
}

/* /sink/read...: first reads (and drops) what is at hand of the body, so
 * that a fuzzer's conversations read bodies too. */
static enum ewyk_result
sink_handler(struct ewyk_request *q, void *ctx)
{
	const struct hh_task *t = (const struct hh_task *)((char *)q -
			offsetof(struct hh_task, req));
	struct ewyk_str p = ewyk_request_path(q);
	char drop[4096];

	if (p.len >= 10 && memcmp(p.p, "/sink/read", 10) == 0)
		while (http_server_body_read(((struct hh *)ctx)->srv, t->o, drop,
				sizeof(drop)) > 0)
			;
	add_seq(q);
	return ewyk_respond_copy(q, 200, "text/plain", "sink\n", 5) == 0 ?
		EWYK_ANSWERED : EWYK_DEFER;
}

/* /echo ------------------------------------------------------------------ */

/* Never run: echo_dispatch() and the body_ready hook answer for it. */
static enum ewyk_result
echo_handler(struct ewyk_request *q, void *ctx)
{
	(void)q;
	(void)ctx;
	return EWYK_DEFER;
}

/* The answer's body: the first read's bytes, then what the connection
 * has of the request body, as it comes (HTTP_SOURCE_AGAIN: body_ready
 * resumes it). */
static ssize_t
echo_read(void *arg, void *buf, size_t cap)
{
	struct hh_task *t = arg;
	size_t n = t->held < cap ? t->held : cap;

	if (n > 0) {
		memcpy(buf, t->hold + t->held_off, n);
		t->held_off += (uint32_t)n;
		t->held -= (uint32_t)n;
		return (ssize_t)n;
	}
	return http_server_body_read(((struct hh *)t->rt->ctx)->srv, t->o, buf,
			cap);
}

/* 200 with the body streamed back, or 400 for one broken (n < 0). */
static void
echo_answer(struct hh *h, struct hh_task *t, long n)
{
	struct ewyk_source src = { .read = echo_read, .arg = t,
		.length = t->echo_len };

	t->held = n > 0 ? (uint32_t)n : 0;
	t->held_off = 0;
	if (n < 0)
		http_answer_error(&t->req.ans, 400, NULL);
	else
		assert_int_equal(ewyk_respond_stream(&t->req, 200,
				"application/octet-stream", &src), 0);
	t->state = HH_GIVEN;
	h->dispatched++;
}

static int
echo_dispatch(struct hh *h, struct hh_task *t, const struct http_head *r,
		struct http_answer **ans)
{
	t->echo_len = r->chunked ? -1 : r->content_length > 0 ?
		r->content_length : 0;
	if (!r->chunked && r->content_length <= 0) {
		echo_answer(h, t, 0);	/* no body: nothing to wait for */
		*ans = &t->req.ans;
		return HTTP_DISPATCH_ANSWERED;
	}
	t->state = HH_BODY;
	return HTTP_DISPATCH_TAKEN;
}

/* The answer of an /echo waiting for its body: once the body has begun
 * (or ended, or broke), so that a body broken from its start is refused
 * whole, never cut. */
static void
echo_begin(struct hh *h, struct hh_task *t)
{
	long n = http_server_body_read(h->srv, t->o, t->hold, sizeof(t->hold));

	if (n == HTTP_SOURCE_AGAIN)
		return;
	echo_answer(h, t, n);
	if (!http_server_answer(h->srv, t->o, &t->req.ans)) {
		h->stale++;
		http_answer_release(&t->req.ans);
		released(h, &t->req.ans);
	}
}

static bool
same_origin(struct http_origin a, struct http_origin b)
{
	return a.index == b.index && a.gen == b.gen && a.stream == b.stream &&
		a.seq == b.seq;
}

/* More of a body is at hand: an /echo waiting for it answers, or one
 * streaming it reads on. */
static void
body_ready(void *ctx, struct http_origin o)
{
	struct hh *h = ctx;
	unsigned int i;

	h->body_ready++;
	h->ready_o = o;
	for (i = 0; i < HH_TASKS; i++) {
		struct hh_task *t = &h->tasks[i];

		if (t->state == HH_FREE || t->rt->handler != echo_handler ||
				!same_origin(t->o, o))
			continue;
		if (t->state == HH_BODY)
			echo_begin(h, t);
		else if (t->state == HH_GIVEN)
			http_server_resume(h->srv, o);
		return;
	}
}

/* Set-up ------------------------------------------------------------------ */

/* Written in this order, each a second older than the next (siblings
 * are made after their file); NULL: /big.bin. */
static const char *const files[][2] = {
	{ "index.html", "<h1>ewyk</h1>\n" },
	{ "a.txt", HH_A_TXT },
	{ "big.bin", NULL },
	{ "sub/index.html", "sub\n" },
	{ "enc.txt", HH_ENC_TXT },
	{ "enc.txt.gz", HH_ENC_GZ },
	{ "enc.txt.br", HH_ENC_BR },
	{ "gz-only.txt", "plain\n" },
	{ "gz-only.txt.gz", "gzip\n" },
};
static const char *const cache_rules[] = { "/enc.txt=public, max-age=60" };

/* The www every server of the process serves, read-only: written to a
 * temporary directory and loaded once (a fuzz target makes thousands of
 * servers), removed at exit. */
static struct www shared_www;
static char shared_dir[64];
static struct hh_task *tasks;
static bool live;		/* a server exists */

static void
remove_www(void)
{
	char path[128];
	size_t i;

	www_free(&shared_www);
	free(tasks);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", shared_dir, files[i][0]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/sub", shared_dir);
	rmdir(path);
	rmdir(shared_dir);
}

static void
write_file(const char *dir, const char *name, const void *data, size_t len,
		time_t mtime)
{
	struct timespec times[2] = { { mtime, 0 }, { mtime, 0 } };
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
	assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
}

struct hh *
hh_new(uint32_t header_timeout_ms, uint32_t keepalive_timeout_ms)
{
	return hh_new_limits(header_timeout_ms, keepalive_timeout_ms, 0, 0);
}

static struct hh *new_server(uint32_t header_timeout_ms,
		uint32_t keepalive_timeout_ms, uint32_t max_head_bytes,
		uint32_t max_target, uint32_t idle_release_ms);

struct hh *
hh_new_limits(uint32_t header_timeout_ms, uint32_t keepalive_timeout_ms,
		uint32_t max_head_bytes, uint32_t max_target)
{
	return new_server(header_timeout_ms, keepalive_timeout_ms,
			max_head_bytes, max_target, 0);
}

struct hh *
hh_new_idle_release(uint32_t keepalive_timeout_ms, uint32_t idle_release_ms)
{
	return new_server(0, keepalive_timeout_ms, 0, 0, idle_release_ms);
}

static struct hh *
new_server(uint32_t header_timeout_ms, uint32_t keepalive_timeout_ms,
		uint32_t max_head_bytes, uint32_t max_target,
		uint32_t idle_release_ms)
{
	static const struct ewyk_route q = {
		.path = "/q/", .match = EWYK_MATCH_PREFIX,
		.methods = EWYK_METHOD_ANY, .type = EWYK_HANDLER_NON_BLOCKING,
		.handler = q_handler,
	};
	static const struct ewyk_route stream = {
		.path = "/stream/", .match = EWYK_MATCH_PREFIX,
		.methods = EWYK_METHOD_GET, .type = EWYK_HANDLER_NON_BLOCKING,
		.handler = stream_handler,
	};
	struct hh *h = calloc(1, sizeof(*h));
	const struct ewyk_route sink = {
		.path = "/sink/", .match = EWYK_MATCH_PREFIX,
		.methods = EWYK_METHOD_ANY, .type = EWYK_HANDLER_NON_BLOCKING,
		.handler = sink_handler, .ctx = h,
	};
	const struct ewyk_route echo = {
		.path = "/echo", .match = EWYK_MATCH_EXACT,
		.methods = EWYK_METHOD_POST | EWYK_METHOD_PUT,
		.type = EWYK_HANDLER_NON_BLOCKING, .handler = echo_handler,
		.ctx = h,
	};
	struct www_conf wc = {
		.max_bytes = 1 << 24,
		.cache_control = cache_rules,
		.n_cache_control = 1,
	};
	struct http_server_conf conf;
	char err[256];
	size_t i;

	assert_non_null(h);
	/* One server at a time: the tasks are the process's (9 MB). */
	assert_false(live);
	live = true;
	if (tasks == NULL)
		tasks = calloc(HH_TASKS, sizeof(*tasks));
	assert_non_null(tasks);
	h->tasks = tasks;
	if (shared_dir[0] == '\0') {
		for (i = 0; i < HH_BIG_SIZE; i++)
			big[i] = (uint8_t)(i * 31 + (i >> 9));
		snprintf(shared_dir, sizeof(shared_dir), "/tmp/ewyk_hh_XXXXXX");
		assert_non_null(mkdtemp(shared_dir));
		snprintf(err, sizeof(err), "%s/sub", shared_dir);
		assert_int_equal(mkdir(err, 0755), 0);
		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
			write_file(shared_dir, files[i][0], files[i][1] ?
					files[i][1] : (const char *)big,
					files[i][1] ? strlen(files[i][1]) :
					HH_BIG_SIZE, HH_MTIME + (time_t)i);
		wc.root = shared_dir;
		assert_int_equal(www_load(&shared_www, &wc, err, sizeof(err)),
				0);
		atexit(remove_www);
	}
	assert_int_equal(ewyk_route_add(&h->router, &q), 0);
	assert_int_equal(ewyk_route_add(&h->router, &stream), 0);
	assert_int_equal(http_route_add(&h->router, &sink,
			HTTP_ROUTE_BODY_STREAM), 0);
	h->statics.www = &shared_www;
	assert_int_equal(http_static_route_add(&h->router, &h->statics), 0);
	assert_int_equal(http_route_add(&h->router, &echo,
			HTTP_ROUTE_BODY_STREAM), 0);
	h->now = 1000;
	tw_init(&wheel, h->now);
	conf = (struct http_server_conf){
		.transport = &transport,
		.transport_ctx = h,
		.router = &h->router,
		.dispatch = dispatch,
		.released = released,
		.body_ready = body_ready,
		.dispatch_ctx = h,
		.stats = &h->stats,
		.max_conns = HH_CONNS,
		.header_timeout_ms = header_timeout_ms,
		.keepalive_timeout_ms = keepalive_timeout_ms,
		.max_head_bytes = max_head_bytes,
		.max_target = max_target,
		.idle_release_ms = idle_release_ms,
	};
	h->srv = http_server_create(&conf);
	assert_non_null(h->srv);
	return h;
}

void
hh_h2_windows(struct hh *h, uint32_t window_max, uint64_t budget,
		uint32_t rtt_us)
{
	h->srv->conf.h2_window_max = window_max;
	h->srv->conf.h2_window_budget = budget;
	h->rtt_us = rtt_us;
}

void
hh_free(struct hh *h)
{
	unsigned int i;

	for (i = 0; i < HH_CONNS; i++) {
		if (h->conns[i].c != NULL)
			hh_finish(&h->conns[i]);
		free(h->conns[i].out);
	}
	while (h->nqueued > 0)
		assert_false(hh_run(h, 0));
	/* An /echo whose connection went without a word (a reset). */
	for (i = 0; i < HH_TASKS; i++)
		if (h->tasks[i].state == HH_BODY)
			echo_begin(h, &h->tasks[i]);
	/* Every answer made went back, once, and every body buffer. */
	assert_int_equal(h->released, h->dispatched);
	assert_int_equal(h->stats.body_slots_in_use, 0);
	for (i = 0; i < HH_TASKS; i++)
		assert_int_equal(h->tasks[i].state, HH_FREE);
	/* Every session gave back what its window grew by. */
	assert_int_equal(h->srv->h2_window_grown, 0);
	http_server_destroy(h->srv);
	live = false;
	free(h);
}

int
hh_setup(void **state)
{
	*state = hh_new(0, 0);
	return 0;
}

int
hh_teardown(void **state)
{
	hh_free(*state);
	return 0;
}

/* Connections ------------------------------------------------------------- */

struct hh_conn *
hh_connect(struct hh *h)
{
	unsigned int i;

	for (i = 0; i < HH_CONNS; i++) {
		struct hh_conn *k = &h->conns[i];

		if (k->c != NULL)
			continue;
		free(k->out);
		memset(k, 0, sizeof(*k));
		k->h = h;
		k->space = HH_UNLIMITED;
		k->c = http_conn_accept(h->srv, k);
		assert_non_null(k->c);
		return k;
	}
	fail_msg("no connection free");
	return NULL;
}

void
hh_send(struct hh_conn *k, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len > 0 && k->c != NULL) {
		uint32_t n = http_conn_recv(k->c, p, (uint32_t)len);

		settle(k->h);
		if (n == 0)
			break;
		p += n;
		len -= n;
	}
}

void
hh_peer_close(struct hh_conn *k)
{
	if (k->c != NULL)
		http_conn_peer_closed(k->c);
	settle(k->h);
}

void
hh_sends(struct hh_conn *k, const char *s)
{
	hh_send(k, s, strlen(s));
}

void
hh_give_space(struct hh_conn *k, uint32_t n)
{
	k->space += n;
	if (k->c != NULL)
		http_conn_writable(k->c);
	settle(k->h);
}

void
hh_finish(struct hh_conn *k)
{
	struct http_conn *c = k->c;

	k->c = NULL;
	http_conn_closed(c);
}

const char *
hh_take(struct hh_conn *k, uint32_t *len)
{
	const char *p = (const char *)k->out + k->rd;

	*len = k->out_len - k->rd;
	k->rd = k->out_len;
	return *len > 0 ? p : "";
}

void
hh_advance(struct hh *h, uint64_t ms)
{
	h->now += ms;
	tw_advance(&wheel, h->now, timer_fire, h);
	settle(h);
}

/* HTTP/1.1 responses ------------------------------------------------------- */

const char *
hh_resp_header(const struct hh_resp *r, const char *name, char *val,
		size_t cap)
{
	size_t nl = strlen(name);
	const char *l;

	for (l = strstr(r->head, "\r\n"); l != NULL; l = strstr(l, "\r\n")) {
		const char *e;

		l += 2;
		if (strncasecmp(l, name, nl) != 0 || l[nl] != ':')
			continue;
		l += nl + 1;
		while (*l == ' ')
			l++;
		e = strstr(l, "\r\n");
		snprintf(val, cap, "%.*s", (int)(e - l), l);
		return val;
	}
	return NULL;
}

/* Decodes a chunked body at p; the bytes it took, 0 while incomplete. */
static size_t
dechunk(const char *p, size_t avail, size_t *out_len)
{
	size_t at = 0;

	*out_len = 0;
	for (;;) {
		const char *eol = memmem(p + at, avail - at, "\r\n", 2);
		unsigned long n;

		if (eol == NULL)
			return 0;
		n = strtoul(p + at, NULL, 16);
		at = (size_t)(eol - p) + 2;
		if (avail - at < n + 2)
			return 0;
		if (n == 0)
			return at + 2;	/* no trailers */
		assert_true(*out_len + n <= sizeof(body_buf));
		memcpy(body_buf + *out_len, p + at, n);
		*out_len += n;
		at += n + 2;
	}
}

bool
hh_resp_next(struct hh_conn *k, struct hh_resp *r, bool head_only)
{
	const char *p = (const char *)k->out + k->rd;
	size_t avail = k->out_len - k->rd, hl, used;
	const char *end = memmem(p, avail, "\r\n\r\n", 4);
	char v[64];

	if (end == NULL)
		return false;
	hl = (size_t)(end - p) + 4;
	assert_true(hl < sizeof(r->head));
	memcpy(r->head, p, hl);
	r->head[hl] = '\0';
	assert_memory_equal(p, "HTTP/1.1 ", 9);
	r->status = atoi(p + 9);
	r->body = body_buf;
	r->body_len = 0;
	r->chunked = hh_resp_header(r, "Transfer-Encoding", v, sizeof(v)) &&
		strcmp(v, "chunked") == 0;
	used = hl;
	if (head_only || r->status < 200 || r->status == 204 ||
			r->status == 304) {
		/* no body */
	} else if (r->chunked) {
		size_t n = dechunk(p + hl, avail - hl, &r->body_len);

		if (n == 0)
			return false;
		used += n;
	} else if (hh_resp_header(r, "Content-Length", v, sizeof(v))) {
		r->body_len = strtoull(v, NULL, 10);
		if (avail - hl < r->body_len)
			return false;
		r->body = (const uint8_t *)p + hl;
		used += r->body_len;
	} else {
		return false;	/* no framing: the close ends it */
	}
	k->rd += (uint32_t)used;
	return true;
}

/* HTTP/2 client ----------------------------------------------------------- */

struct hh_stream *
hh_h2_stream(struct hh_h2 *c, int32_t id)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		if (c->st[i].id == id)
			return &c->st[i];
	assert_true(c->n < HH_H2_STREAMS);
	c->st[c->n].id = id;
	return &c->st[c->n++];
}

static int
on_header(nghttp2_session *ng, const nghttp2_frame *frame, const uint8_t *name,
		size_t namelen, const uint8_t *value, size_t valuelen,
		uint8_t flags, void *user)
{
	struct hh_stream *st = hh_h2_stream(user, frame->hd.stream_id);
	size_t at = strlen(st->headers);

	(void)ng;
	(void)flags;
	if (namelen == 7 && memcmp(name, ":status", 7) == 0)
		st->status = atoi((const char *)value);
	else
		snprintf(st->headers + at, sizeof(st->headers) - at,
				"%.*s: %.*s\n", (int)namelen, name,
				(int)valuelen, value);
	return 0;
}

static int
on_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data,
		size_t len, void *user)
{
	struct hh_stream *st = hh_h2_stream(user, id);

	(void)ng;
	(void)flags;
	if (st->len + len > st->cap) {
		st->cap = (st->len + len) * 2;
		st->body = realloc(st->body, st->cap);
		assert_non_null(st->body);
	}
	memcpy(st->body + st->len, data, len);
	st->len += len;
	return 0;
}

static int
on_close(nghttp2_session *ng, int32_t id, uint32_t error, void *user)
{
	struct hh_stream *st = hh_h2_stream(user, id);

	(void)ng;
	st->closed = true;
	st->error = error;
	return 0;
}

static int
on_frame(nghttp2_session *ng, const nghttp2_frame *frame, void *user)
{
	struct hh_h2 *c = user;

	(void)ng;
	if (frame->hd.type == NGHTTP2_GOAWAY) {
		c->goaway = true;
		c->goaway_error = frame->goaway.error_code;
		c->goaway_last = frame->goaway.last_stream_id;
	} else if (frame->hd.type == NGHTTP2_RST_STREAM) {
		c->rst_recv++;
		c->last_rst_error = frame->rst_stream.error_code;
	}
	return 0;
}

static ssize_t
read_req_body(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
		uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct hh_stream *st = hh_h2_stream(user, id);
	size_t can = st->req_left - st->req_held;
	size_t n = can < length ? can : length;

	(void)ng;
	(void)src;
	if (n == 0)
		return NGHTTP2_ERR_DEFERRED;	/* stalled */
	memcpy(buf, st->req_body, n);
	st->req_body += n;
	st->req_left -= n;
	if (st->req_left == 0)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

struct hh_h2 *
hh_h2_new(struct hh_conn *k, const nghttp2_settings_entry *iv, size_t niv,
		unsigned int flags)
{
	struct hh_h2 *c = calloc(1, sizeof(*c));
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;

	assert_non_null(c);
	c->k = k;
	assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
	assert_int_equal(nghttp2_option_new(&opt), 0);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
	if (flags & HH_H2_MANUAL_WINDOW)
		nghttp2_option_set_no_auto_window_update(opt, 1);
	if (flags & HH_H2_NO_PEER_LIMIT)
		nghttp2_option_set_peer_max_concurrent_streams(opt, 1000);
	assert_int_equal(nghttp2_session_client_new2(&c->ng, cb, c, opt), 0);
	nghttp2_session_callbacks_del(cb);
	nghttp2_option_del(opt);
	assert_int_equal(nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, iv,
			niv), 0);
	return c;
}

struct hh_h2 *
hh_h2_upgrade(struct hh_conn *k, const char *path)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		"0123456789-_";
	nghttp2_settings_entry iv = { NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100 };
	uint8_t payload[16];
	char settings[32], req[256];
	ssize_t n = nghttp2_pack_settings_payload(payload, sizeof(payload), &iv, 1);
	size_t o = 0;
	ssize_t i;
	struct hh_resp r;
	struct hh_h2 *c;

	assert_int_equal(n, 6);
	for (i = 0; i < n; i += 3) {	/* base64url, 6 bytes: no padding */
		uint32_t v = (uint32_t)payload[i] << 16 | payload[i + 1] << 8 |
			payload[i + 2];

		settings[o++] = b64[v >> 18 & 63];
		settings[o++] = b64[v >> 12 & 63];
		settings[o++] = b64[v >> 6 & 63];
		settings[o++] = b64[v & 63];
	}
	settings[o] = '\0';
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: h\r\n"
			"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
			"HTTP2-Settings: %s\r\n\r\n", path, settings);
	hh_sends(k, req);
	assert_true(hh_resp_next(k, &r, false));
	assert_string_equal(r.head, "HTTP/1.1 101 Switching Protocols\r\n"
			"Connection: Upgrade\r\nUpgrade: h2c\r\n\r\n");
	c = hh_h2_new(k, &iv, 1, 0);
	assert_int_equal(nghttp2_session_upgrade2(c->ng, payload, (size_t)n, 0,
			NULL), 0);
	return c;
}

void
hh_h2_free(struct hh_h2 *c)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		free(c->st[i].body);
	nghttp2_session_del(c->ng);
	free(c);
}

int32_t
hh_h2_request(struct hh_h2 *c, const char *method, const char *path,
		const void *body, size_t len)
{
	return hh_h2_request_with(c, method, path, NULL, body, len);
}

int32_t
hh_h2_request_with(struct hh_h2 *c, const char *method, const char *path,
		const char *const *fields, const void *body, size_t len)
{
	nghttp2_nv nv[4 + HH_H2_FIELDS_MAX] = {
		{ (uint8_t *)":method", (uint8_t *)(uintptr_t)method, 7,
			strlen(method), NGHTTP2_NV_FLAG_NONE },
		{ (uint8_t *)":scheme", (uint8_t *)"http", 7, 4,
			NGHTTP2_NV_FLAG_NONE },
		{ (uint8_t *)":authority", (uint8_t *)"h", 10, 1,
			NGHTTP2_NV_FLAG_NONE },
		{ (uint8_t *)":path", (uint8_t *)(uintptr_t)path, 5,
			strlen(path), NGHTTP2_NV_FLAG_NONE },
	};
	nghttp2_data_provider dp = { .read_callback = read_req_body };
	size_t n = 4;
	int32_t id;
	struct hh_stream *st;

	for (; fields != NULL && fields[0] != NULL; fields += 2, n++) {
		assert_true(n < 4 + HH_H2_FIELDS_MAX);
		nv[n] = (nghttp2_nv){ (uint8_t *)(uintptr_t)fields[0],
			(uint8_t *)(uintptr_t)fields[1], strlen(fields[0]),
			strlen(fields[1]), NGHTTP2_NV_FLAG_NONE };
	}
	id = nghttp2_submit_request(c->ng, NULL, nv, n,
			body != NULL ? &dp : NULL, NULL);

	assert_true(id > 0);
	st = hh_h2_stream(c, id);
	st->req_body = body;
	st->req_left = len;
	return id;
}

void
hh_h2_pump(struct hh_h2 *c)
{
	for (;;) {
		bool moved = false;
		const uint8_t *d;
		const char *o;
		uint32_t len;
		ssize_t n;

		while ((n = nghttp2_session_mem_send(c->ng, &d)) > 0) {
			hh_send(c->k, d, (size_t)n);
			moved = true;
		}
		assert_true(n == 0);
		o = hh_take(c->k, &len);
		if (len > 0) {
			assert_int_equal(nghttp2_session_mem_recv(c->ng,
					(const uint8_t *)o, len), len);
			moved = true;
		}
		if (!moved)
			return;
	}
}
