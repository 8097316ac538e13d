/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tls-bench: TLS libraries over memory, as ewyk would run one over its own
 * TCP. What the driver (tls_bench.c) and each library's backend
 * (tls_bench_<lib>.c) share: the memory pipe a connection's records travel
 * through, the allocation counters, and the backend's table of calls.
 */
#ifndef EWYK_TLS_BENCH_H
#define EWYK_TLS_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- one direction of a connection's byte stream, in memory ---- */

#define TB_PIPE_CAP (1024 * 1024 + 64 * 1024)

struct tb_pipe {
	size_t rd, wr;
	uint8_t *buf;		/* TB_PIPE_CAP bytes */
};

/* Copies up to len bytes in; returns how many fit (0: full). */
size_t tb_pipe_write(struct tb_pipe *p, const void *data, size_t len);
/* Copies up to cap bytes out; returns how many (0: empty). */
size_t tb_pipe_read(struct tb_pipe *p, void *buf, size_t cap);
static inline size_t
tb_pipe_used(const struct tb_pipe *p)
{
	return p->wr - p->rd;
}

/* ---- allocation counting (tls_bench_alloc.c interposes malloc) ---- */

/* Whose call is running on this thread: allocations are booked to it. */
enum tb_side { TB_OTHER, TB_SERVER, TB_CLIENT, TB_SIDES };

struct tb_allocs {
	uint64_t count;		/* malloc, calloc, realloc, memalign calls */
	uint64_t bytes;		/* bytes they handed out (usable size) */
	int64_t live;		/* handed out less freed */
	int64_t peak;		/* highest live since tb_allocs_reset_peak() */
};

void tb_side_set(enum tb_side s);
/* This thread's counters of side s. */
struct tb_allocs tb_allocs_get(enum tb_side s);
void tb_allocs_reset_peak(enum tb_side s);

/* ---- what is measured ---- */

enum tb_key { TB_ECDSA_P256, TB_RSA_2048 };
enum tb_cipher { TB_AES128_GCM, TB_CHACHA20_POLY1305 };

struct tb_conf {
	int version;		/* 12 or 13 */
	enum tb_key key;
	enum tb_cipher cipher;
	bool release_buffers;	/* the library's idle-buffer release, where it
				 * has one */
};

/* PEM text of the run's certificates and keys, made at start-up. */
struct tb_creds {
	char *cert[2], *key[2];	/* indexed by enum tb_key */
};

int tb_creds_make(struct tb_creds *c);
void tb_creds_free(struct tb_creds *c);

/* A library under test. Every call runs on one thread; contexts are per
 * thread (as ewyk's would be per lcore). Results: 1 done, 0 wants I/O
 * (try again once the peer has run), -1 error (printed). */
struct tb_backend {
	const char *name;
	const char *(*version)(void);
	int (*init)(void);	/* once, before any thread */
	void *(*ctx_new)(bool server, const struct tb_conf *conf,
			const struct tb_creds *creds);
	void (*ctx_free)(void *ctx);
	/* A connection reading from in and writing to out; a client resumes
	 * session when it is not NULL. */
	void *(*conn_new)(void *ctx, struct tb_pipe *in, struct tb_pipe *out,
			void *session);
	void (*conn_free)(void *conn);
	int (*handshake)(void *conn);
	/* Bytes written or read (> 0), 0 when it wants I/O, -1 error. */
	long (*write)(void *conn, const void *buf, size_t len);
	long (*read)(void *conn, void *buf, size_t cap);
	/* The client's resumable session (after it read the server's ticket),
	 * or NULL. */
	void *(*session_get)(void *conn);
	void (*session_free)(void *session);
	bool (*resumed)(void *conn);
	/* What the library does about idle buffers (a short phrase). */
	const char *release_note;
};

extern const struct tb_backend tb_openssl;
#ifdef TB_HAVE_GNUTLS
extern const struct tb_backend tb_gnutls;
#endif
#ifdef TB_HAVE_WOLFSSL
extern const struct tb_backend tb_wolfssl;
#endif

#endif /* EWYK_TLS_BENCH_H */
