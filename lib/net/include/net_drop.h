/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Why a received frame was dropped: one counter per reason, per shard.
 * IPv6's own reasons begin ip6_, icmp6_ and nd_ (docs/tcp.md says what
 * each means); TCP's and UDP's are the same for both families.
 */
#ifndef EWYK_NET_DROP_H
#define EWYK_NET_DROP_H

#define NET_DROP_REASONS(X) \
	X(ETH_SHORT, "eth_short") \
	X(ETHERTYPE, "ethertype") \
	X(NOT_FOR_US, "not_for_us") \
	X(VLAN, "vlan") \
	X(ARP_MALFORMED, "arp_malformed") \
	X(IP_SHORT, "ip_short") \
	X(IP_VERSION, "ip_version") \
	X(IP_HDRLEN, "ip_hdrlen") \
	X(IP_TOTLEN, "ip_totlen") \
	X(IP_CKSUM, "ip_cksum") \
	X(IP_FRAGMENT, "ip_fragment") \
	X(IP_NOT_OURS, "ip_not_ours") \
	X(IP_PROTO, "ip_proto") \
	X(ICMP_SHORT, "icmp_short") \
	X(ICMP_CKSUM, "icmp_cksum") \
	X(ICMP_TYPE, "icmp_type") \
	X(IP6_SHORT, "ip6_short") \
	X(IP6_PAYLOAD_LEN, "ip6_payload_len") \
	X(IP6_SRC_MULTICAST, "ip6_src_multicast") \
	X(IP6_SRC_INVALID, "ip6_src_invalid") \
	X(IP6_NOT_OURS, "ip6_not_ours") \
	X(IP6_EXT_HDR, "ip6_ext_hdr") \
	X(IP6_EXT_CHAIN, "ip6_ext_chain") \
	X(IP6_FRAGMENT, "ip6_fragment") \
	X(IP6_ROUTING_0, "ip6_routing_0") \
	X(IP6_ROUTING, "ip6_routing") \
	X(IP6_OPTION, "ip6_option") \
	X(IP6_NEXT_HEADER, "ip6_next_header") \
	X(ICMP6_SHORT, "icmp6_short") \
	X(ICMP6_CKSUM, "icmp6_cksum") \
	X(ICMP6_TYPE, "icmp6_type") \
	X(ICMP6_PTB_INVALID, "icmp6_ptb_invalid") \
	X(ICMP6_PTB_NO_CONN, "icmp6_ptb_no_conn") \
	X(ICMP6_PTB_SEQ, "icmp6_ptb_seq") \
	X(ND_INVALID, "nd_invalid") \
	X(ND_ROUTER, "nd_router") \
	X(TCP_SHORT, "tcp_short") \
	X(TCP_DOFF, "tcp_doff") \
	X(TCP_CKSUM, "tcp_cksum") \
	X(TCP_FLAGS, "tcp_flags") \
	X(TCP_NO_CONN, "tcp_no_conn") \
	X(TCP_CONN_FULL, "tcp_conn_full") \
	X(TCP_OUT_OF_WINDOW, "tcp_out_of_window") \
	X(TCP_OUT_OF_ORDER, "tcp_out_of_order") \
	X(TCP_BAD_ACK, "tcp_bad_ack") \
	X(UDP_SHORT, "udp_short") \
	X(UDP_LEN, "udp_len") \
	X(UDP_CKSUM, "udp_cksum") \
	X(UDP_NO_PORT, "udp_no_port") \
	X(RX_MULTISEG, "rx_multiseg") \
	X(NO_MBUF, "no_mbuf") \
	X(TX_FULL, "tx_full")

enum net_drop {
	NET_OK = 0,
#define NET_DROP_ENUM(e, s) NET_DROP_##e,
	NET_DROP_REASONS(NET_DROP_ENUM)
#undef NET_DROP_ENUM
	NET_DROP__COUNT
};

/* Telemetry key of a reason ("ip_cksum"), or NULL for NET_OK. */
const char *net_drop_name(enum net_drop reason);

#endif /* EWYK_NET_DROP_H */
