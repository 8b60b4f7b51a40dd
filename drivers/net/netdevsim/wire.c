// SPDX-License-Identifier: GPL-2.0
/*
 * The cable between two linked netdevsim ports.
 *
 * Transmit does what the hardware of a NIC with TSO and checksum offload
 * does to the bits it sends: it fills in every checksum and cuts TCP GSO
 * skbs into wire packets of at most MSS payload each. The peer's parser
 * then steers the flow to one of its rx queues (steer.c), whose NAPI poll
 * copies each wire packet into that queue's buffers (rxq.c).
 *
 * The TSO engine works the way a NIC's does: the GSO skb waits in the
 * FIFO whole, and each segment is put together as it goes out - the
 * header template with lengths, IP id, sequence number, flags and the IP
 * checksum fixed up, followed by the segment's slice of the payload read
 * straight from the skb (nsim_wire_next), which the engine sums for the
 * TCP checksum as it reads it (nsim_wpkt_csum). No skb is built per
 * segment; other GSO types (and headers the engine does not know) go
 * through software GSO instead. A receiving port with HW-GRO takes
 * several segments of one frame at once, as one packet without a TCP
 * checksum (nsim_wire_next_agg).
 *
 * The port transmits device memory (dev->netmem_tx): an skb whose frags
 * are net_iovs of a tx binding. Nothing may map those; the engine reads
 * them by DMA address, as it would any frag (nsim_wire_read). Such an skb
 * always goes through the engine, even as a single segment, since only
 * the engine can sum a payload that the CPU may not read.
 */
#include <linux/dma-direct.h>
#include <linux/highmem.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <asm/unaligned.h>
#include <net/dst.h>
#include <net/ip6_checksum.h>

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
	pi->l4_off = off;
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

#define NSIM_TSO_TYPES	(SKB_GSO_TCPV4 | SKB_GSO_TCPV6 | SKB_GSO_TCP_ECN | \
			 SKB_GSO_TCP_FIXEDID)

/* Set the TSO engine up for @skb, cutting @mss bytes of payload per
 * segment; 0 when it cannot take the skb.
 */
static unsigned int nsim_tso_prepare(struct sk_buff *skb,
				     const struct nsim_pkt_info *pi,
				     unsigned int mss)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	struct nsim_wire_cb *cb = NSIM_WIRE_CB(skb);
	unsigned int nsegs;

	if (shinfo->gso_type & ~NSIM_TSO_TYPES ||
	    pi->l4proto != IPPROTO_TCP || pi->hdr_len > NSIM_TSO_HDR_MAX ||
	    pi->hdr_len > skb_headlen(skb) ||
	    !mss || mss > U16_MAX || skb->len <= pi->hdr_len)
		return 0;
	nsegs = DIV_ROUND_UP(skb->len - pi->hdr_len, mss);
	if (nsegs > U16_MAX)
		return 0;
	cb->l3 = pi->l3;
	cb->l4_off = pi->l4_off;
	cb->mss = mss;
	cb->seg_next = 0;
	cb->seg_end = nsegs;
	cb->agg_stop = false;
	return nsegs;
}

/**
 * nsim_wire_pending() - wire packets still to come out of a FIFO entry
 * @skb: an skb in an rx queue's FIFO
 *
 * Return: the number of wire packets nsim_wire_next() will still make.
 */
unsigned int nsim_wire_pending(const struct sk_buff *skb)
{
	const struct nsim_wire_cb *cb = NSIM_WIRE_CB(skb);

	return cb->mss ? cb->seg_end - cb->seg_next : 1;
}

/* The TSO engine's checksum unit: copy @len bytes and return their
 * ones' complement sum (as csum_partial() would give it for @from). The
 * sum is kept 32 bits at a time in 64 bits, so no word needs the carry
 * flag: an add-with-carry chain costs several times as much as a plain
 * add in an emulated guest, where every byte the pair moves crosses here.
 */
