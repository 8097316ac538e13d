/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Answer fields laid out once and added to many answers with one copy: a
 * static file's (its ETag, Last-Modified, Content-Type, ...), the same in
 * every answer about it. Built at start-up, read-only afterwards.
 */
#ifndef EWYK_HTTP_FIELDS_H
#define EWYK_HTTP_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "http_req.h"

struct http_field_block {
	uint16_t n;		/* fields */
	uint16_t len;		/* bytes of buf */
	struct http_answer_header h[HTTP_ANSWER_HEADERS];	/* in buf */
	char buf[];		/* "name: value\r\n" each, as an answer's
				 * hbuf holds them */
};

/* A block of the fields given as name, value, name, value, ..., NULL (at
 * most HTTP_ANSWER_HEADERS, EWYK_RESPONSE_HEADERS_MAX bytes); NULL when
 * out of memory or too large. Free it with free(). */
struct http_field_block *http_field_block_new(const char *const *fields);

/* Adds the first n fields of b to the answer (laid out as
 * http_answer_add_field() would, with one copy). 0, or -ENOSPC. */
int http_answer_add_block(struct http_answer *a,
		const struct http_field_block *b, unsigned int n);

#endif /* EWYK_HTTP_FIELDS_H */
