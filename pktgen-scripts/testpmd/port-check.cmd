# What ewykd needs of port 0, for dpdk-testpmd 22.11 (Debian 12's dpdk):
#   dpdk-testpmd EAL-OPTIONS -- -i --rxq=2 --txq=2 \
#       --cmdline-file=pktgen-scripts/testpmd/port-check.cmd < /dev/null
# deploy/port-check.sh runs it and reads the answers: link, queues, the RSS
# flow types the port offers and the hash it applies once asked for TCP,
# checksum offloads. testpmd enables RSS only with two queues or more.
show port summary all
show port info 0
show port 0 rx_offload capabilities
show port 0 tx_offload capabilities
port config all rss tcp
show port 0 rss-hash key
quit
