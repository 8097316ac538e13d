/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One direction of the medium: frames read in batches into preallocated
 * buffers, judged on arrival (loss, then the bottleneck's queue), held in
 * a FIFO in release order, and sent in batches once due. Nothing is
 * allocated per frame.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "path.h"

static uint64_t start_ns;

static uint64_t
monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
delay_clock_start(void)
{
	start_ns = monotonic_ns() - 1;
}

/* Relative to the start, so that picoseconds fit in 64 bits for years. */
uint64_t
delay_now_ns(void)
{
	return monotonic_ns() - start_ns;
}

#define RX_ROUNDS 8	/* batches read per wake-up before sending again */

/* splitmix64: small, fast, and a stream per seed and direction. */
static uint64_t
splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The first state of direction dir: the seed mixed with the direction,
 * so that the two streams start far apart in splitmix64's sequence. */
static uint64_t
prng_state(uint64_t seed, unsigned int dir)
{
	uint64_t s = seed ^ (dir == 0 ? 0 : 0xd1b54a32d192ed03ull);

	return splitmix64(&s);
}

static void
loss_init(struct delay_path *p, const struct delay_config *cfg,
		unsigned int dir)
{
	p->prng = prng_state(cfg->seed, dir);
	p->loss_all = cfg->loss_pct >= 100;
	/* a draw below loss/100 of 2^64 is a loss */
	p->loss_below = p->loss_all ? 0 :
		(uint64_t)ldexp(cfg->loss_pct / 100, 64);
}

int
delay_path_init(struct delay_path *p, const struct delay_config *cfg,
		unsigned int dir, uint32_t buf_size)
{
	uint32_t i;

	p->buf_size = buf_size;
	p->mask = cfg->frames - 1;
	p->mem_len = (size_t)cfg->frames * buf_size;
	/* reserved, not committed: the LIFO free list touches only as
	 * many buffers as were ever held at once */
	p->mem = mmap(NULL, p->mem_len + (size_t)DELAY_BATCH * buf_size,
			PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p->mem == MAP_FAILED) {
		p->mem = NULL;
		return -1;
	}
	p->ring = calloc(cfg->frames, sizeof(*p->ring));
	p->free_bufs = calloc(cfg->frames, sizeof(*p->free_bufs));
	if (p->ring == NULL || p->free_bufs == NULL)
		return -1;
	/* the lowest buffer on top, taken first */
	for (i = 0; i < cfg->frames; i++)
		p->free_bufs[i] = p->mem + (size_t)(cfg->frames - 1 - i) *
			buf_size;
	p->nb_free = cfg->frames;
	for (i = 0; i < DELAY_BATCH; i++)
		p->scratch[i] = p->mem + p->mem_len + (size_t)i * buf_size;
	loss_init(p, cfg, dir);
	if (cfg->rate_mbit > 0) {
		p->ps_per_byte = (uint64_t)llround(8e6 / cfg->rate_mbit);
		if (p->ps_per_byte == 0)
			p->ps_per_byte = 1;
	}
	p->queue_bytes = cfg->queue_bytes;
	p->delay_ns = (uint64_t)llround(cfg->delay_ms * 1e6);
	return 0;
}

void
delay_path_free(struct delay_path *p)
{
	if (p->mem != NULL)
		munmap(p->mem, p->mem_len + (size_t)DELAY_BATCH * p->buf_size);
	free(p->ring);
	free(p->free_bufs);
	p->mem = NULL;
	p->ring = NULL;
	p->free_bufs = NULL;
}

uint32_t
delay_path_queued(const struct delay_path *p)
{
	return p->tail - p->head;
}

static bool
lost(struct delay_path *p)
{
	if (p->loss_all)
		return true;
	return p->loss_below != 0 && splitmix64(&p->prng) < p->loss_below;
}

/* The bottleneck: a frame of len bytes arriving at at_ns leaves it at
 * max(at_ns, previous departure) + len / rate, unless more than the queue
 * would then be waiting. Sets the frame's release time; false if the
 * queue drops it. Picoseconds, so that fast rates keep their fractions. */
static bool
bottleneck(struct delay_path *p, uint64_t at_ns, uint32_t len,
		uint64_t *release_ns)
{
	uint64_t t_ps, start_ps, ahead;

	if (p->ps_per_byte == 0) {
		*release_ns = at_ns + p->delay_ns;
		return true;
	}
	t_ps = at_ns * 1000;
	start_ps = p->busy_until_ps > t_ps ? p->busy_until_ps : t_ps;
	ahead = (start_ps - t_ps) / p->ps_per_byte;	/* bytes not yet out */
	if (ahead + len > p->queue_bytes)
		return false;
	p->busy_until_ps = start_ps + (uint64_t)len * p->ps_per_byte;
	*release_ns = p->busy_until_ps / 1000 + p->delay_ns;
	return true;
}

/* Points the batch's descriptors at n buffers: free ones from the top of
 * the free list, or the scratch ones when the ring is full. */
static void
rx_prepare(struct delay_path *p, unsigned int n, bool ring_full)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		p->bufs[i] = ring_full ? p->scratch[i] :
			p->free_bufs[p->nb_free - 1 - i];
		p->iov[i].iov_base = p->bufs[i];
		p->iov[i].iov_len = p->buf_size;
		memset(&p->msgs[i], 0, sizeof(p->msgs[i]));
		p->msgs[i].msg_hdr.msg_name = &p->names[i];
		p->msgs[i].msg_hdr.msg_namelen = sizeof(p->names[i]);
		p->msgs[i].msg_hdr.msg_iov = &p->iov[i];
		p->msgs[i].msg_hdr.msg_iovlen = 1;
		p->msgs[i].msg_hdr.msg_control = &p->ctrl[i];
		p->msgs[i].msg_hdr.msg_controllen = sizeof(p->ctrl[i]);
	}
}

