// SPDX-License-Identifier: GPL-2.0
/*
 * e1000e: header split from a page pool, and device memory.
 *
 * With tcp-data-split on (ethtool -G DEV tcp-data-split on), the receive
 * ring uses the controller's packet-split descriptors at any MTU: the
 * hardware writes the protocol headers into the header buffer (an skb's
 * linear area, host memory) and the rest of the packet into up to three
 * payload buffers. The payload buffers then come from a page pool, one per
 * ring, created for rx queue 0. When netdev bind-rx installs a memory
 * provider on that queue, the pool takes its buffers from the provider:
 * the hardware DMAs payload straight into the bound dma-buf, and the skbs
 * built from them are unreadable.
 *
 * The controller has one rx queue; the queue restart operations rebuild
 * it by quiescing and resetting the whole device (e1000e_down() with a
 * reset: the 82574 cannot stop its receive unit on its own), swapping the
 * ring's pool, and bringing it back up (e1000e_up()).
 *
 * On transmit, frags that are net_iovs of a tx binding are handed to the
 * hardware at the binding's DMA address (skb_frag_dma_map()) and never
 * unmapped by the driver (dev->netmem_tx).
 *
 * Only the 82574 does either; it is the part tested (QEMU's e1000e).
 */

#include <linux/delay.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/pm_runtime.h>
#include <net/netdev_rx_queue.h>
#include <net/page_pool.h>
#include <net/page_pool_mp.h>

#include "e1000.h"

static bool e1000e_hds_capable(const struct e1000_adapter *adapter)
{
	return adapter->hw.mac.type == e1000_82574;
}

static struct page_pool *e1000e_pp_create(struct e1000_adapter *adapter,
					  unsigned int count)
{
	struct page_pool_params pp = {
		.flags		= PP_FLAG_DMA_MAP |
				  PP_FLAG_ALLOW_UNREADABLE_NETMEM,
		.order		= 0,
		.pool_size	= count * PS_PAGE_BUFFERS,
		.nid		= NUMA_NO_NODE,
		.dev		= &adapter->pdev->dev,
		.dma_dir	= DMA_FROM_DEVICE,
		.netdev		= adapter->netdev,
		.napi		= &adapter->napi,
		.queue_idx	= 0,
	};

	return page_pool_create(&pp);
}

/**
 * e1000e_rx_pp_create - give an rx ring the page pool header split needs
 * @rx_ring: the ring, its count set
 *
 * Without header split the ring keeps no pool. Returns 0 or -errno.
 */
int e1000e_rx_pp_create(struct e1000_ring *rx_ring)
{
	struct e1000_adapter *adapter = rx_ring->adapter;
	struct page_pool *pp;

	rx_ring->pp = NULL;
	if (!(adapter->flags2 & FLAG2_RX_HDS))
		return 0;
	pp = e1000e_pp_create(adapter, rx_ring->count);
	if (IS_ERR(pp))
		return PTR_ERR(pp);
	rx_ring->pp = pp;
	return 0;
}

/* Every buffer of the ring has gone back to the pool (clean_rx_ring);
 * those still in skbs keep it alive until they return.
 */
void e1000e_rx_pp_destroy(struct e1000_ring *rx_ring)
{
	if (rx_ring->pp)
		page_pool_destroy(rx_ring->pp);
	rx_ring->pp = NULL;
}

/* A payload buffer from the ring's pool for @ps_page. */
int e1000e_ps_page_alloc(struct e1000_ring *rx_ring,
			 struct e1000_ps_page *ps_page, gfp_t gfp)
{
	netmem_ref netmem = page_pool_alloc_netmem(rx_ring->pp,
						   gfp | __GFP_NOWARN);

	if (!netmem)
		return -ENOMEM;
	ps_page->netmem = netmem;
	ps_page->dma = page_pool_get_dma_addr_netmem(netmem);
	return 0;
}

/* Give an unused payload buffer back to the pool. */
void e1000e_ps_page_put(struct e1000_ring *rx_ring,
			struct e1000_ps_page *ps_page)
{
	page_pool_put_full_netmem(rx_ring->pp, ps_page->netmem, false);
	ps_page->netmem = 0;
	ps_page->dma = 0;
}

/* The hardware wrote @len bytes into @ps_page: frag @i of @skb. Its
 * reference becomes the frag's; a net_iov makes @skb unreadable.
 */
void e1000e_ps_page_add_frag(struct e1000_ring *rx_ring, struct sk_buff *skb,
			     int i, struct e1000_ps_page *ps_page,
			     unsigned int len)
{
	struct device *dev = &rx_ring->adapter->pdev->dev;

	if (!netmem_is_net_iov(ps_page->netmem))
		dma_sync_single_for_cpu(dev, ps_page->dma, len,
					DMA_FROM_DEVICE);
	skb_add_rx_frag_netmem(skb, i, ps_page->netmem, 0, len, PAGE_SIZE);
	skb_mark_for_recycle(skb);
	if (netmem_is_net_iov(ps_page->netmem))
		rx_ring->adapter->rx_hds_netmem_bytes += len;
	ps_page->netmem = 0;
	ps_page->dma = 0;
}

/* --- rebuilding the one rx queue ---------------------------------------- */

/* Quiesce and reset the device (resumed from runtime suspend first):
 * every rx buffer goes back to its pool. Under rtnl; pairs with
 * e1000e_hds_resume(), as e1000_change_mtu() does it.
 */
static void e1000e_hds_quiesce(struct e1000_adapter *adapter)
{
	while (test_and_set_bit(__E1000_RESETTING, &adapter->state))
		usleep_range(1000, 2000);
	pm_runtime_get_sync(&adapter->pdev->dev);
	e1000e_down(adapter, true);
}

