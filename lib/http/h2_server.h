/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/2 over a shard's TCP (h2c, by prior knowledge or upgrade): one
 * nghttp2 server session per connection, fed with nghttp2_session_mem_recv
 * and drained by nghttp2_session_send, whose callback only queues into the
 * connection's send queue as room allows (nghttp2 keeps the rest); DATA of bodies already in memory is written by the send-data
 * callback straight into the connection's mbufs. Requests go to the
 * handlers, /echo or the static files; no I/O inside nghttp2.
 */
#ifndef EWYK_H2_SERVER_H
#define EWYK_H2_SERVER_H

#include <stdbool.h>
#include <stdint.h>

struct http1_server;
struct http1_request;
struct http_answer;
struct tcp_conn;
struct h2_conn;

#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN 24
#define H2_RCV_SPACE (64 * 1024)	/* nghttp2 takes what comes */

/* Starts a session; NULL when out of memory. */
struct h2_conn *h2_open(struct http1_server *s, struct tcp_conn *c);
/* Upgrade from HTTP/1.1 (RFC 7540 3.2, "Upgrade: h2c"): the session
 * starts with the client's HTTP2-Settings (base64url) and answers the
 * upgraded request r on stream 1. NULL on bad settings or no memory. */
struct h2_conn *h2_open_upgrade(struct http1_server *s, struct tcp_conn *c,
		const char *settings_b64, size_t settings_len,
		const struct http1_request *r);
/* A dispatched request's answer for stream id: submitted (the stream
 * keeps it until it closes, then releases it), or false when the stream
 * is gone (the caller releases it). Flush afterwards. */
bool h2_answer(struct h2_conn *h, uint32_t id, struct http_answer *a);
/* Bytes received; false when the session ended (close the connection). */
bool h2_recv(struct h2_conn *h, const uint8_t *data, uint32_t len);
/* Moves frames into the send queue while it has room; false when the
 * session has nothing more to do and should be closed. */
bool h2_flush(struct h2_conn *h);
void h2_free(struct h2_conn *h);
/* Graceful shutdown: GOAWAY with the last stream taken; streams in
 * flight finish, new ones are refused. */
bool h2_goaway(struct h2_conn *h);	/* false: nothing left, close */

#endif /* EWYK_H2_SERVER_H */
