/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the handlers serve from, opened at start-up before any lcore or
 * thread runs, so that a bad --www, --state-dir or --plugin stops ewykd
 * with nothing to undo but memory: the static files, the two stores, the
 * built-in routes and the plugins' routes.
 */
#ifndef EWYKD_SERVICES_H
#define EWYKD_SERVICES_H

#include <stddef.h>

#include "ewykd.h"

/* A configuration that serves something: --www, or a route of another
 * kind. EWYKD_OK, or EWYKD_ERR_CONFIG with its line in err. */
enum ewykd_err services_check_served(const struct ewykd_config *cfg,
		char *err, size_t errlen);
/* EWYKD_OK, or an error with its line (without "ewykd: ") in err. */
enum ewykd_err services_open(struct ewykd *e, char *err, size_t errlen);
/* Once no thread runs a handler: what the stores hold goes to disk. */
void services_close(struct ewykd *e);
/* The TLS certificates and keys of the configuration, loaded and checked
 * (lib/tls), with credentials for each of shards; NULL with the reason in
 * err. */
struct tls_config *services_tls_load(const struct ewykd_config *cfg,
		uint16_t shards, char *err, size_t errlen);

#endif /* EWYKD_SERVICES_H */
