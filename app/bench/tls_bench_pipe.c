/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One direction of an in-memory connection: a flat buffer that the
 * writer appends to and the reader consumes from, moved back to its
 * start when it would overflow.
 */

#include <string.h>

#include "tls_bench.h"

size_t
tb_pipe_write(struct tb_pipe *p, const void *data, size_t len)
{
	if (p->rd == p->wr)
		p->rd = p->wr = 0;
	if (len > TB_PIPE_CAP - p->wr && p->rd > 0) {
		memmove(p->buf, p->buf + p->rd, p->wr - p->rd);
		p->wr -= p->rd;
		p->rd = 0;
	}
	if (len > TB_PIPE_CAP - p->wr)
		len = TB_PIPE_CAP - p->wr;
	memcpy(p->buf + p->wr, data, len);
	p->wr += len;
	return len;
}

size_t
tb_pipe_read(struct tb_pipe *p, void *buf, size_t cap)
{
	size_t n = p->wr - p->rd;

	if (n > cap)
		n = cap;
	memcpy(buf, p->buf + p->rd, n);
	p->rd += n;
	return n;
}
