/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>

#include "h2_proto.h"
#include "http1_proto.h"
#include "http_conn.h"
#include "http_site.h"

#define CLOSING_RCV_SPACE 8192	/* input after our close is taken, dropped */

/* Start-up memory, cache-line aligned and zeroed. Ordinary memory: the
 * server needs no EAL, so its unit tests run without one. */
static void *
zalloc(size_t size)
{
	size_t n = RTE_ALIGN_CEIL(size, RTE_CACHE_LINE_SIZE);
	void *p = aligned_alloc(RTE_CACHE_LINE_SIZE, n);

	if (p != NULL)
		memset(p, 0, n);
	return p;
}

static void
output(struct http_conn *c)
{
	if (c->t != NULL)
		c->tr->output(c->tr_ctx, c->t);
}

/* The connection's deadline: its protocol acts on what is overdue (408,
 * an idle close) and says when to look again. */
static void
deadline_fire(struct net_timer *tm)
{
	struct http_conn *c = container_of(tm, struct http_conn, timer);
	uint64_t next;

	c->timer_at = 0;
	if (c->t == NULL || c->closing || c->proto->timeout == NULL)
		return;
	next = c->proto->timeout(c, http_conn_now(c));
	if (!c->closing && next != 0)
		http_conn_deadline(c, next);
	/* Outside an upcall: what it wrote (a 408, a close) goes now. */
	output(c);
}

static void
cancel_deadline(struct http_conn *c)
{
	if (c->timer_at == 0)
		return;
	c->timer_at = 0;
	c->tr->timer_cancel(c->tr_ctx, &c->timer);
}

struct http_server *
http_server_create(const struct http_server_conf *conf)
{
	struct http_server *s;
	size_t h1;
	uint32_t i;

	if (conf->transport == NULL || conf->router == NULL ||
			conf->dispatch == NULL || conf->stats == NULL ||
			conf->max_conns == 0 || conf->transport->timer_arm == NULL ||
			conf->transport->timer_cancel == NULL)
		return NULL;
	s = zalloc(sizeof(*s));
	if (s == NULL)
		return NULL;
	s->conf = *conf;
	s->timeouts = conf->header_timeout_ms != 0 ||
		conf->keepalive_timeout_ms != 0 || conf->idle_release_ms != 0;
	if (s->conf.max_head_bytes == 0)
		s->conf.max_head_bytes = HTTP_MAX_HEAD_BYTES;
	if (s->conf.max_target == 0)
		s->conf.max_target = HTTP_MAX_TARGET;
	if (s->conf.max_body == 0)
		s->conf.max_body = HTTP_MAX_BODY;
	s->conf.max_body = RTE_MAX(s->conf.max_body, (uint32_t)EWYK_REQUEST_BODY_MAX);
	if (s->conf.body_buffers == 0)
		s->conf.body_buffers = HTTP_BODY_BUFFERS;
	/* Each slot's HTTP/1.1 state on pages of its own, reserved but
	 * not touched: a slot costs memory once its connection writes
	 * there, and gives the pages back when it idles (http_conn_h1_drop). */
	h1 = RTE_ALIGN_CEIL(http1_state_size(s->conf.max_head_bytes),
			(size_t)sysconf(_SC_PAGESIZE));
	s->h1_stride = h1;
	http_mem_init(&s->mem, conf->stats);
	s->conns = zalloc(sizeof(*s->conns) * conf->max_conns);
	s->h1_mem = mmap(NULL, h1 * conf->max_conns, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s->h1_mem == MAP_FAILED)
		s->h1_mem = NULL;
	/* A slot holds an HTTP/1.1 request's head beside its body. */
	if (s->conns == NULL || s->h1_mem == NULL ||
			http_body_pool_init(&s->bodies, s->conf.body_buffers,
			s->conf.max_body + s->conf.max_head_bytes,
			conf->stats) != 0) {
		http_server_destroy(s);
		return NULL;
	}
	for (i = conf->max_conns; i-- > 0;) {
		struct http_conn *c = &s->conns[i];

		c->srv = s;
		c->index = i;
		net_timer_init(&c->timer, deadline_fire);
		c->h1_mem = (uint8_t *)s->h1_mem + h1 * i;
		c->free_next = s->free_list;
		s->free_list = c;
	}
	return s;
}

void
http_server_destroy(struct http_server *s)
{
	uint32_t i;

	if (s == NULL)
		return;
	/* No timer of a slot may stay on the wheel past its memory. */
	for (i = 0; s->conns != NULL && i < s->conf.max_conns; i++)
		cancel_deadline(&s->conns[i]);
	http_mem_fini(&s->mem);
	/* Slots still with requests are let go with the rest. */
	http_body_pool_fini(&s->bodies);
	if (s->h1_mem != NULL)
		munmap(s->h1_mem, s->h1_stride * s->conf.max_conns);
	free(s->conns);
	free(s);
}

void
http_conn_h1_drop(struct http_conn *c)
{
	madvise(c->h1_mem, c->srv->h1_stride, MADV_DONTNEED);
}

