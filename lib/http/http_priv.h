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
#include "www.h"

/* Tokens and strings ------------------------------------------------------ */

/* The value of a hex digit, either case; -1 for anything else. */
static inline int
http_hex_digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Whether s is the n bytes at lit, ignoring case. */
static inline bool
http_str_eq_nocase_n(struct http_str s, const char *lit, size_t n)
{
	return s.len == n && strncasecmp(s.p, lit, n) == 0;
}

/* Whether s is lit, ignoring case. Inline: with a literal, its length is
 * known at compile time and most names differ by length alone. */
static inline bool
http_str_eq_nocase(struct http_str s, const char *lit)
{
	return http_str_eq_nocase_n(s, lit, strlen(lit));
}

/* A Content-Length value: 1 to 18 digits into *n; false for anything
 * else. */
bool http_parse_length(struct http_str v, int64_t *n);

/* Case-insensitive header lookup; NULL when absent. */
const struct http_str *http_head_find(const struct http_head *r,
		const char *name);

/* Answers ----------------------------------------------------------------- */

/* The body of an error answer (http_answer_error()): "404 Not
 * Found\n"; static. */
const char *http_error_text(int status);
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

/* Static files ------------------------------------------------------------ */

/*
 * Maps a request path (still percent-encoded, without the query) to a file
 * or a directory. "/" and "/dir/" map to their index.html, "/dir" to the
 * directory itself. Returns NULL when there is no such file or the path
 * is unsafe ("..", encoded NUL or slash).
 */
const struct www_file *www_find(const struct www *w, const char *path,
		size_t len);

#endif /* EWYK_HTTP_PRIV_H */
