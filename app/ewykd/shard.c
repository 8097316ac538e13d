/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "ewykd.h"
#include "options.h"
#include "shard.h"

#define RX_BURST 32
#define IDLE_POLLS_BEFORE_SLEEP 256
#define LINK_CHECK_MS 100

/* Microseconds from TSC cycles without a division: (tsc * us_mult) >>
 * 32, with us_mult = 2^32 * 10^6 / the TSC's rate. The stack's clock,
 * whose milliseconds are its thousandths. */
static uint64_t us_mult;

static inline uint64_t
tsc_to_us(uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)tsc * us_mult) >> 32);
}

static uint16_t
tx_burst(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct shard_queue *q = ctx;

	return rte_eth_tx_burst(q->port, q->queue, pkts, n);
}

/* 1 while every port's link is up (/ewyk/ports has each one's). */
static uint8_t
link_status(const struct shard *s)
{
	struct rte_eth_link link;
	uint16_t p;

	for (p = 0; p < s->nb_ports; p++)
		/* a port that cannot tell is taken as up */
		if (rte_eth_link_get_nowait(s->q[p].port, &link) == 0 &&
				link.link_status != RTE_ETH_LINK_UP)
			return 0;
	return 1;
}

int
shard_init(struct shard *s, uint16_t id, const struct ewykd_config *cfg,
		const struct ewykd_port *ports, uint16_t nb_ports,
		struct rte_mempool *pool)
{
	struct tcp_config tcfg;
	uint16_t p;

	if (us_mult == 0)
		us_mult = (uint64_t)(((unsigned __int128)1000000 << 32) /
				rte_get_tsc_hz());
	s->id = id;
	s->queue = id;
	s->nb_ports = nb_ports;
	for (p = 0; p < nb_ports; p++) {
		s->q[p].port = ports[p].id;
		s->q[p].queue = id;
	}
	s->cfg = cfg;
	s->link_up = link_status(s);
	tcp_config_defaults(&tcfg);
	tcfg.max_conns = cfg->max_conns;
	tcfg.snd_buf = cfg->snd_buf;
	tcfg.snd_buf_max = cfg->snd_buf_max;
	tcfg.rto_min_ms = cfg->rto_min_ms;
	tcfg.time_wait_ms = cfg->time_wait_ms;
	tcfg.syn_backlog = cfg->syn_backlog;
	tcfg.max_time_wait = cfg->max_time_wait;
	tcfg.syncookies = cfg->syncookies;
	tcfg.challenge_ack_limit = cfg->challenge_ack_limit;
	tcfg.invalid_ack_interval_ms = cfg->invalid_ack_ms;
	tcfg.arp_reply_limit = cfg->arp_reply_limit;
	tcfg.nd_reply_limit = cfg->nd_reply_limit;
	tcfg.rcv_win_max = cfg->rcv_win;
	tcfg.delack_ms = cfg->delack_ms;
	tcfg.cc = cfg->tcp_cc;
	tcfg.pacing = cfg->tcp_pacing;
	tcfg.keepalive_ms = cfg->keepalive_ms;
	tcfg.idle_timeout_ms = cfg->idle_timeout_ms;
	/* New connections stop before the RX rings could starve: keep what
	 * every ring holds plus an eighth of the pool for open connections. */
	tcfg.mbuf_reserve = (uint32_t)cfg->rx_desc * (cfg->shards ? cfg->shards : 1) *
		nb_ports + cfg->mbufs / 8;
	/* Send queues share what is beyond the reserve: the rings, headers,
	 * ACKs and received segments always find mbufs. */
	tcfg.sndq_mbufs_max = (cfg->mbufs - tcfg.mbuf_reserve) /
		(cfg->shards ? cfg->shards : 1);
	/* Receive buffers: from 64 KB (Linux's tcp_rmem's default, half of
	 * it the window) up to --rcv-buf. The receive queues hold half of
	 * those mbufs at most (out-of-order data is pruned past it), and the
	 * buffers grow, together, by as many full segments: the windows
	 * offered are what the budget holds. */
	tcfg.rcv_buf_max = cfg->rcv_buf;
	tcfg.rcv_buf_init = RTE_MIN(cfg->rcv_buf, 64u * 1024);
	tcfg.rcvq_mbufs_max = tcfg.sndq_mbufs_max / 2;
	tcfg.rcv_buf_budget = (uint64_t)tcfg.rcvq_mbufs_max * (cfg->mtu - 52u);
	s->ns = net_stack_create(&ports[0].ifc, ports[0].arp, pool, &tcfg,
			tx_burst, &s->q[0], &s->net_stats,
			tsc_to_us(rte_get_tsc_cycles()) / 1000);
	if (s->ns == NULL)
		return -1;
	for (p = 1; p < nb_ports; p++)
		if (net_stack_add_port(s->ns, &ports[p].ifc, ports[p].arp,
				tx_burst, &s->q[p]) < 0)
			return -1;
	for (p = 0; p < nb_ports; p++)
		net_stack_set_nd(s->ns, (uint8_t)p, ports[p].nd);
	return 0;
}

