/* SPDX-License-Identifier: BSD-3-Clause */
/* Writes that lend their bytes (tcp_write_ref()): the send queue points
 * into the caller's memory, the wire carries exactly its bytes, and the
 * caller hears done only once every mbuf pointing at them is gone; short
 * writes, a device that cannot read any memory and a pool run dry get
 * copies. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rte_mbuf.h>

#include "tcp_harness.h"

#define IRS 9000000u
#define PORT 42100
#define SIZE 200000u
#define FILE_BYTES (2 * 262144u)	/* past a send buffer's worth */
#define HEAD 300u	/* an answer's head, copied before the file */

static uint8_t file[FILE_BYTES];

/* The caller's side of the lend: holds taken, dones heard. */
struct lender {
	int held;
	int done;
};

static void
hold(void *arg)
{
	((struct lender *)arg)->held++;
}

static void
done(void *arg)
{
	((struct lender *)arg)->done++;
}

static struct th_seg
seg(uint32_t seq, uint32_t ack, uint8_t flags)
{
	struct th_seg s = { .sport = PORT, .seq = seq, .ack = ack,
		.flags = flags, .win = 65535 };	/* << 7 */

	return s;
}

/* An established connection (window scale 7) on a port whose device
 * reads any memory, or not; returns our ISS. */
static struct th *
connected(uint32_t ext_refs, bool any_memory, uint32_t *iss)
{
	struct tcp_config cfg;
	struct th_seg s = seg(IRS, 0, TCP_SYN);
	struct th_out o;
	struct th *h;
	uint32_t i;

	for (i = 0; i < FILE_BYTES; i++)
		file[i] = (uint8_t)(i * 31 + i / 4099);
	tcp_config_defaults(&cfg);
	cfg.ext_refs = ext_refs;
	h = th_new(&cfg);
	h->ifc.tx_any_memory = any_memory;
	th_opt_mss(&s, 1460);
	th_opt_wscale(&s, 7);
	th_inject(h, &s);
	assert_true(th_next(h, &o));
	*iss = o.t.seq;
	th_advance(h, 10);
	th_inject(h, &(struct th_seg){ .sport = PORT, .seq = IRS + 1,
			.ack = o.t.seq + 1, .flags = TCP_ACK, .win = 65535 });
	assert_int_equal(h->app.accepted, 1);
	h->app.conn->cwnd = 4u << 20;	/* the window is not the question */
	return h;
}

/* Sends what is queued; checks every byte against what was written:
 * the head's bytes, then the file's. Returns the bytes seen. */
static uint32_t
wire(struct th *h, uint32_t iss, uint32_t head)
{
	uint32_t seen = 0;
	struct th_out o;

	tcp_output(h->ns, h->app.conn);
	net_flush(h->ns);
	while (th_next(h, &o)) {
		uint32_t off = o.t.seq - iss - 1, i;

		for (i = 0; i < o.t.len; i++, off++)
			assert_int_equal(o.payload[i], off < head ? 'h' :
					file[off - head]);
		seen += o.t.len;
	}
	return seen;
}

/* The file after a head: whole mbufs point into it, the tail's room and
 * the last bytes under one mbuf are copied; done comes once the peer has
 * acknowledged everything, and not before. */
