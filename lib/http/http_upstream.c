/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The upstream client: connections opened with tcp_open_addr() (their own
 * upcalls, below), a LIFO keep-alive stack per upstream, and fetches that
 * write a request (head, then the body as the window takes it) and parse
 * the answer with the request parser's sibling (http1_parse_response()).
 * The answer's bytes wait in the connection's buffer until the caller
 * reads them: the upstream's window is what the buffer has free, so an
 * upstream is read no faster than the client drains.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_random.h>

#include "http1_body.h"
#include "http1_parse.h"
#include "http_priv.h"
#include "http_upstream.h"
#include "net_stack.h"
#include "tcp.h"

#define UP_IN_MAX (64 * 1024)	/* answer bytes buffered per connection */
#define UP_PULL_MIN 512		/* send space worth pulling the body for */
#define UP_RESOLVE_RETRY_MS 5	/* a connection waiting for ARP tries again */

enum uc_state {
	UC_FREE,
	UC_RESOLVING,	/* waiting for ARP or ND; tcp_open_addr() again (timer) */
	UC_CONNECTING,
	UC_BUSY,	/* a fetch's */
	UC_IDLE,	/* in its upstream's pool */
	UC_CLOSING,	/* FIN or RST sent, the closed upcall to come */
};

struct up_conn {
	struct upstream_client *cl;
	struct tcp_conn *tc;		/* NULL once TCP let it go */
	struct up_conn *next;		/* free list, or its idle stack */
	struct upstream_fetch *f;
	uint8_t state;
	uint8_t target;
	bool peer_closed;		/* FIN, or the connection is gone */
	/* UC_RESOLVING: the next try of tcp_open_addr(); UC_IDLE: the close
	 * after idle_timeout_ms */
	struct net_timer timer;
	uint64_t idle_since_ms;
	uint32_t in_off;		/* answer bytes taken */
	uint32_t in_len;
	uint8_t in[UP_IN_MAX];
};

struct upstream_fetch {
	struct upstream_client *cl;
	struct upstream_fetch *next_free;
	struct net_timer timer;	/* its deadline (fetch_deadline()) */
	const struct upstream_events *ev;
	void *arg;
	struct up_conn *uc;
	uint8_t target;
	bool in_use;
	bool idempotent;
	bool head_req;
	bool reused;		/* on a pooled connection */
	bool retried;
	bool req_chunked;
	bool tunnel;		/* a WebSocket's: its body unframed, 101 taken */
	bool req_done;
	bool got_bytes;		/* some answer byte came */
	bool head_seen;
	bool keep;		/* the answer leaves the connection reusable */
	bool body_done;
	bool failed;		/* after the head: reads fail */
	int64_t req_len;
	uint64_t req_pulled;
	struct http1_body body;	/* the answer's */
	uint64_t t0_tsc;
	uint32_t head_len;
	uint32_t head_sent;
	char head[UPSTREAM_HEAD_MAX];
};

struct upstream_client {
	struct net_stack *ns;
	struct upstream_conf conf;
	struct upstream_target targets[UPSTREAM_MAX];
	/* Each server's health and share, this shard's own view. */
	struct up_health {
		uint32_t fails;		/* in a row */
		uint64_t out_until_ms;	/* taken out until then; 0: in */
		int32_t rr_current;	/* smooth round robin's */
	} health[UPSTREAM_MAX];
	struct upstream_stats *stats;	/* one per target */
	uint64_t ns_mult;		/* TSC cycles to ns (lat_ns_mult) */
	struct up_conn *conns;
	struct up_conn *free_conns;
	struct up_conn *idle[UPSTREAM_MAX];
	struct upstream_fetch *fetches;
	struct upstream_fetch *free_fetches;
	/* Active health checks: a GET of health_uri to each server that has
	 * one, every health_interval_ms, one at a time. */
	struct up_probe {
		struct upstream_client *cl;
		struct net_timer timer;
		struct upstream_fetch *f;	/* in flight, or NULL */
		uint64_t next_ms;		/* the next probe's start */
		uint8_t target;
		bool over;			/* f answered or failed */
	} probes[UPSTREAM_MAX];
	uint32_t in_upcall;		/* TCP sends after input by itself */
	bool draining;			/* nothing goes back to the pool */
	uint8_t scratch[16384];
};

static const char *const err_names[] = {
#define UPSTREAM_ERR_NAME(n, e) #n,
	UPSTREAM_ERRORS(UPSTREAM_ERR_NAME)
#undef UPSTREAM_ERR_NAME
};

static const int err_errnos[] = {
#define UPSTREAM_ERR_ERRNO(n, e) e,
	UPSTREAM_ERRORS(UPSTREAM_ERR_ERRNO)
#undef UPSTREAM_ERR_ERRNO
};

const char *
upstream_err_name(enum upstream_err e)
{
	return e < UPSTREAM_ERR__COUNT ? err_names[e] : "?";
}

int
upstream_err_errno(enum upstream_err e)
{
	return e < UPSTREAM_ERR__COUNT ? err_errnos[e] : EIO;
}

int
upstream_err_status(enum upstream_err e)
{
	return e == UPSTREAM_ERR_connect_timeout ||
		e == UPSTREAM_ERR_answer_timeout ? 504 : 502;
}

static uint64_t
now_ms(const struct upstream_client *cl)
{
	return net_now_ms(cl->ns);
}

static struct upstream_stats *
stats_of(const struct upstream_client *cl, unsigned int target)
{
	return &cl->stats[target];
}

/* The fetch's server's own timeouts, else the client's. */
static uint32_t
connect_timeout(const struct upstream_fetch *f)
{
	uint32_t ms = f->cl->targets[f->target].connect_timeout_ms;

	return ms != 0 ? ms : f->cl->conf.connect_timeout_ms;
}

static uint32_t
answer_timeout(const struct upstream_fetch *f)
{
	uint32_t ms = f->cl->targets[f->target].answer_timeout_ms;

	return ms != 0 ? ms : f->cl->conf.answer_timeout_ms;
}

