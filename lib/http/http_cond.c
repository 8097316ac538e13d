/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "http_cond.h"

bool
http_etag_matches(const struct http_str *inm, const struct www_file *f)
{
	size_t tl = f->etag_len;
	uint32_t i = 0;

	if (inm == NULL)
		return false;
	if (inm->len == 1 && inm->p[0] == '*')
		return true;
	/* A list of entity tags; weak comparison (RFC 9110 13.1.2). */
	while (i < inm->len) {
		const char *p;
		uint32_t len;

		while (i < inm->len && (inm->p[i] == ' ' || inm->p[i] == ','))
			i++;
		if (i + 2 <= inm->len && inm->p[i] == 'W' && inm->p[i + 1] == '/')
			i += 2;
		p = inm->p + i;
		while (i < inm->len && inm->p[i] != ',')
			i++;
		len = (uint32_t)(inm->p + i - p);
		while (len > 0 && p[len - 1] == ' ')
			len--;
		if (len == tl && memcmp(p, f->etag, tl) == 0)
			return true;
	}
	return false;
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
