/* SPDX-License-Identifier: BSD-3-Clause */
/* The runtime of a shard as its embedder sees it (ewyk_serve.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_random.h>

#include "http_tcp.h"
#include "access_log.h"
#include "body.h"
#include "dispatch.h"
#include "fetch.h"
#include "state.h"
#include "ewyk_quic.h"
#include "h3.h"
#include "tls_offload.h"
#include "wait.h"

static int
start_production(struct ewyk_task *task)
{
	struct serve *sv = container_of(task, struct serve, start);

	ewyk_strategy_produce(sv->strategy);
	return 0;
}

static int
steal_production(struct ewyk_task *task)
{
	struct serve *sv = container_of(task, struct serve, steal);
	uint64_t token = sv->steal_token;

	/* A successful steal keeps this lcore producing until the shard
	 * moves on: let the watchdog act again meanwhile. The task holds no
	 * state of its own, so a second run of it may overlap this one. */
	__atomic_store_n(&sv->steal_pending, false, __ATOMIC_RELEASE);
	ewyk_strategy_steal(sv->strategy, token);
	return 0;
}

/* The strategy's producer is the embedder's poll loop. */
static struct ewyk_task *
produce(void *ctx)
{
	const struct serve *sv = ctx;

	return sv->conf.produce(sv->conf.produce_ctx);
}

static int
strategy_create(struct serve *sv)
{
	const struct serve_conf *c = &sv->conf;
	const struct ewyk_strategy_conf sc = {
		.produce = produce,
		.consumed = dispatch_consumed,
		.rejected = dispatch_rejected,
		.ctx = sv,
		.exec = c->exec,
		.mode = c->mode,
		.flags = EWYK_STRATEGY_STEALABLE,
		.watch_ns = c->watch_ns,
		.fiber = waits_fiber_hook,
	};

	sv->strategy = ewyk_strategy_create(&sc);
	return sv->strategy != NULL ? 0 : -1;
}

static int
http_create(struct serve *sv)
{
	const struct serve_conf *c = &sv->conf;
	const struct tcp_config *tcp = net_stack_tcp_config(sv->ns);
	struct http_server_conf hc = {
		.transport = &http_tcp_transport,
		.transport_ctx = sv->ns,
		.router = c->router,
		.sites = c->sites,
		.dispatch = dispatch_hook,
		.released = dispatch_released,
		.refused = dispatch_refused,
		.body_ready = body_watch_ready,
		.dispatch_ctx = sv,
		.stats = c->http_stats,
		.max_conns = c->max_conns,
		.header_timeout_ms = c->header_timeout_ms,
		.keepalive_timeout_ms = c->keepalive_timeout_ms,
		.max_head_bytes = c->max_head_bytes,
		.max_target = c->max_target,
		.idle_release_ms = HTTP_IDLE_RELEASE_MS,
		.max_body = c->max_body,
		.body_buffers = c->body_buffers,
		/* HTTP/2's windows end where TCP's receive buffer does, and
		 * grow within the same budget. */
		.h2_window_max = tcp->rcv_buf_max,
		.h2_window_budget = tcp->rcv_buf_budget,
	};

	if (c->http3) {
		snprintf(sv->alt_svc, sizeof(sv->alt_svc), "h3=\":%u\"",
				c->quic_port);
		hc.alt_svc = sv->alt_svc;
	}
	sv->http = http_server_create(&hc);
	if (sv->http == NULL || body_watch_init(sv, c->max_conns) != 0)
		return -1;
	return http_tcp_attach(sv->http, sv->ns, c->listen_port);
}

static int
upstream_create(struct serve *sv)
{
	const struct upstream_conf *uc = sv->conf.upstream;

	if (uc == NULL || uc->n == 0)
		return 0;
	sv->upstream = upstream_client_create(sv->ns, uc, sv->st.upstream);
	/* A fetch handle per connection: a handler's fetch holds one. */
	sv->fetches = fetch_pool_create(uc->max_conns, &sv->st.fetch);
	return sv->upstream != NULL && sv->fetches != NULL ? 0 : -1;
}

