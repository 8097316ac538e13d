/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>

#include <rte_common.h>

#include "lcores.h"

enum ewykd_err
lcores_plan(const struct ewykd_config *cfg, unsigned int workers,
		uint16_t *shards, char *err, size_t errlen)
{
	uint16_t n;

	if (cfg->reserved_set && cfg->reserved > 0 && cfg->reserved >= workers) {
		snprintf(err, errlen, "--reserved %u leaves no worker lcore for "
				"a shard (the EAL has %u worker lcore%s; use -l)",
				cfg->reserved, workers, workers == 1 ? "" : "s");
		return EWYKD_ERR_LCORES;
	}
	n = cfg->shards ? cfg->shards :
		(uint16_t)RTE_MAX(workers - cfg->reserved, 1u);
	if (n > RTE_MAX(workers, 1u) ||
			(workers > 0 && n + cfg->reserved > workers)) {
		snprintf(err, errlen, "--shards %u with --reserved %u needs %u "
				"worker lcores, the EAL has %u (use -l)",
				n, cfg->reserved, n + cfg->reserved, workers);
		return EWYKD_ERR_LCORES;
	}
	if (cfg->mbufs < (uint32_t)n * cfg->nb_ports *
			(cfg->rx_desc + cfg->tx_desc) + 1024) {
		snprintf(err, errlen, "--mbufs %u is too few for %u shards of "
				"%u RX + %u TX descriptors on %u port%s",
				cfg->mbufs, n, cfg->rx_desc, cfg->tx_desc,
				cfg->nb_ports, cfg->nb_ports == 1 ? "" : "s");
		return EWYKD_ERR_CONFIG;
	}
	*shards = n;
	return EWYKD_OK;
}
