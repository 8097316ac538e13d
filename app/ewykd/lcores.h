/* SPDX-License-Identifier: BSD-3-Clause */
/* Shards and reserved lcores out of the EAL's worker lcores: the plan a
 * start follows, and --check-config checks, before anything runs. */
#ifndef EWYKD_LCORES_H
#define EWYKD_LCORES_H

#include <stddef.h>
#include <stdint.h>

#include "ewykd.h"

/* With workers worker lcores: the shards (--shards, else one per worker
 * lcore not --reserved) in *shards. EWYKD_OK, or EWYKD_ERR_LCORES (too
 * few lcores) or EWYKD_ERR_CONFIG (too few --mbufs for the shards'
 * rings) with the line in err. */
enum ewykd_err lcores_plan(const struct ewykd_config *cfg,
		unsigned int workers, uint16_t *shards, char *err,
		size_t errlen);

#endif /* EWYKD_LCORES_H */