struct serve *
serve_create(const struct serve_conf *conf)
{
	struct serve *sv = aligned_alloc(64, RTE_ALIGN_CEIL(sizeof(*sv), 64));

	if (sv == NULL)
		return NULL;
	memset(sv, 0, sizeof(*sv));
	sv->conf = *conf;
	sv->ns = conf->ns;
	sv->ns_mult = lat_ns_mult(rte_get_tsc_hz());
	sv->handle = dispatch_handle;
	sv->start.run = start_production;
	sv->start.type = EWYK_NON_BLOCKING;
	sv->steal.run = steal_production;
	sv->steal.type = EWYK_NON_BLOCKING;
	if (conf->log != NULL &&
			(sv->log = access_ring_create(conf->log, conf->id)) == NULL) {
		serve_destroy(sv);
		return NULL;
	}
	sv->st.nroutes = conf->route_ids != 0 ? conf->route_ids :
		HTTP_ROUTES_MAX;
	sv->st.routes = aligned_alloc(64, sv->st.nroutes *
			sizeof(*sv->st.routes));
	if (sv->st.routes != NULL)
		memset(sv->st.routes, 0, sv->st.nroutes *
				sizeof(*sv->st.routes));
	sv->limits = limit_table_create(LIMIT_ENTRIES, rte_rand(),
			&sv->st.limits);
	if (sv->st.routes == NULL || sv->limits == NULL || tasks_init(sv, SERVE_TASKS + conf->fibers,
			conf->tls != NULL ? SERVE_TLS_HANDSHAKES : 0,
			dispatch_run) != 0 ||
			waits_init(sv) != 0 || strategy_create(sv) != 0 ||
			http_create(sv) != 0 || tls_offload_create(sv) != 0 ||
			h3_create(sv) != 0 ||
			upstream_create(sv) != 0) {
		serve_destroy(sv);
		return NULL;
	}
	return sv;
}

void
serve_close(struct serve *sv)
{
	if (sv == NULL)
		return;
	/* Reset the peers of open connections rather than leave them
	 * hanging. */
	upstream_client_destroy(sv->upstream);
	sv->upstream = NULL;
}

void
serve_destroy(struct serve *sv)
{
	if (sv == NULL)
		return;
	serve_close(sv);
	fetch_pool_free(sv->fetches);
	h3_destroy(sv);
	tls_offload_destroy(sv);
	/* The server lets its answers go before the watch. */
	http_server_destroy(sv->http);
	body_watch_fini(sv);
	if (sv->strategy != NULL)
		ewyk_strategy_free(sv->strategy);
	waits_fini(sv);
	tasks_fini(sv);
	limit_table_free(sv->limits);
	free(sv->st.routes);
	free(sv);
}

struct ewyk_strategy *
serve_strategy(const struct serve *sv)
{
	return sv->strategy;
}

const struct serve_stats *
serve_stats(const struct serve *sv)
{
	return &sv->st;
}

struct ewyk_fiber_pool *
serve_fibers(const struct serve *sv)
{
	return sv->fibers;
}

unsigned int
serve_poll(struct serve *sv)
{
	unsigned int done = dispatch_drain_completions(sv) +
		state_durable_poll(sv);

	if (sv->upstream != NULL)
		done += fetch_pool_poll(sv->fetches);
	return done;
}

struct ewyk_task *
serve_next_task(struct serve *sv)
{
	struct ewyk_task *t;

	if (sv->ready_n == 0)
		return NULL;
	t = sv->ready[sv->ready_head];
	sv->ready_head = (sv->ready_head + 1) % sv->ready_cap;
	sv->ready_n--;
	return t;
}

bool
serve_idle(const struct serve *sv)
{
	return sv->ready_n == 0;
}

void
serve_drain(struct serve *sv)
{
	http_server_drain(sv->http);
	if (sv->quic != NULL)
		quic_endpoint_drain(sv->quic);
	if (sv->upstream != NULL)
		upstream_client_drain(sv->upstream);
}

int
serve_start(struct serve *sv, struct ewyk_reserved *reserved,
		unsigned int idx)
{
	if (reserved == NULL || !ewyk_reserved_try_execute_on(reserved, idx,
			&sv->start))
		return -1;
	return 0;
}

void
serve_watchdog(struct serve *sv, struct ewyk_reserved *reserved,
		uint64_t now_ms, uint32_t stuck_ms)
{
	uint64_t tok = ewyk_strategy_inline_token(sv->strategy);

	if (tok == 0 || tok != sv->watch_token) {
		sv->watch_token = tok;
		sv->watch_since_ms = now_ms;
		return;
	}
	if (now_ms - sv->watch_since_ms < stuck_ms ||
			__atomic_load_n(&sv->steal_pending, __ATOMIC_ACQUIRE))
		return;
	/* One inline task for too long: an idle lcore takes the shard with
	 * a CAS, the old owner leaves when its task ends. */
	sv->steal_token = tok;
	__atomic_store_n(&sv->steal_pending, true, __ATOMIC_RELEASE);
	if (!ewyk_reserved_try_execute(reserved, &sv->steal))
		__atomic_store_n(&sv->steal_pending, false, __ATOMIC_RELEASE);
	sv->watch_since_ms = now_ms;
}

const struct tls_shard *
serve_tls(const struct serve *sv)
{
	return sv->tls;
}

unsigned int
serve_finish(struct serve *sv)
{
	return dispatch_drain_completions(sv) + waits_cancel_all(sv);
}

void
serve_cut_sleeps(struct serve *sv)
{
	waits_cut_sleeps(sv);
}
