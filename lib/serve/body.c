/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streamed bodies in blocking style: a request body read as it arrives
 * (ewyk_body_read()), and an answer begun while the handler runs and
 * written as the client takes it (ewyk_respond_begin(),
 * ewyk_body_write()). Every call waits (wait.c); the shard's owner does
 * the work in the wait's arm and in the connection's callbacks, so the
 * handler never touches connection state.
 *
 * Also the shard's body watch: requests whose body is read as it arrives
 * (a handler's read, or a fetch forwarding it upstream), told by the HTTP
 * server's body_ready hook when more of it is at hand.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>

#include "body.h"
#include "ewyk_quic.h"
#include "h3.h"
#include "wait.h"

/* The watch ------------------------------------------------------------ */

/* A list per connection slot (an origin's index is below max_conns), then
 * one per QUIC connection slot: a body_ready walks only its own
 * connection's readers. */
int
body_watch_init(struct serve *sv, uint32_t max_conns)
{
	sv->body_watch_n = max_conns;
	sv->body_watch = calloc(2 * (size_t)max_conns,
			sizeof(*sv->body_watch));
	return sv->body_watch != NULL ? 0 : -1;
}

void
body_watch_fini(struct serve *sv)
{
	free(sv->body_watch);
	sv->body_watch = NULL;
}

static struct ilink **
watch_of(struct serve *sv, struct http_origin o)
{
	uint32_t i = o.index & ~QUIC_ORIGIN;

	if (i >= sv->body_watch_n)
		return NULL;
	return &sv->body_watch[quic_origin(o) ? sv->body_watch_n + i : i];
}

void
body_watch_add(struct serve_task *t, body_watch_fn fn)
{
	t->body.fn = fn;
	ilist_push(watch_of(t->sv, t->origin), &t->body.link);
}

void
body_watch_remove(struct serve_task *t)
{
	ilist_remove(&t->body.link);
}

void
body_watch_ready(void *ctx, struct http_origin o)
{
	struct serve *sv = ctx;
	struct ilink **head = watch_of(sv, o), *l;

	for (l = head != NULL ? *head : NULL; l != NULL; l = l->next) {
		struct serve_task *t = container_of(l, struct serve_task,
				body.link);

		if (t->origin.index == o.index && t->origin.gen == o.gen &&
				t->origin.stream == o.stream &&
				t->origin.seq == o.seq) {
			t->body.fn(t);
			return;
		}
	}
}

void
body_reset(struct serve_task *t, const struct http_head *r)
{
	t->body.len = r->chunked ? -1 : r->content_length > 0 ?
		r->content_length : unlikely(r->tunnel) ? TASK_BODY_TUNNEL : 0;
	t->body.over = t->body.len == 0;
	t->body.link = (struct ilink){ NULL, NULL };
	t->early = (struct early_answer){ .length = -1 };
}

/* Reading the request body -------------------------------------------- */

struct body_read_wait {
	struct ewyk_wait w;
	void *buf;
	size_t cap;
	long n;
};

/* On the owner: a read that found something (or the end) ends the wait. */
static bool
try_read(struct serve_task *t, struct body_read_wait *rw)
{
	long n = serve_body_read(t->sv, t->origin, rw->buf, rw->cap);

	if (n == HTTP_SOURCE_AGAIN)
		return false;
	rw->n = n;
	ewyk_wait_wake(&rw->w);
	return true;
}

static void
read_ready(struct serve_task *t)
{
	struct body_read_wait *rw = container_of(t->wait.w,
			struct body_read_wait, w);

	if (try_read(t, rw))
		body_watch_remove(t);
}

static void
read_arm(struct ewyk_wait *w)
{
	struct serve_task *t = wait_task(w);

	if (!try_read(t, container_of(w, struct body_read_wait, w)))
		body_watch_add(t, read_ready);
}

static void
read_disarm(struct ewyk_wait *w)
{
	body_watch_remove(wait_task(w));
}

ssize_t
ewyk_body_read(struct ewyk_request *req, void *buf, size_t cap,
		uint32_t timeout_ms)
{
	struct serve_task *t = task_of(req);
	struct body_read_wait rw = {
		.w = { .arm = read_arm, .disarm = read_disarm },
		.buf = buf, .cap = cap,
	};
	int rc;

	if (cap == 0 || !(t->route->flags & HTTP_ROUTE_BODY_STREAM))
		return -EINVAL;
	if (!wait_may_park(t))
		return -EPERM;
	/* Past its end the connection may be reading the next request's. */
	if (t->body.over)
		return 0;
	rc = ewyk_wait_park(req, &rw.w, timeout_ms);
	if (rc != 0)
		return rc;
	t->body.over = rw.n == 0;
	return rw.n >= 0 ? rw.n : -EIO;
}

/* Writing the answer body --------------------------------------------- */

/* The connection pulls the body (ewyk_source.read, on the owner): the
 * waiting writer's bytes, "again" while the handler runs, the end once it
 * returned; the writer goes on when all its bytes are taken. */
static ssize_t
early_read(void *arg, void *buf, size_t cap)
{
	struct serve_task *t = arg;
	struct early_answer *e = &t->early;
	size_t n;

	if (!e->pending) {
		if (!e->handler_over)
			return HTTP_SOURCE_AGAIN;
		return e->failed != 0 || (e->length >= 0 &&
				e->written < e->length) ? -1 : 0;
	}
	n = RTE_MIN(cap, e->len - e->off);
	memcpy(buf, e->buf + e->off, n);
	e->off += n;
	e->written += (int64_t)n;
	if (e->off == e->len) {
		e->pending = false;
		ewyk_wait_wake(t->wait.w);
	} else if (n > 0) {
		/* The client takes bytes: the write's time runs again. */
		wait_renew(t->wait.w);
	}
	return (ssize_t)n;
}

static void begin_arm(struct ewyk_wait *w);

/* The answer is over for the connection (written, cut, or the client
 * gone): a wait still pending will not be served. The begin's own ends
 * in begin_arm (a HEAD's answer may be over inside it). */
static void
early_done(void *arg)
{
	struct serve_task *t = arg;

	t->early.pending = false;
	if (early_answer_whole(&t->early))
		return;
	if (t->wait.state == WAIT_ARMED && t->wait.w->arm != begin_arm)
		wait_end(t->wait.w, -ECANCELED);
}

static void
begin_arm(struct ewyk_wait *w)
{
	struct serve_task *t = wait_task(w);
	struct serve *sv = t->sv;

	t->early.begun = true;
	if (serve_answer(sv, t->origin, &t->req.ans)) {
		ewyk_wait_wake(w);
		return;
	}
	/* Gone already: kept by nobody, let go here. */
	sv->st.stale++;
	t->early.released = true;
	http_answer_release(&t->req.ans);
	wait_end(w, -ECANCELED);
}

int
ewyk_respond_begin(struct ewyk_request *req, int status, const char *ctype,
		int64_t length)
{
	struct serve_task *t = task_of(req);
	struct early_answer *e = &t->early;
	const struct ewyk_source src = { early_read, early_done, t,
		length >= 0 ? length : -1 };
	struct ewyk_wait w = { .arm = begin_arm };
	int rc;

	if (!wait_may_park(t))
		return -EPERM;
	if (t->abandoned)
		return -ECANCELED;
	rc = ewyk_respond_stream(req, status, ctype, &src);
	if (rc != 0)
		return rc;
	/* The connection may let the answer go (and clear it) while the
	 * handler runs: no second answer may take its place. */
	req->committed = true;
	e->length = src.length;
	e->discard = req->method == HTTP_HEAD || status == 204 ||
		status == 304;
	return ewyk_wait_park(req, &w, EWYK_WAIT_FOREVER);
}

static void
write_arm(struct ewyk_wait *w)
{
	struct serve_task *t = wait_task(w);

	if (t->early.released) {
		wait_end(w, -ECANCELED);
		return;
	}
	t->early.pending = true;
	if (!serve_resume(t->sv, t->origin))
		wait_end(w, -ECANCELED);
}

static void
write_disarm(struct ewyk_wait *w)
{
	wait_task(w)->early.pending = false;
}

int
ewyk_body_write(struct ewyk_request *req, const void *buf, size_t len,
		uint32_t timeout_ms)
{
	struct serve_task *t = task_of(req);
	struct early_answer *e = &t->early;
	struct ewyk_wait w = { .arm = write_arm, .disarm = write_disarm };
	int rc;

	if (!e->begun || (e->length >= 0 &&
			(uint64_t)e->written + len > (uint64_t)e->length))
		return -EINVAL;
	if (e->failed != 0)
		return e->failed;	/* the first failure's, again */
	if (len == 0 || e->discard) {
		e->written += (int64_t)len;
		return 0;
	}
	e->buf = buf;
	e->len = len;
	e->off = 0;
	rc = ewyk_wait_park(req, &w, timeout_ms);
	if (rc != 0)
		e->failed = rc;		/* part of it may be out: cut */
	return rc;
}

/* The task's end ------------------------------------------------------ */

bool
early_answer_end(struct serve_task *t)
{
	t->early.handler_over = true;
	if (t->early.released)
		return true;
	/* The connection reads the end (or the cut) and lets it go. */
	serve_resume(t->sv, t->origin);
	return false;
}

bool
early_answer_released(struct serve_task *t)
{
	t->early.released = true;
	return t->early.handler_over;
}
