/* SPDX-License-Identifier: BSD-3-Clause */
/* The chunked decoder: whole and split input, extensions and trailers,
 * and the framing it must refuse. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "http1_chunked.h"

/* Feeds in with pieces of `step` bytes; returns the body or NULL on error;
 * *used gets the bytes consumed through the end of the body. */
static const char *
decode(const char *in, size_t step, size_t *used)
{
	static char body[4096];
	struct chunked c;
	size_t off = 0, blen = 0, avail = 0, len = strlen(in);

	chunked_init(&c);
	while (c.state != CHUNK_DONE) {
		const char *d;
		size_t dl;
		long n;

		if (avail < len)
			avail = avail + step > len ? len : avail + step;
		n = chunked_decode(&c, in + off, avail - off, &d, &dl);
		if (n < 0)
			return NULL;
		memcpy(body + blen, d, dl);
		blen += dl;
		off += (size_t)n;
		if (n == 0 && avail == len)
			return NULL;	/* stuck: incomplete */
	}
	body[blen] = 0;
	*used = off;
	return body;
}

static void
test_decodes_whole_and_split(void **state)
{
	const char *msg = "5\r\nhello\r\n1;name=val\r\n \r\nA\r\n0123456789\r\n"
		"0\r\nX-Trailer: 1\r\n\r\nNEXT";
	size_t step, used;

	(void)state;
	for (step = 1; step <= strlen(msg); step++) {
		const char *b = decode(msg, step, &used);

		assert_non_null(b);
		assert_string_equal(b, "hello 0123456789");
		assert_int_equal(used, strlen(msg) - 4);	/* stops before NEXT */
	}
}

static void
test_refuses_bad_framing(void **state)
{
	static const char *const bad[] = {
		"x\r\nhello\r\n0\r\n\r\n",		/* not hex */
		"\r\n0\r\n\r\n",			/* no digits */
		"5 \r\nhello\r\n0\r\n\r\n",		/* whitespace */
		"5\nhello\r\n0\r\n\r\n",		/* bare LF */
		"5\r\nhelloX\r\n0\r\n\r\n",		/* data longer than its size */
		"1000000000000000\r\n",			/* 16 digits: too large */
		"0\r\nX: 1\n\r\n",			/* bare LF in a trailer */
		"-1\r\n",
	};
	size_t i, used;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (decode(bad[i], 1, &used) != NULL)
			fail_msg("accepted %s", bad[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decodes_whole_and_split),
		cmocka_unit_test(test_refuses_bad_framing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
