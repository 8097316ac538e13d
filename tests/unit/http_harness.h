/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP conversations scripted in C, without a NIC: lib/http's server over
 * a scripted transport (what the server wrote, a send space the test sets,
 * the receive space it pushed, a virtual clock), with lib/http's static
 * files on a www the harness writes to a temporary directory, test routes,
 * and a mini executor as the dispatch hook: HTTP_ROUTE_INLINE routes run at
 * once, others wait in a queue until the test runs them, in the order it
 * likes; /echo is run by the body_ready hook, as a runtime would.
 * Every answer must be released exactly once: hh_free() checks.
 *
 * The peer is the test: raw bytes for HTTP/1.1, an nghttp2 client session
 * for HTTP/2 (hh_h2_*).
 */
#ifndef EWYK_HTTP_HARNESS_H
#define EWYK_HTTP_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nghttp2/nghttp2.h>

#include "http_req.h"
#include "http_server.h"
#include "net_stack.h"
#include "http_static.h"
#include "www.h"

#define HH_CONNS 4
#define HH_TASKS 320
#define HH_BIG_SIZE 65536	/* /big.bin */
#define HH_A_TXT "abcdefghijklmnopqrstuvwxyz\n"	/* /a.txt */
/* /enc.txt, and its precompressed siblings (not real codings: the server
 * never reads them); their Cache-Control is "public, max-age=60". */
#define HH_ENC_TXT "encoded, or not\n"
#define HH_ENC_GZ "GZIP of enc.txt"
#define HH_ENC_BR "BR of enc.txt"
/* The www's files were modified a second apart from this time on, in the
 * order of http_harness.c's table: /a.txt at HH_MTIME + 1,
 * Sun, 13 Sep 2020 12:26:41 GMT. */
#define HH_MTIME 1600000000
/* The www also has /sub/index.html, /gz-only.txt and /gz-only.txt.gz. */
#define HH_UNLIMITED (1u << 30)	/* the default send space */

struct hh;

/* One connection as the transport sees it. */
struct hh_conn {
	struct hh *h;
	struct http_conn *c;	/* NULL once http_conn_closed() ran */
	uint8_t *out;		/* everything the server wrote (NUL after) */
	uint32_t out_len;
	uint32_t out_cap;
	uint32_t rd;		/* what the test has read of it */
	uint32_t pushed;	/* out_len at the last output(): what the
				 * server told the transport to send */
	uint32_t space;		/* send space left; writes take from it */
	uint32_t rcv_space;	/* as last pushed */
	bool closed;		/* close() */
	bool aborted;		/* abort() */
	unsigned int queued;	/* requests queued for a handler */
};

enum hh_task_state {
	HH_FREE,
	HH_QUEUED,	/* for the test to run (hh_run()) */
	HH_BODY,	/* /echo: waits for its body to begin */
	HH_GIVEN,	/* answered: the server has it */
};

#define HH_ECHO_HOLD 4096	/* /echo: the body's first read */

struct hh_task {
	enum hh_task_state state;
	const struct http_route *rt;
	struct http_origin o;
	uint64_t src_off;	/* /stream/: bytes its source gave */
	struct ewyk_request req;
	/* /echo's, set only for it (the rest is cleared per request) */
	int64_t echo_len;	/* the request's Content-Length, or -1 */
	uint32_t held;		/* of the first read, not yet given */
	uint32_t held_off;
	uint8_t hold[HH_ECHO_HOLD];
};

struct hh {
	struct http_server *srv;
	struct ewyk_router router;
	struct http_static statics;
	struct http_stats stats;
	uint64_t now;		/* virtual clock, ms */
	struct hh_conn conns[HH_CONNS];
	struct hh_task *tasks;
	struct hh_task *queue[HH_TASKS];	/* queued, oldest first */
	unsigned int nqueued;
	unsigned int dispatched;	/* answers made (inline or run) */
	unsigned int released;		/* ... and given back */
	unsigned int stale;		/* runs whose connection was gone */
	unsigned int body_ready;	/* body_ready hook calls */
	struct http_origin ready_o;	/* ... the last one's */
	uint32_t rtt_us;	/* the transport's round trip; 0: unknown */
};

/* Test routes, queued (not inline):
 *   /q/...       any method: 200 "q <path>\n"
 *   /stream/     GET: 200, HH_BIG_SIZE bytes of /big.bin from a source
 *   /sink/       any method, HTTP_ROUTE_BODY_STREAM: 200 "sink\n"; the
 *                test reads the body (http_server_body_read()), or, for
 *                /sink/read..., the handler drops what is at hand first
 * Their answers carry "X-Seq: N", N the HTTP/2 stream or the HTTP/1.1
 * pipeline place (0 for a connection's first request). And, not queued:
 *   /echo        POST and PUT, HTTP_ROUTE_BODY_STREAM: 200, the request
 *                body back as it comes, application/octet-stream, with
 *                the request's Content-Length when it has one (else
 *                chunked in HTTP/1.1); answered once the body has begun,
 *                400 when it broke before. Built on the embedding API
 *                alone: its source reads with http_server_body_read(),
 *                says HTTP_SOURCE_AGAIN when nothing is at hand, and the
 *                body_ready hook resumes it (http_server_resume()). */
