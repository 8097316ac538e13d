/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The scope of the allocation caches (tls_mem.c): lib/tls's record calls
 * into GnuTLS run inside it, so that the record buffers GnuTLS allocates
 * there come from the calling thread's cache. Private to lib/tls.
 */
#ifndef EWYK_TLS_MEM_H
#define EWYK_TLS_MEM_H

extern __thread unsigned int tls_mem_scope
	__attribute__((tls_model("initial-exec")));

static inline void
tls_mem_enter(void)
{
	tls_mem_scope++;
}

static inline void
tls_mem_leave(void)
{
	tls_mem_scope--;
}

#endif /* EWYK_TLS_MEM_H */
