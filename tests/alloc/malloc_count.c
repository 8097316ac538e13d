/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LD_PRELOAD'ed into ewykd by tests/integration/test_alloc.py: counts the
 * calls to libc's allocator per thread, without allocating itself, and
 * reports them by thread name on the telemetry socket:
 *   /ewyk_test/allocs  ->  {"lcore-worker-1": N, ...}
 * so that a test can require that the lcores allocate nothing on the
 * request path in steady state. /ewyk_test/allocs_arm makes each thread
 * keep the call stacks of its next SITES allocations, which
 * /ewyk_test/alloc_sites names (dladdr): what a failing test prints.
 */

#include <dlfcn.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_telemetry.h>

#define SLOTS 512
#define SITES 4		/* allocations kept per thread once armed */
#define DEPTH 8		/* frames of each */

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

struct slot {
	_Atomic int tid;
	_Atomic uint64_t allocs;
	_Atomic unsigned int nsites;	/* kept since armed */
	void *sites[SITES][DEPTH];
	int depth[SITES];
};

static struct slot slots[SLOTS];
static _Atomic unsigned int nslots;
static _Atomic int armed;
static __thread struct slot *mine __attribute__((tls_model("initial-exec")));
static __thread int in_backtrace __attribute__((tls_model("initial-exec")));

/* backtrace() may allocate the first time (the unwinder loads): that
 * one is neither kept nor walked again from inside itself. */
static void
keep_site(struct slot *sl)
{
	unsigned int i;

	if (!atomic_load_explicit(&armed, memory_order_relaxed) || in_backtrace)
		return;
	i = atomic_load_explicit(&sl->nsites, memory_order_relaxed);
	if (i >= SITES)
		return;
	in_backtrace = 1;
	sl->depth[i] = backtrace(sl->sites[i], DEPTH);
	in_backtrace = 0;
	atomic_store_explicit(&sl->nsites, i + 1, memory_order_release);
}

static void
count(void)
{
	if (mine == NULL) {
		unsigned int i = atomic_fetch_add(&nslots, 1);

		if (i >= SLOTS)
			return;		/* too many threads: not counted */
		mine = &slots[i];
		atomic_store(&mine->tid, (int)syscall(SYS_gettid));
	}
	atomic_fetch_add_explicit(&mine->allocs, 1, memory_order_relaxed);
	keep_site(mine);
}

void *
malloc(size_t size)
{
	count();
	return __libc_malloc(size);
}

void *
calloc(size_t n, size_t size)
{
	count();
	return __libc_calloc(n, size);
}

void *
realloc(void *p, size_t size)
{
	count();
	return __libc_realloc(p, size);
}

void *
aligned_alloc(size_t align, size_t size)
{
	count();
	return __libc_memalign(align, size);
}

int
posix_memalign(void **out, size_t align, size_t size)
{
	count();
	*out = __libc_memalign(align, size);
	return *out == NULL ? 12 /* ENOMEM */ : 0;
}

/* "name_tid" of a thread, as the telemetry keys go; false when gone. */
static bool
thread_key(const struct slot *sl, char *key, size_t cap)
{
	char path[64], name[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm",
			atomic_load(&sl->tid));
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	if (fgets(name, sizeof(name), f) != NULL)
		name[strcspn(name, "\n")] = '\0';
	fclose(f);
	for (char *p = name; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				(*p >= '0' && *p <= '9')))
			*p = '_';
	snprintf(key, cap, "%s_%d", name, atomic_load(&sl->tid));
	return true;
}

static int
report(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int i, n = atomic_load(&nslots);
	char key[64];

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (i = 0; i < n && i < SLOTS; i++)
		if (thread_key(&slots[i], key, sizeof(key)))
			rte_tel_data_add_dict_u64(d, key,
					atomic_load(&slots[i].allocs));
	return 0;
}

static int
arm(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int i, n = atomic_load(&nslots);

	(void)cmd;
	(void)params;
	for (i = 0; i < n && i < SLOTS; i++)
		atomic_store(&slots[i].nsites, 0);
	atomic_store(&armed, 1);
	rte_tel_data_string(d, "armed");
	return 0;
}

/* Per thread that allocated since armed: its call stacks, one string
 * each, frames as "symbol+0xoff" (or "object+0xoff"), innermost first. */
static int
sites(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int i, k, n = atomic_load(&nslots);
	char key[64];

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (i = 0; i < n && i < SLOTS; i++) {
		struct slot *sl = &slots[i];
		unsigned int m = atomic_load_explicit(&sl->nsites,
				memory_order_acquire);
		struct rte_tel_data *list;

		if (m == 0 || !thread_key(sl, key, sizeof(key)))
			continue;
		list = rte_tel_data_alloc();
		if (list == NULL)
			break;
		rte_tel_data_start_array(list, RTE_TEL_STRING_VAL);
		for (k = 0; k < m; k++) {
			char stack[RTE_TEL_MAX_STRING_LEN] = "";
			size_t used = 0;
			int f;

			for (f = 1; f < sl->depth[k] && used + 1 < sizeof(stack); f++) {
				Dl_info info;
				const char *what = "?";
				uintptr_t base = 0;

				if (dladdr(sl->sites[k][f], &info) != 0) {
					what = info.dli_sname ? info.dli_sname :
						info.dli_fname ? strrchr(info.dli_fname,
						'/') ? strrchr(info.dli_fname, '/') + 1 :
						info.dli_fname : "?";
					base = (uintptr_t)(info.dli_sname ?
						info.dli_saddr : info.dli_fbase);
				}
				used += (size_t)snprintf(stack + used,
						sizeof(stack) - used, "%s%s+0x%lx",
						f > 1 ? " < " : "", what,
						(unsigned long)((uintptr_t)
						sl->sites[k][f] - base));
			}
			rte_tel_data_add_array_string(list, stack);
		}
		rte_tel_data_add_dict_container(d, key, list, 0);
	}
	return 0;
}

__attribute__((constructor)) static void
register_report(void)
{
	void *warm[2];

	rte_telemetry_register_cmd("/ewyk_test/allocs", report,
			"Calls to libc's allocator, per thread. No parameters");
	rte_telemetry_register_cmd("/ewyk_test/allocs_arm", arm,
			"Keep the call stacks of each thread's next allocations");
	rte_telemetry_register_cmd("/ewyk_test/alloc_sites", sites,
			"The call stacks kept since armed, per thread");
	/* The unwinder loads now, not inside a counted allocation. */
	in_backtrace = 1;
	backtrace(warm, 2);
	in_backtrace = 0;
}
