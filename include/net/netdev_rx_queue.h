/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-queue restart operations of a network device.
 *
 * A driver that can rebuild one rx queue while the others keep running
 * fills in struct netdev_queue_mgmt_ops and points dev->queue_mgmt_ops at
 * it. The core then restarts a queue with netdev_rx_queue_restart(): it asks
 * the driver to build the new queue's memory first, swaps it in and frees
 * the old memory, or puts the old queue back when the new one cannot start.
 */
#ifndef _NET_NETDEV_RX_QUEUE_H
#define _NET_NETDEV_RX_QUEUE_H

#include <linux/netdevice.h>
#include <uapi/linux/netdev.h>

/**
 * struct netdev_queue_mgmt_ops - rebuild one rx queue in place
 * @ndo_queue_mem_size: size of the driver's per-queue memory descriptor;
 *	the core allocates two of them (new and old) per restart
 * @ndo_queue_mem_alloc: build everything queue @idx needs to run (buffer
 *	pools, rings) into @per_queue_mem, without touching the live queue
 * @ndo_queue_mem_free: free what mem_alloc built, or what queue_stop
 *	handed back
 * @ndo_queue_start: make queue @idx run on @per_queue_mem
 * @ndo_queue_stop: stop queue @idx and move its memory into @per_queue_mem
 * @ndo_queue_mp_supported: whether queue @idx can take its buffers from a
 *	memory provider (device memory); optional, absent means no. Must not
 *	depend on the device being up: bind-rx asks it on down devices too.
 * @supported_params: QCFG_* flags: the queue parameters a memory provider
 *	may set that the driver honours. QCFG_RX_PAGE_SIZE: the driver
 *	creates the queue's provider pool with order
 *	netdev_rxq_page_order(), and fills buffers of that size.
 *
 * The first four are called under rtnl_lock, with the device running;
 * ndo_queue_mp_supported under rtnl_lock, up or down.
 */
struct netdev_queue_mgmt_ops {
	size_t ndo_queue_mem_size;
	unsigned int supported_params;
	int (*ndo_queue_mem_alloc)(struct net_device *dev, void *per_queue_mem,
				   int idx);
	void (*ndo_queue_mem_free)(struct net_device *dev, void *per_queue_mem);
	int (*ndo_queue_start)(struct net_device *dev, void *per_queue_mem,
			       int idx);
	int (*ndo_queue_stop)(struct net_device *dev, void *per_queue_mem,
			      int idx);
	bool (*ndo_queue_mp_supported)(struct net_device *dev, int idx);
};

#define QCFG_RX_PAGE_SIZE	BIT(0)

int netdev_rx_queue_restart(struct net_device *dev, unsigned int rxq_idx);
unsigned int dev_get_min_mp_channel_count(struct net_device *dev);

/* The page order of the buffers rx queue @idx's memory provider hands
 * out: 0 without a provider, or for one that uses pages. Under rtnl.
 */
unsigned int netdev_rxq_page_order(struct net_device *dev, unsigned int idx);

/**
 * netif_queue_set_napi - record which NAPI instance serves a queue
 * @dev: the device
 * @idx: queue index, below dev->num_rx_queues or dev->num_tx_queues
 * @type: NETDEV_QUEUE_TYPE_RX or NETDEV_QUEUE_TYPE_TX
 * @napi: the NAPI instance, or NULL to forget it
 *
 * The netdev family's queue-get reports the instance's id. Call under
 * rtnl_lock, or before the device is registered.
 */
static inline void netif_queue_set_napi(struct net_device *dev,
					unsigned int idx,
					enum netdev_queue_type type,
					struct napi_struct *napi)
{
	if (type == NETDEV_QUEUE_TYPE_RX)
		__netif_get_rx_queue(dev, idx)->napi = napi;
	else
		netdev_get_tx_queue(dev, idx)->napi = napi;
}

#endif /* _NET_NETDEV_RX_QUEUE_H */
