/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Incremental decoder of the chunked transfer coding (RFC 9112 7.1), for
 * request bodies. It never copies: each call reports how many input bytes
 * it consumed and where the next run of body data lies in the input.
 */
#ifndef EWYK_HTTP1_CHUNKED_H
#define EWYK_HTTP1_CHUNKED_H

#include <stddef.h>
#include <stdint.h>

enum chunked_state {
	CHUNK_SIZE,		/* hex digits */
	CHUNK_EXT,		/* ;extensions up to CRLF */
	CHUNK_SIZE_LF,
	CHUNK_DATA,
	CHUNK_DATA_CR,
	CHUNK_DATA_LF,
	CHUNK_TRAILER,		/* trailer lines up to an empty one */
	CHUNK_TRAILER_LF,
	CHUNK_DONE,
};

struct chunked {
	enum chunked_state state;
	uint64_t left;		/* data bytes left in this chunk */
	uint32_t digits;
	uint32_t line_len;	/* bytes of the current trailer line */
	uint64_t total;		/* body bytes so far */
};

#define CHUNKED_MAX_DIGITS 15	/* below 2^60 bytes */
#define CHUNKED_MAX_LINE 4096	/* extensions and trailer lines */

static inline void
chunked_init(struct chunked *c)
{
	c->state = CHUNK_SIZE;
	c->left = 0;
	c->digits = 0;
	c->line_len = 0;
	c->total = 0;
}

/*
 * Decodes from in[0..len). Returns the input consumed (>= 0) and sets
 * *data and *data_len to the body data found in the consumed part (at most one run
 * per call; *data_len is 0 when the call consumed framing only). Returns
 * -1 on malformed framing. The body ends when c->state is CHUNK_DONE.
 */
long chunked_decode(struct chunked *c, const char *in, size_t len,
		const char **data, size_t *data_len);

#endif /* EWYK_HTTP1_CHUNKED_H */
