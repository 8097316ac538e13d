/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streamed bodies in blocking style, for handlers on fibers: a request
 * body read as it arrives (ewyk_body_read()), and an answer begun while
 * the handler runs and written as the client takes it
 * (ewyk_respond_begin(), ewyk_body_write()). Every call parks the fiber;
 * the shard's owner does the work in the wait's arm and in the
 * connection's callbacks, so the fiber never touches connection state.
 *
 * Also the shard's body watch: requests whose body is read as it arrives
 * (a fiber's read, or the proxy sending it upstream), told by the HTTP
 * server's body_ready hook when more of it is at hand.
 */
#ifndef EWYKD_BODY_IO_H
#define EWYKD_BODY_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_server.h"

struct route_task;
struct shard;

/*
 * An answer handed to its connection while its handler still runs. The
 * task then ends when both are done with it: the handler returned
 * (handler_over) and the connection let the answer go (released).
 */
struct early_answer {
	const uint8_t *buf;	/* the write being taken */
	size_t len, off;
	uint32_t timeout_ms;	/* the write's: renewed as bytes are taken */
	int64_t length;		/* the body's, or -1 */
	int64_t written;
	bool begun;		/* the answer is the connection's */
	bool discard;		/* HEAD, 204, 304: no body goes out */
	bool pending;		/* buf waits to be taken */
	int failed;		/* a write's error: the body is cut */
	bool handler_over;
	bool released;
};

/* The watch: fn(t) runs on the owner when t's request body has more. */
typedef void (*body_watch_fn)(struct route_task *t);
/* Start-up: room for the shard's connections. 0, or -1 (no memory). */
int body_watch_init(struct shard *s, uint32_t max_conns);
void body_watch_add(struct shard *s, struct route_task *t, body_watch_fn fn);
void body_watch_remove(struct route_task *t);	/* if watched */
/* http_body_ready_fn of the shard's HTTP server. */
void body_watch_ready(void *ctx, struct http_origin o);

/* A new task for request r: its body's length, no early answer, not
 * watched. */
void body_io_reset(struct route_task *t, const struct http_head *r);
/* On the owner, the handler returned after ewyk_respond_begin(): the body
 * ends (or is cut, if short); true when the task may be freed now. */
bool early_answer_end(struct shard *s, struct route_task *t);
/* On the owner: the connection let t's early answer go before its body
 * was whole (the client left, or it was cut): t's waits are for nothing. */
bool early_answer_client_gone(const struct route_task *t);
/* On the owner, the connection let an early answer go; true when the
 * task may be freed now (its handler is over). */
bool early_answer_released(struct route_task *t);

#endif /* EWYKD_BODY_IO_H */
