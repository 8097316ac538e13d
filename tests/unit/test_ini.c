/* SPDX-License-Identifier: BSD-3-Clause */
/* The configuration file's reader: sections, comments, values kept whole,
 * errors by file and line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ini.h"

/* Loads text as a file: 0 or -1, err set. */
static int
load(struct ini *ini, const char *text, char *err, size_t errlen)
{
	char path[] = "/tmp/ewyk-ini-XXXXXX";
	int fd = mkstemp(path), rc;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	rc = options_ini_load(ini, path, err, errlen);
	unlink(path);
	return rc;
}

static void
test_sections_comments_and_values(void **state)
{
	struct ini ini;
	char err[256] = "";

	(void)state;
	assert_int_equal(load(&ini, "; a comment\n# another\n[ewykd]\n"
			"  ; indented comment\nmtu = 1500\n[site www]\n"
			"add-header = X-A: b; c\nhost = a.test ; not a comment\n",
			err, sizeof(err)), 0);
	assert_int_equal(ini.nsections, 2);
	assert_string_equal(ini.sections[1].kind, "site");
	assert_string_equal(ini.sections[1].name, "www");
	assert_int_equal(ini.n, 3);
	assert_string_equal(ini.entries[0].key, "mtu");
	assert_int_equal(ini.entries[0].line, 5);
	assert_string_equal(ini.entries[1].value, "X-A: b; c");
	assert_string_equal(ini.entries[2].value, "a.test ; not a comment");
	assert_int_equal(ini.entries[2].section, 1);
	options_ini_free(&ini);
}

static void
test_bad_lines_named(void **state)
{
	static const struct {
		const char *text, *words;
	} bad[] = {
		{ "[site a b]\n", ":1: [site a b]: expected [KIND] or [KIND NAME]" },
		{ "[site]\n[site]\n", ":2: section [site] given twice (first on line 1)" },
		{ "key = v\n", ":1: a key before any [section]" },
		{ "[a]\nno equals\n", ":2: expected [KIND NAME] or key = value" },
		{ "[a]\nbad key = v\n", ":2: unknown key 'bad key'" },
	};
	char err[256];
	struct ini ini;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(load(&ini, bad[i].text, err, sizeof(err)), -1);
		if (strstr(err, bad[i].words) == NULL)
			fail_msg("%s: '%s' lacks '%s'", bad[i].text, err,
					bad[i].words);
	}
}

static void
test_hundreds_of_sections(void **state)
{
	size_t cap = 64 * 1024, n = 0;
	char *text = malloc(cap), err[256];
	struct ini ini;
	int i;

	(void)state;
	assert_non_null(text);
	for (i = 0; i < 500; i++)
		n += (size_t)snprintf(text + n, cap - n,
				"[route r%d]\nprefix = /r%d\n", i, i);
	assert_int_equal(load(&ini, text, err, sizeof(err)), 0);
	assert_int_equal(ini.nsections, 500);
	assert_string_equal(ini.sections[499].name, "r499");
	assert_int_equal(ini.entries[499].section, 499);
	options_ini_free(&ini);
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sections_comments_and_values),
		cmocka_unit_test(test_bad_lines_named),
		cmocka_unit_test(test_hundreds_of_sections),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