/* Health ------------------------------------------------------------------ */

/* A failure of the server's (it refused, timed out, broke before its
 * answer, or answered 5xx): health_fails in a row take it out for
 * health_interval_ms, after which it is tried again (a probed server:
 * until its probe is answered). */
static void
health_failed(struct upstream_client *cl, unsigned int target)
{
	const struct upstream_target *t = &cl->targets[target];
	struct up_health *h = &cl->health[target];

	if (t->health_fails == 0 || ++h->fails < t->health_fails)
		return;
	if (h->out_until_ms == 0) {
		stats_of(cl, target)->down = 1;
		stats_of(cl, target)->downs++;
	}
	h->out_until_ms = now_ms(cl) + t->health_interval_ms;
	h->fails = 0;
}

static void
health_answered(struct upstream_client *cl, unsigned int target)
{
	struct up_health *h = &cl->health[target];

	h->fails = 0;
	h->out_until_ms = 0;
	stats_of(cl, target)->down = 0;
}

static bool
health_in(struct upstream_client *cl, unsigned int target)
{
	struct up_health *h = &cl->health[target];

	if (h->out_until_ms == 0)
		return true;
	/* Probed: out until a probe is answered (health_answered()), no
	 * request sent to find out. */
	if (cl->targets[target].health_uri[0] != '\0')
		return false;
	if (now_ms(cl) < h->out_until_ms)
		return false;
	/* Its time out is over: the next request tries it; a failure takes
	 * it out again at once, an answer puts it back. */
	h->fails = cl->targets[target].health_fails - 1;
	return true;
}

/* Connections ------------------------------------------------------------- */

static const struct tcp_upcalls upcalls;

static void
conn_free(struct up_conn *uc)
{
	struct upstream_client *cl = uc->cl;

	net_timer_cancel(cl->ns, &uc->timer);
	stats_of(cl, uc->target)->conns_open--;
	uc->state = UC_FREE;
	uc->tc = NULL;
	uc->f = NULL;
	uc->next = cl->free_conns;
	cl->free_conns = uc;
}

static struct up_conn *
conn_alloc(struct upstream_client *cl, unsigned int target)
{
	struct up_conn *uc = cl->free_conns;

	if (uc == NULL)
		return NULL;
	cl->free_conns = uc->next;
	uc->next = NULL;
	uc->target = (uint8_t)target;
	uc->tc = NULL;
	uc->f = NULL;
	uc->peer_closed = false;
	uc->in_off = uc->in_len = 0;
	uc->state = UC_RESOLVING;
	stats_of(cl, target)->conns_open++;
	return uc;
}

static void
output(struct upstream_client *cl, struct up_conn *uc)
{
	if (cl->in_upcall == 0 && uc->tc != NULL)
		tcp_output(cl->ns, uc->tc);
}

/* tcp_open_addr() towards the connection's upstream: 0 (connecting, or still
 * resolving), or the error. */
static int
conn_open(struct up_conn *uc)
{
	struct upstream_client *cl = uc->cl;
	const struct upstream_target *t = &cl->targets[uc->target];
	struct tcp_conn *tc;
	int err;

	tc = tcp_open_addr(cl->ns, &t->addr, t->port, &upcalls, cl, &err);
	if (tc == NULL && err == -EAGAIN)	/* ARP or ND on its way */
		net_timer_arm(cl->ns, &uc->timer, now_ms(cl) +
				UP_RESOLVE_RETRY_MS);
	if (tc == NULL)
		return err == -EAGAIN ? 0 : err;
	net_timer_cancel(cl->ns, &uc->timer);
	tcp_set_app(tc, uc);
	tcp_set_rcv_space(cl->ns, tc, UP_IN_MAX);
	uc->tc = tc;
	uc->state = UC_CONNECTING;
	stats_of(cl, uc->target)->opened++;
	return 0;
}

static void
idle_remove(struct up_conn *uc)
{
	struct up_conn **pp = &uc->cl->idle[uc->target];

	while (*pp != NULL && *pp != uc)
		pp = &(*pp)->next;
	if (*pp == uc)
		*pp = uc->next;
	uc->next = NULL;
	net_timer_cancel(uc->cl->ns, &uc->timer);
	stats_of(uc->cl, uc->target)->conns_idle--;
}

/* Ends a connection: FIN when it ended cleanly (the closed upcall frees
 * it), RST when cut short. */
static void
conn_end(struct up_conn *uc, bool reset)
{
	struct upstream_client *cl = uc->cl;

	uc->f = NULL;
	if (uc->tc == NULL) {
		conn_free(uc);
		return;
	}
	uc->state = UC_CLOSING;
	if (reset) {
		tcp_abort(cl->ns, uc->tc);	/* the closed upcall may run now */
	} else {
		tcp_close(cl->ns, uc->tc);
		output(cl, uc);
	}
}

/* The fetch is done with its connection: the pool takes a clean one. */
static void
conn_put(struct up_conn *uc, bool clean)
{
	struct upstream_client *cl = uc->cl;

	uc->f = NULL;
	if (!clean || cl->draining || uc->tc == NULL || uc->peer_closed ||
			uc->in_off != uc->in_len) {
		conn_end(uc, !clean);
		return;
	}
	uc->in_off = uc->in_len = 0;
	uc->state = UC_IDLE;
	uc->idle_since_ms = now_ms(cl);
	net_timer_arm(cl->ns, &uc->timer, uc->idle_since_ms +
			cl->conf.idle_timeout_ms);
	uc->next = cl->idle[uc->target];
	cl->idle[uc->target] = uc;
	stats_of(cl, uc->target)->conns_idle++;
	tcp_set_rcv_space(cl->ns, uc->tc, UP_IN_MAX);
}

/* Fetches ------------------------------------------------------------------ */

static void fetch_send(struct upstream_fetch *f, bool pull);

