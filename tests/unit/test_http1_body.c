/* SPDX-License-Identifier: BSD-3-Clause */
/* The HTTP/1.1 body codec: the three framings fed whole and byte by
 * byte, copied and in place, the framing and the limits it must refuse,
 * and the chunk framer, checked against the decoder. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "http1_body.h"

static char body[1 << 16];

/* Feeds in, a chunked body, in pieces of `step` bytes (what a decode call
 * leaves is offered again with the next piece); returns the body or NULL
 * on error; *used gets the bytes consumed through the end of the body. */
static const char *
decode(const char *in, size_t step, size_t *used)
{
	struct http1_body b;
	size_t off = 0, blen = 0, avail = 0, len = strlen(in);

	http1_body_start(&b, HTTP1_BODY_CHUNKED, 0);
	while (http1_body_reading(&b)) {
		const uint8_t *d;
		size_t dl;
		long n;

		if (avail < len)
			avail = avail + step > len ? len : avail + step;
		n = http1_body_decode(&b, (const uint8_t *)in + off, avail - off,
				&d, &dl);
		if (n < 0)
			return NULL;
		/* Zero copy: the data lies in what was consumed. */
		if (dl > 0)
			assert_true(d >= (const uint8_t *)in + off &&
					d + dl <= (const uint8_t *)in + off + n);
		memcpy(body + blen, d, dl);
		blen += dl;
		off += (size_t)n;
		if (n == 0 && avail == len)
			return NULL;	/* stuck: incomplete */
	}
	assert_int_equal(b.total, blen);
	body[blen] = 0;
	*used = off;
	return body;
}

static void
test_chunked_whole_and_byte_by_byte(void **state)
{
	const char *msg = "5\r\nhello\r\n1;name=val\r\n \r\nA\r\n0123456789\r\n"
		"1b;a;b=\"c d\"\r\nabcdefghijklmnopqrstuvwxyz.\r\n"
		"0\r\nX-Trailer: 1\r\nY: 2\r\n\r\nNEXT";
	size_t step, used;

	(void)state;
	for (step = 1; step <= strlen(msg); step++) {
		const char *b = decode(msg, step, &used);

		if (b == NULL)
			fail_msg("refused in pieces of %zu", step);
		assert_string_equal(b, "hello 0123456789abcdefghijklmnopqrstuvwxyz.");
		assert_int_equal(used, strlen(msg) - 4);	/* stops before NEXT */
	}
	/* No chunk at all: the last chunk alone. */
	assert_string_equal(decode("0\r\n\r\n", 1, &used), "");
	assert_int_equal(used, 5);
}

static void
test_chunked_refuses_bad_framing(void **state)
{
	static const char *const bad[] = {
		"x\r\nhello\r\n0\r\n\r\n",		/* not hex */
		"\r\n0\r\n\r\n",			/* no digits */
		"5 \r\nhello\r\n0\r\n\r\n",		/* whitespace */
		"5\nhello\r\n0\r\n\r\n",		/* bare LF */
		"5\r\rhello\r\n0\r\n\r\n",		/* CR, no LF */
		"5\r\nhelloX\r\n0\r\n\r\n",		/* data longer than its size */
		"5\r\nhello\n0\r\n\r\n",		/* bare LF after data */
		"5;a\nb\r\nhello\r\n0\r\n\r\n",		/* bare LF in an extension */
		"5;a\001\r\nhello\r\n0\r\n\r\n",	/* a control in an extension */
		"1000000000000000\r\n",			/* 16 digits: too large */
		"0\r\nX: 1\n\r\n",			/* bare LF in a trailer */
		"0\r\nX: 1\r\r\n",			/* CR, no LF, in a trailer */
		"-1\r\n",
		";x\r\n",
	};
	size_t i, step, used;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		for (step = 1; step <= strlen(bad[i]); step++)
			if (decode(bad[i], step, &used) != NULL)
				fail_msg("accepted %s in pieces of %zu", bad[i],
						step);
}

/* The bounds: 15 hex digits, 4096 bytes of extensions and of a trailer
 * line; one more is refused. */
