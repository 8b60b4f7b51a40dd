/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device-memory bindings: a dma-buf bound to rx queues of a device, or
 * mapped for sending through it (net/core/devmem.c, devmem_tx.c). Used by
 * the netdev family (bind-rx, bind-tx, queue-get).
 */
#ifndef _NET_CORE_DEVMEM_H
#define _NET_CORE_DEVMEM_H

#include <linux/dma-direction.h>
#include <linux/err.h>
#include <linux/list.h>
#include <linux/netlink.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/netmem.h>

struct device;
struct dma_buf;
struct dma_buf_attachment;
struct net_device;
struct netdev_rx_queue;
struct netlink_ext_ack;
struct sg_table;
struct sock;

/**
 * struct net_devmem_dmabuf_binding - a dma-buf mapped for one device
 * @area: the net_iovs, one per buffer of the dma-buf (a page, or the
 *	rx-page-size), in offset order; @area.tx tells a tx binding
 *	(DMA_TO_DEVICE) from an rx one
 * @dmabuf: held until the binding is freed
 * @attachment: @dmabuf attached to @dma_dev
 * @sgt: the mapping
 * @dma_dev: the device's DMA device, held
 * @dev: the net device; NULL once it is unregistered. A tx binding keeps
 *	it after unbind, so that sends in flight still go out (read locklessly
 *	on transmit: READ_ONCE/WRITE_ONCE)
 * @bound_rxqs: queue index -> rxq (rx bindings)
 * @id: 0 until published
 * @owner: the netlink socket that made it, held; NULL until published
 * @owner_portid: narrows the release walk
 * @owner_netns: cookie of the network namespace it was bound in
 * @owner_uid: effective uid of the process that bound it; with
 *	@owner_netns, who may send from a tx binding
 * @owner_node: in the bucket of its owner's (namespace, port id), while
 *	published
 * @user_charged: counted against @owner_uid's tx bindings
 * @ref: the owner's, each page pool's (rx) and each skb frag's (tx)
 * @free_lock: protects @free_list
 * @free_list: free rx buffers, linked through net_iov::pp
 * @tx_node: on the list of tx bindings (until freed)
 * @free_work: the last reference frees from process context
 * @rcu: senders look ids up under RCU
 */
struct net_devmem_dmabuf_binding {
	struct net_iov_area area;
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attachment;
	struct sg_table *sgt;
	struct device *dma_dev;
	struct net_device *dev;
	struct xarray bound_rxqs;
	u32 id;
	struct sock *owner;
	u32 owner_portid;
	u64 owner_netns;
	kuid_t owner_uid;
	struct hlist_node owner_node;
	bool user_charged;
	refcount_t ref;

	spinlock_t free_lock;		/* protects free_list */
	struct net_iov *free_list;

	struct list_head tx_node;
	struct work_struct free_work;
	struct rcu_head rcu;
};

static inline struct net_devmem_dmabuf_binding *
net_devmem_binding_of(const struct net_iov *niov)
{
	return container_of(net_iov_owner(niov),
			    struct net_devmem_dmabuf_binding, area);
}

#if IS_ENABLED(CONFIG_NET_DEVMEM)

/* Take dma-buf @fd and map it for @dev's DMA device, for receiving
 * (DMA_FROM_DEVICE) or sending (DMA_TO_DEVICE), cut into buffers of
 * 1 << @shift bytes (PAGE_SHIFT or more). Under rtnl.
 */
struct net_devmem_dmabuf_binding *
net_devmem_bind_dmabuf(struct net_device *dev, unsigned int fd,
		       enum dma_data_direction dir, unsigned int shift,
		       struct netlink_ext_ack *extack);

/* Drop a reference; the last one unmaps and frees. Any context. */
void net_devmem_binding_put(struct net_devmem_dmabuf_binding *binding);

/* The published binding @id with a reference, or NULL. Any context. */
struct net_devmem_dmabuf_binding *net_devmem_lookup(u32 id);

/* Install the binding on rx queue @idx of its device and restart it. */
int net_devmem_bind_dmabuf_to_queue(struct net_devmem_dmabuf_binding *binding,
				    u32 idx, struct netlink_ext_ack *extack);

/* Give the binding its id and its owner, netlink socket @owner (port id
 * @portid), which the binding holds: it lives until that socket closes.
 * The binding also records the owner's network namespace.
 */
int net_devmem_publish(struct net_devmem_dmabuf_binding *binding,
		       struct sock *owner, u32 portid);

u32 net_devmem_binding_id(const struct net_devmem_dmabuf_binding *binding);

/* Take the binding off its queues (restarting them) and drop the
 * owner's reference. Under rtnl.
 */
void net_devmem_unbind_dmabuf(struct net_devmem_dmabuf_binding *binding);

/* The id of the binding installed on @rxq, or 0. Under rtnl. */
u32 net_devmem_rxq_binding_id(const struct netdev_rx_queue *rxq);

#else /* !CONFIG_NET_DEVMEM: no dma-buf or no page pools, no binding */

static inline struct net_devmem_dmabuf_binding *
net_devmem_bind_dmabuf(struct net_device *dev, unsigned int fd,
		       enum dma_data_direction dir, unsigned int shift,
		       struct netlink_ext_ack *extack)
{
	NL_SET_ERR_MSG(extack,
		       "device memory is not supported by this kernel (CONFIG_NET_DEVMEM)");
	return ERR_PTR(-EOPNOTSUPP);
}

static inline int
net_devmem_bind_dmabuf_to_queue(struct net_devmem_dmabuf_binding *binding,
				u32 idx, struct netlink_ext_ack *extack)
{
	return -EOPNOTSUPP;
}

static inline int
net_devmem_publish(struct net_devmem_dmabuf_binding *binding,
		   struct sock *owner, u32 portid)
{
	return -EOPNOTSUPP;
}

static inline u32
net_devmem_binding_id(const struct net_devmem_dmabuf_binding *binding)
{
	return 0;
}

static inline void
net_devmem_unbind_dmabuf(struct net_devmem_dmabuf_binding *binding)
{
}

static inline u32
net_devmem_rxq_binding_id(const struct netdev_rx_queue *rxq)
{
	return 0;
}

#endif /* CONFIG_NET_DEVMEM */

#endif /* _NET_CORE_DEVMEM_H */