/* The fetch's deadline: the connection's (ARP and handshake), or the
 * answer's silence; 0: none. */
static void
fetch_deadline(struct upstream_fetch *f, uint64_t at_ms)
{
	if (at_ms != 0)
		net_timer_arm(f->cl->ns, &f->timer, at_ms);
	else
		net_timer_cancel(f->cl->ns, &f->timer);
}

static void
fetch_detach(struct upstream_fetch *f, bool clean)
{
	struct up_conn *uc = f->uc;

	f->uc = NULL;
	if (uc != NULL)
		conn_put(uc, clean);
}

/* A failure, counted; the connection is reset. Reads fail from now. */
static bool
fetch_break(struct upstream_fetch *f, enum upstream_err why)
{
	bool before_head = !f->head_seen;

	stats_of(f->cl, f->target)->errors[why]++;
	if (before_head && why != UPSTREAM_ERR_no_conn &&
			why != UPSTREAM_ERR_request_head &&
			why != UPSTREAM_ERR_client_body)
		health_failed(f->cl, f->target);
	fetch_detach(f, false);
	fetch_deadline(f, 0);
	f->head_seen = true;	/* nothing more to hear */
	f->failed = true;
	return before_head;
}

/* A failure the caller hears of: failed() before the head, readable()
 * after it (its last act here: the caller may release f inside). */
static void
fetch_fail(struct upstream_fetch *f, enum upstream_err why)
{
	if (fetch_break(f, why))
		f->ev->failed(f->arg, why);
	else
		f->ev->readable(f->arg);
}

/* Every connection is taken: the one idle for longest, whichever
 * upstream's, is reset to make room (a pool must not starve the other
 * upstreams). Its slot is free on return unless TCP is inside its input
 * (never, from where fetches start). */
static void
evict_idle(struct upstream_client *cl)
{
	struct up_conn *oldest = NULL, *uc;
	unsigned int i;

	for (i = 0; i < cl->conf.n; i++)
		for (uc = cl->idle[i]; uc != NULL; uc = uc->next)
			if (uc->next == NULL && (oldest == NULL ||
					uc->idle_since_ms < oldest->idle_since_ms))
				oldest = uc;	/* the bottom of a LIFO stack */
	if (oldest == NULL)
		return;
	stats_of(cl, oldest->target)->evicted++;
	idle_remove(oldest);
	conn_end(oldest, true);
}

/* A fresh connection for the fetch: 0, or the error to fail with. */
static int
fetch_connect(struct upstream_fetch *f)
{
	struct up_conn *uc = conn_alloc(f->cl, f->target);
	int err;

	if (uc == NULL) {
		evict_idle(f->cl);
		uc = conn_alloc(f->cl, f->target);
	}
	if (uc == NULL)
		return UPSTREAM_ERR_no_conn;
	f->uc = uc;
	uc->f = f;
	f->reused = false;
	f->head_sent = 0;
	fetch_deadline(f, now_ms(f->cl) + connect_timeout(f));
	err = conn_open(uc);
	if (err == 0)
		return 0;
	f->uc = NULL;
	conn_free(uc);
	return err == -ENETUNREACH ? UPSTREAM_ERR_unreachable :
		UPSTREAM_ERR_no_conn;
}

/* The connection went away before any answer byte. A pooled one the
 * upstream had closed meanwhile is no failure of the request: an
 * idempotent one whose body was not yet taken goes again, once, on a
 * fresh connection. */
static void
fetch_conn_lost(struct upstream_fetch *f, bool refused)
{
	int err;

	if (f->reused && !f->got_bytes && f->idempotent && !f->retried &&
			f->req_pulled == 0) {
		f->retried = true;
		stats_of(f->cl, f->target)->retries++;
		fetch_detach(f, false);
		err = fetch_connect(f);
		if (err == 0)
			return;
		fetch_fail(f, (enum upstream_err)err);
		return;
	}
	fetch_fail(f, refused ? UPSTREAM_ERR_connect_refused :
			UPSTREAM_ERR_reset);
}

static void
answer_complete(struct upstream_fetch *f)
{
	f->body_done = true;
	fetch_deadline(f, 0);
	/* An answer before the whole request: the rest cannot be sent on. */
	fetch_detach(f, f->keep && f->req_done);
}

/* The answer's head is in: its framing (RFC 9112 6.3). */
static void
fetch_head(struct upstream_fetch *f, const struct http_head *h, int len)
{
	struct up_conn *uc = f->uc;
	struct upstream_stats *st = stats_of(f->cl, f->target);
	bool body;

	uc->in_off += (uint32_t)len;
	f->head_seen = true;
	st->answers++;
	if (h->status >= 500)
		health_failed(f->cl, f->target);
	else
		health_answered(f->cl, f->target);
	lat_record(&st->lat, lat_cycles_ns(rte_get_tsc_cycles() - f->t0_tsc,
			f->cl->ns_mult));
	if (h->status == 101)	/* a tunnel's: the rest, as it comes */
		http1_body_start(&f->body, HTTP1_BODY_CLOSE, 0);
	else if (f->head_req || h->status == 204 || h->status == 304)
		http1_body_start(&f->body, HTTP1_BODY_NONE, 0);
	else if (h->chunked)
		http1_body_start(&f->body, HTTP1_BODY_CHUNKED, 0);
	else if (h->content_length >= 0)
		http1_body_start(&f->body, HTTP1_BODY_LENGTH,
				(uint64_t)h->content_length);
	else
		http1_body_start(&f->body, HTTP1_BODY_CLOSE, 0);
	f->keep = h->keep_alive && f->body.framing != HTTP1_BODY_CLOSE &&
		!f->tunnel;
	/* In the body, the upstream is timed only while the client waits
	 * for it (a read found nothing): a client that does not read holds
	 * the upstream back, which is no fault of the upstream's. */
	fetch_deadline(f, 0);
	body = http1_body_reading(&f->body);
	if (!body)
		answer_complete(f);
	/* Last: the caller may read, or release f, inside. */
	f->ev->head(f->arg, h, body);
}