static void
test_chunked_limits(void **state)
{
	static char in[2 * HTTP1_CHUNK_MAX_LINE];
	struct http1_body b;
	const uint8_t *d;
	size_t dl, used;
	long n;

	(void)state;
	http1_body_start(&b, HTTP1_BODY_CHUNKED, 0);
	n = http1_body_decode(&b, (const uint8_t *)"fffffffffffffff\r\nab", 19,
			&d, &dl);
	assert_int_equal(n, 19);
	assert_int_equal(dl, 2);
	assert_true(b.left == (1ull << 60) - 1 - 2);
	http1_body_start(&b, HTTP1_BODY_CHUNKED, 0);
	assert_int_equal(http1_body_decode(&b,
			(const uint8_t *)"0000000000000001", 16, &d, &dl), -1);

	/* What follows ';' counts. */
	snprintf(in, sizeof(in), "1;%0*d\r\nx\r\n0\r\n\r\n",
			HTTP1_CHUNK_MAX_LINE, 0);
	assert_string_equal(decode(in, 7, &used), "x");
	snprintf(in, sizeof(in), "1;%0*d\r\nx\r\n0\r\n\r\n",
			HTTP1_CHUNK_MAX_LINE + 1, 0);
	assert_null(decode(in, 7, &used));
	snprintf(in, sizeof(in), "1\r\nx\r\n0\r\nX:%0*d\r\n\r\n",
			HTTP1_CHUNK_MAX_LINE - 2, 0);
	assert_string_equal(decode(in, 7, &used), "x");
	snprintf(in, sizeof(in), "1\r\nx\r\n0\r\nX:%0*d\r\n\r\n",
			HTTP1_CHUNK_MAX_LINE - 1, 0);
	assert_null(decode(in, 7, &used));
}

/* A length: byte by byte, never past its end; none for a length 0. */
static void
test_length(void **state)
{
	static const char in[] = "hello worldNEXT";
	struct http1_body b;
	const uint8_t *d;
	size_t dl, i;
	long n;

	(void)state;
	http1_body_start(&b, HTTP1_BODY_LENGTH, 11);
	for (i = 0; i < 11; i++) {
		assert_true(http1_body_reading(&b));
		n = http1_body_decode(&b, (const uint8_t *)in + i, 1, &d, &dl);
		assert_int_equal(n, 1);
		assert_int_equal(dl, 1);
		assert_ptr_equal(d, (const uint8_t *)in + i);
	}
	assert_false(http1_body_reading(&b));
	assert_int_equal(http1_body_decode(&b, (const uint8_t *)in + 11, 4, &d,
			&dl), 0);
	assert_int_equal(dl, 0);
	assert_int_equal(b.total, 11);
	/* All at once: the body and no more. */
	http1_body_start(&b, HTTP1_BODY_LENGTH, 11);
	assert_int_equal(http1_body_decode(&b, (const uint8_t *)in,
			sizeof(in) - 1, &d, &dl), 11);
	assert_int_equal(dl, 11);
	assert_false(http1_body_reading(&b));
	http1_body_start(&b, HTTP1_BODY_LENGTH, 0);
	assert_false(http1_body_reading(&b));
	/* The close cuts a length short. */
	http1_body_start(&b, HTTP1_BODY_LENGTH, 11);
	assert_int_equal(http1_body_decode(&b, (const uint8_t *)in, 5, &d,
			&dl), 5);
	assert_false(http1_body_closed(&b));
	assert_true(http1_body_reading(&b));
}

/* Until the close: everything is body, and the close ends it. */
static void
test_until_close(void **state)
{
	struct http1_body b;
	const uint8_t *d;
	size_t dl;

	(void)state;
	http1_body_start(&b, HTTP1_BODY_CLOSE, 0);
	assert_int_equal(http1_body_decode(&b, (const uint8_t *)"0\r\n\r\nab",
			7, &d, &dl), 7);
	assert_int_equal(dl, 7);
	assert_true(http1_body_reading(&b));
	assert_true(http1_body_closed(&b));
	assert_false(http1_body_reading(&b));
	/* A chunked body the close cuts short; one ended before it. */
	http1_body_start(&b, HTTP1_BODY_CHUNKED, 0);
	assert_int_equal(http1_body_decode(&b, (const uint8_t *)"5\r\nhe", 5, &d,
			&dl), 5);
	assert_false(http1_body_closed(&b));
	http1_body_start(&b, HTTP1_BODY_CHUNKED, 0);
	assert_int_equal(http1_body_decode(&b, (const uint8_t *)"0\r\n\r\n", 5,
			&d, &dl), 5);
	assert_true(http1_body_closed(&b));
}

