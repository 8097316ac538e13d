/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gzip for the answers of a route with compress = on that are not encoded
 * already: an upstream's streamed body, deflated as the connection pulls
 * it. Chosen by the client's Accept-Encoding, for text types only, never
 * for a range or a body that says its own coding. Each compressor holds
 * zlib's state at level 6 with a 32 KiB window (about 268 KiB, what
 * nginx's gzip_comp_level 6 takes); a shard runs at most
 * COMPRESS_STREAMS of them at once, and the answers past that go out as
 * they are (counted): the memory has a bound whatever the load.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "compress.h"
#include "http_req.h"
#include "http_token.h"

#define COMPRESS_LEVEL 6
#define COMPRESS_WINDOW_BITS (15 + 16)	/* 32 KiB, gzip's framing */
#define COMPRESS_MEM_LEVEL 8
#define COMPRESS_IN 16384		/* read from the source at a time */

struct gz_source {
	z_stream z;
	struct ewyk_source inner;
	struct serve_compress *sc;
	bool in_end;		/* the source said its end */
	bool done;		/* the gzip trailer is out */
	bool pending;		/* input taken since the last flush */
	bool flushing;		/* a flush that did not fit yet */
	bool live;		/* each piece out as the source gives it */
	uint32_t in_len, in_off;
	uint8_t in[COMPRESS_IN];
};

/* A coding's weight in Accept-Encoding is zero: "q=0", "q=0.", "q=0.0"... */
static bool
q_zero(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (end - p < 3 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=' ||
			p[2] != '0')
		return false;
	for (p += 3; p < end && (*p == '.' || *p == '0'); p++)
		;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p == end;
}

bool
compress_accepted(const struct ewyk_request *req)
{
	struct ewyk_str v;
	const char *p, *end;
	bool gzip = false, star = false, gzip_named = false;

	if (!ewyk_request_header(req, "Accept-Encoding", &v))
		return false;
	for (p = v.p, end = v.p + v.len; p < end;) {
		const char *e = memchr(p, ',', (size_t)(end - p)), *n, *semi;
		size_t nl;
		bool zero;

		if (e == NULL)
			e = end;
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= e) {		/* an empty element */
			p = e + 1;
			continue;
		}
		semi = memchr(p, ';', (size_t)(e - p));
		n = semi != NULL ? semi : e;
		while (n > p && (n[-1] == ' ' || n[-1] == '\t'))
			n--;
		nl = (size_t)(n - p);
		zero = semi != NULL && q_zero(semi + 1, e);
		if (nl == 4 && strncasecmp(p, "gzip", 4) == 0) {
			gzip_named = true;
			gzip = !zero;
		} else if (nl == 1 && *p == '*') {
			star = !zero;
		}
		p = e + 1;
	}
	return gzip || (!gzip_named && star);
}

bool
compress_type_ok(const char *ctype, size_t len)
{
	static const char *const types[] = {
		"application/json", "application/javascript",
		"application/xml", "application/xhtml+xml",
		"application/rss+xml", "application/atom+xml",
		"application/x-javascript", "application/wasm",
		"image/svg+xml",
	};
	const char *semi = memchr(ctype, ';', len);
	size_t n = semi != NULL ? (size_t)(semi - ctype) : len, i;

	while (n > 0 && (ctype[n - 1] == ' ' || ctype[n - 1] == '\t'))
		n--;
	if (n > 5 && strncasecmp(ctype, "text/", 5) == 0)
		return true;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (n == strlen(types[i]) && strncasecmp(ctype, types[i], n) == 0)
			return true;
	/* application/...+json and application/...+xml */
	return n > 17 && strncasecmp(ctype, "application/", 12) == 0 &&
		((n > 5 && strncasecmp(ctype + n - 5, "+json", 5) == 0) ||
		 (n > 4 && strncasecmp(ctype + n - 4, "+xml", 4) == 0));
}

static bool
has_token(struct http_str v, const char *token)
{
	size_t n = strlen(token);
	uint32_t i;

	for (i = 0; i + n <= v.len; i++)
		if (strncasecmp(v.p + i, token, n) == 0 &&
				(i == 0 || v.p[i - 1] == ',' || v.p[i - 1] == ' ') &&
				(i + n == v.len || v.p[i + n] == ',' ||
				 v.p[i + n] == ' ' || v.p[i + n] == ';'))
			return true;
	return false;
}

