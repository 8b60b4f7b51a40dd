// SPDX-License-Identifier: GPL-2.0
/*
 * Receive queues of a netdevsim port.
 *
 * Each rx queue has a NAPI context, a backlog of wire packets (the NIC's
 * receive FIFO, as deep as the ring) and two page pools: payload buffers
 * and, for header split, header buffers. The poll "DMAs" each wire packet
 * into buffers from the pools, builds an skb around them and hands it to
 * GRO, as a NIC driver does after the hardware has filled its ring.
 *
 * The copy goes through the buffer's DMA address only (nsim_dma_write), the
 * way a device sees memory: whatever sits behind the address - a page-pool
 * page or a piece of a dma-buf - is filled by the same code.
 *
 * A queue bound to a dma-buf gets a payload pool of net_iovs (its pool
 * is created with PP_FLAG_ALLOW_UNREADABLE_NETMEM, and the core installs
 * the binding as the pool's memory provider): payload is written to
 * device memory and the skb, whose frags are net_iovs, is unreadable.
 * Such a packet needs rx checksum offload (the stack cannot sum device
 * memory): with rx-checksumming off it is dropped, counted in
 * rxQ_devmem_drops. The queue's csum knob picks what the offload reports:
 * CHECKSUM_UNNECESSARY, CHECKSUM_COMPLETE (the DMA engine sums every byte
 * it writes, device memory included) or CHECKSUM_NONE, which hands even
 * device memory to the stack unverified, for the stack to refuse.
 *
 * With rx-gro-hw on, the poll coalesces the segments of one TSO frame
 * that wait back to back in the FIFO into one skb, as a NIC's HW-GRO
 * engine does (nsim_rx_agg): the payload goes into the buffers densely,
 * and the stack gets one packet where it would have built and merged
 * each. The counters still count wire packets; hw_gro_packets counts the
 * aggregates and hw_gro_wire_packets the wire packets in them.
 *
 * The queue restart operations (struct netdev_queue_mgmt_ops) swap a
 * queue's pools while the other queues keep running.
 */
#include <linux/dma-direct.h>
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/highmem.h>
#include <linux/rtnetlink.h>
#include <linux/tcp.h>
#include <net/ip6_checksum.h>
#include <net/netdev_rx_queue.h>
#include <net/page_pool.h>
#include <net/page_pool_mp.h>
#include <net/tcp.h>

#include "netdevsim.h"

static struct device *nsim_dma_dev(struct netdevsim *ns)
{
	return &ns->nsim_bus_dev->dev;
}

/* The DMA engine: write @len bytes of wire packet @wp, from @off, to bus
 * address @addr. Direct DMA without an IOMMU: the bus address is a
 * physical one. With @csum, it adds what it wrote to the running sum of
 * the packet there, as a NIC computing CHECKSUM_COMPLETE does.
 */
static void nsim_dma_write(struct device *dev, dma_addr_t addr,
			   struct nsim_wpkt *wp, unsigned int off,
			   unsigned int len, __wsum *csum)
{
	phys_addr_t phys = dma_to_phys(dev, addr);
	unsigned int in_page, n;
	void *va;

	while (len) {
		in_page = offset_in_page(phys);
		n = min_t(unsigned int, len, PAGE_SIZE - in_page);
		va = kmap_local_page(pfn_to_page(PHYS_PFN(phys)));
		nsim_wpkt_copy(wp, off, va + in_page, n);
		if (csum)
			*csum = csum_block_add(*csum,
					       csum_partial(va + in_page, n, 0),
					       off);
		kunmap_local(va);
		phys += n;
		off += n;
		len -= n;
	}
}

static void nsim_stat_add(struct nsim_rq *rq, u64 *counter, u64 n)
{
	u64_stats_update_begin(&rq->stats.syncp);
	*counter += n;
	u64_stats_update_end(&rq->stats.syncp);
}

static netmem_ref nsim_rq_alloc(struct nsim_rq *rq, struct page_pool *pp)
{
	netmem_ref netmem = 0;

	if (!atomic_add_unless(&rq->fail_alloc, -1, 0))
		netmem = page_pool_dev_alloc_netmem(pp);
	if (!netmem)
		nsim_stat_add(rq, &rq->stats.alloc_fail, 1);
	return netmem;
}

/* DMA @len bytes of @wp from @off into @netmem at @pg_off, summing them
 * into @csum if set. A page may be read by the CPU afterwards; device
 * memory is synced by its owner.
 */
