/* SPDX-License-Identifier: BSD-3-Clause */
/* Static files: loading, lookup, and requests that must not leave the root. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "http_priv.h"
#include "www.h"

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

/* What the walk said it left out: "path: why" lines. */
static char told[8192];

static void
skipped(void *arg, const char *fs_path, const char *why)
{
	size_t n = strlen(told);

	(void)arg;
	snprintf(told + n, sizeof(told) - n, "%s: %s\n", fs_path, why);
}

static int
load(struct www *w, const char *dir, uint64_t max_bytes, char *err,
		size_t errlen)
{
	struct www_conf wc = {
		.root = dir, .max_bytes = max_bytes, .mime_types = "",
		.skipped = skipped,
	};

	told[0] = '\0';
	return www_load(w, &wc, err, errlen);
}

static void
test_load_and_find(void **state)
{
	struct www w;
	char err[256];
	const struct www_file *f;

	(void)state;
	assert_int_equal(load(&w, root, 1 << 20, err, sizeof(err)), 0);
	/* index, a.css, alias.css, sub/index, sub/data; and sub itself */
	assert_int_equal(w.nfiles, 5);
	assert_int_equal(w.n, 6);
	assert_true(find(&w, "/sub")->dir);
	assert_false(find(&w, "/sub/index.html")->dir);
	/* the link out of the root, said with its reason */
	assert_non_null(strstr(told, "/escape.txt: a link leading outside "
			"the root\n"));
	assert_int_equal(w.skipped, 1);
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
	assert_int_equal(load(&w, root, 1 << 20, err, sizeof(err)), 0);
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
	assert_int_equal(load(&w, "/no/such/dir", 1 << 20, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/no/such/dir"));
	snprintf(p, sizeof(p), "%s/a.css", root);
	assert_int_equal(load(&w, p, 1 << 20, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a directory"));
	assert_int_equal(load(&w, root, 10, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "exceed"));
}

/* A scratch root of a test's own, removed by rm_tree(). */
static void
mk_tree(char *dir, size_t cap)
{
	snprintf(dir, cap, "/tmp/ewyk-www2-XXXXXX");
	assert_non_null(mkdtemp(dir));
}

static void
rm_tree(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void
in(const char *dir, const char *rel, char *out, size_t cap)
{
	snprintf(out, cap, "%s/%s", dir, rel);
}

static void
touch_at(const char *dir, const char *rel, const char *text, time_t mtime)
{
	struct timespec t[2] = { { mtime, 0 }, { mtime, 0 } };
	char p[4096];

	put(dir, rel, text);
	in(dir, rel, p, sizeof(p));
	assert_int_equal(utimensat(AT_FDCWD, p, t, 0), 0);
}

/* Whether the walk said it left fs_path out for a reason starting so. */
static bool
told_about(const char *dir, const char *rel, const char *why)
{
	char line[4200];

	snprintf(line, sizeof(line), "%s/%s: %s", dir, rel, why);
	return strstr(told, line) != NULL;
}

/* Links to directories are followed inside the root; loops, links out,
 * links to nothing, special files, files too large alone and trees
 * too deep are left out, each said once with its reason. A file 20
 * levels down (past the old bound of 16) is served. */
static void
test_links_depth_and_what_is_left_out(void **state)
{
	char dir[64], p[4096], q[4096], err[256], url[4096];
	const struct www_file *f;
	struct www w;
	size_t n;
	int i;

	(void)state;
	mk_tree(dir, sizeof(dir));
	in(dir, "d", p, sizeof(p));
	assert_int_equal(mkdir(p, 0755), 0);
	put(dir, "d/f.txt", "in d");
	in(dir, "ld", p, sizeof(p));
	assert_int_equal(symlink("d", p), 0);		/* a directory link */
	in(dir, "d/up", p, sizeof(p));
	assert_int_equal(symlink("..", p), 0);		/* a loop */
	in(dir, "out", p, sizeof(p));
	assert_int_equal(symlink(outside, p), 0);	/* out of the root */
	in(dir, "dangling", p, sizeof(p));
	assert_int_equal(symlink("no-such-file", p), 0);
	in(dir, "fifo", p, sizeof(p));
	assert_int_equal(mkfifo(p, 0644), 0);
	put(dir, "huge.bin", "more than the limit of all files");
	/* 20 levels, then 66 */
	n = (size_t)snprintf(p, sizeof(p), "%s", dir);
	for (i = 0; i < 66; i++) {
		n += (size_t)snprintf(p + n, sizeof(p) - n, "/l%d", i);
		assert_int_equal(mkdir(p, 0755), 0);
		if (i == 19)
			put(p, "deep.txt", "20 levels");
	}
	put(p, "too-deep.txt", "66 levels");

	assert_int_equal(load(&w, dir, 20, err, sizeof(err)), 0);
	f = find(&w, "/ld/f.txt");
	assert_non_null(f);
	assert_memory_equal(f->data, "in d", 4);
	assert_non_null(find(&w, "/d/f.txt"));
	assert_true(find(&w, "/ld")->dir);
	for (n = 0, i = 0; i < 20; i++)
		n += (size_t)snprintf(url + n, sizeof(url) - n, "/l%d", i);
	snprintf(url + n, sizeof(url) - n, "/deep.txt");
	assert_non_null(find(&w, url));
	assert_true(told_about(dir, "d/up", "a link loop"));
	assert_true(told_about(dir, "ld/up", "a link loop"));
	assert_true(told_about(dir, "out", "a link leading outside the root"));
	assert_true(told_about(dir, "dangling", "a link to nothing"));
	assert_true(told_about(dir, "fifo", "a special file"));
	assert_true(told_about(dir, "huge.bin", "too large"));
	for (n = 0, i = 0; i <= WWW_MAX_DEPTH; i++)
		n += (size_t)snprintf(q + n, sizeof(q) - n, "%sl%d",
				i > 0 ? "/" : "", i);
	assert_true(told_about(dir, q, "too deep"));
	assert_int_equal(w.skipped, 7);
	assert_null(find(&w, "/huge.bin"));
	assert_null(find(&w, "/out"));
	www_free(&w);
	rm_tree(dir);
}

static void
test_media_types(void **state)
{
	static const char *const want[][2] = {
		{ "/f.woff2", "font/woff2" }, { "/f.wasm", "application/wasm" },
		{ "/f.mjs", "text/javascript" }, { "/f.avif", "image/avif" },
		{ "/f.webp", "image/webp" }, { "/f.svg", "image/svg+xml" },
		{ "/f.json", "application/json" }, { "/F.WOFF2", "font/woff2" },
		{ "/f.html", "text/html; charset=utf-8" },
		{ "/f.unknown", "application/octet-stream" },
		{ "/noext", "application/octet-stream" },
	};
	const char *overrides[] = { "woff2=font/x-test", "tst=text/x-override" };
	struct www_conf wc = { .max_bytes = 1 << 20, .mime_types = "" };
	char dir[64], types[4096], err[256];
	struct www w;
	size_t i;
	FILE *f;

	(void)state;
	mk_tree(dir, sizeof(dir));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		put(dir, want[i][0] + 1, "x");
	put(dir, "f.tst", "x");
	put(dir, "f.own", "x");
	wc.root = dir;
	/* The built-in table alone: what a host without mime.types says. */
	assert_int_equal(www_load(&w, &wc, err, sizeof(err)), 0);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_string_equal(find(&w, want[i][0])->content_type,
				want[i][1]);
	www_free(&w);
	/* A file of ours, then overrides before it and before the table. */
	in(dir, "mime.types", types, sizeof(types));
	f = fopen(types, "w");
	assert_non_null(f);
	fputs("# comment\ntext/x-own\town tst\nfont/x-file woff2\n", f);
	fclose(f);
	wc.mime_types = types;
	assert_int_equal(www_load(&w, &wc, err, sizeof(err)), 0);
	assert_string_equal(find(&w, "/f.own")->content_type, "text/x-own");
	assert_string_equal(find(&w, "/f.woff2")->content_type, "font/x-file");
	assert_string_equal(find(&w, "/f.wasm")->content_type,
			"application/wasm");	/* not in the file: the table's */
	www_free(&w);
	wc.mime_overrides = overrides;
	wc.n_mime_overrides = 2;
	assert_int_equal(www_load(&w, &wc, err, sizeof(err)), 0);
	assert_string_equal(find(&w, "/f.woff2")->content_type, "font/x-test");
	assert_string_equal(find(&w, "/f.tst")->content_type,
			"text/x-override");
	www_free(&w);
	/* A file named must be there; an override must be EXT=TYPE. */
	wc.mime_types = "/no/such/mime.types";
	assert_int_equal(www_load(&w, &wc, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/no/such/mime.types"));
	assert_int_equal(mime_override_check("woff2", err, sizeof(err)), -1);
	assert_int_equal(mime_override_check(".js=text/javascript", err,
			sizeof(err)), -1);
	assert_int_equal(mime_override_check("js=text", err, sizeof(err)), -1);
	assert_int_equal(mime_override_check("js=text/java\nscript", err,
			sizeof(err)), -1);
	assert_int_equal(mime_override_check("js=text/javascript; charset=utf-8",
			err, sizeof(err)), 0);
	rm_tree(dir);
}

/* Last-Modified is the file's time, never after the load; a date is a
 * strong validator only a second after its file last changed. */
static void
test_validators(void **state)
{
	char dir[64], err[256];
	const struct www_file *f;
	time_t now = time(NULL);
	struct www w;

	(void)state;
	mk_tree(dir, sizeof(dir));
	touch_at(dir, "old.txt", "old", 784111777);	/* RFC 9110's date */
	touch_at(dir, "new.txt", "new", now);
	touch_at(dir, "future.txt", "later", now + 86400);
	assert_int_equal(load(&w, dir, 1 << 20, err, sizeof(err)), 0);
	f = find(&w, "/old.txt");
	assert_string_equal(f->last_modified, "Sun, 06 Nov 1994 08:49:37 GMT");
	assert_int_equal(f->mtime, 784111777);
	assert_true(f->date_strong);
	assert_false(find(&w, "/new.txt")->date_strong);
	f = find(&w, "/future.txt");
	assert_true(f->mtime >= now && f->mtime <= time(NULL));
	assert_false(f->date_strong);
	assert_string_not_equal(find(&w, "/old.txt")->etag,
			find(&w, "/new.txt")->etag);
	www_free(&w);
	rm_tree(dir);
}

/* NAME.br and NAME.gz beside NAME are its encodings, unless older than
 * it; they stay files of their own (application/gzip for a .gz). */
static void
test_precompressed_siblings(void **state)
{
	char dir[64], err[256];
	const struct www_file *f;
	struct www w;

	(void)state;
	mk_tree(dir, sizeof(dir));
	touch_at(dir, "a.js", "plain", 1000000000);
	touch_at(dir, "a.js.gz", "gz bytes", 1000000001);
	touch_at(dir, "a.js.br", "br bytes", 1000000000);
	touch_at(dir, "b.css", "new", 1000000100);
	touch_at(dir, "b.css.gz", "stale", 1000000000);
	touch_at(dir, "c.txt.gz", "no c.txt", 1000000000);
	assert_int_equal(load(&w, dir, 1 << 20, err, sizeof(err)), 0);
	f = find(&w, "/a.js");
	assert_true(f->has_coded);
	assert_ptr_equal(f->coded[WWW_GZIP], find(&w, "/a.js.gz"));
	assert_ptr_equal(f->coded[WWW_BR], find(&w, "/a.js.br"));
	assert_string_not_equal(f->etag, f->coded[WWW_GZIP]->etag);
	assert_string_not_equal(f->coded[WWW_BR]->etag,
			f->coded[WWW_GZIP]->etag);
	assert_string_equal(find(&w, "/a.js.gz")->content_type,
			"application/gzip");
	assert_false(find(&w, "/a.js.gz")->has_coded);
	f = find(&w, "/b.css");
	assert_false(f->has_coded);
	assert_null(f->coded[WWW_GZIP]);
	assert_true(told_about(dir, "b.css.gz", "older than the file"));
	assert_non_null(find(&w, "/b.css.gz"));
	assert_non_null(find(&w, "/c.txt.gz"));
	assert_null(find(&w, "/c.txt"));
	assert_int_equal(w.skipped, 1);
	www_free(&w);
	rm_tree(dir);
}

static void
test_cache_control_rules(void **state)
{
	const char *rules[] = { "/=no-cache",
		"/assets/=public, max-age=31536000, immutable", "/x=private" };
	struct www_conf wc = { .max_bytes = 1 << 20, .mime_types = "",
		.cache_control = rules, .n_cache_control = 3 };
	char dir[64], p[4096], err[256];
	const struct www_file *f;
	struct www w;

	(void)state;
	mk_tree(dir, sizeof(dir));
	in(dir, "assets", p, sizeof(p));
	assert_int_equal(mkdir(p, 0755), 0);
	put(dir, "index.html", "i");
	put(dir, "assets/app.js", "a");
	wc.root = dir;
	assert_int_equal(www_load(&w, &wc, err, sizeof(err)), 0);
	f = find(&w, "/index.html");
	assert_string_equal(f->cache_control, "no-cache");
	assert_int_equal(f->cache_control_len, 8);
	f = find(&w, "/assets/app.js");	/* the longest prefix */
	assert_string_equal(f->cache_control,
			"public, max-age=31536000, immutable");
	www_free(&w);
	wc.n_cache_control = 0;
	assert_int_equal(www_load(&w, &wc, err, sizeof(err)), 0);
	assert_null(find(&w, "/index.html")->cache_control);
	www_free(&w);
	assert_int_equal(www_cache_control_check("assets=no-cache", err,
			sizeof(err)), -1);
	assert_int_equal(www_cache_control_check("/a=", err, sizeof(err)), -1);
	assert_int_equal(www_cache_control_check("/a", err, sizeof(err)), -1);
	assert_int_equal(www_cache_control_check("/a=no\rcache", err,
			sizeof(err)), -1);
	rules[0] = "/=max-age=1\n";
	wc.n_cache_control = 1;
	assert_int_equal(www_load(&w, &wc, err, sizeof(err)), -1);
	rm_tree(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_and_find),
		cmocka_unit_test(test_nothing_outside_the_root),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_links_depth_and_what_is_left_out),
		cmocka_unit_test(test_media_types),
		cmocka_unit_test(test_validators),
		cmocka_unit_test(test_precompressed_siblings),
		cmocka_unit_test(test_cache_control_rules),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