bool
compress_answer_ok(int status, const struct http_header *f, uint32_t n)
{
	bool text = false;
	uint32_t i;

	if (status < 200 || status >= 300 || status == 204 || status == 206)
		return false;
	for (i = 0; i < n; i++) {
		struct http_str k = f[i].name, v = f[i].value;

		if (http_str_eq_nocase(k, "content-encoding") ||
				http_str_eq_nocase(k, "content-range"))
			return false;
		if (http_str_eq_nocase(k, "cache-control") &&
				has_token(v, "no-transform"))
			return false;
		if (http_str_eq_nocase(k, "content-type"))
			text = compress_type_ok(v.p, v.len);
	}
	return text;
}

bool
compress_field(const char *name, char *value, size_t cap)
{
	size_t n = strlen(value);

	if (strcasecmp(name, "vary") == 0)
		return true;
	if (strcasecmp(name, "etag") == 0 && value[0] == '"' && n + 2 < cap) {
		memmove(value + 2, value, n + 1);
		value[0] = 'W';
		value[1] = '/';
	}
	return false;
}

const char *
compress_vary(const struct http_header *f, uint32_t n, char *buf, size_t cap)
{
	size_t used = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct http_str v = f[i].value;

		if (!http_str_eq_nocase(f[i].name, "vary"))
			continue;
		if (has_token(v, "*"))
			return "*";
		if (has_token(v, "accept-encoding"))
			continue;	/* said once, below */
		if (used + v.len + 2 >= cap - sizeof("Accept-Encoding"))
			continue;
		memcpy(buf + used, v.p, v.len);
		used += v.len;
		buf[used++] = ',';
		buf[used++] = ' ';
	}
	memcpy(buf + used, "Accept-Encoding", sizeof("Accept-Encoding"));
	return buf;
}

/* Deflates what is at hand into buf. A live stream is flushed whenever
 * its source has nothing more now, so that its client is not kept
 * waiting (each flush costs the compression a block); any other is
 * flushed at its end only, as a buffering proxy's would be. A flush that
 * did not fit is finished by the next read. */
static ssize_t
gz_read(void *arg, void *buf, size_t cap)
{
	struct gz_source *g = arg;
	int rc;

	if (g->done)
		return 0;
	g->z.next_out = buf;
	g->z.avail_out = (uInt)RTE_MIN(cap, (size_t)UINT32_MAX);
	while (g->z.avail_out > 0) {
		int flush = g->flushing ? Z_SYNC_FLUSH : Z_NO_FLUSH;
		bool stop = false;

		if (g->in_off == g->in_len && !g->in_end && !g->flushing) {
			ssize_t r = g->inner.read(g->inner.arg, g->in,
					sizeof(g->in));

			if (r == HTTP_SOURCE_AGAIN) {
				if (g->pending && g->live)
					flush = Z_SYNC_FLUSH;
				g->pending = false;
				stop = true;
			} else if (r < 0) {
				return -1;
			} else if (r == 0) {
				g->in_end = true;
			} else {
				g->in_len = (uint32_t)r;
				g->in_off = 0;
				g->sc->in_bytes += (uint64_t)r;
				g->pending = true;
			}
		}
		if (g->in_end)
			flush = Z_FINISH;
		g->z.next_in = g->in + g->in_off;
		g->z.avail_in = g->in_len - g->in_off;
		rc = deflate(&g->z, flush);
		g->in_off = g->in_len - g->z.avail_in;
		g->flushing = flush == Z_SYNC_FLUSH && g->z.avail_out == 0;
		if (rc == Z_STREAM_END) {
			g->done = true;
			break;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR)
			return -1;
		if (stop || (flush == Z_SYNC_FLUSH && !g->flushing))
			break;
	}
	cap -= g->z.avail_out;
	g->sc->out_bytes += cap;
	if (cap == 0 && !g->done)
		return HTTP_SOURCE_AGAIN;
	return (ssize_t)cap;
}

static void
gz_done(void *arg)
{
	struct gz_source *g = arg;

	if (g->inner.done != NULL)
		g->inner.done(g->inner.arg);
	deflateEnd(&g->z);
	g->sc->streams--;
	free(g);
}

bool
compress_live(const struct http_header *f, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct http_str k = f[i].name, v = f[i].value;

		if ((http_str_eq_nocase(k, "content-type") && v.len >= 17 &&
				strncasecmp(v.p, "text/event-stream", 17) == 0) ||
				(http_str_eq_nocase(k, "x-accel-buffering") &&
				 http_str_eq_nocase(v, "no")))
			return true;
	}
	return false;
}