static void nsim_rx_fill(struct nsim_rq *rq, netmem_ref netmem,
			 unsigned int pg_off, struct nsim_wpkt *wp,
			 unsigned int off, unsigned int len, __wsum *csum)
{
	struct device *dev = nsim_dma_dev(rq->ns);
	dma_addr_t dma = page_pool_get_dma_addr_netmem(netmem) + pg_off;

	nsim_dma_write(dev, dma, wp, off, len, csum);
	if (!netmem_is_net_iov(netmem))
		dma_sync_single_for_cpu(dev, dma, len, DMA_FROM_DEVICE);
}

/* Header split: the headers go to a header buffer, then into the head of
 * a small skb; the header buffer goes straight back to its pool. A TCP or
 * UDP packet whose payload is no longer than hds-thresh is not split: it
 * goes whole into the header buffer.
 */
static struct sk_buff *nsim_rx_split_head(struct nsim_rq *rq,
					  struct nsim_wpkt *wp,
					  unsigned int *done, __wsum *csum)
{
	unsigned int hlen = NSIM_WIRE_CB(wp->skb)->hdr_len;
	struct page_pool *pp = rq->mem.hdr_pp;
	struct sk_buff *skb;
	netmem_ref netmem;
	struct page *page;

	/* Not TCP/UDP: as much as fits in the header buffer. */
	if (!hlen || hlen > NSIM_HDR_BUF_SIZE)
		hlen = min_t(unsigned int, wp->len, NSIM_HDR_BUF_SIZE);
	else if (wp->len - hlen <= READ_ONCE(rq->ns->dp.hds_thresh))
		hlen = wp->len;
	else
		hlen = min3(wp->len, hlen + READ_ONCE(rq->hds_payload),
			    (unsigned int)NSIM_HDR_BUF_SIZE);

	netmem = nsim_rq_alloc(rq, pp);
	if (!netmem)
		return NULL;
	page = netmem_to_page(netmem);
	nsim_rx_fill(rq, netmem, 0, wp, 0, hlen, csum);
	skb = napi_alloc_skb(&rq->napi, hlen);
	if (skb)
		skb_put_data(skb, page_address(page), hlen);
	page_pool_recycle_direct(pp, page);
	if (!skb)
		return NULL;
	nsim_stat_add(rq, &rq->stats.hdr_bufs, 1);
	*done = hlen;
	return skb;
}

/* No header split: the packet starts in a page-pool buffer that becomes
 * the skb's head, at most @max bytes of it. An aggregate of HW-GRO puts
 * only its headers there: were its head to hold more than a segment's
 * payload, GRO could chain it on a frag_list that skb_segment() cannot
 * cut again (it refuses a list member whose head is longer than the MSS).
 */
static struct sk_buff *nsim_rx_whole_head(struct nsim_rq *rq,
					  struct nsim_wpkt *wp,
					  unsigned int max,
					  unsigned int *done, __wsum *csum)
{
	const unsigned int headroom = NET_SKB_PAD + NET_IP_ALIGN;
	const unsigned int room = PAGE_SIZE - headroom -
		SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	unsigned int n = min3(wp->len, room, max);
	struct page_pool *pp = rq->mem.pp;
	struct sk_buff *skb;
	netmem_ref netmem;
	struct page *page;

	netmem = nsim_rq_alloc(rq, pp);
	if (!netmem)
		return NULL;
	page = netmem_to_page(netmem);
	/* Headers must never land in device memory. */
	if (!page) {
		page_pool_recycle_direct_netmem(pp, netmem);
		return NULL;
	}
	nsim_rx_fill(rq, netmem, headroom, wp, 0, n, csum);
	skb = napi_build_skb(page_address(page), PAGE_SIZE);
	if (!skb) {
		page_pool_recycle_direct(pp, page);
		return NULL;
	}
	skb_mark_for_recycle(skb);
	skb_reserve(skb, headroom);
	__skb_put(skb, n);
	nsim_stat_add(rq, &rq->stats.payload_bufs, 1);
	*done = n;
	return skb;
}

/* The buffer for the next at most *@n payload bytes, with a reference
 * for the frag that will name it; *@n becomes what fits and *@pg_off
 * where it goes. Without @pack, a fresh buffer from the pool. With it,
 * the queue's open buffer, filled on from where the last payload ended,
 * the way an aggregation ring fills its buffers; a new one is opened when
 * it is full, and the frag that fills it takes over the queue's
 * reference. *@bufs counts the buffers taken from the pool.
 */
static netmem_ref nsim_rx_buf(struct nsim_rq *rq, bool pack,
			      unsigned int size, unsigned int *pg_off,
			      unsigned int *n, unsigned int *bufs)
{
	struct nsim_rq_mem *mem = &rq->mem;
	netmem_ref netmem;

	if (!pack || !mem->agg) {
		netmem = nsim_rq_alloc(rq, mem->pp);
		if (!netmem)
			return 0;
		(*bufs)++;
		*pg_off = 0;
		*n = min(*n, size);
		if (!pack || *n == size)
			return netmem;
		mem->agg = netmem;
		mem->agg_off = 0;
	}
	netmem = mem->agg;
	*pg_off = mem->agg_off;
	*n = min(*n, size - mem->agg_off);
	mem->agg_off += *n;
	if (mem->agg_off == size)
		mem->agg = 0;
	else
		net_iov_get(netmem_to_net_iov(netmem));
	return netmem;
}

