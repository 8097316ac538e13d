/* SPDX-License-Identifier: BSD-3-Clause */
/* /ewyk/... telemetry commands. Counters are summed over shards on read. */
#ifndef EWYKD_TELEMETRY_H
#define EWYKD_TELEMETRY_H

struct ewykd;

/* Registers the commands; they read e until the process exits. */
int telemetry_register(const struct ewykd *e);

#endif /* EWYKD_TELEMETRY_H */
