/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "http_fields.h"

struct http_field_block *
http_field_block_new(const char *const *fields)
{
	struct http_field_block *b;
	size_t len = 0, i, n;

	for (n = 0; fields[2 * n] != NULL; n++)
		len += strlen(fields[2 * n]) + strlen(fields[2 * n + 1]);
	if (n > HTTP_ANSWER_HEADERS || len > EWYK_RESPONSE_HEADERS_MAX)
		return NULL;
	b = malloc(sizeof(*b) + len + HTTP_FIELD_FRAMING * n);
	if (b == NULL)
		return NULL;
	b->n = (uint16_t)n;
	b->len = 0;
	for (i = 0; i < n; i++) {
		size_t nl = strlen(fields[2 * i]), vl = strlen(fields[2 * i + 1]);

		char *p = b->buf + b->len;

		memcpy(p, fields[2 * i], nl);
		memcpy(p + nl, ": ", 2);
		memcpy(p + nl + 2, fields[2 * i + 1], vl);
		memcpy(p + nl + 2 + vl, "\r\n", 2);
		b->h[i] = (struct http_answer_header){ b->len, (uint16_t)nl,
			(uint16_t)(b->len + nl + 2), (uint16_t)vl };
		b->len = (uint16_t)(b->len + nl + vl + HTTP_FIELD_FRAMING);
	}
	return b;
}

int
http_answer_add_block(struct http_answer *a, const struct http_field_block *b,
		unsigned int n)
{
	/* names and values so far, and the block's */
	size_t used = a->hused - HTTP_FIELD_FRAMING * (size_t)a->nheaders;
	uint16_t len;
	unsigned int i;

	if (n == 0)
		return 0;
	len = (uint16_t)(b->h[n - 1].value + b->h[n - 1].value_len + 2);
	if (a->nheaders + n > HTTP_ANSWER_HEADERS ||
			len - HTTP_FIELD_FRAMING * n >
			EWYK_RESPONSE_HEADERS_MAX - used)
		return -ENOSPC;
	memcpy(a->hbuf + a->hused, b->buf, len);
	if (a->hused == 0)	/* the first fields: the offsets hold */
		memcpy(a->h, b->h, n * sizeof(b->h[0]));
	else
		for (i = 0; i < n; i++)
			a->h[a->nheaders + i] = (struct http_answer_header){
				(uint16_t)(b->h[i].name + a->hused),
				b->h[i].name_len,
				(uint16_t)(b->h[i].value + a->hused),
				b->h[i].value_len };
	a->nheaders = (uint8_t)(a->nheaders + n);
	a->hused = (uint16_t)(a->hused + len);
	return 0;
}