/* New answer bytes, or the upstream's close. */
static void
fetch_input(struct upstream_fetch *f)
{
	struct up_conn *uc = f->uc;
	struct http_head h;
	int rc;

	if (f->head_seen) {
		if (!f->body_done && !f->failed) {
			fetch_deadline(f, 0);
			f->ev->readable(f->arg);
		}
		return;
	}
	for (;;) {
		rc = http1_parse_response((const char *)uc->in + uc->in_off,
				uc->in_len - uc->in_off, &h);
		if (rc < 0 || (rc == 0 && uc->in_len == UP_IN_MAX) ||
				(rc > 0 && h.status == 101 && !f->tunnel)) {
			fetch_fail(f, UPSTREAM_ERR_bad_answer);
			return;
		}
		if (rc == 0) {
			if (uc->peer_closed) {
				if (f->got_bytes)
					fetch_fail(f, UPSTREAM_ERR_bad_answer);
				else
					fetch_conn_lost(f, false);
			}
			return;
		}
		if (h.status >= 200 || h.status == 101)
			break;
		uc->in_off += (uint32_t)rc;	/* 1xx: interim, skipped */
	}
	fetch_head(f, &h, rc);
}

/* Writes the request: the head, then (pull) the body as the send queue
 * takes it. Never pulls inside the caller's start: the caller's request
 * may still be in its parser's hands then. */
static void
fetch_send(struct upstream_fetch *f, bool pull)
{
	struct upstream_client *cl = f->cl;
	struct up_conn *uc = f->uc;
	struct net_stack *ns = cl->ns;

	if (uc == NULL || uc->state != UC_BUSY || uc->tc == NULL)
		return;
	if (f->head_sent < f->head_len) {
		f->head_sent += tcp_write(ns, uc->tc, f->head + f->head_sent,
				f->head_len - f->head_sent);
		if (f->head_sent < f->head_len)
			goto out;
	}
	while (pull && !f->req_done) {
		uint32_t space = tcp_send_space(ns, uc->tc);
		/* A chunk is framed in place, around the bytes pulled. */
		size_t framing = f->req_chunked ? HTTP1_CHUNK_FRAMING : 0, cap, len;
		uint8_t *buf = cl->scratch + (f->req_chunked ?
				HTTP1_CHUNK_HEAD_MAX : 0), *out;
		long n;

		bool framed = !f->req_chunked && !f->tunnel;

		if (framed && f->req_pulled == (uint64_t)f->req_len) {
			f->req_done = true;
			break;
		}
		if (space < framing + UP_PULL_MIN)
			break;
		cap = RTE_MIN(sizeof(cl->scratch), (size_t)space) - framing;
		if (framed)
			cap = (size_t)RTE_MIN((uint64_t)cap,
					(uint64_t)f->req_len - f->req_pulled);
		n = f->ev->req_body(f->arg, buf, cap);
		if (n == HTTP_SOURCE_AGAIN)
			break;
		if (n < 0 || (size_t)n > cap || (n == 0 && framed)) {
			fetch_fail(f, UPSTREAM_ERR_client_body);
			return;
		}
		if (n == 0) {
			if (f->req_chunked)
				tcp_write(ns, uc->tc, HTTP1_LAST_CHUNK,
						HTTP1_LAST_CHUNK_LEN);
			f->req_done = true;
			break;
		}
		out = buf;
		len = (size_t)n;
		if (f->req_chunked)
			out = http1_chunk_frame(buf, len, &len);
		tcp_write(ns, uc->tc, out, (uint32_t)len);
		f->req_pulled += (uint64_t)n;
	}
	if (!f->head_seen)
		fetch_deadline(f, now_ms(cl) + answer_timeout(f));
	if (f->req_done && f->body_done && f->uc != NULL)
		fetch_detach(f, f->keep);	/* the answer came first */
out:
	output(cl, uc);
}

/* Request head: Host names the upstream, hop-by-hop fields stay here, the
 * framing is this hop's own (RFC 9110 7.6.1). */
static bool
hop_by_hop(struct http_str n)
{
	static const char *const drop[] = { "connection", "keep-alive",
		"proxy-connection", "te", "trailer", "transfer-encoding",
		"upgrade", "http2-settings", "content-length", "host",
		"expect", "proxy-authorization" };
	size_t i;

	for (i = 0; i < RTE_DIM(drop); i++)
		if (http_str_eq_nocase(n, drop[i]))
			return true;
	return false;
}

static bool
head_put(struct upstream_fetch *f, const char *p, size_t n)
{
	if (n > sizeof(f->head) - f->head_len)
		return false;
	memcpy(f->head + f->head_len, p, n);
	f->head_len += (uint32_t)n;
	return true;
}

static bool
head_field(struct upstream_fetch *f, const char *name, struct http_str v)
{
	return head_put(f, name, strlen(name)) && head_put(f, ": ", 2) &&
		head_put(f, v.p, v.len) && head_put(f, "\r\n", 2);
}

/* Fields a forwarded request's client may not set unless trusted: who it
 * is, and how it came, are this hop's to say. */
static bool
untrusted(struct http_str n)
{
	return http_str_eq_nocase(n, "x-forwarded-for") ||
		http_str_eq_nocase(n, "x-forwarded-proto") ||
		http_str_eq_nocase(n, "x-forwarded-host") ||
		http_str_eq_nocase(n, "forwarded");
}

/* X-Forwarded-For and -Proto, Forwarded (RFC 7239: an IPv6 address
 * quoted in brackets) and our Via (RFC 9110 7.6.3) after the client's
 * (a trusted client's X-Forwarded-Proto, proto_given, stands). */
