/* SPDX-License-Identifier: BSD-3-Clause */
/* Streamed bodies and the body watch, for the rest of the runtime. */
#ifndef EWYK_SERVE_BODY_H
#define EWYK_SERVE_BODY_H

#include "task.h"

int body_watch_init(struct serve *sv, uint32_t max_conns);
void body_watch_fini(struct serve *sv);
void body_watch_add(struct serve_task *t, body_watch_fn fn);
void body_watch_remove(struct serve_task *t);	/* if watched */
/* http_body_ready_fn of the shard's HTTP server. */
void body_watch_ready(void *ctx, struct http_origin o);
/* A new task for request r: its body's length, no early answer. */
void body_reset(struct serve_task *t, const struct http_head *r);
/* On the owner, the handler returned after ewyk_respond_begin(): the body
 * ends (or is cut, if short); true when the task may be freed now. */
bool early_answer_end(struct serve_task *t);
/* On the owner, the connection let an early answer go; true when the
 * task may be freed now (its handler is over). */
bool early_answer_released(struct serve_task *t);

#endif /* EWYK_SERVE_BODY_H */
