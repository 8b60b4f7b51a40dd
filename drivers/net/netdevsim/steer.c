// SPDX-License-Identifier: GPL-2.0
/*
 * Receive queue selection of a netdevsim port, as a NIC's flow director
 * and RSS engine do it: the lowest-numbered n-tuple rule that matches wins;
 * without one, a Toeplitz hash of the flow indexes the RSS indirection
 * table. Both are configured with the standard ethtool commands (-N/-n,
 * -X/-x); the datapath reads them under RCU, ethtool writes under rtnl.
 */
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/rculist.h>
#include <linux/rtnetlink.h>
#include <asm/unaligned.h>

#include "netdevsim.h"

static u32 nsim_toeplitz(const u8 *key, const u8 *data, unsigned int len)
{
	u32 window = get_unaligned_be32(key);
	unsigned int i, bit;
	u32 hash = 0;

	for (i = 0; i < len; i++) {
		for (bit = 0; bit < 8; bit++) {
			if (data[i] & (0x80 >> bit))
				hash ^= window;
			window <<= 1;
			window |= (READ_ONCE(key[i + 4]) >> (7 - bit)) & 1;
		}
	}
	return hash;
}

/* Hash input as RSS defines it: source and destination address, then the
 * ports for TCP and UDP.
 */
static u32 nsim_rss_hash(struct netdevsim *ns, const struct nsim_pkt_info *pi)
{
	u8 in[2 * sizeof(pi->saddr) + 2 * sizeof(__be16)];
	unsigned int alen = pi->l3 == 6 ? 16 : 4, len;

	if (!pi->l3)
		return 0;
	memcpy(in, pi->saddr, alen);
	memcpy(in + alen, pi->daddr, alen);
	len = 2 * alen;
	if (pi->l4proto) {
		memcpy(in + len, &pi->sport, sizeof(pi->sport));
		memcpy(in + len + 2, &pi->dport, sizeof(pi->dport));
		len += 4;
	}
	return nsim_toeplitz(ns->dp.rss_key, in, len);
}

static bool nsim_match_addr(const __be32 *addr, const __be32 *val,
			    const __be32 *mask, unsigned int words)
{
	unsigned int i;

	for (i = 0; i < words; i++)
		if ((addr[i] ^ val[i]) & mask[i])
			return false;
	return true;
}

static bool nsim_match_port(__be16 port, __be16 val, __be16 mask)
{
	return !((port ^ val) & mask);
}

static bool nsim_rule_match(const struct ethtool_rx_flow_spec *fs,
			    const struct nsim_pkt_info *pi)
{
	const struct ethtool_tcpip4_spec *v4, *m4;
	const struct ethtool_tcpip6_spec *v6, *m6;
	u8 proto;

	switch (fs->flow_type) {
	case TCP_V4_FLOW:
	case TCP_V6_FLOW:
		proto = IPPROTO_TCP;
		break;
	default:
		proto = IPPROTO_UDP;
		break;
	}
	if (pi->l4proto != proto)
		return false;

	if (fs->flow_type == TCP_V4_FLOW || fs->flow_type == UDP_V4_FLOW) {
		v4 = &fs->h_u.tcp_ip4_spec;
		m4 = &fs->m_u.tcp_ip4_spec;
		return pi->l3 == 4 &&
		       nsim_match_addr(pi->saddr, &v4->ip4src, &m4->ip4src, 1) &&
		       nsim_match_addr(pi->daddr, &v4->ip4dst, &m4->ip4dst, 1) &&
		       nsim_match_port(pi->sport, v4->psrc, m4->psrc) &&
		       nsim_match_port(pi->dport, v4->pdst, m4->pdst);
	}
	v6 = &fs->h_u.tcp_ip6_spec;
	m6 = &fs->m_u.tcp_ip6_spec;
	return pi->l3 == 6 &&
	       nsim_match_addr(pi->saddr, v6->ip6src, m6->ip6src, 4) &&
	       nsim_match_addr(pi->daddr, v6->ip6dst, m6->ip6dst, 4) &&
	       nsim_match_port(pi->sport, v6->psrc, m6->psrc) &&
	       nsim_match_port(pi->dport, v6->pdst, m6->pdst);
}

/**
 * nsim_steer() - pick the rx queue of @ns for a wire packet
 * @ns: the receiving port
 * @pi: what the parser found in the packet
 * @hash: set to the packet's RSS hash
 *
 * Called under rcu_read_lock.
 *
 * Return: an active rx queue, or -1 when a rule says to drop the packet.
 */