/* The queue gives up its open buffer (queue memory being freed). */
static void nsim_rx_agg_put(struct nsim_rq_mem *mem)
{
	if (mem->agg)
		net_iov_put(netmem_to_net_iov(mem->agg));
	mem->agg = 0;
}

/* The rest of the packet into payload buffers: pages, one per frag, or
 * net_iovs (of the binding's rx-page-size) on a queue bound to a dma-buf
 * (the skb becomes unreadable). Net_iovs larger than a page are packed
 * unless the queue's pack knob is off: several payloads share a buffer,
 * each frag's truesize is what it uses of it, and GRO merges frags that
 * continue each other into one.
 */
static int nsim_rx_payload(struct nsim_rq *rq, struct sk_buff *skb,
			   struct nsim_wpkt *wp, unsigned int off,
			   __wsum *csum)
{
	struct page_pool *pp = rq->mem.pp;
	const unsigned int size = PAGE_SIZE << pp->p.order;
	bool pack = size > PAGE_SIZE && page_pool_is_unreadable(pp) &&
		    READ_ONCE(rq->pack);
	unsigned int n, pg_off, bufs = 0;
	netmem_ref netmem;
	int err = 0;

	while (off < wp->len) {
		if (skb_shinfo(skb)->nr_frags == MAX_SKB_FRAGS) {
			err = -EMSGSIZE;
			break;
		}
		n = wp->len - off;
		netmem = nsim_rx_buf(rq, pack, size, &pg_off, &n, &bufs);
		if (!netmem) {
			err = -ENOMEM;
			break;
		}
		nsim_rx_fill(rq, netmem, pg_off, wp, off, n, csum);
		off += n;
		skb_add_rx_frag_netmem(skb, skb_shinfo(skb)->nr_frags, netmem,
				       pg_off, n, pack ? n : size);
	}
	nsim_stat_add(rq, &rq->stats.payload_bufs, bufs);
	return err;
}

/* What the checksum offload tells the stack: with rx-checksumming on
 * (@offload), what the queue's csum knob (@mode) says. The wire cannot
 * corrupt a packet, so what is reported is right. Return: false when the
 * packet cannot be delivered: payload in device memory that nothing
 * verified, which the stack cannot sum - unless the knob says "none",
 * which hands it to the stack anyway (which must refuse it).
 */
static bool nsim_rx_csum(struct sk_buff *skb, bool offload, u8 mode,
			 bool l4, __wsum csum)
{
	if (!offload)
		return skb_frags_readable(skb);
	switch (mode) {
	case NSIM_RX_CSUM_COMPLETE:
		/* Summed from the Ethernet header on, which
		 * eth_type_trans() has pulled since.
		 */
		skb->ip_summed = CHECKSUM_COMPLETE;
		skb->csum = csum;
		skb_postpull_rcsum(skb, eth_hdr(skb), ETH_HLEN);
		return true;
	case NSIM_RX_CSUM_NONE:
		return true;
	default:
		if (!l4)
			return skb_frags_readable(skb);
		skb->ip_summed = CHECKSUM_UNNECESSARY;
		return true;
	}
}

/* The TSO engine's TCP checksum, summed while the segment crossed, into
 * the headers the DMA engine wrote (always in the skb's linear part);
 * a running CHECKSUM_COMPLETE sum (@csum) takes it in too.
 */
static void nsim_rx_tcp_csum(struct sk_buff *skb, struct nsim_wpkt *wp,
			     __wsum *csum)
{
	unsigned int at = NSIM_WIRE_CB(wp->skb)->l4_off +
			  offsetof(struct tcphdr, check);
	__sum16 check = nsim_wpkt_csum(wp);

	memcpy(skb->data + at, &check, sizeof(check));
	if (csum)
		*csum = csum_block_add(*csum,
				       csum_partial(&check, sizeof(check), 0),
				       at);
}

/* What the HW-GRO engine tells the stack about an aggregate of @segs
 * wire packets cut from a frame of @gso_type: a TCP packet of MSS-byte
 * segments whose checksum is left to whoever segments it again, as GRO
 * leaves its own packets. The skb's data starts at the IP header.
 */