static __wsum nsim_copy_sum(void *to, const void *from, unsigned int len)
{
	u64 sum = 0, v;

	for (; len >= 8; len -= 8, from += 8, to += 8) {
		v = get_unaligned((const u64 *)from);
		put_unaligned(v, (u64 *)to);
		sum += lower_32_bits(v);
		sum += upper_32_bits(v);
	}
	if (len) {
		v = 0;
		memcpy(&v, from, len);
		memcpy(to, from, len);
		sum += lower_32_bits(v);
		sum += upper_32_bits(v);
	}
	sum = lower_32_bits(sum) + upper_32_bits(sum);
	sum = lower_32_bits(sum) + upper_32_bits(sum);
	return (__force __wsum)(u32)sum;
}

/* The sending NIC's DMA engine reading @len bytes of @wp's skb from
 * @off to @to; with @csum, it sums them as it copies, into the running
 * sum of @wp's payload (which starts at @wp->off). The headers (the
 * linear part) and page frags are host memory; a net_iov frag is device
 * memory, read by its DMA address.
 */
static void nsim_wire_read(const struct nsim_wpkt *wp, unsigned int off,
			   void *to, unsigned int len, __wsum *csum)
{
	const struct sk_buff *skb = wp->skb;
	unsigned int hl = skb_headlen(skb), pos = 0, fl, n, k, in_page;
	const unsigned int at = off - wp->off;	/* @to[0] in the payload */
	const skb_frag_t *frag;
	struct net_iov *niov;
	phys_addr_t phys;
	void *va;
	int i;

	/* Within the skb by construction. */
	if (WARN_ON_ONCE(off + len > skb->len))
		return;
	if (skb_has_frag_list(skb)) {
		if (csum)
			*csum = csum_block_add(*csum,
					       skb_copy_and_csum_bits(skb, off, to, len),
					       at);
		else
			WARN_ON_ONCE(skb_copy_bits(skb, off, to, len));
		return;
	}
	if (off < hl) {
		n = min(len, hl - off);
		if (csum)
			*csum = csum_block_add(*csum,
					       nsim_copy_sum(to, skb->data + off, n),
					       at);
		else
			memcpy(to, skb->data + off, n);
		pos = n;
		len -= n;
		off = 0;
	} else {
		off -= hl;
	}
	for (i = 0; len && i < skb_shinfo(skb)->nr_frags; i++) {
		frag = &skb_shinfo(skb)->frags[i];
		fl = skb_frag_size(frag);
		if (off >= fl) {
			off -= fl;
			continue;
		}
		niov = skb_frag_net_iov(frag);
		if (niov)
			phys = dma_to_phys(wp->dma_dev, niov->dma_addr +
					   skb_frag_off(frag) + off);
		else
			phys = page_to_phys(skb_frag_page(frag)) +
			       skb_frag_off(frag) + off;
		n = min(len, fl - off);
		len -= n;
		off = 0;
		while (n) {
			in_page = offset_in_page(phys);
			k = min_t(unsigned int, n, PAGE_SIZE - in_page);
			va = kmap_local_page(pfn_to_page(PHYS_PFN(phys)));
			if (csum)
				*csum = csum_block_add(*csum,
						       nsim_copy_sum(to + pos, va + in_page, k),
						       at + pos);
			else
				memcpy(to + pos, va + in_page, k);
			kunmap_local(va);
			phys += k;
			pos += k;
			n -= k;
		}
	}
	/* Within the skb by construction. */
	WARN_ON_ONCE(len);
}

/* Fix up the header template in @wp for segments @i to @i + @n - 1 of
 * its skb, sent as one packet: a wire packet when @n is 1, whose TCP
 * checksum is summed as its payload is read; an aggregate of the
 * receiving NIC's HW-GRO otherwise, which carries no checksum
 * (nsim_wire_next_agg()).
 */
