// SPDX-License-Identifier: GPL-2.0
/*
 * Restarting one rx queue of a running device: the primitive under
 * device-memory binding, which must swap a queue's buffer source without
 * taking the whole interface down.
 */
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/netdev_rx_queue.h>
#include <net/page_pool_mp.h>

/**
 * netdev_rx_queue_restart() - rebuild rx queue @rxq_idx of @dev
 * @dev: the device, under rtnl_lock
 * @rxq_idx: an active rx queue (below real_num_rx_queues)
 *
 * The new memory is built before the old queue stops, so a failure to
 * allocate leaves the queue exactly as it was. When the new memory does not
 * start, the old memory is started again.
 *
 * Return: 0, -EOPNOTSUPP when the driver cannot restart queues, -EINVAL
 * for an inactive queue, or the driver's error (the queue still runs on
 * its old memory). A device that is down has nothing to restart: its
 * queues are built when it comes up, so 0 is returned.
 */
int netdev_rx_queue_restart(struct net_device *dev, unsigned int rxq_idx)
{
	const struct netdev_queue_mgmt_ops *ops = dev->queue_mgmt_ops;
	void *new_mem, *old_mem;
	int err, err2;

	ASSERT_RTNL();

	if (!ops || !ops->ndo_queue_mem_alloc || !ops->ndo_queue_mem_free ||
	    !ops->ndo_queue_start || !ops->ndo_queue_stop)
		return -EOPNOTSUPP;
	if (rxq_idx >= dev->real_num_rx_queues)
		return -EINVAL;
	if (!netif_running(dev))
		return 0;

	new_mem = kvzalloc(ops->ndo_queue_mem_size, GFP_KERNEL);
	old_mem = kvzalloc(ops->ndo_queue_mem_size, GFP_KERNEL);
	if (!new_mem || !old_mem) {
		err = -ENOMEM;
		goto out_free;
	}

	err = ops->ndo_queue_mem_alloc(dev, new_mem, rxq_idx);
	if (err)
		goto out_free;

	err = ops->ndo_queue_stop(dev, old_mem, rxq_idx);
	if (err) {
		/* Still running on the old memory: nothing was swapped. */
		ops->ndo_queue_mem_free(dev, new_mem);
		goto out_free;
	}

	err = ops->ndo_queue_start(dev, new_mem, rxq_idx);
	if (err) {
		err2 = ops->ndo_queue_start(dev, old_mem, rxq_idx);
		/* Both failing leaves the queue stopped: say so loudly. */
		if (WARN(err2, "%s: rx queue %u lost: restart failed (%d), rollback failed (%d)\n",
			 netdev_name(dev), rxq_idx, err, err2))
			ops->ndo_queue_mem_free(dev, old_mem);
		ops->ndo_queue_mem_free(dev, new_mem);
		goto out_free;
	}

	ops->ndo_queue_mem_free(dev, old_mem);

out_free:
	kvfree(old_mem);
	kvfree(new_mem);
	return err;
}
EXPORT_SYMBOL_GPL(netdev_rx_queue_restart);

/**
 * dev_get_min_mp_channel_count() - rx queues a memory provider needs
 * @dev: the device, under rtnl_lock
 *
 * Return: one more than the highest rx queue index with a memory provider
 * installed (device memory bound), or 0 when there is none. Channel
 * counts must not go below it.
 */
unsigned int dev_get_min_mp_channel_count(struct net_device *dev)
{
	unsigned int i;

	ASSERT_RTNL();
	for (i = dev->real_num_rx_queues; i > 0; i--)
		if (__netif_get_rx_queue(dev, i - 1)->mp_ops)
			return i;
	return 0;
}
EXPORT_SYMBOL_GPL(dev_get_min_mp_channel_count);

unsigned int netdev_rxq_page_order(struct net_device *dev, unsigned int idx)
{
	struct netdev_rx_queue *rxq = __netif_get_rx_queue(dev, idx);

	ASSERT_RTNL();
	if (!rxq->mp_ops || !rxq->mp_ops->page_order)
		return 0;
	return rxq->mp_ops->page_order(rxq->mp_priv);
}
EXPORT_SYMBOL_GPL(netdev_rxq_page_order);
