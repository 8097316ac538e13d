/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

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

/* Keeps the first len bits of ip, zeroes the rest. */
static void
mask_bits(union net_ip *ip, uint8_t len)
{
	unsigned int i;

	for (i = 0; i < 16; i++) {
		unsigned int keep = len >= 8 * (i + 1) ? 8 :
			len > 8 * i ? len - 8 * i : 0;

		ip->v6[i] &= (uint8_t)(0xff00u >> keep);
	}
}

int
net_prefix_parse(const char *s, struct net_prefix *p)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	unsigned long len;
	bool v6;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash = '\0';
	memset(p, 0, sizeof(*p));
	v6 = strchr(buf, ':') != NULL;
	if (inet_pton(v6 ? AF_INET6 : AF_INET, buf, v6 ? (void *)p->addr.ip.v6 :
			(void *)&p->addr.ip.v4) != 1)
		return -1;
	p->addr.family = v6 ? NET_AF_INET6 : NET_AF_INET;
	len = v6 ? 128 : 32;
	if (slash != NULL) {
		if (slash[1] < '0' || slash[1] > '9')
			return -1;
		len = strtoul(slash + 1, &end, 10);
		if (*end != '\0' || len > (v6 ? 128u : 32u))
			return -1;
	}
	p->len = (uint8_t)len;
	mask_bits(&p->addr.ip, p->len);
	return 0;
}

bool
net_prefix_has(const struct net_prefix *p, const struct net_addr *a)
{
	union net_ip ip = a->ip;

	if (a->family != p->addr.family)
		return false;
	mask_bits(&ip, p->len);
	return net_ip_eq(&ip, &p->addr.ip);
}

size_t
net_prefix_format(const struct net_prefix *p, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN + 8];
	int n;

	net_addr_format(&p->addr, 0, a, sizeof(a));
	n = snprintf(buf, len, "%s/%u", a, p->len);
	return n < 0 ? 0 : (size_t)n;
}
