/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewyk's handler API: the one header a plugin or a built-in route needs.
 *
 * A route maps methods and a path (exact, or a prefix) to a handler with an
 * invocation type and a context. ewyk calls the handler with a request that
 * carries everything it needs (method, path, query, headers, body): the
 * handler never sees a connection or a shard, so it may run on the lcore
 * that parsed the request, on a reserved lcore, or on a blocking-pool
 * thread, as the execution strategy decides. Before it returns, the
 * handler answers through one of the ewyk_respond_*() calls; ewyk writes
 * the answer afterwards, over HTTP/1.1 or HTTP/2, on the connection's own
 * lcore. Answers of pipelined HTTP/1.1 requests go out in request order.
 *
 * Invocation types (Jetty's InvocationType):
 *   NON_BLOCKING  never blocks: always run inline by the lcore that parsed;
 *   BLOCKING      may block: never run on an lcore flagged non-blocking;
 *   EITHER        may block, but can tell: when ewyk_request_may_block()
 *                 is false it must not block.
 *   FIBER         waits only through the blocking calls below
 *                 (ewyk_sleep(), ewyk_wait_park(), ...): run on a fiber
 *                 of the shard's lcore, a wait parks the fiber and the
 *                 lcore goes on polling. Where no fiber can be had (none
 *                 free, --fibers 0, a forced mode) it runs like BLOCKING,
 *                 and the same calls block the thread instead (on the
 *                 blocking pool, or on an lcore that handed the shard
 *                 over; run inline on the shard's own lcore, where
 *                 nothing may block, they return -EPERM).
 * A handler that finds it must block where ewyk_request_may_block() is
 * false (an EITHER handler run inline, or a NON_BLOCKING one whose request
 * turns out to need a wait) returns EWYK_DEFER without answering: it is
 * run again on the blocking pool, where it may block.
 *
 * A plugin is a shared object with
 *   int ewyk_plugin_init(struct ewyk_router *router, unsigned int api,
 *                        const char *arg);
 * called once at start-up, before any request, to add its routes. api is
 * EWYK_HTTP_API of the appliance; return 0, or a negative errno to refuse
 * to start.
 */
#ifndef EWYK_HTTP_H
#define EWYK_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EWYK_HTTP_API 4	/* 2: ewyk_route_add_flags(), the streamed
				 * body calls, ewyk_fetch(), ewyk_state_*();
				 * 3: ewyk_respond_fetch(), EWYK_FETCH_FORWARD,
				 * ewyk_fetch_failure(), ewyk_state_key_ok(),
				 * blocking calls on threads;
				 * 4: ewyk_route_named() */

struct ewyk_router;
struct ewyk_request;

struct ewyk_str {
	const char *p;	/* not NUL-terminated */
	size_t len;
};

enum ewyk_handler_type {
	EWYK_HANDLER_NON_BLOCKING,
	EWYK_HANDLER_BLOCKING,
	EWYK_HANDLER_EITHER,
	EWYK_HANDLER_FIBER,
};

enum ewyk_match {
	EWYK_MATCH_EXACT,	/* the path is exactly the route's */
	EWYK_MATCH_PREFIX,	/* the path starts with the route's */
};

/* Methods a route takes, as a mask. */
#define EWYK_METHOD_GET		(1u << 0)
#define EWYK_METHOD_HEAD	(1u << 1)
#define EWYK_METHOD_POST	(1u << 2)
#define EWYK_METHOD_PUT		(1u << 3)
#define EWYK_METHOD_DELETE	(1u << 4)
#define EWYK_METHOD_OPTIONS	(1u << 5)
#define EWYK_METHOD_PATCH	(1u << 6)
#define EWYK_METHOD_ANY		0x7fu

enum ewyk_result {
	EWYK_ANSWERED,	/* the handler called ewyk_respond_*() */
	EWYK_DEFER,	/* run me again where I may block */
};

typedef enum ewyk_result (*ewyk_handler_fn)(struct ewyk_request *req,
		void *ctx);

struct ewyk_route {
	const char *path;	/* starts with '/'; copied */
	enum ewyk_match match;
	uint32_t methods;	/* EWYK_METHOD_*; others get 405 with Allow.
				 * GET brings HEAD: the answer without body */
	enum ewyk_handler_type type;
	ewyk_handler_fn handler;
	void *ctx;		/* passed to every call */
};

/*
 * Adds a route. The longest matching route wins; an exact route beats a
 * prefix of the same length. Returns 0, -EINVAL (bad path or type, no
 * handler), -EEXIST (same path and match), or -ENOSPC (table full).
 */
int ewyk_route_add(struct ewyk_router *router, const struct ewyk_route *route);

/* Route flags, for ewyk_route_add_flags(). */
/* The request body is not gathered before the handler (nor limited to
 * the server's largest): the handler reads it as it arrives with
 * ewyk_body_read(), and the client's window opens as it reads. FIBER
 * handlers only. */
#define EWYK_ROUTE_BODY_STREAM 0x1u

/* ewyk_route_add() with EWYK_ROUTE_* flags: -EINVAL also for an unknown
 * flag, or one the handler's type cannot have. */
int ewyk_route_add_flags(struct ewyk_router *router,
		const struct ewyk_route *route, uint32_t flags);

/*
 * Registers a handler by name, served at no path of its own: the
 * configuration file's routes put it where they say (a [route] with
 * plugin = NAME, its prefix or exact path, site, limits and fields).
 * route->path is ignored (may be NULL); flags as ewyk_route_add_flags().
 * name: 1 to 32 of [A-Za-z0-9_-]. Returns 0, -EINVAL, -EEXIST (the name
 * is taken) or -ENOSPC (32 names already). API 4.
 */
int ewyk_route_named(struct ewyk_router *router, const char *name,
		const struct ewyk_route *route, uint32_t flags);

typedef int (*ewyk_plugin_init_fn)(struct ewyk_router *router,
		unsigned int api, const char *arg);
#define EWYK_PLUGIN_INIT "ewyk_plugin_init"

/* --- The request: valid from the handler's call until it returns. --- */

/* "GET", "POST", ... (NUL-terminated). */
const char *ewyk_request_method(const struct ewyk_request *req);
/* The path, without the query. */
struct ewyk_str ewyk_request_path(const struct ewyk_request *req);
/* What follows the route's path: for a prefix route "/kv/" and the path
 * "/kv/a", "a". Empty for an exact route. */
struct ewyk_str ewyk_request_rest(const struct ewyk_request *req);
/* After '?', without it; empty when there is none. */
struct ewyk_str ewyk_request_query(const struct ewyk_request *req);
/* The value of parameter name in the query ("a=1&b=2"), not decoded;
 * false when absent. */
bool ewyk_request_param(const struct ewyk_request *req, const char *name,
		struct ewyk_str *value);
/* First header of that name (case-insensitive); false when absent. */
bool ewyk_request_header(const struct ewyk_request *req, const char *name,
		struct ewyk_str *value);
size_t ewyk_request_header_count(const struct ewyk_request *req);
/* The i-th header as received (HTTP/2 names are lower case). */
bool ewyk_request_header_at(const struct ewyk_request *req, size_t i,
		struct ewyk_str *name, struct ewyk_str *value);
/* The whole request body: ewyk gathers it first, up to the server's
 * largest (ewykd's --max-body, 1 MiB by default, never less than
 * EWYK_REQUEST_BODY_MAX); larger bodies are answered 413 for you. Valid
 * until the handler returns. Empty on an EWYK_ROUTE_BODY_STREAM route:
 * see ewyk_body_read(). */
struct ewyk_str ewyk_request_body(const struct ewyk_request *req);
/* A body this small is always given (and kept in the request itself). */
#define EWYK_REQUEST_BODY_MAX 4096
/* 1 for HTTP/1.1, 2 for HTTP/2. */
int ewyk_request_http_version(const struct ewyk_request *req);
/* False while the handler runs under the non-blocking flag (an EITHER
 * handler run inline in produce-consume mode), and on a fiber, where it
 * waits only through the blocking calls below (ewyk_request_on_fiber()). */
bool ewyk_request_may_block(const struct ewyk_request *req);

/* --- The answer: one ewyk_respond_*() call per request. --- */

/* Adds a response header; call before ewyk_respond_*(). Names are tokens,
 * values have no CR, LF or NUL; ewyk frames the body itself, so
 * Content-Length, Transfer-Encoding, Connection and the like are refused.
 * Returns 0, -EINVAL, or -ENOSPC (EWYK_RESPONSE_HEADERS_MAX bytes). */
int ewyk_respond_header(struct ewyk_request *req, const char *name,
		const char *value);
#define EWYK_RESPONSE_HEADERS_MAX 1024

/* A body copied now (len may be 0). ctype may be NULL. */
int ewyk_respond_copy(struct ewyk_request *req, int status, const char *ctype,
		const void *body, size_t len);
/* A body borrowed until ewyk has queued all of it, or the client went
 * away; then done(arg) is called on the connection's lcore. done may be
 * NULL for memory that lives forever. */
int ewyk_respond_borrow(struct ewyk_request *req, int status, const char *ctype,
		const void *body, size_t len, void (*done)(void *arg), void *arg);

/* A body produced piece by piece on the connection's lcore as the
 * connection has room: read() fills at most cap bytes and returns how
 * many (more than 0), or 0 at the end, or -1 on an error (the connection
 * or stream is reset). It must not block. cap is at least 1024, unless
 * less than that is left of a known length. done(arg) is called once, after
 * the end, an error, or the client leaving. length is the total when
 * known (Content-Length), or -1 (chunked in HTTP/1.1). */
struct ewyk_source {
	ssize_t (*read)(void *arg, void *buf, size_t cap);
	void (*done)(void *arg);
	void *arg;
	int64_t length;
};
int ewyk_respond_stream(struct ewyk_request *req, int status, const char *ctype,
		const struct ewyk_source *src);

/* --- Blocking calls: a fiber parks, a thread blocks. --- */

/*
 * Waits ms milliseconds. On a fiber it parks (a timer of the shard wakes
 * it; the lcore goes on polling); on a thread it sleeps. Returns 0, or
 * -ECANCELED when the client left meanwhile (on a fiber) or the drain's
 * time ran out (--drain-ms): the answer is dropped, the handler may give
 * up at once.
 */
int ewyk_sleep(struct ewyk_request *req, uint32_t ms);

/*
 * The generic wait under every blocking call of a fiber: park the fiber
 * until something on its shard calls ewyk_wait_wake(). Fill arm, disarm
 * and arg, then call ewyk_wait_park(); the rest is ewyk's.
 *
 * arm(w), when set, runs on the lcore that owns the request's shard once
 * the fiber has parked (never inside the fiber: shard state is the
 * owner's): start there what will end in ewyk_wait_wake(w), which must
 * also be called on the shard's owner (a shard callback, a timer, a poll;
 * arm itself may call it). disarm(w), when set, runs on the owner when
 * the wait ends otherwise (timeout, client gone), before the fiber
 * resumes: undo what arm started, so that nothing wakes w later. The
 * fiber resumes on whichever lcore owns the shard then; the wait may live
 * on the waiter's stack. A handler on a thread that may block (see
 * FIBER above) waits the same way: its thread blocks until the owner
 * ends the wait.
 */
struct ewyk_wait {
	void (*arm)(struct ewyk_wait *w);
	void (*disarm)(struct ewyk_wait *w);
	void *arg;
	/* ewyk's own */
	void *task;
	int result;
};

#define EWYK_WAIT_FOREVER UINT32_MAX

/* Parks the calling fiber (or blocks the calling thread) until
 * ewyk_wait_wake(w) (returns 0), timeout_ms passes (-ETIMEDOUT; 0 = at
 * the shard's next clock tick, EWYK_WAIT_FOREVER = never), or the client
 * leaves (-ECANCELED). -EPERM where the handler may not wait (inline on
 * the shard's lcore): nothing was armed. */
int ewyk_wait_park(struct ewyk_request *req, struct ewyk_wait *w,
		uint32_t timeout_ms);
/* On the shard's owner: resumes the fiber parked on w. A wait already
 * ended (woken, timed out, cancelled) is left alone. */
void ewyk_wait_wake(struct ewyk_wait *w);
/* True while the request's handler runs on a fiber. */
bool ewyk_request_on_fiber(const struct ewyk_request *req);

/* --- Streamed bodies, in blocking style: fibers only. --- */

/*
 * Reads the request body of an EWYK_ROUTE_BODY_STREAM route as the client
 * sends it, decoded (no chunk framing): parks until some is at hand, then
 * copies at most cap bytes. Returns the bytes read, 0 at the body's end
 * (and for a request without one), -ETIMEDOUT after timeout_ms without a
 * byte (EWYK_WAIT_FOREVER: no limit), -ECANCELED when the client left,
 * -EIO when the body broke (bad chunk framing, the stream reset),
 * -EINVAL (cap 0, or not such a route), or -EPERM where the handler may
 * not wait (inline on the shard's lcore: answer 503).
 */
ssize_t ewyk_body_read(struct ewyk_request *req, void *buf, size_t cap,
		uint32_t timeout_ms);

/*
 * Begins the answer now: its head goes to the connection (after the
 * answers owed before it, in HTTP/1.1), and its body follows with
 * ewyk_body_write(); the body ends when the handler returns. length is
 * the body's (Content-Length), or -1 for one of unknown length (chunked
 * in HTTP/1.1). A body that ends short of its length, or after a failed
 * write, is cut: the client sees the connection (HTTP/1.1) or the stream
 * (HTTP/2) reset, never a short body taken for whole. Headers added
 * before go with it; no other ewyk_respond_*() or header is taken after
 * it (-EINVAL). Returns 0 (return EWYK_ANSWERED when done), -EINVAL (a
 * bad status or type, answered already), -ECANCELED when the client
 * left, or -EPERM where the handler may not wait (nothing was sent:
 * answer another way).
 */
int ewyk_respond_begin(struct ewyk_request *req, int status,
		const char *ctype, int64_t length);
/*
 * Writes len bytes of the begun answer's body: parks until the connection
 * has taken them all, which it does as the client's window allows, so the
 * handler's buffer may be reused at once. Returns 0; -ECANCELED when the
 * client left; -ETIMEDOUT when the client took nothing for timeout_ms;
 * -EINVAL past the begun length, or with no answer begun. After a failed
 * write the body is cut, and every later write returns the same error.
 * The body of a HEAD (or of a 204 or 304) is not sent: its writes return
 * 0 at once.
 */
int ewyk_body_write(struct ewyk_request *req, const void *buf, size_t len,
		uint32_t timeout_ms);

/* --- The appliance's journaled store (/v1/state/KEY) --- */

/*
 * The last-value store behind /v1/state/: every shard sees a write at
 * once, and a conflating write-behind puts the latest value of each key
 * in a journal on disk (--state-dir). Keys are 1 to EWYK_STATE_KEY_MAX
 * bytes of [A-Za-z0-9._-]. Callable from any handler, anywhere.
 */
#define EWYK_STATE_KEY_MAX 64
#define EWYK_STATE_VALUE_MAX 4096

/* Whether key is one the store takes. */
bool ewyk_state_key_ok(const char *key, size_t klen);

/* Writes a value: its version (> 0), or -EINVAL (a bad key, a value over
 * EWYK_STATE_VALUE_MAX), -ENOSPC (the store's table is full), -ENOTSUP
 * (no store: before start-up). */
int64_t ewyk_state_put(const char *key, size_t klen, const void *val,
		size_t len);
/* Removes a key: the version of its removal, or -ENOENT, -EINVAL. */
int64_t ewyk_state_delete(const char *key, size_t klen);
/* Copies at most cap bytes of the value and returns its whole length,
 * with its version in *version (may be NULL); -ENOENT, -EINVAL. */
ssize_t ewyk_state_get(const char *key, size_t klen, void *buf, size_t cap,
		uint64_t *version);
/* Waits until the key's version (a put's or a delete's) is on disk: a
 * fiber parks (many such waits are answered by one journal write: group
 * commit), a thread blocks. 0, -ETIMEDOUT, -ECANCELED (the client left,
 * on a fiber), -ENOTSUP (no --state-dir: nothing is durable), or the
 * errno of a journal write that failed (-ENOSPC: the disk is full). */
int ewyk_state_wait_durable(struct ewyk_request *req, const char *key,
		size_t klen, uint64_t version, uint32_t timeout_ms);

/* --- Fetching from an upstream --- */

/*
 * An HTTP/1.1 request to an upstream of ewykd (--upstream NAME=ADDR:PORT),
 * in blocking style, over the shard's own TCP and its keep-alive pool of
 * upstream connections: ewyk_fetch() waits until the answer's head,
 * ewyk_fetch_read() until some of its body, ewyk_fetch_close() ends it;
 * or ewyk_respond_fetch() answers the request with the upstream's answer.
 * A fiber parks, a thread that may block blocks; inline on the shard's
 * lcore: -EPERM. Everything a fetch gives (status, fields) lives until
 * its close; the handler's return closes whatever it left open.
 *
 * Errors (negative errno): -EPERM where the handler may not wait, -ENOENT no such
 * upstream, -EINVAL a bad request (method not a token, target not
 * origin-form, a field with CR, LF or NUL, too many fields), -ECANCELED
 * the client left (the handler may give up at once), -ETIMEDOUT the
 * fetch's timeout_ms or the upstream's own timeouts (handshake, answer
 * head), -ECONNREFUSED, -EHOSTUNREACH (not on the link), -EBUSY (every
 * upstream connection of the shard is busy), -EMSGSIZE (the request's
 * head over 8 KiB, or the answer's fields over EWYK_FETCH_HEAD_MAX),
 * -ECONNRESET (the upstream closed before answering), -EPROTO (not an
 * HTTP/1.1 answer), -EIO (the body could not be sent, or the answer's
 * body broke off: reset, bad framing, silence).
 *
 * Each shard has as many fetch handles as upstream connections
 * (--upstream-conns): a fiber that finds none free waits, in order, for
 * one to be closed (within its timeout_ms).
 */
struct ewyk_fetch;

struct ewyk_field {
	const char *name;	/* a token */
	const char *value;	/* no CR, LF */
};

struct ewyk_fetch_req {
	const char *method;	/* "GET" when NULL */
	const char *target;	/* origin-form: "/path?query" */
	/* Header fields to send: Host names the upstream (one given goes
	 * as X-Forwarded-Host), framing and hop-by-hop fields are ewyk's. */
	const struct ewyk_field *fields;
	size_t nfields;		/* at most EWYK_FETCH_FIELDS_MAX */
	const void *body;	/* borrowed until ewyk_fetch_close() */
	size_t body_len;	/* sent with Content-Length when not 0 */
	uint32_t timeout_ms;	/* bounds each wait (the head, each read);
				 * 0: only the upstream's timeouts */
	uint32_t flags;		/* EWYK_FETCH_* */
};
/* Forward the handler's own request: its method, its fields (hop-by-hop
 * ones left out, Host as X-Forwarded-Host) and its body; on an
 * EWYK_ROUTE_BODY_STREAM route the body goes as the client sends it,
 * under both windows (the handler must not read it itself). method,
 * fields and body must be left empty; target is still the caller's. */
#define EWYK_FETCH_FORWARD 0x1u
#define EWYK_FETCH_FIELDS_MAX 32
#define EWYK_FETCH_HEAD_MAX 8192	/* the answer's names and values */

/* Sends the request to upstream (its NAME) and parks until the answer's
 * head: 0 and *out, or a negative errno (above) and nothing to close. */
int ewyk_fetch(struct ewyk_request *req, const char *upstream,
		const struct ewyk_fetch_req *r, struct ewyk_fetch **out);
/* The answer's status (200, 404, ...). */
int ewyk_fetch_status(const struct ewyk_fetch *f);
/* First field of that name (case-insensitive); false when absent. */
bool ewyk_fetch_header(const struct ewyk_fetch *f, const char *name,
		struct ewyk_str *value);
/* The i-th field as received. */
bool ewyk_fetch_header_at(const struct ewyk_fetch *f, size_t i,
		struct ewyk_str *name, struct ewyk_str *value);
/* The body's length when the upstream said it (Content-Length), else -1;
 * 0 when no body follows (HEAD, 204, 304). */
int64_t ewyk_fetch_length(const struct ewyk_fetch *f);
/* Parks until some of the body is at hand: the bytes copied (at most
 * cap, more than 0), 0 at its end, or a negative errno (-EIO, -ETIMEDOUT,
 * -ECANCELED, -EINVAL for cap 0): then the answer is cut, and every
 * later read gives the same. */
ssize_t ewyk_fetch_read(struct ewyk_fetch *f, void *buf, size_t cap);
/* Ends the fetch, in every case: its handle goes back to the shard. An
 * answer read to its end leaves its connection to the keep-alive pool;
 * one not read to its end is cut (its connection reset). */
void ewyk_fetch_close(struct ewyk_fetch *f);
/* After a failed ewyk_fetch() of the request: the status a proxy answers
 * for it (502, or 504 for a timeout) and the reason's name in *reason
 * ("connect_refused", "answer_timeout", ...); 0 when the failure was not
 * the upstream's (-EINVAL, -ENOENT, -ECANCELED, -EPERM). */
int ewyk_fetch_failure(const struct ewyk_request *req, const char **reason);
/*
 * Answers the request with the fetch's answer: its status, its fields
 * but this hop's own, and its body streamed to the client as the client
 * takes it (the upstream's window follows). On 0 the fetch is the
 * answer's: it closes when the answer is written or cut, and the handler
 * must not use f again (not even to close it). Returns 0 (return EWYK_ANSWERED),
 * -EINVAL (a fetch of another request, one read from, or failed), or
 * -ECANCELED when the client left (nothing is answered; close the
 * fetch).
 */
int ewyk_respond_fetch(struct ewyk_request *req, struct ewyk_fetch *f);

#endif /* EWYK_HTTP_H */
