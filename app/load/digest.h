/* SPDX-License-Identifier: BSD-3-Clause */
/* The SHA-256 of answer bodies (--expect-sha256), from OpenSSL's
 * libcrypto where the build found it. */
#ifndef EWYK_LOAD_DIGEST_H
#define EWYK_LOAD_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct digest;

bool digest_available(void);
/* NULL without libcrypto, or without memory. */
struct digest *digest_new(void);
void digest_free(struct digest *d);
void digest_begin(struct digest *d);
void digest_update(struct digest *d, const void *p, size_t n);
/* 0 with the 32 bytes in out, -1 on failure. */
int digest_end(struct digest *d, uint8_t out[32]);

#endif /* EWYK_LOAD_DIGEST_H */
