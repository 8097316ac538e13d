/* SPDX-License-Identifier: BSD-3-Clause */
/* The last-value store: reads and writes, deletes, durable waits, recovery
 * of the journal, torn and corrupt tails, compaction, readers racing a
 * writer. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A journal that cannot be written (a full disk: /dev/full): a durable
 * wait learns of the failure when it happens, not at its timeout, and
 * the failure is counted and kept. */
static void
test_durable_wait_told_of_a_full_disk(void **state)
{
	struct store *s;
	struct store_stats st;
	uint64_t v, t0;
	int err;

	(void)state;
	assert_int_equal(symlink("/dev/full", journal), 0);
	s = open_store(0);
	put_str(s, "k", "v", &v);
	t0 = now_ms();
	assert_int_equal(store_wait_durable(s, "k", 1, v, 3000), -ENOSPC);
	assert_true(now_ms() - t0 < 1500);
	store_stats(s, &st);
	assert_true(st.journal_errors >= 1);
	assert_int_equal(st.journal_errno, ENOSPC);
	assert_true(store_journal_failures(s, &err) >= 1);
	assert_int_equal(err, ENOSPC);
	assert_int_equal(store_durable_state(s, "k", 1, v), 0);
	check_value(s, "k", "v");	/* the value itself stands */
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

/* Deletes --------------------------------------------------------------- */

/* Walks the journal's records (the layout at the top of store.c): counts
 * them all, those of keys starting with prefix, and the tombstones among
 * the latter. */
static void
scan_journal(const char *prefix, int *records, int *tombstones, int *prefixed)
{
	uint8_t hdr[24], key[STORE_KEY_MAX];
	FILE *f = fopen(journal, "rb");

	*records = *tombstones = *prefixed = 0;
	assert_non_null(f);
	while (fread(hdr, 1, sizeof(hdr), f) == sizeof(hdr)) {
		uint16_t klen, flags;
		uint32_t vlen;

		memcpy(&klen, hdr + 4, 2);
		memcpy(&flags, hdr + 6, 2);
		memcpy(&vlen, hdr + 8, 4);
		assert_true(klen > 0 && klen <= STORE_KEY_MAX);
		assert_int_equal(fread(key, 1, klen, f), klen);
		assert_int_equal(fseek(f, vlen, SEEK_CUR), 0);
		(*records)++;
		if (flags & 1)
			assert_int_equal(vlen, 0);
		if (strlen(prefix) > klen ||
				memcmp(key, prefix, strlen(prefix)) != 0)
			continue;
		(*prefixed)++;
		if (flags & 1)
			(*tombstones)++;
	}
	fclose(f);
}

static void
test_delete_then_get(void **state)
{
	struct store *s = open_store(0);
	struct store_stats st;
	char key[STORE_KEY_MAX + 1];
	uint64_t v1, v2, vd, vd2;

	(void)state;
	put_str(s, "a", "one", &v1);
	put_str(s, "b", "two", NULL);
	store_stats(s, &st);
	assert_int_equal(st.keys, 2);
	vd = store_delete(s, "a", 1);
	assert_true(vd > v1);
	check_value(s, "a", NULL);
	check_value(s, "b", "two");
	store_stats(s, &st);
	assert_int_equal(st.keys, 1);
	assert_int_equal(st.deletes, 1);
	assert_int_equal(st.version, vd);	/* the same counter as PUTs */

	/* absent: already deleted, never seen, or not a valid key */
	assert_int_equal(store_delete(s, "a", 1), 0);
	assert_int_equal(store_delete(s, "zz", 2), 0);
	memset(key, 'k', sizeof(key));
	assert_int_equal(store_delete(s, key, sizeof(key)), 0);
	assert_int_equal(store_delete(s, "a", 0), 0);
	store_stats(s, &st);
	assert_int_equal(st.deletes, 1);
	assert_int_equal(st.version, vd);	/* no version spent on them */

	/* a durable DELETE */
	assert_int_equal(store_wait_durable(s, "a", 1, vd, 5000), 0);
	store_stats(s, &st);
	assert_true(st.persisted >= vd);

	/* a PUT after the delete takes the slot back */
	put_str(s, "a", "again", &v2);
	assert_true(v2 > vd);
	check_value(s, "a", "again");
	store_stats(s, &st);
	assert_int_equal(st.keys, 2);
	vd2 = store_delete(s, "a", 1);
	assert_true(vd2 > v2);
	check_value(s, "a", NULL);
	assert_int_equal(store_wait_durable(s, "a", 1, vd2, 5000), 0);
	store_close(s);
}

static void
test_delete_recovered(void **state)
{
	struct store *s = open_store(0);
	struct store_stats st;
	int records, tombstones, prefixed;
	uint64_t v, vd;

	(void)state;
	put_str(s, "gone", "soon", NULL);
	put_str(s, "back", "first", NULL);
	put_str(s, "kept", "always", NULL);
	vd = store_delete(s, "gone", 4);
	assert_true(vd > 0);
	assert_true(store_delete(s, "back", 4) > 0);
	put_str(s, "back", "second", &v);
	assert_int_equal(store_wait_durable(s, "gone", 4, vd, 5000), 0);
	assert_int_equal(store_wait_durable(s, "back", 4, v, 5000), 0);
	store_close(s);
	/* the PUT of "gone" may have been conflated away, not its tombstone */
	scan_journal("gone", &records, &tombstones, &prefixed);
	assert_true(tombstones >= 1);

	s = open_store(0);
	check_value(s, "gone", NULL);
	check_value(s, "back", "second");
	check_value(s, "kept", "always");
	store_stats(s, &st);
	assert_int_equal(st.keys, 2);
	assert_int_equal(st.torn_offset, -1);
	assert_true(st.version >= v);
	/* recovered and live keys delete alike, and versions go on */
	vd = store_delete(s, "kept", 4);
	assert_true(vd > v);
	assert_int_equal(store_delete(s, "gone", 4), 0);
	put_str(s, "gone", "returns", &v);
	assert_true(v > vd);
	assert_int_equal(store_wait_durable(s, "gone", 4, v, 5000), 0);
	assert_int_equal(store_wait_durable(s, "kept", 4, vd, 5000), 0);
	store_close(s);

	s = open_store(0);
	check_value(s, "gone", "returns");
	check_value(s, "back", "second");
	check_value(s, "kept", NULL);
	store_stats(s, &st);
	assert_int_equal(st.keys, 2);
	store_close(s);
}

/* A record as store.c writes it, for journals made by hand. */
static size_t
make_record(uint8_t *p, const char *key, const char *val, uint64_t version,
		uint16_t flags)
{
	uint32_t magic = 0x314b5745u, crc;
	uint16_t klen = (uint16_t)strlen(key);
	uint32_t vlen = val != NULL ? (uint32_t)strlen(val) : 0;

	memcpy(p, &magic, 4);
	memcpy(p + 4, &klen, 2);
	memcpy(p + 6, &flags, 2);
	memcpy(p + 8, &vlen, 4);
	memcpy(p + 12, &version, 8);
	memcpy(p + 24, key, klen);
	if (vlen > 0)
		memcpy(p + 24 + klen, val, vlen);
	crc = store_crc32(0, p + 4, 16);
	crc = store_crc32(crc, p + 24, klen + vlen);
	memcpy(p + 20, &crc, 4);
	return 24 + klen + vlen;
}

static void
test_tombstones_apply_by_version(void **state)
{
	uint8_t buf[1024];
	size_t n = 0, good;
	struct store *s;
	struct store_stats st;
	uint64_t v;
	FILE *f;

	(void)state;
	/* a tombstone, then an older PUT written after it: it stays gone */
	n += make_record(buf + n, "k", "old", 3, 0);
	n += make_record(buf + n, "k", NULL, 5, 1);
	n += make_record(buf + n, "k", "older", 4, 0);
	/* put, delete, put: the last one wins */
	n += make_record(buf + n, "j", "first", 2, 0);
	n += make_record(buf + n, "j", NULL, 6, 1);
	n += make_record(buf + n, "j", "back", 7, 0);
	/* an older tombstone written after a newer PUT: the value stays */
	n += make_record(buf + n, "p", "newer", 10, 0);
	n += make_record(buf + n, "p", NULL, 9, 1);
	/* a tombstone of a key never put */
	n += make_record(buf + n, "never", NULL, 8, 1);
	good = n;
	/* flags the store does not know: as corrupt as a bad crc */
	n += make_record(buf + n, "m", "x", 11, 2);
	f = fopen(journal, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, n, f), n);
	fclose(f);

	s = open_store(0);
	check_value(s, "k", NULL);
	check_value(s, "j", "back");
	check_value(s, "p", "newer");
	check_value(s, "never", NULL);
	check_value(s, "m", NULL);
	store_stats(s, &st);
	assert_int_equal(st.keys, 2);
	assert_int_equal(st.recovered, 9);
	assert_int_equal(st.torn_offset, (int64_t)good);
	assert_int_equal(st.version, 10);
	assert_int_equal(store_delete(s, "k", 1), 0);
	assert_int_equal(store_delete(s, "never", 5), 0);
	put_str(s, "k", "new", &v);
	assert_int_equal(v, 11);
	check_value(s, "k", "new");
	store_close(s);
}

