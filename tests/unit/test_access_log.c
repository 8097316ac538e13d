/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/serve's access log alone (white-box: its private header): records
 * taken and completed as a shard does, the writer thread's lines read
 * back from the file in both formats, field by field; a full ring's
 * exchanges counted as drops; the file opened again when asked (after
 * logrotate moved it). Its rings are DPDK's: the test starts an EAL of
 * its own, without hugepages or devices.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <arpa/inet.h>

#include <rte_eal.h>

#include "access_log.h"
#include "ewyk_serve.h"

#define RECORDS 16384	/* a shard's ring (access_log.c's RECORDS_PER_SHARD) */

static char dir[64];

static void
eal_end(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", rte_eal_get_runtime_dir(),
			dir);
	rte_eal_cleanup();
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", cmd + 7);
}

static int
eal_start(void **state)
{
	char prefix[32];
	char *argv[] = { "test-access-log", "--no-huge", "-m", "64", "--no-pci",
		"--no-shconf", "--no-telemetry", "--log-level=*:error",
		"--file-prefix", prefix, NULL };

	(void)state;
	snprintf(prefix, sizeof(prefix), "accesslog%d", getpid());
	snprintf(dir, sizeof(dir), "/tmp/ewyk_access_log_XXXXXX");
	if (rte_eal_init(10, argv) < 0 || mkdtemp(dir) == NULL)
		return -1;
	atexit(eal_end);
	return 0;
}

static struct http_str
str(const char *s)
{
	return (struct http_str){ s, (uint32_t)strlen(s) };
}

/* A request head as the parser leaves it, with User-Agent and Referer
 * when not NULL. */
static const struct http_head *
head(struct http_head *h, const char *method, const char *target,
		const char *ua, const char *referer)
{
	memset(h, 0, sizeof(*h));
	h->method_str = str(method);
	h->target = str(target);
	h->headers[h->nheaders++] = (struct http_header){ str("Host"),
		str("ewyk.test") };
	if (referer != NULL)
		h->headers[h->nheaders++] = (struct http_header){
			str("referer"), str(referer) };
	if (ua != NULL)
		h->headers[h->nheaders++] = (struct http_header){
			str("User-Agent"), str(ua) };
	return h;
}

static struct net_addr
v4(uint32_t host_order)
{
	return (struct net_addr){ .ip = net_ip4(htonl(host_order)),
		.family = NET_AF_INET };
}

static struct net_addr
v6_2001_2__1(void)
{
	static const uint8_t a[16] = { 0x20, 0x01, 0, 2, [15] = 1 };

	return (struct net_addr){ .ip = net_ip6(a), .family = NET_AF_INET6 };
}

static bool
in_time_or_number(char c)
{
	return c != '\0' && (isalnum((unsigned char)c) ||
			strchr("/:.-+ ", c) != NULL);
}

/* Whether s is pat, where each '%' in pat stands for one or more
 * characters of a time or a number. */
static bool
matches(const char *pat, const char *s)
{
	if (*pat == '\0')
		return *s == '\0';
	if (*pat != '%')
		return *pat == *s && matches(pat + 1, s + 1);
	if (!in_time_or_number(*s))
		return false;
	for (s++; ; s++) {
		if (matches(pat + 1, s))
			return true;
		if (!in_time_or_number(*s))
			return false;
	}
}

/* A counter the writer thread moves. */
static uint64_t
stat_of(const uint64_t *field)
{
	return __atomic_load_n(field, __ATOMIC_RELAXED);
}

/* Waits (10 s at most) for the writer to have written n lines. */
static void
wait_lines(struct serve_log *l, uint64_t n)
{
	const struct serve_log_stats *st = serve_log_stats(l);
	int i;

	for (i = 0; i < 10000 && stat_of(&st->lines) < n; i++)
		usleep(1000);
	assert_int_equal(stat_of(&st->lines), n);
}

/* The file's lines, in lines[] (NUL-terminated, cut at the newline). */
static size_t
read_lines(const char *path, char *buf, size_t cap, char **lines, size_t max)
{
	FILE *f = fopen(path, "r");
	size_t len, n = 0;
	char *p;

	assert_non_null(f);
	len = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[len] = '\0';
	for (p = buf; *p != '\0' && n < max; n++) {
		char *nl = strchr(p, '\n');

		assert_non_null(nl);	/* every line whole */
		*nl = '\0';
		lines[n] = p;
		p = nl + 1;
	}
	return n;
}

static void
log_path(char *path, size_t cap, const char *name)
{
	snprintf(path, cap, "%s/%s", dir, name);
}

