/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Drives lib/http's server through the scripted transport of http_harness
 * with N small-file requests in one of three shapes, for counting the
 * server's instructions per request under callgrind (app/bench/http_instr.sh).
 * No NIC, no TCP: what this counts is the HTTP layer alone, the same on
 * every run, where a timed run on this machine would be noise.
 *
 *   http-instr h1|h1p|h2c N
 *     h1   HTTP/1.1 keep-alive, one request at a time
 *     h1p  HTTP/1.1 pipelined, 16 requests per write
 *     h2c  HTTP/2, 100 concurrent streams per round trip, a connection per
 *          500 requests (the client keeps 512 streams' state at most)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "http_harness.h"

#define PIPELINE 16
#define H2_CONCURRENT 100
#define H2_PER_CONN 500

static const char get[] = "GET /a.txt HTTP/1.1\r\nHost: h\r\n\r\n";

/* Every answer read and checked as it comes: a 200 with the file. */
static unsigned long
take_h1(struct hh_conn *k)
{
	struct hh_resp r;
	unsigned long n = 0;

	while (hh_resp_next(k, &r, false)) {
		if (r.status != 200 || r.body_len != strlen(HH_A_TXT)) {
			fprintf(stderr, "http-instr: status %d, %zu bytes\n",
					r.status, r.body_len);
			exit(1);
		}
		n++;
	}
	return n;
}

static void
run_h1(struct hh *h, unsigned long n, unsigned int depth)
{
	char burst[PIPELINE * sizeof(get)];
	struct hh_conn *k = hh_connect(h);
	unsigned long done = 0;
	unsigned int i;

	for (i = 0; i < depth; i++)
		memcpy(burst + i * (sizeof(get) - 1), get, sizeof(get) - 1);
	while (done < n) {
		hh_send(k, burst, depth * (sizeof(get) - 1));
		done += take_h1(k);
	}
}

static void
run_h2(struct hh *h, unsigned long n)
{
	unsigned long done = 0;

	while (done < n) {
		struct hh_conn *k = hh_connect(h);
		struct hh_h2 *c = hh_h2_new(k, NULL, 0, 0);
		unsigned int i, j;

		for (i = 0; i < H2_PER_CONN / H2_CONCURRENT; i++) {
			for (j = 0; j < H2_CONCURRENT; j++)
				hh_h2_request(c, "GET", "/a.txt", NULL, 0);
			hh_h2_pump(c);
		}
		for (i = 0; i < c->n; i++) {
			if (c->st[i].status != 200 ||
					c->st[i].len != strlen(HH_A_TXT)) {
				fprintf(stderr, "http-instr: stream %d: %d\n",
						c->st[i].id, c->st[i].status);
				exit(1);
			}
		}
		done += c->n;
		hh_h2_free(c);
		hh_peer_close(k);
		hh_finish(k);
	}
}

int
main(int argc, char **argv)
{
	unsigned long n;
	struct hh *h;

	if (argc != 3 || (n = strtoul(argv[2], NULL, 10)) == 0) {
		fprintf(stderr, "usage: http-instr h1|h1p|h2c REQUESTS\n");
		return 2;
	}
	h = hh_new(0, 0);
	if (strcmp(argv[1], "h1") == 0)
		run_h1(h, n, 1);
	else if (strcmp(argv[1], "h1p") == 0)
		run_h1(h, n, PIPELINE);
	else if (strcmp(argv[1], "h2c") == 0)
		run_h2(h, n);
	else {
		fprintf(stderr, "http-instr: %s: h1, h1p or h2c\n", argv[1]);
		return 2;
	}
	hh_free(h);
	return 0;
}
