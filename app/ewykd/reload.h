/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reloading while serving, always on the main lcore: SIGHUP, /ewyk/reload
 * and /ewyk/tls_reload ask, the main lcore's watch loop does it off the
 * data path. The static tree is rebuilt and swapped in for every shard at
 * once; an answer begun on the old tree keeps it until its body is
 * written, and the old tree is freed after. The TLS certificates and keys
 * are read again; connections already open go on with the credentials
 * they started with. What cannot be loaded leaves what was there in
 * place, and one line says why.
 */
#ifndef EWYKD_RELOAD_H
#define EWYKD_RELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ewykd;

/* Async-signal-safe: asks for a reload, done by the next reload_step(). */
void reload_ask(void);
/* Main lcore, now and then: a reload asked is done, a replaced tree
 * whose last answer is out is freed, the ticket key rotates when its
 * time has come. */
void reload_step(struct ewykd *e);
/* Asks and waits up to timeout_ms for the outcome of the TLS part: 0
 * reloaded, -1 refused (why in msg), -2 not done in time (no main lcore
 * is watching). */
int reload_request_wait(char *msg, size_t len, unsigned int timeout_ms);

#endif /* EWYKD_RELOAD_H */