static void
test_compaction_drops_deleted(void **state)
{
	struct store *s = open_store(4096);
	struct store_stats st;
	int records, tombstones, prefixed, i;
	uint64_t v = 0;

	(void)state;
	for (i = 0; i < 5; i++) {
		char key[16];

		snprintf(key, sizeof(key), "d%d", i);
		put_str(s, key, "to be deleted", NULL);
		snprintf(key, sizeof(key), "k%d", i);
		put_str(s, key, "to be kept", NULL);
	}
	for (i = 0; i < 5; i++) {
		char key[16];

		snprintf(key, sizeof(key), "d%d", i);
		v = store_delete(s, key, 2);
		assert_true(v > 0);
		assert_int_equal(store_wait_durable(s, key, 2, v, 5000), 0);
	}
	store_stats(s, &st);
	assert_int_equal(st.compactions, 0);	/* all deletes before any */
	for (i = 0; i < 2000; i++) {
		char key[16], val[64];

		snprintf(key, sizeof(key), "k%d", i % 5);
		snprintf(val, sizeof(val), "%d padding padding padding", i);
		put_str(s, key, val, &v);
		if (i % 50 == 0)
			assert_int_equal(store_wait_durable(s, key, strlen(key),
					v, 5000), 0);
	}
	assert_int_equal(store_wait_durable(s, "k4", 2, v, 5000), 0);
	store_stats(s, &st);
	assert_true(st.compactions >= 1);
	assert_int_equal(st.keys, 5);
	store_close(s);

	/* neither the values nor the tombstones of d* are left */
	scan_journal("d", &records, &tombstones, &prefixed);
	assert_true(records > 0);
	assert_int_equal(prefixed, 0);
	scan_journal("", &records, &tombstones, &prefixed);
	assert_int_equal(tombstones, 0);

	s = open_store(4096);
	for (i = 0; i < 5; i++) {
		char key[16];

		snprintf(key, sizeof(key), "d%d", i);
		check_value(s, key, NULL);
	}
	check_value(s, "k4", "1999 padding padding padding");
	check_value(s, "k0", "1995 padding padding padding");
	store_stats(s, &st);
	assert_int_equal(st.keys, 5);
	store_close(s);
}

