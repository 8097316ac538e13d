/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the HTTP fuzz targets share: a conversation played from the fuzzer's
 * bytes on lib/http's server through the unit tests' scripted transport
 * (tests/unit/http_harness.h), up to two connections.
 *
 * The input is a sequence of records, an op byte and an argument byte:
 *   op & 7 in 0..3  the peer sends: the argument plus (op >> 4 & 3) * 256
 *                   bytes follow, taken in one http_conn_recv() (as many
 *                   as the receive space allows, the rest after)
 *   op & 7 == 4     the clock advances argument * 50 ms
 *   op & 7 == 5     argument 0: the send queue is full (space 0); else
 *                   argument * 32 bytes of send space are freed
 *   op & 7 == 6     the queued handler number argument (modulo how many
 *                   wait) answers now
 *   op & 7 == 7     argument & 7: 0 the peer closes, 1 the peer resets,
 *                   2 a second connection opens (while the first is
 *                   open), 3 the server drains,
 *                   else the clock ticks by 100 ms
 * Bit 3 of op picks the connection. Then the conversation is finished the
 * same way every time: all the send space it wants, every handler run,
 * the peer's close; then, with no time passing, every connection must have
 * ended (closed or reset) and every answer be given back once.
 */
#ifndef EWYK_FUZZ_HTTP_H
#define EWYK_FUZZ_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "http_harness.h"

#define FH_CONNS 2
#define FH_HEADER_TIMEOUT_MS 2000
#define FH_KEEPALIVE_MS 5000

/* A broken invariant: the message, then abort() for the fuzzer to catch. */
#define fh_check(cond, ...) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "invariant broken: " __VA_ARGS__);	\
		fputc('\n', stderr);					\
		abort();						\
	}								\
} while (0)

struct fh {
	struct hh *h;
	struct hh_conn *k[FH_CONNS];	/* NULL: never opened */
	bool reset[FH_CONNS];		/* the peer reset it */
};

/* libFuzzer's, before anything: harness failures abort, so that the
 * fuzzer sees them. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
/* A server and its first connection; prefix (may be NULL) is sent first. */
void fh_start(struct fh *f, const void *prefix, size_t prefix_len);
/* Plays the records of data, then finishes the conversation. */
void fh_play(struct fh *f, const uint8_t *data, size_t size);
/* Frees the server: checks that every answer went back exactly once. */
void fh_end(struct fh *f);

#endif /* EWYK_FUZZ_HTTP_H */