static void nsim_rx_agg_complete(struct sk_buff *skb,
				 const struct nsim_wire_cb *cb,
				 unsigned int gso_type, unsigned int segs)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	unsigned int tlen;
	struct tcphdr *th;

	skb_reset_network_header(skb);
	skb_set_transport_header(skb, cb->l4_off - ETH_HLEN);
	th = tcp_hdr(skb);
	tlen = skb->len - skb_transport_offset(skb);
	if (cb->l3 == 4) {
		th->check = ~tcp_v4_check(tlen, ip_hdr(skb)->saddr,
					  ip_hdr(skb)->daddr, 0);
	} else {
		th->check = ~tcp_v6_check(tlen, &ipv6_hdr(skb)->saddr,
					  &ipv6_hdr(skb)->daddr, 0);
	}
	/* TCPV4 or TCPV6, and FIXEDID as the sender's IP ids were */
	shinfo->gso_type = gso_type & ~SKB_GSO_TCP_ECN;
	if (th->cwr)
		shinfo->gso_type |= SKB_GSO_TCP_ECN;
	shinfo->gso_size = cb->mss;
	shinfo->gso_segs = segs;
	skb->csum_start = (unsigned char *)th - skb->head;
	skb->csum_offset = offsetof(struct tcphdr, check);
	skb->ip_summed = CHECKSUM_PARTIAL;
}

/* Build the skb of @wp, which is @segs wire packets: one, or an
 * aggregate of the HW-GRO engine.
 */
static struct sk_buff *nsim_rx_build(struct nsim_rq *rq,
				     struct nsim_wpkt *wp, unsigned int segs)
{
	const struct nsim_wire_cb *cb = NSIM_WIRE_CB(wp->skb);
	struct net_device *dev = rq->ns->netdev;
	netdev_features_t features = READ_ONCE(dev->features);
	bool offload = features & NETIF_F_RXCSUM;
	u8 mode = READ_ONCE(rq->csum);
	__wsum wsum = 0, *csum = NULL;
	struct sk_buff *skb;
	unsigned int done;

	if (offload && mode == NSIM_RX_CSUM_COMPLETE)
		csum = &wsum;
	if (READ_ONCE(rq->ns->dp.hds))
		skb = nsim_rx_split_head(rq, wp, &done, csum);
	else
		skb = nsim_rx_whole_head(rq, wp,
					 segs > 1 ? wp->hdr_len : wp->len,
					 &done, csum);
	if (!skb)
		return NULL;
	skb_mark_for_recycle(skb);
	if (nsim_rx_payload(rq, skb, wp, done, csum)) {
		kfree_skb(skb);
		return NULL;
	}
	if (wp->csum_pending)
		nsim_rx_tcp_csum(skb, wp, csum);

	skb->protocol = eth_type_trans(skb, dev);
	skb_record_rx_queue(skb, rq->idx);
	if ((features & NETIF_F_RXHASH) && cb->hash)
		skb_set_hash(skb, cb->hash,
			     cb->l4 ? PKT_HASH_TYPE_L4 : PKT_HASH_TYPE_L3);
	if (!nsim_rx_csum(skb, offload, mode, cb->l4, wsum)) {
		nsim_stat_add(rq, &rq->stats.devmem_drops, segs);
		kfree_skb(skb);
		return NULL;
	}

	u64_stats_update_begin(&rq->stats.syncp);
	rq->stats.packets += segs;
	rq->stats.bytes += wp->len + (segs - 1) * wp->hdr_len;
	rq->stats.csum[skb->ip_summed] += segs;
	if (segs > 1) {
		rq->stats.hw_gro_packets++;
		rq->stats.hw_gro_wire_packets += segs;
	}
	u64_stats_update_end(&rq->stats.syncp);
	if (segs > 1)
		nsim_rx_agg_complete(skb, cb,
				     skb_shinfo(wp->skb)->gso_type, segs);
	return skb;
}

/* The next at most @max wire packets of FIFO entry @wskb as one HW-GRO
 * aggregate in @wp, when rx-gro-hw is on and the queue's state lets the
 * engine coalesce them: checksums reported as verified (csum knob
 * "unnecessary"), no fault armed (drop_next and fail_alloc count wire
 * packets and buffers as they come one by one), and with header split,
 * segments that would each be split and no payload asked for in the
 * header buffer. Return: how many, or 0 for none.
 */
static unsigned int nsim_rx_agg(struct nsim_rq *rq, struct sk_buff *wskb,
				struct nsim_wpkt *wp, unsigned int max)
{
	struct netdevsim *ns = rq->ns;