static bool
forwarded_fields(struct upstream_fetch *f, const struct upstream_req *r,
		struct http_str host, bool proto_given)
{
	struct http_str proto = r->https ? (struct http_str){ "https", 5 } :
		(struct http_str){ "http", 4 };
	bool v6 = memchr(r->client.p, ':', r->client.len) != NULL;

	return head_field(f, "X-Forwarded-For", r->client) &&
		(proto_given || head_field(f, "X-Forwarded-Proto", proto)) &&
		head_put(f, "Forwarded: for=", 15) &&
		head_put(f, v6 ? "\"[" : "", v6 ? 2 : 0) &&
		head_put(f, r->client.p, r->client.len) &&
		head_put(f, v6 ? "]\"" : "", v6 ? 2 : 0) &&
		head_put(f, ";proto=", 7) && head_put(f, proto.p, proto.len) &&
		(host.len == 0 || (head_put(f, ";host=\"", 7) &&
		 head_put(f, host.p, host.len) && head_put(f, "\"", 1))) &&
		head_put(f, "\r\n", 2) &&
		head_field(f, "Via", (struct http_str){ "1.1 ewyk", 8 });
}

/* A tunnel's Upgrade and Connection, and the Sec-WebSocket-Key an
 * HTTP/1.1 server asks for when the client, over HTTP/2's extended
 * CONNECT (RFC 8441), had none to give: 16 random bytes in base64. */
static bool
tunnel_fields(struct upstream_fetch *f, bool has_key)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
		"qrstuvwxyz0123456789+/";
	uint8_t raw[18] = { 0 };	/* 16, and 2 zeros: 6 groups of 3 */
	char key[25];
	uint64_t a = rte_rand(), b = rte_rand();
	int i;

	if (!head_put(f, "Connection: Upgrade\r\nUpgrade: websocket\r\n", 41))
		return false;
	if (has_key)
		return true;
	memcpy(raw, &a, 8);
	memcpy(raw + 8, &b, 8);
	for (i = 0; i < 6; i++) {
		uint32_t v = (uint32_t)raw[3 * i] << 16 |
			(uint32_t)raw[3 * i + 1] << 8 | raw[3 * i + 2];

		key[4 * i] = b64[v >> 18 & 63];
		key[4 * i + 1] = b64[v >> 12 & 63];
		key[4 * i + 2] = b64[v >> 6 & 63];
		key[4 * i + 3] = b64[v & 63];
	}
	key[22] = key[23] = '=';	/* 16 bytes: two of padding */
	key[24] = '\0';
	return head_field(f, "Sec-WebSocket-Key", (struct http_str){ key, 24 });
}

static bool
build_head(struct upstream_fetch *f, const struct upstream_req *r)
{
	const struct upstream_target *t = &f->cl->targets[f->target];
	char addr[INET6_ADDRSTRLEN + 8], len[24];
	struct http_str host = { NULL, 0 };
	bool ok, proto_given = false, has_key = false;
	uint32_t i;

	f->head_len = 0;
	net_addr_format(&t->addr, t->port, addr, sizeof(addr));
	for (i = 0; r->forwarded && i < r->nheaders; i++)
		if (http_str_eq_nocase(r->headers[i].name, "host"))
			host = r->headers[i].value;
	/* A forwarded request keeps its Host; any other, or one without,
	 * names the upstream. */
	ok = head_put(f, r->method.p, r->method.len) && head_put(f, " ", 1) &&
		head_put(f, r->target.p, r->target.len) &&
		head_put(f, " HTTP/1.1\r\n", 11) &&
		head_field(f, "Host", host.len > 0 ? host : (struct http_str){
				addr, (uint32_t)strlen(addr) });
	for (i = 0; ok && i < r->nheaders; i++) {
		const struct http_header *h = &r->headers[i];

		if (hop_by_hop(h->name) || (r->forwarded && !r->trusted &&
				untrusted(h->name)))
			continue;
		proto_given |= http_str_eq_nocase(h->name, "x-forwarded-proto");
		if (unlikely(r->tunnel))
			has_key |= http_str_eq_nocase(h->name,
					"sec-websocket-key");
		ok = head_put(f, h->name.p, h->name.len) &&
			head_put(f, ": ", 2) &&
			head_put(f, h->value.p, h->value.len) &&
			head_put(f, "\r\n", 2);
	}
	if (ok && r->forwarded)
		ok = forwarded_fields(f, r, host, r->trusted && proto_given);
	if (ok && r->tunnel)
		ok = tunnel_fields(f, has_key);
	else if (ok && r->body_len > 0)
		ok = head_field(f, "Content-Length", (struct http_str){ len,
				(uint32_t)snprintf(len, sizeof(len), "%lld",
				(long long)r->body_len) });
	else if (ok && r->body_len < 0)
		ok = head_field(f, "Transfer-Encoding", (struct http_str){
				"chunked", 7 });
	return ok && head_put(f, "\r\n", 2);
}

struct upstream_fetch *
upstream_fetch_start(struct upstream_client *cl, int idx,
		const struct upstream_req *r, const struct upstream_events *ev,
		void *arg, enum upstream_err *why)
{
	struct upstream_fetch *f = cl->free_fetches;
	struct up_conn *uc;
	int err;

	if (idx < 0 || (unsigned int)idx >= cl->conf.n || f == NULL) {
		*why = UPSTREAM_ERR_no_conn;
		goto fail;
	}
	cl->free_fetches = f->next_free;
	memset(&f->in_use, 0, offsetof(struct upstream_fetch, head) -
			offsetof(struct upstream_fetch, in_use));
	f->in_use = true;
	f->ev = ev;
	f->arg = arg;
	f->uc = NULL;
	f->target = (uint8_t)idx;
	f->idempotent = r->idempotent;
	f->head_req = r->head;
	f->req_len = r->body_len;
	f->tunnel = r->tunnel;
	f->req_chunked = r->body_len < 0 && !r->tunnel;
	f->req_done = r->body_len == 0;
	f->t0_tsc = rte_get_tsc_cycles();
	stats_of(cl, idx)->requests++;
	if (!build_head(f, r)) {
		*why = UPSTREAM_ERR_request_head;
		goto fail_free;
	}
	uc = cl->idle[idx];
	if (uc != NULL) {
		idle_remove(uc);
		uc->state = UC_BUSY;
		uc->f = f;
		f->uc = uc;
		f->reused = true;
		stats_of(cl, idx)->reused++;
		fetch_send(f, false);
		fetch_deadline(f, now_ms(cl) + answer_timeout(f));
		return f;
	}
	err = fetch_connect(f);
	if (err == 0)
		return f;
	*why = (enum upstream_err)err;
fail_free:
	fetch_deadline(f, 0);
	f->in_use = false;
	f->next_free = cl->free_fetches;
	cl->free_fetches = f;
fail:
	if (idx >= 0 && (unsigned int)idx < cl->conf.n)
		stats_of(cl, idx)->errors[*why]++;
	return NULL;
}

