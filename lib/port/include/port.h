/* SPDX-License-Identifier: BSD-3-Clause */
/* Ethernet port set-up for every program of ewyk (ewykd, ewyk-load): one
 * RX/TX queue pair per shard or worker on each port, RSS across them
 * where the device offers it, the medium's quirks (net_af_xdp's chunk
 * size, what a virtual device reads by CPU). */
#ifndef EWYK_PORT_H
#define EWYK_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rte_mempool;
struct net_if;
struct net_rss;

/* What the port set-up reads of a program's configuration. */
struct port_config {
	uint16_t first_id;	/* ports are taken in id order from this one */
	uint16_t nb_ports;	/* how many: one per address */
	const char *addr_option;	/* the option giving those addresses
					 * ("--ip", "--ip6"), for errors */
	uint16_t mtu;
	uint16_t rx_desc;
	uint16_t tx_desc;
	bool sw_cksum;		/* compute TX checksums even if the NIC could */
	bool no_tso;		/* segment TCP ourselves even if the NIC could */
	uint32_t tap_queue;	/* frames net_tap's kernel side may hold for
				 * us, at least (its txqueuelen); 0 leaves it */
};

/* The ports for cfg: the valid ethdev ports in id order from first_id,
 * nb_ports of them. Their ids in ids; 0, or -1 with a message in err (no
 * such --port-id, more addresses than ports). */
int port_assign(const struct port_config *cfg, uint16_t *ids, char *err,
		size_t errlen);
/* The data room (headroom included) of mbufs for an MTU. */
uint16_t port_mbuf_room(uint16_t mtu);
/* The mbuf pool of n mbufs for an MTU, for ports (nb_ports of them):
 * packed without regard to pages when every one is a virtual device.
 * NULL with rte_errno set when it cannot be made. */
struct rte_mempool *port_mbuf_pool(const char *name, uint32_t n,
		uint32_t cache, uint16_t mtu, const uint16_t *ports,
		uint16_t nb_ports);
/* Has the port nb_queues queue pairs, and cfg's MTU? 0, or -1 with a
 * message in err. */
int port_check(const struct port_config *cfg, uint16_t port,
		uint16_t nb_queues, char *err, size_t errlen);
/* Configures and starts the port; fills ifc with what the device offers
 * and rss with how it spreads flows over the queues. With IPv6 (ifc's
 * prefix6 set before), the port takes its multicast groups: *mc says how
 * ("filter", "allmulticast", "promiscuous", or "unfiltered" where the
 * device has neither: net_memif, net_tap and net_af_xdp pass everything).
 * Returns 0, or -1 with a message in err. */
int port_start(const struct port_config *cfg, uint16_t port,
		uint16_t nb_queues, struct rte_mempool *pool, struct net_if *ifc,
		struct net_rss *rss, const char **mc, char *err, size_t errlen);
void port_stop(uint16_t port_id);

#endif /* EWYK_PORT_H */
