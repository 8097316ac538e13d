/* SPDX-License-Identifier: BSD-3-Clause */
/* The fetch handles of a shard, for the rest of the runtime. */
#ifndef EWYK_SERVE_FETCH_H
#define EWYK_SERVE_FETCH_H

#include "task.h"

struct fetch_pool *fetch_pool_create(uint32_t n, struct serve_fetch_stats *st);
void fetch_pool_free(struct fetch_pool *p);
/* On the owner, every poll: free handles to the fetches queued for one. */
unsigned int fetch_pool_poll(struct fetch_pool *p);
/* On the owner, t's handler returned: the fetches it left open close. */
void fetch_task_end(struct serve_task *t);

#endif /* EWYK_SERVE_FETCH_H */
