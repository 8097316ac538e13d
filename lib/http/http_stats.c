/* SPDX-License-Identifier: BSD-3-Clause */
#include "http_stats.h"

static const int slot_status[HTTP_ST__COUNT] = {
#define HTTP_STATUS_CODE(n) [HTTP_ST_##n] = n,
	HTTP_STATUSES(HTTP_STATUS_CODE)
#undef HTTP_STATUS_CODE
	[HTTP_ST_OTHER] = 0,
};

enum http_status_slot
http_status_slot(int status)
{
	switch (status) {
#define HTTP_STATUS_CASE(n) case n: return HTTP_ST_##n;
	HTTP_STATUSES(HTTP_STATUS_CASE)
#undef HTTP_STATUS_CASE
	default:
		return HTTP_ST_OTHER;
	}
}

int
http_slot_status(enum http_status_slot s)
{
	return (unsigned int)s < HTTP_ST__COUNT ? slot_status[s] : 0;
}