static void
test_delete_memory_only(void **state)
{
	struct store_conf c = { .dir = NULL, .capacity = 4 };
	char err[64];
	struct store *s = store_open(&c, err, sizeof(err));
	struct store_stats st;
	uint64_t v, vd;

	(void)state;
	assert_non_null(s);
	put_str(s, "a", "1", NULL);
	put_str(s, "b", "2", NULL);
	put_str(s, "c", "3", NULL);
	put_str(s, "d", "4", &v);	/* the table is full */
	vd = store_delete(s, "d", 1);
	assert_int_equal(vd, v + 1);
	check_value(s, "d", NULL);
	assert_int_equal(store_delete(s, "d", 1), 0);
	assert_int_equal(store_wait_durable(s, "d", 1, vd, 10), -ENOTSUP);
	store_stats(s, &st);
	assert_int_equal(st.keys, 3);
	assert_int_equal(st.deletes, 1);
	/* the deleted key kept its slot: it comes back in a full table */
	put_str(s, "d", "again", &v);
	assert_true(v > vd);
	check_value(s, "d", "again");
	store_stats(s, &st);
	assert_int_equal(st.keys, 4);
	store_close(s);
}

static void
test_delete_without_conflation(void **state)
{
	struct store_conf c = { .dir = dir, .capacity = 16, .no_conflate = true };
	char err[128];
	struct store *s = store_open(&c, err, sizeof(err));
	struct store_stats st;
	uint64_t vd;

	(void)state;
	assert_non_null(s);
	put_str(s, "x", "value", NULL);
	put_str(s, "y", "value", NULL);
	vd = store_delete(s, "x", 1);
	assert_true(vd > 0);
	assert_int_equal(store_wait_durable(s, "x", 1, vd, 1000), 0);
	store_stats(s, &st);
	assert_int_equal(st.applied, 3);	/* the tombstone too */
	store_close(s);
	s = open_store(0);
	check_value(s, "x", NULL);
	check_value(s, "y", "value");
	store_close(s);
}

