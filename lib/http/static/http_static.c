/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_lcore.h>

#include "http_accept.h"
#include "http_cond.h"
#include "http_fields.h"
#include "http_req.h"
#include "http_route.h"
#include "http_static.h"

#define STATIC_METHODS (EWYK_METHOD_GET | EWYK_METHOD_OPTIONS)
#define STATIC_ALLOW "GET, HEAD, OPTIONS"

/* Answers lent from each tree (by its generation's parity), per lcore:
 * each lcore adds what it lends and takes off what comes back to it, so
 * only their sum means anything; threads that are not lcores (the unit
 * tests') share the last slot, one at a time. */
struct lent {
	int64_t n[2];
} __rte_cache_aligned;

static struct lent lent[RTE_MAX_LCORE + 1];

static struct lent *
lent_here(void)
{
	unsigned int id = rte_lcore_id();

	return &lent[id < RTE_MAX_LCORE ? id : RTE_MAX_LCORE];
}

static void
given_back(void *arg)
{
	lent_here()->n[(uintptr_t)arg]--;
}

/* Another hold on a body already lent (the send queue's, pointing into
 * the file until it is sent): the tree stays while any is out. */
static void
lent_again(void *arg)
{
	lent_here()->n[(uintptr_t)arg]++;
}

/* A body lent from the tree of generation gen, counted until it is back.
 * Inlined: it is most of a small file's answer. */
static __rte_always_inline int
lend(struct ewyk_request *q, int status, const void *body, size_t len,
		uint32_t gen)
{
	int rc = ewyk_respond_borrow(q, status, NULL, body, len, given_back,
			(void *)(uintptr_t)(gen & 1));

	if (rc == 0) {
		lent_here()->n[gen & 1]++;
		q->ans.hold = lent_again;
	}
	return rc;
}

/* Error answers of a handler are the same as the server's own. */
static enum ewyk_result
error(struct ewyk_request *q, int status)
{
	http_answer_error(&q->ans, status, NULL);
	return EWYK_ANSWERED;
}

/* The fields of a file's answer are known good: no per-request checks,
 * and their lengths are known (NAME a literal). */
#define add_field(q, name, value, value_len) http_answer_add_field(&(q)->ans, \
		name, sizeof(name) - 1, value, value_len)

/* A respond call that failed (it cannot, with these arguments) is the
 * server's fault. */
static enum ewyk_result
answered(int rc, struct ewyk_request *q)
{
	return rc == 0 ? EWYK_ANSWERED : error(q, 500);
}

/* OPTIONS: what the file takes (204), or for "*" what the server takes
 * on any of its routes (200; RFC 9110 9.3.7). */
static enum ewyk_result
options(struct ewyk_request *q, const struct http_static *st,
		struct ewyk_str path)
{
	struct http_route all = { .methods = 0 };
	const struct www *www;
	char allow[64];
	uint32_t i;

	if (path.len == 1 && path.p[0] == '*') {
		all.methods = st->router != NULL ? 0 : STATIC_METHODS;
		for (i = 0; st->router != NULL && i < st->router->n; i++)
			all.methods |= st->router->routes[i].methods;
		http_route_allow(&all, allow, sizeof(allow));
		add_field(q, "Allow", allow, strlen(allow));
		return answered(ewyk_respond_borrow(q, 200, NULL, NULL, 0,
				NULL, NULL), q);
	}
	www = __atomic_load_n(&st->www, __ATOMIC_ACQUIRE);
	if (www == NULL || www_find(www, path.p, path.len) == NULL)
		return error(q, 404);
	add_field(q, "Allow", STATIC_ALLOW, sizeof(STATIC_ALLOW) - 1);
	return answered(ewyk_respond_borrow(q, 204, NULL, NULL, 0, NULL, NULL),
			q);
}

/* A directory named without its slash: 301 to the same path with it, as
 * the client wrote it, and its query (RFC 9110 15.4.2). */
static enum ewyk_result
to_directory(struct ewyk_request *q, struct ewyk_str path)
{
	struct ewyk_str query = ewyk_request_query(q);
	char loc[EWYK_RESPONSE_HEADERS_MAX];
	size_t i, n = path.len + 1 + (query.len > 0 ? 1 + query.len : 0);

	for (i = 0; i < path.len; i++)
		if ((unsigned char)path.p[i] <= ' ' ||
				(unsigned char)path.p[i] >= 0x7f)
			return error(q, 404);	/* not for a field */
	if (n > sizeof(loc) - 64)
		return error(q, 414);	/* a Location longer than we send */
	memcpy(loc, path.p, path.len);
	loc[path.len] = '/';
	if (query.len > 0) {
		loc[path.len + 1] = '?';
		memcpy(loc + path.len + 2, query.p, query.len);
	}
	http_answer_error(&q->ans, 301, NULL);
	return answered(add_field(q, "Location", loc, n), q);
}

