/* SPDX-License-Identifier: BSD-3-Clause */
/* The durable waits of the state API, for the poll loop. */
#ifndef EWYK_SERVE_STATE_H
#define EWYK_SERVE_STATE_H

#include "task.h"

/* On the owner, every poll: the durable writes waited for. */
unsigned int state_durable_poll(struct serve *sv);

#endif /* EWYK_SERVE_STATE_H */
