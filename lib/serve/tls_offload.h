/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TLS handshake steps as tasks of the shard's strategy: lib/tls's offload
 * hook, the steps' tasks, and their way back to the owner through the
 * completion ring, beside the requests'.
 */
#ifndef EWYK_SERVE_TLS_OFFLOAD_H
#define EWYK_SERVE_TLS_OFFLOAD_H

#include "task.h"

/* handshakes under way per shard, each with its task */
#define SERVE_TLS_HANDSHAKES 128

/* The shard's TLS (when conf.tls says so) on its HTTP server, its tasks,
 * and its listener. 0, or -1. */
int tls_offload_create(struct serve *sv);
void tls_offload_destroy(struct serve *sv);
/* On the owner: a step back from the ring. */
void tls_offload_complete(struct serve *sv, struct ewyk_task *bt);
/* The strategy ran a step inline (PC, PIC, EPC). */
void tls_offload_consumed(struct serve *sv, struct ewyk_task *bt, bool owner);
/* How a step is to run: cheap ones inline; a costly one handed to a
 * helper while room (NULL: always) says its CPUs have some, else EITHER
 * (inline) once per TLS_INLINE_GAP_US and to a helper in between; b
 * keeps the time and counts. */
enum ewyk_invocation tls_offload_type(bool cheap, const atomic_bool *room,
		struct tls_inline_budget *b, uint64_t now_us);
/* The blocking pool refused a step: the owner runs it. */
void tls_offload_rejected(struct serve *sv, struct ewyk_task *bt);

#endif /* EWYK_SERVE_TLS_OFFLOAD_H */
