/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reloading while serving: SIGHUP (or /ewyk/reload) rebuilds the static
 * tree off the data path, on the main lcore, and swaps it in for every
 * shard at once; an answer begun on the old tree keeps it until its body
 * is written, and the old tree is freed after. A new tree that cannot be
 * loaded leaves the old one in place, and says why.
 */
#ifndef EWYKD_RELOAD_H
#define EWYKD_RELOAD_H

#include <stdbool.h>
#include <stdint.h>

struct ewykd;

/* The counts of the tree served, for telemetry (at start and each swap). */
void reload_note_tree(struct ewykd *e);
/* Asked (the signal handler, telemetry): done by the next reload_step(). */
void reload_ask(void);
/* Main lcore, now and then: a reload asked is done, a replaced tree
 * whose last answer is out is freed. */
void reload_step(struct ewykd *e);

#endif /* EWYKD_RELOAD_H */