/* Three exchanges: over HTTP/1.1 from IPv4 with every field (a quote and
 * a newline in them, escaped), over HTTP/2 from IPv6 with none and no
 * known length, a head that could not be parsed; and a target past the
 * record's room, cut. */
static void
log_three(struct serve_log *l, uint16_t shard)
{
	struct access_ring *r = access_ring_create(l, shard);
	struct net_addr a = v4(0xc6120001), b = v6_2001_2__1();
	char long_target[300];
	struct access_rec *rec;
	struct http_head h;

	assert_non_null(r);
	rec = access_rec_take(r, head(&h, "GET", "/a?q=\"x\"", "curl/8 \"x\"\n",
			"http://r/"), 1, &a, 40000);
	assert_non_null(rec);
	rec->bytes = 27;
	rec->bytes_known = true;
	access_rec_done(r, rec, 200);
	rec = access_rec_take(r, head(&h, "HEAD", "/b", NULL, NULL), 2, &b,
			40001);
	access_rec_done(r, rec, 404);
	rec = access_rec_take(r, NULL, 1, &a, 40002);
	access_rec_done(r, rec, 400);
	memset(long_target, 'x', sizeof(long_target) - 1);
	long_target[0] = '/';
	long_target[sizeof(long_target) - 1] = '\0';
	rec = access_rec_take(r, head(&h, "GET", long_target, NULL, NULL), 1,
			&a, 40003);
	access_rec_done(r, rec, 414);
}

/* log_three()'s lines, as the writer wrote them to a file of that name. */
static void
three_lines(const char *name, enum serve_log_format format, uint16_t shard,
		char *buf, size_t cap, char *lines[4])
{
	char path[128], err[256];
	struct serve_log *l;

	log_path(path, sizeof(path), name);
	l = serve_log_open(path, format, err, sizeof(err));
	assert_non_null(l);
	log_three(l, shard);
	wait_lines(l, 4);
	serve_log_close(l);
	assert_int_equal(read_lines(path, buf, cap, lines, 4), 4);
}

static void
line_is(const char *pat, const char *line)
{
	if (!matches(pat, line))
		fail_msg("not the line wanted: %s", line);
}

/* The time of day in s, as fmt says it: the end of the exchange, within a
 * minute of now. */
static void
time_near_now(const char *s, const char *fmt)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	assert_non_null(strptime(s, fmt, &tm));
	assert_true(labs((long)(time(NULL) - timegm(&tm))) < 60);
}

static void
test_combined_lines(void **state)
{
	static char buf[8192];
	char *lines[4], xs[ACCESS_TARGET_MAX], cut[400];

	(void)state;
	three_lines("combined.log", SERVE_LOG_COMBINED, 1, buf, sizeof(buf),
			lines);
	line_is("198.18.0.1 - - [%] \"GET /a?q=\\x22x\\x22 HTTP/1.1\" 200 27 "
			"\"http://r/\" \"curl/8 \\x22x\\x22\\x0a\"", lines[0]);
	line_is("2001:2::1 - - [%] \"HEAD /b HTTP/2.0\" 404 - \"-\" \"-\"",
			lines[1]);
	line_is("198.18.0.1 - - [%] \"- - HTTP/1.1\" 400 - \"-\" \"-\"",
			lines[2]);
	/* "/" and 298 'x': cut to the record's room, "..." at its end */
	memset(xs, 'x', sizeof(xs));
	snprintf(cut, sizeof(cut), "198.18.0.1 - - [%%] \"GET /%.*s... "
			"HTTP/1.1\" 414 - \"-\" \"-\"", ACCESS_TARGET_MAX - 4,
			xs);
	line_is(cut, lines[3]);
	time_near_now(strchr(lines[0], '[') + 1, "%d/%b/%Y:%H:%M:%S +0000]");
}

static void
test_json_lines(void **state)
{
	static char buf[8192];
	char *lines[4];

	(void)state;
	three_lines("json.log", SERVE_LOG_JSON, 2, buf, sizeof(buf), lines);
	line_is("{\"time\":\"%Z\",\"remote_addr\":\"198.18.0.1\","
			"\"remote_port\":40000,\"method\":\"GET\",\"target\":"
			"\"/a?q=\\u0022x\\u0022\",\"protocol\":\"HTTP/1.1\","
			"\"status\":200,\"bytes\":27,\"duration_us\":%,\"shard\":2,"
			"\"referer\":\"http://r/\",\"user_agent\":\"curl/8 "
			"\\u0022x\\u0022\\u000a\"}", lines[0]);
	line_is("{\"time\":\"%Z\",\"remote_addr\":\"2001:2::1\","
			"\"remote_port\":40001,\"method\":\"HEAD\",\"target\":"
			"\"/b\",\"protocol\":\"HTTP/2.0\",\"status\":404,"
			"\"duration_us\":%,\"shard\":2,\"referer\":\"\","
			"\"user_agent\":\"\"}", lines[1]);
	line_is("{\"time\":\"%Z\",\"remote_addr\":\"198.18.0.1\","
			"\"remote_port\":40002,\"method\":\"-\",\"target\":\"-\","
			"\"protocol\":\"HTTP/1.1\",\"status\":400,\"duration_us\":%,"
			"\"shard\":2,\"referer\":\"\",\"user_agent\":\"\"}",
			lines[2]);
	time_near_now(lines[0] + strlen("{\"time\":\""), "%Y-%m-%dT%H:%M:%S.");
}

