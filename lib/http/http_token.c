/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "http_priv.h"

/* A table: every field name of every request passes here. */
const bool http_tchar[256] = {
	['0' ... '9'] = true, ['A' ... 'Z'] = true, ['a' ... 'z'] = true,
	['!'] = true, ['#'] = true, ['$'] = true, ['%'] = true, ['&'] = true,
	['\''] = true, ['*'] = true, ['+'] = true, ['-'] = true, ['.'] = true,
	['^'] = true, ['_'] = true, ['`'] = true, ['|'] = true, ['~'] = true,
};

static const struct {
	const char *name;
	enum http_method m;
} methods[] = {
	{ "GET", HTTP_GET }, { "HEAD", HTTP_HEAD }, { "POST", HTTP_POST },
	{ "PUT", HTTP_PUT }, { "DELETE", HTTP_DELETE },
	{ "OPTIONS", HTTP_OPTIONS }, { "PATCH", HTTP_PATCH },
	{ "TRACE", HTTP_TRACE }, { "CONNECT", HTTP_CONNECT },
};

enum http_method
http_method_lookup(struct http_str s)
{
	size_t i;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (s.len == strlen(methods[i].name) &&
				memcmp(s.p, methods[i].name, s.len) == 0)
			return methods[i].m;
	return HTTP_OTHER;
}

const char *
http_method_name(enum http_method m)
{
	size_t i;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (methods[i].m == m)
			return methods[i].name;
	return "OTHER";
}

bool
http_method_idempotent(enum http_method m)
{
	return m == HTTP_GET || m == HTTP_HEAD || m == HTTP_PUT ||
		m == HTTP_DELETE || m == HTTP_OPTIONS;
}

bool
http_parse_length(struct http_str v, int64_t *out)
{
	int64_t n = 0;
	uint32_t i;

	if (v.len == 0 || v.len > 18)
		return false;
	for (i = 0; i < v.len; i++) {
		if (v.p[i] < '0' || v.p[i] > '9')
			return false;
		n = n * 10 + (v.p[i] - '0');
	}
	*out = n;
	return true;
}
