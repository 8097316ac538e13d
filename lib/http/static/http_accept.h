/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Proactive negotiation of a content coding (RFC 9110 12.5.3): which of a
 * file's precompressed siblings, if any, answers a request, by its
 * Accept-Encoding.
 */
#ifndef EWYK_HTTP_ACCEPT_H
#define EWYK_HTTP_ACCEPT_H

#include "http_token.h"
#include "www.h"

/*
 * The coding to answer with, among the available ones (a mask of
 * 1 << WWW_BR, 1 << WWW_GZIP), or WWW_CODINGS for none (identity). By
 * weight (q-values; "*" stands for each coding not named; "x-gzip" is
 * gzip), the highest first, and on a tie the smaller: br, gzip, identity.
 * identity, unless named or covered by "*", weighs just above 0: a client
 * that names codings prefers them, and may still have none ("identity;q=0"
 * then gets identity too, as RFC 9110 12.1 allows, rather than a 406).
 * No field (NULL), or an empty one, gets identity.
 */
enum www_coding http_accept_coding(const struct http_str *accept_encoding,
		unsigned int available);

#endif /* EWYK_HTTP_ACCEPT_H */
