/* SPDX-License-Identifier: BSD-3-Clause */
/* Ethernet port set-up: one RX/TX queue pair per shard on each port, RSS
 * across them where the device offers it. */
#ifndef EWYKD_PORT_H
#define EWYKD_PORT_H

#include <stdint.h>

struct rte_mempool;
struct net_if;
struct net_rss;
struct ewykd_config;

/* The ports for cfg's addresses: the valid ethdev ports in id order from
 * --port-id, as many as --ip or --ip6 gives. Their ids in ids; 0, or -1 with a
 * message in err (no such --port-id, more addresses than ports). */
int port_assign(const struct ewykd_config *cfg, uint16_t *ids, char *err,
		size_t errlen);
/* The data room (headroom included) of ewykd's mbufs for an MTU. */
uint16_t port_mbuf_room(uint16_t mtu);
/* Has the port a queue pair for each shard, and cfg's MTU? 0, or -1 with
 * a message in err. */
int port_check(const struct ewykd_config *cfg, uint16_t port,
		uint16_t nb_queues, char *err, size_t errlen);
/* Configures and starts the port; fills ifc with what the device offers
 * and rss with how it spreads flows over the queues. With IPv6 (ifc's
 * prefix6 set before), the port takes its multicast groups: *mc says how
 * ("filter", "allmulticast", "promiscuous", or "unfiltered" where the
 * device has neither: net_memif, net_tap and net_af_xdp pass everything).
 * Returns 0, or -1 with a message in err. */
int port_start(const struct ewykd_config *cfg, uint16_t port,
		uint16_t nb_queues, struct rte_mempool *pool, struct net_if *ifc,
		struct net_rss *rss, const char **mc, char *err, size_t errlen);
void port_stop(uint16_t port_id);

#endif /* EWYKD_PORT_H */
