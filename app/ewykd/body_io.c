/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "body_io.h"
#include "dispatch.h"
#include "fibers.h"
#include "http_req.h"
#include "shard.h"

static struct route_task *
task_of(struct ewyk_request *req)
{
	return container_of(req, struct route_task, req);
}

/* The task of a wait, in its arm or disarm (on the owner). */
static struct route_task *
wait_task(const struct ewyk_wait *w)
{
	return w->task;
}

/* The watch ------------------------------------------------------------ */

/* The watch is a list per connection slot (an origin's index is below
 * --max-conns): a body_ready walks only its own connection's readers. */
int
body_watch_init(struct shard *s, uint32_t max_conns)
{
	s->body_watch = calloc(max_conns, sizeof(*s->body_watch));
	s->body_watch_n = max_conns;
	return s->body_watch != NULL ? 0 : -1;
}

void
body_watch_add(struct shard *s, struct route_task *t, body_watch_fn fn)
{
	t->body_fn = fn;
	ilist_push(&s->body_watch[t->origin.index], &t->body_link);
}

void
body_watch_remove(struct route_task *t)
{
	ilist_remove(&t->body_link);
}

void
body_watch_ready(void *ctx, struct http_origin o)
{
	struct shard *s = ctx;
	struct ilink *l;

	if (o.index >= s->body_watch_n)
		return;
	for (l = s->body_watch[o.index]; l != NULL; l = l->next) {
		struct route_task *t = container_of(l, struct route_task,
				body_link);

		if (t->origin.gen == o.gen && t->origin.stream == o.stream &&
				t->origin.seq == o.seq) {
			t->body_fn(t);
			return;
		}
	}
}

void
body_io_reset(struct route_task *t, const struct http_head *r)
{
	t->body_len = r->chunked ? -1 : r->content_length > 0 ?
		r->content_length : 0;
	t->body_over = t->body_len == 0;
	t->body_link = (struct ilink){ NULL, NULL };
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
try_read(struct route_task *t, struct body_read_wait *rw)
{
	long n = http_server_body_read(t->shard->http, t->origin, rw->buf,
			rw->cap);

	if (n == HTTP_SOURCE_AGAIN)
		return false;
	rw->n = n;
	ewyk_wait_wake(&rw->w);
	return true;
}

static void
read_ready(struct route_task *t)
{
	struct body_read_wait *rw = container_of(t->wait,
			struct body_read_wait, w);

	if (try_read(t, rw))
		body_watch_remove(t);
}

static void
read_arm(struct ewyk_wait *w)
{
	struct route_task *t = wait_task(w);

	if (!try_read(t, container_of(w, struct body_read_wait, w)))
		body_watch_add(t->shard, t, read_ready);
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
	struct route_task *t = task_of(req);
	struct body_read_wait rw = {
		.w = { .arm = read_arm, .disarm = read_disarm },
		.buf = buf, .cap = cap,
	};
	int rc;

	if (cap == 0 || !(t->route->flags & HTTP_ROUTE_BODY_STREAM))
		return -EINVAL;
	if (!ewyk_request_on_fiber(req))
		return -EPERM;
	/* Past its end the connection may be reading the next request's. */
	if (t->body_over)
		return 0;
	rc = ewyk_wait_park(req, &rw.w, timeout_ms);
	if (rc != 0)
		return rc;
	t->body_over = rw.n == 0;
	return rw.n >= 0 ? rw.n : -EIO;
}

/* Writing the answer body --------------------------------------------- */

/* The connection pulls the body (ewyk_source.read, on the owner): the
 * parked writer's bytes, "again" while the handler runs, the end once it
 * returned; the writer resumes when all its bytes are taken. */
static ssize_t
early_read(void *arg, void *buf, size_t cap)
{
	struct route_task *t = arg;
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
		ewyk_wait_wake(t->wait);
	} else if (n > 0) {
		/* The client takes bytes: the write's time runs again. */
		fiber_wait_renew(t->wait, e->timeout_ms);
	}
	return (ssize_t)n;
}

static void begin_arm(struct ewyk_wait *w);

/* A body the client has whole, or never gets (HEAD, 204, 304): its
 * answer let go is no client gone. With a known length the last bytes may
 * go (and the answer with them) only once the client's window opens again
 * (HTTP/2), while the handler already waits for something else. */
static bool
early_whole(const struct early_answer *e)
{
	return e->discard || (e->length >= 0 && e->written == e->length &&
			e->failed == 0);
}

bool
early_answer_client_gone(const struct route_task *t)
{
	return t->early.released && !t->early.handler_over &&
		!early_whole(&t->early);
}

/* The answer is over for the connection (written, cut, or the client
 * gone): a wait still pending will not be served. The begin's own ends
 * in begin_arm (a HEAD's answer may be over inside it). */
static void
early_done(void *arg)
{
	struct route_task *t = arg;

	t->early.pending = false;
	if (early_whole(&t->early))
		return;
	if (t->fstate == FIBER_WAITING && t->wait->arm != begin_arm)
		fiber_wait_end(t->wait, -ECANCELED);
}

static void
begin_arm(struct ewyk_wait *w)
{
	struct route_task *t = wait_task(w);
	struct shard *s = t->shard;

	t->early.begun = true;
	if (http_server_answer(s->http, t->origin, &t->req.ans)) {
		ewyk_wait_wake(w);
		return;
	}
	/* Gone already: kept by nobody, let go here. */
	s->exec.stale++;
	t->early.released = true;
	http_answer_release(&t->req.ans);
	fiber_wait_end(w, -ECANCELED);
}

int
ewyk_respond_begin(struct ewyk_request *req, int status, const char *ctype,
		int64_t length)
{
	struct route_task *t = task_of(req);
	struct early_answer *e = &t->early;
	const struct ewyk_source src = { early_read, early_done, t,
		length >= 0 ? length : -1 };
	struct ewyk_wait w = { .arm = begin_arm };
	int rc;

	if (!ewyk_request_on_fiber(req))
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
	struct route_task *t = wait_task(w);

	if (t->early.released) {
		fiber_wait_end(w, -ECANCELED);
		return;
	}
	t->early.pending = true;
	if (!http_server_resume(t->shard->http, t->origin))
		fiber_wait_end(w, -ECANCELED);
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
	struct route_task *t = task_of(req);
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
	e->timeout_ms = timeout_ms;
	rc = ewyk_wait_park(req, &w, timeout_ms);
	if (rc != 0)
		e->failed = rc;		/* part of it may be out: cut */
	return rc;
}

/* The task's end ------------------------------------------------------ */

bool
early_answer_end(struct shard *s, struct route_task *t)
{
	t->early.handler_over = true;
	if (t->early.released)
		return true;
	/* The connection reads the end (or the cut) and lets it go. */
	http_server_resume(s->http, t->origin);
	return false;
}

bool
early_answer_released(struct route_task *t)
{
	t->early.released = true;
	return t->early.handler_over;
}
