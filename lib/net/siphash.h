/* SPDX-License-Identifier: BSD-3-Clause */
/* SipHash-2-4: a keyed hash that peers cannot steer, for initial sequence
 * numbers, SYN cookies and table indexes. */
#ifndef EWYK_SIPHASH_H
#define EWYK_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t siphash24(const uint64_t key[2], const void *data, size_t len);

#endif /* EWYK_SIPHASH_H */
