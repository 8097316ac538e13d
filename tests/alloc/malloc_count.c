/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LD_PRELOAD'ed into ewykd by tests/integration/test_alloc.py: counts the
 * calls to libc's allocator per thread, without allocating itself, and
 * reports them by thread name on the telemetry socket:
 *   /ewyk_test/allocs  ->  {"lcore-worker-1": N, ...}
 * so that a test can require that the lcores allocate nothing on the
 * request path in steady state.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_telemetry.h>

#define SLOTS 512

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

struct slot {
	_Atomic int tid;
	_Atomic uint64_t allocs;
};

static struct slot slots[SLOTS];
static _Atomic unsigned int nslots;
static __thread struct slot *mine __attribute__((tls_model("initial-exec")));

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

static int
report(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int i, n = atomic_load(&nslots);

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (i = 0; i < n && i < SLOTS; i++) {
		char path[64], name[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%d/comm",
				atomic_load(&slots[i].tid));
		f = fopen(path, "r");
		if (f == NULL)
			continue;	/* the thread is gone */
		if (fgets(name, sizeof(name), f) != NULL)
			name[strcspn(name, "\n")] = '\0';
		fclose(f);
		for (char *p = name; *p != '\0'; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
					(*p >= '0' && *p <= '9')))
				*p = '_';
		snprintf(path, sizeof(path), "%s_%d", name,
				atomic_load(&slots[i].tid));
		rte_tel_data_add_dict_u64(d, path, atomic_load(&slots[i].allocs));
	}
	return 0;
}

__attribute__((constructor)) static void
register_report(void)
{
	rte_telemetry_register_cmd("/ewyk_test/allocs", report,
			"Calls to libc's allocator, per thread. No parameters");
}
