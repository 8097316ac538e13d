/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <stdio.h>

#include "net_addr.h"

size_t
net_addr_format(const struct net_addr *a, uint16_t port, char *buf,
		size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "-";
	bool v6 = a->family == NET_AF_INET6;
	int n;

	if (a->family == NET_AF_INET || v6)
		inet_ntop(v6 ? AF_INET6 : AF_INET, v6 ? (const void *)a->ip.v6 :
				(const void *)&a->ip.v4, ip, sizeof(ip));	/* RFC 5952 */
	if (port == 0)
		n = snprintf(buf, len, "%s", ip);
	else
		n = snprintf(buf, len, v6 ? "[%s]:%u" : "%s:%u", ip, port);
	return n < 0 ? 0 : (size_t)n;
}
