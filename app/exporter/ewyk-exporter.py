#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""ewyk-exporter: Prometheus metrics and a live dashboard for a running ewykd.

It reads ewykd's DPDK telemetry socket (v2, JSON over SOCK_SEQPACKET) and
serves, on a kernel TCP port:

  /metrics        every ewyk counter and gauge, and the ethdev's stats and
                  xstats, in Prometheus text format (OpenMetrics when the
                  Accept header asks for it)
  /               the dashboard (one page, refreshed every second)
  /api/snapshot   the telemetry replies the dashboard polls, as JSON, with
                  the reading's start (time) and how long it took (duration)

It never blocks the appliance: one connection, short timeouts, each command
sent at most once per scrape (scrapes closer than --min-interval share one
reading). When ewykd goes away it reports ewyk_up 0 and reconnects on the
next scrape.
"""
import argparse
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from prometheus_client.core import (CounterMetricFamily, GaugeMetricFamily,
                                    InfoMetricFamily, StateSetMetricFamily,
                                    UnknownMetricFamily)
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import CollectorRegistry

VERSION = "@VERSION@"
DASHBOARD_DIR = "@DASHBOARD_DIR@"
CHARTJS_DIR = "/usr/share/javascript/chart.js"

EWYK_COMMANDS = ("/ewyk/info", "/ewyk/stats", "/ewyk/tcp", "/ewyk/http",
                 "/ewyk/shards", "/ewyk/strategy", "/ewyk/reserved",
                 "/ewyk/lcores", "/ewyk/conflate", "/ewyk/tls", "/ewyk/quic")
# Only these commands are ever sent, and /ewyk/ports and /ewyk/routes:
# /ewyk/strategy,MODE would switch the appliance's mode, so no command
# ever carries a parameter but a port id or a page.


class Telemetry:
    """One connection to the telemetry socket, reopened when it breaks."""

    def __init__(self, path, timeout):
        self.path = path
        self.timeout = timeout
        self.sock = None
        self.max_len = 16384
        self.connects = 0

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(self.timeout)
        try:
            s.connect(self.path)
            greeting = json.loads(s.recv(4096).decode())
        except (OSError, ValueError):
            s.close()
            raise
        self.max_len = int(greeting.get("max_output_len", 16384))
        self.sock = s
        self.connects += 1

    def query(self, cmd):
        """The reply's value, or None when the command has no answer (for
        example /ewyk/conflate without a store). OSError when the appliance
        cannot be reached."""
        if self.sock is None:
            self._connect()
        try:
            self.sock.send(cmd.encode())
            data = self.sock.recv(self.max_len + 1)
        except OSError:
            self.close()
            raise
        if not data:			# the appliance closed: it stopped
            self.close()
            raise ConnectionResetError("telemetry socket closed")
        try:
            reply = json.loads(data.decode())
        except ValueError:
            return None		# truncated or not JSON: nothing usable
        return reply.get(cmd.split(",", 1)[0])


def is_route(key, v):
    return key.startswith(("route_", "site_")) and isinstance(v, dict)


class Reader:
    """Readings of all commands, shared by scrapes that come close together."""

    def _all_routes(self, replies):
        """/ewyk/http holds the first 32 routes (a reply is 16 KiB at
        most): every route's figures come from /ewyk/routes, a page at a
        time, in its place."""
        http = replies.get("/ewyk/http")
        first = self.tel.query("/ewyk/routes")
        if not http or not first:
            return
        routes = dict(first)
        for page in range(1, int(first.get("pages", 0))):
            routes.update(self.tel.query(f"/ewyk/routes,{page}") or {})
        merged = {k: v for k, v in http.items() if not is_route(k, v)}
        merged.update({k: v for k, v in routes.items() if is_route(k, v)})
        replies["/ewyk/http"] = merged

    def __init__(self, tel, min_interval):
        self.tel = tel
        self.min_interval = min_interval
        self.lock = threading.Lock()
        self.last = None
        self.reconnects = 0
        self.errors = 0

    def read(self):
        with self.lock:
            now = time.time()
            if self.last is not None and now - self.last["time"] < self.min_interval:
                return self.last
            t0 = time.monotonic()
            snap = {"time": now, "up": 0, "replies": {}, "ethdev": {}}
            was = self.tel.connects
            try:
                for cmd in EWYK_COMMANDS:
                    snap["replies"][cmd] = self.tel.query(cmd)
                ports = self.tel.query("/ethdev/list") or []
                served = snap["replies"]["/ewyk/ports"] = {}
                for p in ports:
                    snap["ethdev"][str(p)] = {
                        "info": self.tel.query(f"/ethdev/info,{p}"),
                        "stats": self.tel.query(f"/ethdev/stats,{p}"),
                        "xstats": self.tel.query(f"/ethdev/xstats,{p}"),
                    }
                    # One port a reply: a NIC's xstats fill 16 KiB fast.
                    served.update(self.tel.query(f"/ewyk/ports,{p}") or {})
                self._all_routes(snap["replies"])
                snap["up"] = 1 if snap["replies"].get("/ewyk/info") else 0
            except (OSError, ValueError):
                self.errors += 1
                snap = {"time": now, "up": 0, "replies": {}, "ethdev": {}}
            if self.tel.connects > was and was > 0:
                self.reconnects += 1
            snap["duration"] = time.monotonic() - t0
            self.last = snap
            return snap


# -- the metrics ---------------------------------------------------------
#
# Flat keys of a reply: key -> (metric, type, help, scale). A key listed
# in SKIP repeats a value exported under another name. Any key that is in
# neither (a counter added to ewykd later) is still exported, untyped, as
# ewyk_<command>_<key>: nothing the appliance counts is ever left out.

C, G = "counter", "gauge"
NS = 1e9	# telemetry unit per second: values are divided by it
US = 1e6
MS = 1e3

FLAT = {
    "/ewyk/info": {
        "mtu": ("ewyk_port_mtu_bytes", G, "MTU of the port", 1),
        "ports": ("ewyk_ports", G, "Ports served (one per --ip)", 1),
        "shards": ("ewyk_shards", G, "Shards (RX/TX queue pairs with their lcore)", 1),
        "lcores": ("ewyk_lcores", G, "EAL lcores", 1),
        "max_conns_per_shard": ("ewyk_shard_max_connections", G,
                                "Connections a shard can hold", 1),
        "uptime_ms": ("ewyk_uptime_seconds", G, "Time since ewykd started", MS),
    },
    "/ewyk/stats": {
        "rx_pkts": ("ewyk_net_rx_packets_total", C, "Packets received", 1),
        "tx_pkts": ("ewyk_net_tx_packets_total", C, "Packets sent", 1),
        "rx_bytes": ("ewyk_net_rx_bytes_total", C, "Bytes received", 1),
        "tx_bytes": ("ewyk_net_tx_bytes_total", C, "Bytes sent", 1),
        "arp_in_pkts": ("ewyk_net_arp_in_packets_total", C, "ARP packets received", 1),
        "arp_reply_pkts": ("ewyk_net_arp_reply_packets_total", C, "ARP replies sent", 1),
        "arp_other_target_pkts": ("ewyk_net_arp_other_target_packets_total", C,
                                  "ARP requests for another address (not answered)", 1),
        "arp_reply_limited_pkts": ("ewyk_net_arp_reply_limited_packets_total", C,
                                   "ARP requests for ours not answered: over --arp-reply-limit", 1),
        "icmp_echo_pkts": ("ewyk_net_icmp_echo_packets_total", C,
                           "ICMP echo requests answered", 1),
        "nd_ns_in_pkts": ("ewyk_net_nd_solicitations_in_packets_total", C,
                          "IPv6 neighbour solicitations received", 1),
        "nd_na_in_pkts": ("ewyk_net_nd_advertisements_in_packets_total", C,
                          "IPv6 neighbour advertisements received", 1),
        "nd_ns_out_pkts": ("ewyk_net_nd_solicitations_out_packets_total", C,
                           "Neighbour solicitations sent (for active opens)", 1),
        "nd_na_out_pkts": ("ewyk_net_nd_advertisements_out_packets_total", C,
                           "Neighbour advertisements sent (answers, announcements)", 1),
        "nd_replies_limited_pkts": ("ewyk_net_nd_reply_limited_packets_total", C,
                                    "Solicitations for ours not answered: over "
                                    "--nd-reply-limit", 1),
        "nd_other_targets_pkts": ("ewyk_net_nd_other_target_packets_total", C,
                                  "Solicitations for another address (not answered, "
                                  "nothing learned)", 1),
        "nd_learned_count": ("ewyk_net_nd_learned_total", C,
                             "IPv6 neighbours learned or refreshed", 1),
        "nd_dad_probes_pkts": ("ewyk_net_nd_dad_probes_packets_total", C,
                               "Duplicate address detection probes sent", 1),
        "nd_dad_duplicates_count": ("ewyk_net_nd_dad_duplicates_total", C,
                                    "IPv6 addresses of ours found duplicate (not used)", 1),
        "nd_addr_conflicts_count": ("ewyk_net_nd_address_conflicts_total", C,
                                    "Other nodes claiming a preferred address of ours", 1),
        "mld_reports_pkts": ("ewyk_net_mld_reports_packets_total", C,
                             "MLDv2 reports sent (joining the solicited-node groups)", 1),
        "icmp6_echo_pkts": ("ewyk_net_icmp6_echo_packets_total", C,
                            "ICMPv6 echo requests answered", 1),
        "icmp6_errors_in_pkts": ("ewyk_net_icmp6_errors_in_packets_total", C,
                                 "ICMPv6 errors received (but Packet Too Big)", 1),
        "icmp6_ptb_in_pkts": ("ewyk_net_icmp6_packet_too_big_packets_total", C,
                              "ICMPv6 Packet Too Big received", 1),
        "icmp6_errors_out_pkts": ("ewyk_net_icmp6_errors_out_packets_total", C,
                                  "ICMPv6 errors sent (Parameter Problem)", 1),
        "icmp6_errors_limited_pkts": ("ewyk_net_icmp6_errors_limited_packets_total", C,
                                      "ICMPv6 errors not sent: over the budget", 1),
        "udp_in_dgrams": ("ewyk_net_udp_in_datagrams_total", C,
                          "UDP datagrams handed to a bound port", 1),
        "udp_in_bytes": ("ewyk_net_udp_in_bytes_total", C,
                         "Payload bytes of the UDP datagrams handed up", 1),
        "udp_out_dgrams": ("ewyk_net_udp_out_datagrams_total", C, "UDP datagrams sent", 1),
        "udp_out_bytes": ("ewyk_net_udp_out_bytes_total", C,
                          "Payload bytes of the UDP datagrams sent", 1),
        "udp_out_unresolved_dgrams": ("ewyk_net_udp_out_unresolved_datagrams_total", C,
                                      "UDP datagrams not sent: the peer's MAC unknown yet", 1),
        "icmp_unreachable_out_pkts": ("ewyk_net_icmp_unreachable_out_packets_total", C,
                                      "ICMP Port Unreachables sent (IPv4)", 1),
        "icmp_errors_limited_pkts": ("ewyk_net_icmp_errors_limited_packets_total", C,
                                     "ICMP errors not sent: over the budget (IPv4)", 1),
        "open_conns": ("ewyk_tcp_open_connections", G, "TCP connections open", 1),
        "open_conns_ip6": ("ewyk_tcp_open_ipv6_connections", G,
                           "TCP connections open over IPv6", 1),
        "closed_conns": ("ewyk_tcp_closed_connections_total", C,
                         "TCP connections closed", 1),
        "mbufs_in_use_mbufs": ("ewyk_mbufs_in_use", G,
                               "mbufs of the pool in use (idle: those held by the RX rings)", 1),
        "mbufs_total_mbufs": ("ewyk_mbufs_pool_size", G, "mbufs in the pool", 1),
        "link_up": ("ewyk_link_up", G, "Every port's link is up (1) or one is down (0)", 1),
        "link_downs_count": ("ewyk_link_downs_total", C, "Times a link went down", 1),
        "link_ups_count": ("ewyk_link_ups_total", C, "Times the links came back up", 1),
    },
    "/ewyk/tcp": {
        "syn_received_conns": ("ewyk_tcp_syn_received_connections", G,
                               "TCP connections in SYN-RECEIVED", 1),
        "time_wait_conns": ("ewyk_tcp_time_wait_connections", G,
                            "TCP connections in TIME-WAIT", 1),
        "send_queue_mbufs": ("ewyk_tcp_send_queue_mbufs", G,
                             "mbufs the TCP send queues hold (within their budget)", 1),
        "receive_queue_mbufs": ("ewyk_tcp_receive_queue_mbufs", G,
                                "mbufs the TCP receive queues hold (in order, waiting for "
                                "the application, and out of order)", 1),
        "receive_buffer_bytes": ("ewyk_tcp_receive_buffer_bytes", G,
                                 "The TCP receive buffers' sizes (autotuned)", 1),
        "rwnd_limited_us": ("ewyk_tcp_rwnd_limited_seconds_total", C,
                            "Time sending waited for the peer's receive window", US),
        "zero_window_us": ("ewyk_tcp_zero_window_seconds_total", C,
                           "Time the receive window advertised was closed", US),
        "conn_rings_made_count": ("ewyk_tcp_conn_rings_made", G,
                                  "Blocks of TCP connections' send-side state made "
                                  "(the send queue's chain, the scoreboard's tree)", 1),
        "conn_rings_used_count": ("ewyk_tcp_conn_rings_used", G,
                                  "Blocks of TCP connections' send-side state "
                                  "connections hold", 1),
        "send_queue_chunks_made_count": ("ewyk_tcp_send_queue_chunks_made", G,
                                         "Chunks of TCP send queues' mbuf pointers made "
                                         "(1 KiB each)", 1),
        "send_queue_chunks_used_count": ("ewyk_tcp_send_queue_chunks_used", G,
                                         "Chunks of TCP send queues' mbuf pointers "
                                         "send queues hold", 1),
        "scoreboard_entries_made_count": ("ewyk_tcp_scoreboard_entries_made", G,
                                          "TCP scoreboard entries made (segments in "
                                          "flight; 80 bytes each)", 1),
        "scoreboard_entries_used_count": ("ewyk_tcp_scoreboard_entries_used", G,
                                          "TCP scoreboard entries in use", 1),
        "zero_copy_refs_made_count": ("ewyk_tcp_zero_copy_refs_made", G,
                                      "Blocks of static files' writes sent without a "
                                      "copy, made (64 bytes each)", 1),
        "zero_copy_refs_used_count": ("ewyk_tcp_zero_copy_refs_used", G,
                                      "Blocks of static files' writes whose mbufs are "
                                      "still queued or in flight", 1),
        "receive_queue_memory_bytes": ("ewyk_tcp_receive_queue_memory_bytes", G,
                                       "Memory the TCP receive queues' pools made "
                                       "(their peak, kept)", 1),
    },
    "/ewyk/http": {
        "routes_total": ("ewyk_http_routes", G,
                         "Routes served: every site's and the sites' own", 1),
        "accepted_conns": ("ewyk_http_accepted_connections_total", C,
                           "Connections accepted by HTTP", 1),
        "http2_conns": ("ewyk_http2_connections_total", C, "HTTP/2 connections", 1),
        "refused_conns": ("ewyk_http_refused_connections_total", C,
                          "Connections refused (no room)", 1),
        "body_out_bytes": ("ewyk_http_body_out_bytes_total", C, "Answer body bytes sent", 1),
        "h2_mem_allocs_count": ("ewyk_http2_mem_allocs_total", C,
                                "Blocks handed out by the HTTP/2 memory", 1),
        "h2_mem_grows_count": ("ewyk_http2_mem_grows_total", C,
                               "HTTP/2 memory blocks new from the heap (flat once warm)", 1),
        "h2_mem_held_bytes": ("ewyk_http2_mem_held_bytes", G, "HTTP/2 memory held", 1),
        "h2_mem_huge_count": ("ewyk_http2_mem_huge_total", C,
                              "Large HTTP/2 memory blocks handed out", 1),
        "h2_window_grows_count": ("ewyk_http2_window_grows_total", C,
                                  "HTTP/2 receive windows grown (WINDOW_UPDATEs past "
                                  "what was taken)", 1),
        "h2_window_budget_limited_count": ("ewyk_http2_window_budget_limited_total", C,
                                           "HTTP/2 connection windows the shard's budget "
                                           "held back", 1),
        "limit_rate_refused_reqs": ("ewyk_http_limit_rate_refused_requests_total", C,
                                    "Requests answered 429: beyond a route's limit-rps "
                                    "and limit-burst for their client", 1),
        "limit_conns_refused_reqs": ("ewyk_http_limit_conns_refused_requests_total", C,
                                     "Requests answered 429: their client had a "
                                     "route's limit-conns in progress", 1),
        "limit_evicted_count": ("ewyk_http_limit_evicted_total", C,
                                "Clients' limit entries taken for others while they "
                                "still owed (the table's bound)", 1),
        "limit_untracked_reqs": ("ewyk_http_limit_untracked_requests_total", C,
                                 "Requests served uncounted by the limits: their set "
                                 "of the table all held", 1),
        "compressed_answers_count": ("ewyk_http_compressed_answers_total", C,
                                     "Answers gzipped (routes with compress = on)", 1),
        "compress_in_bytes": ("ewyk_http_compress_in_bytes_total", C,
                              "Bytes of answers before gzip", 1),
        "compress_out_bytes": ("ewyk_http_compress_out_bytes_total", C,
                               "Bytes of answers after gzip", 1),
        "compress_busy_count": ("ewyk_http_compress_busy_total", C,
                                "Answers sent as they were: every compressor of "
                                "their shard busy", 1),
        "compress_streams": ("ewyk_http_compress_streams", G,
                             "Compressors at work", 1),
        "chunked_body_errors_count": ("ewyk_http_chunked_body_errors_total", C,
                                      "Malformed chunked bodies", 1),
        "head_timeouts_count": ("ewyk_http_head_timeouts_total", C,
                                "Request heads not complete in time", 1),
        "h1_idle_releases_count": ("ewyk_http1_idle_releases_total", C,
                                   "Idle HTTP/1.1 connections that gave their state back", 1),
        "h1_released_conns": ("ewyk_http1_released_connections", G,
                              "Open HTTP/1.1 connections holding no state (idle)", 1),
        "idle_closes_count": ("ewyk_http_idle_closes_total", C,
                              "Idle connections closed", 1),
        "pipeline_full_count": ("ewyk_http_pipeline_full_total", C,
                                "Times a connection's pipeline was full", 1),
        "body_buffers_taken_count": ("ewyk_http_body_buffers_taken_total", C,
                                     "Request bodies over 4 KiB gathered whole in a "
                                     "body buffer (--max-body)", 1),
        "body_buffers_busy": ("ewyk_http_body_buffers_busy", G,
                              "Body buffers holding a body now (of --body-buffers "
                              "per shard)", 1),
        "body_buffers_short_count": ("ewyk_http_body_buffers_short_total", C,
                                     "Bodies refused (503) with every body buffer "
                                     "busy", 1),
        "bodies_too_large_count": ("ewyk_http_bodies_too_large_total", C,
                                   "Bodies past --max-body refused (413)", 1),
        "body_timeouts_count": ("ewyk_http_body_timeouts_total", C,
                                "Bodies that stopped coming, cut (408)", 1),
        "http2_streams_count": ("ewyk_http2_streams_total", C, "HTTP/2 streams", 1),
        "http2_open_streams": ("ewyk_http2_open_streams", G, "HTTP/2 streams open", 1),
        "http2_resets_in_count": ("ewyk_http2_resets_in_total", C,
                                  "RST_STREAM frames received", 1),
        "http2_reset_floods_count": ("ewyk_http2_reset_floods_total", C,
                                     "Connections closed for a rapid-reset flood", 1),
    },
    "/ewyk/reserved": {
        "size_lcores": ("ewyk_reserved_lcores", G,
                        "Worker lcores in the reserved pool, shard owners included", 1),
        "spare_lcores": ("ewyk_reserved_configured_lcores", G,
                         "Worker lcores beyond the shards' (--reserved): reserved "
                         "lcores owning no shard", 1),
        "spinning_lcores": ("ewyk_reserved_spinning_lcores", G,
                            "Reserved lcores spinning, ready to take a shard", 1),
        "parked_lcores": ("ewyk_reserved_parked_lcores", G, "Reserved lcores parked", 1),
        "claim_races_count": ("ewyk_reserved_claim_races_total", C,
                              "Claims of a reserved lcore that lost a race", 1),
        "blocking_threads": ("ewyk_blocking_threads", G, "Blocking pool threads", 1),
        "blocking_idle_threads": ("ewyk_blocking_idle_threads", G,
                                  "Blocking pool threads idle", 1),
        "blocking_queued_tasks": ("ewyk_blocking_queued_tasks", G,
                                  "Tasks queued to the blocking pool", 1),
        "blocking_executed_tasks": ("ewyk_blocking_executed_tasks_total", C,
                                    "Tasks the blocking pool ran", 1),
        "blocking_rejected_tasks": ("ewyk_blocking_rejected_tasks_total", C,
                                    "Tasks the blocking pool refused (queue full: 503)", 1),
        "blocking_reaped_threads": ("ewyk_blocking_reaped_threads_total", C,
                                    "Idle blocking pool threads reaped", 1),
    },
    "/ewyk/conflate": {
        "keys_count": ("ewyk_store_keys", G, "Keys in the store", 1),
        "puts_count": ("ewyk_store_puts_total", C, "PUTs to the store", 1),
        "gets_count": ("ewyk_store_gets_total", C, "GETs from the store", 1),
        "offers_count": ("ewyk_store_offers_total", C,
                         "Values offered to the conflating write-behind", 1),
        "superseded_count": ("ewyk_store_superseded_total", C,
                             "Offers conflated: replaced before they were written", 1),
        "applied_count": ("ewyk_store_applied_total", C, "Values written behind", 1),
        "persist_batches_count": ("ewyk_store_persist_batches_total", C,
                                  "Journal batches written", 1),
        "fsyncs_count": ("ewyk_store_fsyncs_total", C, "fsync calls on the journal", 1),
        "compactions_count": ("ewyk_store_compactions_total", C, "Journal compactions", 1),
        "journal_bytes": ("ewyk_store_journal_bytes", G, "Size of the journal", 1),
        "version_count": ("ewyk_store_version", G, "Last version handed out", 1),
        "persisted_version_count": ("ewyk_store_persisted_version", G,
                                    "Last version on disk", 1),
        "lag_versions": ("ewyk_store_lag_versions", G,
                         "Versions handed out that are not on disk yet", 1),
        "recovered_records": ("ewyk_store_recovered_records", G,
                              "Journal records recovered at start", 1),
        "torn_offset_bytes": ("ewyk_store_torn_offset_bytes", G,
                              "Offset of a torn journal tail found at start (-1: none)", 1),
        "journal_errors_count": ("ewyk_store_journal_errors_total", C,
                                 "Failed writes and syncs of the journal (a full disk)", 1),
        "journal_errno": ("ewyk_store_journal_errno", G,
                          "errno of the last failed journal write while not mended (0)", 1),
    },
}

FLAT["/ewyk/quic"] = {
    "enabled": ("ewyk_quic_enabled", G, "1 when HTTP/3 is served (--http3)", 1),
    "port": ("ewyk_quic_port", G, "The UDP port of HTTP/3 (--quic-port)", 1),
    "dgrams_in_count": ("ewyk_quic_datagrams_in_total", C, "Datagrams to the QUIC port", 1),
    "dgrams_out_count": ("ewyk_quic_datagrams_out_total", C, "Datagrams the QUIC port sent", 1),
    "in_bytes": ("ewyk_quic_in_bytes_total", C, "UDP payload received on the QUIC port", 1),
    "out_bytes": ("ewyk_quic_out_bytes_total", C, "UDP payload sent from the QUIC port", 1),
    "dropped_count": ("ewyk_quic_dropped_datagrams_total", C,
                      "Datagrams that were not QUIC or named no connection", 1),
    "version_negotiations_count": ("ewyk_quic_version_negotiations_total", C,
                                   "Version Negotiation packets sent", 1),
    "retries_count": ("ewyk_quic_retries_total", C,
                      "Retry packets sent: a new client to prove its address first", 1),
    "bad_tokens_count": ("ewyk_quic_bad_tokens_total", C,
                         "Initials with a token not ewykd's, or stale (a Retry's "
                         "dropped, a NEW_TOKEN's taken as none)", 1),
    "new_tokens_count": ("ewyk_quic_new_tokens_total", C,
                         "NEW_TOKEN frames sent after a handshake", 1),
    "tokens_accepted_count": ("ewyk_quic_tokens_accepted_total", C,
                              "Initials whose NEW_TOKEN token proved the address", 1),
    "token_key_rotations_count": ("ewyk_quic_token_key_rotations_total", C,
                                  "Rotations of the address tokens' keys (one per reload)", 1),
    "accepted_conns": ("ewyk_quic_accepted_connections_total", C, "QUIC connections begun", 1),
    "refused_conns": ("ewyk_quic_refused_connections_total", C,
                      "Initials dropped: no connection slot free", 1),
    "handshakes_count": ("ewyk_quic_handshakes_total", C, "QUIC handshakes completed", 1),
    "handshakes_failed_count": ("ewyk_quic_handshakes_failed_total", C,
                                "QUIC connections closed before their handshake ended", 1),
    "closed_conns": ("ewyk_quic_closed_connections_total", C, "QUIC connections ended", 1),
    "idle_timeouts_count": ("ewyk_quic_idle_timeouts_total", C,
                            "QUIC connections ended by their idle timeout", 1),
    "handshake_timeouts_count": ("ewyk_quic_handshake_timeouts_total", C,
                                 "QUIC handshakes dropped unfinished after "
                                 "--tls-handshake-timeout-ms", 1),
    "send_errors_count": ("ewyk_quic_send_errors_total", C,
                          "Datagrams the stack did not take (no buffer, no neighbour)", 1),
    "requests_reqs": ("ewyk_quic_requests_total", C, "HTTP/3 requests", 1),
    "streams_reset_count": ("ewyk_quic_streams_reset_total", C,
                            "HTTP/3 streams reset by the client", 1),
    "h3_errors_count": ("ewyk_quic_h3_errors_total", C,
                        "Connections closed for an HTTP/3 or QPACK error", 1),
    "mem_refused_count": ("ewyk_quic_mem_refused_total", C,
                          "Allocations refused past a connection's --quic-conn-mem: "
                          "its connection closed", 1),
    "mem_bytes": ("ewyk_quic_mem_bytes", G,
                  "Memory ngtcp2 and nghttp3 hold for the open connections", 1),
    "open_conns": ("ewyk_quic_open_connections", G, "QUIC connections open", 1),
    "handshaking_conns": ("ewyk_quic_handshaking_connections", G,
                          "QUIC connections in their handshake", 1),
}

FLAT["/ewyk/tls"] = {
    "enabled": ("ewyk_tls_enabled", G, "1 when a TLS port is served", 1),
    "port": ("ewyk_tls_port", G, "The TLS port (--tls-port)", 1),
    "generation": ("ewyk_tls_credentials_generation", G,
                   "Generation of the certificates served: 1 at start, one more per reload", 1),
    "reloads_count": ("ewyk_tls_reloads_total", C, "Certificate reloads done", 1),
    "reload_failures_count": ("ewyk_tls_reload_failures_total", C,
                              "Certificate reloads refused (the old ones stayed)", 1),
    "ticket_rotations_count": ("ewyk_tls_ticket_key_rotations_total", C,
                               "Session ticket keys replaced on schedule", 1),
    "ticket_key_age_s": ("ewyk_tls_ticket_key_age_seconds", G,
                         "Age of the session ticket key", 1),
    "accepted_conns": ("ewyk_tls_accepted_connections_total", C,
                       "TCP connections to the TLS port", 1),
    "refused_conns": ("ewyk_tls_refused_connections_total", C,
                      "TCP connections to the TLS port refused: no TLS slot free", 1),
    "open_conns": ("ewyk_tls_open_connections", G, "TLS connections open", 1),
    "handshaking_conns": ("ewyk_tls_handshaking_connections", G,
                          "TLS connections in their handshake", 1),
    "hs_steps_offloaded_count": ("ewyk_tls_handshake_steps_offloaded_total", C,
                                 "Handshake steps run as tasks of the strategy", 1),
    "hs_steps_inline_count": ("ewyk_tls_handshake_steps_inline_total", C,
                              "Handshake steps run on the shard's lcore as they came", 1),
    "hs_staging_waits_count": ("ewyk_tls_handshake_staging_waits_total", C,
                               "ClientHellos left for the client to send again: every "
                               "staging buffer busy (a flood)", 1),
    "hs_cpu_us": ("ewyk_tls_handshake_cpu_seconds_total", C,
                  "CPU time of handshake steps, wherever they ran", US),
    "renegotiations_refused_count": ("ewyk_tls_renegotiations_refused_total", C,
                                     "TLS 1.2 renegotiations refused", 1),
    "close_notify_sent_count": ("ewyk_tls_close_notify_sent_total", C,
                                "close_notify alerts sent", 1),
    "close_notify_received_count": ("ewyk_tls_close_notify_received_total", C,
                                    "close_notify alerts received", 1),
    "records_in_count": ("ewyk_tls_records_in_total", C, "Application data records received", 1),
    "records_out_count": ("ewyk_tls_records_out_total", C, "Application data records sent", 1),
    "records_held_count": ("ewyk_tls_records_held_total", C,
                           "Records HTTP took in parts (its receive space was smaller)", 1),
    "plaintext_in_bytes": ("ewyk_tls_plaintext_in_bytes_total", C,
                           "Bytes decrypted from application data records", 1),
    "plaintext_out_bytes": ("ewyk_tls_plaintext_out_bytes_total", C,
                            "Bytes encrypted into application data records", 1),
    "record_errors_count": ("ewyk_tls_record_errors_total", C,
                            "Established connections ended by a fatal record error", 1),
    "credential_switches_count": ("ewyk_tls_credential_switches_total", C,
                                  "Shards taking up a new generation of certificates", 1),
    "mem_cache_hits_count": ("ewyk_tls_mem_cache_hits_total", C,
                             "GnuTLS record buffers served by the per-thread caches", 1),
    "mem_cache_grows_count": ("ewyk_tls_mem_cache_grows_total", C,
                              "Blocks the caches carved anew (flat once warm)", 1),
    "mem_cache_too_large_count": ("ewyk_tls_mem_cache_too_large_total", C,
                                  "Allocations in a record call too large for the caches", 1),
    "mem_cache_remote_frees_count": ("ewyk_tls_mem_cache_remote_frees_total", C,
                                     "Cache blocks freed by another thread than their own", 1),
    "mem_cache_bytes": ("ewyk_tls_mem_cache_bytes", G, "Bytes the caches carved", 1),
    "cert_expires_in_s": ("ewyk_tls_cert_expires_in_seconds", G,
                          "Time until the soonest certificate served expires", 1),
}

SKIP = {
    # Sums or copies of what is exported labelled elsewhere.
    "/ewyk/info": {"version", "dpdk", "ip", "listen_port", "port_id", "port_name",
                   "tx_cksum", "rx_cksum", "tx_segments", "idle", "shard_lcores", "www",
                   "ip6", "ip6_state", "ip6_link_local", "ip6_link_local_state",
                   "ip6_multicast", "gateway", "gateway6"},
    "/ewyk/stats": {"drop_pkts", "drop_by_reason_pkts", "total_conns", "refused_conns",
                    "tcp_retransmit_segs", "tcp_reset_out_segs", "requests_reqs",
                    "requests_by_status_reqs", "body_out_bytes", "rx_ip4_pkts",
                    "rx_ip6_pkts", "tx_ip4_pkts", "tx_ip6_pkts"},
    "/ewyk/tcp": {"open_conns", "open_conns_ip6", "drop_by_reason_pkts"},
    "/ewyk/http": {"requests_reqs", "http1_reqs", "http2_reqs", "by_status_reqs",
                   "by_method_reqs", "http2_resets_out_by_error",
                   "http2_goaways_out_by_error"},
    "/ewyk/reserved": {"claims_won_count", "claims_missed_count"},
    "/ewyk/conflate": {"state_dir"},
    "/ewyk/tls": {"priority", "certs", "handshakes_full_count", "handshakes_resumed_count",
                  "handshakes_failed_count", "handshakes_failed_by_reason", "tls12_conns",
                  "tls13_conns", "alpn_h2_conns", "alpn_http11_conns", "alpn_none_conns",
                  "cipher_conns"},
}

PER_SHARD = {
    "/ewyk/shards": {
        "lcore": ("ewyk_shard_lcore", G, "lcore that owns the shard", 1),
        "queue": ("ewyk_shard_queue", G, "RX/TX queue of the shard", 1),
        "rx_pkts": ("ewyk_shard_rx_packets_total", C, "Packets received by the shard", 1),
        "tx_pkts": ("ewyk_shard_tx_packets_total", C, "Packets sent by the shard", 1),
        "open_conns": ("ewyk_shard_open_connections", G, "Connections open on the shard", 1),
        "total_conns": ("ewyk_shard_accepted_connections_total", C,
                        "Connections the shard accepted", 1),
        "requests_reqs": ("ewyk_shard_requests_total", C, "Requests on the shard", 1),
        "polls_count": ("ewyk_shard_polls_total", C, "Polls of the shard", 1),
        "busy_polls_count": ("ewyk_shard_busy_polls_total", C,
                             "Polls that found packets", 1),
        "idle_sleeps_count": ("ewyk_shard_idle_sleeps_total", C,
                              "Short sleeps of an idle shard", 1),
    },
    "/ewyk/strategy": {
        "failed_tasks": ("ewyk_strategy_failed_tasks_total", C,
                         "Tasks that failed to run", 1),
        "rejected_tasks": ("ewyk_strategy_rejected_tasks_total", C,
                           "Tasks rejected (overload)", 1),
        "steals_count": ("ewyk_strategy_steals_total", C,
                         "Times the shard was stolen from an owner stuck in a request", 1),
        "watched_tasks": ("ewyk_strategy_watched_tasks_total", C,
                          "EPC requests run on the shard's lcore while a reserved lcore "
                          "watched (--handoff-us)", 1),
        "completions_count": ("ewyk_strategy_completions_total", C,
                              "Answers posted through the completion ring", 1),
        "stale_answers_count": ("ewyk_strategy_stale_answers_total", C,
                                "Answers for a stream or connection that had died", 1),
        "overloaded_reqs": ("ewyk_strategy_overloaded_requests_total", C,
                            "Requests answered 503 for overload", 1),
        "deferred_reqs": ("ewyk_strategy_deferred_requests_total", C,
                          "Requests deferred", 1),
        "helper_cpu_room": ("ewyk_strategy_helper_cpu_room", G,
                            "1 while the blocking pool's CPUs have half a CPU "
                            "free of other processes' work", 1),
        "helper_cpu_others_pct": ("ewyk_strategy_helper_cpu_others_percent", G,
                                  "Other processes' share of the pool's CPUs", 1),
        "tls_inline_no_room_count": ("ewyk_strategy_tls_inline_no_room_total", C,
                                     "Full TLS handshakes kept inline: the pool's "
                                     "CPUs busy with others", 1),
        "tls_spilled_no_room_count": ("ewyk_strategy_tls_spilled_no_room_total", C,
                                      "Full TLS handshakes handed over without room: "
                                      "one ran inline within the last millisecond", 1),
        "fiber_fallback_tasks": ("ewyk_fiber_fallback_tasks_total", C,
                                 "Fiber requests run otherwise: no fiber free", 1),
        "fiber_stacks_count": ("ewyk_fiber_stacks", G, "Fiber stacks made (each a mapping)", 1),
        "fibers_in_use_count": ("ewyk_fibers_in_use", G, "Fibers started, not finished", 1),
        "fibers_peak_count": ("ewyk_fibers_peak", G, "Most fibers alive at once", 1),
        "fibers_started_count": ("ewyk_fibers_started_total", C, "Fibers started", 1),
        "fibers_finished_count": ("ewyk_fibers_finished_total", C, "Fibers finished", 1),
        "fiber_switches_count": ("ewyk_fiber_switches_total", C, "Switches into a fiber", 1),
        "fibers_waiting_count": ("ewyk_fibers_waiting", G, "Fibers parked on a wait", 1),
        "fiber_parks_count": ("ewyk_fiber_parks_total", C, "Waits a fiber parked on", 1),
        "fiber_wakes_count": ("ewyk_fiber_wakes_total", C, "Waits ended by their event", 1),
        "fiber_timeouts_count": ("ewyk_fiber_timeouts_total", C,
                                 "Waits ended by their timer (sleeps included)", 1),
        "fibers_cancelled_count": ("ewyk_fibers_cancelled_total", C,
                                   "Waits ended because the client left", 1),
        "fiber_no_stack_count": ("ewyk_fiber_no_stack_total", C,
                                 "Fiber requests answered 503: no stack could be made", 1),
    },
}

SHARD_SKIP = {"/ewyk/shards": set(),
              "/ewyk/strategy": {"mode", "state", "pc_tasks", "pic_tasks", "pec_tasks",
                                 "epc_tasks", "fiber_tasks", "delay_reqs", "blocking_delay_reqs", "spin_reqs", "either_reqs",
                                 "owner_lcore"}}
MODES = ("adaptive", "pc", "pec", "epc")
STATES = ("idle", "producing", "reproducing")


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def area(cmd):
    return cmd.rsplit("/", 1)[-1]


def clean(name):
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


class Families:
    """Metric families built from one reading, keyed by name."""

    def __init__(self):
        self.fams = {}

    def get(self, name, kind, doc, labels=()):
        f = self.fams.get(name)
        if f is None:
            if kind == C:
                f = CounterMetricFamily(name, doc, labels=list(labels))
            elif kind == G:
                f = GaugeMetricFamily(name, doc, labels=list(labels))
            else:
                f = UnknownMetricFamily(name, doc, labels=list(labels))
            self.fams[name] = f
        return f

    def add(self, name, kind, doc, value, labels=None, scale=1):
        labels = labels or {}
        f = self.get(name, kind, doc, sorted(labels))
        f.add_metric([labels[k] for k in sorted(labels)], value / scale if scale != 1 else value)

    def unmapped(self, cmd, key, value, labels=None):
        """A key the tables do not know: exported untyped, by its own name."""
        if is_num(value):
            self.add(clean(f"ewyk_{area(cmd)}_{key}"), "untyped",
                     f"{cmd} {key} (not yet mapped by ewyk-exporter)", value, labels)


def flat(fams, cmd, reply):
    table, skip = FLAT.get(cmd, {}), SKIP.get(cmd, set())
    for key, value in reply.items():
        if key in skip:
            continue
        if key in table and is_num(value):
            name, kind, doc, scale = table[key]
            fams.add(name, kind, doc, value, scale=scale)
        else:
            fams.unmapped(cmd, key, value)


def collect_info(fams, r):
    info = {k: str(r.get(k, "")) for k in ("version", "dpdk", "ip", "ip6",
                                            "listen_port", "port_name", "tx_cksum",
                                            "rx_cksum", "tx_segments", "idle")}
    www = r.get("www") or {}
    info["www_root"] = str(www.get("root", ""))
    f = InfoMetricFamily("ewyk_appliance", "ewykd's version and configuration")
    f.add_metric([], info)
    fams.fams["ewyk_appliance"] = f
    fams.add("ewyk_www_files", G, "Static files preloaded", www.get("files", 0))
    fams.add("ewyk_www_bytes", G, "Size of the static files preloaded",
             www.get("size_bytes", 0))
    flat(fams, "/ewyk/info", r)


def collect_stats(fams, r):
    flat(fams, "/ewyk/stats", r)
    for direction in ("rx", "tx"):
        for fam in ("ip4", "ip6"):
            key = f"{direction}_{fam}_pkts"
            if is_num(r.get(key)):
                fams.add("ewyk_net_family_packets_total", C,
                         "IP packets received and sent, by family", r[key],
                         {"direction": direction,
                          "family": "ipv4" if fam == "ip4" else "ipv6"})
    for reason, v in (r.get("drop_by_reason_pkts") or {}).items():
        fams.add("ewyk_net_dropped_packets_total", C,
                 "Packets dropped, by reason (malformed frames, no room, ...)",
                 v, {"reason": reason})


def collect_tcp(fams, r):
    for key, v in r.items():
        if key.endswith("_count") and is_num(v):
            fams.add(f"ewyk_tcp_{key[:-6]}_total", C,
                     f"TCP {key[:-6].replace('_', ' ')} (netstat -s)", v)
    flat(fams, "/ewyk/tcp", {k: v for k, v in r.items() if not k.endswith("_count")})


def collect_http(fams, r):
    for proto in ("http1", "http2"):
        fams.add("ewyk_http_requests_total", C, "Requests, by protocol",
                 r.get(f"{proto}_reqs", 0), {"protocol": proto})
    for status, v in (r.get("by_status_reqs") or {}).items():
        fams.add("ewyk_http_responses_total", C, "Answers, by status", v,
                 {"status": status})
    for method, v in (r.get("by_method_reqs") or {}).items():
        fams.add("ewyk_http_requests_by_method_total", C, "Requests, by method", v,
                 {"method": method})
    for key, name, doc in (("http2_resets_out_by_error", "ewyk_http2_resets_out_total",
                            "RST_STREAM frames sent, by error"),
                           ("http2_goaways_out_by_error", "ewyk_http2_goaways_out_total",
                            "GOAWAY frames sent, by error")):
        for err, v in (r.get(key) or {}).items():
            fams.add(name, C, doc, v, {"error": err})
    rest = {}
    for key, v in r.items():
        # Every site's routes as route_PATH, a site's own as
        # site_SITE_route_PATH (its site label set).
        if is_route(key, v):
            lab = {"route": str(v.get("path", key)), "match": str(v.get("match", "")),
                   "site": str(v.get("site", ""))}
            fams.add("ewyk_http_route_requests_total", C, "Requests, by route",
                     v.get("requests_reqs", 0), lab)
            fams.add("ewyk_http_route_server_errors_total", C,
                     "5xx answers, by route", v.get("server_errors_reqs", 0), lab)
            for q in ("50", "90", "99"):
                # Percentiles of ewykd's own histogram (no sum is kept, so
                # not a summary): one gauge each.
                fams.add(f"ewyk_http_route_latency_p{q}_seconds", G,
                         f"{q}th percentile of the latency from the request parsed to "
                         "its answer back on its shard, by route (since start)",
                         v.get(f"p{q}_ns", 0), lab, NS)
            fams.add("ewyk_http_route_latency_max_seconds", G,
                     "Longest latency, by route (since start)", v.get("max_ns", 0), lab, NS)
        else:
            rest[key] = v
    flat(fams, "/ewyk/http", rest)


def collect_per_shard(fams, cmd, r):
    table, skip = PER_SHARD[cmd], SHARD_SKIP[cmd]
    for sk, sd in r.items():
        if not isinstance(sd, dict):
            continue
        shard = sk.split("_", 1)[-1]
        lab = {"shard": shard}
        for key, v in sd.items():
            if key in skip:
                continue
            if key in table and is_num(v):
                name, kind, doc, scale = table[key]
                fams.add(name, kind, doc, v, lab, scale)
            else:
                fams.unmapped(cmd, key, v, lab)
        if cmd != "/ewyk/strategy":
            continue
        for mode in ("pc", "pic", "pec", "epc", "fiber"):
            fams.add("ewyk_strategy_tasks_total", C,
                     "Requests consumed, by shard and execution mode", sd.get(f"{mode}_tasks", 0),
                     {**lab, "mode": mode})
        for route in ("delay", "blocking_delay", "spin", "either"):
            fams.add("ewyk_strategy_route_requests_total", C,
                     "Requests of the strategy test routes, by shard",
                     sd.get(f"{route}_reqs", 0),
                     {**lab, "route": "/" + route.replace("_", "-")})
        for name, values, cur, doc in (
                ("ewyk_strategy_mode", MODES, sd.get("mode"),
                 "The shard's strategy (adaptive, or one mode forced)"),
                ("ewyk_strategy_state", STATES, sd.get("state"),
                 "The shard's strategy state")):
            f = fams.fams.get(name)
            if f is None:
                f = StateSetMetricFamily(name, doc, labels=["shard"])
                fams.fams[name] = f
            f.add_metric([shard], {m: m == cur for m in values})


def collect_reserved(fams, r):
    for key, result in (("claims_won_count", "won"), ("claims_missed_count", "missed")):
        fams.add("ewyk_reserved_claims_total", C,
                 "Claims of a reserved lcore (tryExecute), by result", r.get(key, 0),
                 {"result": result})
    flat(fams, "/ewyk/reserved", r)


def collect_lcores(fams, r):
    for lk, ld in r.items():
        if not isinstance(ld, dict):
            continue
        lab = {"lcore": lk.split("_", 1)[-1]}
        fams.add("ewyk_lcore_role", G, "The lcore's role (main, shard_owner, reserved)", 1,
                 {**lab, "role": str(ld.get("role", ""))})
        fams.add("ewyk_lcore_owned_shard", G, "Shard the lcore owns (-1: none)",
                 ld.get("owns_shard", -1), lab)
        for state in ("producing", "consuming", "idle"):
            fams.add("ewyk_lcore_seconds_total", C,
                     "Time the lcore spent producing, consuming and idle",
                     ld.get(f"{state}_us", 0), {**lab, "state": state}, US)
        fams.add("ewyk_lcore_inline_tasks_total", C,
                 "Tasks the lcore ran (modes pc, pic, epc, fiber; static files included)",
                 ld.get("inline_tasks", 0), lab)
        for key, v in ld.items():
            if key not in ("role", "owns_shard", "producing_us", "consuming_us", "idle_us",
                           "inline_tasks"):
                fams.unmapped("/ewyk/lcores", key, v, lab)


PORT_COUNTERS = {
    "rx_pkts": ("ewyk_port_rx_packets_total", "Packets the stack received on the port"),
    "tx_pkts": ("ewyk_port_tx_packets_total", "Packets the stack sent on the port"),
    "rx_bytes": ("ewyk_port_rx_bytes_total", "Bytes the stack received on the port"),
    "tx_bytes": ("ewyk_port_tx_bytes_total", "Bytes the stack sent on the port"),
}
# What /ewyk/ports repeats: the identity (in ewyk_port_info or
# ewyk_appliance_info), a sum, and the ethdev's own counters (ewyk_ethdev_*).
PORT_GAUGES = {
    "arp_entries": ("ewyk_port_arp_entries", "Live entries of the port's ARP cache"),
    "nd_entries": ("ewyk_port_nd_entries",
                   "Live entries of the port's IPv6 neighbour cache"),
}
PORT_SKIP = {"ip", "port_id", "port_name", "mac", "mtu", "tx_cksum", "rx_cksum",
             "tx_segments", "link", "link_duplex", "link_speed_mbps", "drop_pkts",
             "drop_by_reason_pkts", "xstats", "ip6", "ip6_link_local", "ip6_multicast",
             "ip6_state", "ip6_link_local_state", "gateway", "gateway6", "tso"}


def collect_ports(fams, r):
    for pk, pd in r.items():
        if not isinstance(pd, dict):
            continue
        lab = {"port": pk.split("_", 1)[-1]}
        fams.add("ewyk_port_info", G, "A port ewykd serves: its name, addresses and MAC",
                 1, {**lab, "name": str(pd.get("port_name", "")),
                     "ip": str(pd.get("ip", "")), "ip6": str(pd.get("ip6", "")),
                     "ip6_link_local": str(pd.get("ip6_link_local", "")),
                     "gateway": str(pd.get("gateway", "")),
                     "gateway6": str(pd.get("gateway6", "")),
                     "tso": str(pd.get("tso", "")),
                     "mac": str(pd.get("mac", ""))})
        for addr, key in (("global", "ip6_state"), ("link_local", "ip6_link_local_state")):
            if pd.get(key):
                fams.add("ewyk_port_ip6_duplicate", G,
                         "1 while another node has this IPv6 address of the port: "
                         "it is not used", 1 if pd[key] == "duplicate" else 0,
                         {**lab, "address": addr})
        fams.add("ewyk_port_link_up", G, "1 while the port's link is up",
                 1 if pd.get("link") == "up" else 0, lab)
        fams.add("ewyk_port_speed_bytes", G, "The link's speed, bytes per second",
                 pd.get("link_speed_mbps", 0) * 1e6 / 8, lab)
        for reason, v in (pd.get("drop_by_reason_pkts") or {}).items():
            fams.add("ewyk_port_dropped_packets_total", C,
                     "Packets the stack dropped on the port, by reason", v,
                     {**lab, "reason": reason})
        for key, v in pd.items():
            if key in PORT_COUNTERS and is_num(v):
                name, doc = PORT_COUNTERS[key]
                fams.add(name, C, doc, v, lab)
            elif key in PORT_GAUGES and is_num(v):
                name, doc = PORT_GAUGES[key]
                fams.add(name, G, doc, v, lab)
            elif key not in PORT_SKIP and not key.startswith("eth_"):
                fams.unmapped("/ewyk/ports", key, v, lab)


ETHDEV_STATS = {
    # DPDK's names, renamed as DPDK's own exporter (24.07) does.
    "ipackets": ("rx_packets", "Packets received by the port"),
    "opackets": ("tx_packets", "Packets sent by the port"),
    "ibytes": ("rx_bytes", "Bytes received by the port"),
    "obytes": ("tx_bytes", "Bytes sent by the port"),
    "imissed": ("rx_missed", "Packets the port dropped: RX queues full"),
    "ierrors": ("rx_errors", "Erroneous packets received"),
    "oerrors": ("tx_errors", "Packets the port failed to send"),
    "rx_nombuf": ("rx_nombuf", "RX mbuf allocation failures"),
}


def collect_ethdev(fams, ports):
    for port, d in ports.items():
        info = d.get("info") or {}
        name = str(info.get("name", port))
        lab = {"port": port}
        fams.add("ewyk_ethdev_info", G, "The DPDK port and its name", 1,
                 {**lab, "name": name})
        stats = d.get("stats") or {}
        for key, v in stats.items():
            if key in ETHDEV_STATS and is_num(v):
                n, doc = ETHDEV_STATS[key]
                fams.add(f"ewyk_ethdev_{n}_total", C, doc, v, lab)
            elif key.startswith("q_") and isinstance(v, list):
                for q, qv in enumerate(v):
                    if is_num(qv):
                        fams.add(f"ewyk_ethdev_queue_{key[2:]}_total", C,
                                 f"Per queue {key[2:]} of the port", qv,
                                 {**lab, "queue": str(q)})
        for key, v in (d.get("xstats") or {}).items():
            if is_num(v):
                fams.add("ewyk_ethdev_xstats_total", C,
                         "The port's extended statistics (rte_eth_xstats), by name",
                         v, {**lab, "xstat": key})


def collect_tls(fams, r):
    if not r.get("enabled"):
        fams.add("ewyk_tls_enabled", G, "1 when a TLS port is served", 0)
        return
    for kind in ("full", "resumed"):
        fams.add("ewyk_tls_handshakes_total", C, "TLS handshakes completed, by kind",
                 r.get(f"handshakes_{kind}_count", 0), {"kind": kind})
    for reason, v in (r.get("handshakes_failed_by_reason") or {}).items():
        fams.add("ewyk_tls_handshake_failures_total", C, "TLS handshakes failed, by reason",
                 v, {"reason": reason})
    for version, key in (("1.2", "tls12_conns"), ("1.3", "tls13_conns")):
        fams.add("ewyk_tls_connections_total", C,
                 "TLS connections established, by protocol version", r.get(key, 0),
                 {"version": version})
    for proto, key in (("h2", "alpn_h2_conns"), ("http/1.1", "alpn_http11_conns"),
                       ("none", "alpn_none_conns")):
        fams.add("ewyk_tls_alpn_total", C, "TLS connections established, by ALPN result",
                 r.get(key, 0), {"protocol": proto})
    for cipher, v in (r.get("cipher_conns") or {}).items():
        fams.add("ewyk_tls_ciphers_total", C, "TLS connections established, by cipher",
                 v, {"cipher": cipher})
    for idx, c in (r.get("certs") or {}).items():
        if not isinstance(c, dict):
            continue
        lab = {"cert": idx, "name": str(c.get("name", "")),
               "key_type": str(c.get("key_type", ""))}
        fams.add("ewyk_tls_cert_expiry_timestamp_seconds", G,
                 "When each certificate served expires (seconds since the epoch)",
                 c.get("not_after_s", 0), lab)
        fams.add("ewyk_tls_cert_ocsp_stapled", G,
                 "1 when an OCSP response is stapled with the certificate",
                 c.get("ocsp_stapled", 0), lab)
    info = InfoMetricFamily("ewyk_tls", "The TLS priority string (default: ewyk's own)")
    info.add_metric([], {"priority": str(r.get("priority", ""))})
    fams.fams["ewyk_tls"] = info
    flat(fams, "/ewyk/tls", r)


COLLECT = {
    "/ewyk/info": collect_info,
    "/ewyk/stats": collect_stats,
    "/ewyk/tcp": collect_tcp,
    "/ewyk/http": collect_http,
    "/ewyk/shards": lambda f, r: collect_per_shard(f, "/ewyk/shards", r),
    "/ewyk/strategy": lambda f, r: collect_per_shard(f, "/ewyk/strategy", r),
    "/ewyk/reserved": collect_reserved,
    "/ewyk/lcores": collect_lcores,
    "/ewyk/conflate": lambda f, r: flat(f, "/ewyk/conflate", r),
    "/ewyk/ports": collect_ports,
    "/ewyk/tls": collect_tls,
    "/ewyk/quic": lambda f, r: flat(f, "/ewyk/quic", r),
}


class Collector:
    def __init__(self, reader):
        self.reader = reader

    def collect(self):
        snap = self.reader.read()
        fams = Families()
        fams.add("ewyk_up", G, "1 when ewykd answers on its telemetry socket", snap["up"])
        fams.add("ewyk_exporter_scrape_duration_seconds", G,
                 "Time the last reading of the telemetry socket took", snap["duration"])
        fams.add("ewyk_exporter_reconnects_total", C,
                 "Times the exporter connected again to a restarted ewykd",
                 self.reader.reconnects)
        fams.add("ewyk_exporter_telemetry_errors_total", C,
                 "Readings that failed (ewykd stopped or unreachable)", self.reader.errors)
        if snap["up"]:
            for cmd, reply in snap["replies"].items():
                if isinstance(reply, dict):
                    COLLECT[cmd](fams, reply)
            collect_ethdev(fams, snap["ethdev"])
        return list(fams.fams.values())


# -- the web side --------------------------------------------------------

STATIC_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript",
                ".css": "text/css"}


def find_dashboard():
    here = os.path.dirname(os.path.realpath(__file__))
    for d in (DASHBOARD_DIR, os.path.join(here, "dashboard")):	# built, or the source
        if os.path.isfile(os.path.join(d, "index.html")):
            return d
    return None


def make_handler(registry, reader, dashboard, chartjs):
    class Handler(BaseHTTPRequestHandler):
        server_version = "ewyk-exporter/" + VERSION

        def log_message(self, fmt, *args):
            pass

        def send(self, code, ctype, body, extra=()):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for k, v in extra:
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def file(self, path):
            try:
                with open(path, "rb") as f:
                    body = f.read()
            except OSError:
                return self.send(404, "text/plain", b"not found\n")
            self.send(200, STATIC_TYPES.get(os.path.splitext(path)[1],
                                            "application/octet-stream"), body)

        def do_GET(self):
            path = urlsplit(self.path).path
            if path == "/metrics":
                encoder, ctype = choose_encoder(self.headers.get("Accept"))
                return self.send(200, ctype, encoder(registry))
            if path == "/api/snapshot":
                snap = reader.read()
                body = json.dumps({k: snap[k] for k in ("time", "duration", "up", "replies",
                                                         "ethdev")})
                return self.send(200, "application/json", body.encode())
            if path == "/healthz":
                return self.send(200, "text/plain", b"ok\n")
            if dashboard is None:
                return self.send(404, "text/plain", b"dashboard not installed\n")
            if path == "/":
                return self.file(os.path.join(dashboard, "index.html"))
            if path == "/static/chart.umd.js":
                return self.file(os.path.join(chartjs, "chart.min.js"))
            if path.startswith("/static/"):
                name = path[len("/static/"):]
                if "/" not in name and not name.startswith("."):
                    return self.file(os.path.join(dashboard, name))
            return self.send(404, "text/plain", b"not found\n")

        do_HEAD = do_GET

    return Handler


def parse_listen(s):
    host, sep, port = s.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"--listen {s}: expected ADDR:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="ewyk-exporter",
        description="Prometheus metrics (/metrics) and a live dashboard (/) for a "
                    "running ewykd, read from its DPDK telemetry socket.")
    p.add_argument("--file-prefix", default="rte",
                   help="ewykd's EAL --file-prefix (default: rte): the socket is "
                        "RUNTIME/PREFIX/dpdk_telemetry.v2")
    p.add_argument("--runtime-dir", default=None,
                   help="DPDK's runtime directory, as the EAL chooses it: "
                        "$RUNTIME_DIRECTORY/dpdk (systemd's RuntimeDirectory=), else "
                        "/var/run/dpdk for root, else $XDG_RUNTIME_DIR/dpdk or /tmp/dpdk")
    p.add_argument("--socket", default=None,
                   help="the telemetry socket's path (overrides --file-prefix)")
    p.add_argument("--listen", default="127.0.0.1:9110", type=parse_listen,
                   help="ADDR:PORT to serve on (default: 127.0.0.1:9110)")
    p.add_argument("--timeout", type=float, default=1.0,
                   help="seconds to wait for each telemetry reply (default: 1)")
    p.add_argument("--min-interval", type=float, default=0.25,
                   help="scrapes closer than this share one reading (default: 0.25 s)")
    p.add_argument("--chartjs-dir", default=CHARTJS_DIR,
                   help=f"where Chart.js is installed (default: {CHARTJS_DIR}, "
                        "Debian's libjs-chart.js)")
    p.add_argument("--version", action="version", version="ewyk-exporter " + VERSION)
    a = p.parse_args(argv)

    path = a.socket
    if path is None:
        rt = a.runtime_dir
        if rt is None:
            base = os.environ.get("RUNTIME_DIRECTORY")
            if base is None:
                base = ("/var/run" if os.getuid() == 0 else
                        os.environ.get("XDG_RUNTIME_DIR", "/tmp"))
            rt = os.path.join(base, "dpdk")
        path = os.path.join(rt, a.file_prefix, "dpdk_telemetry.v2")

    reader = Reader(Telemetry(path, a.timeout), a.min_interval)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(Collector(reader))
    dashboard = find_dashboard()
    host, port = a.listen
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.address_family = (socket.AF_INET6 if ":" in host
                                          else socket.AF_INET)
    try:
        srv = ThreadingHTTPServer((host, port), make_handler(registry, reader, dashboard,
                                                              a.chartjs_dir))
    except OSError as e:
        print(f"ewyk-exporter: cannot listen on {host}:{port}: {e.strerror}", file=sys.stderr)
        return 1
    print(f"ewyk-exporter: serving http://{host}:{srv.server_address[1]}/ "
          f"(metrics at /metrics) from {path}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sys.exit(main())
