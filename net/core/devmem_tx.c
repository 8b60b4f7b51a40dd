// SPDX-License-Identifier: GPL-2.0
/*
 * Sending from device memory: the socket side and the transmit check.
 *
 * A send names a tx binding (bind-tx) by id. The binding is looked up per
 * sendmsg, and refused unless the sender owns it (its namespace and uid,
 * or CAP_NET_ADMIN there) and the socket's route leaves through the
 * binding's device: its DMA addresses mean something to that device only.
 * The iovecs are offsets into the dma-buf; each range becomes frags that
 * name the binding's net_iovs, each frag holding the binding, so the
 * memory stays mapped until the last skb carrying it is freed, whatever
 * happens to the binding's owner meanwhile.
 *
 * The skb is unreadable: nothing on the way may read its payload, and
 * validate_xmit_skb() lets it out only through the binding's own device,
 * which must have said it can read net_iovs (dev->netmem_tx).
 */
#include <linux/cred.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <linux/uio.h>
#include <net/devmem_tx.h>
#include <net/dst.h>
#include <net/inet_connection_sock.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include "devmem.h"

/* Only its owner sends from a binding: a socket in the network namespace
 * it was bound in, on behalf of the same effective uid, or of a process
 * with CAP_NET_ADMIN over that namespace. Binding ids are small global
 * numbers; the dma-buf behind one may be another tenant's memory.
 */
static bool net_devmem_may_send(const struct net_devmem_dmabuf_binding *binding,
				const struct sock *sk)
{
	struct net *net = sock_net(sk);

	if (net->net_cookie != binding->owner_netns)
		return false;
	return uid_eq(current_euid(), binding->owner_uid) ||
	       ns_capable_noaudit(net->user_ns, CAP_NET_ADMIN);
}

/* TCP states in which a send does not go through the write queue's
 * frags, or cannot go out unread: data in a Fast Open SYN and repair's
 * queues are copied from user memory, and an MD5 signature covers the
 * payload.
 */
static bool net_devmem_tcp_refuses(const struct sock *sk, int flags)
{
	if ((flags & MSG_FASTOPEN) || inet_sk(sk)->defer_connect ||
	    tcp_sk(sk)->repair)
		return true;
#ifdef CONFIG_TCP_MD5SIG
	if (rcu_access_pointer(tcp_sk(sk)->md5sig_info))
		return true;
#endif
	return false;
}

/* The device's DMA addresses are the only ones the binding has; the
 * device must also sum the payload, which nothing else may read.
 */
static bool net_devmem_dev_can_csum(const struct sock *sk,
				    const struct net_device *dev)
{
	__be16 proto = htons(ETH_P_IP);

#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6 &&
	    !ipv6_addr_v4mapped(&sk->sk_v6_daddr))
		proto = htons(ETH_P_IPV6);
#endif
	return can_checksum_protocol(dev->features, proto);
}

struct net_devmem_dmabuf_binding *net_devmem_tx_get(struct sock *sk, u32 id,
						    int flags)
{
	struct net_devmem_dmabuf_binding *binding;
	struct dst_entry *dst;
	int err = -EINVAL;

	binding = net_devmem_lookup(id);
	if (!binding)
		return ERR_PTR(-EINVAL);
	if (!binding->area.tx)
		goto err_put;
	if (!net_devmem_may_send(binding, sk)) {
		err = -EPERM;
		goto err_put;
	}
	if (net_devmem_tcp_refuses(sk, flags))
		goto err_put;

	/* Anything may have reset or outdated the cached route (IP_TOS,
	 * SO_MARK, an RTO's negative advice, its device going away): a
	 * connected socket checks it and builds it again if need be.
	 */
	if ((1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT) &&
	    inet_csk(sk)->icsk_af_ops->rebuild_header(sk)) {
		err = -EHOSTUNREACH;
		goto err_put;
	}
	dst = __sk_dst_get(sk);
	if (!dst || !dst->dev || dst->dev != READ_ONCE(binding->dev)) {
		err = -ENODEV;
		goto err_put;
	}
	if (!net_devmem_dev_can_csum(sk, dst->dev))
		goto err_put;
	return binding;

err_put:
	net_devmem_binding_put(binding);
	return ERR_PTR(err);
}

