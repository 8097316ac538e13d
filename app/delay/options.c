/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewyk-delay's options. Every error is one line on stderr, and the exit
 * status 2.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define ERR(...) do { \
	fprintf(stderr, "ewyk-delay: " __VA_ARGS__); \
	fputc('\n', stderr); \
	return 2; \
} while (0)

void
delay_usage(FILE *out)
{
	fputs(
"Usage: ewyk-delay --a IFACE --b IFACE [--delay-ms MS] [--loss PCT]\n"
"                  [--seed N] [--rate MBIT] [--queue BYTES] [--frames N]\n"
"                  [--stats FILE] [--no-realtime]\n"
"A transparent L2 bridge between two interfaces of the namespace it runs\n"
"in, with a path of its own in each direction: every frame one interface\n"
"receives (ARP, ND, IPv4, IPv6, anything) leaves on the other, unchanged\n"
"and in order, after\n"
"  1. random loss: dropped with probability --loss;\n"
"  2. a bottleneck of --rate Mbit/s with a drop-tail queue of --queue\n"
"     bytes: a frame leaves it at max(arrival, previous departure) +\n"
"     length / rate, and a frame that would find more than --queue bytes\n"
"     ahead of it (its own included) is dropped;\n"
"  3. a fixed delay of --delay-ms (so the round trip is twice that).\n"
"\n"
"  --a IFACE, --b IFACE  the two interfaces (required, distinct); both are\n"
"                     put in promiscuous mode while it runs\n"
"  --delay-ms MS      one-way delay of each direction, milliseconds, may be\n"
"                     fractional (default 0)\n"
"  --loss PCT         loss of each direction, percent from 0 to 100\n"
"                     (default 0)\n"
"  --seed N           seed of the loss draws (default 1): each direction\n"
"                     has a stream of its own, the same for the same seed\n"
"  --rate MBIT        bottleneck rate of each direction, Mbit/s (default 0:\n"
"                     unlimited, no queue)\n"
"  --queue BYTES      the bottleneck's queue (default: a bandwidth-delay\n"
"                     product, rate x 2 x delay, at least 64 KB; no effect\n"
"                     without --rate)\n"
"  --frames N         frames each direction can hold, rounded up to a power\n"
"                     of two (default 65536); a frame that finds them all\n"
"                     held is dropped (ring_full)\n"
"  --stats FILE       where the counters go (default: stderr), on exit and\n"
"                     on SIGUSR1; the file is replaced whole each time\n"
"  --no-realtime      keep the default scheduling policy; without it the\n"
"                     medium runs SCHED_FIFO at priority 1, so that a\n"
"                     loaded machine's other work does not lengthen the\n"
"                     delay by its wake-ups (milliseconds at a time)\n"
"  -h, --help         this text\n"
"\n"
"Frame buffers are the larger MTU of the two interfaces plus link headers:\n"
"a longer frame (a GRO or TSO super-frame) is dropped and counted as\n"
"oversize. Frames cross as they were sent, a checksum left to TX offload\n"
"unfinished too: turn off tx, tso, gso and gro on the veths' ends.\n"
"SIGINT and SIGTERM end it with status 0, after the counters: one line\n"
"per direction (a>b, b>a), key=value:\n"
"  received forwarded bytes drop_loss drop_queue drop_ring_full\n"
"  drop_oversize drop_send queued drop_socket\n"
"where bytes are the forwarded frames' (link headers included),\n"
"received = forwarded + the drops + queued (still held), and drop_socket\n"
"the frames the kernel dropped before they could be read (its socket\n"
"buffer full; they were never received).\n"
"It needs CAP_NET_RAW (root) for its packet sockets.\n"
"Exit status: 0 after a signal, 1 on a failure while running, 2 on a bad\n"
"option or interface.\n", out);
}

static int
parse_double(const char *opt, const char *val, double min, double max,
		double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (val[0] == '\0' || *end != '\0' || errno != 0 || !isfinite(v) ||
			v < min || v > max)
		ERR("--%s '%s': not a number from %.15g to %.15g", opt, val,
				min, max);
	*out = v;
	return 0;
}

static int
parse_u64(const char *opt, const char *val, uint64_t min, uint64_t max,
		uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(val, &end, 0);
	if (val[0] == '\0' || val[0] == '-' || *end != '\0' || errno != 0 ||
			v < min || v > max)
		ERR("--%s '%s': not an integer from %llu to %llu", opt, val,
				(unsigned long long)min,
				(unsigned long long)max);
	*out = v;
	return 0;
}