long
upstream_fetch_read(struct upstream_fetch *f, void *buf, size_t cap)
{
	struct up_conn *uc = f->uc;
	size_t used;
	long got;

	if (f->failed)
		return -1;
	if (f->body_done)
		return 0;
	if (uc == NULL)
		return -1;
	got = http1_body_read(&f->body, uc->in + uc->in_off,
			uc->in_len - uc->in_off, &used, buf, cap);
	if (got < 0) {
		fetch_break(f, UPSTREAM_ERR_bad_answer);
		return -1;
	}
	uc->in_off += (uint32_t)used;
	/* Room made: the upstream's window opens by it. */
	if (uc->in_off > 0) {
		memmove(uc->in, uc->in + uc->in_off, uc->in_len - uc->in_off);
		uc->in_len -= uc->in_off;
		uc->in_off = 0;
		if (uc->tc != NULL)
			tcp_set_rcv_space(f->cl->ns, uc->tc,
					UP_IN_MAX - uc->in_len);
	}
	/* The close ends a body read until it; one it cuts short fails once
	 * what came before the close is read. */
	if (uc->peer_closed && uc->in_len == 0)
		http1_body_closed(&f->body);
	if (!http1_body_reading(&f->body)) {
		answer_complete(f);
		return got;
	}
	fetch_deadline(f, 0);
	if (got > 0)
		return got;
	if (uc->peer_closed) {
		fetch_break(f, UPSTREAM_ERR_reset);	/* died mid-answer */
		return -1;
	}
	fetch_deadline(f, now_ms(f->cl) +
			answer_timeout(f));
	return HTTP_SOURCE_AGAIN;
}

bool
upstream_fetch_done(const struct upstream_fetch *f)
{
	return f->body_done && !f->failed;
}

void
upstream_fetch_body_ready(struct upstream_fetch *f)
{
	fetch_send(f, true);
}

void
upstream_fetch_release(struct upstream_fetch *f)
{
	struct upstream_client *cl = f->cl;
	struct up_conn *uc = f->uc;

	if (!f->failed && !f->body_done)
		stats_of(cl, f->target)->cut++;
	if (uc != NULL) {
		if (uc->state == UC_CONNECTING) {
			/* The handshake goes on: the pool takes it then. */
			uc->f = NULL;
			f->uc = NULL;
		} else {
			fetch_detach(f, false);
		}
	}
	fetch_deadline(f, 0);
	f->in_use = false;
	f->next_free = cl->free_fetches;
	cl->free_fetches = f;
}

/* Deadlines ----------------------------------------------------------------- */

/* A fetch's deadline passed: no handshake in time, or no answer (its head,
 * or more of its body while the client waits). */
static void
fetch_timeout(struct net_timer *tm)
{
	struct upstream_fetch *f = container_of(tm, struct upstream_fetch,
			timer);
	struct up_conn *uc = f->uc;

	if (!f->in_use || f->failed)
		return;
	fetch_fail(f, uc != NULL && (uc->state == UC_RESOLVING ||
			uc->state == UC_CONNECTING) ?
			UPSTREAM_ERR_connect_timeout :
			UPSTREAM_ERR_answer_timeout);
}

/* A connection's timer: tcp_open_addr() again while the upstream's ARP is on
 * its way, or the close of one idle too long. */
static void
conn_timeout(struct net_timer *tm)
{
	struct up_conn *uc = container_of(tm, struct up_conn, timer);

	if (uc->state == UC_IDLE) {
		idle_remove(uc);
		conn_end(uc, false);
	} else if (uc->state == UC_RESOLVING && uc->f != NULL &&
			conn_open(uc) != 0) {
		fetch_fail(uc->f, UPSTREAM_ERR_no_conn);
	}
}

/* TCP upcalls --------------------------------------------------------------- */

static int
on_accepted(void *ctx, struct tcp_conn *c)
{
	struct upstream_client *cl = ctx;
	struct up_conn *uc = tcp_app(c);

	if (uc->f == NULL) {
		conn_put(uc, true);	/* its fetch left: pooled */
		return 0;
	}
	uc->state = UC_BUSY;
	cl->in_upcall++;
	fetch_send(uc->f, true);
	cl->in_upcall--;
	return 0;
}

static uint32_t
on_recv(void *ctx, struct tcp_conn *c, const uint8_t *data, uint32_t len)
{
	struct upstream_client *cl = ctx;
	struct up_conn *uc = tcp_app(c);
	uint32_t n = RTE_MIN(len, (uint32_t)(UP_IN_MAX - uc->in_len));

	if (uc->f == NULL) {
		/* Nothing was asked: an idle connection must stay silent. */
		if (uc->state == UC_IDLE)
			idle_remove(uc);
		conn_end(uc, true);
		return len;
	}
	memcpy(uc->in + uc->in_len, data, n);
	uc->in_len += n;
	uc->f->got_bytes = true;
	tcp_set_rcv_space(cl->ns, c, UP_IN_MAX - uc->in_len);
	cl->in_upcall++;
	fetch_input(uc->f);
	cl->in_upcall--;
	return n;
}

