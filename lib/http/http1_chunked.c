/* SPDX-License-Identifier: BSD-3-Clause */
#include "http1_chunked.h"

static int
hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

long
chunked_decode(struct chunked *c, const char *in, size_t len,
		const char **data, size_t *data_len)
{
	size_t i = 0;

	*data = NULL;
	*data_len = 0;
	while (i < len && c->state != CHUNK_DONE) {
		char ch = in[i];
		int h;

		switch (c->state) {
		case CHUNK_SIZE:
			h = hexval(ch);
			if (h >= 0) {
				if (++c->digits > CHUNKED_MAX_DIGITS)
					return -1;
				c->left = c->left << 4 | (uint64_t)h;
			} else if (c->digits == 0) {
				return -1;	/* a size needs a digit */
			} else if (ch == ';') {
				c->state = CHUNK_EXT;
				c->line_len = 0;
			} else if (ch == '\r') {
				c->state = CHUNK_SIZE_LF;
			} else {
				return -1;	/* no whitespace, no bare LF */
			}
			i++;
			break;
		case CHUNK_EXT:
			if (ch == '\r')
				c->state = CHUNK_SIZE_LF;
			else if (ch == '\n' || ++c->line_len > CHUNKED_MAX_LINE ||
					((unsigned char)ch < 0x20 && ch != '\t'))
				return -1;
			i++;
			break;
		case CHUNK_SIZE_LF:
			if (ch != '\n')
				return -1;
			c->digits = 0;
			c->line_len = 0;
			c->state = c->left == 0 ? CHUNK_TRAILER : CHUNK_DATA;
			i++;
			break;
		case CHUNK_DATA: {
			size_t n = len - i < c->left ? len - i : (size_t)c->left;

			*data = in + i;
			*data_len = n;
			c->left -= n;
			c->total += n;
			i += n;
			if (c->left == 0)
				c->state = CHUNK_DATA_CR;
			return (long)i;	/* one run of data per call */
		}
		case CHUNK_DATA_CR:
			if (ch != '\r')
				return -1;
			c->state = CHUNK_DATA_LF;
			i++;
			break;
		case CHUNK_DATA_LF:
			if (ch != '\n')
				return -1;
			c->state = CHUNK_SIZE;
			i++;
			break;
		case CHUNK_TRAILER:
			/* Trailer fields are read and dropped; an empty line
			 * ends the message. */
			if (ch == '\r')
				c->state = CHUNK_TRAILER_LF;
			else if (ch == '\n' || ++c->line_len > CHUNKED_MAX_LINE)
				return -1;
			i++;
			break;
		case CHUNK_TRAILER_LF:
			if (ch != '\n')
				return -1;
			c->state = c->line_len == 0 ? CHUNK_DONE : CHUNK_TRAILER;
			c->line_len = 0;
			i++;
			break;
		case CHUNK_DONE:
			break;
		}
	}
	return (long)i;
}