static uint32_t
pow2_ceil(uint64_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* The default queue: one bandwidth-delay product of the whole round trip
 * (rate x 2 x delay), so that one flow can fill the pipe, and never less
 * than 64 KB, so that a short path still takes a burst. */
static uint64_t
default_queue(const struct delay_config *cfg)
{
	double bdp = cfg->rate_mbit * 1e6 / 8 * 2 * cfg->delay_ms / 1e3;

	return bdp > DELAY_QUEUE_MIN ? (uint64_t)bdp : DELAY_QUEUE_MIN;
}

enum {
	OPT_A = 256, OPT_B, OPT_DELAY, OPT_LOSS, OPT_SEED, OPT_RATE,
	OPT_QUEUE, OPT_FRAMES, OPT_STATS, OPT_NO_RT,
};

static const struct option long_opts[] = {
	{ "a", required_argument, NULL, OPT_A },
	{ "b", required_argument, NULL, OPT_B },
	{ "delay-ms", required_argument, NULL, OPT_DELAY },
	{ "loss", required_argument, NULL, OPT_LOSS },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "queue", required_argument, NULL, OPT_QUEUE },
	{ "frames", required_argument, NULL, OPT_FRAMES },
	{ "stats", required_argument, NULL, OPT_STATS },
	{ "no-realtime", no_argument, NULL, OPT_NO_RT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One option and its value into cfg; 2 on a bad value. */
static int
parse_one(int opt, const char *name, const char *val, struct delay_config *cfg)
{
	uint64_t u;

	switch (opt) {
	case OPT_A:
		cfg->a = val;
		return 0;
	case OPT_B:
		cfg->b = val;
		return 0;
	case OPT_DELAY:
		return parse_double(name, val, 0, 3600e3, &cfg->delay_ms);
	case OPT_LOSS:
		return parse_double(name, val, 0, 100, &cfg->loss_pct);
	case OPT_SEED:
		return parse_u64(name, val, 0, UINT64_MAX, &cfg->seed);
	case OPT_RATE:
		return parse_double(name, val, 0, 1e6, &cfg->rate_mbit);
	case OPT_QUEUE:
		return parse_u64(name, val, 1, 1ull << 40, &cfg->queue_bytes);
	case OPT_FRAMES:
		if (parse_u64(name, val, 64, 1u << 22, &u) != 0)
			return 2;
		cfg->frames = pow2_ceil(u);
		return 0;
	case OPT_STATS:
		if (val[0] == '\0')
			ERR("--%s: an empty file name", name);
		cfg->stats = val;
		return 0;
	case OPT_NO_RT:
		cfg->no_realtime = true;
		return 0;
	}
	ERR("internal: option %d", opt);
}

/* Fills cfg from the command line. Returns 0 to run, 1 when --help was
 * printed, 2 on an error (already printed). */
int
delay_options(int argc, char **argv, struct delay_config *cfg)
{
	int opt, idx;

	memset(cfg, 0, sizeof(*cfg));
	cfg->seed = 1;
	cfg->frames = DELAY_FRAMES_DEFAULT;
	opterr = 0;
	for (;;) {
		idx = -1;
		opt = getopt_long(argc, argv, ":h", long_opts, &idx);
		if (opt == -1)
			break;
		if (opt == 'h') {
			delay_usage(stdout);
			return 1;
		}
		if (opt == '?' && optopt != 0)
			ERR("unknown option '-%c' (see --help)", optopt);
		if (opt == '?')
			ERR("unknown option '%s' (see --help)", argv[optind - 1]);
		if (opt == ':')
			ERR("option '%s' needs a value (see --help)",
					argv[optind - 1]);
		if (parse_one(opt, idx >= 0 ? long_opts[idx].name : "?",
				optarg, cfg) != 0)
			return 2;
	}
	if (optind < argc)
		ERR("unexpected argument '%s' (see --help)", argv[optind]);
	if (cfg->a == NULL || cfg->b == NULL)
		ERR("--a IFACE and --b IFACE are both required (see --help)");
	if (strcmp(cfg->a, cfg->b) == 0)
		ERR("--a and --b are the same interface '%s'", cfg->a);
	if (cfg->rate_mbit > 0 && cfg->queue_bytes == 0)
		cfg->queue_bytes = default_queue(cfg);
	return 0;
}