/* The link going down changes nothing: connections stay, and TCP
 * retransmits into the outage as into any loss. Coming back, every shard
 * retransmits at once what its backed-off timers would resend only
 * seconds later. Counted by shard 0, for the ports. */
static void
link_watch(struct shard *s, uint64_t now)
{
	uint8_t up;

	if (now < s->link_check_ms)
		return;
	s->link_check_ms = now + LINK_CHECK_MS;
	up = link_status(s);
	if (up == s->link_up)
		return;
	__atomic_store_n(&s->link_up, up, __ATOMIC_RELAXED);
	if (s->id == 0)
		__atomic_fetch_add(up ? &s->link_ups : &s->link_downs, 1,
				__ATOMIC_RELAXED);
	if (up)
		net_link_up(s->ns);
}

/* One turn at TSC time tsc: a burst from each port through the stack,
 * answers that came back, timers, then the TX batches flushed, so that
 * nothing is left behind when production moves to another lcore. Returns
 * the work found. */
static unsigned int
poll_once(struct shard *s, uint64_t tsc)
{
	struct rte_mbuf *pkts[RX_BURST];
	uint64_t now = tsc_to_us(tsc);
	unsigned int done, n = 0;
	uint16_t p;

	s->stats.polls++;
	for (p = 0; p < s->nb_ports; p++) {
		uint16_t got = rte_eth_rx_burst(s->q[p].port, s->queue, pkts,
				RX_BURST);

		net_rx_us(s->ns, (uint8_t)p, pkts, got, now);
		n += got;
	}
	net_timers_us(s->ns, now);
	link_watch(s, net_now_ms(s->ns));
	done = serve_poll(s->serve);
	net_flush(s->ns);
	if (n > 0)
		s->stats.busy_polls++;
	return n + done;
}

/* Back off when idle so a small host stays usable: pause first, then
 * sleeps that grow to idle_sleep_us. */
static void
idle_backoff(struct shard *s, uint32_t *idle_polls)
{
	uint32_t us;

	/* Paced connections want the next poll within microseconds. */
	if (s->cfg->idle == IDLE_POLL || net_pacing_pending(s->ns) ||
			++*idle_polls < IDLE_POLLS_BEFORE_SLEEP) {
		rte_pause();
		return;
	}
	us = (*idle_polls - IDLE_POLLS_BEFORE_SLEEP) / 16 + 1;
	if (us > s->cfg->idle_sleep_us)
		us = s->cfg->idle_sleep_us;
	s->stats.idle_sleeps++;
	usleep(us);
}

/* Graceful stop: refuse new connections, let HTTP finish what it was
 * asked (GOAWAY for HTTP/2), and keep producing until every connection
 * is gone or the main lcore says time is up. Then what still waits is
 * cut: a handler asleep on a thread (a pool thread, or an EPC lcore)
 * returns now, its answer dropped, rather than when its wait would have
 * ended, which --drain-ms would not bound. True when production stops. */
static bool
drain(struct shard *s)
{
	if (!s->draining) {
		s->draining = true;
		net_stack_refuse_new(s->ns, true);
		serve_drain(s->serve);
		net_flush(s->ns);
	}
	if (s->net_stats.tcp_conns_open == s->net_stats.tcp_time_wait &&
			serve_idle(s->serve))
		__atomic_store_n(&s->drained, true, __ATOMIC_RELEASE);
	if (!__atomic_load_n(&stop_now, __ATOMIC_RELAXED))
		return false;
	serve_finish(s->serve);
	return true;
}

/* The strategy's produce(): polls until a task is ready or ewykd stops. */
static struct ewyk_task *
shard_produce(void *ctx)
{
	struct shard *s = ctx;
	unsigned int lcore = rte_lcore_id();
	struct serve_lcore_time *lt = lcore < RTE_MAX_LCORE ?
		&s->lcore_time[lcore] : NULL;
	uint32_t idle_polls = 0;
	struct ewyk_task *t;
	uint64_t t0, t1;

	__atomic_store_n(&s->lcore, lcore, __ATOMIC_RELAXED);
	/* One clock read per turn: its end is the next turn's start. */
	t0 = rte_get_tsc_cycles();
	for (;;) {
		uint64_t consumed = lt != NULL ? lt->consuming : 0, spent;
		unsigned int work;

		t = serve_next_task(s->serve);
		if (t != NULL)
			return t;
		if (__atomic_load_n(&force_quit, __ATOMIC_RELAXED) && drain(s))
			return NULL;
		work = poll_once(s, t0);
		if (work > 0)
			idle_polls = 0;
		else
			idle_backoff(s, &idle_polls);
		t1 = rte_get_tsc_cycles();
		if (lt != NULL) {
			/* Handlers the poll ran inline are the runtime's
			 * consuming time already. */
			consumed = lt->consuming - consumed;
			spent = t1 - t0 > consumed ? t1 - t0 - consumed : 0;
			if (work > 0)
				lt->producing += spent;
			else
				lt->idle += spent;
		}
		t0 = t1;
	}
}

