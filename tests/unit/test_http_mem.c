/* SPDX-License-Identifier: BSD-3-Clause */
/* The shard's HTTP/2 memory: classes reused, growth counted, realloc and
 * calloc as libc's, the large path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "http_mem.h"
#include "http_stats.h"

static struct http_stats stats;

static void
test_a_freed_block_is_reused_without_growth(void **state)
{
	struct http_mem m;
	void *a, *b, *c;

	(void)state;
	memset(&stats, 0, sizeof(stats));
	http_mem_init(&m, &stats);
	a = http_mem_alloc(&m, 100);	/* the 128-byte class */
	assert_non_null(a);
	assert_int_equal(stats.mem_grows, 1);
	assert_int_equal(stats.mem_bytes, 128);
	http_mem_free(&m, a);
	b = http_mem_alloc(&m, 120);
	assert_ptr_equal(a, b);
	assert_int_equal(stats.mem_grows, 1);
	c = http_mem_alloc(&m, 129);	/* the next class: a new block */
	assert_ptr_not_equal(c, b);
	assert_int_equal(stats.mem_grows, 2);
	assert_int_equal(stats.mem_allocs, 3);
	http_mem_free(&m, b);
	http_mem_free(&m, c);
	http_mem_fini(&m);
}

static void
test_realloc_keeps_the_bytes(void **state)
{
	struct http_mem m;
	unsigned char *p;
	int i;

	(void)state;
	memset(&stats, 0, sizeof(stats));
	http_mem_init(&m, &stats);
	p = http_mem_alloc(&m, 40);
	for (i = 0; i < 40; i++)
		p[i] = (unsigned char)i;
	assert_ptr_equal(http_mem_realloc(&m, p, 64), p);	/* fits its class */
	p = http_mem_realloc(&m, p, 5000);
	for (i = 0; i < 40; i++)
		assert_int_equal(p[i], i);
	p = http_mem_realloc(&m, p, 3 << 20);	/* past the largest class */
	assert_non_null(p);
	for (i = 0; i < 40; i++)
		assert_int_equal(p[i], i);
	assert_int_equal(stats.mem_huge, 1);
	http_mem_free(&m, p);
	http_mem_fini(&m);
}

static void
test_calloc_zeroes_a_reused_block(void **state)
{
	struct http_mem m;
	unsigned char *p;
	size_t i;

	(void)state;
	memset(&stats, 0, sizeof(stats));
	http_mem_init(&m, &stats);
	p = http_mem_alloc(&m, 256);
	memset(p, 0xab, 256);
	http_mem_free(&m, p);
	p = http_mem_calloc(&m, 8, 32);
	for (i = 0; i < 256; i++)
		assert_int_equal(p[i], 0);
	assert_null(http_mem_calloc(&m, SIZE_MAX / 2, 4));	/* overflow */
	http_mem_free(&m, p);
	http_mem_fini(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_freed_block_is_reused_without_growth),
		cmocka_unit_test(test_realloc_keeps_the_bytes),
		cmocka_unit_test(test_calloc_zeroes_a_reused_block),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
