/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "dispatch.h"
#include "http1_parse.h"
#include "options.h"
#include "shard.h"

static struct ewyk_reserved *reserved;
static struct store *store;
static struct ewyk_bpool *bpool;
static unsigned int *lcore_of;		/* reserved worker index -> lcore */
static uint32_t stuck_ms;

struct ewyk_reserved *
exec_reserved(void)
{
	return reserved;
}

struct store *
exec_store(void)
{
	return store;
}

struct ewyk_bpool *
exec_bpool(void)
{
	return bpool;
}

/* Reserved workers are EAL lcores, launched like any lcore function. */
static int
lcore_start(void *ctx, unsigned int idx, int (*fn)(void *), void *arg)
{
	RTE_SET_USED(ctx);
	return rte_eal_remote_launch(fn, arg, lcore_of[idx]);
}

static int
lcore_join(void *ctx, unsigned int idx)
{
	RTE_SET_USED(ctx);
	return rte_eal_wait_lcore(lcore_of[idx]);
}

static const struct ewyk_reserved_ops lcore_ops = {
	.start = lcore_start,
	.join = lcore_join,
};

int
exec_init(const struct ewykd_config *cfg, unsigned int *workers,
		unsigned int nb_workers)
{
	struct ewyk_reserved_conf rc = {
		.size = nb_workers,
		.spin_ns = (uint64_t)cfg->reserved_spin_us * 1000,
		.ops = &lcore_ops,
	};
	struct ewyk_bpool_conf bc = {
		.max_threads = cfg->blocking_threads,
		.min_threads = 1,
		.queue_size = cfg->blocking_queue,
		.idle_timeout_ns = 5ull * 1000 * 1000 * 1000,
	};

	struct store_conf stc = {
		.dir = cfg->state_dir[0] ? cfg->state_dir : NULL,
		.capacity = cfg->store_keys,
		.journal_max = (uint64_t)cfg->journal_max_mb << 20,
		.no_conflate = cfg->store_no_conflate,
	};
	char err[512] = "";

	lcore_of = workers;
	stuck_ms = cfg->stuck_ms;
	store = store_open(&stc, err, sizeof(err));
	if (store == NULL) {
		fprintf(stderr, "ewykd: --state-dir: %s\n", err);
		return -2;
	}
	bpool = ewyk_bpool_create(&bc);
	if (bpool == NULL)
		return -1;
	if (nb_workers > 0) {
		reserved = ewyk_reserved_create(&rc);
		if (reserved == NULL)
			return -1;
	}
	return 0;
}

static struct route_task *
task_alloc(struct shard_exec *x)
{
	struct route_task *t = x->free_tasks;

	if (t != NULL)
		x->free_tasks = t->free_next;
	return t;
}

static void
task_free(struct shard_exec *x, struct route_task *t)
{
	t->free_next = x->free_tasks;
	x->free_tasks = t;
}

/* On the owner: write the answer (if the connection still waits). */
static void
complete(struct shard *s, struct route_task *t)
{
	bool octets = t->route == ROUTE_STATE_GET && t->status == 200;

	if (!http1_server_answer(&s->http, t->ref, t->status, octets ?
			"application/octet-stream" : "text/plain; charset=utf-8",
			t->body, t->body_len, t->extra[0] ? t->extra : NULL))
		s->exec.stale++;
	task_free(&s->exec, t);
}

/* Anywhere else: hand the answer to the owner. */
static void
post(struct route_task *t)
{
	/* The ring holds every task of the shard: it cannot be full. */
	while (rte_ring_mp_enqueue(t->shard->exec.done, t) != 0)
		ewyk_cpu_pause();
}

unsigned int
shard_drain_completions(struct shard *s)
{
	void *done[32];
	unsigned int n, i, total = 0;

	do {
		n = rte_ring_sc_dequeue_burst(s->exec.done, done, 32, NULL);
		for (i = 0; i < n; i++)
			complete(s, done[i]);
		s->exec.completions += n;
		total += n;
	} while (n == 32);
	return total;
}

static void
spin_us(uint32_t us)
{
	uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000000 * us;

	while (rte_get_tsc_cycles() < end)
		ewyk_cpu_pause();
}

