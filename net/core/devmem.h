/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device-memory bindings: a dma-buf bound to rx queues of a device
 * (net/core/devmem.c). Used by the netdev family (bind-rx, queue-get).
 */
#ifndef _NET_CORE_DEVMEM_H
#define _NET_CORE_DEVMEM_H

#include <linux/err.h>
#include <linux/netlink.h>
#include <linux/types.h>

struct net_device;
struct netdev_rx_queue;
struct netlink_ext_ack;
struct net_devmem_dmabuf_binding;
struct sock;

#if IS_ENABLED(CONFIG_NET_DEVMEM)

/* Take dma-buf @fd and map it for @dev's DMA device. Under rtnl. */
struct net_devmem_dmabuf_binding *
net_devmem_bind_dmabuf(struct net_device *dev, unsigned int fd,
		       struct netlink_ext_ack *extack);

/* Install the binding on rx queue @idx of its device and restart it. */
int net_devmem_bind_dmabuf_to_queue(struct net_devmem_dmabuf_binding *binding,
				    u32 idx, struct netlink_ext_ack *extack);

/* Give the binding its id and its owner, netlink socket @owner (port id
 * @portid), which the binding holds: it lives until that socket closes.
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
