// SPDX-License-Identifier: GPL-2.0
/*
 * Sending from device memory: the socket side and the transmit check.
 *
 * A send names a tx binding (bind-tx) by id. The binding is looked up per
 * sendmsg, and refused unless the socket's route leaves through the
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
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/uio.h>
#include <net/devmem_tx.h>
#include <net/dst.h>
#include <net/sock.h>

#include "devmem.h"

struct net_devmem_dmabuf_binding *net_devmem_tx_get(struct sock *sk, u32 id)
{
	struct net_devmem_dmabuf_binding *binding;
	struct dst_entry *dst;

	binding = net_devmem_lookup(id);
	if (!binding)
		return ERR_PTR(-EINVAL);
	if (!binding->area.tx) {
		net_devmem_binding_put(binding);
		return ERR_PTR(-EINVAL);
	}
	dst = __sk_dst_get(sk);
	if (!dst || !dst->dev || dst->dev != READ_ONCE(binding->dev)) {
		net_devmem_binding_put(binding);
		return ERR_PTR(-ENODEV);
	}
	return binding;
}

void net_devmem_tx_put(struct net_devmem_dmabuf_binding *binding)
{
	net_devmem_binding_put(binding);
}

/* The user address and length of @from's current segment: for us, an
 * offset into the dma-buf. Empty iovecs are stepped over.
 */
static size_t net_devmem_iter_seg(struct iov_iter *from, unsigned long *addr)
{
	if (iter_is_ubuf(from)) {
		*addr = (unsigned long)from->ubuf + from->iov_offset;
		return from->count;
	}
	while (from->nr_segs && from->iov->iov_len == from->iov_offset) {
		from->iov++;
		from->nr_segs--;
		from->iov_offset = 0;
	}
	if (!from->nr_segs)
		return 0;
	*addr = (unsigned long)from->iov->iov_base + from->iov_offset;
	return min(from->iov->iov_len - from->iov_offset, from->count);
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
	size_t seg, n;
	int i, err = 0;

	if (!iter_is_iovec(from) && !iter_is_ubuf(from))
		return -EFAULT;

	while (length && iov_iter_count(from)) {
		seg = net_devmem_iter_seg(from, &addr);
		if (!seg)
			break;
		if (addr >= dmabuf_size) {
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
		n = min3(seg, length, PAGE_SIZE - off);

		i = shinfo->nr_frags;
		last = i ? &shinfo->frags[i - 1] : NULL;
		if (last && skb_frag_net_iov(last) == niov &&
		    skb_frag_off(last) + skb_frag_size(last) == off) {
			/* the same buffer, contiguous: one frag */
			skb_frag_size_add(last, n);
			skb_len_add(skb, n);
			skb->truesize -= n;
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