static void nsim_tso_fixup(struct nsim_wpkt *wp, unsigned int i,
			   unsigned int n)
{
	const struct nsim_wire_cb *cb = NSIM_WIRE_CB(wp->skb);
	unsigned int nsegs = DIV_ROUND_UP(wp->skb->len - cb->hdr_len, cb->mss);
	struct tcphdr *th = (struct tcphdr *)(wp->hdr + cb->l4_off);

	if (cb->l3 == 4) {
		struct iphdr *iph = (struct iphdr *)(wp->hdr + ETH_HLEN);

		iph->tot_len = htons(wp->len - ETH_HLEN);
		if (!(skb_shinfo(wp->skb)->gso_type & SKB_GSO_TCP_FIXEDID))
			iph->id = htons(ntohs(iph->id) + i);
		iph->check = 0;
		iph->check = ip_fast_csum(iph, iph->ihl);
	} else {
		struct ipv6hdr *ip6h = (struct ipv6hdr *)(wp->hdr + ETH_HLEN);

		ip6h->payload_len = htons(wp->len - ETH_HLEN - sizeof(*ip6h));
	}

	th->seq = htonl(ntohl(th->seq) + i * cb->mss);
	if (i)
		th->cwr = 0;
	if (i + n != nsegs) {
		th->fin = 0;
		th->psh = 0;
	}
	/* summed as the payload is copied: nsim_wpkt_csum() */
	th->check = 0;
	wp->csum = 0;
	wp->csum_pending = n == 1;
}

/**
 * nsim_wpkt_csum() - the TCP checksum of a TSO segment
 * @wp: a wire packet of the TSO engine, whose payload has all been read
 *	through nsim_wpkt_copy()
 *
 * The engine sums the payload while the DMA engine copies it, in one pass
 * over the bytes, and the header's checksum field is filled in once the
 * whole segment has crossed. Return: the checksum field's value; @wp's
 * header template gets it too.
 */
__sum16 nsim_wpkt_csum(struct nsim_wpkt *wp)
{
	const struct nsim_wire_cb *cb = NSIM_WIRE_CB(wp->skb);
	struct tcphdr *th = (struct tcphdr *)(wp->hdr + cb->l4_off);
	unsigned int tcplen = wp->len - cb->l4_off;
	__wsum csum;

	csum = csum_partial(th, cb->hdr_len - cb->l4_off, wp->csum);
	if (cb->l3 == 4) {
		const struct iphdr *iph = (struct iphdr *)(wp->hdr + ETH_HLEN);

		th->check = csum_tcpudp_magic(iph->saddr, iph->daddr, tcplen,
					      IPPROTO_TCP, csum);
	} else {
		const struct ipv6hdr *ip6h =
			(struct ipv6hdr *)(wp->hdr + ETH_HLEN);

		th->check = csum_ipv6_magic(&ip6h->saddr, &ip6h->daddr, tcplen,
					    IPPROTO_TCP, csum);
	}
	wp->csum_pending = false;
	return th->check;
}

/* Segments @n more of @skb's TSO engine into @wp, as one packet. */
static void nsim_tso_take(struct sk_buff *skb, struct nsim_wpkt *wp,
			  unsigned int n)
{
	struct nsim_wire_cb *cb = NSIM_WIRE_CB(skb);
	unsigned int i = cb->seg_next;

	cb->seg_next += n;
	wp->hdr_len = cb->hdr_len;
	wp->off = cb->hdr_len + i * cb->mss;
	wp->len = cb->hdr_len + min_t(unsigned int, n * cb->mss,
				      skb->len - wp->off);
	/* Checked by nsim_tso_prepare(): cannot fail. */
	WARN_ON_ONCE(skb_copy_bits(skb, 0, wp->hdr, cb->hdr_len));
	nsim_tso_fixup(wp, i, n);
}

/**
 * nsim_wire_next() - the next wire packet of a FIFO entry
 * @skb: the entry: a packet sent whole, or a GSO skb for the TSO engine
 * @wp: filled with the packet
 *
 * Return: true when this was the entry's last wire packet.
 */
