/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conflate.h"
#include "store.h"

/*
 * Journal record, little-endian as written by this host:
 *   magic u32 | klen u16 | flags u16 | vlen u32 | version u64 | crc u32 |
 *   key | value
 * crc covers klen..version (flags included), the key and the value.
 * flags was a zero pad; REC_TOMBSTONE in it makes the record a DELETE of
 * the key at that version, with vlen 0 and no value. A flag bit rather than
 * a vlen sentinel: an older reader takes a tombstone for an empty value
 * instead of cutting the journal off there. Recovery applies records by
 * version, tombstones too, and stops at the first record that is short,
 * has a bad magic, bad lengths, unknown flags or a bad crc.
 */
#define REC_MAGIC 0x314b5745u	/* "EWK1" */
#define REC_HDR 24
#define REC_TOMBSTONE 0x0001u
#define BATCH_BYTES (1u << 20)

struct entry {
	uint32_t seq;		/* seqlock: odd while a writer holds it */
	uint32_t state;		/* 0 empty, 1 being claimed, 2 keyed */
	uint64_t version;
	uint64_t persisted;	/* newest version of it on disk */
	uint32_t vlen;
	uint8_t klen;
	uint8_t dead;		/* version is a tombstone's: no value */
	char key[STORE_KEY_MAX];
	uint8_t val[STORE_VAL_MAX];
};

struct store {
	struct entry *e;
	uint32_t mask;
	uint64_t version;	/* atomic: last version given */
	struct conflate *cf;
	int fd;
	char path[4096];
	char dir[4000];
	uint64_t journal_max;
	bool no_conflate;	/* each PUT, DELETE writes its record (locked) */
	uint8_t *batch;
	size_t batch_len;
	struct entry **batch_e;	/* entries written in this batch */
	uint64_t *batch_v;
	uint32_t batch_n;
	pthread_t sink;
	bool sink_running;
	pthread_mutex_t lock;	/* durable waiters only */
	pthread_cond_t persisted_cv;
	uint64_t persist_epoch;	/* bumped whenever versions reach the disk,
				 * or a write of the journal fails */
	/* A failed write or sync: its errno until the journal holds every
	 * version again (atomic); failures counts them, under lock, so that
	 * a waiter learns of one that came after it began to wait. */
	int journal_errno;
	uint64_t failures;
	bool behind;		/* sink only: versions lost with a batch */
	struct store_stats st;
};