/* One writer puts and deletes; readers check every value they see is whole:
 * its length and every byte follow from its version. */
#define RACE_KEYS 8
#define RACE_MS 200
#define RACE_OPS_MAX 5000000

struct race {
	struct store *s;
	bool stop;
	uint64_t puts, deletes, bad_versions;
	uint64_t reads, absent, present, torn;
};

static size_t
race_len(uint64_t v)
{
	return 1 + (size_t)((v * 2654435761u) % STORE_VAL_MAX);
}

static void *
race_writer(void *arg)
{
	static uint8_t val[STORE_VAL_MAX];
	struct race *r = arg;
	uint64_t next = 1, i;

	for (i = 0; i < RACE_OPS_MAX &&
			!__atomic_load_n(&r->stop, __ATOMIC_RELAXED); i++) {
		char key[4] = { 'r', (char)('0' + i % RACE_KEYS), 0, 0 };
		uint64_t v;

		/* the only writer: the next version is known beforehand */
		if ((i / RACE_KEYS) % 2 == 0) {
			memset(val, (int)(next & 0xff), race_len(next));
			v = store_put(r->s, key, 2, val, race_len(next));
			r->puts++;
		} else {
			v = store_delete(r->s, key, 2);
			r->deletes++;
		}
		if (v != next)
			r->bad_versions++;
		next = v + 1;
	}
	return NULL;
}

static void *
race_reader(void *arg)
{
	static __thread uint8_t buf[STORE_VAL_MAX];
	struct race *r = arg;
	uint64_t i = 0, reads = 0, absent = 0, present = 0, torn = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		char key[4] = { 'r', (char)('0' + i++ % RACE_KEYS), 0, 0 };
		uint64_t ver;
		long n = store_get(r->s, key, 2, buf, sizeof(buf), &ver);
		long j;

		reads++;
		if (n < 0) {
			absent++;
			continue;
		}
		present++;
		if ((size_t)n != race_len(ver)) {
			torn++;
			continue;
		}
		for (j = 0; j < n; j++)
			if (buf[j] != (uint8_t)ver) {
				torn++;
				break;
			}
	}
	__atomic_fetch_add(&r->reads, reads, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->absent, absent, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->present, present, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->torn, torn, __ATOMIC_RELAXED);
	return NULL;
}

