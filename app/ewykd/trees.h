/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The preloaded static trees: --www's and each distinct root of the
 * sites and routes, loaded with the configuration's rules for them (at
 * start-up, --check-config and each reload, off the data path), freed,
 * and counted for telemetry.
 */
#ifndef EWYKD_TREES_H
#define EWYKD_TREES_H

#include <stddef.h>
#include <stdint.h>

#include "ewykd.h"

/* The static files under root, loaded anew; NULL with the reason in
 * err. */
struct www *trees_load(const struct ewykd *e, const char *root, char *err,
		size_t errlen);
/* A tree from trees_load(), or NULL. */
void trees_free(struct www *w);
/* Files, paths left out and bytes of the sites' trees. */
void trees_count(const struct ewykd *e, uint32_t *files, uint32_t *skipped,
		uint64_t *bytes);
/* The counts of what is served, for telemetry (at start and each
 * reload's swap): the sites' trees where there are sites, else --www's. */
void trees_note(struct ewykd *e);

#endif /* EWYKD_TREES_H */
