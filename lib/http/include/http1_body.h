/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/1.1 message bodies (RFC 9112 6, 7.1), both ways, for every body
 * lib/http moves: one decoder of the three framings (a length, chunked
 * with its extensions and trailers, or until the close), incremental and
 * zero copy, for the request bodies the server takes in and the answers
 * the upstream client reads; and one chunk framer, for the answers the
 * server streams and the request bodies the upstream client sends
 * chunked.
 */
#ifndef EWYK_HTTP1_BODY_H
#define EWYK_HTTP1_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum http1_framing {
	HTTP1_BODY_NONE,	/* no body, or its end is read */
	HTTP1_BODY_LENGTH,	/* Content-Length */
	HTTP1_BODY_CHUNKED,
	HTTP1_BODY_CLOSE,	/* until the sender closes (an answer's) */
};

#define HTTP1_CHUNK_MAX_DIGITS 15	/* a chunk below 2^60 bytes */
#define HTTP1_CHUNK_MAX_LINE 4096	/* extensions, and a trailer line */

/* Where in its framing a chunked body's decoder is. */
enum http1_chunk_state {
	HTTP1_CHUNK_SIZE,	/* hex digits */
	HTTP1_CHUNK_EXT,	/* ;extensions up to CRLF */
	HTTP1_CHUNK_SIZE_LF,
	HTTP1_CHUNK_DATA,
	HTTP1_CHUNK_DATA_CR,
	HTTP1_CHUNK_DATA_LF,
	HTTP1_CHUNK_TRAILER,	/* trailer lines up to an empty one */
	HTTP1_CHUNK_TRAILER_LF,
};

/* A body being read. */
struct http1_body {
	uint8_t framing;	/* enum http1_framing */
	uint8_t chunk;		/* enum http1_chunk_state */
	uint32_t digits;	/* of the chunk size */
	uint32_t line_len;	/* of the extensions, or a trailer line */
	uint64_t left;		/* of the length, or of the chunk */
	uint64_t total;		/* body bytes decoded */
};

/* Starts a body of that framing; length is a HTTP1_BODY_LENGTH body's
 * (0: none at all). */
void http1_body_start(struct http1_body *b, enum http1_framing framing,
		uint64_t length);

/* Whether a body is still being read: not ended, not stopped. */
static inline bool
http1_body_reading(const struct http1_body *b)
{
	return b->framing != HTTP1_BODY_NONE;
}

/* Stops reading (a body skipped, or one that broke). */
static inline void
http1_body_stop(struct http1_body *b)
{
	b->framing = HTTP1_BODY_NONE;
}

/*
 * Decodes from in[0..len) without copying: returns the input consumed
 * (0 when more is needed) and sets *data and *data_len to the body data
 * in it (at most one run per call; *data_len is 0 when only framing was
 * consumed), or returns -1 when the chunked framing is bad. Past the
 * body's end nothing is consumed.
 */
long http1_body_decode(struct http1_body *b, const uint8_t *in, size_t len,
		const uint8_t **data, size_t *data_len);

/* The same, copied: at most cap body bytes into buf, the framing around
 * them consumed. Returns the bytes copied and *used the input consumed,
 * or -1 on bad framing. */
long http1_body_read(struct http1_body *b, const uint8_t *in, size_t len,
		size_t *used, void *buf, size_t cap);

/* The sender closed, and all it sent is decoded: true when that ends the
 * body (one read until the close), or it had ended; false when the close
 * cuts it short. */
bool http1_body_closed(struct http1_body *b);

/* The chunk framer. A chunk's size line is at most HTTP1_CHUNK_HEAD_MAX
 * bytes; a chunk's framing at most HTTP1_CHUNK_FRAMING. */
#define HTTP1_CHUNK_HEAD_MAX 18		/* 16 hex digits, CRLF */
#define HTTP1_CHUNK_FRAMING (HTTP1_CHUNK_HEAD_MAX + 2)
#define HTTP1_LAST_CHUNK "0\r\n\r\n"	/* the last chunk, no trailers */
#define HTTP1_LAST_CHUNK_LEN 5

/* Writes the size line of a chunk of n bytes (n > 0) at out; returns its
 * length. */
size_t http1_chunk_head(char *out, uint64_t n);
/* Frames the n bytes at data (n > 0) as one chunk, in place: its size
 * line goes in the HTTP1_CHUNK_HEAD_MAX bytes before data, its CRLF after
 * (the caller leaves room for both). Returns where the chunk starts, and
 * its length in *len. */
uint8_t *http1_chunk_frame(uint8_t *data, size_t n, size_t *len);

#endif /* EWYK_HTTP1_BODY_H */
