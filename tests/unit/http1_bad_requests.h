/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The HTTP/1.1 malformed-request matrix, shared by the parser's tests
 * (test_http1_parse.c) and the connection's (test_http1_conn.c): each bad
 * request head with the status the client must get.
 */
#ifndef EWYK_HTTP1_BAD_REQUESTS_H
#define EWYK_HTTP1_BAD_REQUESTS_H

/* The malformed matrix: request, expected status. */
static const struct {
	const char *req;
	int status;
} http1_bad[] = {
	{ "GET / HTTP/1.1\r\n\r\n", 400 },				/* no Host */
	{ "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400 },	/* two Hosts */
	{ "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n folded\r\n\r\n", 400 },/* obs-fold */
	{ "GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400 },			/* space before colon */
	{ "GET / HTTP/1.1\r\nHo(st: h\r\n\r\n", 400 },			/* bad name char */
	{ "GET / HTTP/1.1\r\n: h\r\n\r\n", 400 },			/* empty name */
	{ "GET / HTTP/1.1\r\nHost h\r\n\r\n", 400 },			/* no colon */
	{ "GET / HTTP/1.1\r\nHost: h\x01x\r\n\r\n", 400 },		/* control char */
	{ "GET / HTTP/1.1\r\nHost: h\x7f\r\n\r\n", 400 },		/* DEL */
	{ "GET / HTTP/1.1\nHost: h\r\n\r\n", 400 },			/* bare LF */
	{ "GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n", 400 },		/* bare CR */
	{ "GET /a\rb HTTP/1.1\r\nHost: h\r\n\r\n", 400 },		/* CR in the target */
	{ "G\rET / HTTP/1.1\r\nHost: h\r\n\r\n", 400 },		/* CR in the method */
	{ "GET / HTTP/1.1\r\r\nHost: h\r\n\r\n", 400 },		/* CR after the version */
	{ "GET / HTTP/1.1\r\nHo\rst: h\r\n\r\n", 400 },		/* CR in a name */
	{ "GET / HTTP/1.1\r\nHost: h\r\nX: a\rb", 400 },		/* bare CR, no LF yet */
	{ "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400 },			/* double space */
	{ "GET /\r\nHost: h\r\n\r\n", 400 },				/* HTTP/0.9 */
	{ "GET / HTTP/1.1 \r\nHost: h\r\n\r\n", 400 },			/* trailing space */
	{ "GET / http/1.1\r\nHost: h\r\n\r\n", 400 },			/* lower-case version */
	{ "GET / HTTP/1.10\r\nHost: h\r\n\r\n", 400 },			/* bad version */
	{ "GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505 },			/* other major */
	{ "GET / HTTP/3.1\r\nHost: h\r\n\r\n", 505 },
	{ "GET x HTTP/1.1\r\nHost: h\r\n\r\n", 400 },			/* not origin-form */
	{ "GET http://h/ HTTP/1.1\r\n\r\n", 400 },			/* absolute, no Host */
	{ "GET http:///a HTTP/1.1\r\nHost: h\r\n\r\n", 400 },		/* empty host */
	{ "GET http:// HTTP/1.1\r\nHost: h\r\n\r\n", 400 },
	{ "GET http://u@h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400 },		/* userinfo */
	{ "GET ftp://h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400 },		/* not http(s) */
	{ "GET http:/h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400 },
	{ "GET * HTTP/1.1\r\nHost: h\r\n\r\n", 400 },			/* * is OPTIONS only */
	{ "GET /a\x7f HTTP/1.1\r\nHost: h\r\n\r\n", 400 },		/* DEL in target */
	{ "G@T / HTTP/1.1\r\nHost: h\r\n\r\n", 400 },			/* bad method char */
	{ " GET / HTTP/1.1\r\nHost: h\r\n\r\n", 400 },			/* leading space */
	{ "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1x\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: \r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n", 400 },
	{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400 },
	{ "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400 },
	{ "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 501 },
	{ "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 501 },
	{ "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 501 },
	{ "GET / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\n\r\n", 417 },
};

#endif /* EWYK_HTTP1_BAD_REQUESTS_H */