	if (!(READ_ONCE(ns->netdev->features) & NETIF_F_GRO_HW) ||
	    READ_ONCE(rq->csum) != NSIM_RX_CSUM_UNNECESSARY ||
	    atomic_read(&rq->drop_next) || atomic_read(&rq->fail_alloc))
		return 0;
	if (READ_ONCE(ns->dp.hds) &&
	    (READ_ONCE(rq->hds_payload) ||
	     NSIM_WIRE_CB(wskb)->mss <= READ_ONCE(ns->dp.hds_thresh)))
		return 0;
	return nsim_wire_next_agg(wskb, wp, max);
}

/* Put what one poll took but did not get to back at the FIFO's head -
 * unless the queue stopped meanwhile, which loses it.
 */
static void nsim_rq_putback(struct nsim_rq *rq, struct sk_buff_head *rest)
{
	unsigned int n = 0;
	struct sk_buff *skb;

	skb_queue_walk(rest, skb)
		n += nsim_wire_pending(skb);
	spin_lock(&rq->backlog.lock);
	if (rq->running) {
		skb_queue_splice(rest, &rq->backlog);
		rq->backlog_pkts += n;
		n = 0;
	}
	spin_unlock(&rq->backlog.lock);
	if (n) {
		atomic64_add(n, &rq->ring_drops);
		__skb_queue_purge(rest);
	}
}

static int nsim_rq_poll(struct napi_struct *napi, int budget)
{
	struct nsim_rq *rq = container_of(napi, struct nsim_rq, napi);
	unsigned int taken = 0, n;
	struct sk_buff_head batch;
	struct sk_buff *wskb, *skb;
	struct nsim_wpkt wp;
	int done = 0;
	bool last;

	__skb_queue_head_init(&batch);
	wp.dma_dev = nsim_dma_dev(rq->ns);
	spin_lock(&rq->backlog.lock);
	while (taken < budget && (wskb = __skb_dequeue(&rq->backlog))) {
		n = nsim_wire_pending(wskb);
		rq->backlog_pkts -= n;
		taken += n;
		__skb_queue_tail(&batch, wskb);
	}
	spin_unlock(&rq->backlog.lock);

	while (done < budget && (wskb = skb_peek(&batch))) {
		n = nsim_rx_agg(rq, wskb, &wp, budget - done);
		skb = n ? nsim_rx_build(rq, &wp, n) : NULL;
		if (skb) {
			last = NSIM_WIRE_CB(wskb)->seg_next ==
			       NSIM_WIRE_CB(wskb)->seg_end;
		} else {
			/* Out of buffers for an aggregate: what fits goes
			 * in one wire packet at a time.
			 */
			if (n)
				nsim_wire_agg_undo(wskb, n);
			n = 1;
			last = nsim_wire_next(wskb, &wp);
			if (atomic_add_unless(&rq->drop_next, -1, 0)) {
				nsim_stat_add(rq, &rq->stats.drops, 1);
			} else {
				skb = nsim_rx_build(rq, &wp, 1);
				if (!skb)
					nsim_stat_add(rq, &rq->stats.drops, 1);
			}
		}
		done += n;
		if (skb)
			napi_gro_receive(napi, skb);
		if (!last)
			continue;
		/* Transmit completion for the sender: its socket may send
		 * more.
		 */
		__skb_unlink(wskb, &batch);
		consume_skb(wskb);
	}
	if (!skb_queue_empty(&batch))
		nsim_rq_putback(rq, &batch);

	if (done < budget)
		napi_complete_done(napi, done);
	return done;
}

/**
 * nsim_rq_enqueue() - put transmitted packets into rx queue @q's FIFO
 * @ns: the receiving port
 * @q: an active rx queue of @ns
 * @skb: one wire packet, or a GSO skb for the TSO engine; consumed
 * @npkts: how many wire packets @skb makes
 *
 * Called from the sender's transmit path, under rcu_read_lock. The FIFO
 * holds as many wire packets as the ring has buffers: those of @skb that
 * do not fit are lost, as the tail of a burst is on a real NIC.
 *
 * Return: 0, or -ENOBUFS when the queue is stopped or its FIFO is full
 * (the packets that did not fit are dropped and counted on the queue).
 */
int nsim_rq_enqueue(struct netdevsim *ns, unsigned int q, struct sk_buff *skb,
		    unsigned int npkts)
{
	struct nsim_rq *rq = &ns->dp.rqs[q];
	unsigned int ring = READ_ONCE(ns->dp.ring_size);
	unsigned int room = 0, lost;
	unsigned long flags;

	spin_lock_irqsave(&rq->backlog.lock, flags);
	if (rq->running && rq->backlog_pkts < ring)
		room = ring - rq->backlog_pkts;
	if (room) {
		if (npkts > room)
			NSIM_WIRE_CB(skb)->seg_end = room;
		__skb_queue_tail(&rq->backlog, skb);
		rq->backlog_pkts += min(npkts, room);
	}
	spin_unlock_irqrestore(&rq->backlog.lock, flags);

	lost = npkts - min(npkts, room);
	if (lost)
		atomic64_add(lost, &rq->ring_drops);
	if (!room) {
		kfree_skb(skb);
		return -ENOBUFS;
	}
	napi_schedule(&rq->napi);
	return lost ? -ENOBUFS : 0;
}