int nsim_steer(struct netdevsim *ns, const struct nsim_pkt_info *pi, u32 *hash)
{
	unsigned int nq = READ_ONCE(ns->netdev->real_num_rx_queues);
	struct nsim_ntuple_rule *rule;
	u32 q;

	*hash = nsim_rss_hash(ns, pi);

	if (READ_ONCE(ns->netdev->features) & NETIF_F_NTUPLE) {
		list_for_each_entry_rcu(rule, &ns->dp.rules, list) {
			if (!nsim_rule_match(&rule->fs, pi))
				continue;
			if (rule->fs.ring_cookie == RX_CLS_FLOW_DISC)
				return -1;
			q = ethtool_get_flow_spec_ring(rule->fs.ring_cookie);
			if (q < nq)
				return q;
			break;
		}
	}

	q = READ_ONCE(ns->dp.rss_indir[*hash % NSIM_RSS_INDIR_SIZE]);
	/* The table may still name a queue that a channel change removed. */
	return q < nq ? q : q % nq;
}

void nsim_steer_channels_changed(struct netdevsim *ns)
{
	unsigned int i, nq = ns->netdev->real_num_rx_queues;

	if (netif_is_rxfh_configured(ns->netdev))
		return;
	for (i = 0; i < NSIM_RSS_INDIR_SIZE; i++)
		WRITE_ONCE(ns->dp.rss_indir[i], ethtool_rxfh_indir_default(i, nq));
}

void nsim_steer_init(struct netdevsim *ns)
{
	INIT_LIST_HEAD(&ns->dp.rules);
	netdev_rss_key_fill(ns->dp.rss_key, sizeof(ns->dp.rss_key));
	nsim_steer_channels_changed(ns);
}

void nsim_steer_flush_rules(struct netdevsim *ns)
{
	struct nsim_ntuple_rule *rule, *tmp;

	ASSERT_RTNL();
	list_for_each_entry_safe(rule, tmp, &ns->dp.rules, list) {
		list_del_rcu(&rule->list);
		kfree_rcu(rule, rcu);
	}
	ns->dp.nrules = 0;
}

void nsim_steer_uninit(struct netdevsim *ns)
{
	rtnl_lock();
	nsim_steer_flush_rules(ns);
	rtnl_unlock();
}

/* One more than the highest queue a rule sends packets to. */
u32 nsim_steer_max_queue(struct netdevsim *ns)
{
	struct nsim_ntuple_rule *rule;
	u32 max = 0, q;

	list_for_each_entry(rule, &ns->dp.rules, list) {
		if (rule->fs.ring_cookie == RX_CLS_FLOW_DISC)
			continue;
		q = ethtool_get_flow_spec_ring(rule->fs.ring_cookie);
		max = max(max, q + 1);
	}
	return max;
}

static struct nsim_ntuple_rule *nsim_rule_find(struct netdevsim *ns, u32 loc)
{
	struct nsim_ntuple_rule *rule;

	list_for_each_entry(rule, &ns->dp.rules, list)
		if (rule->fs.location == loc)
			return rule;
	return NULL;
}

static int nsim_rule_free_loc(struct netdevsim *ns, u32 *loc)
{
	struct nsim_ntuple_rule *rule;
	u32 want = 0;

	/* The list is sorted: the first gap is the lowest free location. */
	list_for_each_entry(rule, &ns->dp.rules, list) {
		if (rule->fs.location != want)
			break;
		want++;
	}
	if (want >= NSIM_NTUPLE_MAX)
		return -ENOSPC;
	*loc = want;
	return 0;
}

static int nsim_rule_check(struct netdevsim *ns,
			   const struct ethtool_rx_flow_spec *fs)
{
	const struct ethtool_tcpip4_spec *m4 = &fs->m_u.tcp_ip4_spec;
	const struct ethtool_tcpip6_spec *m6 = &fs->m_u.tcp_ip6_spec;
	u64 cookie = fs->ring_cookie;

	switch (fs->flow_type) {
	case TCP_V4_FLOW:
	case UDP_V4_FLOW:
		if (m4->tos)
			return -EINVAL;
		break;
	case TCP_V6_FLOW:
	case UDP_V6_FLOW:
		if (m6->tclass)
			return -EINVAL;
		break;
	default:
		/* Also FLOW_EXT, FLOW_MAC_EXT and FLOW_RSS: not matched. */
		return -EINVAL;
	}
	if (cookie == RX_CLS_FLOW_DISC)
		return 0;
	if (cookie == RX_CLS_FLOW_WAKE || ethtool_get_flow_spec_ring_vf(cookie))
		return -EINVAL;
	if (ethtool_get_flow_spec_ring(cookie) >= ns->netdev->real_num_rx_queues)
		return -EINVAL;
	return 0;
}

static int nsim_rule_insert(struct netdevsim *ns,
			    struct ethtool_rx_flow_spec *fs)
{
	struct nsim_ntuple_rule *rule, *old, *pos;
	u32 loc = fs->location;
	int err;

	if (!(ns->netdev->features & NETIF_F_NTUPLE))
		return -EOPNOTSUPP;
	err = nsim_rule_check(ns, fs);
	if (err)
		return err;
	if (loc == RX_CLS_LOC_ANY) {
		err = nsim_rule_free_loc(ns, &loc);
		if (err)
			return err;
	} else if (loc >= NSIM_NTUPLE_MAX) {
		return -EINVAL;
	}

