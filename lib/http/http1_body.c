/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "http1_body.h"
#include "http_priv.h"

void
http1_body_start(struct http1_body *b, enum http1_framing framing,
		uint64_t length)
{
	if (framing == HTTP1_BODY_LENGTH && length == 0)
		framing = HTTP1_BODY_NONE;
	b->framing = (uint8_t)framing;
	b->chunk = HTTP1_CHUNK_SIZE;
	b->digits = 0;
	b->line_len = 0;
	b->left = framing == HTTP1_BODY_LENGTH ? length : 0;
	b->total = 0;
}

/* Data of at most n bytes at in, of a length or a chunk: it is consumed. */
static size_t
take(struct http1_body *b, const uint8_t *in, size_t n,
		const uint8_t **data, size_t *data_len)
{
	if (b->framing != HTTP1_BODY_CLOSE && n > b->left)
		n = (size_t)b->left;
	*data = in;
	*data_len = n;
	b->total += n;
	if (b->framing != HTTP1_BODY_CLOSE)
		b->left -= n;
	return n;
}

/* RFC 9112 7.1: chunk sizes in hex, extensions and trailer fields read
 * and dropped, CRLF everywhere (no bare LF, no whitespace). */
static long
chunked(struct http1_body *b, const uint8_t *in, size_t len,
		const uint8_t **data, size_t *data_len)
{
	size_t i = 0;

	while (i < len) {
		uint8_t ch = in[i];
		int h;

		switch (b->chunk) {
		case HTTP1_CHUNK_SIZE:
			h = http_hex_digit(ch);
			if (h >= 0) {
				if (++b->digits > HTTP1_CHUNK_MAX_DIGITS)
					return -1;
				b->left = b->left << 4 | (uint64_t)h;
			} else if (b->digits == 0) {
				return -1;	/* a size needs a digit */
			} else if (ch == ';') {
				b->chunk = HTTP1_CHUNK_EXT;
				b->line_len = 0;
			} else if (ch == '\r') {
				b->chunk = HTTP1_CHUNK_SIZE_LF;
			} else {
				return -1;	/* no whitespace, no bare LF */
			}
			break;
		case HTTP1_CHUNK_EXT:
			if (ch == '\r')
				b->chunk = HTTP1_CHUNK_SIZE_LF;
			else if (ch == '\n' || ++b->line_len > HTTP1_CHUNK_MAX_LINE ||
					(ch < 0x20 && ch != '\t'))
				return -1;
			break;
		case HTTP1_CHUNK_SIZE_LF:
			if (ch != '\n')
				return -1;
			b->digits = 0;
			b->line_len = 0;
			b->chunk = b->left == 0 ? HTTP1_CHUNK_TRAILER : HTTP1_CHUNK_DATA;
			break;
		case HTTP1_CHUNK_DATA:
			i += take(b, in + i, len - i, data, data_len);
			if (b->left == 0)
				b->chunk = HTTP1_CHUNK_DATA_CR;
			return (long)i;	/* one run of data per call */
		case HTTP1_CHUNK_DATA_CR:
			if (ch != '\r')
				return -1;
			b->chunk = HTTP1_CHUNK_DATA_LF;
			break;
		case HTTP1_CHUNK_DATA_LF:
			if (ch != '\n')
				return -1;
			b->chunk = HTTP1_CHUNK_SIZE;
			break;
		case HTTP1_CHUNK_TRAILER:
			if (ch == '\r')
				b->chunk = HTTP1_CHUNK_TRAILER_LF;
			else if (ch == '\n' || ++b->line_len > HTTP1_CHUNK_MAX_LINE)
				return -1;
			break;
		case HTTP1_CHUNK_TRAILER_LF:
			if (ch != '\n')
				return -1;
			if (b->line_len == 0) {
				b->framing = HTTP1_BODY_NONE;	/* the empty line */
				return (long)i + 1;
			}
			b->chunk = HTTP1_CHUNK_TRAILER;
			b->line_len = 0;
			break;
		}
		i++;
	}
	return (long)i;
}

long
http1_body_decode(struct http1_body *b, const uint8_t *in, size_t len,
		const uint8_t **data, size_t *data_len)
{
	size_t n;

	*data = NULL;
	*data_len = 0;
	switch (b->framing) {
	case HTTP1_BODY_CHUNKED:
		return chunked(b, in, len, data, data_len);
	case HTTP1_BODY_LENGTH:
		n = take(b, in, len, data, data_len);
		if (b->left == 0)
			b->framing = HTTP1_BODY_NONE;
		return (long)n;
	case HTTP1_BODY_CLOSE:
		return (long)take(b, in, len, data, data_len);
	default:
		return 0;
	}
}

long
http1_body_read(struct http1_body *b, const uint8_t *in, size_t len,
		size_t *used, void *buf, size_t cap)
{
	uint8_t *to = buf;
	size_t got = 0, at = 0;

	while (got < cap && http1_body_reading(b)) {
		const uint8_t *d;
		size_t dl;
		/* No more input than room: data never outgrows its input. */
		size_t in_len = len - at < cap - got ? len - at : cap - got;
		long n = http1_body_decode(b, in + at, in_len, &d, &dl);

		if (n < 0)
			return -1;
		if (dl > 0)
			memcpy(to + got, d, dl);
		got += dl;
		at += (size_t)n;
		if (n == 0)
			break;
	}
	*used = at;
	return (long)got;
}

bool
http1_body_closed(struct http1_body *b)
{
	if (b->framing == HTTP1_BODY_CLOSE)
		b->framing = HTTP1_BODY_NONE;
	return b->framing == HTTP1_BODY_NONE;
}

/* The chunk framer ------------------------------------------------------- */

size_t
http1_chunk_head(char *out, uint64_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t digits = (size_t)(64 - __builtin_clzll(n | 1) + 3) / 4, i;

	for (i = digits; i-- > 0; n >>= 4)
		out[i] = hex[n & 15];
	out[digits] = '\r';
	out[digits + 1] = '\n';
	return digits + 2;
}

uint8_t *
http1_chunk_frame(uint8_t *data, size_t n, size_t *len)
{
	char line[HTTP1_CHUNK_HEAD_MAX];
	size_t hl = http1_chunk_head(line, n);
	uint8_t *start = data - hl;

	memcpy(start, line, hl);
	data[n] = '\r';
	data[n + 1] = '\n';
	*len = hl + n + 2;
	return start;
}
