/* SPDX-License-Identifier: BSD-3-Clause */
/* Sites: paths in RFC 3986's normal form, and the site a Host names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "http_site.h"

static void
normalized(const char *in, const char *want)
{
	char buf[256];
	size_t n;

	snprintf(buf, sizeof(buf), "%s", in);
	n = http_path_normalize(buf, strlen(buf));
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

static void
test_path_normal_form(void **state)
{
	(void)state;
	normalized("/", "/");
	normalized("/a/b", "/a/b");
	normalized("/a/./b", "/a/b");
	normalized("/a/../b", "/b");
	normalized("/a/b/..", "/a/");
	normalized("/a/b/.", "/a/b/");
	normalized("/..", "/");
	normalized("/../../a", "/a");
	normalized("//a///b//", "/a/b/");
	normalized("/%61%62c", "/abc");		/* unreserved: decoded */
	normalized("/%2e%2E/x", "/x");		/* and then a dot segment */
	normalized("/a%2Fb", "/a%2Fb");		/* reserved: kept */
	normalized("/a%20b", "/a%20b");
	normalized("/a%4", "/a%4");		/* a short escape: kept */
	normalized("/.a/..b/...", "/.a/..b/...");	/* not dot segments */
	normalized("*", "*");
}

static void
test_host_chooses_site(void **state)
{
	const char *names[] = { "dflt", "a", "b" };
	struct http_sites s;
	int i;

	(void)state;
	assert_int_equal(http_sites_init(&s, 3, names, NULL), 0);
	assert_int_equal(http_sites_host_add(&s, "a.test", 1), 0);
	assert_int_equal(http_sites_host_add(&s, "*.b.test", 2), 0);
	assert_int_equal(http_sites_host_add(&s, "b.test", 2), 0);
	assert_int_equal(http_sites_host_add(&s, "A.test", 2), -EEXIST);
	/* Enough names to grow the index a few times. */
	for (i = 0; i < 200; i++) {
		char h[32];

		snprintf(h, sizeof(h), "h%d.test", i);
		assert_int_equal(http_sites_host_add(&s, h, 1 + (i & 1)), 0);
	}
#define SITE(host) http_sites_find(&s, host, strlen(host))->name
	assert_string_equal(SITE("a.test"), "a");
	assert_string_equal(SITE("A.TEST:8080"), "a");
	assert_string_equal(SITE("a.test."), "a");
	assert_string_equal(SITE("b.test"), "b");
	assert_string_equal(SITE("x.b.test"), "b");
	assert_string_equal(SITE("y.x.b.test"), "dflt");	/* one label only */
	assert_string_equal(SITE(".b.test"), "dflt");
	assert_string_equal(SITE("c.test"), "dflt");
	assert_string_equal(SITE(""), "dflt");
	assert_string_equal(SITE("[2001:2::2]:80"), "dflt");
	assert_string_equal(SITE("h199.test"), "b");
	assert_string_equal(SITE("h198.test"), "a");
#undef SITE
	http_sites_free(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_normal_form),
		cmocka_unit_test(test_host_chooses_site),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
