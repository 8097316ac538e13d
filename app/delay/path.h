/* SPDX-License-Identifier: BSD-3-Clause */
/* One direction of the medium: loss, the bottleneck's queue, the delay
 * line, over AF_PACKET sockets; and the clock they keep time by. */
#ifndef EWYK_DELAY_PATH_H
#define EWYK_DELAY_PATH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <sys/socket.h>
#include <linux/if_packet.h>

#include "options.h"

#define DELAY_BATCH 64			/* frames per recvmmsg/sendmmsg */

/* What became of the frames one direction received. At any time
 * received == forwarded + every drop + queued. */
struct delay_counters {
	uint64_t received;
	uint64_t forwarded;
	uint64_t bytes;			/* forwarded */
	uint64_t drop_loss;
	uint64_t drop_queue;
	uint64_t drop_ring_full;
	uint64_t drop_oversize;		/* longer than a frame buffer */
	uint64_t drop_send;		/* refused by the egress device */
	/* the kernel's, before they could be read (socket buffer full):
	 * never received, so outside the sum above */
	uint64_t drop_socket;
};

/* A frame held by a path until its release time. */
struct delay_frame {
	uint8_t *buf;
	uint32_t len;
	uint64_t release_ns;
};

/* One direction: frames read on rx_fd leave on tx_fd. */
struct delay_path {
	const char *name;		/* "a>b" */
	const char *from;
	const char *to;
	int rx_fd;
	int tx_fd;
	uint32_t buf_size;		/* bytes of each frame buffer */
	/* the delay line: a FIFO of frames in release order */
	struct delay_frame *ring;
	uint32_t mask;
	uint32_t head;			/* next to leave */
	uint32_t tail;			/* next to fill */
	/* free buffers, LIFO: only the buffers the peak needs get touched */
	uint8_t **free_bufs;
	uint32_t nb_free;
	uint8_t *mem;			/* every buffer, one mapping */
	size_t mem_len;
	uint8_t *scratch[DELAY_BATCH];	/* receives what a full ring drops */
	/* loss */
	uint64_t prng;
	uint64_t loss_below;		/* drop when a draw is below this */
	bool loss_all;
	/* bottleneck, in picoseconds since start */
	uint64_t ps_per_byte;		/* 0: unlimited */
	uint64_t busy_until_ps;
	uint64_t queue_bytes;
	uint64_t delay_ns;
	bool tx_blocked;		/* waits for POLLOUT */
	int send_errno;			/* the last refusal reported */
	struct delay_counters c;
	/* batch descriptors, reused */
	struct mmsghdr msgs[DELAY_BATCH];
	struct iovec iov[DELAY_BATCH];
	struct sockaddr_ll names[DELAY_BATCH];
	uint8_t *bufs[DELAY_BATCH];
	union {				/* the kernel's receive stamps */
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} ctrl[DELAY_BATCH];
	uint64_t last_arrival_ns;	/* arrivals never go back */
};

/* The clock starts now: delay_now_ns() counts from here. */
void delay_clock_start(void);
/* Nanoseconds since the start, CLOCK_MONOTONIC. */
uint64_t delay_now_ns(void);

int delay_path_init(struct delay_path *p, const struct delay_config *cfg,
		unsigned int dir, uint32_t buf_size);
void delay_path_free(struct delay_path *p);
int delay_path_rx(struct delay_path *p);
int delay_path_tx(struct delay_path *p, uint64_t now);
int64_t delay_path_next_ns(const struct delay_path *p);
uint32_t delay_path_queued(const struct delay_path *p);
void delay_path_print(struct delay_path *p, FILE *out);

#endif /* EWYK_DELAY_PATH_H */