uint32_t
store_crc32(uint32_t crc, const void *buf, size_t len)
{
	static uint32_t table[256];
	static bool ready;
	const uint8_t *p = buf;
	size_t i;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < 256; i++) {
			uint32_t c = (uint32_t)i;
			int k;

			for (k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
		__atomic_store_n(&ready, true, __ATOMIC_RELEASE);
	}
	crc = ~crc;
	for (i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static uint64_t
key_hash(const char *k, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--) {
		h ^= (uint8_t)*k++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * Finds the key's entry; with create, claims an empty one for it. A key
 * keeps its slot for good, deleted or not: a later PUT reuses it, probe
 * chains never break, and there is no reclamation of slots.
 */
static struct entry *
lookup(struct store *s, const char *key, size_t klen, bool create)
{
	uint32_t i = (uint32_t)key_hash(key, klen) & s->mask, n;

	for (n = 0; n <= s->mask; n++, i = (i + 1) & s->mask) {
		struct entry *e = &s->e[i];
		uint32_t st = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);

		if (st == 0) {
			uint32_t zero = 0;

			if (!create)
				return NULL;
			if (__atomic_compare_exchange_n(&e->state, &zero, 1, false,
					__ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
				e->klen = (uint8_t)klen;
				memcpy(e->key, key, klen);
				__atomic_store_n(&e->state, 2, __ATOMIC_RELEASE);
				return e;
			}
			st = zero;	/* someone else claimed it meanwhile */
		}
		while (st == 1)	/* a key being written: a few instructions */
			st = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
		if (e->klen == klen && memcmp(e->key, key, klen) == 0)
			return e;
	}
	return NULL;
}

/* Copies the value under the seqlock; false if absent. version is set
 * either way: a tombstone's, or 0 for a key never written. */
static bool
read_entry(struct entry *e, void *buf, size_t cap, uint32_t *len,
		uint64_t *version)
{
	uint32_t s1, s2;
	uint8_t dead;

	do {
		while ((s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE)) & 1)
			;
		*version = __atomic_load_n(&e->version, __ATOMIC_RELAXED);
		dead = __atomic_load_n(&e->dead, __ATOMIC_RELAXED);
		*len = __atomic_load_n(&e->vlen, __ATOMIC_RELAXED);
		if (*len > STORE_VAL_MAX)
			*len = STORE_VAL_MAX;
		memcpy(buf, e->val, *len < cap ? *len : cap);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
	} while (s1 != s2);
	return *version != 0 && !dead;
}

static uint32_t
lock_entry(struct entry *e)
{
	uint32_t s;

	for (;;) {	/* writers of one key take turns */
		s = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
		if (!(s & 1) && __atomic_compare_exchange_n(&e->seq, &s, s + 1,
				false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return s;
}

static void
unlock_entry(struct entry *e, uint32_t s)
{
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

static bool
entry_live(const struct entry *e)
{
	return e->version != 0 && !e->dead;
}

/* With the entry locked: a value, or a tombstone if dead. keys changes
 * here only, under the key's own lock, so it counts each transition once. */
static void
set_entry(struct store *s, struct entry *e, const void *val, size_t vlen,
		uint64_t version, bool dead)
{
	bool was_live = entry_live(e);

	/* A newer version already written stays (two shards, one key). */
	if (version <= e->version)
		return;
	if (vlen > 0)
		memcpy(e->val, val, vlen);
	__atomic_store_n(&e->vlen, (uint32_t)vlen, __ATOMIC_RELAXED);
	__atomic_store_n(&e->dead, dead, __ATOMIC_RELAXED);
	__atomic_store_n(&e->version, version, __ATOMIC_RELAXED);
	if (was_live && dead)
		__atomic_fetch_sub(&s->st.keys, 1, __ATOMIC_RELAXED);
	else if (!was_live && !dead)
		__atomic_fetch_add(&s->st.keys, 1, __ATOMIC_RELAXED);
}

static void
write_entry(struct store *s, struct entry *e, const void *val, size_t vlen,
		uint64_t version, bool dead)
{
	uint32_t seq = lock_entry(e);

	set_entry(s, e, val, vlen, version, dead);
	unlock_entry(e, seq);
}

static size_t encode(uint8_t *p, const struct entry *e, uint32_t vlen,
		uint64_t version, const uint8_t *val, bool dead);
static int write_all(int fd, const uint8_t *p, size_t n);

/* Hands a new version of the entry to the journal, if there is one. */
static void journal_failed(struct store *s, const char *what, int err);

static void
journal_entry(struct store *s, struct entry *e, const void *val,
		uint32_t vlen, uint64_t v, bool dead)
{
	if (s->no_conflate) {
		static __thread uint8_t rec[REC_HDR + STORE_KEY_MAX + STORE_VAL_MAX];
		size_t n;

		/* The baseline: each PUT or DELETE appends its own record; a
		 * durable one then syncs whatever was written before it. */
		pthread_mutex_lock(&s->lock);
		n = encode(rec, e, vlen, v, val, dead);
		if (write_all(s->fd, rec, n) != 0) {
			int err = errno;

			pthread_mutex_unlock(&s->lock);
			journal_failed(s, "write", err);
			return;
		}
		__atomic_store_n(&s->journal_errno, 0, __ATOMIC_RELAXED);
		s->st.journal_bytes += n;
		s->st.applied++;
		s->st.batches++;
		pthread_mutex_unlock(&s->lock);
	} else if (s->cf != NULL) {
		/* The value offered is the entry itself: the sink reads the
		 * newest bytes (or tombstone) when it gets there, so nothing
		 * is copied or allocated, and what it supersedes is the same
		 * pointer. */
		conflate_offer(s->cf, e->key, e->klen, e);
	}
}

long
store_get(struct store *s, const char *key, size_t klen, void *buf, size_t cap,
		uint64_t *version)
{
	struct entry *e;
	uint32_t len;

	__atomic_fetch_add(&s->st.gets, 1, __ATOMIC_RELAXED);
	if (klen == 0 || klen > STORE_KEY_MAX)
		return -1;
	e = lookup(s, key, klen, false);
	if (e == NULL || !read_entry(e, buf, cap, &len, version))
		return -1;
	return len;
}

uint64_t
store_put(struct store *s, const char *key, size_t klen, const void *val,
		size_t vlen)
{
	struct entry *e;
	uint64_t v;

	if (klen == 0 || klen > STORE_KEY_MAX || vlen > STORE_VAL_MAX)
		return 0;
	e = lookup(s, key, klen, true);
	if (e == NULL)
		return 0;
	v = __atomic_add_fetch(&s->version, 1, __ATOMIC_RELAXED);
	write_entry(s, e, val, vlen, v, false);
	__atomic_fetch_add(&s->st.puts, 1, __ATOMIC_RELAXED);
	journal_entry(s, e, val, (uint32_t)vlen, v, false);
	return v;
}

uint64_t
store_delete(struct store *s, const char *key, size_t klen)
{
	struct entry *e;
	uint32_t seq;
	uint64_t v = 0;

	if (klen == 0 || klen > STORE_KEY_MAX)
		return 0;
	e = lookup(s, key, klen, false);
	if (e == NULL)
		return 0;
	/* Test and tombstone under the key's lock, so of two DELETEs only
	 * one finds a value; the version is taken there too, so it is newer
	 * than the one it removes. A PUT that took an older version before
	 * it and writes after it loses, as between two PUTs. */
	seq = lock_entry(e);
	if (entry_live(e)) {
		v = __atomic_add_fetch(&s->version, 1, __ATOMIC_RELAXED);
		set_entry(s, e, NULL, 0, v, true);
	}
	unlock_entry(e, seq);
	if (v == 0)
		return 0;
	__atomic_fetch_add(&s->st.deletes, 1, __ATOMIC_RELAXED);
	journal_entry(s, e, NULL, 0, v, true);
	return v;
}

/* Journal --------------------------------------------------------------- */

static size_t
encode(uint8_t *p, const struct entry *e, uint32_t vlen, uint64_t version,
		const uint8_t *val, bool dead)
{
	uint32_t magic = REC_MAGIC, crc;
	uint16_t klen = e->klen, flags = dead ? REC_TOMBSTONE : 0;

	if (dead)
		vlen = 0;
	memcpy(p, &magic, 4);
	memcpy(p + 4, &klen, 2);
	memcpy(p + 6, &flags, 2);
	memcpy(p + 8, &vlen, 4);
	memcpy(p + 12, &version, 8);
	memcpy(p + REC_HDR, e->key, klen);
	if (vlen > 0)
		memcpy(p + REC_HDR + klen, val, vlen);
	crc = store_crc32(0, p + 4, 16);
	crc = store_crc32(crc, p + REC_HDR, klen + vlen);
	memcpy(p + 20, &crc, 4);
	return REC_HDR + klen + vlen;
}

/* Appends all of p or nothing: a write cut short (a full disk) is cut
 * off the file again, or recovery would stop at the torn record and lose
 * every one after it. Returns 0, or -1 with errno. */
static int
write_all(int fd, const uint8_t *p, size_t n)
{
	off_t end = lseek(fd, 0, SEEK_END);

	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			if (end >= 0 && ftruncate(fd, end) != 0)
				fprintf(stderr, "ewyk: store: cannot cut a torn "
						"write: %s\n", strerror(errno));
			errno = err;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A write or sync of the journal failed with err: counted, kept until
 * the journal holds every version again, and told to durable waiters. */
static void
journal_failed(struct store *s, const char *what, int err)
{
	fprintf(stderr, "ewyk: store: journal %s: %s\n", what, strerror(err));
	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&s->journal_errno, err, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->st.journal_errors, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->failures, s->failures + 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&s->persisted_cv);
	pthread_mutex_unlock(&s->lock);
	__atomic_fetch_add(&s->persist_epoch, 1, __ATOMIC_RELEASE);
}

static void
publish_persisted(struct store *s)
{
	uint32_t i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->batch_n; i++) {
		if (s->batch_v[i] > s->batch_e[i]->persisted)
			__atomic_store_n(&s->batch_e[i]->persisted, s->batch_v[i],
					__ATOMIC_RELEASE);
		if (s->batch_v[i] > s->st.persisted)
			s->st.persisted = s->batch_v[i];
	}
	pthread_cond_broadcast(&s->persisted_cv);
	pthread_mutex_unlock(&s->lock);
	__atomic_fetch_add(&s->persist_epoch, 1, __ATOMIC_RELEASE);
	s->batch_n = 0;
}

static void persist_entry(struct store *s, struct entry *e, bool live_only);

/* A batch that fails is dropped whole, none of its versions published:
 * the sink writes them again from the entries (catch_up()). */
static void
flush_batch(struct store *s, bool sync)
{
	if (s->batch_len > 0) {
		if (write_all(s->fd, s->batch, s->batch_len) != 0) {
			journal_failed(s, "write", errno);
			s->behind = true;
			s->batch_len = 0;
			s->batch_n = 0;
			return;
		}
		s->st.journal_bytes += s->batch_len;
		s->st.batches++;
		s->batch_len = 0;
	}
	if (sync && s->batch_n > 0) {
		s->st.fsyncs++;
		if (fdatasync(s->fd) != 0) {
			journal_failed(s, "fdatasync", errno);
			s->behind = true;
			s->batch_n = 0;
			return;
		}
		publish_persisted(s);
	}
}

/* After a failed batch: every key whose newest version is not on disk
 * goes into the journal again, values and tombstones. One walk of the
 * table, only while behind. */
static void
catch_up(struct store *s)
{
	uint64_t failures = s->failures;
	uint32_t i;

	s->behind = false;
	for (i = 0; i <= s->mask && !s->behind; i++) {
		struct entry *e = &s->e[i];

		if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == 2 &&
				__atomic_load_n(&e->version, __ATOMIC_ACQUIRE) >
				__atomic_load_n(&e->persisted, __ATOMIC_ACQUIRE))
			persist_entry(s, e, false);
	}
	flush_batch(s, true);
	pthread_mutex_lock(&s->lock);
	if (!s->behind && s->failures == failures)
		__atomic_store_n(&s->journal_errno, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&s->lock);
}

/* One key's newest value, or its tombstone unless live_only, into the
 * batch. */
static void
persist_entry(struct store *s, struct entry *e, bool live_only)
{
	static __thread uint8_t val[STORE_VAL_MAX];
	uint64_t version;
	uint32_t vlen;
	bool live;

	live = read_entry(e, val, sizeof(val), &vlen, &version);
	if (version == 0 || (!live && live_only))
		return;
	if (s->batch_len + REC_HDR + STORE_KEY_MAX + STORE_VAL_MAX > BATCH_BYTES)
		flush_batch(s, false);
	s->batch_len += encode(s->batch + s->batch_len, e, vlen, version, val,
			!live);
	s->batch_e[s->batch_n] = e;
	s->batch_v[s->batch_n] = version;
	s->batch_n++;
	if (s->batch_n > s->mask)	/* every key once: sync now */
		flush_batch(s, true);
	s->st.applied++;
}

/* Conflation's consumer. */
static void
persist_one(void *arg, const void *key, size_t klen, void *value)
{
	(void)key;
	(void)klen;
	persist_entry(arg, value, false);
}

static int
open_journal(struct store *s, int extra_flags)
{
	s->fd = open(s->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
			extra_flags, 0644);
	return s->fd < 0 ? -1 : 0;
}

/* Rewrites the journal with one record per key that holds a value, newest
 * values. A deleted key gets none: with no record left behind it, there is
 * nothing for its tombstone to hide. A tombstone still pending in
 * conflation is appended after, harmlessly. */
static void
compact(struct store *s)
{
	char tmp[4200];
	uint32_t i;
	int fd_old = s->fd;
	uint64_t bytes = 0, failures;

	snprintf(tmp, sizeof(tmp), "%s.compact", s->path);
	s->fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (s->fd < 0) {
		fprintf(stderr, "ewyk: store: %s: %s\n", tmp, strerror(errno));
		s->fd = fd_old;
		return;
	}
	failures = s->failures;
	for (i = 0; i <= s->mask; i++)
		if (__atomic_load_n(&s->e[i].state, __ATOMIC_ACQUIRE) == 2)
			persist_entry(s, &s->e[i], true);
	bytes = s->st.journal_bytes;
	flush_batch(s, true);
	if (s->failures != failures) {	/* the old journal stays */
		close(s->fd);
		unlink(tmp);
		s->fd = fd_old;
		return;
	}
	if (fsync(s->fd) != 0 || rename(tmp, s->path) != 0) {
		fprintf(stderr, "ewyk: store: compaction failed: %s\n",
				strerror(errno));
		close(s->fd);
		s->fd = fd_old;
		return;
	}
	{
		int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd >= 0) {
			fsync(dfd);	/* the rename itself must last */
			close(dfd);
		}
	}
	close(fd_old);
	s->st.journal_bytes = s->st.journal_bytes - bytes;
	{
		struct stat stt;

		if (fstat(s->fd, &stt) == 0)
			s->st.journal_bytes = (uint64_t)stt.st_size;
	}
	s->st.compactions++;
}

static void *
sink_main(void *arg)
{
	struct store *s = arg;

	for (;;) {
		int rc = conflate_wait(s->cf);

		/* Drain what is pending even when stopping: nothing is lost. */
		conflate_poll(s->cf);
		flush_batch(s, true);
		if (s->behind)
			catch_up(s);
		if (s->journal_max && s->st.journal_bytes > s->journal_max)
			compact(s);
		if (rc == -ESHUTDOWN)
			break;
	}
	return NULL;
}

/* Reads the journal back; a torn or corrupt tail is cut off. */
static int
recover(struct store *s, char *err, size_t errlen)
{
	struct stat stt;
	uint8_t *buf;
	size_t off = 0, size;
	int fd = open(s->path, O_RDONLY | O_CLOEXEC);

	s->st.torn_offset = -1;
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if (fstat(fd, &stt) != 0) {
		close(fd);
		return -1;
	}
	size = (size_t)stt.st_size;
	buf = malloc(size ? size : 1);
	if (buf == NULL || (size && pread(fd, buf, size, 0) != (ssize_t)size)) {
		snprintf(err, errlen, "%s: cannot read the journal", s->path);
		free(buf);
		close(fd);
		return -1;
	}
	close(fd);
	while (off + REC_HDR <= size) {
		uint32_t magic, vlen, crc;
		uint16_t klen, flags;
		uint64_t version;
		struct entry *e;
		bool dead;

		memcpy(&magic, buf + off, 4);
		memcpy(&klen, buf + off + 4, 2);
		memcpy(&flags, buf + off + 6, 2);
		memcpy(&vlen, buf + off + 8, 4);
		memcpy(&version, buf + off + 12, 8);
		memcpy(&crc, buf + off + 20, 4);
		dead = (flags & REC_TOMBSTONE) != 0;
		if (magic != REC_MAGIC || klen == 0 || klen > STORE_KEY_MAX ||
				vlen > STORE_VAL_MAX ||
				(flags & ~REC_TOMBSTONE) != 0 ||
				(dead && vlen != 0) ||
				off + REC_HDR + klen + vlen > size)
			break;
		if (store_crc32(store_crc32(0, buf + off + 4, 16),
				buf + off + REC_HDR, klen + vlen) != crc)
			break;
		/* A tombstone claims its key too: a record of an older
		 * version may come after it (two writers, one key, without
		 * conflation) and must not bring the value back. */
		e = lookup(s, (const char *)buf + off + REC_HDR, klen, true);
		if (e == NULL) {
			snprintf(err, errlen, "%s: more keys than the store holds",
					s->path);
			free(buf);
			return -1;
		}
		write_entry(s, e, buf + off + REC_HDR + klen, vlen, version,
				dead);
		if (version > e->persisted)
			e->persisted = version;
		if (version > s->version)
			s->version = version;
		s->st.recovered++;
		off += REC_HDR + klen + vlen;
	}
	free(buf);
	s->st.persisted = s->version;
	if (off < size) {
		fprintf(stderr, "ewyk: store: %s: torn or corrupt record at offset "
				"%zu; ignoring the last %zu bytes\n", s->path, off,
				size - off);
		s->st.torn_offset = (int64_t)off;
		if (truncate(s->path, (off_t)off) != 0) {
			snprintf(err, errlen, "%s: cannot cut the bad tail: %s",
					s->path, strerror(errno));
			return -1;
		}
	}
	s->st.journal_bytes = off;
	return 0;
}

struct store *
store_open(const struct store_conf *conf, char *err, size_t errlen)
{
	struct conflate_params cp;
	struct store *s;
	uint32_t cap = 1;

	while (cap < conf->capacity)
		cap <<= 1;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		goto nomem;
	s->e = calloc(cap, sizeof(*s->e));
	if (s->e == NULL)
		goto nomem;
	s->mask = cap - 1;
	s->fd = -1;
	s->journal_max = conf->journal_max;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->persisted_cv, NULL);
	if (conf->dir == NULL)
		return s;	/* memory only */
	snprintf(s->dir, sizeof(s->dir), "%s", conf->dir);
	snprintf(s->path, sizeof(s->path), "%s/journal.ewyk", conf->dir);
	if (mkdir(conf->dir, 0755) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", conf->dir, strerror(errno));
		goto fail;
	}
	if (recover(s, err, errlen) != 0) {
		if (err[0] == 0)
			snprintf(err, errlen, "%s: %s", s->path, strerror(errno));
		goto fail;
	}
	s->batch = malloc(BATCH_BYTES);
	s->batch_e = calloc(cap, sizeof(*s->batch_e));
	s->batch_v = calloc(cap, sizeof(*s->batch_v));
	if (s->batch == NULL || s->batch_e == NULL || s->batch_v == NULL)
		goto nomem;
	if (open_journal(s, 0) != 0) {
		snprintf(err, errlen, "%s: %s", s->path, strerror(errno));
		goto fail;
	}
	s->no_conflate = conf->no_conflate;
	if (s->no_conflate)
		return s;
	memset(&cp, 0, sizeof(cp));
	cp.fn = persist_one;
	cp.arg = s;
	cp.capacity = cap;
	cp.max_keys = cap;
	s->cf = conflate_create(&cp);
	if (s->cf == NULL || pthread_create(&s->sink, NULL, sink_main, s) != 0)
		goto nomem;
	s->sink_running = true;
	return s;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	store_close(s);
	return NULL;
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	if (s->sink_running) {
		conflate_stop(s->cf);
		pthread_join(s->sink, NULL);
	}
	if (s->cf != NULL)
		conflate_destroy(s->cf);
	if (s->fd >= 0)
		close(s->fd);
	free(s->batch);
	free(s->batch_e);
	free(s->batch_v);
	free(s->e);
	free(s);
}

int
store_wait_durable(struct store *s, const char *key, size_t klen,
		uint64_t version, uint32_t timeout_ms)
{
	struct entry *e = lookup(s, key, klen, false);
	struct timespec until;
	uint64_t failures;
	int rc = 0;

	if (s->cf == NULL && !s->no_conflate)
		return -ENOTSUP;
	if (e == NULL)
		return -ENOENT;
	if (s->no_conflate) {
		uint64_t written;

		pthread_mutex_lock(&s->lock);
		if (s->journal_errno != 0) {	/* the last write failed */
			rc = -s->journal_errno;
		} else if (__atomic_load_n(&e->persisted, __ATOMIC_ACQUIRE) < version) {
			written = __atomic_load_n(&s->version, __ATOMIC_RELAXED);
			s->st.fsyncs++;
			if (fdatasync(s->fd) != 0) {
				rc = -errno;
				pthread_mutex_unlock(&s->lock);
				journal_failed(s, "fdatasync", -rc);
				return rc;
			}
			/* Everything written before the sync is on disk; the
			 * key's own version is among it. */
			__atomic_store_n(&e->persisted, version, __ATOMIC_RELEASE);
			if (written > s->st.persisted)
				s->st.persisted = written;
		}
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	/* A failure before the wait began may be mended by the sink's next
	 * try; one after it is this version's. */
	pthread_mutex_lock(&s->lock);
	failures = s->failures;
	while (__atomic_load_n(&e->persisted, __ATOMIC_ACQUIRE) < version && rc == 0 &&
			s->failures == failures)
		rc = pthread_cond_timedwait(&s->persisted_cv, &s->lock, &until);
	if (__atomic_load_n(&e->persisted, __ATOMIC_ACQUIRE) >= version)
		rc = 0;
	else
		rc = s->failures != failures ? -s->journal_errno : -ETIMEDOUT;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int
store_durable_state(struct store *s, const char *key, size_t klen,
		uint64_t version)
{
	struct entry *e;

	if (s->cf == NULL && !s->no_conflate)
		return -ENOTSUP;
	e = lookup(s, key, klen, false);
	if (e == NULL)
		return -ENOENT;
	if (__atomic_load_n(&e->persisted, __ATOMIC_ACQUIRE) >= version)
		return 1;
	return s->no_conflate ? -EAGAIN : 0;
}

uint64_t
store_persist_epoch(struct store *s)
{
	return __atomic_load_n(&s->persist_epoch, __ATOMIC_ACQUIRE);
}

uint64_t
store_journal_failures(struct store *s, int *err)
{
	*err = __atomic_load_n(&s->journal_errno, __ATOMIC_RELAXED);
	return __atomic_load_n(&s->failures, __ATOMIC_ACQUIRE);
}

void
store_stats(struct store *s, struct store_stats *st)
{
	*st = s->st;
	st->version = __atomic_load_n(&s->version, __ATOMIC_RELAXED);
	st->journal_errors = __atomic_load_n(&s->st.journal_errors, __ATOMIC_RELAXED);
	st->journal_errno = __atomic_load_n(&s->journal_errno, __ATOMIC_RELAXED);
	if (s->cf != NULL) {
		struct conflate_stats cs;

		conflate_stats(s->cf, &cs);
		st->offers = cs.offers;
		st->superseded = cs.superseded;
	}
}
