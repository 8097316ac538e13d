/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "fetch.h"
#include "fibers.h"
#include "http_req.h"
#include "http_upstream.h"
#include "shard.h"

struct fetch_start;
struct fetch_read;

struct ewyk_fetch {
	struct fetch_pool *pool;
	struct ewyk_fetch *next;	/* the free list */
	struct ilink task_link;	/* in its task's open ones; off: free */
	struct ewyk_request *req;	/* whose fiber parks on it */
	struct upstream_fetch *uf;	/* NULL once let go */
	struct fetch_start *start;	/* ewyk_fetch() parked for the head */
	struct fetch_read *read;	/* ewyk_fetch_read() parked for bytes */
	const uint8_t *body;		/* the request's, borrowed */
	size_t body_len;
	size_t body_off;
	int err;		/* negative: every read fails with it */
	bool ended;		/* the answer's body was read to its end */
	int status;
	int64_t length;
	uint32_t timeout_ms;	/* of each wait: EWYK_WAIT_FOREVER for none */
	uint32_t nfields;
	struct http_header fields[HTTP_MAX_HEADERS];	/* in head[] */
	char head[EWYK_FETCH_HEAD_MAX];
};

/* ewyk_fetch() parked until the head: on the fiber's stack. */
struct fetch_start {
	struct ewyk_wait w;
	struct route_task *task;
	const char *upstream;
	int idx;			/* the upstream's, found by arm */
	struct upstream_req ur;
	const struct ewyk_fetch_req *r;
	struct ewyk_fetch *f;		/* its handle, once it has one */
	int err;
	bool queued;
	struct fetch_start *qnext, **qprev;	/* the pool's queue */
};

/* ewyk_fetch_read() parked until some bytes: on the fiber's stack. */
struct fetch_read {
	struct ewyk_wait w;
	struct ewyk_fetch *f;
	void *buf;
	size_t cap;
	ssize_t n;
};

struct fetch_pool {
	struct fetch_pool_stats st;
	struct ewyk_fetch *free;
	struct fetch_start *queue;	/* waiting for a handle, oldest first */
	struct fetch_start **queue_tail;
	struct ewyk_fetch handles[];
};

static struct route_task *
task_of(struct ewyk_request *req)
{
	return container_of(req, struct route_task, req);
}

struct fetch_pool *
fetch_pool_create(uint32_t n)
{
	struct fetch_pool *p = calloc(1, sizeof(*p) + n * sizeof(p->handles[0]));
	uint32_t i;

	if (p == NULL)
		return NULL;
	p->st.size = n;
	p->queue_tail = &p->queue;
	for (i = n; i-- > 0;) {
		p->handles[i].pool = p;
		p->handles[i].next = p->free;
		p->free = &p->handles[i];
	}
	return p;
}

void
fetch_pool_free(struct fetch_pool *p)
{
	free(p);
}

const struct fetch_pool_stats *
fetch_pool_stats(const struct fetch_pool *p)
{
	return &p->st;
}

/* Everything below runs on the shard's owner: arms, disarms, events. */

static void
finish_start(struct fetch_start *st, int err)
{
	st->err = err;
	ewyk_wait_wake(&st->w);
}

static const struct upstream_events events;

/* Starts st's request on handle f: false (st woken with the error) when
 * it cannot start, and f is the caller's again. */
static bool
begin(struct fetch_start *st, struct ewyk_fetch *f)
{
	struct shard *s = fiber_wait_shard(&st->w);
	struct fetch_pool *p = f->pool;
	enum upstream_err why;

	f->req = &st->task->req;
	f->start = st;
	f->read = NULL;
	f->body = st->r->body;
	f->body_len = st->r->body != NULL ? st->r->body_len : 0;
	f->body_off = 0;
	f->err = 0;
	f->ended = false;
	f->nfields = 0;
	f->timeout_ms = st->r->timeout_ms != 0 ? st->r->timeout_ms :
		EWYK_WAIT_FOREVER;
	f->uf = upstream_fetch_start(s->upstream, st->idx, &st->ur, &events, f,
			&why);
	if (f->uf == NULL) {
		f->start = NULL;
		finish_start(st, -upstream_err_errno(why));
		return false;
	}
	p->st.started++;
	p->st.in_use++;
	if (p->st.in_use > p->st.peak)
		p->st.peak = p->st.in_use;
	st->f = f;
	ilist_push(&st->task->fetches, &f->task_link);
	return true;
}