/* CLOCK_REALTIME less our clock: what turns a kernel stamp into ours. */
static int64_t
realtime_offset(uint64_t now)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - (int64_t)now;
}

/* When frame i reached the interface: the kernel's stamp, taken as the
 * sender queued it (SO_TIMESTAMPNS), so that neither our wake-up nor a
 * deferred softirq lengthens the delay. now when there is none, or when it
 * is not plausible (a TCP sender's monotonic departure time may cross
 * unconverted). Never earlier than the previous frame's: order stays. */
static uint64_t
arrival_ns(struct delay_path *p, unsigned int i, uint64_t now, int64_t off)
{
	struct msghdr *mh = &p->msgs[i].msg_hdr;
	struct cmsghdr *cm;
	struct timespec ts;
	uint64_t t = now;
	int64_t rel;

	for (cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET ||
				cm->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
		rel = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - off;
		if (rel > 0 && (uint64_t)rel <= now &&
				now - (uint64_t)rel < 1000000000)
			t = (uint64_t)rel;
		break;
	}
	if (t < p->last_arrival_ns)
		t = p->last_arrival_ns;
	p->last_arrival_ns = t;
	return t;
}

/* Judges frame i of the batch just read. Returns true if the path holds
 * it now (its buffer then belongs to the ring). */
static bool
judge(struct delay_path *p, unsigned int i, bool ring_full, uint64_t now_ns,
		int64_t off)
{
	const struct mmsghdr *m = &p->msgs[i];
	struct delay_frame *f;
	uint64_t release;

	/* the kernel's own frames on this interface: never ours to pass on
	 * (a fallback where PACKET_IGNORE_OUTGOING is missing) */
	if (p->names[i].sll_pkttype == PACKET_OUTGOING)
		return false;
	p->c.received++;
	if ((m->msg_hdr.msg_flags & MSG_TRUNC) != 0 || m->msg_len > p->buf_size) {
		p->c.drop_oversize++;
		return false;
	}
	if (ring_full) {
		p->c.drop_ring_full++;
		return false;
	}
	if (lost(p)) {
		p->c.drop_loss++;
		return false;
	}
	if (!bottleneck(p, arrival_ns(p, i, now_ns, off), m->msg_len,
			&release)) {
		p->c.drop_queue++;
		return false;
	}
	f = &p->ring[p->tail++ & p->mask];
	f->buf = p->bufs[i];
	f->len = m->msg_len;
	f->release_ns = release;
	return true;
}

/* Reads what rx_fd has, a few batches at most so that the other work
 * goes on under a flood. Returns 0, or -1 with errno on a failure other
 * than having nothing to read. */