/* --- queue memory and restart ------------------------------------------- */

/* A pool for queue @rq; @payload pools may hold device memory unless
 * the queue's devmem_optout knob plays a driver that never opted in.
 */
static struct page_pool *nsim_pp_create(struct nsim_rq *rq, bool payload)
{
	struct netdevsim *ns = rq->ns;
	struct page_pool_params pp = {
		.flags		= PP_FLAG_DMA_MAP,
		.order		= 0,
		.pool_size	= ns->dp.ring_size,
		.nid		= NUMA_NO_NODE,
		.dev		= nsim_dma_dev(ns),
		.dma_dir	= DMA_FROM_DEVICE,
		.netdev		= ns->netdev,
		.napi		= &rq->napi,
		.queue_idx	= rq->idx,
	};

	if (payload && !rq->devmem_optout) {
		pp.flags |= PP_FLAG_ALLOW_UNREADABLE_NETMEM;
		/* Buffers of the provider's size (rx-page-size). */
		if (!rq->order_ignore)
			pp.order = netdev_rxq_page_order(ns->netdev, rq->idx);
	}
	return page_pool_create(&pp);
}

static void nsim_queue_mem_free(struct net_device *dev, void *per_queue_mem)
{
	struct nsim_rq_mem *mem = per_queue_mem;

	/* Buffers still in skbs keep their pool alive until they return. */
	nsim_rx_agg_put(mem);
	if (mem->pp)
		page_pool_destroy(mem->pp);
	if (mem->hdr_pp)
		page_pool_destroy(mem->hdr_pp);
	mem->pp = NULL;
	mem->hdr_pp = NULL;
}

static int nsim_queue_mem_alloc(struct net_device *dev, void *per_queue_mem,
				int idx)
{
	struct netdevsim *ns = netdev_priv(dev);
	struct nsim_rq_mem *mem = per_queue_mem;
	struct nsim_rq *rq = &ns->dp.rqs[idx];
	struct page_pool *pp;

	if (rq->fail_pool_create) {
		rq->fail_pool_create = false;
		netdev_info(dev, "rx queue %d: page pool creation failed (fault injected)\n",
			    idx);
		return -ENOMEM;
	}
	pp = nsim_pp_create(rq, true);
	if (IS_ERR(pp))
		return PTR_ERR(pp);
	mem->pp = pp;
	pp = nsim_pp_create(rq, false);
	if (IS_ERR(pp)) {
		nsim_queue_mem_free(dev, mem);
		return PTR_ERR(pp);
	}
	mem->hdr_pp = pp;
	return 0;
}

static int nsim_queue_start(struct net_device *dev, void *per_queue_mem,
			    int idx)
{
	struct netdevsim *ns = netdev_priv(dev);
	struct nsim_rq_mem *mem = per_queue_mem;
	struct nsim_rq *rq = &ns->dp.rqs[idx];

	rq->mem = *mem;
	memset(mem, 0, sizeof(*mem));
	napi_enable(&rq->napi);
	spin_lock_bh(&rq->backlog.lock);
	rq->running = true;
	spin_unlock_bh(&rq->backlog.lock);
	return 0;
}

static int nsim_queue_stop(struct net_device *dev, void *per_queue_mem,
			   int idx)
{
	struct netdevsim *ns = netdev_priv(dev);
	struct nsim_rq_mem *mem = per_queue_mem;
	struct nsim_rq *rq = &ns->dp.rqs[idx];
	struct sk_buff_head lost;

	__skb_queue_head_init(&lost);
	spin_lock_bh(&rq->backlog.lock);
	rq->running = false;
	skb_queue_splice_init(&rq->backlog, &lost);
	/* Packets the NIC had not written out yet are lost, as on hardware. */
	atomic64_add(rq->backlog_pkts, &rq->ring_drops);
	rq->backlog_pkts = 0;
	spin_unlock_bh(&rq->backlog.lock);
	__skb_queue_purge(&lost);

	napi_disable(&rq->napi);
	*mem = rq->mem;
	memset(&rq->mem, 0, sizeof(rq->mem));
	return 0;
}

/* The payload pools of a queue take device memory unless its
 * devmem_optout knob plays a driver that never opted in (nsim_pp_create).
 */
static bool nsim_queue_mp_supported(struct net_device *dev, int idx)
{
	struct netdevsim *ns = netdev_priv(dev);

	return idx < ns->dp.num_rqs && !ns->dp.rqs[idx].devmem_optout;
}

