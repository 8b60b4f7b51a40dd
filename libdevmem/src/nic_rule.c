// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/* NIC set-up: flows, and the n-tuple rules that steer them (ethtool ioctl). */
#include "nic.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- n-tuple rules (ethtool ioctl) ---- */

static void nic_flow_spec(struct ethtool_rx_flow_spec *fs,
			  const struct devmem_flow *f, uint32_t queue)
{
	memset(fs, 0, sizeof(*fs));
	if (f->family == AF_INET) {
		fs->flow_type = TCP_V4_FLOW;
		memcpy(&fs->h_u.tcp_ip4_spec.ip4dst, f->dst, 4);
		fs->m_u.tcp_ip4_spec.ip4dst = 0xffffffff;
		fs->h_u.tcp_ip4_spec.pdst = htons(f->dst_port);
		fs->m_u.tcp_ip4_spec.pdst = 0xffff;
		if (f->has_src) {
			memcpy(&fs->h_u.tcp_ip4_spec.ip4src, f->src, 4);
			fs->m_u.tcp_ip4_spec.ip4src = 0xffffffff;
		}
	} else {
		fs->flow_type = TCP_V6_FLOW;
		memcpy(fs->h_u.tcp_ip6_spec.ip6dst, f->dst, 16);
		memset(fs->m_u.tcp_ip6_spec.ip6dst, 0xff, 16);
		fs->h_u.tcp_ip6_spec.pdst = htons(f->dst_port);
		fs->m_u.tcp_ip6_spec.pdst = 0xffff;
		if (f->has_src) {
			memcpy(fs->h_u.tcp_ip6_spec.ip6src, f->src, 16);
			memset(fs->m_u.tcp_ip6_spec.ip6src, 0xff, 16);
		}
	}
	fs->ring_cookie = queue;
}

/* The fields a rule of ours sets, compared one by one (drivers that
 * rebuild the spec need not keep the padding).
 */
static int nic_same_spec(const struct ethtool_rx_flow_spec *a,
			 const struct ethtool_rx_flow_spec *b)
{
	const struct ethtool_tcpip4_spec *a4 = &a->h_u.tcp_ip4_spec;
	const struct ethtool_tcpip4_spec *b4 = &b->h_u.tcp_ip4_spec;
	const struct ethtool_tcpip4_spec *am4 = &a->m_u.tcp_ip4_spec;
	const struct ethtool_tcpip4_spec *bm4 = &b->m_u.tcp_ip4_spec;
	const struct ethtool_tcpip6_spec *a6 = &a->h_u.tcp_ip6_spec;
	const struct ethtool_tcpip6_spec *b6 = &b->h_u.tcp_ip6_spec;
	const struct ethtool_tcpip6_spec *am6 = &a->m_u.tcp_ip6_spec;
	const struct ethtool_tcpip6_spec *bm6 = &b->m_u.tcp_ip6_spec;

	if ((a->flow_type & ~(FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS)) !=
	    b->flow_type || a->ring_cookie != b->ring_cookie)
		return 0;
	if (b->flow_type == TCP_V4_FLOW)
		return a4->ip4src == b4->ip4src && a4->ip4dst == b4->ip4dst &&
		       a4->psrc == b4->psrc && a4->pdst == b4->pdst &&
		       am4->ip4src == bm4->ip4src &&
		       am4->ip4dst == bm4->ip4dst &&
		       am4->psrc == bm4->psrc && am4->pdst == bm4->pdst;
	return !memcmp(a6->ip6src, b6->ip6src, 16) &&
	       !memcmp(a6->ip6dst, b6->ip6dst, 16) &&
	       a6->psrc == b6->psrc && a6->pdst == b6->pdst &&
	       !memcmp(am6->ip6src, bm6->ip6src, 16) &&
	       !memcmp(am6->ip6dst, bm6->ip6dst, 16) &&
	       am6->psrc == bm6->psrc && am6->pdst == bm6->pdst;
}

static int nic_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Where to insert a rule: RX_CLS_LOC_ANY when the driver picks one
 * itself, else the lowest location no rule uses.
 */
static int nic_rule_loc(struct devmem_nic *n, uint32_t *loc)
{
	struct ethtool_rxnfc cnt = { .cmd = ETHTOOL_GRXCLSRLCNT }, *all;
	uint32_t i, want, size;
	int err;

	err = nic_ioctl(n, &cnt, "n-tuple rule count (ETHTOOL_GRXCLSRLCNT)");
	if (err)
		return err;
	if (cnt.data & RX_CLS_LOC_SPECIAL) {
		*loc = RX_CLS_LOC_ANY;
		return 0;
	}
	if (cnt.rule_cnt > NIC_TABLE_MAX)
		return devmem_fail(-EPROTO, "%s: the kernel counts %u n-tuple rules",
				   n->name, cnt.rule_cnt);
	all = calloc(1, sizeof(*all) + cnt.rule_cnt * sizeof(all->rule_locs[0]));
	if (!all)
		return devmem_fail(-ENOMEM, "out of memory");
	all->cmd = ETHTOOL_GRXCLSRLALL;
	all->rule_cnt = cnt.rule_cnt;
	err = nic_ioctl(n, all, "n-tuple rules (ETHTOOL_GRXCLSRLALL)");
	if (err)
		goto out;
	size = all->data;
	qsort(all->rule_locs, all->rule_cnt, sizeof(all->rule_locs[0]),
	      nic_u32_cmp);
	want = 0;
	for (i = 0; i < all->rule_cnt && all->rule_locs[i] <= want; i++)
		if (all->rule_locs[i] == want)
			want++;
	if (want >= size) {
		err = devmem_fail(-ENOSPC,
				  "%s: every n-tuple rule location (%u) is taken",
				  n->name, size);
		goto out;
	}
	*loc = want;
out:
	free(all);
	return err;
}

