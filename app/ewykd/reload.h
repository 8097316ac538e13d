/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reloads without a restart, always on the main lcore: SIGHUP and the
 * /ewyk/tls_reload telemetry command ask, the main lcore's watch loop
 * reads the certificates and keys again. Connections already open go on
 * with the credentials they started with.
 */
#ifndef EWYKD_RELOAD_H
#define EWYKD_RELOAD_H

#include <stddef.h>

struct ewykd;

/* Async-signal-safe: asks for a reload. */
void reload_request(void);
/* On the main lcore, between watches: reloads if asked (one line on
 * stdout or stderr says how it went), and rotates the ticket key when its
 * time has come. */
void reload_poll(struct ewykd *e);
/* Asks and waits up to timeout_ms for the outcome: 0 reloaded, -1 refused
 * (why in msg), -2 not done in time (no main lcore is watching). */
int reload_request_wait(char *msg, size_t len, unsigned int timeout_ms);

#endif /* EWYKD_RELOAD_H */
