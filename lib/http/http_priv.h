/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What lib/http's own files share beyond its public headers (include/):
 * the routes it adds itself, the internals of answers, the look-ups and
 * compares its parsers use. Not for embedders; white-box tests see it.
 */
#ifndef EWYK_HTTP_PRIV_H
#define EWYK_HTTP_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "http_head.h"
#include "http_req.h"
#include "http_route.h"
#include "http_stats.h"
#include "http_token.h"
#include "lat_hist.h"

/* Tokens and strings ------------------------------------------------------ */

/* A Content-Length value: 1 to 18 digits into *n; false for anything
 * else. */
bool http_parse_length(struct http_str v, int64_t *n);

/* Case-insensitive header lookup; NULL when absent. */
const struct http_str *http_head_find(const struct http_head *r,
		const char *name);

/* Answers ----------------------------------------------------------------- */

/* Nothing of the answer is needed once its head is serialized: its body
 * (if any) lives elsewhere and nobody waits to hear it was sent. */
static inline bool
http_answer_detachable(const struct http_answer *a)
{
	return a->kind == HTTP_BODY_BYTES &&
		(a->len == 0 || a->body != a->inline_body) &&
		a->done == NULL && a->heap == NULL;
}
/* Copies too large to stay inline: counted growth, since the data path
 * allocates nothing in steady state. */
uint64_t http_answer_heap_copies(void);
/* The reason phrase of a status ("Not Found"). */
const char *http_reason(int status);
/* The counter of a status in http_stats' by_status. */
enum http_status_slot http_status_slot(int status);

/* The largest value that lands in bucket i of a latency histogram. */
uint64_t lat_bucket_top(unsigned int i);

#endif /* EWYK_HTTP_PRIV_H */
