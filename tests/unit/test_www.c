/* SPDX-License-Identifier: BSD-3-Clause */
/* Static files: loading, lookup, and requests that must not leave the root. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "http_priv.h"

static char root[256], outside[256];

static void
put(const char *dir, const char *name, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int
setup(void **state)
{
	char p[512];

	(void)state;
	strcpy(root, "/tmp/ewyk-www-XXXXXX");
	strcpy(outside, "/tmp/ewyk-out-XXXXXX");
	if (mkdtemp(root) == NULL || mkdtemp(outside) == NULL)
		return -1;
	put(root, "index.html", "<h1>root</h1>");
	put(root, "a.css", "body{}");
	put(root, ".hidden", "secret");
	snprintf(p, sizeof(p), "%s/sub", root);
	mkdir(p, 0755);
	put(p, "index.html", "sub");
	put(p, "data.bin", "bin");
	put(outside, "secret.txt", "outside");
	/* a link inside the root to a file inside: served; to outside: not */
	snprintf(p, sizeof(p), "%s/alias.css", root);
	if (symlink("a.css", p) != 0)
		return -1;
	snprintf(p, sizeof(p), "%s/escape.txt", root);
	{
		char target[512];

		snprintf(target, sizeof(target), "%s/secret.txt", outside);
		if (symlink(target, p) != 0)
			return -1;
	}
	return 0;
}

static int
teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", root, outside);
	return system(cmd) == 0 ? 0 : -1;
}

static const struct www_file *
find(const struct www *w, const char *path)
{
	return www_find(w, path, strlen(path));
}

static void
test_load_and_find(void **state)
{
	struct www w;
	char err[256];
	const struct www_file *f;

	(void)state;
	assert_int_equal(www_load(&w, root, 1 << 20, err, sizeof(err)), 0);
	assert_int_equal(w.n, 5);	/* index, a.css, alias.css, sub/index, sub/data */
	f = find(&w, "/");
	assert_non_null(f);
	assert_memory_equal(f->data, "<h1>root</h1>", f->size);
	assert_string_equal(f->content_type, "text/html; charset=utf-8");
	assert_ptr_equal(find(&w, "/sub/"), find(&w, "/sub/index.html"));
	assert_non_null(find(&w, "/alias.css"));
	assert_string_equal(find(&w, "/a.css")->etag, find(&w, "/alias.css")->etag);
	assert_string_equal(find(&w, "/sub/data.bin")->content_type,
			"application/octet-stream");
	assert_non_null(find(&w, "/%61.css"));	/* percent-decoded */
	assert_null(find(&w, "/sub"));
	assert_null(find(&w, "/nope"));
	www_free(&w);
}

static void
test_nothing_outside_the_root(void **state)
{
	static const char *const unsafe[] = {
		"/escape.txt", "/.hidden", "/../etc/passwd", "/sub/../a.css",
		"/./a.css", "/%2e%2e/etc/passwd", "/sub/%2E%2E/a.css", "/%2fa.css",
		"/sub%2findex.html", "/a.css%00", "//a.css", "/%", "/%4", "/%zz",
		"\\a.css", "/sub\\..\\a.css", "", "a.css",
	};
	struct www w;
	char err[256];
	size_t i;

	(void)state;
	assert_int_equal(www_load(&w, root, 1 << 20, err, sizeof(err)), 0);
	for (i = 0; i < sizeof(unsafe) / sizeof(unsafe[0]); i++)
		if (find(&w, unsafe[i]) != NULL)
			fail_msg("served %s", unsafe[i]);
	www_free(&w);
}

static void
test_load_errors(void **state)
{
	struct www w;
	char err[256], p[512];

	(void)state;
	assert_int_equal(www_load(&w, "/no/such/dir", 1 << 20, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/no/such/dir"));
	snprintf(p, sizeof(p), "%s/a.css", root);
	assert_int_equal(www_load(&w, p, 1 << 20, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a directory"));
	assert_int_equal(www_load(&w, root, 10, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "exceed"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_and_find),
		cmocka_unit_test(test_nothing_outside_the_root),
		cmocka_unit_test(test_load_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
