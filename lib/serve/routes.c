/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "routes.h"

enum ewyk_result
routes_text(struct ewyk_request *req, int status, const char *msg)
{
	if (status == 503)
		ewyk_respond_header(req, "Retry-After", "1");
	ewyk_respond_copy(req, status, "text/plain; charset=utf-8", msg,
			strlen(msg));
	return EWYK_ANSWERED;
}

int64_t
routes_param_value(struct ewyk_str v, int64_t max)
{
	int64_t n = 0;
	size_t i;

	if (v.len == 0)
		return -1;
	for (i = 0; i < v.len; i++) {
		if (v.p[i] < '0' || v.p[i] > '9' || n > (max - (v.p[i] - '0')) / 10)
			return -1;
		n = n * 10 + (v.p[i] - '0');
	}
	return n;
}

long
routes_param_number(const struct ewyk_request *req, const char *name,
		uint32_t max)
{
	struct ewyk_str v;

	if (!ewyk_request_param(req, name, &v))
		return -1;
	return (long)routes_param_value(v, max);
}
