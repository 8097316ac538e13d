/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conditional and range requests on a static file (RFC 9110 13, 14),
 * for the static-file handler. Each takes its header's value, or NULL
 * when the request has none.
 */
#ifndef EWYK_HTTP_COND_H
#define EWYK_HTTP_COND_H

#include <stdbool.h>
#include <stdint.h>

#include "http_token.h"
#include "www.h"

/* If-None-Match names the file's entity tag (weak comparison), or "*". */
bool http_etag_matches(const struct http_str *if_none_match,
		const struct www_file *f);

/*
 * A single byte range (RFC 9110 14.1.2): "bytes=A-B", "bytes=A-" or
 * "bytes=-N". Returns 1 with [*from, *to] set, 0 to ignore the header
 * (absent, malformed or several ranges: the whole file is the answer), or
 * -1 when the range cannot be satisfied (416).
 */
int http_parse_range(const struct http_str *range, uint64_t size,
		uint64_t *from, uint64_t *to);

#endif /* EWYK_HTTP_COND_H */
