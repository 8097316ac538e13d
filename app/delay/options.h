/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewyk-delay: an L2 delay medium between two interfaces, for tests and
 * benchmarks on kernels without netem. Each direction is a path: random
 * loss, a rate-limited bottleneck with a drop-tail queue, then a fixed
 * delay line, all in one thread over AF_PACKET sockets.
 */
#ifndef EWYK_DELAY_OPTIONS_H
#define EWYK_DELAY_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define DELAY_FRAMES_DEFAULT 65536u	/* ring frames per direction */
#define DELAY_QUEUE_MIN (64u * 1024)	/* default queue's floor, bytes */

struct delay_config {
	const char *a;			/* interface names */
	const char *b;
	double delay_ms;		/* one-way, each direction */
	double loss_pct;		/* each direction */
	double rate_mbit;		/* 0: unlimited */
	uint64_t queue_bytes;		/* 0 with rate 0: unlimited */
	uint64_t seed;
	uint32_t frames;		/* ring frames per direction */
	const char *stats;		/* NULL: stderr */
	bool no_realtime;		/* keep the default scheduling */
};

void delay_usage(FILE *out);
int delay_options(int argc, char **argv, struct delay_config *cfg);

#endif /* EWYK_DELAY_OPTIONS_H */