static void
on_sent(void *ctx, struct tcp_conn *c)
{
	struct upstream_client *cl = ctx;
	struct up_conn *uc = tcp_app(c);

	if (uc->f == NULL)
		return;
	cl->in_upcall++;
	fetch_send(uc->f, true);
	cl->in_upcall--;
}

static void
on_peer_closed(void *ctx, struct tcp_conn *c)
{
	struct upstream_client *cl = ctx;
	struct up_conn *uc = tcp_app(c);

	uc->peer_closed = true;
	if (uc->f == NULL) {
		if (uc->state == UC_IDLE)
			idle_remove(uc);
		if (uc->state != UC_CLOSING)
			conn_end(uc, false);
		return;
	}
	cl->in_upcall++;
	fetch_input(uc->f);
	cl->in_upcall--;
}

static void
on_closed(void *ctx, struct tcp_conn *c)
{
	struct upstream_client *cl = ctx;
	struct up_conn *uc = tcp_app(c);
	struct upstream_fetch *f = uc->f;
	bool refused = uc->state == UC_CONNECTING;

	uc->tc = NULL;
	uc->peer_closed = true;
	if (uc->state == UC_IDLE)
		idle_remove(uc);
	if (f == NULL) {
		conn_free(uc);
		return;
	}
	cl->in_upcall++;
	if (refused)
		fetch_conn_lost(f, true);
	else
		fetch_input(f);	/* what it buffered is still read */
	cl->in_upcall--;
}

static const struct tcp_upcalls upcalls = {
	.accepted = on_accepted,
	.recv = on_recv,
	.sent = on_sent,
	.peer_closed = on_peer_closed,
	.closed = on_closed,
};

/* The client ------------------------------------------------------------- */

/* Active health checks ------------------------------------------------------ */

/* A probe's answer or failure has already counted for its server's health
 * (fetch_head(), fetch_break()); what is left is to let the fetch go, on
 * the probe's own timer: never inside the fetch's upcall. */
static void
probe_over(struct up_probe *p, bool failed)
{
	if (failed)
		stats_of(p->cl, p->target)->checks_failed++;
	p->over = true;
	net_timer_arm(p->cl->ns, &p->timer, now_ms(p->cl));
}

static void
probe_head(void *arg, const struct http_head *h, bool body)
{
	struct up_probe *p = arg;

	if (h->status >= 500)
		stats_of(p->cl, p->target)->checks_failed++;
	if (!body)
		probe_over(p, false);
}

/* The body, read and dropped (a probe wants its status only). */
static void
probe_readable(void *arg)
{
	struct up_probe *p = arg;
	long n;

	if (p->over)
		return;
	while ((n = upstream_fetch_read(p->f, p->cl->scratch,
			sizeof(p->cl->scratch))) > 0)
		;
	if (n != HTTP_SOURCE_AGAIN)
		probe_over(p, false);
}

static void
probe_failed(void *arg, enum upstream_err why)
{
	RTE_SET_USED(why);
	probe_over(arg, true);
}

static long
probe_no_body(void *arg, void *buf, size_t cap)
{
	RTE_SET_USED(arg);
	RTE_SET_USED(buf);
	RTE_SET_USED(cap);
	return 0;
}

static const struct upstream_events probe_events = {
	.head = probe_head,
	.readable = probe_readable,
	.failed = probe_failed,
	.req_body = probe_no_body,
};

/* The probe's timer: the last probe let go, the next one started on time
 * (one still waiting for its answer ends by its own deadlines first). */
static void
probe_tick(struct net_timer *tm)
{
	struct up_probe *p = container_of(tm, struct up_probe, timer);
	struct upstream_client *cl = p->cl;
	const struct upstream_target *t = &cl->targets[p->target];
	uint64_t now = now_ms(cl);
	struct upstream_req r = {
		.method = { "GET", 3 },
		.target = { t->health_uri, (uint32_t)strlen(t->health_uri) },
		.idempotent = true,
	};
	enum upstream_err why;

	if (p->f != NULL && p->over) {
		upstream_fetch_release(p->f);
		p->f = NULL;
	}
	if (p->f == NULL && now >= p->next_ms && !cl->draining) {
		p->over = false;
		p->next_ms = now + t->health_interval_ms;
		stats_of(cl, p->target)->checks++;
		p->f = upstream_fetch_start(cl, p->target, &r, &probe_events, p,
				&why);
		if (p->f == NULL)
			stats_of(cl, p->target)->checks_failed++;
	}
	net_timer_arm(cl->ns, tm, p->f != NULL && p->next_ms <= now ?
			now + t->health_interval_ms : p->next_ms);
}

/* Probes start spread over the first interval, not all at once. */
static void
probes_start(struct upstream_client *cl)
{
	unsigned int i;

	for (i = 0; i < cl->conf.n; i++) {
		struct up_probe *p = &cl->probes[i];

		p->cl = cl;
		p->target = (uint8_t)i;
		net_timer_init(&p->timer, probe_tick);
		if (cl->targets[i].health_uri[0] == '\0')
			continue;
		p->next_ms = now_ms(cl) + 1 + (uint64_t)
			cl->targets[i].health_interval_ms * i / cl->conf.n;
		net_timer_arm(cl->ns, &p->timer, p->next_ms);
	}
}

static void
probes_stop(struct upstream_client *cl)
{
	unsigned int i;

	for (i = 0; i < cl->conf.n; i++)
		net_timer_cancel(cl->ns, &cl->probes[i].timer);
}

struct upstream_client *
upstream_client_create(struct net_stack *ns, const struct upstream_conf *conf,
		struct upstream_stats *stats)
{
	struct upstream_client *cl;
	uint32_t i;

