/* SPDX-License-Identifier: BSD-3-Clause */
/* The EAL's start: one line naming the cause when it fails, no alarming
 * lines when it does not. */
#ifndef EWYKD_EAL_H
#define EWYKD_EAL_H

#include <stddef.h>

#include "ewykd.h"

/* rte_eal_init() on the EAL's arguments. EWYKD_OK; else the line (without
 * "ewykd: ") in err: EWYKD_ERR_EAL for an option the EAL refused,
 * EWYKD_ERR_EAL_BUSY when another process uses the file prefix,
 * EWYKD_ERR_NOMEM when its memory cannot be had. */
enum ewykd_err eal_init(int argc, char **argv, char *err, size_t errlen);
/* --check-config: the EAL's own parser reads the options, in a child
 * process that ends before anything is set up (no memory, device, file
 * or thread); a refused option gives the line rte_eal_init() would.
 * *lcores: the lcores they give. */
enum ewykd_err eal_check(int argc, char **argv, unsigned int *lcores,
		char *err, size_t errlen);
/* DPDK's log from now on, without the lines known to be harmless. */
void eal_log_filter(void);

#endif /* EWYKD_EAL_H */
