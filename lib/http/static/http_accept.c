/* SPDX-License-Identifier: BSD-3-Clause */
#include "http_accept.h"

#define Q_ONE 1000
#define UNSET -1

/* Weights by coding, the siblings' first: a coding is its sibling. */
enum { C_BR = WWW_BR, C_GZIP = WWW_GZIP, C_IDENTITY = WWW_CODINGS, C_STAR,
	C_OTHER };

static bool
ows(char c)
{
	return c == ' ' || c == '\t';
}

/* A qvalue (RFC 9110 12.4.2), "0.5" or "1.000", in thousandths; -1 when
 * malformed. */
static int
qvalue(const char *p, uint32_t n)
{
	int q, scale = 100;
	uint32_t i;

	if (n == 0 || (p[0] != '0' && p[0] != '1') ||
			(n > 1 && (p[1] != '.' || n > 5)))
		return -1;
	q = p[0] == '1' ? Q_ONE : 0;
	for (i = 2; i < n; i++, scale /= 10) {
		if (p[i] < '0' || p[i] > '9' || (q == Q_ONE && p[i] != '0'))
			return -1;
		q += (p[i] - '0') * scale;
	}
	return q;
}

static int
coding_of(struct http_str s)
{
	if (http_str_eq_nocase_n(s, "br", 2))
		return C_BR;
	if (http_str_eq_nocase_n(s, "gzip", 4) ||
			http_str_eq_nocase_n(s, "x-gzip", 6))
		return C_GZIP;
	if (http_str_eq_nocase_n(s, "identity", 8))
		return C_IDENTITY;
	if (s.len == 1 && s.p[0] == '*')
		return C_STAR;
	return C_OTHER;
}

/* One member, "coding;q=0.5;...", at [p, e): its weight in w[] (the
 * highest when named twice); a malformed weight drops the member. */
static void
member(const char *p, const char *e, int w[])
{
	const char *semi = p;
	int c, q = Q_ONE;

	while (semi < e && *semi != ';' && !ows(*semi))
		semi++;
	c = coding_of((struct http_str){ p, (uint32_t)(semi - p) });
	while (semi < e) {		/* parameters: only q counts */
		const char *a, *b;

		while (semi < e && (ows(*semi) || *semi == ';'))
			semi++;
		a = semi;
		while (semi < e && *semi != ';')
			semi++;
		b = semi;
		while (b > a && ows(b[-1]))
			b--;
		if (b - a >= 2 && (a[0] == 'q' || a[0] == 'Q') && a[1] == '=') {
			q = qvalue(a + 2, (uint32_t)(b - a - 2));
			if (q < 0)
				return;
		}
	}
	if (c != C_OTHER && q > w[c])
		w[c] = q;
}

enum www_coding
http_accept_coding(const struct http_str *ae, unsigned int available)
{
	int w[C_OTHER] = { UNSET, UNSET, UNSET, UNSET };
	int best = C_IDENTITY, c;
	const char *p, *end;

	if (ae == NULL || available == 0)
		return WWW_CODINGS;
	for (p = ae->p, end = p + ae->len; p < end;) {
		const char *e;

		while (p < end && (ows(*p) || *p == ','))
			p++;
		for (e = p; e < end && *e != ','; e++)
			;
		if (e > p)
			member(p, e, w);
		p = e;
	}
	for (c = C_BR; c <= C_GZIP; c++)
		if (w[c] == UNSET)
			w[c] = w[C_STAR] != UNSET ? w[C_STAR] : 0;
	if (w[C_IDENTITY] == UNSET)
		w[C_IDENTITY] = w[C_STAR] != UNSET ? w[C_STAR] : 1;
	/* the highest weight; on a tie the first: br, gzip, identity */
	for (c = C_GZIP; c >= C_BR; c--)
		if ((available & (1u << c)) && w[c] > 0 && w[c] >= w[best])
			best = c;
	return (enum www_coding)best;
}