int nic_rule_insert(struct devmem_nic *n, const struct devmem_flow *f,
			   uint32_t queue, uint32_t *loc)
{
	struct ethtool_rxnfc ins = { .cmd = ETHTOOL_SRXCLSRLINS };
	int err;

	nic_flow_spec(&ins.fs, f, queue);
	err = nic_rule_loc(n, &ins.fs.location);
	if (err)
		return err;
	err = nic_ioctl(n, &ins,
			"inserting an n-tuple rule (ETHTOOL_SRXCLSRLINS)");
	if (err)
		return err;
	*loc = ins.fs.location;
	return 0;
}

int nic_rule_delete(struct devmem_nic *n, uint32_t loc)
{
	struct ethtool_rxnfc del = { .cmd = ETHTOOL_SRXCLSRLDEL };

	del.fs.location = loc;
	return nic_ioctl(n, &del,
			 "deleting an n-tuple rule (ETHTOOL_SRXCLSRLDEL)");
}

/* Delete a rule we inserted, if the one at its location still is. */
int nic_rule_undo(struct devmem_nic *n, const struct nic_change *c)
{
	struct ethtool_rxnfc get = { .cmd = ETHTOOL_GRXCLSRULE };
	struct ethtool_rx_flow_spec want;
	int err;

	get.fs.location = c->rule.loc;
	err = nic_ioctl(n, &get, "reading an n-tuple rule (ETHTOOL_GRXCLSRULE)");
	if (err == -ENOENT)
		return 0;		/* already gone */
	if (err)
		return err;
	nic_flow_spec(&want, &c->rule.flow, c->rule.queue);
	if (!nic_same_spec(&get.fs, &want))
		return devmem_fail(-ESTALE,
				   "%s: the n-tuple rule at location %u is no longer the one set up: left in place",
				   n->name, c->rule.loc);
	return nic_rule_delete(n, c->rule.loc);
}


/* ---- flows ---- */

static int nic_parse_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;
	const char *p;

	if (!s || !*s)
		return devmem_fail(-EINVAL, "no port");
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return devmem_fail(-EINVAL,
					   "port \"%s\" is not a decimal number",
					   s);
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > 65535)
			break;
	}
	if (!v || v > 65535)
		return devmem_fail(-EINVAL, "port \"%s\" is not in 1-65535", s);
	*port = (uint16_t)v;
	return 0;
}

static int nic_parse_addr(const char *s, const char *what, int *family,
			  uint8_t *addr)
{
	if (!s || !*s)
		return devmem_fail(-EINVAL, "no %s address", what);
	if (inet_pton(AF_INET, s, addr) == 1) {
		*family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*family = AF_INET6;
		return 0;
	}
	return devmem_fail(-EINVAL,
			   "%s address \"%s\" is neither IPv4 nor IPv6", what, s);
}

static const char *nic_family_name(int family)
{
	return family == AF_INET ? "IPv4" : "IPv6";
}

/* The fields of the first version of struct devmem_flow. */
#define DEVMEM_FLOW_SIZE_1_0 \
	(offsetof(struct devmem_flow, dst_port) + sizeof(uint16_t))

static int nic_flow_size(const struct devmem_flow *f)
{
	if (f->size < DEVMEM_FLOW_SIZE_1_0)
		return devmem_fail(-EINVAL, "a flow of size %zu: set .size to sizeof(struct devmem_flow)",
				   f->size);
	return 0;
}

DEVMEM_EXPORT int devmem_flow_parse(struct devmem_flow *f, const char *dst,
				    const char *src, const char *port)
{
	struct devmem_flow flow = { .size = sizeof(flow) };
	int src_family, err;

	devmem_error_clear();
	if (!f)
		return devmem_fail(-EINVAL, "no place for the flow");
	err = nic_flow_size(f);
	if (err)
		return err;
	err = nic_parse_addr(dst, "destination", &flow.family, flow.dst);
	if (err)
		return err;
	if (src) {
		err = nic_parse_addr(src, "source", &src_family, flow.src);
		if (err)
			return err;
		if (src_family != flow.family)
			return devmem_fail(-EINVAL,
					   "source %s is %s, destination %s is %s",
					   src, nic_family_name(src_family),
					   dst, nic_family_name(flow.family));
		flow.has_src = 1;
	}
	err = nic_parse_port(port, &flow.dst_port);
	if (err)
		return err;
	memcpy((char *)f + sizeof(f->size), (char *)&flow + sizeof(flow.size),
	       (f->size < sizeof(flow) ? f->size : sizeof(flow)) -
	       sizeof(flow.size));
	return 0;
}

/* The caller's flow @f, as much of it as its size covers, into @out;
 * then checked.
 */
int nic_check_flow(struct devmem_flow *out, const struct devmem_flow *f)
{
	int err;

	if (!f)
		return devmem_fail(-EINVAL, "no flow");
	err = nic_flow_size(f);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	memcpy(out, f, f->size < sizeof(*out) ? f->size : sizeof(*out));
	out->size = sizeof(*out);
	f = out;
	if (f->family != AF_INET && f->family != AF_INET6)
		return devmem_fail(-EINVAL, "flow family %d is neither AF_INET nor AF_INET6",
				   f->family);
	if (!f->dst_port)
		return devmem_fail(-EINVAL, "flow destination port 0");
	return 0;
}

