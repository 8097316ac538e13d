/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>
#include <time.h>

#include "http_cond.h"
#include "http_date.h"

/* The field a name is, by its length first: every request field of a
 * static file's request passes here. */
static int
field_of(struct http_str name)
{
	switch (name.len) {
	case 5:
		return http_str_eq_nocase_n(name, "range", 5) ?
			HTTP_COND_RANGE : -1;
	case 8:
		if (http_str_eq_nocase_n(name, "if-match", 8))
			return HTTP_COND_IF_MATCH;
		return http_str_eq_nocase_n(name, "if-range", 8) ?
			HTTP_COND_IF_RANGE : -1;
	case 13:
		return http_str_eq_nocase_n(name, "if-none-match", 13) ?
			HTTP_COND_IF_NONE_MATCH : -1;
	case 15:
		return http_str_eq_nocase_n(name, "accept-encoding", 15) ?
			HTTP_COND_ACCEPT_ENCODING : -1;
	case 17:
		return http_str_eq_nocase_n(name, "if-modified-since", 17) ?
			HTTP_COND_IF_MODIFIED_SINCE : -1;
	case 19:
		return http_str_eq_nocase_n(name, "if-unmodified-since", 19) ?
			HTTP_COND_IF_UNMODIFIED_SINCE : -1;
	default:
		return -1;
	}
}

void
http_cond_fields(struct http_cond *c, const struct http_header *h,
		uint32_t n)
{
	uint32_t i;

	c->present = 0;
	c->repeated = 0;
	c->h = h;
	c->n = n;
	for (i = 0; i < n; i++) {
		int k = field_of(h[i].name);

		if (k < 0)
			continue;
		if (c->present & (1u << k)) {
			c->repeated |= 1u << k;
		} else {
			c->present |= 1u << k;
			c->f[k] = &h[i].value;
		}
	}
}

static bool
ows(char ch)
{
	return ch == ' ' || ch == '\t';
}

bool
http_etag_in_list(const struct http_str *list, const char *etag,
		size_t etag_len, bool strong)
{
	const char *p = list->p, *end = p + list->len;

	while (p < end) {
		const char *q;
		bool weak = false;

		while (p < end && (ows(*p) || *p == ','))
			p++;
		if (end - p >= 2 && p[0] == 'W' && p[1] == '/') {
			weak = true;
			p += 2;
		}
		if (p == end)
			break;
		if (*p != '"') {
			/* not an entity tag: on to the next member */
			while (p < end && *p != ',')
				p++;
			continue;
		}
		q = memchr(p + 1, '"', (size_t)(end - p - 1));
		if (q == NULL)
			break;
		/* opaque-tags, quotes included, compared whole */
		if ((size_t)(q + 1 - p) == etag_len &&
				memcmp(p, etag, etag_len) == 0 &&
				!(strong && weak))
			return true;
		p = q + 1;
	}
	return false;
}

/* The field's lines, each a list: whether "*" or a member names rep. */
static bool
etag_field_matches(const struct http_cond *c, int k,
		const struct www_file *rep, bool strong)
{
	uint32_t i;

	if (!(c->repeated & (1u << k))) {
		const struct http_str *v = c->f[k];

		return (v->len == 1 && v->p[0] == '*') || http_etag_in_list(v,
				rep->etag, rep->etag_len, strong);
	}
	for (i = 0; i < c->n; i++)
		if (field_of(c->h[i].name) == k &&
				((c->h[i].value.len == 1 &&
				c->h[i].value.p[0] == '*') ||
				http_etag_in_list(&c->h[i].value, rep->etag,
				rep->etag_len, strong)))
			return true;
	return false;
}

/* A date field of one line that is an HTTP-date; false to ignore it. */
static bool
date_field(const struct http_cond *c, int k, int64_t *t)
{
	const struct http_str *v = http_cond_field(c, k);

	return v != NULL && !(c->repeated & (1u << k)) &&
		http_date_parse(v->p, v->len, (int64_t)time(NULL), t);
}