static void
queue_remove(struct fetch_pool *p, struct fetch_start *st)
{
	*st->qprev = st->qnext;
	if (st->qnext != NULL)
		st->qnext->qprev = st->qprev;
	else
		p->queue_tail = st->qprev;
	st->queued = false;
}

static void
handle_put(struct fetch_pool *p, struct ewyk_fetch *f)
{
	f->next = p->free;
	p->free = f;
}

static struct ewyk_fetch *
handle_get(struct fetch_pool *p)
{
	struct ewyk_fetch *f = p->free;

	if (f != NULL)
		p->free = f->next;
	return f;
}

/* Free handles go to the queued fetches, oldest first: here, from the
 * poll loop, rather than where a handle is freed, which may be inside an
 * upstream event (a TCP upcall), where no fetch may start. */
unsigned int
fetch_pool_poll(struct fetch_pool *p)
{
	unsigned int n = 0;

	while (p->queue != NULL && p->free != NULL) {
		struct fetch_start *st = p->queue;
		struct ewyk_fetch *f = handle_get(p);

		queue_remove(p, st);
		if (!begin(st, f))
			handle_put(p, f);
		n++;
	}
	return n;
}

/* The handle goes back, its upstream fetch let go (a clean one to the
 * pool of connections, one cut short reset). */
static void
fetch_end(struct ewyk_fetch *f)
{
	struct fetch_pool *p = f->pool;

	if (f->uf != NULL)
		upstream_fetch_release(f->uf);
	f->uf = NULL;
	f->start = NULL;
	f->read = NULL;
	if (ilist_linked(&f->task_link)) {
		ilist_remove(&f->task_link);
		p->st.in_use--;
	}
	handle_put(p, f);
}

static void
start_arm(struct ewyk_wait *w)
{
	struct fetch_start *st = container_of(w, struct fetch_start, w);
	struct shard *s = fiber_wait_shard(w);
	struct fetch_pool *p = s->fetches;
	struct ewyk_fetch *f;

	st->idx = s->upstream == NULL ? -1 : upstream_find(s->upstream,
			st->upstream, strlen(st->upstream));
	if (st->idx < 0) {
		finish_start(st, -ENOENT);
		return;
	}
	f = p->queue == NULL ? handle_get(p) : NULL;	/* first come first */
	if (f == NULL) {
		p->st.queued++;
		st->queued = true;
		st->qnext = NULL;
		st->qprev = p->queue_tail;
		*p->queue_tail = st;
		p->queue_tail = &st->qnext;
		return;
	}
	if (!begin(st, f))
		handle_put(p, f);
}

/* Timed out, or the client left: out of the queue, or the fetch let go. */
static void
start_disarm(struct ewyk_wait *w)
{
	struct fetch_start *st = container_of(w, struct fetch_start, w);

	if (st->queued)
		queue_remove(fiber_wait_shard(w)->fetches, st);
	else if (st->f != NULL)
		fetch_end(st->f);
	st->f = NULL;
}

/* The answer's fields into the handle: the client's buffer holding them
 * is valid only during the head event. */
