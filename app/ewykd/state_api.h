/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The handler API's view of the journaled store (ewyk_state_*() in
 * ewyk_http.h): ewykd's /v1/state store, given at start-up.
 */
#ifndef EWYKD_STATE_API_H
#define EWYKD_STATE_API_H

#include <stdbool.h>
#include <stddef.h>

struct store;

/* Before any handler runs (plugins' init included), and NULL at the end. */
void state_api_attach(struct store *st);
/* 1 to STORE_KEY_MAX bytes of [A-Za-z0-9._-]. */
bool state_key_ok(const char *key, size_t len);

#endif /* EWYKD_STATE_API_H */
