/* SPDX-License-Identifier: BSD-3-Clause */
/* /ewyk/... telemetry commands. Counters are summed over shards on read. */
#ifndef EWYKD_TELEMETRY_H
#define EWYKD_TELEMETRY_H

#include <stdio.h>

struct ewykd;

/* Registers the commands; they read e until the process exits. */
int telemetry_register(const struct ewykd *e);
/* One line per command, for --help. */
void telemetry_usage(FILE *f);

#endif /* EWYKD_TELEMETRY_H */