/* Upcalls ------------------------------------------------------------------ */

struct http_conn *
http_conn_accept(struct http_server *s, void *t)
{
	return http_conn_accept_via(s, t, s->conf.transport,
			s->conf.transport_ctx, false);
}

struct http_conn *
http_conn_accept_via(struct http_server *s, void *t,
		const struct http_transport *tr, void *tr_ctx, bool h2)
{
	struct http_conn *c = s->free_list;

	if (c == NULL) {
		s->conf.stats->conns_refused++;
		return NULL;
	}
	s->free_list = c->free_next;
	c->t = t;
	c->tr = tr;
	c->tr_ctx = tr_ctx;
	c->closing = false;
	c->peer_closed = false;
	c->proto = &http1_proto;
	http1_open(c);
	s->conf.stats->conns_accepted++;
	/* The protocol was agreed beforehand (TLS's ALPN): HTTP/2 from the
	 * client's first byte, its preface checked by the session. */
	if (h2)
		http_conn_start_h2(c, NULL, 0);
	return c;
}

uint32_t
http_conn_recv(struct http_conn *c, const uint8_t *data, uint32_t len)
{
	if (c->closing)
		return len;	/* after our close, input is dropped */
	return c->proto->recv(c, data, len);
}

void
http_conn_writable(struct http_conn *c)
{
	if (!c->closing)
		c->proto->writable(c);
}

void
http_conn_peer_closed(struct http_conn *c)
{
	c->peer_closed = true;
	if (!c->closing)
		c->proto->peer_closed(c);
}

void
http_conn_closed(struct http_conn *c)
{
	struct http_server *s = c->srv;

	cancel_deadline(c);
	c->proto->free(c);
	c->p = NULL;
	c->t = NULL;
	c->gen++;
	c->free_next = s->free_list;
	s->free_list = c;
}

/* For the protocols -------------------------------------------------------- */

void
http_conn_close(struct http_conn *c)
{
	if (c->closing)
		return;
	c->closing = true;
	c->tr->rcv_space(c->tr_ctx, c->t, CLOSING_RCV_SPACE);
	c->tr->close(c->tr_ctx, c->t);
}

void
http_conn_abort(struct http_conn *c)
{
	c->closing = true;
	c->tr->abort(c->tr_ctx, c->t);
}

/* Out of line: its name buffer costs the route of a server without
 * sites nothing. */
static __rte_noinline const struct http_route *
route_by_site(const struct http_conn *c, const struct http_head *r)
{
	char sni[256];
	size_t n = c->tr->server_name != NULL ?
		c->tr->server_name(c->tr_ctx, c->t, sni, sizeof(sni)) : 0;

	return http_route_lookup(c->srv->conf.router, c->srv->conf.sites, r,
			sni, n);
}

const struct http_route *
http_conn_route(const struct http_conn *c, const struct http_head *r)
{
	if (c->srv->conf.sites != NULL)
		return route_by_site(c, r);
	return http_route_find(c->srv->conf.router, r->path.p, r->path.len);
}

int
http_conn_dispatch(struct http_conn *c, const struct http_route *rt,
		const struct http_head *r, int http_version,
		uint32_t stream, uint32_t seq, char *allow, size_t allow_cap,
		struct http_answer **ans)
{
	const struct http_server_conf *k = &c->srv->conf;
	int status = http_route_admit(rt, r, allow, allow_cap);

	if (status == 0)
		return k->dispatch(k->dispatch_ctx, rt, r, http_version,
				(struct http_origin){ c->index, c->gen, stream,
				seq }, ans);
	if (status == 413)
		k->stats->bodies_too_large++;
	http_conn_refused(c, r, status, http_version, stream, seq);
	return status;
}

void
http_conn_refused(struct http_conn *c, const struct http_head *r, int status,
		int http_version, uint32_t stream, uint32_t seq)
{
	const struct http_server_conf *k = &c->srv->conf;

	if (k->refused != NULL)
		k->refused(k->dispatch_ctx, r, status, http_version,
				(struct http_origin){ c->index, c->gen, stream,
				seq });
}

void
http_conn_count_answer(struct http_conn *c, int status, int http_version)
{
	struct http_stats *st = c->srv->conf.stats;

	st->requests++;
	st->by_status[http_status_slot(status)]++;
	if (http_version == 2)
		st->h2_requests++;
}

void
http_conn_release(struct http_conn *c, struct http_answer *a)
{
	const struct http_server_conf *k = &c->srv->conf;

	http_answer_release(a);
	if (k->released != NULL)
		k->released(k->dispatch_ctx, a);
}

const char *
http_conn_date(struct http_conn *c, uint32_t *len)
{
	struct http_server *s = c->srv;
	time_t now = time(NULL);
	struct tm tm;

	if ((uint64_t)now != s->date_sec) {
		s->date_sec = (uint64_t)now;
		gmtime_r(&now, &tm);
		s->date_len = (uint32_t)strftime(s->date, sizeof(s->date),
				"%a, %d %b %Y %H:%M:%S GMT", &tm);
	}
	*len = s->date_len;
	return s->date;
}

