# UDP flood into an ewykd port: junk that every layer of ewykd must drop,
# count by reason (udp_no_port), answer within the budget of its Port
# Unreachables (100 a second) and free, while it goes on serving its other
# ports. dpdk-testpmd (DPDK 22.11, Debian package dpdk), txonly forwarding:
# 64-byte IPv4/UDP frames, as fast as the port takes them.
#
# Run it as a memif client of ewykd's port (ewykd the server), with the
# addresses on the command line, since testpmd 22.11 has no command for
# --tx-ip and the peer's MAC is known only once ewykd runs:
#
#   MAC=$(echo /ewyk/ports | dpdk-telemetry.py -f PREFIX ...)   # port_N mac
#   dpdk-testpmd -l 0,1 --no-pci --file-prefix flood \
#     --vdev net_memif0,role=client,socket=/run/ewyk/memif1.sock,socket-abstract=no \
#     -- --cmdline-file=pktgen-scripts/testpmd/udp-flood.cmd \
#     --eth-peer=0,$MAC --tx-ip=198.18.0.129,198.18.0.130 --tx-udp=9,9 \
#     --no-lsc-interrupt --stats-period 1
#
# Without a terminal, testpmd starts forwarding once this file is read and
# floods until SIGINT; interactively (-i), type "start", then "stop".
# Watch ewykd meanwhile: /ewyk/ports (that port's drop_by_reason_pkts
# udp_no_port rises with its rx_pkts, its eth_rx_missed_pkts shows what the
# ring could not take) and /ewyk/stats (mbufs_in_use_mbufs back to its
# idle level once the flood stops). tests/integration/test_ports.py runs
# this file.
set fwd txonly
set txpkts 64
set burst 32
