/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The executors the shards' strategies consume on: the reserved lcores
 * (every worker lcore; each shard's first producer is one of them) and
 * the blocking pool's threads. Started once the shards exist, stopped
 * once production has.
 */
#ifndef EWYKD_EXECUTORS_H
#define EWYKD_EXECUTORS_H

#include <stdint.h>

struct ewykd;

/* The reserved lcores and the blocking pool: their threads start here.
 * 0, or -1 with errno. */
int executors_create(struct ewykd *e);
/* Main lcore: an owner inside one inline task for longer than --stuck-ms
 * loses the shard to an idle reserved lcore. */
void executors_watch(struct ewykd *e, uint64_t now_ms);
/* After force_quit: waits for the producers to stop, settles what the
 * pools still run (their waits cancelled), stops the pools and writes the
 * answers they posted. */
void executors_stop(struct ewykd *e);

#endif /* EWYKD_EXECUTORS_H */
