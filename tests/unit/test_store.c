/* SPDX-License-Identifier: BSD-3-Clause */
/* The last-value store: reads and writes, durable waits, recovery of the
 * journal, torn and corrupt tails, compaction. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "store.h"

static char dir[64];
static char journal[128];

static int
setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/ewyk-store-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(journal, sizeof(journal), "%s/journal.ewyk", dir);
	return 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct store *
open_store(uint64_t journal_max)
{
	struct store_conf c = { .dir = dir, .capacity = 256,
		.journal_max = journal_max };
	char err[256] = "";
	struct store *s = store_open(&c, err, sizeof(err));

	if (s == NULL)
		fail_msg("store_open: %s", err);
	return s;
}

static void
put_str(struct store *s, const char *k, const char *v, uint64_t *ver)
{
	uint64_t x = store_put(s, k, strlen(k), v, strlen(v));

	assert_true(x > 0);
	if (ver != NULL)
		*ver = x;
}

static void
check_value(struct store *s, const char *k, const char *v)
{
	char buf[STORE_VAL_MAX];
	uint64_t ver;
	long n = store_get(s, k, strlen(k), buf, sizeof(buf), &ver);

	if (v == NULL) {
		assert_int_equal(n, -1);
		return;
	}
	assert_int_equal(n, (long)strlen(v));
	assert_memory_equal(buf, v, (size_t)n);
}

static void
test_memory_only(void **state)
{
	struct store_conf c = { .dir = NULL, .capacity = 4 };
	char err[64], big[STORE_VAL_MAX + 1], key[STORE_KEY_MAX + 1];
	struct store *s = store_open(&c, err, sizeof(err));
	uint64_t v1, v2;

	(void)state;
	assert_non_null(s);
	put_str(s, "a", "1", &v1);
	put_str(s, "a", "22", &v2);
	assert_true(v2 > v1);
	check_value(s, "a", "22");
	check_value(s, "b", NULL);
	memset(big, 'x', sizeof(big));
	memset(key, 'k', sizeof(key));
	assert_int_equal(store_put(s, "a", 1, big, sizeof(big)), 0);
	assert_int_equal(store_put(s, key, sizeof(key), "v", 1), 0);
	put_str(s, "b", "", NULL);
	put_str(s, "c", "3", NULL);
	put_str(s, "d", "4", NULL);
	assert_int_equal(store_put(s, "e", 1, "5", 1), 0);	/* table full */
	assert_int_equal(store_wait_durable(s, "a", 1, v2, 10), -ENOTSUP);
	store_close(s);
}

static void
test_durable_and_recovered(void **state)
{
	struct store *s = open_store(0);
	struct store_stats st;
	uint64_t v;
	int i;

	(void)state;
	for (i = 0; i < 100; i++) {
		char val[32];

		snprintf(val, sizeof(val), "value %d", i);
		put_str(s, "hot", val, &v);
	}
	put_str(s, "cold", "once", NULL);
	assert_int_equal(store_wait_durable(s, "hot", 3, v, 5000), 0);
	store_stats(s, &st);
	assert_true(st.persisted >= v);
	assert_true(st.fsyncs >= 1);
	store_close(s);

	s = open_store(0);
	check_value(s, "hot", "value 99");
	check_value(s, "cold", "once");
	store_stats(s, &st);
	assert_true(st.recovered >= 2);
	assert_int_equal(st.torn_offset, -1);
	/* versions continue past the recovered ones */
	put_str(s, "hot", "after", &v);
	assert_true(v > st.version - 1);
	store_close(s);
}

static void
test_torn_and_corrupt_tails(void **state)
{
	struct store *s = open_store(0);
	struct store_stats st;
	struct stat sb;
	uint64_t v;
	off_t good;
	int fd;

	(void)state;
	put_str(s, "k1", "first", &v);
	assert_int_equal(store_wait_durable(s, "k1", 2, v, 5000), 0);
	store_close(s);
	assert_int_equal(stat(journal, &sb), 0);
	good = sb.st_size;

	/* half a record at the end, as a crash mid-write leaves it */
	s = open_store(0);
	put_str(s, "k2", "second", &v);
	assert_int_equal(store_wait_durable(s, "k2", 2, v, 5000), 0);
	store_close(s);
	assert_int_equal(stat(journal, &sb), 0);
	assert_int_equal(truncate(journal, sb.st_size - 3), 0);
	s = open_store(0);
	store_stats(s, &st);
	assert_int_equal(st.torn_offset, (int64_t)good);
	check_value(s, "k1", "first");
	check_value(s, "k2", NULL);
	store_close(s);
	assert_int_equal(stat(journal, &sb), 0);
	assert_int_equal(sb.st_size, good);	/* the bad tail is cut off */

	/* a flipped byte in the last record's value */
	s = open_store(0);
	put_str(s, "k3", "third", &v);
	assert_int_equal(store_wait_durable(s, "k3", 2, v, 5000), 0);
	store_close(s);
	fd = open(journal, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "X", 1, good + 24 + 2), 1);
	close(fd);
	s = open_store(0);
	store_stats(s, &st);
	assert_int_equal(st.torn_offset, (int64_t)good);
	check_value(s, "k1", "first");
	check_value(s, "k3", NULL);
	store_close(s);
}

static void
test_compaction_bounds_the_journal(void **state)
{
	struct store *s = open_store(4096);
	struct store_stats st;
	struct stat sb;
	uint64_t v = 0;
	int i;

	(void)state;
	for (i = 0; i < 2000; i++) {
		char key[8], val[64];

		snprintf(key, sizeof(key), "k%d", i % 5);
		snprintf(val, sizeof(val), "%d padding padding padding", i);
		put_str(s, key, val, &v);
		if (i % 50 == 0)	/* let the sink write many batches */
			assert_int_equal(store_wait_durable(s, key, strlen(key),
					v, 5000), 0);
	}
	assert_int_equal(store_wait_durable(s, "k4", 2, v, 5000), 0);
	store_stats(s, &st);
	assert_true(st.compactions >= 1);
	store_close(s);
	assert_int_equal(stat(journal, &sb), 0);
	assert_true(sb.st_size < 4096 + 5 * 200);
	s = open_store(4096);
	check_value(s, "k4", "1999 padding padding padding");
	check_value(s, "k0", "1995 padding padding padding");
	store_close(s);
}

static void
test_baseline_without_conflation(void **state)
{
	struct store_conf c = { .dir = dir, .capacity = 16, .no_conflate = true };
	char err[128];
	struct store *s = store_open(&c, err, sizeof(err));
	struct store_stats st;
	uint64_t v = 0;
	int i;

	(void)state;
	assert_non_null(s);
	for (i = 0; i < 10; i++)
		put_str(s, "hot", i == 9 ? "last" : "older", &v);
	assert_int_equal(store_wait_durable(s, "hot", 3, v, 1000), 0);
	store_stats(s, &st);
	assert_int_equal(st.applied, 10);	/* every PUT written */
	assert_int_equal(st.fsyncs, 1);
	store_close(s);
	s = open_store(0);
	check_value(s, "hot", "last");
	store_close(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_only),
		cmocka_unit_test_setup_teardown(test_durable_and_recovered, setup,
				teardown),
		cmocka_unit_test_setup_teardown(test_torn_and_corrupt_tails, setup,
				teardown),
		cmocka_unit_test_setup_teardown(test_compaction_bounds_the_journal,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline_without_conflation,
				setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
