/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ewyk_tls.h"
#include "ewykd.h"
#include "reload.h"

/* Requests and completions are counted: a waiter knows its own. */
static _Atomic unsigned long asked;
static _Atomic unsigned long done;
static _Atomic int last_rc;
static char last_msg[TLS_ERR_LEN];	/* written before done moves */

void
reload_request(void)
{
	atomic_fetch_add_explicit(&asked, 1, memory_order_relaxed);
}

void
reload_poll(struct ewykd *e)
{
	unsigned long a = atomic_load_explicit(&asked, memory_order_acquire);
	char err[TLS_ERR_LEN] = "";
	int rc = 0;

	if (e->tls == NULL)
		return;
	tls_config_tick(e->tls, (uint64_t)time(NULL));
	if (a == atomic_load_explicit(&done, memory_order_relaxed))
		return;
	rc = tls_config_reload(e->tls, err, sizeof(err));
	if (rc == 0) {
		snprintf(last_msg, sizeof(last_msg), "certificates reloaded");
		printf("ewykd: TLS certificates and keys reloaded\n");
		fflush(stdout);
	} else {
		snprintf(last_msg, sizeof(last_msg), "%s", err);
		fprintf(stderr, "ewykd: TLS reload refused, the previous "
				"certificates stay: %s\n", err);
	}
	atomic_store_explicit(&last_rc, rc, memory_order_relaxed);
	atomic_store_explicit(&done, a, memory_order_release);
}

int
reload_request_wait(char *msg, size_t len, unsigned int timeout_ms)
{
	unsigned long mine = atomic_fetch_add(&asked, 1) + 1;
	unsigned int waited = 0;

	while (atomic_load_explicit(&done, memory_order_acquire) < mine) {
		if (waited >= timeout_ms) {
			snprintf(msg, len, "no reload within %u ms", timeout_ms);
			return -2;
		}
		usleep(1000);
		waited++;
	}
	snprintf(msg, len, "%s", last_msg);
	return atomic_load_explicit(&last_rc, memory_order_relaxed);
}