static const struct netdev_queue_mgmt_ops nsim_queue_mgmt_ops = {
	.ndo_queue_mem_size	= sizeof(struct nsim_rq_mem),
	.supported_params	= QCFG_RX_PAGE_SIZE,
	.ndo_queue_mem_alloc	= nsim_queue_mem_alloc,
	.ndo_queue_mem_free	= nsim_queue_mem_free,
	.ndo_queue_start	= nsim_queue_start,
	.ndo_queue_stop		= nsim_queue_stop,
	.ndo_queue_mp_supported	= nsim_queue_mp_supported,
};

void nsim_rq_close_range(struct netdevsim *ns, unsigned int from,
			 unsigned int to)
{
	struct net_device *dev = ns->netdev;
	struct nsim_rq_mem mem;
	unsigned int i;

	for (i = from; i < to; i++) {
		nsim_queue_stop(dev, &mem, i);
		nsim_queue_mem_free(dev, &mem);
	}
}

int nsim_rq_open_range(struct netdevsim *ns, unsigned int from,
		       unsigned int to)
{
	struct net_device *dev = ns->netdev;
	struct nsim_rq_mem mem = {};
	unsigned int i;
	int err;

	for (i = from; i < to; i++) {
		err = nsim_queue_mem_alloc(dev, &mem, i);
		if (err) {
			nsim_rq_close_range(ns, from, i);
			return err;
		}
		nsim_queue_start(dev, &mem, i);
	}
	return 0;
}

/* Rebuild every active queue (ring size change); stops at the first
 * failure, which leaves that queue on its old memory.
 */
int nsim_rq_restart_all(struct netdevsim *ns)
{
	unsigned int i;
	int err;

	for (i = 0; i < ns->netdev->real_num_rx_queues; i++) {
		err = netdev_rx_queue_restart(ns->netdev, i);
		if (err)
			return err;
	}
	return 0;
}

int nsim_dp_open(struct net_device *dev)
{
	return nsim_rq_open_range(netdev_priv(dev), 0, dev->real_num_rx_queues);
}

int nsim_dp_stop(struct net_device *dev)
{
	nsim_rq_close_range(netdev_priv(dev), 0, dev->real_num_rx_queues);
	return 0;
}

/* --- held buffers (fault knob) ------------------------------------------ */

/* Take @n payload buffers out of the running queue's pool and keep them,
 * as a NIC keeps buffers posted to its ring. Under rtnl.
 */
int nsim_rq_hold(struct nsim_rq *rq, unsigned int n)
{
	struct page *page;
	int err = 0;

	if (!rq->running)
		return -ENETDOWN;
	if (n > NSIM_HOLD_MAX - rq->nheld)
		return -ENOSPC;

	/* The pool's allocation cache belongs to the NAPI poll. */
	napi_disable(&rq->napi);
	local_bh_disable();
	while (n--) {
		page = page_pool_dev_alloc_pages(rq->mem.pp);
		if (!page) {
			err = -ENOMEM;
			break;
		}
		rq->held[rq->nheld++] = page;
	}
	local_bh_enable();
	napi_enable(&rq->napi);
	return err;
}

/* Give held buffers back to the pool they came from, which may be one a
 * queue restart has already destroyed (it waits for them).
 */
void nsim_rq_release_held(struct nsim_rq *rq)
{
	struct page *page;

	while (rq->nheld) {
		page = rq->held[--rq->nheld];
		page_pool_put_full_page(page->pp, page, false);
	}
}

/* Take up to @n held buffers out of their pool for good, the way a driver
 * that recycles pages itself does: page_pool_release_page(), then
 * put_page(). A memory provider's buffer is not a page: its pool refuses
 * to release it (and warns), it still belongs to the pool and stays held.
 * Returns how many left the pool. Under rtnl.
 */
unsigned int nsim_rq_unpool_held(struct nsim_rq *rq, unsigned int n)
{
	unsigned int i, kept = 0, released = 0;
	struct page *page;

	for (i = 0; i < rq->nheld; i++) {
		page = rq->held[i];
		if (n) {
			n--;
			page_pool_release_page(page->pp, page);
			if (!page->pp) {
				put_page(page);
				released++;
				continue;
			}
		}
		rq->held[kept++] = page;
	}
	rq->nheld = kept;
	return released;
}

/* --- set-up and statistics ---------------------------------------------- */