	if (conf->n > UPSTREAM_MAX || conf->max_conns == 0)
		return NULL;
	cl = calloc(1, sizeof(*cl));
	if (cl == NULL)
		return NULL;
	cl->ns = ns;
	cl->conf = *conf;
	memcpy(cl->targets, conf->targets, sizeof(*conf->targets) * conf->n);
	cl->conf.targets = cl->targets;
	cl->stats = stats;
	cl->ns_mult = lat_ns_mult(rte_get_tsc_hz());
	cl->conns = calloc(conf->max_conns, sizeof(*cl->conns));
	cl->fetches = calloc(conf->max_conns, sizeof(*cl->fetches));
	if (cl->conns == NULL || cl->fetches == NULL) {
		upstream_client_destroy(cl);
		return NULL;
	}
	for (i = conf->max_conns; i-- > 0;) {
		net_timer_init(&cl->conns[i].timer, conn_timeout);
		net_timer_init(&cl->fetches[i].timer, fetch_timeout);
		cl->conns[i].cl = cl;
		cl->conns[i].next = cl->free_conns;
		cl->free_conns = &cl->conns[i];
		cl->fetches[i].cl = cl;
		cl->fetches[i].next_free = cl->free_fetches;
		cl->free_fetches = &cl->fetches[i];
	}
	probes_start(cl);
	return cl;
}

void
upstream_client_destroy(struct upstream_client *cl)
{
	uint32_t i;

	if (cl == NULL)
		return;
	probes_stop(cl);
	for (i = 0; cl->conns != NULL && cl->fetches != NULL &&
			i < cl->conf.max_conns; i++) {
		struct up_conn *uc = &cl->conns[i];

		/* Nothing of the client may stay on the shard's wheel. */
		net_timer_cancel(cl->ns, &uc->timer);
		net_timer_cancel(cl->ns, &cl->fetches[i].timer);
		if (uc->state != UC_FREE && uc->tc != NULL) {
			tcp_set_app(uc->tc, NULL);	/* no upcall into freed memory */
			tcp_abort(cl->ns, uc->tc);
		}
	}
	free(cl->conns);
	free(cl->fetches);
	free(cl);
}

void
upstream_client_drain(struct upstream_client *cl)
{
	unsigned int i;

	cl->draining = true;
	for (i = 0; i < cl->conf.n; i++)
		while (cl->idle[i] != NULL) {
			struct up_conn *uc = cl->idle[i];

			idle_remove(uc);
			conn_end(uc, false);
		}
}

const struct upstream_target *
upstream_target_of(const struct upstream_client *cl, int idx)
{
	return &cl->targets[idx];
}

struct upstream_stats *
upstream_stats_of(struct upstream_client *cl, int idx)
{
	return stats_of(cl, (unsigned int)idx);
}

bool
upstream_err_before_request(enum upstream_err e)
{
	return e == UPSTREAM_ERR_connect_refused ||
		e == UPSTREAM_ERR_connect_timeout ||
		e == UPSTREAM_ERR_unreachable;
}

/* A 64-bit mix of key and server i (SplitMix64's finaliser). */
static uint64_t
mix(uint64_t key, unsigned int i)
{
	uint64_t z = key + 0x9e3779b97f4a7c15ull * (i + 1);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t
weight_of(const struct upstream_target *t)
{
	return t->weight > 1 ? t->weight : 1;
}

/* Among the servers of [first, end) that are in and not tried, with
 * backup as given: the pool's choice, or -1. */
static int
choose(struct upstream_client *cl, unsigned int first, unsigned int end,
		uint64_t key, uint64_t tried, bool backup)
{
	const struct upstream_target *pool = &cl->targets[first];
	int best = -1;
	uint64_t best_score = 0;
	int32_t total = 0;
	unsigned int i;

	for (i = first; i < end; i++) {
		const struct upstream_target *t = &cl->targets[i];
		struct up_health *h = &cl->health[i];
		uint64_t score;

		if (t->backup != backup || (tried >> i & 1) || !health_in(cl, i))
			continue;
		switch (pool->balance) {
		case UPSTREAM_LEAST_CONN: {
			/* Fewest busy connections per share: busy * 2^20 / weight,
			 * inverted so that the highest score wins. */
			uint64_t busy = stats_of(cl, i)->conns_open -
				stats_of(cl, i)->conns_idle;

			score = UINT64_MAX - (busy << 20) / weight_of(t);
			break;
		}
		case UPSTREAM_HASH:
			/* Highest random weight: a server's requests stay its
			 * own while it is in, and only its own move when it is
			 * taken out. */
			score = mix(key, i) / (UINT64_MAX / 1024 + 1) *
				weight_of(t) + 1;
			break;
		default:
			h->rr_current += (int32_t)weight_of(t);
			total += (int32_t)weight_of(t);
			score = (uint64_t)((int64_t)h->rr_current + INT32_MAX);
			break;
		}
		if (best < 0 || score > best_score) {
			best = (int)i;
			best_score = score;
		}
	}
	if (best >= 0 && pool->balance == UPSTREAM_ROUND_ROBIN)
		cl->health[best].rr_current -= total;
	return best;
}

int
upstream_pick(struct upstream_client *cl, int first, uint64_t key,
		uint64_t tried)
{
	unsigned int end = (unsigned int)first + 1;
	int i;

	if (first < 0 || (unsigned int)first >= cl->conf.n)
		return -1;
	while (end < cl->conf.n && strcmp(cl->targets[end].name,
			cl->targets[first].name) == 0)
		end++;
	i = choose(cl, (unsigned int)first, end, key, tried, false);
	return i >= 0 ? i : choose(cl, (unsigned int)first, end, key, tried,
			true);
}

int
upstream_find(const struct upstream_client *cl, const char *name, size_t len)
{
	unsigned int i;

	for (i = 0; i < cl->conf.n; i++)
		if (strlen(cl->targets[i].name) == len &&
				memcmp(cl->targets[i].name, name, len) == 0)
			return (int)i;
	return -1;
}
