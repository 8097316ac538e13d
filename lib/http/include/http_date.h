/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP-date (RFC 9110 5.6.7): the three forms a recipient must accept,
 * read into seconds since the epoch, and the one form a sender writes.
 * Locale-free: day and month names are the protocol's, never the C
 * library's.
 */
#ifndef EWYK_HTTP_DATE_H
#define EWYK_HTTP_DATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT": 29 characters. */
#define HTTP_DATE_LEN 29

/*
 * Reads an IMF-fixdate, an RFC 850 date ("Sunday, 06-Nov-94 08:49:37
 * GMT"; a two-digit year more than 50 years ahead of now is the century
 * before) or an asctime date ("Sun Nov  6 08:49:37 1994") into *t,
 * seconds since 1970 (negative before it). False for anything else, a
 * list of dates or an impossible day included. now: the present, in
 * seconds, for RFC 850's years.
 */
bool http_date_parse(const char *p, size_t len, int64_t now, int64_t *t);

/* Writes t (seconds since 1970, not before it) as an IMF-fixdate into
 * out, NUL-terminated: HTTP_DATE_LEN + 1 bytes. */
void http_date_format(int64_t t, char *out);

#endif /* EWYK_HTTP_DATE_H */
