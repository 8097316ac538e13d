/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewyk_fetch(): a handler's HTTP/1.1 request to an upstream, in blocking
 * style, on the shard's upstream client (http_upstream.h). The handler
 * never touches the client: it waits, and the owner does the work in the
 * wait's arm and in the fetch's events, which end the wait. Handles come
 * from a pool per shard, as many as upstream connections; handlers that
 * find none free queue for one.
 *
 * One set of event adapters serves every use of a handle: a handler
 * waiting for the head or for body bytes, an answer whose body streams
 * from the fetch (ewyk_respond_fetch(), the proxy's), and a request body
 * forwarded from the client as it arrives (EWYK_FETCH_FORWARD).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "body.h"
#include "compress.h"
#include "fetch.h"
#include "h3.h"
#include "wait.h"

struct fetch_start;
struct fetch_read;

struct ewyk_fetch {
	struct fetch_pool *pool;
	struct ewyk_fetch *next;	/* the free list */
	struct ilink task_link;	/* in its task's open ones */
	struct serve_task *task;	/* whose handler fetches */
	struct upstream_fetch *uf;	/* NULL once let go */
	struct fetch_start *start;	/* ewyk_fetch() waits for the head */
	struct fetch_read *read;	/* ewyk_fetch_read() waits for bytes */
	bool in_use;
	bool forward;		/* the request body comes from the client */
	bool answering;		/* the body is the task's answer's source */
	const uint8_t *body;	/* the request's, borrowed */
	size_t body_len;
	size_t body_off;
	int err;		/* negative: every read fails with it */
	bool ended;		/* the answer's body was read to its end */
	int status;
	int64_t length;		/* the body's, or -1; 0: none follows */
	int64_t head_length;	/* Content-Length said, or -1 */
	uint32_t timeout_ms;	/* of each wait: EWYK_WAIT_FOREVER for none */
	uint32_t nfields;
	struct http_header fields[HTTP_MAX_HEADERS];	/* in head[] */
	char head[EWYK_FETCH_HEAD_MAX];
};

/* ewyk_fetch() waiting for the head: on the handler's stack. */
struct fetch_start {
	struct ewyk_wait w;
	const char *upstream;
	int first;			/* the pool's first server, found by arm */
	int idx;			/* the server picked */
	uint64_t key;			/* the request's, for a hash pool */
	char client[INET6_ADDRSTRLEN];	/* its client's address */
	uint64_t tried;			/* servers that failed to connect */
	struct upstream_req ur;
	const struct ewyk_fetch_req *r;
	struct ewyk_fetch *f;		/* its handle, once it has one */
	int err;
	enum upstream_err why;		/* of an err the upstream's */
	bool queued;
	struct fetch_start *qnext, **qprev;	/* the pool's queue */
};

/* ewyk_fetch_read() waiting for bytes: on the handler's stack. */
struct fetch_read {
	struct ewyk_wait w;
	struct ewyk_fetch *f;
	void *buf;
	size_t cap;
	ssize_t n;
};

struct fetch_pool {
	struct serve_fetch_stats *st;
	struct ewyk_fetch *free;
	struct fetch_start *queue;	/* waiting for a handle, oldest first */
	struct fetch_start **queue_tail;
	struct ewyk_fetch handles[];
};

struct fetch_pool *
fetch_pool_create(uint32_t n, struct serve_fetch_stats *st)
{
	struct fetch_pool *p = calloc(1, sizeof(*p) + n * sizeof(p->handles[0]));
	uint32_t i;

	if (p == NULL)
		return NULL;
	p->st = st;
	p->st->size = n;
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

/* Everything below runs on the shard's owner: arms, disarms, events. */

static void
finish_start(struct fetch_start *st, int err)
{
	st->err = err;
	ewyk_wait_wake(&st->w);
}

static void
fail_start(struct fetch_start *st, enum upstream_err why)
{
	st->why = why;
	finish_start(st, -upstream_err_errno(why));
}

static const struct upstream_events events;
static void forward_ready(struct serve_task *t);

/* Nothing of st's request went out (its server could not be connected
 * to: why): the next server of its pool that it has not tried, counted
 * as the failed one's failover. False when there is none. */
static bool
next_server(struct serve *sv, struct fetch_start *st, enum upstream_err why)
{
	int next;

	if (!upstream_err_before_request(why))
		return false;
	st->tried |= 1ull << st->idx;
	next = upstream_pick(sv->upstream, st->first, st->key, st->tried);
	if (next < 0)
		return false;
	upstream_stats_of(sv->upstream, st->idx)->failovers++;
	st->idx = next;
	return true;
}

/* Starts st's request on handle f: false (st woken with the error) when
 * it cannot start, and f is the caller's again. */
static bool
begin(struct fetch_start *st, struct ewyk_fetch *f)
{
	struct serve_task *t = wait_task(&st->w);
	struct fetch_pool *p = f->pool;
	const struct ewyk_fetch_req *r = st->r;
	enum upstream_err why;

	f->task = t;
	f->start = st;
	f->read = NULL;
	f->forward = (r->flags & EWYK_FETCH_FORWARD) &&
		(t->route->flags & HTTP_ROUTE_BODY_STREAM);
	f->answering = false;
	f->body = r->body;
	f->body_len = r->body != NULL ? r->body_len : 0;
	if ((r->flags & EWYK_FETCH_FORWARD) && !f->forward) {
		/* A body gathered before the handler: sent whole. */
		f->body = (const uint8_t *)t->req.body.p;
		f->body_len = t->req.body.len;
	}
	f->body_off = 0;
	f->err = 0;
	f->ended = false;
	f->nfields = 0;
	f->timeout_ms = r->timeout_ms != 0 ? r->timeout_ms : EWYK_WAIT_FOREVER;
	f->uf = upstream_fetch_start(t->sv->upstream, st->idx, &st->ur,
			&events, f, &why);
	/* Off the link, say: another server of the pool may do. */
	while (f->uf == NULL && next_server(t->sv, st, why))
		f->uf = upstream_fetch_start(t->sv->upstream, st->idx, &st->ur,
				&events, f, &why);
	if (f->uf == NULL) {
		f->start = NULL;
		fail_start(st, why);
		return false;
	}
	f->in_use = true;
	p->st->started++;
	p->st->in_use++;
	if (p->st->in_use > p->st->peak)
		p->st->peak = p->st->in_use;
	st->f = f;
	ilist_push(&t->fetches, &f->task_link);
	if (f->forward && st->ur.body_len != 0) {
		t->body_fetch = f;
		body_watch_add(t, forward_ready);
	}
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

/* The upstream fetch let go (a clean one to the pool of connections, one
 * cut short reset), and the forwarded body no longer watched. */
static void
fetch_let_go(struct ewyk_fetch *f)
{
	if (f->forward) {
		body_watch_remove(f->task);
		f->task->body_fetch = NULL;
	}
	f->forward = false;
	if (f->uf != NULL)
		upstream_fetch_release(f->uf);
	f->uf = NULL;
}

/* The handle goes back. */
static void
fetch_end(struct ewyk_fetch *f)
{
	struct fetch_pool *p = f->pool;

	fetch_let_go(f);
	f->start = NULL;
	f->read = NULL;
	f->answering = false;
	ilist_remove(&f->task_link);
	if (f->in_use) {
		f->in_use = false;
		p->st->in_use--;
	}
	handle_put(p, f);
}

static void
queue_add(struct fetch_pool *p, struct fetch_start *st)
{
	st->queued = true;
	st->qnext = NULL;
	st->qprev = p->queue_tail;
	*p->queue_tail = st;
	p->queue_tail = &st->qnext;
}

/* FNV-1a of n bytes, into h. */
static uint64_t
hash_bytes(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* The request's key for a hash pool: a field's value, or the client's
 * address (an IPv6 client's /64, as one host). */
static uint64_t
request_key(struct serve_task *t, const struct upstream_target *pool)
{
	uint64_t h = 0xcbf29ce484222325ull;
	struct net_addr peer = { .family = 0 };
	struct ewyk_str v;
	uint16_t port;

	if (pool->hash_field[0] != '\0')
		return ewyk_request_header(&t->req, pool->hash_field, &v) ?
			hash_bytes(h, v.p, v.len) : h;
	serve_peer(t->sv, t->origin, &peer, &port);
	return peer.family == NET_AF_INET6 ? hash_bytes(h, peer.ip.v6, 8) :
		hash_bytes(h, &peer.ip.v4, 4);
}

/* Who asked and how, for a forwarded request's fields (on the owner,
 * where the connection is). */
static void
forwarded_from(struct serve_task *t, struct fetch_start *st)
{
	struct net_addr peer = { .family = 0 };
	uint16_t port;
	const struct serve_conf *c = &t->sv->conf;
	uint16_t i;

	st->client[0] = '\0';
	st->ur.trusted = false;
	if (serve_peer(t->sv, t->origin, &peer, &port)) {
		net_addr_format(&peer, 0, st->client, sizeof(st->client));
		for (i = 0; i < c->ntrusted && !st->ur.trusted; i++)
			st->ur.trusted = net_prefix_has(&c->trusted[i], &peer);
	}
	st->ur.client = (struct http_str){ st->client,
		(uint32_t)strlen(st->client) };
	st->ur.https = serve_secure(t->sv, t->origin);
}

static void
start_arm(struct ewyk_wait *w)
{
	struct fetch_start *st = container_of(w, struct fetch_start, w);
	struct serve_task *t = wait_task(w);
	struct serve *sv = t->sv;
	struct fetch_pool *p = sv->fetches;
	struct ewyk_fetch *f;

	st->first = sv->upstream == NULL ? -1 : upstream_find(sv->upstream,
			st->upstream, strlen(st->upstream));
	if (st->first < 0) {
		finish_start(st, -ENOENT);
		return;
	}
	st->key = request_key(t, upstream_target_of(sv->upstream, st->first));
	if (st->ur.forwarded)
		forwarded_from(t, st);
	st->tried = 0;
	st->idx = upstream_pick(sv->upstream, st->first, st->key, st->tried);
	if (st->idx < 0) {
		finish_start(st, -EHOSTDOWN);	/* every server taken out */
		return;
	}
	f = p->queue == NULL ? handle_get(p) : NULL;	/* first come first */
	if (f == NULL) {
		p->st->queued++;
		queue_add(p, st);
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
		queue_remove(wait_task(w)->sv->fetches, st);
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
	f->head_length = !h->chunked && h->content_length >= 0 ?
		h->content_length : -1;
	f->length = body ? f->head_length : 0;
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

/* The events ------------------------------------------------------------ */

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

/* Nothing of the request went out (it could not connect): another
 * server of its pool may take it. In the queue, for the poll loop: no
 * fetch starts inside an upstream event. */
static bool
fail_over(struct ewyk_fetch *f, struct fetch_start *st,
		enum upstream_err why)
{
	struct serve *sv = f->task->sv;

	if (!next_server(sv, st, why))
		return false;
	st->f = NULL;
	fetch_end(f);
	queue_add(sv->fetches, st);
	return true;
}

static void
on_failed(void *arg, enum upstream_err why)
{
	struct ewyk_fetch *f = arg;
	struct fetch_start *st = f->start;

	if (fail_over(f, st, why))
		return;
	st->f = NULL;
	fetch_end(f);
	fail_start(st, why);
}

/* A read for the waiting handler: done unless nothing is at hand yet. */
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
		f->ended = true;	/* the next read needs no wait */
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
	else if (f->answering)
		serve_resume(f->task->sv, f->task->origin);
}

/* The request body: the handler's buffer, or the client's as it comes. */
static long
on_req_body(void *arg, void *buf, size_t cap)
{
	struct ewyk_fetch *f = arg;
	size_t n;

	if (f->forward)
		return serve_body_read(f->task->sv, f->task->origin, buf,
				cap);
	n = RTE_MIN(cap, f->body_len - f->body_off);
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

/* More of the client's body is at hand: the upstream's side pulls it,
 * until its answer is the connection's (the rest is refused then), but
 * for a tunnel's, whose two ways flow at once. */
static void
forward_ready(struct serve_task *t)
{
	struct ewyk_fetch *f = t->body_fetch;

	if (f != NULL && f->forward && f->uf != NULL && (!f->answering ||
			t->body.len == TASK_BODY_TUNNEL))
		upstream_fetch_body_ready(f->uf);
}

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
	fetch_let_go(f);
}

static void
close_arm(struct ewyk_wait *w)
{
	fetch_end(w->arg);
	ewyk_wait_wake(w);
}

/* The answer's body, as the client has room (on the owner). */
static ssize_t
source_read(void *arg, void *buf, size_t cap)
{
	struct ewyk_fetch *f = arg;

	if (f->uf == NULL)
		return f->ended ? 0 : -1;
	return upstream_fetch_read(f->uf, buf, cap);
}

static void
source_done(void *arg)
{
	fetch_end(arg);
}

/* The answer is the connection's from now: the handle leaves the
 * handler's open ones, and goes back when the answer is let go. */
static void
answer_arm(struct ewyk_wait *w)
{
	struct ewyk_fetch *f = w->arg;

	ilist_remove(&f->task_link);
	f->answering = true;
	ewyk_wait_wake(w);
}

void
fetch_task_end(struct serve_task *t)
{
	while (t->fetches != NULL) {
		t->sv->st.fetch.left_open++;
		fetch_end(container_of(t->fetches, struct ewyk_fetch,
				task_link));
	}
}

/* On the handler's side: only the request is looked at, no shard state. */

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

/* The handler's own request, forwarded: its method, fields and body. */
static int
forward_request(const struct serve_task *t, const struct ewyk_fetch_req *r,
		struct upstream_req *ur)
{
	const struct ewyk_request *q = &t->req;
	bool tunnel = t->body.len == TASK_BODY_TUNNEL;

	if (r->method != NULL || r->nfields > 0 || r->body != NULL)
		return -EINVAL;
	*ur = (struct upstream_req){
		/* HTTP/2's extended CONNECT is HTTP/1.1's GET upgraded */
		.method = tunnel ? str_of("GET") : str_of(q->method_name),
		.target = str_of(r->target),
		.headers = q->hdr,
		.nheaders = q->nheaders,
		.body_len = !(t->route->flags & HTTP_ROUTE_BODY_STREAM) ?
			(int64_t)q->body.len : t->body.len == TASK_BODY_TUNNEL ?
			-1 : t->body.len,
		.idempotent = http_method_idempotent(q->method),
		.head = q->method == HTTP_HEAD,
		.forwarded = true,
		.tunnel = tunnel,
	};
	return 0;
}

/* The upstream client's request: 0 or -EINVAL. */
static int
build_request(const struct serve_task *t, const struct ewyk_fetch_req *r,
		struct upstream_req *ur, struct http_header *fields)
{
	const char *m = r->method != NULL ? r->method : "GET";
	enum http_method method = http_method_parse(str_of(m));
	size_t i;

	if (r->target == NULL || !is_origin_form(r->target) ||
			(r->flags & ~EWYK_FETCH_FORWARD) != 0)
		return -EINVAL;
	if (r->flags & EWYK_FETCH_FORWARD)
		return forward_request(t, r, ur);
	if (!http_is_token(m) || r->nfields > EWYK_FETCH_FIELDS_MAX ||
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
	struct serve_task *t = task_of(req);
	struct http_header fields[EWYK_FETCH_FIELDS_MAX];
	struct fetch_start st = {
		.w = { .arm = start_arm, .disarm = start_disarm },
		.upstream = upstream, .r = r, .why = UPSTREAM_ERR__COUNT,
	};
	int rc;

	if (out != NULL)
		*out = NULL;
	if (!wait_may_park(t))
		return -EPERM;
	if (upstream == NULL || r == NULL || out == NULL)
		return -EINVAL;
	rc = build_request(t, r, &st.ur, fields);
	if (rc != 0)
		return rc;
	rc = ewyk_wait_park(req, &st.w, r->timeout_ms != 0 ? r->timeout_ms :
			EWYK_WAIT_FOREVER);
	if (rc == 0)
		rc = st.err;
	t->fetch_failure = rc != 0 && st.why != UPSTREAM_ERR__COUNT ?
		(int)st.why : -1;
	if (rc == 0)
		*out = st.f;
	return rc;
}

int
ewyk_fetch_failure(const struct ewyk_request *req, const char **reason)
{
	int why = task_of(req)->fetch_failure;

	if (why < 0)
		return 0;
	if (reason != NULL)
		*reason = upstream_err_name((enum upstream_err)why);
	return upstream_err_status((enum upstream_err)why);
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

	if (cap == 0 || buf == NULL || f->answering)
		return -EINVAL;
	if (f->err != 0)
		return f->err;
	if (f->ended)
		return 0;
	rc = ewyk_wait_park(&f->task->req, &rd.w, f->timeout_ms);
	return rc != 0 ? rc : rd.n;
}

void
ewyk_fetch_close(struct ewyk_fetch *f)
{
	struct ewyk_wait w = { .arm = close_arm, .arg = f };

	/* The arm ends the fetch and wakes at once: nothing can cancel it. */
	if (f != NULL)
		ewyk_wait_park(&f->task->req, &w, EWYK_WAIT_FOREVER);
}

int
ewyk_respond_fetch(struct ewyk_request *req, struct ewyk_fetch *f)
{
	struct ewyk_wait w = { .arm = answer_arm, .arg = f };
	struct ewyk_source src = { source_read, source_done, f, f->length };
	char name[64], value[EWYK_RESPONSE_HEADERS_MAX];
	uint32_t i;
	bool gz;
	int rc;

	if (f->task != task_of(req) || f->answering || f->read != NULL ||
			f->err != 0)
		return -EINVAL;
	gz = f->task->compress && compress_accepted(req) &&
		compress_answer_ok(f->status, f->fields, f->nfields) &&
		(req->method == HTTP_HEAD ||
		 compress_source(&f->task->sv->st.compress, &src,
				compress_live(f->fields, f->nfields)) == 0);
	/* Its fields but this hop's own (framing, Connection, Server, Date:
	 * refused by the answer API); a HEAD's says the length it would
	 * have. */
	for (i = 0; i < f->nfields; i++) {
		const struct http_header *h = &f->fields[i];

		if (h->name.len >= sizeof(name) || h->value.len >= sizeof(value))
			continue;
		memcpy(name, h->name.p, h->name.len);
		name[h->name.len] = '\0';
		memcpy(value, h->value.p, h->value.len);
		value[h->value.len] = '\0';
		if (gz && compress_field(name, value, sizeof(value)))
			continue;	/* said again below */
		/* HTTP/2's WebSocket has no key to accept (RFC 8441 5) */
		if (f->status == 101 && req->http_version != 1 &&
				strcasecmp(name, "sec-websocket-accept") == 0)
			continue;
		ewyk_respond_header(req, name, value);	/* or left out */
	}
	if (gz) {
		ewyk_respond_header(req, "Content-Encoding", "gzip");
		ewyk_respond_header(req, "Vary", compress_vary(f->fields,
				f->nfields, value, sizeof(value)));
	}
	if (req->method == HTTP_HEAD)
		src.length = gz ? -1 : f->head_length;
	rc = f->status == 101 ? http_respond_tunnel(req, &src) :
		ewyk_respond_stream(req, f->status, NULL, &src);
	if (rc != 0)
		return rc;
	rc = ewyk_wait_park(req, &w, EWYK_WAIT_FOREVER);
	if (rc != 0)
		http_answer_init(&req->ans);	/* the handle stays the handler's */
	return rc;
}
