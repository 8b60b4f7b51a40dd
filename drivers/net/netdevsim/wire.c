// SPDX-License-Identifier: GPL-2.0
/*
 * The cable between two linked netdevsim ports.
 *
 * Transmit does what the hardware of a NIC with TSO and checksum offload
 * does before the bits leave: it cuts GSO skbs into wire-sized packets and
 * fills in every checksum. Each wire packet is then steered to one of the
 * peer's rx queues (steer.c) and queued there for the peer's NAPI poll,
 * which copies it into that queue's buffers (rxq.c).
 */
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/dst.h>

#include "netdevsim.h"

static void nsim_parse_ports(const struct sk_buff *skb, unsigned int off,
			     u8 proto, struct nsim_pkt_info *pi)
{
	struct tcphdr _th;
	const struct tcphdr *th;
	unsigned int len;

	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return;
	/* The ports sit at the same offsets in both headers. */
	th = skb_header_pointer(skb, off, sizeof(struct udphdr), &_th);
	if (!th)
		return;
	pi->sport = th->source;
	pi->dport = th->dest;
	if (proto == IPPROTO_UDP) {
		len = sizeof(struct udphdr);
	} else {
		th = skb_header_pointer(skb, off, sizeof(_th), &_th);
		if (!th || th->doff < 5)
			return;
		len = th->doff * 4;
	}
	if (off + len > skb->len)
		return;
	pi->l4proto = proto;
	pi->hdr_len = off + len;
}

/**
 * nsim_pkt_parse() - what the NIC's parser sees in a wire packet
 * @skb: the packet, starting at its Ethernet header
 * @pi: filled with the flow's addresses and ports and the length of the
 *	Ethernet + IP + TCP/UDP headers (0 when the packet is not TCP or UDP
 *	over IPv4 or IPv6, or is an IP fragment)
 *
 * Return: 0, or -EINVAL for a packet too short for an Ethernet header.
 */
int nsim_pkt_parse(const struct sk_buff *skb, struct nsim_pkt_info *pi)
{
	struct ethhdr _eth;
	const struct ethhdr *eth;
	unsigned int off = ETH_HLEN;

	memset(pi, 0, sizeof(*pi));
	eth = skb_header_pointer(skb, 0, sizeof(_eth), &_eth);
	if (!eth)
		return -EINVAL;

	if (eth->h_proto == htons(ETH_P_IP)) {
		struct iphdr _iph;
		const struct iphdr *iph;

		iph = skb_header_pointer(skb, off, sizeof(_iph), &_iph);
		if (!iph || iph->ihl < 5 || iph->version != 4)
			return 0;
		pi->l3 = 4;
		pi->saddr[0] = iph->saddr;
		pi->daddr[0] = iph->daddr;
		if (iph->frag_off & htons(IP_MF | IP_OFFSET))
			return 0;
		nsim_parse_ports(skb, off + iph->ihl * 4, iph->protocol, pi);
	} else if (eth->h_proto == htons(ETH_P_IPV6)) {
		struct ipv6hdr _ip6h;
		const struct ipv6hdr *ip6h;

		ip6h = skb_header_pointer(skb, off, sizeof(_ip6h), &_ip6h);
		if (!ip6h || ip6h->version != 6)
			return 0;
		pi->l3 = 6;
		memcpy(pi->saddr, &ip6h->saddr, sizeof(pi->saddr));
		memcpy(pi->daddr, &ip6h->daddr, sizeof(pi->daddr));
		nsim_parse_ports(skb, off + sizeof(*ip6h), ip6h->nexthdr, pi);
	}
	return 0;
}

static void nsim_wire_drop(atomic64_t *counter, struct sk_buff *skb)
{
	atomic64_inc(counter);
	kfree_skb(skb);
}

/* One wire packet from @ns to @peer. */
static void nsim_wire_send(struct netdevsim *ns, struct netdevsim *peer,
			   struct sk_buff *skb)
{
	struct nsim_wire_cb *cb = NSIM_WIRE_CB(skb);
	unsigned int len = skb->len;
	struct nsim_pkt_info pi;
	int q;

	if (skb->ip_summed == CHECKSUM_PARTIAL && skb_checksum_help(skb)) {
		nsim_wire_drop(&ns->dp.tx_errors, skb);
		return;
	}
	atomic64_inc(&ns->dp.tx_packets);
	atomic64_add(len, &ns->dp.tx_bytes);

	/* The receiving MAC refuses frames longer than its MTU allows. */
	if (len > READ_ONCE(peer->netdev->mtu) + ETH_HLEN + VLAN_HLEN ||
	    nsim_pkt_parse(skb, &pi)) {
		nsim_wire_drop(&peer->dp.rx_length_errors, skb);
		return;
	}

	q = nsim_steer(peer, &pi, &cb->hash);
	if (q < 0) {
		nsim_wire_drop(&peer->dp.rx_filtered, skb);
		return;
	}
	cb->hdr_len = pi.hdr_len;
	cb->l4 = !!pi.l4proto;
	/* Nothing of the sender's routing travels with the bits. */
	skb_dst_drop(skb);
	nf_reset_ct(skb);
	nsim_rq_enqueue(peer, q, skb);
}

netdev_tx_t nsim_wire_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct netdevsim *ns = netdev_priv(dev);
	struct sk_buff *segs, *next;
	struct netdevsim *peer;

	if (!nsim_ipsec_tx(ns, skb)) {
		kfree_skb(skb);
		return NETDEV_TX_OK;
	}

	rcu_read_lock();
	peer = rcu_dereference(ns->dp.peer);
	if (!peer) {
		nsim_wire_drop(&ns->dp.tx_drop_no_peer, skb);
		goto out;
	}
	if (!netif_running(peer->netdev)) {
		nsim_wire_drop(&ns->dp.tx_drop_peer_down, skb);
		goto out;
	}

	skb_tx_timestamp(skb);
	if (skb_is_gso(skb)) {
		/* No checksum feature: the segments get full checksums. */
		segs = skb_gso_segment(skb, NETIF_F_SG);
		if (IS_ERR(segs)) {
			nsim_wire_drop(&ns->dp.tx_errors, skb);
			goto out;
		}
		if (segs) {
			consume_skb(skb);
			skb = segs;
		}
	}
	skb_list_walk_safe(skb, skb, next) {
		skb_mark_not_on_list(skb);
		nsim_wire_send(ns, peer, skb);
	}
out:
	rcu_read_unlock();
	return NETDEV_TX_OK;
}