/* A shard's ring full (the writer behind): the exchange goes unlogged,
 * counted once each; what was taken is all written. */
static void
test_full_ring_drops_are_counted(void **state)
{
	static struct access_rec *recs[RECORDS];
	const struct serve_log_stats *st;
	struct net_addr a = v4(0xc6120001);
	struct access_ring *r;
	struct serve_log *l;
	struct http_head h;
	char path[128], err[256];
	unsigned int i;

	(void)state;
	log_path(path, sizeof(path), "drops.log");
	l = serve_log_open(path, SERVE_LOG_COMBINED, err, sizeof(err));
	assert_non_null(l);
	st = serve_log_stats(l);
	r = access_ring_create(l, 3);
	assert_non_null(r);
	head(&h, "GET", "/", NULL, NULL);
	for (i = 0; i < RECORDS; i++) {
		recs[i] = access_rec_take(r, &h, 1, &a, 1);
		assert_non_null(recs[i]);
	}
	assert_int_equal(stat_of(&st->drops), 0);
	assert_null(access_rec_take(r, &h, 1, &a, 1));
	assert_null(access_rec_take(r, &h, 1, &a, 1));
	assert_int_equal(stat_of(&st->drops), 2);
	for (i = 0; i < RECORDS; i++)
		access_rec_done(r, recs[i], 200);
	wait_lines(l, RECORDS);
	/* Written, the records are free again. */
	recs[0] = access_rec_take(r, &h, 1, &a, 1);
	assert_non_null(recs[0]);
	access_rec_done(r, recs[0], 200);
	wait_lines(l, RECORDS + 1);
	assert_int_equal(stat_of(&st->drops), 2);
	assert_int_equal(stat_of(&st->write_errors), 0);
	serve_log_close(l);
}

/* Asked to reopen (SIGUSR1 after logrotate moved the file): the lines
 * after go to a new file of the same name, those before stayed in the
 * moved one. */
static void
test_reopen_after_the_file_moved(void **state)
{
	static char buf[4096];
	const struct serve_log_stats *st;
	struct net_addr a = v4(0xc6120001);
	char path[128], moved[140], err[256], *lines[4];
	struct access_ring *r;
	struct serve_log *l;
	struct http_head h;
	int i;

	(void)state;
	log_path(path, sizeof(path), "rotated.log");
	snprintf(moved, sizeof(moved), "%s.1", path);
	l = serve_log_open(path, SERVE_LOG_COMBINED, err, sizeof(err));
	assert_non_null(l);
	st = serve_log_stats(l);
	r = access_ring_create(l, 4);
	assert_non_null(r);
	access_rec_done(r, access_rec_take(r, head(&h, "GET", "/before", NULL,
			NULL), 1, &a, 1), 200);
	wait_lines(l, 1);
	assert_int_equal(rename(path, moved), 0);
	serve_log_reopen(l);
	for (i = 0; i < 3000 && stat_of(&st->reopens) == 0; i++)
		usleep(1000);
	assert_int_equal(stat_of(&st->reopens), 1);
	access_rec_done(r, access_rec_take(r, head(&h, "GET", "/after", NULL,
			NULL), 1, &a, 1), 200);
	wait_lines(l, 2);
	serve_log_close(l);
	assert_int_equal(read_lines(moved, buf, sizeof(buf), lines, 4), 1);
	assert_non_null(strstr(lines[0], "\"GET /before HTTP/1.1\" 200"));
	assert_int_equal(read_lines(path, buf, sizeof(buf), lines, 4), 1);
	assert_non_null(strstr(lines[0], "\"GET /after HTTP/1.1\" 200"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_combined_lines),
		cmocka_unit_test(test_json_lines),
		cmocka_unit_test(test_full_ring_drops_are_counted),
		cmocka_unit_test(test_reopen_after_the_file_moved),
	};

	return cmocka_run_group_tests(tests, eal_start, NULL);
}
