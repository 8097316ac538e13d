/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "http_priv.h"

const struct http_str *
http_head_find(const struct http_head *r, const char *name)
{
	size_t n = strlen(name);
	uint32_t i;

	for (i = 0; i < r->nheaders; i++)
		if (http_str_eq_nocase_n(r->headers[i].name, name, n))
			return &r->headers[i].value;
	return NULL;
}