/* Swaps the protocol table. The old state's memory stays valid until the
 * slot is reused, so data may still point into it. */
static void
switch_proto(struct http_conn *c, const struct http_proto *to, void *state)
{
	cancel_deadline(c);
	c->proto->free(c);
	c->proto = to;
	c->p = state;
	c->srv->conf.stats->h2_conns++;
	/* Its timeout() says when it is due next. */
	if (c->srv->timeouts && to->timeout != NULL)
		http_conn_deadline(c, http_conn_now(c) + 1);
	http_conn_set_rcv_space(c, H2_RCV_SPACE);
}

void
http_conn_start_h2(struct http_conn *c, const uint8_t *data, uint32_t len)
{
	void *h = h2_open(c);

	if (h == NULL) {
		http_conn_close(c);
		return;
	}
	switch_proto(c, &h2_proto, h);
	/* Started with no bytes (TLS's ALPN), it still gets a buffer: a
	 * protocol may do arithmetic on it (NULL + 0 is undefined). */
	c->proto->recv(c, data != NULL ? data : (const uint8_t *)"", len);
}

bool
http_conn_upgrade_h2(struct http_conn *c, const struct http_head *r,
		const struct http_str *settings, const uint8_t *rest,
		uint32_t rest_len)
{
	static const char switching[] = "HTTP/1.1 101 Switching Protocols\r\n"
		"Connection: Upgrade\r\nUpgrade: h2c\r\n\r\n";
	void *h = h2_open_upgrade(c, settings->p, settings->len, r);

	if (h == NULL)
		return false;
	/* The 101 precedes the session's first frames: those wait for the
	 * client's preface. */
	http_conn_write(c, switching, sizeof(switching) - 1);
	switch_proto(c, &h2_proto, h);
	if (rest_len > 0)
		c->proto->recv(c, rest, rest_len);
	return true;
}

/* The embedder's calls ------------------------------------------------------ */

static struct http_conn *
live(struct http_server *s, uint32_t i)
{
	struct http_conn *c = &s->conns[i];

	return c->t != NULL && !c->closing ? c : NULL;
}

void
http_server_drain(struct http_server *s)
{
	uint32_t i;

	s->draining = true;
	for (i = 0; i < s->conf.max_conns; i++) {
		struct http_conn *c = live(s, i);

		if (c == NULL)
			continue;
		c->proto->drain(c);
		output(c);
	}
}

/* The live connection an origin names, or NULL. */
static struct http_conn *
origin_conn(struct http_server *s, struct http_origin o)
{
	struct http_conn *c;

	if (o.index >= s->conf.max_conns)
		return NULL;
	c = live(s, o.index);
	return c == NULL || c->gen != o.gen ? NULL : c;
}

bool
http_server_peer(struct http_server *s, struct http_origin o,
		struct net_addr *addr, uint16_t *port)
{
	struct http_conn *c = origin_conn(s, o);

	if (c == NULL || c->tr->peer == NULL)
		return false;
	c->tr->peer(c->tr_ctx, c->t, addr, port);
	return true;
}

bool
http_server_secure(struct http_server *s, struct http_origin o)
{
	struct http_conn *c = origin_conn(s, o);

	return c != NULL && c->tr->secure;
}

struct http_body_pool *
http_server_bodies(struct http_server *s)
{
	return &s->bodies;
}

uint32_t
http_server_max_body(const struct http_server *s)
{
	return s->conf.max_body;
}

bool
http_server_awaits(struct http_server *s, struct http_origin o)
{
	struct http_conn *c = origin_conn(s, o);

	return c != NULL && !c->closing && c->proto->awaits(c, o);
}

void
http_server_abandon(struct http_server *s, struct http_origin o)
{
	struct http_conn *c = o.stream == 0 ? origin_conn(s, o) : NULL;

	if (c != NULL)
		http_conn_abort(c);
}

bool
http_server_resume(struct http_server *s, struct http_origin o)
{
	struct http_conn *c = origin_conn(s, o);

	if (c == NULL || c->proto->resume == NULL)
		return false;
	c->proto->resume(c, o);
	if (origin_conn(s, o) == c)
		output(c);
	return true;
}

long
http_server_body_read(struct http_server *s, struct http_origin o, void *buf,
		size_t cap)
{
	struct http_conn *c = origin_conn(s, o);
	long n;

	if (c == NULL || c->proto->body_read == NULL)
		return -1;
	n = c->proto->body_read(c, o, buf, cap);
	if (origin_conn(s, o) == c)
		output(c);
	return n;
}

void
http_conn_body_ready(struct http_conn *c, struct http_origin o)
{
	const struct http_server_conf *k = &c->srv->conf;

	if (k->body_ready != NULL)
		k->body_ready(k->dispatch_ctx, o);
}

bool
http_server_answer(struct http_server *s, struct http_origin o,
		struct http_answer *a)
{
	struct http_conn *c = origin_conn(s, o);

	if (c == NULL || !c->proto->answer(c, o, a))
		return false;
	output(c);
	return true;
}
