/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: lib/http's HTTP/2 server. The client's connection
 * preface is sent first; the input's records (fuzz_http.h) carry the raw
 * bytes after it, on the scripted transport of the unit tests.
 * Invariants, besides no crash and no sanitizer report:
 *  - every answer is given back exactly once and every stream freed when
 *    the connection goes (the harness counts answers, ASan sees the rest);
 *    nothing is written after close() or abort();
 *  - every connection ends, closed or reset;
 *  - what the server wrote parses as HTTP/2 (RFC 9113): its SETTINGS
 *    first; frames no longer than the client allows, of lengths their type
 *    allows, on the streams their type allows; responses only on streams
 *    the client opened, nothing more on a stream after END_STREAM or
 *    RST_STREAM, nothing new after GOAWAY but for streams it still
 *    serves; header blocks whole (CONTINUATION with nothing between) that
 *    nghttp2's own HPACK decoder takes, starting with a valid :status; an
 *    X-Seq answer on the stream it names.
 * A client session would take the server's answers on streams it never
 * opened (the fuzzer opens them) for a protocol error, so the frames are
 * read here and the header blocks decoded by nghttp2's HPACK inflater.
 */
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "fuzz_http.h"

#define PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define MAX_STREAMS 1024

enum { F_DATA, F_HEADERS, F_PRIORITY, F_RST, F_SETTINGS, F_PUSH, F_PING,
	F_GOAWAY, F_WINDOW, F_CONTINUATION };
#define FL_END_STREAM 0x1
#define FL_ACK 0x1
#define FL_END_HEADERS 0x4
#define FL_PADDED 0x8
#define FL_PRIORITY 0x20

static uint32_t
be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t
be31(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
			(uint32_t)p[2] << 8 | p[3]) & 0x7fffffff;
}

/* What the client said, read from the frames the fuzzer sent (as far as
 * they frame): the largest frame it allows, the streams it opened. */
struct client {
	uint32_t max_frame;
	uint32_t max_stream;	/* highest stream id its HEADERS opened */
	uint8_t buf[9];
	uint32_t have;		/* bytes of the frame header in buf */
	uint64_t skip;		/* of the payload still to come */
	uint8_t settings[6];
	uint32_t set_have;
	bool in_settings;
};

static void
client_bytes(struct client *cl, const uint8_t *p, size_t len)
{
	while (len > 0) {
		if (cl->skip > 0) {
			size_t n = len < cl->skip ? len : (size_t)cl->skip;
			size_t i;

			for (i = 0; cl->in_settings && i < n; i++) {
				cl->settings[cl->set_have++] = p[i];
				if (cl->set_have == 6) {
					uint32_t v = be31(cl->settings + 2) |
						(uint32_t)(cl->settings[2] & 0x80) << 24;

					cl->set_have = 0;
					if (cl->settings[0] == 0 && cl->settings[1] == 5 &&
							v > cl->max_frame &&
							v < (1u << 24))
						cl->max_frame = v;
				}
			}
			cl->skip -= n;
			p += n;
			len -= n;
			continue;
		}
		cl->buf[cl->have++] = *p++;
		len--;
		if (cl->have < 9)
			continue;
		cl->have = 0;
		cl->skip = be24(cl->buf);
		cl->in_settings = cl->buf[3] == F_SETTINGS &&
			!(cl->buf[4] & FL_ACK);
		cl->set_have = 0;
		if (cl->buf[3] == F_HEADERS && be31(cl->buf + 5) > cl->max_stream)
			cl->max_stream = be31(cl->buf + 5);
	}
}

struct stream {
	uint32_t id;
	bool headers;	/* a final :status came */
	bool ended;	/* END_STREAM or RST_STREAM */
};

struct out_check {
	const struct client *cl;
	struct stream st[MAX_STREAMS];
	unsigned int n;
	nghttp2_hd_inflater *hd;
	uint8_t *block;		/* a header block being gathered */
	size_t block_len;
	uint32_t block_stream;	/* 0: none */
	bool block_end_stream;
	bool goaway;
	uint32_t goaway_last;
};