/* Copied into a small buffer: as much as fits, framing consumed around
 * it, the rest left for the next read. */
static void
test_read_copies(void **state)
{
	static const char in[] = "3\r\nabc\r\n4;x\r\ndefg\r\n0\r\n\r\nGET";
	struct http1_body b;
	char out[16];
	size_t at = 0, used, got = 0, cap;

	(void)state;
	for (cap = 1; cap <= 8; cap++) {
		http1_body_start(&b, HTTP1_BODY_CHUNKED, 0);
		at = got = 0;
		while (http1_body_reading(&b)) {
			long n = http1_body_read(&b, (const uint8_t *)in + at,
					sizeof(in) - 1 - at, &used, out + got,
					cap);

			assert_true(n >= 0 && (size_t)n <= cap);
			assert_true(n > 0 || used > 0 || !http1_body_reading(&b));
			got += (size_t)n;
			at += used;
		}
		assert_int_equal(got, 7);
		assert_memory_equal(out, "abcdefg", 7);
		assert_string_equal(in + at, "GET");
	}
	http1_body_start(&b, HTTP1_BODY_CHUNKED, 0);
	assert_int_equal(http1_body_read(&b, (const uint8_t *)"2\r\nabXY", 7,
			&used, out, sizeof(out)), -1);
	http1_body_start(&b, HTTP1_BODY_LENGTH, 2);
	assert_int_equal(http1_body_read(&b, (const uint8_t *)"abc", 3, &used,
			out, sizeof(out)), 2);
	assert_int_equal(used, 2);
}

/* Size lines in lower-case hex, no leading zeros; a chunk framed in
 * place reads back through the decoder. */
static void
test_chunk_framer(void **state)
{
	static const struct {
		uint64_t n;
		const char *line;
	} lines[] = {
		{ 1, "1\r\n" }, { 10, "a\r\n" }, { 15, "f\r\n" }, { 16, "10\r\n" },
		{ 16384, "4000\r\n" }, { 0xabcdef, "abcdef\r\n" },
		{ UINT64_MAX, "ffffffffffffffff\r\n" },
	};
	static uint8_t wire[1 << 16], buf[4096 + HTTP1_CHUNK_FRAMING];
	char line[HTTP1_CHUNK_HEAD_MAX + 1];
	size_t i, n, len, at = 0, used;
	const char *back;

	(void)state;
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		n = http1_chunk_head(line, lines[i].n);
		line[n] = 0;
		assert_true(n <= HTTP1_CHUNK_HEAD_MAX);
		assert_string_equal(line, lines[i].line);
	}
	for (n = 1; n <= 4096; n = n * 3 + 1) {
		uint8_t *data = buf + HTTP1_CHUNK_HEAD_MAX, *start;

		for (i = 0; i < n; i++)
			data[i] = (uint8_t)('a' + (n + i) % 26);
		start = http1_chunk_frame(data, n, &len);
		assert_true(start >= buf);
		assert_true(start + len <= buf + sizeof(buf));
		memcpy(wire + at, start, len);
		at += len;
	}
	memcpy(wire + at, HTTP1_LAST_CHUNK "\0", HTTP1_LAST_CHUNK_LEN + 1);
	back = decode((const char *)wire, 5, &used);
	assert_non_null(back);
	assert_int_equal(used, at + HTTP1_LAST_CHUNK_LEN);
	for (n = 1, at = 0; n <= 4096; n = n * 3 + 1)
		for (i = 0; i < n; i++, at++)
			assert_int_equal(back[at], 'a' + (n + i) % 26);
	assert_int_equal(strlen(back), at);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunked_whole_and_byte_by_byte),
		cmocka_unit_test(test_chunked_refuses_bad_framing),
		cmocka_unit_test(test_chunked_limits),
		cmocka_unit_test(test_length),
		cmocka_unit_test(test_until_close),
		cmocka_unit_test(test_read_copies),
		cmocka_unit_test(test_chunk_framer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