#define PRECONDITIONS (1u << HTTP_COND_IF_MATCH | \
		1u << HTTP_COND_IF_NONE_MATCH | \
		1u << HTTP_COND_IF_MODIFIED_SINCE | \
		1u << HTTP_COND_IF_UNMODIFIED_SINCE)

int
http_cond_check(const struct http_cond *c, const struct www_file *rep,
		bool get_or_head)
{
	int64_t t;

	if (!(c->present & PRECONDITIONS))
		return 0;	/* most requests */
	/* 1, 2: the client's copy must still be the current one. */
	if (c->present & (1u << HTTP_COND_IF_MATCH)) {
		if (!etag_field_matches(c, HTTP_COND_IF_MATCH, rep, true))
			return 412;
	} else if (date_field(c, HTTP_COND_IF_UNMODIFIED_SINCE, &t) &&
			rep->mtime > t) {
		return 412;
	}
	/* 3, 4: the client's copy is the current one. */
	if (c->present & (1u << HTTP_COND_IF_NONE_MATCH)) {
		if (etag_field_matches(c, HTTP_COND_IF_NONE_MATCH, rep, false))
			return get_or_head ? 304 : 412;
	} else if (get_or_head &&
			date_field(c, HTTP_COND_IF_MODIFIED_SINCE, &t) &&
			rep->mtime <= t) {
		return 304;
	}
	return 0;
}

bool
http_cond_range_applies(const struct http_cond *c, const struct www_file *rep)
{
	const struct http_str *v = http_cond_field(c, HTTP_COND_IF_RANGE);
	int64_t t;

	if (!(c->present & (1u << HTTP_COND_RANGE)) ||
			(c->repeated & (1u << HTTP_COND_RANGE)))
		return false;	/* none, or not one range */
	if (v == NULL)
		return true;
	if (c->repeated & (1u << HTTP_COND_IF_RANGE))
		return false;	/* not one validator: the whole file */
	if (v->len > 0 && v->p[0] == '"')	/* strong comparison only */
		return v->len == rep->etag_len &&
			memcmp(v->p, rep->etag, rep->etag_len) == 0;
	if (v->len > 1 && v->p[0] == 'W' && v->p[1] == '/')
		return false;	/* a weak tag never matches */
	return rep->date_strong && http_date_parse(v->p, v->len,
			(int64_t)time(NULL), &t) && t == rep->mtime;
}

int
http_parse_range(const struct http_str *h, uint64_t size, uint64_t *from,
		uint64_t *to)
{
	uint64_t a = 0, b = 0;
	bool has_a = false, has_b = false;
	uint32_t i = 6;

	if (h == NULL || h->len < 7 || strncmp(h->p, "bytes=", 6) != 0 ||
			memchr(h->p, ',', h->len) != NULL)
		return 0;
	for (; i < h->len && h->p[i] >= '0' && h->p[i] <= '9'; i++, has_a = true)
		if ((a = a * 10 + (uint64_t)(h->p[i] - '0')) > (1ull << 60))
			return 0;
	if (i == h->len || h->p[i++] != '-')
		return 0;
	for (; i < h->len && h->p[i] >= '0' && h->p[i] <= '9'; i++, has_b = true)
		if ((b = b * 10 + (uint64_t)(h->p[i] - '0')) > (1ull << 60))
			return 0;
	if (i != h->len || (!has_a && !has_b) || (has_a && has_b && b < a))
		return 0;
	if (!has_a) {			/* the last b bytes */
		if (b == 0 || size == 0)
			return -1;
		*from = b >= size ? 0 : size - b;
		*to = size - 1;
		return 1;
	}
	if (a >= size)
		return -1;
	*from = a;
	*to = has_b && b < size ? b : size - 1;
	return 1;
}
