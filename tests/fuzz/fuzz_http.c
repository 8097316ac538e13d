/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "fuzz_http.h"
#include "http_conn.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* cmocka's asserts outside a test run: abort, not exit(). */
	setenv("CMOCKA_TEST_ABORT", "1", 1);
	return 0;
}

void
fh_start(struct fh *f, const void *prefix, size_t prefix_len)
{
	memset(f, 0, sizeof(*f));
	f->h = hh_new(FH_HEADER_TIMEOUT_MS, FH_KEEPALIVE_MS);
	f->k[0] = hh_connect(f->h);
	if (prefix_len > 0)
		hh_send(f->k[0], prefix, prefix_len);
}

static void
run_all(struct hh *h)
{
	while (h->nqueued > 0)
		hh_run(h, 0);
}

static void
op_misc(struct fh *f, unsigned int ki, uint8_t arg)
{
	struct hh_conn *k = f->k[ki];

	switch (arg & 7) {
	case 0:
		if (k != NULL)
			hh_peer_close(k);
		break;
	case 1:
		if (k != NULL && k->c != NULL) {
			f->reset[ki] = true;
			hh_finish(k);
		}
		break;
	case 2:
		/* While the first is open, so that the harness does not
		 * reuse its slot (and lose its output). */
		if (f->k[1] == NULL && f->k[0]->c != NULL)
			f->k[1] = hh_connect(f->h);
		break;
	case 3:
		http_server_drain(f->h->srv);
		break;
	default:
		hh_advance(f->h, 100);
		break;
	}
}

void
fh_play(struct fh *f, const uint8_t *data, size_t size)
{
	size_t at = 0;
	unsigned int i, round;

	while (at < size) {
		uint8_t op = data[at++];
		uint8_t arg = at < size ? data[at++] : 0;
		unsigned int ki = op >> 3 & 1;
		struct hh_conn *k = f->k[ki];
		size_t len;

		switch (op & 7) {
		case 0: case 1: case 2: case 3:
			len = arg + (size_t)(op >> 4 & 3) * 256;
			len = len < size - at ? len : size - at;
			if (k != NULL)
				hh_send(k, data + at, len);
			at += len;
			break;
		case 4:
			hh_advance(f->h, (uint64_t)arg * 50);
			break;
		case 5:
			if (k == NULL)
				break;
			if (arg == 0)
				k->space = 0;
			else
				hh_give_space(k, (uint32_t)arg * 32);
			break;
		case 6:
			if (f->h->nqueued > 0)
				hh_run(f->h, arg % f->h->nqueued);
			break;
		default:
			op_misc(f, ki, arg);
			break;
		}
	}
	/* The end: room, answers, the peer's close. Twice: a close may free
	 * what the first round waited on. No time passes: a connection whose
	 * peer closed has nothing to wait for. */
	for (round = 0; round < 2; round++) {
		for (i = 0; i < FH_CONNS; i++) {
			struct hh_conn *k = f->k[i];

			if (k != NULL && k->space < HH_UNLIMITED)
				hh_give_space(k, HH_UNLIMITED - k->space);
		}
		run_all(f->h);
		for (i = 0; i < FH_CONNS; i++)
			if (f->k[i] != NULL)
				hh_peer_close(f->k[i]);
		run_all(f->h);
	}
	for (i = 0; i < FH_CONNS; i++) {
		struct hh_conn *k = f->k[i];

		/* Either answered and closed, or reset: never left hanging. */
		fh_check(k == NULL || k->c == NULL || k->closed || k->aborted,
				"connection %u still open at the end", i);
	}
}

void
fh_end(struct fh *f)
{
	hh_free(f->h);
	f->h = NULL;
}