static struct stream *
stream_of(struct out_check *oc, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < oc->n; i++)
		if (oc->st[i].id == id)
			return &oc->st[i];
	fh_check(oc->n < MAX_STREAMS, "too many streams");
	oc->st[oc->n].id = id;
	return &oc->st[oc->n++];
}

/* A whole header block, on stream id. */
static void
header_block(struct out_check *oc, uint32_t id, bool end_stream)
{
	struct stream *st = stream_of(oc, id);
	const uint8_t *in = oc->block;
	size_t left = oc->block_len;
	int status = -1;
	bool first = true;

	fh_check(!st->ended, "HEADERS on stream %u after its end", id);
	for (;;) {
		nghttp2_nv nv;
		int fl = 0;
		ssize_t n = nghttp2_hd_inflate_hd2(oc->hd, &nv, &fl, in, left, 1);

		fh_check(n >= 0, "HPACK: %s on stream %u",
				nghttp2_strerror((int)n), id);
		in += n;
		left -= (size_t)n;
		if (fl & NGHTTP2_HD_INFLATE_EMIT) {
			if (nv.namelen == 7 && memcmp(nv.name, ":status", 7) == 0) {
				fh_check(first && nv.valuelen == 3,
						":status on stream %u", id);
				status = atoi((const char *)nv.value);
			} else if (nv.namelen == 5 &&
					memcmp(nv.name, "x-seq", 5) == 0) {
				fh_check(strtoul((const char *)nv.value, NULL,
						10) == id, "x-seq %.*s on stream %u",
						(int)nv.valuelen, nv.value, id);
			}
			fh_check(nv.namelen > 0 && (first || nv.name[0] != ':'),
					"header %.*s on stream %u", (int)nv.namelen,
					nv.name, id);
			first = false;
		}
		if (fl & NGHTTP2_HD_INFLATE_FINAL) {
			nghttp2_hd_inflate_end_headers(oc->hd);
			break;
		}
		if (n == 0 && left == 0)
			break;
	}
	fh_check(left == 0, "header block of stream %u not taken whole", id);
	if (!st->headers) {
		fh_check(status >= 100 && status <= 599,
				"no valid :status on stream %u", id);
		if (status >= 200)
			st->headers = true;
	} else {
		fh_check(status == -1 && end_stream, "second header block "
				"on stream %u is not trailers", id);
	}
	if (end_stream)
		st->ended = true;
	oc->block_len = 0;
	oc->block_stream = 0;
}

static void
add_fragment(struct out_check *oc, const uint8_t *p, size_t len)
{
	uint8_t *b = realloc(oc->block, oc->block_len + len + 1);

	fh_check(b != NULL, "no memory");
	memcpy(b + oc->block_len, p, len);
	oc->block = b;
	oc->block_len += len;
}

/* A response stream: one the client opened. */
static void
check_client_stream(struct out_check *oc, uint32_t id, const char *what)
{
	fh_check(id != 0 && (id & 1) && id <= oc->cl->max_stream,
			"%s on stream %u, not one the client opened", what, id);
}

