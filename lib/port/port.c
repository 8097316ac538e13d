/* SPDX-License-Identifier: BSD-3-Clause */
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include "net_stack.h"
#include "port.h"

int
port_assign(const struct port_config *cfg, uint16_t *ids, char *err,
		size_t errlen)
{
	uint16_t port, n = 0;

	if (!rte_eth_dev_is_valid_port(cfg->first_id)) {
		snprintf(err, errlen, "--port-id %u: no such port (%u available; "
				"give a device with -a or --vdev)", cfg->first_id,
				rte_eth_dev_count_avail());
		return -1;
	}
	RTE_ETH_FOREACH_DEV(port) {
		if (port < cfg->first_id)
			continue;
		if (n < cfg->nb_ports)
			ids[n] = port;
		n++;
	}
	if (n < cfg->nb_ports) {
		const char *opt = cfg->addr_option;

		snprintf(err, errlen, "%u %s addresses, but %u DPDK port%s from "
				"port %u on (one port per %s: give each a "
				"device with -a or --vdev)", cfg->nb_ports, opt, n,
				n == 1 ? "" : "s", cfg->first_id, opt);
		return -1;
	}
	return 0;
}

/* The port's IPv6 groups (all nodes, its solicited-node ones): the
 * device's multicast filter if it has one, else all multicast. Devices
 * without either (net_memif, and net_tap and net_af_xdp whose kernel side
 * filters nothing) take every frame anyway. Says which in *how. */
static void
mc_join(uint16_t port, const struct net_if *ifc, const char **how)
{
	uint8_t macs[NET_MC_MACS][6];
	struct rte_ether_addr list[NET_MC_MACS];
	unsigned int n = net_if_mc_macs(ifc, macs), i;

	*how = "none";
	if (n == 0)
		return;
	for (i = 0; i < n; i++)
		memcpy(list[i].addr_bytes, macs[i], 6);
	if (rte_eth_dev_set_mc_addr_list(port, list, n) == 0)
		*how = "filter";
	else if (rte_eth_allmulticast_enable(port) == 0)
		*how = "allmulticast";
	else if (rte_eth_promiscuous_get(port) == 1)
		*how = "promiscuous";
	else
		*how = "unfiltered";
}

uint16_t
port_mbuf_room(uint16_t mtu)
{
	/* A whole frame of the MTU in one mbuf (no receive scatter): the
	 * Ethernet header and the CRC around it, and the 256 bytes that
	 * net_af_xdp's kernel side keeps in front of a frame
	 * (XDP_PACKET_HEADROOM). */
	uint32_t frame = (uint32_t)mtu + RTE_ETHER_HDR_LEN +
		RTE_ETHER_CRC_LEN + 256;

	return (uint16_t)(RTE_PKTMBUF_HEADROOM +
			RTE_MAX(frame, (uint32_t)RTE_MBUF_DEFAULT_DATAROOM));
}

/* A virtual device (net_tap, net_af_xdp, net_memif) reads and writes
 * frames with the CPU, not by DMA. */
static bool
port_is_virtual(uint16_t port)
{
	struct rte_eth_dev_info info;

	return rte_eth_dev_info_get(port, &info) == 0 &&
		strcmp(rte_bus_name(rte_dev_bus(info.device)), "vdev") == 0;
}

struct rte_mempool *
port_mbuf_pool(const char *name, uint32_t n, uint32_t cache, uint16_t mtu,
		const uint16_t *ports, uint16_t nb_ports)
{
	struct rte_pktmbuf_pool_private priv = {
		.mbuf_data_room_size = port_mbuf_room(mtu),
	};
	unsigned int flags = RTE_MEMPOOL_F_NO_IOVA_CONTIG;
	struct rte_mempool *mp;
	uint16_t i;
	int rc;

	/* Laid out for DMA, a pool keeps each mbuf within one page and
	 * leaves the page's end unused, so that its mbufs span more than
	 * n of them. net_af_xdp (DPDK 22.11) registers n mbufs' length
	 * from the first as the socket's memory: the last few mbufs lie
	 * past it, and the kernel drops what is sent from them without a
	 * word (about 23 frames in a row, each time the pool comes round
	 * to them). Devices that read with the CPU need no such layout:
	 * their pool is packed, every mbuf inside that length. */
	for (i = 0; i < nb_ports; i++)
		if (!port_is_virtual(ports[i]))
			flags = 0;
	mp = rte_mempool_create_empty(name, n, sizeof(struct rte_mbuf) +
			priv.mbuf_data_room_size, cache, sizeof(priv),
			(int)rte_socket_id(), flags);
	if (mp == NULL)
		return NULL;
	rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL);
	if (rc == 0) {
		rte_pktmbuf_pool_init(mp, &priv);
		rc = rte_mempool_populate_default(mp);
	}
	if (rc < 0) {
		rte_mempool_free(mp);
		rte_errno = -rc;
		return NULL;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;
}