static bool
copy_head(struct ewyk_fetch *f, const struct http_head *h, bool body)
{
	size_t used = 0;
	uint32_t i;

	f->status = h->status;
	f->length = !body ? 0 : !h->chunked && h->content_length >= 0 ?
		h->content_length : -1;
	f->ended = !body;
	for (i = 0; i < h->nheaders && i < HTTP_MAX_HEADERS; i++) {
		const struct http_header *hf = &h->headers[i];
		struct http_header *ff = &f->fields[i];

		if ((size_t)hf->name.len + hf->value.len > sizeof(f->head) - used)
			return false;
		memcpy(f->head + used, hf->name.p, hf->name.len);
		ff->name = (struct http_str){ f->head + used, hf->name.len };
		used += hf->name.len;
		memcpy(f->head + used, hf->value.p, hf->value.len);
		ff->value = (struct http_str){ f->head + used, hf->value.len };
		used += hf->value.len;
	}
	f->nfields = i;
	return true;
}

static void
on_head(void *arg, const struct http_head *h, bool body)
{
	struct ewyk_fetch *f = arg;
	struct fetch_start *st = f->start;

	f->start = NULL;
	if (!copy_head(f, h, body)) {
		st->f = NULL;
		fetch_end(f);
		finish_start(st, -EMSGSIZE);
		return;
	}
	finish_start(st, 0);
}

static void
on_failed(void *arg, enum upstream_err why)
{
	struct ewyk_fetch *f = arg;
	struct fetch_start *st = f->start;

	st->f = NULL;
	fetch_end(f);
	finish_start(st, -upstream_err_errno(why));
}

/* A read for the parked fiber: done unless nothing is at hand yet. */
static void
read_try(struct ewyk_fetch *f)
{
	struct fetch_read *rd = f->read;
	long n = f->uf != NULL ? upstream_fetch_read(f->uf, rd->buf, rd->cap) :
		-1;

	if (n == HTTP_SOURCE_AGAIN)
		return;		/* the readable event comes */
	f->read = NULL;
	if (n == 0 || (n > 0 && upstream_fetch_done(f->uf)))
		f->ended = true;	/* the next read needs no park */
	else if (n < 0)
		f->err = -EIO;
	rd->n = n >= 0 ? n : f->err;
	ewyk_wait_wake(&rd->w);
}

static void
on_readable(void *arg)
{
	struct ewyk_fetch *f = arg;

	if (f->read != NULL)
		read_try(f);
}

static long
on_req_body(void *arg, void *buf, size_t cap)
{
	struct ewyk_fetch *f = arg;
	size_t n = RTE_MIN(cap, f->body_len - f->body_off);

	memcpy(buf, f->body + f->body_off, n);
	f->body_off += n;
	return (long)n;
}

static const struct upstream_events events = {
	.head = on_head,
	.readable = on_readable,
	.failed = on_failed,
	.req_body = on_req_body,
};

static void
read_arm(struct ewyk_wait *w)
{
	struct fetch_read *rd = container_of(w, struct fetch_read, w);

	rd->f->read = rd;
	read_try(rd->f);
}

/* Timed out, or the client left: the answer is cut, the upstream's
 * connection reset; the handle stays the handler's until its close. */
static void
read_disarm(struct ewyk_wait *w)
{
	struct fetch_read *rd = container_of(w, struct fetch_read, w);
	struct ewyk_fetch *f = rd->f;

	f->read = NULL;
	f->err = w->result;
	if (f->uf != NULL)
		upstream_fetch_release(f->uf);
	f->uf = NULL;
}

static void
close_arm(struct ewyk_wait *w)
{
	fetch_end(w->arg);
	ewyk_wait_wake(w);
}

void
fetch_task_end(struct shard *s, struct route_task *t)
{
	while (t->fetches != NULL) {
		s->fetches->st.left_open++;
		fetch_end(container_of(t->fetches, struct ewyk_fetch,
				task_link));
	}
}

/* On the fiber: only the request is looked at, no shard state. */

static bool
is_origin_form(const char *s)
{
	if (s[0] != '/' || strlen(s) > HTTP_MAX_TARGET)
		return false;
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= 0x20 || *s == 0x7f)
			return false;
	return true;
}

static struct http_str
str_of(const char *s)
{
	return (struct http_str){ s, (uint32_t)strlen(s) };
}