	rule = kzalloc(sizeof(*rule), GFP_KERNEL);
	if (!rule)
		return -ENOMEM;
	rule->fs = *fs;
	rule->fs.location = loc;

	old = nsim_rule_find(ns, loc);
	if (old) {
		list_replace_rcu(&old->list, &rule->list);
		kfree_rcu(old, rcu);
	} else {
		/* Insert before the first rule with a higher location. */
		list_for_each_entry(pos, &ns->dp.rules, list)
			if (pos->fs.location > loc)
				break;
		list_add_tail_rcu(&rule->list, &pos->list);
		ns->dp.nrules++;
	}
	fs->location = loc;
	return 0;
}

static int nsim_rule_delete(struct netdevsim *ns, u32 loc)
{
	struct nsim_ntuple_rule *rule = nsim_rule_find(ns, loc);

	if (!rule)
		return -ENOENT;
	list_del_rcu(&rule->list);
	kfree_rcu(rule, rcu);
	ns->dp.nrules--;
	return 0;
}

static int nsim_rule_locs(struct netdevsim *ns, struct ethtool_rxnfc *cmd,
			  u32 *rule_locs)
{
	struct nsim_ntuple_rule *rule;
	u32 n = 0;

	if (ns->dp.nrules > cmd->rule_cnt)
		return -EMSGSIZE;
	list_for_each_entry(rule, &ns->dp.rules, list)
		rule_locs[n++] = rule->fs.location;
	cmd->rule_cnt = n;
	cmd->data = NSIM_NTUPLE_MAX;
	return 0;
}

int nsim_get_rxnfc(struct net_device *dev, struct ethtool_rxnfc *cmd,
		   u32 *rule_locs)
{
	struct netdevsim *ns = netdev_priv(dev);
	struct nsim_ntuple_rule *rule;

	switch (cmd->cmd) {
	case ETHTOOL_GRXRINGS:
		cmd->data = dev->real_num_rx_queues;
		return 0;
	case ETHTOOL_GRXCLSRLCNT:
		cmd->rule_cnt = ns->dp.nrules;
		cmd->data = NSIM_NTUPLE_MAX | RX_CLS_LOC_SPECIAL;
		return 0;
	case ETHTOOL_GRXCLSRULE:
		rule = nsim_rule_find(ns, cmd->fs.location);
		if (!rule)
			return -ENOENT;
		cmd->fs = rule->fs;
		return 0;
	case ETHTOOL_GRXCLSRLALL:
		return nsim_rule_locs(ns, cmd, rule_locs);
	default:
		return -EOPNOTSUPP;
	}
}

int nsim_set_rxnfc(struct net_device *dev, struct ethtool_rxnfc *cmd)
{
	struct netdevsim *ns = netdev_priv(dev);

	switch (cmd->cmd) {
	case ETHTOOL_SRXCLSRLINS:
		return nsim_rule_insert(ns, &cmd->fs);
	case ETHTOOL_SRXCLSRLDEL:
		return nsim_rule_delete(ns, cmd->fs.location);
	default:
		return -EOPNOTSUPP;
	}
}

u32 nsim_get_rxfh_key_size(struct net_device *dev)
{
	return NSIM_RSS_KEY_SIZE;
}

u32 nsim_get_rxfh_indir_size(struct net_device *dev)
{
	return NSIM_RSS_INDIR_SIZE;
}

int nsim_get_rxfh(struct net_device *dev, u32 *indir, u8 *key, u8 *hfunc)
{
	struct netdevsim *ns = netdev_priv(dev);

	if (hfunc)
		*hfunc = ETH_RSS_HASH_TOP;
	if (indir)
		memcpy(indir, ns->dp.rss_indir, sizeof(ns->dp.rss_indir));
	if (key)
		memcpy(key, ns->dp.rss_key, sizeof(ns->dp.rss_key));
	return 0;
}

int nsim_set_rxfh(struct net_device *dev, const u32 *indir, const u8 *key,
		  const u8 hfunc)
{
	struct netdevsim *ns = netdev_priv(dev);
	unsigned int i;

	if (hfunc != ETH_RSS_HASH_NO_CHANGE && hfunc != ETH_RSS_HASH_TOP)
		return -EOPNOTSUPP;
	/* The core has checked every entry against ETHTOOL_GRXRINGS. */
	if (indir)
		for (i = 0; i < NSIM_RSS_INDIR_SIZE; i++)
			WRITE_ONCE(ns->dp.rss_indir[i], indir[i]);
	if (key)
		for (i = 0; i < NSIM_RSS_KEY_SIZE; i++)
			WRITE_ONCE(ns->dp.rss_key[i], key[i]);
	return 0;
}
