/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ewyk-delay: a delay medium between two interfaces (see delay.h and
 * --help). One thread: ppoll() on the two AF_PACKET sockets with a
 * timeout to the next frame due, then batches read and sent.
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>

#include "options.h"
#include "path.h"

#define SOCK_BUF (8 << 20)	/* socket buffers: a burst while we send */
#define LINK_HDRS (ETH_HLEN + 8)	/* Ethernet and two VLAN tags */

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

static volatile sig_atomic_t force_quit;
static volatile sig_atomic_t dump_stats;

struct port {
	const char *name;
	int ifindex;
	int fd;
	int mtu;
};

static void
on_signal(int sig)
{
	if (sig == SIGUSR1)
		dump_stats = 1;
	else
		force_quit = 1;
}

/* Socket buffers beyond the sysctl limits where we may (root). */
static void
sock_buffers(int fd)
{
	int v = SOCK_BUF;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) != 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)) != 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}

/* The interface's index; 2 (printed) if this namespace has none so
 * named. */
static int
port_find(struct port *pt, const char *opt)
{
	if (strlen(pt->name) >= IFNAMSIZ ||
			(pt->ifindex = (int)if_nametoindex(pt->name)) == 0) {
		fprintf(stderr, "ewyk-delay: --%s '%s': no such interface in "
				"this namespace\n", opt, pt->name);
		return 2;
	}
	return 0;
}

/* A raw packet socket on the interface, promiscuous, blind to what the
 * interface sends. Returns 0, or 1 on a failure (printed). */
static int
port_open(struct port *pt)
{
	struct sockaddr_ll sll = { 0 };
	struct packet_mreq mr = { 0 };
	struct ifreq ifr = { 0 };
	int one = 1;

	/* protocol 0 until bound: an ETH_P_ALL socket would queue every
	 * interface's frames between socket() and bind() */
	pt->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (pt->fd < 0)
		goto fail;
	/* our own sends would come back to us and loop; judge() checks the
	 * packet type too where the kernel lacks this */
	setsockopt(pt->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one,
			sizeof(one));
	/* arrival times from the kernel (see arrival_ns()) */
	setsockopt(pt->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	sock_buffers(pt->fd);
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = pt->ifindex;
	if (bind(pt->fd, (struct sockaddr *)&sll, sizeof(sll)) != 0)
		goto fail;
	mr.mr_ifindex = pt->ifindex;
	mr.mr_type = PACKET_MR_PROMISC;
	if (setsockopt(pt->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr,
			sizeof(mr)) != 0)
		goto fail;
	memcpy(ifr.ifr_name, pt->name, strlen(pt->name));
	if (ioctl(pt->fd, SIOCGIFMTU, &ifr) != 0)
		goto fail;
	pt->mtu = ifr.ifr_mtu;
	return 0;
fail:
	fprintf(stderr, "ewyk-delay: %s: %s\n", pt->name, strerror(errno));
	return 1;
}

/* Frame buffers: the larger MTU and link headers, in cache lines. */
static uint32_t
buf_size(const struct port *a, const struct port *b)
{
	int mtu = a->mtu > b->mtu ? a->mtu : b->mtu;

	return ((uint32_t)(mtu + LINK_HDRS) + 63) & ~63u;
}

/* The counters, to --stats FILE replaced whole (a reader never sees half
 * of them), or to stderr. */
static void
write_stats(const struct delay_config *cfg, struct delay_path *paths)
{
	char tmp[4096];
	FILE *f;

	if (cfg->stats == NULL) {
		delay_path_print(&paths[0], stderr);
		delay_path_print(&paths[1], stderr);
		return;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", cfg->stats) >=
			sizeof(tmp) || (f = fopen(tmp, "w")) == NULL) {
		fprintf(stderr, "ewyk-delay: --stats %s: cannot write it\n",
				cfg->stats);
		return;
	}
	delay_path_print(&paths[0], f);
	delay_path_print(&paths[1], f);
	if (fclose(f) != 0 || rename(tmp, cfg->stats) != 0)
		fprintf(stderr, "ewyk-delay: --stats %s: %s\n", cfg->stats,
				strerror(errno));
}

/* SIGINT, SIGTERM and SIGUSR1 only set flags, and are blocked but in
 * ppoll(): none can slip between a look at the flags and the wait.
 * Fills wait_mask with the mask for ppoll(). */
static void
signals_init(sigset_t *wait_mask)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGUSR1 };
	struct sigaction sa = { 0 };
	sigset_t block;
	unsigned int i;

	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&block, sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &block, wait_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigdelset(wait_mask, sigs[i]);
}

/* The wait: until a frame is due, a socket is readable (or writable
 * again for a path that filled it), or a signal. */
static int
wait_events(struct delay_path *paths, struct pollfd *fds,
		const sigset_t *mask)
{
	struct timespec ts, *tsp = NULL;
	int64_t next = -1, n;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		n = delay_path_next_ns(&paths[i]);
		if (n >= 0 && (next < 0 || n < next))
			next = n;
		/* path i reads fds[i] and sends on the other one */
		fds[i].events = POLLIN;
		fds[i].revents = 0;
	}
	for (i = 0; i < 2; i++)
		if (paths[i].tx_blocked)
			fds[1 - i].events |= POLLOUT;
	if (next >= 0) {
		ts.tv_sec = next / 1000000000;
		ts.tv_nsec = next % 1000000000;
		tsp = &ts;
	}
	return ppoll(fds, 2, tsp, mask);
}