int
delay_path_rx(struct delay_path *p)
{
	unsigned int round, want, i;
	uint64_t now;
	int64_t off;
	bool full;
	int n;

	for (round = 0; round < RX_ROUNDS; round++) {
		full = p->nb_free == 0;
		want = full || p->nb_free >= DELAY_BATCH ? DELAY_BATCH :
			p->nb_free;
		rx_prepare(p, want, full);
		/* MSG_TRUNC: msg_len is the frame's own length, so that a
		 * frame longer than the buffer is seen and dropped whole */
		n = recvmmsg(p->rx_fd, p->msgs, want, MSG_DONTWAIT | MSG_TRUNC,
				NULL);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ||
				errno == EINTR ? 0 : -1;
		now = delay_now_ns();
		off = realtime_offset(now);
		if (!full)
			p->nb_free -= want;
		for (i = 0; i < (unsigned int)n; i++)
			if (!judge(p, i, full, now, off) && !full)
				p->free_bufs[p->nb_free++] = p->bufs[i];
		/* the buffers the batch did not fill go back too */
		for (; i < want && !full; i++)
			p->free_bufs[p->nb_free++] = p->bufs[i];
		if ((unsigned int)n < want)
			break;
	}
	return 0;
}

/* Frames from the head whose time has come, at most a batch. */
static unsigned int
tx_prepare(struct delay_path *p, uint64_t now)
{
	uint32_t q = delay_path_queued(p);
	unsigned int n;

	for (n = 0; n < DELAY_BATCH && n < q; n++) {
		struct delay_frame *f = &p->ring[(p->head + n) & p->mask];

		if (f->release_ns > now)
			break;
		p->iov[n].iov_base = f->buf;
		p->iov[n].iov_len = f->len;
		memset(&p->msgs[n], 0, sizeof(p->msgs[n]));
		p->msgs[n].msg_hdr.msg_iov = &p->iov[n];
		p->msgs[n].msg_hdr.msg_iovlen = 1;
	}
	return n;
}

/* The head leaves the ring: its buffer back on the free list. */
static void
release_head(struct delay_path *p)
{
	p->free_bufs[p->nb_free++] = p->ring[p->head++ & p->mask].buf;
}

/* Sends what is due at now. A full socket buffer (EAGAIN) leaves the rest
 * for POLLOUT; a frame the device refuses is dropped and counted, the
 * first of each kind of refusal reported. Returns 0. */
int
delay_path_tx(struct delay_path *p, uint64_t now)
{
	unsigned int n;
	int sent, i;

	while (!p->tx_blocked && (n = tx_prepare(p, now)) > 0) {
		sent = sendmmsg(p->tx_fd, p->msgs, n, MSG_DONTWAIT);
		if (sent < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				p->tx_blocked = true;
				break;
			}
			if (errno != p->send_errno) {
				p->send_errno = errno;
				fprintf(stderr, "ewyk-delay: %s: sending on %s: %s "
						"(dropped, counted as drop_send)\n",
						p->name, p->to, strerror(errno));
			}
			p->c.drop_send++;
			release_head(p);
			continue;
		}
		for (i = 0; i < sent; i++) {
			p->c.forwarded++;
			p->c.bytes += p->ring[p->head & p->mask].len;
			release_head(p);
		}
	}
	return 0;
}

/* Nanoseconds until the next frame is due (0: now), -1 if none waits
 * (or the socket must drain first). */
int64_t
delay_path_next_ns(const struct delay_path *p)
{
	uint64_t next, now;

	if (p->tx_blocked || delay_path_queued(p) == 0)
		return -1;
	next = p->ring[p->head & p->mask].release_ns;
	now = delay_now_ns();
	return next > now ? (int64_t)(next - now) : 0;
}

/* The socket's drops since the last look (the kernel resets them). */
static void
sock_drops(struct delay_path *p)
{
	struct tpacket_stats st;
	socklen_t len = sizeof(st);

	if (getsockopt(p->rx_fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
		p->c.drop_socket += st.tp_drops;
}

void
delay_path_print(struct delay_path *p, FILE *out)
{
	const struct delay_counters *c = &p->c;

	sock_drops(p);
	fprintf(out, "%s from=%s to=%s received=%llu forwarded=%llu bytes=%llu "
			"drop_loss=%llu drop_queue=%llu drop_ring_full=%llu "
			"drop_oversize=%llu drop_send=%llu queued=%u "
			"drop_socket=%llu\n",
			p->name, p->from, p->to,
			(unsigned long long)c->received,
			(unsigned long long)c->forwarded,
			(unsigned long long)c->bytes,
			(unsigned long long)c->drop_loss,
			(unsigned long long)c->drop_queue,
			(unsigned long long)c->drop_ring_full,
			(unsigned long long)c->drop_oversize,
			(unsigned long long)c->drop_send,
			delay_path_queued(p),
			(unsigned long long)c->drop_socket);
}