static void
frame(struct out_check *oc, const uint8_t *h, const uint8_t *p)
{
	uint32_t len = be24(h), id = be31(h + 5);
	uint8_t type = h[3], fl = h[4];
	uint32_t pad = 0;

	fh_check(len <= oc->cl->max_frame, "frame of %u bytes", len);
	if (oc->block_stream != 0)
		fh_check(type == F_CONTINUATION && id == oc->block_stream,
				"frame type %u amid a header block", type);
	switch (type) {
	case F_DATA:
		check_client_stream(oc, id, "DATA");
		fh_check(stream_of(oc, id)->headers && !stream_of(oc, id)->ended,
				"DATA on stream %u before its HEADERS or after its end",
				id);
		if (fl & FL_END_STREAM)
			stream_of(oc, id)->ended = true;
		break;
	case F_HEADERS:
		check_client_stream(oc, id, "HEADERS");
		fh_check(!oc->goaway || id <= oc->goaway_last,
				"HEADERS on stream %u after GOAWAY (last %u)", id,
				oc->goaway_last);
		if (fl & FL_PADDED) {
			fh_check(len >= 1 && p[0] < len, "HEADERS padding");
			pad = p[0] + 1u;
		}
		if (fl & FL_PRIORITY) {
			fh_check(len >= pad + 5, "HEADERS priority");
			pad += 5;
		}
		add_fragment(oc, p + ((fl & FL_PADDED) ? 1 : 0) +
				((fl & FL_PRIORITY) ? 5 : 0), len - pad);
		oc->block_stream = id;
		oc->block_end_stream = fl & FL_END_STREAM;
		if (fl & FL_END_HEADERS)
			header_block(oc, id, oc->block_end_stream);
		break;
	case F_CONTINUATION:
		fh_check(oc->block_stream == id && id != 0,
				"CONTINUATION on stream %u out of a header block", id);
		add_fragment(oc, p, len);
		if (fl & FL_END_HEADERS)
			header_block(oc, id, oc->block_end_stream);
		break;
	case F_RST:
		fh_check(len == 4 && id != 0, "RST_STREAM of %u bytes on %u", len,
				id);
		stream_of(oc, id)->ended = true;
		break;
	case F_SETTINGS:
		fh_check(id == 0 && len % 6 == 0 && (!(fl & FL_ACK) || len == 0),
				"SETTINGS");
		break;
	case F_PING:
		fh_check(id == 0 && len == 8 && (fl & FL_ACK),
				"PING: only answers to the client's");
		break;
	case F_GOAWAY:
		fh_check(id == 0 && len >= 8, "GOAWAY");
		fh_check(!oc->goaway || be31(p) <= oc->goaway_last,
				"GOAWAY's last stream grew");
		oc->goaway = true;
		oc->goaway_last = be31(p);
		break;
	case F_WINDOW:
		fh_check(len == 4 && be31(p) > 0, "WINDOW_UPDATE");
		break;
	default:
		fh_check(false, "frame type %u from a server", type);
	}
}

static void
check_output(const struct fh *f, const struct client *cl)
{
	const struct hh_conn *k = f->k[0];
	struct out_check *oc = calloc(1, sizeof(*oc));
	size_t at = 0;

	fh_check(oc != NULL, "no memory");
	oc->cl = cl;
	fh_check(nghttp2_hd_inflate_new(&oc->hd) == 0, "no memory");
	/* Any table size the client may have allowed. */
	nghttp2_hd_inflate_change_table_size(oc->hd, 1u << 30);
	if (k->out_len > 0)
		fh_check(k->out_len >= 9 && k->out[3] == F_SETTINGS &&
				!(k->out[4] & FL_ACK),
				"the server's preface is not its SETTINGS");
	while (k->out_len - at >= 9) {
		uint32_t len = be24(k->out + at);

		if (k->out_len - at - 9 < len)
			break;
		frame(oc, k->out + at, k->out + at + 9);
		at += 9 + len;
	}
	/* All of it, unless a reset cut it. */
	fh_check(at == k->out_len || k->aborted || f->reset[0],
			"%u bytes of a frame left", k->out_len - (uint32_t)at);
	fh_check(oc->block_stream == 0 || k->aborted || f->reset[0],
			"a header block left open");
	nghttp2_hd_inflate_del(oc->hd);
	free(oc->block);
	free(oc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct client cl = { .max_frame = 16384 };
	struct fh f;
	size_t at = 0;

	/* The client's bytes, as the records carry them (one connection). */
	while (at < size) {
		uint8_t op = data[at++];
		uint8_t arg = at < size ? data[at++] : 0;

		if ((op & 7) <= 3) {
			size_t len = arg + (size_t)(op >> 4 & 3) * 256;

			len = len < size - at ? len : size - at;
			if (!(op & 8))
				client_bytes(&cl, data + at, len);
			at += len;
		}
	}
	fh_start(&f, PREFACE, sizeof(PREFACE) - 1);
	fh_play(&f, data, size);
	check_output(&f, &cl);
	fh_end(&f);
	return 0;
}
