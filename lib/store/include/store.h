/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A last-value store shared by every shard: a PUT is visible at once to
 * GETs on every lcore (seqlocked entries, lock-free reads), and a
 * conflating write-behind persists only the latest value of each key to an
 * append-only journal of checksummed records, from one sink thread with
 * one fdatasync per batch. A durable PUT waits until a version at least as
 * new as its own is on disk: group commit through conflation. A DELETE is
 * a versioned tombstone that travels the same way.
 */
#ifndef EWYK_STORE_H
#define EWYK_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_KEY_MAX 64
#define STORE_VAL_MAX 4096

struct store;

struct store_conf {
	const char *dir;		/* journal directory; NULL: memory only */
	uint32_t capacity;		/* keys; a power of two */
	uint64_t journal_max;		/* compact past this many bytes */
	bool no_conflate;		/* write every PUT (a baseline to measure) */
};

struct store_stats {
	uint64_t puts;
	uint64_t deletes;		/* that removed a value */
	uint64_t gets;
	uint64_t offers;		/* to the write-behind */
	uint64_t superseded;		/* offers conflated away */
	uint64_t applied;		/* records written */
	uint64_t batches;		/* writes of a batch to the journal */
	uint64_t fsyncs;
	uint64_t compactions;
	uint64_t journal_bytes;
	uint64_t version;		/* newest version given out */
	uint64_t persisted;		/* newest version known on disk */
	uint64_t recovered;		/* records read back at start */
	int64_t torn_offset;		/* where recovery stopped, -1 if clean */
	uint32_t keys;			/* that hold a value now */
	uint64_t journal_errors;	/* failed writes and syncs */
	int journal_errno;		/* of the last, while it is not mended */
};

/* Opens (recovering the journal) and starts the sink thread. NULL with a
 * message in err on failure. */
struct store *store_open(const struct store_conf *conf, char *err,
		size_t errlen);
/* Persists what is pending, stops the sink, frees. */
void store_close(struct store *s);

/* Copies the value into buf; returns its length, or -1 if absent. */
long store_get(struct store *s, const char *key, size_t klen, void *buf,
		size_t cap, uint64_t *version);
/* Returns the new version, or 0 if the key or value is too large or the
 * table is full. */
uint64_t store_put(struct store *s, const char *key, size_t klen,
		const void *val, size_t vlen);
/* Removes the key; returns the new version (a tombstone's), or 0 if absent. */
uint64_t store_delete(struct store *s, const char *key, size_t klen);
/* Blocks until the key's persisted version (a PUT's or a DELETE's)
 * reaches version: 0, or -ETIMEDOUT, or -ENOTSUP without a journal, or
 * the negated errno of a journal write that failed meanwhile (-ENOSPC on
 * a full disk). Versions a failed write lost are written again by the
 * sink's next batch (one comes with the next PUT or DELETE). */
int store_wait_durable(struct store *s, const char *key, size_t klen,
		uint64_t version, uint32_t timeout_ms);
/* Without blocking, for waiters that cannot (fibers): 1 when the key's
 * persisted version reached version; 0 when not yet, and the sink will
 * get there (look again once store_persist_epoch() moves); -EAGAIN when
 * only store_wait_durable() will (no write-behind: --store-conflate off);
 * -ENOTSUP without a journal; -ENOENT for a key never written. */
int store_durable_state(struct store *s, const char *key, size_t klen,
		uint64_t version);
/* Moves each time versions reach the disk, or a journal write fails. */
uint64_t store_persist_epoch(struct store *s);
/* Failed journal writes so far, and the errno of the last while the
 * journal is still behind (0 once it holds every version again): a
 * waiter that cannot block compares the count with the one it began
 * with, as store_wait_durable() does. */
uint64_t store_journal_failures(struct store *s, int *err);
void store_stats(struct store *s, struct store_stats *st);

/* Checksum of the journal's records (CRC-32, IEEE). */
uint32_t store_crc32(uint32_t crc, const void *buf, size_t len);

#endif /* EWYK_STORE_H */