/* /v1/state/KEY: the value as the body, its version as the ETag. */
static void
state_run(struct route_task *t)
{
	uint64_t v;
	long n;
	int rc;

	t->extra[0] = '\0';
	if (t->route == ROUTE_STATE_GET) {
		n = store_get(store, t->key, t->klen, t->body, sizeof(t->body), &v);
		if (n < 0) {
			t->status = 404;
			t->body_len = (uint16_t)snprintf(t->body, sizeof(t->body),
					"no such key\n");
			return;
		}
		t->status = 200;
		t->body_len = (uint16_t)n;
		snprintf(t->extra, sizeof(t->extra), "ETag: \"%llu\"\r\n",
				(unsigned long long)v);
		return;
	}
	v = store_put(store, t->key, t->klen, t->body, t->body_len);
	if (v == 0) {
		t->status = 507;
		t->body_len = (uint16_t)snprintf(t->body, sizeof(t->body),
				"the store is full\n");
		return;
	}
	if (t->route == ROUTE_STATE_DURABLE) {
		/* Group commit: whichever batch carries a version at least
		 * this new answers every waiter of the key. */
		rc = store_wait_durable(store, t->key, t->klen, v, 5000);
		if (rc != 0) {
			t->status = 503;
			snprintf(t->extra, sizeof(t->extra), "Retry-After: 1\r\n");
			t->body_len = (uint16_t)snprintf(t->body, sizeof(t->body),
					rc == -ENOTSUP ? "no --state-dir: nothing "
					"is durable\n" : "not yet on disk\n");
			return;
		}
	}
	t->status = 200;
	snprintf(t->extra, sizeof(t->extra), "ETag: \"%llu\"\r\n",
			(unsigned long long)v);
	t->body_len = (uint16_t)snprintf(t->body, sizeof(t->body),
			"version %llu%s\n", (unsigned long long)v,
			t->route == ROUTE_STATE_DURABLE ? " on disk" : "");
}

/* The handlers. They see only the task: no connection, no shard state. */
static int
route_run(struct ewyk_task *bt)
{
	struct route_task *t = (struct route_task *)bt;
	unsigned int lcore = rte_lcore_id();
	uint64_t t0 = rte_get_tsc_cycles();
	const char *what = "";

	switch (t->route) {
	case ROUTE_DELAY:
		usleep(t->arg * 1000);
		what = "delayed";
		break;
	case ROUTE_SPIN:
		spin_us(t->arg);
		what = "spun";
		break;
	case ROUTE_STATE_GET:
	case ROUTE_STATE_PUT:
	case ROUTE_STATE_DURABLE:
		state_run(t);
		goto done;
	case ROUTE_EITHER:
		/* May block, unless the thread runs under the non-blocking
		 * flag (PIC): then it answers at once. */
		if (ewyk_nonblocking()) {
			what = "not delayed (non-blocking)";
		} else {
			usleep(t->arg * 1000);
			what = "delayed";
		}
		break;
	}
	t->status = 200;
	t->extra[0] = '\0';
	t->body_len = (uint16_t)snprintf(t->body, sizeof(t->body), "%s %u %s (%s)\n",
			what, t->arg, t->route == ROUTE_SPIN ? "us" : "ms",
			ewyk_consume_name(t->base.mode));
done:
	if (lcore < RTE_MAX_LCORE) {
		lcore_time[lcore].consuming += rte_get_tsc_cycles() - t0;
		lcore_time[lcore].tasks++;
	}
	if (t->base.mode == EWYK_PEC)
		post(t);	/* a pool thread never writes to the shard */
	return 0;
}

static void
on_consumed(void *ctx, struct ewyk_task *task, int rc, bool owner)
{
	struct route_task *t = (struct route_task *)task;

	RTE_SET_USED(ctx);
	RTE_SET_USED(rc);
	if (owner)
		complete(t->shard, t);
	else
		post(t);	/* the shard moved on meanwhile */
}

static void
on_rejected(void *ctx, struct ewyk_task *task, int err)
{
	struct route_task *t = (struct route_task *)task;

	RTE_SET_USED(ctx);
	RTE_SET_USED(err);
	/* The blocking pool is full: the RX lcore never waits for it. */
	t->status = 503;
	t->body_len = (uint16_t)snprintf(t->body, sizeof(t->body),
			"503 blocking pool full\n");
	http1_server_answer(&t->shard->http, t->ref, 503,
			"text/plain; charset=utf-8", t->body, t->body_len,
			"Retry-After: 1\r\n");
	task_free(&t->shard->exec, t);
}

static const struct {
	const char *path;
	const char *param;
	uint8_t type;
	uint32_t max;
} routes[ROUTE__COUNT] = {
	[ROUTE_DELAY] = { "/delay", "ms", EWYK_BLOCKING, 10000 },
	[ROUTE_SPIN] = { "/spin", "us", EWYK_NON_BLOCKING, 1000000 },
	[ROUTE_EITHER] = { "/either", "ms", EWYK_EITHER, 10000 },
	[ROUTE_STATE_GET] = { "/v1/state/", NULL, EWYK_NON_BLOCKING, 0 },
	[ROUTE_STATE_PUT] = { "/v1/state/", NULL, EWYK_NON_BLOCKING, 0 },
	[ROUTE_STATE_DURABLE] = { "/v1/state/", NULL, EWYK_BLOCKING, 0 },
};