/* The upstream client's request: 0 or -EINVAL. */
static int
build_request(const struct ewyk_fetch_req *r, struct upstream_req *ur,
		struct http_header *fields)
{
	const char *m = r->method != NULL ? r->method : "GET";
	enum http_method method = http_method_parse(str_of(m));
	size_t i;

	if (!http_is_token(m) || r->target == NULL || !is_origin_form(r->target) ||
			r->nfields > EWYK_FETCH_FIELDS_MAX ||
			(r->nfields > 0 && r->fields == NULL) ||
			(r->body == NULL && r->body_len > 0))
		return -EINVAL;
	for (i = 0; i < r->nfields; i++) {
		const struct ewyk_field *fl = &r->fields[i];

		if (fl->name == NULL || fl->value == NULL ||
				!http_field_ok(fl->name, fl->value))
			return -EINVAL;
		fields[i] = (struct http_header){ str_of(fl->name),
			str_of(fl->value) };
	}
	*ur = (struct upstream_req){
		.method = str_of(m),
		.target = str_of(r->target),
		.headers = fields,
		.nheaders = (uint32_t)r->nfields,
		.body_len = (int64_t)r->body_len,
		.idempotent = http_method_idempotent(method),
		.head = method == HTTP_HEAD,
	};
	return 0;
}

int
ewyk_fetch(struct ewyk_request *req, const char *upstream,
		const struct ewyk_fetch_req *r, struct ewyk_fetch **out)
{
	struct http_header fields[EWYK_FETCH_FIELDS_MAX];
	struct fetch_start st = {
		.w = { .arm = start_arm, .disarm = start_disarm },
		.task = task_of(req), .upstream = upstream, .r = r,
	};
	int rc;

	if (out != NULL)
		*out = NULL;
	if (!ewyk_request_on_fiber(req))
		return -EPERM;
	if (upstream == NULL || r == NULL || out == NULL)
		return -EINVAL;
	rc = build_request(r, &st.ur, fields);
	if (rc != 0)
		return rc;
	rc = ewyk_wait_park(req, &st.w, r->timeout_ms != 0 ? r->timeout_ms :
			EWYK_WAIT_FOREVER);
	if (rc == 0)
		rc = st.err;
	if (rc == 0)
		*out = st.f;
	return rc;
}

int
ewyk_fetch_status(const struct ewyk_fetch *f)
{
	return f->status;
}

bool
ewyk_fetch_header_at(const struct ewyk_fetch *f, size_t i,
		struct ewyk_str *name, struct ewyk_str *value)
{
	return http_headers_at(f->fields, f->nfields, i, name, value);
}

bool
ewyk_fetch_header(const struct ewyk_fetch *f, const char *name,
		struct ewyk_str *value)
{
	return http_headers_find(f->fields, f->nfields, name, value);
}

int64_t
ewyk_fetch_length(const struct ewyk_fetch *f)
{
	return f->length;
}

ssize_t
ewyk_fetch_read(struct ewyk_fetch *f, void *buf, size_t cap)
{
	struct fetch_read rd = {
		.w = { .arm = read_arm, .disarm = read_disarm },
		.f = f, .buf = buf, .cap = cap,
	};
	int rc;

	if (cap == 0 || buf == NULL)
		return -EINVAL;
	if (f->err != 0)
		return f->err;
	if (f->ended)
		return 0;
	rc = ewyk_wait_park(f->req, &rd.w, f->timeout_ms);
	return rc != 0 ? rc : rd.n;
}

void
ewyk_fetch_close(struct ewyk_fetch *f)
{
	struct ewyk_wait w = { .arm = close_arm, .arg = f };

	/* The arm ends the fetch and wakes at once: nothing can cancel it.
	 * Off a fiber (never where ewyk_fetch() gave f) the handler's
	 * return ends it. */
	if (f != NULL)
		ewyk_wait_park(f->req, &w, EWYK_WAIT_FOREVER);
}
