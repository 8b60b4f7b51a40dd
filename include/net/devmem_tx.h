/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sending from device memory (net/core/devmem_tx.c). A socket names a tx
 * binding (netdev bind-tx) in an SCM_DEVMEM_DMABUF cmsg and sends with
 * MSG_ZEROCOPY; each iovec's base is an offset into the binding's
 * dma-buf. The skb frags are the binding's net_iovs: the skb is
 * unreadable, and only the binding's own device may transmit it.
 */
#ifndef _NET_DEVMEM_TX_H
#define _NET_DEVMEM_TX_H

#include <linux/err.h>
#include <linux/skbuff.h>
#include <linux/types.h>

struct iov_iter;
struct net_device;
struct net_devmem_dmabuf_binding;
struct sk_buff;
struct sock;

/* May a send append to @skb, the tail of the write queue? Host memory
 * and device memory (a send from tx @binding) never share an skb: an skb
 * is readable or not as a whole.
 */
static inline bool
tcp_devmem_can_append(const struct sk_buff *skb,
		      const struct net_devmem_dmabuf_binding *binding)
{
	return !skb_shinfo(skb)->nr_frags || skb_frags_readable(skb) == !binding;
}

#if IS_ENABLED(CONFIG_NET_DEVMEM)

/* The tx binding @id for a send with msg @flags on TCP socket @sk, with a
 * reference (net_devmem_tx_put()); under the socket lock. Errors:
 * ERR_PTR(-EINVAL): no such binding, or an rx one; a Fast Open, repair
 * or MD5 socket; a route whose device cannot sum the payload.
 * ERR_PTR(-EPERM): the caller does not own the binding.
 * ERR_PTR(-EHOSTUNREACH): the socket's route cannot be built again.
 * ERR_PTR(-ENODEV): @sk's route does not leave through the binding's
 * device.
 */
struct net_devmem_dmabuf_binding *net_devmem_tx_get(struct sock *sk, u32 id,
						    int flags);
void net_devmem_tx_put(struct net_devmem_dmabuf_binding *binding);

/* Append up to @length bytes of @from (iovecs of dma-buf offsets) to
 * @skb as frags of @binding, charging @sk. 0, -EMSGSIZE (no frag left:
 * what fitted stays), -EFAULT (a range outside the dma-buf, or an
 * iterator that is not user iovecs).
 */
int net_devmem_fill_skb(struct sock *sk, struct sk_buff *skb,
			struct iov_iter *from, size_t length,
			struct net_devmem_dmabuf_binding *binding);

/* May @dev transmit unreadable @skb? Only from its own tx bindings. */
bool net_devmem_tx_ok(const struct sk_buff *skb,
		      const struct net_device *dev);

#else

static inline struct net_devmem_dmabuf_binding *
net_devmem_tx_get(struct sock *sk, u32 id, int flags)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static inline void net_devmem_tx_put(struct net_devmem_dmabuf_binding *binding)
{
}

static inline int net_devmem_fill_skb(struct sock *sk, struct sk_buff *skb,
				      struct iov_iter *from, size_t length,
				      struct net_devmem_dmabuf_binding *binding)
{
	return -EFAULT;
}

static inline bool net_devmem_tx_ok(const struct sk_buff *skb,
				    const struct net_device *dev)
{
	return false;
}

#endif /* CONFIG_NET_DEVMEM */

#endif /* _NET_DEVMEM_TX_H */