int
compress_source(struct serve_compress *sc, struct ewyk_source *src,
		bool live)
{
	struct gz_source *g;

	if (sc->streams >= COMPRESS_STREAMS) {
		sc->busy++;
		return -1;
	}
	g = malloc(sizeof(*g));
	if (g == NULL)
		return -1;
	memset(&g->z, 0, sizeof(g->z));
	if (deflateInit2(&g->z, COMPRESS_LEVEL, Z_DEFLATED,
			COMPRESS_WINDOW_BITS, COMPRESS_MEM_LEVEL,
			Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return -1;
	}
	g->inner = *src;
	g->sc = sc;
	g->in_end = g->done = g->pending = g->flushing = false;
	g->live = live;
	g->in_len = g->in_off = 0;
	sc->streams++;
	sc->answers++;
	*src = (struct ewyk_source){ gz_read, gz_done, g, -1 };
	return 0;
}

/* The answer's fields as a head's, to judge them as an upstream's. */
static uint32_t
answer_fields(const struct http_answer *a, struct http_header *f)
{
	uint32_t i;

	for (i = 0; i < a->nheaders; i++)
		f[i] = (struct http_header){
			{ a->hbuf + a->h[i].name, a->h[i].name_len },
			{ a->hbuf + a->h[i].value, a->h[i].value_len } };
	return a->nheaders;
}

/* body deflated whole into a new buffer; NULL when it would not be
 * smaller, or out of memory. */
static uint8_t *
deflate_all(const uint8_t *body, uint64_t len, uint64_t *out_len)
{
	z_stream z = { 0 };
	uint8_t *out;
	uLong cap;

	if (deflateInit2(&z, COMPRESS_LEVEL, Z_DEFLATED, COMPRESS_WINDOW_BITS,
			COMPRESS_MEM_LEVEL, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	cap = deflateBound(&z, (uLong)len);
	out = malloc(cap);
	if (out != NULL) {
		z.next_in = (Bytef *)(uintptr_t)body;
		z.avail_in = (uInt)len;
		z.next_out = out;
		z.avail_out = (uInt)cap;
		if (deflate(&z, Z_FINISH) != Z_STREAM_END || z.total_out >= len) {
			free(out);
			out = NULL;
		}
		*out_len = z.total_out;
	}
	deflateEnd(&z);
	return out;
}

/* The fields gzip changes: a strong ETag made weak, Vary and
 * Content-Encoding said. */
static void
gzip_fields(struct http_answer *a)
{
	char etag[256];
	uint32_t i;

	for (i = 0; i < a->nheaders; i++) {
		const char *v = a->hbuf + a->h[i].value;
		uint16_t vl = a->h[i].value_len;

		if (a->h[i].name_len != 4 ||
				strncasecmp(a->hbuf + a->h[i].name, "etag", 4) != 0 ||
				vl == 0 || v[0] != '"' || vl + 3u > sizeof(etag))
			continue;
		etag[0] = 'W';
		etag[1] = '/';
		memcpy(etag + 2, v, vl);
		http_answer_remove_field(a, i);
		http_answer_add_field(a, "ETag", 4, etag, (size_t)vl + 2);
		break;
	}
	http_answer_add_field(a, "Content-Encoding", 16, "gzip", 4);
	http_answer_add_field(a, "Vary", 4, "Accept-Encoding", 15);
}

void
compress_answer(struct serve_compress *sc, struct ewyk_request *q)
{
	struct http_answer *a = &q->ans;
	struct http_header f[HTTP_ANSWER_HEADERS];
	uint64_t out_len = 0;
	uint8_t *out;

	if (a->kind == HTTP_BODY_UNSET || !compress_accepted(q) ||
			!compress_answer_ok(a->status, f, answer_fields(a, f)))
		return;
	if (a->kind == HTTP_BODY_STREAM) {
		if (compress_source(sc, &a->src, false) != 0)
			return;
		gzip_fields(a);
		return;
	}
	if (a->len < COMPRESS_MIN)
		return;
	out = deflate_all(a->body, a->len, &out_len);
	if (out == NULL)
		return;
	sc->answers++;
	sc->in_bytes += a->len;
	sc->out_bytes += out_len;
	if (a->done != NULL)	/* what the handler lent goes back now */
		a->done(a->done_arg);
	free(a->heap);
	a->done = NULL;
	a->hold = NULL;
	a->heap = out;
	a->body = out;
	a->len = out_len;
	gzip_fields(a);
}