void net_devmem_tx_put(struct net_devmem_dmabuf_binding *binding)
{
	net_devmem_binding_put(binding);
}

/* The user address and length of @from's current segment, an offset
 * into the dma-buf, reading @from without changing it. Empty iovecs
 * are stepped over, but, as on mainline, one whose offset lies beyond
 * @size is refused (-EFAULT). 0 when nothing is left.
 */
static long net_devmem_iter_seg(const struct iov_iter *from, size_t size,
				unsigned long *addr)
{
	const struct iovec *iov = from->iov;
	unsigned long nr = from->nr_segs;
	size_t skip = from->iov_offset;

	if (iter_is_ubuf(from)) {
		*addr = (unsigned long)from->ubuf + skip;
		return from->count;
	}
	for (; nr; iov++, nr--, skip = 0) {
		*addr = (unsigned long)iov->iov_base + skip;
		if (iov->iov_len > skip)
			return min(iov->iov_len - skip, from->count);
		if (*addr >= size)
			return -EFAULT;
	}
	return 0;
}

int net_devmem_fill_skb(struct sock *sk, struct sk_buff *skb,
			struct iov_iter *from, size_t length,
			struct net_devmem_dmabuf_binding *binding)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	size_t dmabuf_size = binding->area.num_niovs << PAGE_SHIFT;
	unsigned int truesize = skb->truesize;
	unsigned long addr, off;
	struct net_iov *niov;
	skb_frag_t *last;
	long seg;
	size_t n;
	int i, err = 0;

	if (!iter_is_iovec(from) && !iter_is_ubuf(from))
		return -EFAULT;

	while (length && iov_iter_count(from)) {
		seg = net_devmem_iter_seg(from, dmabuf_size, &addr);
		if (!seg)
			break;
		if (seg < 0 || addr >= dmabuf_size) {
			/* A full skb is kept, as mainline does: the range is
			 * refused in the next one.
			 */
			err = -EFAULT;
			if (shinfo->nr_frags == MAX_SKB_FRAGS)
				err = -EMSGSIZE;
			break;
		}
		niov = &binding->area.niovs[addr >> PAGE_SHIFT];
		off = offset_in_page(addr);
		n = min3((size_t)seg, length, PAGE_SIZE - off);

		i = shinfo->nr_frags;
		last = i ? &shinfo->frags[i - 1] : NULL;
		if (last && skb_frag_net_iov(last) == niov &&
		    skb_frag_off(last) + skb_frag_size(last) == off) {
			/* The same buffer, contiguous: one frag. Its truesize
			 * grows with it (skb_len_add()), as TCP moves truesize
			 * by payload bytes when it splits an skb: a charge of
			 * less than the payload would wrap on a later split.
			 */
			skb_frag_size_add(last, n);
			skb_len_add(skb, n);
		} else {
			if (i == MAX_SKB_FRAGS) {
				err = -EMSGSIZE;
				break;
			}
			net_iov_get(niov);
			skb_add_rx_frag_netmem(skb, i, net_iov_to_netmem(niov),
					       off, n, PAGE_SIZE);
		}
		iov_iter_advance(from, n);
		length -= n;
	}

	truesize = skb->truesize - truesize;
	if (sk->sk_type == SOCK_STREAM) {
		sk_wmem_queued_add(sk, truesize);
		if (!skb_zcopy_pure(skb))
			sk_mem_charge(sk, truesize);
	} else {
		refcount_add(truesize, &skb->sk->sk_wmem_alloc);
	}
	return err;
}

bool net_devmem_tx_ok(const struct sk_buff *skb, const struct net_device *dev)
{
	const struct skb_shared_info *shinfo = skb_shinfo(skb);
	const struct net_iov *niov;
	int i;

	if (!dev->netmem_tx || skb_has_frag_list(skb))
		return false;
	for (i = 0; i < shinfo->nr_frags; i++) {
		niov = skb_frag_net_iov(&shinfo->frags[i]);
		if (!niov)
			continue;
		if (!net_iov_owner(niov)->tx ||
		    READ_ONCE(net_devmem_binding_of(niov)->dev) != dev)
			return false;
	}
	return true;
}