#define STATE_PREFIX "/v1/state/"

static long query_number(struct http_str q, const char *name, uint32_t max);

/* GET or PUT /v1/state/KEY: keys are [A-Za-z0-9._-], 1 to 64 bytes. */
static int
state_route(const struct http1_request *r, struct route_task *probe)
{
	size_t pl = strlen(STATE_PREFIX);
	const char *k = r->path.p + pl;
	uint32_t klen = r->path.len - (uint32_t)pl, i;

	probe->body_len = 0;
	if (klen == 0 || klen > STORE_KEY_MAX)
		return 400;
	for (i = 0; i < klen; i++)
		if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= 'A' && k[i] <= 'Z') ||
				(k[i] >= '0' && k[i] <= '9') || k[i] == '.' ||
				k[i] == '_' || k[i] == '-'))
			return 400;
	memcpy(probe->key, k, klen);
	probe->klen = (uint8_t)klen;
	if (r->method == HTTP_GET) {
		probe->route = ROUTE_STATE_GET;
		return 0;
	}
	if (r->method != HTTP_PUT)
		return 405;
	if (r->content_length > STORE_VAL_MAX || r->chunked ||
			(r->content_length > 0 && r->body == NULL))
		return 413;
	probe->route = query_number(r->query, "durable", 1) == 1 ?
		ROUTE_STATE_DURABLE : ROUTE_STATE_PUT;
	probe->body_len = (uint16_t)r->body_len;
	return 0;
}

/* "name=N" in a query string; -1 if absent or not a number <= max. */
static long
query_number(struct http_str q, const char *name, uint32_t max)
{
	size_t nl = strlen(name);
	uint32_t i = 0;

	while (i < q.len) {
		uint32_t e = i;

		while (e < q.len && q.p[e] != '&')
			e++;
		if (e - i > nl && memcmp(q.p + i, name, nl) == 0 &&
				q.p[i + nl] == '=') {
			long v = 0;
			uint32_t k;

			if (e - i == nl + 1)
				return -1;
			for (k = i + (uint32_t)nl + 1; k < e; k++) {
				if (q.p[k] < '0' || q.p[k] > '9')
					return -1;
				v = v * 10 + (q.p[k] - '0');
				if (v > (long)max)
					return -1;
			}
			return v;
		}
		i = e + 1;
	}
	return -1;
}

/* http1_dispatch_fn: on the owner, while it parses. */
static int
shard_dispatch(void *ctx, const struct http1_request *r, struct http1_ref ref)
{
	struct shard *s = ctx;
	struct shard_exec *x = &s->exec;
	struct route_task *t;
	unsigned int i;
	long arg;

	if (r->path.len > strlen(STATE_PREFIX) - 1 &&
			memcmp(r->path.p, STATE_PREFIX, strlen(STATE_PREFIX) - 1) == 0 &&
			(r->path.len == strlen(STATE_PREFIX) - 1 ||
			 r->path.p[strlen(STATE_PREFIX) - 1] == '/')) {
		struct route_task probe;
		int rc = r->path.len < strlen(STATE_PREFIX) ? 400 :
			state_route(r, &probe);

		if (rc != 0)
			return rc;
		t = task_alloc(x);
		if (t == NULL) {
			x->overloaded++;
			return 503;
		}
		i = probe.route;
		memcpy(t->key, probe.key, probe.klen);
		t->klen = probe.klen;
		t->body_len = probe.body_len;
		if (probe.body_len > 0)
			memcpy(t->body, r->body, probe.body_len);
		t->arg = 0;
	} else {
		if (r->method != HTTP_GET)
			return 0;
		for (i = 0; i < ROUTE_STATE_GET; i++)
			if (r->path.len == strlen(routes[i].path) &&
					memcmp(r->path.p, routes[i].path,
					r->path.len) == 0)
				break;
		if (i == ROUTE_STATE_GET)
			return 0;
		arg = query_number(r->query, routes[i].param, routes[i].max);
		if (arg < 0)
			return 400;
		t = task_alloc(x);
		if (t == NULL) {
			x->overloaded++;
			return 503;
		}
		t->arg = (uint32_t)arg;
	}
	t->route = (uint8_t)i;
	t->ref = ref;
	t->base.type = routes[i].type;
	x->routed[i]++;
	x->ready[(x->ready_head + x->ready_n++) % SHARD_TASKS] = t;
	return 1;
}

