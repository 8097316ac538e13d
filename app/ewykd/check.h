/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --check-config: everything a start checks, short of taking the ports
 * and the memory, in the order a start meets it; then the configuration
 * resolved, printed as a file ewykd reads back.
 */
#ifndef EWYKD_CHECK_H
#define EWYKD_CHECK_H

#include "ewykd.h"

/* The exit status: 0 when good (the configuration printed), else that
 * of the first error (2 configuration, 1 resources), its line on stderr. */
int check_config(struct ewykd *e, int eal_argc, char **eal_argv);

#endif /* EWYKD_CHECK_H */