/* net_af_xdp receives into the mbufs themselves, and its socket takes
 * only chunks smaller than a page: whether an mbuf for this MTU is one. */
static bool
af_xdp_chunk_fits(uint16_t mtu)
{
	uint32_t elt = (uint32_t)sizeof(struct rte_mbuf) + port_mbuf_room(mtu);

	return rte_mempool_calc_obj_size(elt, 0, NULL) < (uint32_t)getpagesize();
}

int
port_check(const struct port_config *cfg, uint16_t port, uint16_t nb_queues,
		char *err, size_t errlen)
{
	struct rte_eth_dev_info info;
	uint16_t max;
	int rc;

	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0) {
		snprintf(err, errlen, "port %u: no device information: %s", port,
				rte_strerror(-rc));
		return -1;
	}
	if (nb_queues > info.max_rx_queues || nb_queues > info.max_tx_queues) {
		snprintf(err, errlen, "port %u: %u shards need %u queue pairs, the "
				"device has %u", port, nb_queues, nb_queues,
				RTE_MIN(info.max_rx_queues, info.max_tx_queues));
		return -1;
	}
	/* net_memif takes 1518-byte frames; net_af_xdp about 3.5 KB, less
	 * with these mbufs as its frames. */
	max = info.max_mtu;
	if (strcmp(info.driver_name, "net_af_xdp") == 0)
		while (max > info.min_mtu && !af_xdp_chunk_fits(max))
			max--;
	if (cfg->mtu > max || cfg->mtu < info.min_mtu) {
		snprintf(err, errlen, "--mtu %u: port %u (%s) takes %u to %u", cfg->mtu,
				port, info.driver_name, info.min_mtu, max);
		return -1;
	}
	return 0;
}

/* What the device hashes received flows with, read back once started:
 * active opens choose their local ports by it. Anything unreadable
 * leaves reta_size 0 (every port will do, as with one queue). */
static void
rss_read(uint16_t port, const struct rte_eth_dev_info *info,
		uint16_t nb_queues, struct net_rss *rss)
{
	uint64_t seen = 0;
	struct rte_eth_rss_reta_entry64 reta[NET_RSS_RETA_MAX /
		RTE_ETH_RETA_GROUP_SIZE];
	struct rte_eth_rss_conf conf = { .rss_key = rss->key,
		.rss_key_len = NET_RSS_KEY_MAX };
	uint16_t i;

	rss->reta_size = 0;
	if (info->reta_size == 0 || info->reta_size > NET_RSS_RETA_MAX ||
			(info->reta_size & (info->reta_size - 1)) != 0)
		return;
	if (rte_eth_dev_rss_hash_conf_get(port, &conf) != 0 ||
			conf.rss_key_len < 16 || conf.rss_key_len > NET_RSS_KEY_MAX)
		return;
	for (i = 0; i < conf.rss_key_len && rss->key[i] == 0; i++)
		;
	if (i == conf.rss_key_len)
		return;		/* no key: the device does not hash itself */
	memset(reta, 0, sizeof(reta));
	for (i = 0; i < info->reta_size / RTE_ETH_RETA_GROUP_SIZE; i++)
		reta[i].mask = UINT64_MAX;
	if (rte_eth_dev_rss_reta_query(port, reta, info->reta_size) != 0)
		return;
	for (i = 0; i < info->reta_size; i++) {
		rss->reta[i] = reta[i / RTE_ETH_RETA_GROUP_SIZE]
			.reta[i % RTE_ETH_RETA_GROUP_SIZE];
		if (rss->reta[i] < 64)
			seen |= 1ull << rss->reta[i];
	}
	/* A table that leaves a queue out is not the one steering flows. */
	if (nb_queues > 64 || seen != (nb_queues == 64 ? UINT64_MAX :
			(1ull << nb_queues) - 1))
		return;
	rss->key_len = conf.rss_key_len;
	rss->reta_size = info->reta_size;
}

/* net_tap reads one frame per read(); what the kernel sends it waits in
 * the tap's queue, txqueuelen frames (1,000 by default), and the rest is
 * dropped. A sender's window arrives as one burst, faster than that: an
 * upload at 50 ms lost hundreds of frames per transfer at 1,000, none at
 * a receive buffer's worth. Only deepened, never made shorter. */
