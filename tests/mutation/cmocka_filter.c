/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Preloaded into a cmocka test binary (LD_PRELOAD), runs only the tests
 * whose names match EWYK_TEST_FILTER (cmocka's glob: '*' and '?'), so that
 * the mutation run (tests/mutation/run.py) can name the one test that must
 * fail on a break without every test program reading a filter itself.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

typedef int (*run_group_fn)(const char *, const struct CMUnitTest * const,
		const size_t, CMFixtureFunction, CMFixtureFunction);

int
_cmocka_run_group_tests(const char *group_name,
		const struct CMUnitTest * const tests, const size_t num_tests,
		CMFixtureFunction group_setup, CMFixtureFunction group_teardown)
{
	run_group_fn real = (run_group_fn)dlsym(RTLD_NEXT,
			"_cmocka_run_group_tests");
	const char *filter = getenv("EWYK_TEST_FILTER");

	if (real == NULL) {
		fprintf(stderr, "cmocka_filter: %s\n", dlerror());
		abort();
	}
	if (filter != NULL && filter[0] != '\0')
		cmocka_set_test_filter(filter);
	return real(group_name, tests, num_tests, group_setup, group_teardown);
}
