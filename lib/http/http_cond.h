/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conditional and range requests on a static file (RFC 9110 13, 14),
 * shared by the HTTP/1.1 and HTTP/2 servers.
 */
#ifndef EWYK_HTTP_COND_H
#define EWYK_HTTP_COND_H

#include <stdbool.h>
#include <stdint.h>

#include "http1_parse.h"
#include "www.h"

/* If-None-Match names the file's entity tag (weak comparison), or "*". */
bool http_etag_matches(const struct http1_request *r, const struct www_file *f);

/*
 * A single byte range (RFC 9110 14.1.2): "bytes=A-B", "bytes=A-" or
 * "bytes=-N". Returns 1 with [*from, *to] set, 0 to ignore the header
 * (absent, malformed or several ranges: the whole file is the answer), or
 * -1 when the range cannot be satisfied (416).
 */
int http_parse_range(const struct http1_request *r, uint64_t size,
		uint64_t *from, uint64_t *to);

#endif /* EWYK_HTTP_COND_H */
