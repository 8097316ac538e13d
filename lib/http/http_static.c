/* SPDX-License-Identifier: BSD-3-Clause */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "http_cond.h"
#include "http_priv.h"
#include "http_static.h"


/* The request's fields a file's answer depends on, the first of each
 * name, found in one pass over its fields. */
struct cond_fields {
	const struct http_str *range;
	const struct http_str *if_none_match;
};

static void
cond_fields(const struct ewyk_request *q, struct cond_fields *cf)
{
	uint32_t i;

	cf->range = cf->if_none_match = NULL;
	for (i = 0; i < q->nheaders; i++) {
		const struct http_header *x = &q->hdr[i];

		if (cf->range == NULL && http_str_eq_nocase(x->name, "range"))
			cf->range = &x->value;
		else if (cf->if_none_match == NULL &&
				http_str_eq_nocase(x->name, "if-none-match"))
			cf->if_none_match = &x->value;
	}
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

static enum ewyk_result
static_file(struct ewyk_request *q, void *ctx)
{
	const struct www *www = ctx;
	struct ewyk_str path = ewyk_request_path(q);
	const struct www_file *f = www != NULL ? www_find(www, path.p,
			path.len) : NULL;
	struct cond_fields cf;
	uint64_t from = 0, to;
	char value[80];
	int r, vl;

	if (f == NULL)
		return error(q, 404);
	cond_fields(q, &cf);
	to = f->size > 0 ? f->size - 1 : 0;
	r = cf.range != NULL ? http_parse_range(cf.range, f->size, &from,
			&to) : 0;
	/* http_etag_matches() takes NULL for an absent field */
	if (r < 0 && !http_etag_matches(cf.if_none_match, f)) {
		const char *text = http_error_text(416);

		vl = snprintf(value, sizeof(value), "bytes */%" PRIu64, f->size);
		add_field(q, "Content-Range", value, (size_t)vl);
		return answered(ewyk_respond_borrow(q, 416, HTTP_TEXT_PLAIN, text,
				strlen(text), NULL, NULL), q);
	}
	add_field(q, "ETag", f->etag, f->etag_len);
	add_field(q, "Accept-Ranges", "bytes", 5);
	if (http_etag_matches(cf.if_none_match, f))
		/* 304 carries no body, but may say the length of one. */
		return answered(ewyk_respond_borrow(q, 304, NULL, f->data,
				f->size, NULL, NULL), q);
	if (r > 0) {
		vl = snprintf(value, sizeof(value), "bytes %" PRIu64 "-%" PRIu64
				"/%" PRIu64, from, to, f->size);
		add_field(q, "Content-Range", value, (size_t)vl);
	}
	add_field(q, "Content-Type", f->content_type, f->content_type_len);
	return answered(ewyk_respond_borrow(q, r > 0 ? 206 : 200,
			NULL, f->data + from, f->size > 0 ?
			to - from + 1 : 0, NULL, NULL), q);
}

int
http_static_route_add(struct ewyk_router *r, const struct www *www)
{
	static const struct ewyk_route files = {
		.path = "/", .match = EWYK_MATCH_PREFIX,
		.methods = EWYK_METHOD_GET, .type = EWYK_HANDLER_NON_BLOCKING,
		.handler = static_file,
	};
	struct ewyk_route f = files;

	f.ctx = (void *)(uintptr_t)www;
	return http_route_add(r, &f, HTTP_ROUTE_INLINE);
}