/* A read that failed: a link gone down is reported and outlived; an
 * interface that is gone ends the run. Returns 0 to go on. */
static int
rx_failed(const struct delay_path *p, const struct port *pt)
{
	int err = errno;

	fprintf(stderr, "ewyk-delay: %s: reading %s: %s\n", p->name, pt->name,
			strerror(err));
	if ((int)if_nametoindex(pt->name) != pt->ifindex) {
		fprintf(stderr, "ewyk-delay: %s is gone\n", pt->name);
		return -1;
	}
	return 0;
}

static int
run(const struct delay_config *cfg, struct delay_path *paths,
		const struct port *ports, const sigset_t *mask)
{
	struct pollfd fds[2];
	unsigned int i;
	uint64_t now;

	fds[0].fd = ports[0].fd;
	fds[1].fd = ports[1].fd;
	while (!force_quit) {
		if (dump_stats) {
			dump_stats = 0;
			write_stats(cfg, paths);
		}
		if (wait_events(paths, fds, mask) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "ewyk-delay: ppoll: %s\n",
					strerror(errno));
			return 1;
		}
		for (i = 0; i < 2; i++) {
			if ((fds[i].revents & POLLOUT) != 0)
				paths[1 - i].tx_blocked = false;
			if ((fds[i].revents & (POLLIN | POLLERR)) != 0 &&
					delay_path_rx(&paths[i]) != 0 &&
					rx_failed(&paths[i], &ports[i]) != 0)
				return 1;
		}
		now = delay_now_ns();
		for (i = 0; i < 2; i++)
			delay_path_tx(&paths[i], now);
	}
	return 0;
}

/* The wire's timing must not wait for the machine's other work: a frame
 * is read, and leaves, when the medium wakes. SCHED_FIFO at the lowest
 * priority; the kernel's RT throttling still leaves the others their
 * share if a flood keeps it busy. Returns whether it took. */
static bool
realtime(const struct delay_config *cfg)
{
	struct sched_param sp = { .sched_priority = 1 };

	if (cfg->no_realtime)
		return false;
	if (sched_setscheduler(0, SCHED_FIFO, &sp) == 0)
		return true;
	fprintf(stderr, "ewyk-delay: SCHED_FIFO: %s (delays may grow under "
			"load)\n", strerror(errno));
	return false;
}

static void
describe(const struct delay_config *cfg, uint32_t bufsz, bool rt)
{
	char rate[64] = "unlimited", queue[64] = "unlimited";

	if (cfg->rate_mbit > 0) {
		snprintf(rate, sizeof(rate), "%g Mbit/s", cfg->rate_mbit);
		snprintf(queue, sizeof(queue), "%llu bytes",
				(unsigned long long)cfg->queue_bytes);
	}
	printf("ewyk-delay: forwarding %s <-> %s: delay %g ms each way, "
			"loss %g %% (seed %llu), rate %s, queue %s, %u frames "
			"of %u bytes each way, %s\n", cfg->a, cfg->b,
			cfg->delay_ms, cfg->loss_pct,
			(unsigned long long)cfg->seed, rate, queue, cfg->frames,
			bufsz, rt ? "SCHED_FIFO 1" : "default scheduling");
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	struct delay_config cfg;
	struct port ports[2] = { { .fd = -1 }, { .fd = -1 } };
	struct delay_path paths[2] = { { .name = "a>b" }, { .name = "b>a" } };
	sigset_t wait_mask;
	uint32_t bufsz;
	unsigned int i;
	int ret;

	ret = delay_options(argc, argv, &cfg);
	if (ret != 0)
		return ret == 1 ? 0 : 2;
	delay_clock_start();
	signals_init(&wait_mask);
	ports[0].name = cfg.a;
	ports[1].name = cfg.b;
	if ((ret = port_find(&ports[0], "a")) != 0 ||
			(ret = port_find(&ports[1], "b")) != 0 ||
			(ret = port_open(&ports[0])) != 0 ||
			(ret = port_open(&ports[1])) != 0)
		goto out;
	/* release times to the microsecond, not the default 50 us slack */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	bufsz = buf_size(&ports[0], &ports[1]);
	for (i = 0; i < 2; i++) {
		paths[i].from = ports[i].name;
		paths[i].to = ports[1 - i].name;
		paths[i].rx_fd = ports[i].fd;
		paths[i].tx_fd = ports[1 - i].fd;
		if (delay_path_init(&paths[i], &cfg, i, bufsz) != 0) {
			fprintf(stderr, "ewyk-delay: %u frames of %u bytes: "
					"out of memory\n", cfg.frames, bufsz);
			ret = 1;
			goto out;
		}
	}
	describe(&cfg, bufsz, realtime(&cfg));
	ret = run(&cfg, paths, ports, &wait_mask);
	write_stats(&cfg, paths);
out:
	for (i = 0; i < 2; i++) {
		delay_path_free(&paths[i]);
		if (ports[i].fd >= 0)
			close(ports[i].fd);
	}
	return ret;
}
