/* SPDX-License-Identifier: BSD-3-Clause */
/* Tasks: the per-thread non-blocking flag, names, executor glue. */

#include <string.h>

#include "ewyk_exec.h"

static _Thread_local bool nonblocking;

bool
ewyk_nonblocking(void)
{
	return nonblocking;
}

bool
ewyk_nonblocking_set(bool on)
{
	bool old = nonblocking;

	nonblocking = on;
	return old;
}

static int
bpool_execute_cb(void *ctx, struct ewyk_task *task)
{
	return ewyk_bpool_execute(ctx, task);
}

static bool
reserved_try_execute_cb(void *ctx, struct ewyk_task *task)
{
	return ewyk_reserved_try_execute(ctx, task);
}

void
ewyk_executor_init(struct ewyk_executor *ex, struct ewyk_bpool *bp,
		struct ewyk_reserved *rp)
{
	memset(ex, 0, sizeof(*ex));
	if (bp != NULL) {
		ex->execute = bpool_execute_cb;
		ex->execute_ctx = bp;
	}
	if (rp != NULL) {
		ex->try_execute = reserved_try_execute_cb;
		ex->try_execute_ctx = rp;
	}
}

static const char *const mode_names[] = {
	[EWYK_MODE_ADAPTIVE] = "adaptive",
	[EWYK_MODE_PC] = "pc",
	[EWYK_MODE_PEC] = "pec",
	[EWYK_MODE_EPC] = "epc",
};

const char *
ewyk_mode_name(enum ewyk_mode mode)
{
	if ((unsigned int)mode >= sizeof(mode_names) / sizeof(mode_names[0]))
		return "?";
	return mode_names[mode];
}

int
ewyk_mode_parse(const char *name, enum ewyk_mode *mode)
{
	unsigned int i;

	for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
		if (strcmp(name, mode_names[i]) == 0) {
			*mode = (enum ewyk_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *
ewyk_consume_name(enum ewyk_consume c)
{
	static const char *const names[] = { "pc", "pic", "pec", "epc",
		"fiber" };

	if ((unsigned int)c >= sizeof(names) / sizeof(names[0]))
		return "?";
	return names[c];
}