enum ewyk_result
http_static_answer(struct ewyk_request *q, const struct http_static *st,
		struct ewyk_str path)
{
	/* The generation before the tree: a swap between the two loads
	 * counts this lend against the older tree, which waits for it. */
	uint32_t gen = __atomic_load_n(&st->gen, __ATOMIC_ACQUIRE);
	const struct www *www = __atomic_load_n(&st->www, __ATOMIC_ACQUIRE);
	enum www_coding k = WWW_CODINGS;
	const struct http_field_block *fields;
	const struct www_file *f, *rep;
	struct http_cond c;
	uint64_t from = 0, to;
	char value[80];
	int r, vl, status;

	if (q->method == HTTP_OPTIONS)
		return options(q, st, path);
	f = www != NULL ? www_find(www, path.p, path.len) : NULL;
	if (f == NULL)
		return error(q, 404);
	if (f->dir)
		return to_directory(q, ewyk_request_path(q));
	http_cond_fields(&c, q->hdr, q->nheaders);
	rep = f;
	if (f->has_coded) {
		unsigned int have = (f->coded[WWW_BR] != NULL) << WWW_BR |
			(f->coded[WWW_GZIP] != NULL) << WWW_GZIP;

		k = http_accept_coding(http_cond_field(&c,
				HTTP_COND_ACCEPT_ENCODING), have);
		if (k != WWW_CODINGS)
			rep = f->coded[k];
	}
	/* RFC 9110 13.2.2: the preconditions before the range, so that a
	 * 304 or a 412 wins over a 206 or a 416. */
	status = http_cond_check(&c, rep, true);
	if (status == 412) {
		http_answer_error(&q->ans, 412, NULL);
		if (f->has_coded)
			add_field(q, "Vary", "Accept-Encoding", 15);
		return EWYK_ANSWERED;
	}
	fields = f->fields[k];
	if (status == 304) {
		/* 304 carries no body, but may say the length of one. */
		http_answer_add_block(&q->ans, fields, f->head_fields);
		return answered(lend(q, 304, rep->data, rep->size, gen), q);
	}
	to = rep->size > 0 ? rep->size - 1 : 0;
	r = http_cond_range_applies(&c, rep) ? http_parse_range(
			c.f[HTTP_COND_RANGE], rep->size, &from, &to) : 0;
	if (r < 0) {
		const char *text = http_error_text(416);

		http_answer_add_block(&q->ans, fields, f->head_fields);
		vl = snprintf(value, sizeof(value), "bytes */%" PRIu64,
				rep->size);
		add_field(q, "Content-Range", value, (size_t)vl);
		return answered(ewyk_respond_borrow(q, 416, HTTP_TEXT_PLAIN,
				text, strlen(text), NULL, NULL), q);
	}
	http_answer_add_block(&q->ans, fields, fields->n);
	if (r > 0) {
		vl = snprintf(value, sizeof(value), "bytes %" PRIu64 "-%" PRIu64
				"/%" PRIu64, from, to, rep->size);
		add_field(q, "Content-Range", value, (size_t)vl);
	}
	return answered(lend(q, r > 0 ? 206 : 200, rep->data + from,
			rep->size > 0 ? to - from + 1 : 0, gen), q);
}

static enum ewyk_result
static_file(struct ewyk_request *q, void *ctx)
{
	return http_static_answer(q, ctx, ewyk_request_path(q));
}

int
http_static_route_add(struct ewyk_router *r, struct http_static *st)
{
	static const struct ewyk_route files = {
		.path = "/", .match = EWYK_MATCH_PREFIX,
		.methods = STATIC_METHODS, .type = EWYK_HANDLER_NON_BLOCKING,
		.handler = static_file,
	};
	struct ewyk_route f = files;

	st->router = r;
	f.ctx = st;
	return http_route_add(r, &f, HTTP_ROUTE_INLINE);
}

int
http_static_swap(struct http_static *st, const struct www *next)
{
	if (st->swapping)
		return -EBUSY;
	st->swapping = true;
	st->retiring = st->www;
	/* The tree first, then the generation: a request that sees the new
	 * generation sees the new tree (the loads run the other way). A
	 * request between the two counts its lend against the old
	 * generation, which is still counted. */
	__atomic_store_n(&st->www, next, __ATOMIC_RELEASE);
	__atomic_store_n(&st->gen, st->gen + 1, __ATOMIC_RELEASE);
	return 0;
}

bool
http_static_retired(struct http_static *st, const struct www **old)
{
	unsigned int parity = (st->gen - 1) & 1, i;
	int64_t n = 0;

	if (!st->swapping)
		return false;
	for (i = 0; i < RTE_DIM(lent); i++)
		n += __atomic_load_n(&lent[i].n[parity], __ATOMIC_RELAXED);
	if (n != 0)
		return false;
	*old = st->retiring;
	st->retiring = NULL;
	st->swapping = false;
	return true;
}
