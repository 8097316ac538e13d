/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gzip for a route's answers (compress = on): whether a client takes it,
 * whether a type is worth it, and a source that deflates another.
 */
#ifndef EWYK_SERVE_COMPRESS_H
#define EWYK_SERVE_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "ewyk_serve.h"

/* Compressors one shard runs at once: about 268 KiB each. */
#define COMPRESS_STREAMS 64
/* Bodies shorter than this go as they are: gzip's framing alone is 18. */
#define COMPRESS_MIN 256

/* Whether the request's Accept-Encoding takes gzip (named, or "*", with
 * a weight above zero). */
bool compress_accepted(const struct ewyk_request *req);
/* Whether an answer of this Content-Type is text worth compressing. */
bool compress_type_ok(const char *ctype, size_t len);
/* Whether an upstream's answer with these fields may be gzipped: a
 * success but a partial one, text, not encoded already, not forbidden
 * (Cache-Control: no-transform, RFC 9110 7.7). */
bool compress_answer_ok(int status, const struct http_header *f,
		uint32_t n);
/* An answer field as gzip changes it (value, NUL-terminated, of cap
 * bytes): a strong ETag made weak (RFC 9110 8.8.3: the bytes differ);
 * true for Vary, left out to be said again with compress_vary(). */
bool compress_field(const char *name, char *value, size_t cap);
/* The Vary of a gzipped answer: the upstream's, with Accept-Encoding. */
const char *compress_vary(const struct http_header *f, uint32_t n,
		char *buf, size_t cap);
/* Whether an answer is a live stream, each piece wanted at once: server-
 * sent events, or an upstream's "X-Accel-Buffering: no" (nginx's). */
bool compress_live(const struct http_header *f, uint32_t n);
/* A handler's answer in q gzipped in place, when its client takes gzip and
 * it may be (compress_answer_ok()): bytes deflated whole now (in the
 * task: under the strategy, off the producer where it costs), a source
 * wrapped; left as it is otherwise. */
void compress_answer(struct serve_compress *sc, struct ewyk_request *q);
/* Replaces src by a source that deflates it into gzip, of unknown
 * length; its done ends both. live: flushed whenever src has nothing
 * more now, else at the end only. -1 (src untouched) when the shard's
 * compressors are all busy, or out of memory. */
int compress_source(struct serve_compress *sc, struct ewyk_source *src,
		bool live);

#endif /* EWYK_SERVE_COMPRESS_H */
