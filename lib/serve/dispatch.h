/* SPDX-License-Identifier: BSD-3-Clause */
/* Requests become tasks; handlers run; answers go back. */
#ifndef EWYK_SERVE_DISPATCH_H
#define EWYK_SERVE_DISPATCH_H

#include "task.h"

/* Runs t's handler where the strategy put it. */
int dispatch_handle(struct serve_task *t);
/* On the owner: the answers posted to the completion ring. */
unsigned int dispatch_drain_completions(struct serve *sv);
/* On the owner: the task's answer goes to its connection. */
void dispatch_complete(struct serve *sv, struct serve_task *t);
int dispatch_hook(void *ctx, const struct http_route *rt,
		const struct http_head *r, int version, struct http_origin o,
		struct http_answer **ans);
void dispatch_released(void *ctx, struct http_answer *a);
/* http_server_conf's refused hook: the access log's line. */
void dispatch_refused(void *ctx, const struct http_head *r, int status,
		int version, struct http_origin o);
int dispatch_run(struct ewyk_task *bt);
void dispatch_consumed(void *ctx, struct ewyk_task *task, int rc, bool owner);
void dispatch_rejected(void *ctx, struct ewyk_task *task, int err);
/* How the request's handler is being consumed (the test routes say). */
enum ewyk_consume serve_consume_mode(const struct ewyk_request *req);

#endif /* EWYK_SERVE_DISPATCH_H */