static void e1000e_hds_resume(struct e1000_adapter *adapter)
{
	e1000e_up(adapter);
	pm_runtime_put_sync(&adapter->pdev->dev);
	clear_bit(__E1000_RESETTING, &adapter->state);
}

struct e1000e_queue_mem {
	struct page_pool *pp;
};

static int e1000e_queue_mem_alloc(struct net_device *netdev,
				  void *per_queue_mem, int idx)
{
	struct e1000_adapter *adapter = netdev_priv(netdev);
	struct e1000e_queue_mem *mem = per_queue_mem;
	struct page_pool *pp;

	pp = e1000e_pp_create(adapter, adapter->rx_ring->count);
	if (IS_ERR(pp))
		return PTR_ERR(pp);
	mem->pp = pp;
	return 0;
}

static void e1000e_queue_mem_free(struct net_device *netdev,
				  void *per_queue_mem)
{
	struct e1000e_queue_mem *mem = per_queue_mem;

	if (mem->pp)
		page_pool_destroy(mem->pp);
	mem->pp = NULL;
}

static int e1000e_queue_stop(struct net_device *netdev, void *per_queue_mem,
			     int idx)
{
	struct e1000_adapter *adapter = netdev_priv(netdev);
	struct e1000e_queue_mem *mem = per_queue_mem;

	e1000e_hds_quiesce(adapter);
	mem->pp = adapter->rx_ring->pp;
	adapter->rx_ring->pp = NULL;
	return 0;
}

static int e1000e_queue_start(struct net_device *netdev, void *per_queue_mem,
			      int idx)
{
	struct e1000_adapter *adapter = netdev_priv(netdev);
	struct e1000e_queue_mem *mem = per_queue_mem;

	adapter->rx_ring->pp = mem->pp;
	mem->pp = NULL;
	e1000e_hds_resume(adapter);
	return 0;
}

/* Payload buffers come from the pool only with header split, which
 * bind-rx checks on its own (tcp-data-split must be on).
 */
static bool e1000e_queue_mp_supported(struct net_device *netdev, int idx)
{
	return idx == 0;
}

static const struct netdev_queue_mgmt_ops e1000e_queue_mgmt_ops = {
	.ndo_queue_mem_size	= sizeof(struct e1000e_queue_mem),
	.ndo_queue_mem_alloc	= e1000e_queue_mem_alloc,
	.ndo_queue_mem_free	= e1000e_queue_mem_free,
	.ndo_queue_start	= e1000e_queue_start,
	.ndo_queue_stop		= e1000e_queue_stop,
	.ndo_queue_mp_supported	= e1000e_queue_mp_supported,
};

/* --- ethtool: tcp-data-split -------------------------------------------- */

void e1000e_get_rx_hds(struct e1000_adapter *adapter,
		       struct kernel_ethtool_ringparam *kring)
{
	if (!e1000e_hds_capable(adapter))
		kring->tcp_data_split = ETHTOOL_TCP_DATA_SPLIT_UNKNOWN;
	else if (adapter->flags2 & FLAG2_RX_HDS)
		kring->tcp_data_split = ETHTOOL_TCP_DATA_SPLIT_ENABLED;
	else
		kring->tcp_data_split = ETHTOOL_TCP_DATA_SPLIT_DISABLED;
}

/**
 * e1000e_set_rx_hds - turn header split on or off
 * @adapter: the device
 * @split: ETHTOOL_TCP_DATA_SPLIT_*; UNKNOWN changes nothing
 * @extack: why a refusal
 *
 * A running device is quiesced and reset, and comes back with the ring
 * refilled from the new kind of buffers. Under rtnl.
 */
int e1000e_set_rx_hds(struct e1000_adapter *adapter, u8 split,
		      struct netlink_ext_ack *extack)
{
	bool on = split == ETHTOOL_TCP_DATA_SPLIT_ENABLED;
	struct e1000_ring *rx_ring = adapter->rx_ring;
	struct page_pool *pp = NULL, *old;

	if (split == ETHTOOL_TCP_DATA_SPLIT_UNKNOWN ||
	    on == !!(adapter->flags2 & FLAG2_RX_HDS))
		return 0;
	if (!e1000e_hds_capable(adapter)) {
		NL_SET_ERR_MSG(extack,
			       "header split is supported on the 82574 only");
		return -EOPNOTSUPP;
	}
	if (!netif_running(adapter->netdev)) {
		/* the pool is made when the ring is, at open */
		adapter->flags2 ^= FLAG2_RX_HDS;
		return 0;
	}
	if (on) {
		pp = e1000e_pp_create(adapter, rx_ring->count);
		if (IS_ERR(pp)) {
			NL_SET_ERR_MSG(extack,
				       "cannot create the rx ring's page pool");
			return PTR_ERR(pp);
		}
	}
	e1000e_hds_quiesce(adapter);
	adapter->flags2 ^= FLAG2_RX_HDS;
	old = rx_ring->pp;
	rx_ring->pp = pp;
	e1000e_hds_resume(adapter);
	if (old)
		page_pool_destroy(old);
	return 0;
}

/* At probe, before the device is registered. */
void e1000e_devmem_init(struct e1000_adapter *adapter)
{
	struct net_device *netdev = adapter->netdev;

	if (!e1000e_hds_capable(adapter))
		return;
	netdev->queue_mgmt_ops = &e1000e_queue_mgmt_ops;
	netdev->netmem_tx = true;
	netif_queue_set_napi(netdev, 0, NETDEV_QUEUE_TYPE_RX, &adapter->napi);
	netif_queue_set_napi(netdev, 0, NETDEV_QUEUE_TYPE_TX, &adapter->napi);
}