static void
test_file_bytes_go_out_without_a_copy(void **state)
{
	struct lender l = { 0, 0 };
	struct tcp_ref ref = { hold, done, &l };
	uint16_t room;
	uint32_t iss, n, lent, i, ext = 0;
	struct th *h = connected(64, true, &iss);
	struct tcp_conn *c = h->app.conn;
	char head[HEAD];

	(void)state;
	room = rte_pktmbuf_data_room_size(th_pool());
	memset(head, 'h', sizeof(head));
	assert_int_equal(tcp_write(h->ns, c, head, HEAD), HEAD);
	n = tcp_write_ref(h->ns, c, file, SIZE, &ref);
	assert_int_equal(n, SIZE);
	lent = (SIZE - (room - HEAD)) / room;
	assert_int_equal(h->stats.tcp.zero_copy_mbufs, lent);
	assert_int_equal(l.held, 1);
	assert_int_equal(h->stats.tcp_ext_refs_used, 1);
	for (i = 0; i < c->sndq.count; i++) {
		const struct rte_mbuf *m = c->sndq.ch->head->m[c->sndq.first + i];

		if (RTE_MBUF_HAS_EXTBUF(m)) {
			assert_ptr_equal(m->buf_addr, file + (room - HEAD) +
					ext * room);
			ext++;
		}
	}
	assert_int_equal(ext, lent);
	assert_int_equal(wire(h, iss, HEAD), HEAD + SIZE);
	assert_int_equal(l.done, 0);	/* sent, not acknowledged */
	th_inject(h, &(struct th_seg){ .sport = PORT, .seq = IRS + 1,
			.ack = iss + 1 + HEAD + SIZE / 2, .flags = TCP_ACK,
			.win = 65535 });
	assert_int_equal(l.done, 0);	/* half of it still queued */
	th_inject(h, &(struct th_seg){ .sport = PORT, .seq = IRS + 1,
			.ack = iss + 1 + HEAD + SIZE, .flags = TCP_ACK,
			.win = 65535 });
	assert_int_equal(l.done, 1);
	assert_int_equal(h->stats.tcp_ext_refs_used, 0);
	th_free(h);
}

/* A short write, one that finds less than 16 KiB of room, a device that
 * DMAs, and a shard out of blocks: copies, each byte right. */
static void
test_copies_where_a_lend_does_not_pay_or_cannot_be(void **state)
{
	struct lender l = { 0, 0 };
	struct tcp_ref ref = { hold, done, &l };
	uint32_t iss, room_left;
	struct th *h;

	(void)state;
	h = connected(64, true, &iss);
	assert_int_equal(tcp_write_ref(h->ns, h->app.conn, file, 1000, &ref),
			1000);
	/* Room for less than 16 KiB: nothing now, the rest later. */
	room_left = tcp_send_space(h->ns, h->app.conn) - 10000;
	assert_true(1000 + room_left + 20000 <= FILE_BYTES);
	assert_int_equal(tcp_write_ref(h->ns, h->app.conn, file + 1000,
			room_left, &ref), room_left);
	assert_int_equal(tcp_write_ref(h->ns, h->app.conn, file + 1000 +
			room_left, 20000, &ref), 0);
	assert_int_equal(wire(h, iss, 0), 1000 + room_left);
	th_free(h);
	assert_int_equal(l.held, 1);	/* the second write lent */
	assert_int_equal(l.done, 1);	/* given back at the teardown */

	h = connected(64, false, &iss);
	assert_int_equal(tcp_write_ref(h->ns, h->app.conn, file, SIZE, &ref),
			SIZE);
	assert_int_equal(h->stats.tcp.zero_copy_mbufs, 0);
	assert_int_equal(wire(h, iss, 0), SIZE);
	th_free(h);

	h = connected(1, true, &iss);
	assert_int_equal(tcp_write_ref(h->ns, h->app.conn, file, SIZE / 2,
			&ref), SIZE / 2);
	assert_int_equal(tcp_write_ref(h->ns, h->app.conn, file + SIZE / 2,
			SIZE / 2, &ref), SIZE / 2);
	assert_int_equal(h->stats.tcp.zero_copy_refs_full, 1);
	assert_int_equal(h->stats.tcp_ext_refs_used, 1);
	assert_int_equal(wire(h, iss, 0), SIZE);
	th_free(h);
	assert_int_equal(l.held, 2);
	assert_int_equal(l.done, 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_bytes_go_out_without_a_copy),
		cmocka_unit_test(test_copies_where_a_lend_does_not_pay_or_cannot_be),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