int nsim_dp_init(struct netdevsim *ns)
{
	struct device *dmadev = nsim_dma_dev(ns);
	struct net_device *dev = ns->netdev;
	unsigned int i;
	int err;

	nsim_steer_init(ns);
	/* VFs have no datapath: they drop what they send, as before. */
	if (!nsim_dev_port_is_pf(ns->nsim_dev_port))
		return 0;

	/* A device that does DMA, directly, to any address. */
	err = dma_coerce_mask_and_coherent(dmadev, DMA_BIT_MASK(64));
	if (err)
		return err;

	ns->dp.num_rqs = dev->num_rx_queues;
	ns->dp.rqs = kcalloc(ns->dp.num_rqs, sizeof(*ns->dp.rqs), GFP_KERNEL);
	if (!ns->dp.rqs)
		return -ENOMEM;
	for (i = 0; i < ns->dp.num_rqs; i++) {
		struct nsim_rq *rq = &ns->dp.rqs[i];

		rq->ns = ns;
		rq->idx = i;
		rq->pack = true;
		skb_queue_head_init(&rq->backlog);
		u64_stats_init(&rq->stats.syncp);
		netif_napi_add(dev, &rq->napi, nsim_rq_poll);
		netif_queue_set_napi(dev, i, NETDEV_QUEUE_TYPE_RX, &rq->napi);
	}
	ns->dp.ring_size = NSIM_RING_DEFAULT;
	ns->dp.qops = nsim_queue_mgmt_ops;
	dev->queue_mgmt_ops = &ns->dp.qops;
	/* the wire reads net_iov frags by DMA address (wire.c) */
	dev->netmem_tx = true;
	return 0;
}

/* After unregister: the queues are closed and nobody links to us. */
void nsim_dp_uninit(struct netdevsim *ns)
{
	unsigned int i;

	nsim_steer_uninit(ns);
	for (i = 0; i < ns->dp.num_rqs; i++) {
		nsim_rq_release_held(&ns->dp.rqs[i]);
		netif_queue_set_napi(ns->netdev, i, NETDEV_QUEUE_TYPE_RX, NULL);
		netif_napi_del(&ns->dp.rqs[i].napi);
	}
	kfree(ns->dp.rqs);
	ns->dp.rqs = NULL;
	ns->dp.num_rqs = 0;
}

void nsim_rq_read_stats(struct nsim_rq *rq, u64 *out)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&rq->stats.syncp);
		out[NSIM_RQ_PACKETS] = rq->stats.packets;
		out[NSIM_RQ_BYTES] = rq->stats.bytes;
		out[NSIM_RQ_HDR_BUFS] = rq->stats.hdr_bufs;
		out[NSIM_RQ_PAYLOAD_BUFS] = rq->stats.payload_bufs;
		out[NSIM_RQ_DROPS] = rq->stats.drops;
		out[NSIM_RQ_ALLOC_FAIL] = rq->stats.alloc_fail;
		out[NSIM_RQ_DEVMEM_DROPS] = rq->stats.devmem_drops;
		out[NSIM_RQ_CSUM_UNNECESSARY] =
			rq->stats.csum[CHECKSUM_UNNECESSARY];
		out[NSIM_RQ_CSUM_COMPLETE] = rq->stats.csum[CHECKSUM_COMPLETE];
		out[NSIM_RQ_CSUM_NONE] = rq->stats.csum[CHECKSUM_NONE];
		out[NSIM_RQ_HW_GRO_PACKETS] = rq->stats.hw_gro_packets;
		out[NSIM_RQ_HW_GRO_WIRE_PACKETS] =
			rq->stats.hw_gro_wire_packets;
	} while (u64_stats_fetch_retry(&rq->stats.syncp, start));
	out[NSIM_RQ_DROPS] += atomic64_read(&rq->ring_drops);
}

void nsim_dp_get_stats64(struct net_device *dev,
			 struct rtnl_link_stats64 *stats)
{
	struct netdevsim *ns = netdev_priv(dev);
	u64 s[NSIM_RQ_NSTATS];
	unsigned int i;

	for (i = 0; i < ns->dp.num_rqs; i++) {
		nsim_rq_read_stats(&ns->dp.rqs[i], s);
		stats->rx_packets += s[NSIM_RQ_PACKETS];
		stats->rx_bytes += s[NSIM_RQ_BYTES];
		stats->rx_dropped += s[NSIM_RQ_DROPS];
	}
	stats->rx_length_errors = atomic64_read(&ns->dp.rx_length_errors);
	stats->rx_errors = stats->rx_length_errors;
	stats->rx_dropped += atomic64_read(&ns->dp.rx_filtered);
	stats->tx_packets = atomic64_read(&ns->dp.tx_packets);
	stats->tx_bytes = atomic64_read(&ns->dp.tx_bytes);
	stats->tx_dropped = atomic64_read(&ns->dp.tx_drop_no_peer) +
			    atomic64_read(&ns->dp.tx_drop_peer_down);
	stats->tx_errors = atomic64_read(&ns->dp.tx_errors);
}