bool nsim_wire_next(struct sk_buff *skb, struct nsim_wpkt *wp)
{
	struct nsim_wire_cb *cb = NSIM_WIRE_CB(skb);

	wp->skb = skb;
	wp->csum_pending = false;
	if (!cb->mss) {
		wp->len = skb->len;
		wp->off = 0;
		wp->hdr_len = 0;
		return true;
	}
	nsim_tso_take(skb, wp, 1);
	return cb->seg_next == cb->seg_end;
}

/**
 * nsim_wire_next_agg() - the next wire packets of a FIFO entry, coalesced
 * @skb: the entry
 * @wp: filled with the aggregate
 * @max: at most this many wire packets
 *
 * The receiving NIC's HW-GRO engine coalesces the back-to-back segments
 * of one TSO frame into one packet: the first segment's headers, with
 * the IP length covering all of them and the TCP flags of the last, then
 * their payloads in order. Its IP length must fit 16 bits. The aggregate
 * has no TCP checksum: the engine checked each segment's, and what it
 * reports is CHECKSUM_PARTIAL, as for a packet that GRO built.
 *
 * Return: the number of wire packets in the aggregate, or 0 (and @wp
 * untouched) when fewer than two could be coalesced or the engine has
 * stopped coalescing this entry (nsim_wire_agg_undo()).
 */
unsigned int nsim_wire_next_agg(struct sk_buff *skb, struct nsim_wpkt *wp,
				unsigned int max)
{
	struct nsim_wire_cb *cb = NSIM_WIRE_CB(skb);
	unsigned int n, fit;

	if (!cb->mss || cb->agg_stop)
		return 0;
	fit = (U16_MAX - (cb->hdr_len - ETH_HLEN)) / cb->mss;
	n = min3((unsigned int)(cb->seg_end - cb->seg_next), max, fit);
	if (n < 2)
		return 0;
	wp->skb = skb;
	nsim_tso_take(skb, wp, n);
	return n;
}

/**
 * nsim_wire_agg_undo() - put an aggregate's wire packets back
 * @skb: the FIFO entry nsim_wire_next_agg() took them from
 * @n: its return value
 *
 * For when the receiving NIC could not take the aggregate (no buffers):
 * the same wire packets come out of nsim_wire_next() again, one by one,
 * and so does the rest of the entry.
 */
void nsim_wire_agg_undo(struct sk_buff *skb, unsigned int n)
{
	struct nsim_wire_cb *cb = NSIM_WIRE_CB(skb);

	cb->seg_next -= n;
	cb->agg_stop = true;
}

/**
 * nsim_wpkt_copy() - read bytes of a wire packet
 * @wp: the packet
 * @pos: offset in the packet
 * @to: destination
 * @len: bytes; @pos + @len must not pass @wp->len
 *
 * Each byte of a packet is read once; a TSO segment's payload is summed
 * on the way, for nsim_wpkt_csum().
 */
void nsim_wpkt_copy(struct nsim_wpkt *wp, unsigned int pos, void *to,
		    unsigned int len)
{
	unsigned int n;

	if (pos < wp->hdr_len) {
		n = min(len, wp->hdr_len - pos);
		memcpy(to, wp->hdr + pos, n);
		to += n;
		pos += n;
		len -= n;
	}
	if (len)
		nsim_wire_read(wp, wp->off + pos - wp->hdr_len, to, len,
			       wp->csum_pending ? &wp->csum : NULL);
}

static void nsim_count_devmem(struct netdevsim *ns, const struct sk_buff *skb,
			      unsigned int npkts)
{
	const struct skb_shared_info *shinfo = skb_shinfo(skb);
	u64 bytes = 0;
	int i;

	for (i = 0; i < shinfo->nr_frags; i++)
		if (skb_frag_is_net_iov(&shinfo->frags[i]))
			bytes += skb_frag_size(&shinfo->frags[i]);
	atomic64_add(npkts, &ns->dp.tx_devmem_packets);
	atomic64_add(bytes, &ns->dp.tx_devmem_bytes);
}

