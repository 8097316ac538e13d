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

static enum ewyk_result
nothing(struct ewyk_request *q, void *ctx)
{
	(void)q;
	(void)ctx;
	return EWYK_ANSWERED;
}

/* A route of r at path; flags HTTP_ROUTE_BOUNDARY as a configured one. */
static void
route(struct ewyk_router *r, const char *path, enum ewyk_match match,
		uint32_t flags)
{
	struct ewyk_route rt = { .path = path, .match = match,
		.methods = EWYK_METHOD_GET, .type = EWYK_HANDLER_NON_BLOCKING,
		.handler = nothing };

	assert_int_equal(http_route_add(r, &rt, flags), 0);
}

/* The route a GET of path with Host host takes: its path, or "-". */
static const char *
lookup(const struct http_sites *s, const char *host, const char *path)
{
	static struct http_head r;

	memset(&r, 0, sizeof(r));
	r.method = HTTP_GET;
	r.path = (struct http_str){ path, (uint32_t)strlen(path) };
	r.nheaders = 1;
	r.headers[0] = (struct http_header){ { "Host", 4 },
		{ host, (uint32_t)strlen(host) } };
	const struct http_route *rt = http_route_lookup(NULL, s, &r, NULL, 0);

	return rt == NULL ? "-" : rt->handler == nothing ? rt->path : "other";
}

static void
test_route_by_site_and_path(void **state)
{
	const char *names[] = { "a", "b" };
	static struct ewyk_router shared;
	struct http_sites s;

	(void)state;
	route(&shared, "/img", EWYK_MATCH_PREFIX, HTTP_ROUTE_BOUNDARY);
	route(&shared, "/api/", EWYK_MATCH_PREFIX, 0);
	assert_int_equal(http_sites_init(&s, 2, names, &shared), 0);
	assert_int_equal(http_sites_host_add(&s, "b.test", 1), 0);
	route(&s.sites[1].router, "/", EWYK_MATCH_PREFIX, HTTP_ROUTE_BOUNDARY);
	route(&s.sites[1].router, "/img", EWYK_MATCH_EXACT, HTTP_ROUTE_BOUNDARY);
	/* A prefix at a '/' boundary only. */
	assert_string_equal(lookup(&s, "a.test", "/img"), "/img");
	assert_string_equal(lookup(&s, "a.test", "/img/x"), "/img");
	assert_string_equal(lookup(&s, "a.test", "/imgx"), "-");
	assert_string_equal(lookup(&s, "b.test", "/imgx"), "/");
	/* The longer wins; on one path the site's own (exact) wins. */
	assert_string_equal(lookup(&s, "b.test", "/img"), "/img");
	assert_string_equal(lookup(&s, "b.test", "/img/x"), "/img");
	assert_string_equal(lookup(&s, "b.test", "/api/x"), "/api/");
	/* Not in normal form: the route that sends it there. */
	assert_string_equal(lookup(&s, "a.test", "/x/../img"), "other");
	assert_string_equal(lookup(&s, "a.test", "/%69mg"), "other");
	assert_string_equal(lookup(&s, "a.test", "//img"), "other");
	http_sites_free(&s);
}

/* Each route has a slot of its own for its figures: the shared router's
 * keep their indexes, each site's are numbered after them, one site
 * after another, the same path of two sites apart. */
static void
test_routes_numbered_across_sites(void **state)
{
	const char *names[] = { "a", "b", "c" };
	static struct ewyk_router shared;
	struct http_sites s;
	bool seen[8] = { false };
	uint32_t i, j;

	(void)state;
	route(&shared, "/img", EWYK_MATCH_PREFIX, 0);
	route(&shared, "/api/", EWYK_MATCH_PREFIX, 0);
	assert_int_equal(http_sites_init(&s, 3, names, &shared), 0);
	route(&s.sites[0].router, "/", EWYK_MATCH_PREFIX, 0);
	route(&s.sites[0].router, "/app", EWYK_MATCH_PREFIX, 0);
	route(&s.sites[2].router, "/", EWYK_MATCH_PREFIX, 0);
	assert_int_equal(http_sites_number_routes(&s), 5);
	for (i = 0; i < shared.n; i++)
		assert_int_equal(shared.routes[i].id, i);
	for (i = 0; i < s.n; i++)
		for (j = 0; j < s.sites[i].router.n; j++) {
			uint16_t id = s.sites[i].router.routes[j].id;

			assert_in_range(id, shared.n, 4);
			assert_false(seen[id]);
			seen[id] = true;
		}
	assert_true(seen[2] && seen[3] && seen[4]);
	http_sites_free(&s);
}

static void
test_sni_and_host_of_two_sites(void **state)
{
	const char *names[] = { "a", "b" };
	struct http_head r;
	struct http_sites s;

	(void)state;
	assert_int_equal(http_sites_init(&s, 2, names, NULL), 0);
	assert_int_equal(http_sites_host_add(&s, "a.test", 0), 0);
	assert_int_equal(http_sites_host_add(&s, "*.b.test", 1), 0);
	memset(&r, 0, sizeof(r));
	r.nheaders = 1;
	r.headers[0] = (struct http_header){ { "host", 4 }, { "x.b.test", 8 } };
	assert_non_null(http_sites_misdirected(&s, "a.test", 6, &r));
	assert_null(http_sites_misdirected(&s, "y.b.test", 8, &r));
	assert_null(http_sites_misdirected(&s, "", 0, &r));	/* no SNI */
	r.headers[0].value = (struct http_str){ "A.TEST:443", 10 };
	assert_null(http_sites_misdirected(&s, "a.test", 6, &r));
	http_sites_free(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_normal_form),
		cmocka_unit_test(test_host_chooses_site),
		cmocka_unit_test(test_route_by_site_and_path),
		cmocka_unit_test(test_routes_numbered_across_sites),
		cmocka_unit_test(test_sni_and_host_of_two_sites),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