#define HANDOFF_AUTO_US 20

/* --handoff-us, or by default a watched hand-off where it pays: a spare
 * worker lcore exists and no two worker lcores share a CPU. A watcher that
 * shares its CPU with the owner it watches takes turns with it, sees every
 * task run long, and steals from each: there, Jetty's EPC. */
static uint64_t
handoff_ns(const struct ewykd *e)
{
	unsigned int i, j;

	if (e->cfg.handoff_us_set)
		return (uint64_t)e->cfg.handoff_us * 1000;
	if (e->nb_workers <= e->nb_shards)
		return 0;
	for (i = 0; i < e->nb_workers; i++)
		for (j = i + 1; j < e->nb_workers; j++) {
			rte_cpuset_t a = rte_lcore_cpuset(e->workers[i]);
			rte_cpuset_t b = rte_lcore_cpuset(e->workers[j]);
			rte_cpuset_t both;

			CPU_AND(&both, &a, &b);
			if (CPU_COUNT(&both) > 0)
				return 0;
		}
	return (uint64_t)HANDOFF_AUTO_US * 1000;
}

int
shard_serve_init(struct shard *s, struct ewykd *e)
{
	const struct ewykd_config *cfg = &e->cfg;
	const struct upstream_conf uc = {
		.targets = cfg->upstreams,
		.n = cfg->nb_upstreams,
		.max_conns = cfg->upstream_conns,
		.connect_timeout_ms = cfg->upstream_connect_ms,
		.answer_timeout_ms = cfg->upstream_timeout_ms,
		.idle_timeout_ms = cfg->upstream_idle_ms,
	};
	struct serve_conf sc = {
		.id = s->id,
		.ns = s->ns,
		.router = &e->router,
		.sites = e->sites.n > 0 ? &e->sites : NULL,
		.route_ids = e->route_ids,	/* 0 without sites */
		.produce = shard_produce,
		.produce_ctx = s,
		.mode = cfg->strategy,
		.watch_ns = handoff_ns(e),
		.fibers = cfg->fibers,
		.fiber_stack_kb = cfg->fiber_stack_kb,
		.listen_port = cfg->listen_port,
		.http_stats = &s->http_stats,
		.max_conns = cfg->max_conns,
		.header_timeout_ms = cfg->header_timeout_ms,
		.keepalive_timeout_ms = cfg->keepalive_timeout_ms,
		.max_head_bytes = cfg->max_header_bytes,
		.max_target = cfg->max_target,
		.max_body = cfg->max_body,
		.body_buffers = cfg->body_buffers,
		.tls = e->tls,
		.tls_port = cfg->tls_port,
		.tls_stats = &s->tls_stats,
		.tls_inline = cfg->tls_offload == TLS_OFFLOAD_OFF,
		.tls_room = cfg->tls_offload == TLS_OFFLOAD_AUTO ?
			&e->cpu_room.spare : NULL,
		.http3 = cfg->http3,
		.quic_port = cfg->quic_port,
		.quic_retry_threshold = cfg->quic_retry_threshold,
		.quic_conn_mem = cfg->quic_conn_mem,
		.quic_handshake_timeout_ms = cfg->tls_handshake_timeout_ms,
		.quic_stats = &s->quic_stats,
		.quic_tokens = e->quic_tokens,
		.upstream = cfg->nb_upstreams > 0 ? &uc : NULL,
		.trusted = cfg->trusted,
		.ntrusted = cfg->nb_trusted,
		.lcore_time = e->lcore_time,
		.log = e->access_log,
	};

	ewyk_executor_init(&sc.exec, e->bpool, e->reserved);
	s->lcore_time = e->lcore_time;
	s->serve = serve_create(&sc);
	return s->serve != NULL ? 0 : -1;
}

void
shard_fini(struct shard *s)
{
	serve_close(s->serve);	/* upstream connections reset first */
	net_stack_destroy(s->ns);
	s->ns = NULL;
	serve_destroy(s->serve);
	s->serve = NULL;
}
