/* SPDX-License-Identifier: BSD-3-Clause */
#include "http_priv.h"

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

const char *
h2_error_name(unsigned int code)
{
	static const char *const names[H2_ERROR_CODES] = {
		"no_error", "protocol_error", "internal_error",
		"flow_control_error", "settings_timeout", "stream_closed",
		"frame_size_error", "refused_stream", "cancel",
		"compression_error", "connect_error", "enhance_your_calm",
		"inadequate_security", "http_1_1_required",
	};

	return code < H2_ERROR_CODES ? names[code] : "unknown";
}

const char *
http_reason(int status)
{
	switch (status) {
	case 101: return "Switching Protocols";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 303: return "See Other";
	case 304: return "Not Modified";
	case 307: return "Temporary Redirect";
	case 308: return "Permanent Redirect";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 411: return "Length Required";
	case 412: return "Precondition Failed";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 416: return "Range Not Satisfiable";
	case 417: return "Expectation Failed";
	case 421: return "Misdirected Request";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	case 507: return "Insufficient Storage";
	default: return "Unknown";
	}
}