struct ewyk_task *
shard_next_task(struct shard *s)
{
	struct shard_exec *x = &s->exec;
	struct route_task *t;

	if (x->ready_n == 0)
		return NULL;
	t = x->ready[x->ready_head];
	x->ready_head = (x->ready_head + 1) % SHARD_TASKS;
	x->ready_n--;
	return &t->base;
}

static int
start_production(struct ewyk_task *task)
{
	struct shard_exec *x = container_of(task, struct shard_exec, start);

	ewyk_strategy_produce(x->strategy);
	return 0;
}

static int
steal_production(struct ewyk_task *task)
{
	struct shard_exec *x = container_of(task, struct shard_exec, steal);
	uint64_t token = x->steal_token;

	/* A successful steal keeps this lcore producing until the shard
	 * moves on: let the watchdog act again meanwhile. The task holds no
	 * state of its own, so a second run of it may overlap this one. */
	__atomic_store_n(&x->steal_pending, false, __ATOMIC_RELEASE);
	ewyk_strategy_steal(x->strategy, token);
	return 0;
}

int
shard_exec_init(struct shard *s, const struct ewykd_config *cfg)
{
	struct shard_exec *x = &s->exec;
	struct ewyk_strategy_conf sc = {
		.produce = shard_produce,
		.consumed = on_consumed,
		.rejected = on_rejected,
		.ctx = s,
		.mode = cfg->strategy,
		.flags = EWYK_STRATEGY_STEALABLE,
	};
	char name[RTE_RING_NAMESIZE];
	unsigned int i;

	ewyk_executor_init(&sc.exec, bpool, reserved);
	x->strategy = ewyk_strategy_create(&sc);
	snprintf(name, sizeof(name), "ewyk_done_%u", s->id);
	/* RTS enqueue: producers may be preempted pool threads. */
	x->done = rte_ring_create(name, SHARD_TASKS, rte_socket_id(),
			RING_F_MP_RTS_ENQ | RING_F_SC_DEQ);
	x->tasks = rte_zmalloc("route_tasks", sizeof(*x->tasks) * SHARD_TASKS,
			RTE_CACHE_LINE_SIZE);
	if (x->strategy == NULL || x->done == NULL || x->tasks == NULL)
		return -1;
	for (i = SHARD_TASKS; i-- > 0;) {
		x->tasks[i].base.run = route_run;
		x->tasks[i].shard = s;
		task_free(x, &x->tasks[i]);
	}
	x->start.run = start_production;
	x->start.type = EWYK_NON_BLOCKING;
	x->steal.run = steal_production;
	x->steal.type = EWYK_NON_BLOCKING;
	http1_server_set_dispatch(&s->http, shard_dispatch, s);
	return 0;
}

int
shard_exec_start(struct shard *s, unsigned int worker)
{
	if (reserved == NULL || !ewyk_reserved_try_execute_on(reserved, worker,
			&s->exec.start))
		return -1;
	return 0;
}

void
exec_watchdog(struct shard *shards, uint16_t n, uint64_t now_ms)
{
	static uint64_t last_token[RTE_MAX_LCORE], since[RTE_MAX_LCORE];
	uint16_t i;

	if (stuck_ms == 0 || reserved == NULL)
		return;
	for (i = 0; i < n; i++) {
		struct shard_exec *x = &shards[i].exec;
		uint64_t tok = ewyk_strategy_inline_token(x->strategy);

		if (tok == 0 || tok != last_token[i]) {
			last_token[i] = tok;
			since[i] = now_ms;
			continue;
		}
		if (now_ms - since[i] < stuck_ms ||
				__atomic_load_n(&x->steal_pending, __ATOMIC_ACQUIRE))
			continue;
		/* One inline task for too long: an idle lcore takes the shard
		 * with a CAS, the old owner leaves when its task ends. */
		x->steal_token = tok;
		__atomic_store_n(&x->steal_pending, true, __ATOMIC_RELEASE);
		if (!ewyk_reserved_try_execute(reserved, &x->steal))
			__atomic_store_n(&x->steal_pending, false, __ATOMIC_RELEASE);
		since[i] = now_ms;
	}
}

void
exec_stop(struct shard *shards, uint16_t n)
{
	uint16_t i;

	/* Producers see force_quit and return NULL; helpers on their way
	 * arrive, find nothing to do and go idle. */
	for (i = 0; i < n; i++)
		while (!ewyk_strategy_quiescent(shards[i].exec.strategy))
			usleep(1000);
	if (bpool != NULL)
		ewyk_bpool_stop(bpool);	/* queued tasks run and post */
	if (reserved != NULL)
		ewyk_reserved_stop(reserved);
	for (i = 0; i < n; i++)
		shard_drain_completions(&shards[i]);
	store_close(store);	/* what is pending goes to disk */
	store = NULL;
}