static void
test_delete_races_readers(void **state)
{
	struct store *s = open_store(0);
	struct race r = { .s = s };
	struct timespec nap = { 0, RACE_MS * 1000000L };
	long final[RACE_KEYS];
	uint64_t fver[RACE_KEYS];
	uint8_t buf[STORE_VAL_MAX];
	struct store_stats st;
	pthread_t w, rd[2];
	uint32_t live = 0;
	int i;

	(void)state;
	assert_int_equal(pthread_create(&rd[0], NULL, race_reader, &r), 0);
	assert_int_equal(pthread_create(&rd[1], NULL, race_reader, &r), 0);
	assert_int_equal(pthread_create(&w, NULL, race_writer, &r), 0);
	nanosleep(&nap, NULL);
	__atomic_store_n(&r.stop, true, __ATOMIC_RELAXED);
	pthread_join(w, NULL);
	pthread_join(rd[0], NULL);
	pthread_join(rd[1], NULL);
	print_message("race: %llu puts, %llu deletes, %llu reads "
			"(%llu absent, %llu present)\n",
			(unsigned long long)r.puts, (unsigned long long)r.deletes,
			(unsigned long long)r.reads, (unsigned long long)r.absent,
			(unsigned long long)r.present);
	assert_int_equal(r.torn, 0);
	assert_int_equal(r.bad_versions, 0);
	assert_true(r.deletes > 0);
	assert_true(r.absent > 0);
	assert_true(r.present > 0);

	for (i = 0; i < RACE_KEYS; i++) {
		char key[4] = { 'r', (char)('0' + i), 0, 0 };

		final[i] = store_get(s, key, 2, buf, sizeof(buf), &fver[i]);
		if (final[i] >= 0)
			live++;
	}
	store_stats(s, &st);
	assert_int_equal(st.keys, live);
	assert_int_equal(st.puts, r.puts);
	assert_int_equal(st.deletes, r.deletes);
	store_close(s);

	/* what the sink wrote while it raced: the last state of each key */
	s = open_store(0);
	for (i = 0; i < RACE_KEYS; i++) {
		char key[4] = { 'r', (char)('0' + i), 0, 0 };
		uint64_t ver;
		long n = store_get(s, key, 2, buf, sizeof(buf), &ver);

		assert_int_equal(n, final[i]);
		if (n >= 0) {
			assert_int_equal(ver, fver[i]);
			assert_int_equal((size_t)n, race_len(ver));
			assert_int_equal(buf[0], (uint8_t)ver);
			assert_int_equal(buf[n - 1], (uint8_t)ver);
		}
	}
	store_stats(s, &st);
	assert_int_equal(st.keys, live);
	store_close(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_only),
		cmocka_unit_test_setup_teardown(test_durable_wait_told_of_a_full_disk,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_durable_and_recovered, setup,
				teardown),
		cmocka_unit_test_setup_teardown(test_torn_and_corrupt_tails, setup,
				teardown),
		cmocka_unit_test_setup_teardown(test_compaction_bounds_the_journal,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline_without_conflation,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete_then_get, setup,
				teardown),
		cmocka_unit_test_setup_teardown(test_delete_recovered, setup,
				teardown),
		cmocka_unit_test_setup_teardown(test_tombstones_apply_by_version,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_compaction_drops_deleted,
				setup, teardown),
		cmocka_unit_test(test_delete_memory_only),
		cmocka_unit_test_setup_teardown(test_delete_without_conflation,
				setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete_races_readers, setup,
				teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