/* Send @skb from @ns to @peer: one wire packet, or a GSO skb the TSO
 * engine cuts up on the way (@tso), as long as its headers suit it.
 * Return: false when @skb is a GSO skb the TSO engine cannot take; the
 * caller then segments it in software.
 */
static bool nsim_wire_send(struct netdevsim *ns, struct netdevsim *peer,
			   struct sk_buff *skb, bool tso)
{
	struct nsim_wire_cb *cb = NSIM_WIRE_CB(skb);
	unsigned int npkts = 1, wire_len;
	struct nsim_pkt_info pi;
	int q;

	if (nsim_pkt_parse(skb, &pi)) {
		nsim_wire_drop(&peer->dp.rx_length_errors, skb);
		return true;
	}
	cb->mss = 0;
	if (tso) {
		npkts = nsim_tso_prepare(skb, &pi, skb_shinfo(skb)->gso_size);
		if (!npkts)
			return false;
		atomic64_inc(&ns->dp.tx_tso_skbs);
		wire_len = pi.hdr_len + cb->mss;
	} else if (!skb_frags_readable(skb)) {
		/* one segment, summed by the engine */
		npkts = nsim_tso_prepare(skb, &pi, skb->len - pi.hdr_len);
		if (!npkts) {
			nsim_wire_drop(&ns->dp.tx_errors, skb);
			return true;
		}
		wire_len = skb->len;
	} else {
		if (skb->ip_summed == CHECKSUM_PARTIAL &&
		    skb_checksum_help(skb)) {
			nsim_wire_drop(&ns->dp.tx_errors, skb);
			return true;
		}
		wire_len = skb->len;
	}
	atomic64_add(npkts, &ns->dp.tx_packets);
	atomic64_add(skb->len + (npkts - 1) * pi.hdr_len, &ns->dp.tx_bytes);
	if (!skb_frags_readable(skb))
		nsim_count_devmem(ns, skb, npkts);

	/* The receiving MAC refuses frames longer than its MTU allows. */
	if (wire_len > READ_ONCE(peer->netdev->mtu) + ETH_HLEN + VLAN_HLEN) {
		atomic64_add(npkts - 1, &peer->dp.rx_length_errors);
		nsim_wire_drop(&peer->dp.rx_length_errors, skb);
		return true;
	}

	q = nsim_steer(peer, &pi, &cb->hash);
	if (q < 0) {
		atomic64_add(npkts - 1, &peer->dp.rx_filtered);
		nsim_wire_drop(&peer->dp.rx_filtered, skb);
		return true;
	}
	cb->hdr_len = pi.hdr_len;
	cb->l4 = !!pi.l4proto;
	/* Nothing of the sender's routing travels with the bits. */
	skb_dst_drop(skb);
	nf_reset_ct(skb);
	nsim_rq_enqueue(peer, q, skb, npkts);
	return true;
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
	if (skb_is_gso(skb) && nsim_wire_send(ns, peer, skb, true))
		goto out;
	if (!skb_is_gso(skb)) {
		nsim_wire_send(ns, peer, skb, false);
		goto out;
	}

	/* Software GSO for what the TSO engine does not handle; the
	 * segments get full checksums (no checksum feature asked for).
	 */
	atomic64_inc(&ns->dp.tx_sw_gso_skbs);
	segs = skb_gso_segment(skb, NETIF_F_SG);
	if (IS_ERR(segs)) {
		nsim_wire_drop(&ns->dp.tx_errors, skb);
		goto out;
	}
	if (segs) {
		consume_skb(skb);
		skb = segs;
	}
	skb_list_walk_safe(skb, skb, next) {
		skb_mark_not_on_list(skb);
		nsim_wire_send(ns, peer, skb, false);
	}
out:
	rcu_read_unlock();
	return NETDEV_TX_OK;
}