static void
tap_queue_deepen(const struct rte_eth_dev_info *info, uint32_t frames)
{
	char name[IF_NAMESIZE];
	struct ifreq ifr;
	int fd;

	if (frames == 0 || strcmp(info->driver_name, "net_tap") != 0 ||
			if_indextoname(info->if_index, name) == NULL)
		return;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFTXQLEN, &ifr) == 0 &&
			(uint32_t)ifr.ifr_qlen < frames) {
		ifr.ifr_qlen = (int)frames;
		(void)ioctl(fd, SIOCSIFTXQLEN, &ifr);
	}
	close(fd);
}

int
port_start(const struct port_config *cfg, uint16_t port, uint16_t nb_queues,
		struct rte_mempool *pool, struct net_if *ifc, struct net_rss *rss,
		const char **mc, char *err, size_t errlen)
{
	bool use_rss = false;
	uint16_t nb_rxd = cfg->rx_desc, nb_txd = cfg->tx_desc;
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	uint16_t q;
	int rc;

	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0)
		goto fail;
	memset(&conf, 0, sizeof(conf));
	conf.rxmode.mtu = cfg->mtu;
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) {
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
		ifc->tx_multiseg = true;
	}
	/* A virtual device (net_tap, net_af_xdp, net_memif) reads what it
	 * sends with the CPU: static files go out of the send queue without
	 * a copy (tcp_write_ref()). A device that DMAs would need their
	 * memory mapped for it, which is not done: it gets copies. */
	ifc->tx_any_memory = port_is_virtual(port);
	if ((info.tx_offload_capa & (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM |
			RTE_ETH_TX_OFFLOAD_TCP_CKSUM)) ==
			(RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM) &&
			!cfg->sw_cksum) {
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM |
			RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
		ifc->tx_cksum_offload = true;
	}
	/* TSO on chains of the send queue's mbufs, the device summing. */
	if ((info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_TCP_TSO) &&
			info.tx_desc_lim.nb_seg_max >= 3 &&
			ifc->tx_cksum_offload && ifc->tx_multiseg && !cfg->no_tso) {
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_TCP_TSO;
		ifc->tx_tso = true;
		ifc->tso_segs_max = RTE_MIN(info.tx_desc_lim.nb_seg_max,
				(uint16_t)UINT8_MAX);
		/* net_tap's TSO is DPDK's GSO library (22.11): TCP over
		 * IPv4 only (an IPv6 frame would leave whole), and it checks
		 * a segment's frame, not its IP packet, against the MTU. */
		bool tap = strcmp(info.driver_name, "net_tap") == 0;

		ifc->tso_ipv6 = !tap;
		ifc->tso_l2_in_mtu = tap;
	}
	if ((info.rx_offload_capa & (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM |
			RTE_ETH_RX_OFFLOAD_TCP_CKSUM)) ==
			(RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM)) {
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_IPV4_CKSUM |
			RTE_ETH_RX_OFFLOAD_TCP_CKSUM;
		ifc->rx_cksum_offload = true;
	}
	/* Each connection must live on exactly one shard: RSS where the device
	 * hashes flows itself; a device without it (net_af_xdp: the kernel's
	 * queue selection decides) is left to spread them its own way. */
	if (nb_queues > 1 && info.flow_type_rss_offloads != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		use_rss = true;
		conf.rx_adv_conf.rss_conf.rss_hf = (RTE_ETH_RSS_IP |
				RTE_ETH_RSS_TCP) & info.flow_type_rss_offloads;
	}
	rc = rte_eth_dev_configure(port, nb_queues, nb_queues, &conf);
	if (rc != 0)
		goto fail;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (rc != 0)
		goto fail;
	for (q = 0; q < nb_queues; q++) {
		rc = rte_eth_rx_queue_setup(port, q, nb_rxd,
				rte_eth_dev_socket_id(port), NULL, pool);
		if (rc != 0)
			goto fail;
		rc = rte_eth_tx_queue_setup(port, q, nb_txd,
				rte_eth_dev_socket_id(port), NULL);
		if (rc != 0)
			goto fail;
	}
	rc = rte_eth_dev_start(port);
	if (rc != 0)
		goto fail;
	rss->reta_size = 0;
	if (use_rss)
		rss_read(port, &info, nb_queues, rss);
	tap_queue_deepen(&info, cfg->tap_queue);
	rte_eth_macaddr_get(port, &mac);
	memcpy(ifc->mac, mac.addr_bytes, 6);
	ifc->mtu = cfg->mtu;
	mc_join(port, ifc, mc);
	return 0;
fail:
	snprintf(err, errlen, "port %u: set-up failed: %s", port, rte_strerror(-rc));
	return -1;
}

void
port_stop(uint16_t port_id)
{
	rte_eth_dev_stop(port_id);
	rte_eth_dev_close(port_id);
}