struct hh *hh_new(uint32_t header_timeout_ms, uint32_t keepalive_timeout_ms);
/* The same with the server's limits (0: its defaults). */
struct hh *hh_new_limits(uint32_t header_timeout_ms,
		uint32_t keepalive_timeout_ms, uint32_t max_head_bytes,
		uint32_t max_target);
/* The same with idle HTTP/1.1 connections giving their state back after
 * idle_release_ms. */
struct hh *hh_new_idle_release(uint32_t keepalive_timeout_ms,
		uint32_t idle_release_ms);
/* HTTP/2's receive windows grow up to window_max (a stream's; the
 * connections' by budget bytes in all), with the transport's round trip
 * rtt_us (h->rtt_us, which the test may change). */
void hh_h2_windows(struct hh *h, uint32_t window_max, uint64_t budget,
		uint32_t rtt_us);
/* Ends every connection, runs what is still queued (stale), checks that
 * every answer went back exactly once, and frees everything. */
void hh_free(struct hh *h);
/* cmocka set-up and tear-down: *state is hh_new(0, 0). */
int hh_setup(void **state);
int hh_teardown(void **state);
#define HH_TEST(f) cmocka_unit_test_setup_teardown(f, hh_setup, hh_teardown)
/* The bytes of /big.bin. */
const uint8_t *hh_big(void);

struct hh_conn *hh_connect(struct hh *h);
void hh_send(struct hh_conn *k, const void *data, size_t len);
void hh_sends(struct hh_conn *k, const char *s);
/* The peer will send nothing more: http_conn_peer_closed(). */
void hh_peer_close(struct hh_conn *k);
/* Frees n bytes of send space, then http_conn_writable(). */
void hh_give_space(struct hh_conn *k, uint32_t n);
/* The transport finishes a close: http_conn_closed(). */
void hh_finish(struct hh_conn *k);
/* Unread output, NUL-terminated; marks it read. */
const char *hh_take(struct hh_conn *k, uint32_t *len);
/* Advances the virtual clock: the deadlines due fire. */
void hh_advance(struct hh *h, uint64_t ms);

/* Runs the i-th queued handler (0: the oldest) and hands its answer back;
 * false when the server refused it (stale: released here). */
bool hh_run(struct hh *h, unsigned int i);

/* An HTTP/1.1 response read from a connection's output. */
struct hh_resp {
	int status;
	char head[4096];	/* status line and headers, NUL-terminated */
	const uint8_t *body;	/* valid until the next hh_resp_next() */
	size_t body_len;
	bool chunked;
};
/* The next response; head_only for a HEAD (no body). False when none is
 * complete yet (nothing is read then). */
bool hh_resp_next(struct hh_conn *k, struct hh_resp *r, bool head_only);
/* A header's value (first of that name, case-insensitive) or NULL. */
const char *hh_resp_header(const struct hh_resp *r, const char *name,
		char *val, size_t cap);

/* HTTP/2 client ------------------------------------------------------------ */

#define HH_H2_STREAMS 512

struct hh_stream {
	int32_t id;
	int status;
	char headers[1024];	/* "name: value\n" each */
	uint8_t *body;
	size_t len;
	size_t cap;
	bool closed;
	uint32_t error;		/* of the close */
	const uint8_t *req_body;	/* what the client still sends */
	size_t req_left;
	size_t req_held;	/* of req_left, kept back: the body stalls */
};

/* Client options. */
#define HH_H2_MANUAL_WINDOW 0x1	/* no automatic WINDOW_UPDATE */
#define HH_H2_NO_PEER_LIMIT 0x2	/* do not hold streams for the server's
				 * SETTINGS: open past its limit */

struct hh_h2 {
	nghttp2_session *ng;
	struct hh_conn *k;
	struct hh_stream st[HH_H2_STREAMS];
	unsigned int n;
	bool goaway;
	uint32_t goaway_error;
	int32_t goaway_last;
	unsigned int rst_recv;
	uint32_t last_rst_error;
};

/* A client session on k, its SETTINGS (iv) queued; prior knowledge. */
struct hh_h2 *hh_h2_new(struct hh_conn *k, const nghttp2_settings_entry *iv,
		size_t niv, unsigned int flags);
/* "Upgrade: h2c" for GET path: checks the 101 and returns a client whose
 * stream 1 is the upgraded request. */
struct hh_h2 *hh_h2_upgrade(struct hh_conn *k, const char *path);
void hh_h2_free(struct hh_h2 *c);
/* A request (body may be NULL); returns its stream id. */
int32_t hh_h2_request(struct hh_h2 *c, const char *method, const char *path,
		const void *body, size_t len);
/* The same with header fields: names and values in turn, then NULL. */
#define HH_H2_FIELDS_MAX 16
int32_t hh_h2_request_with(struct hh_h2 *c, const char *method,
		const char *path, const char *const *fields, const void *body,
		size_t len);
/* Client to server and back until neither has anything more to say. */
void hh_h2_pump(struct hh_h2 *c);
/* The stream of that id (a zeroed one if nothing came on it). */
struct hh_stream *hh_h2_stream(struct hh_h2 *c, int32_t id);

#endif /* EWYK_HTTP_HARNESS_H */
