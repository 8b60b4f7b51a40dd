/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Network memory: a receive buffer is either a struct page or a net_iov,
 * a piece of device memory (a dma-buf) that the CPU must never touch: a
 * page, or a larger power of two when the binding asked for one. A
 * netmem_ref names either kind; its low bit says which.
 *
 * A net_iov carries the fields the page pool keeps in struct page (magic,
 * pool, DMA address, pool reference count) at the same offsets, so one
 * page pool can cache and recycle both kinds. It has no struct page
 * behind it: page_address(), kmap() and page refcounting do not apply.
 */
#ifndef _NET_NETMEM_H
#define _NET_NETMEM_H

#include <linux/atomic.h>
#include <linux/mm_types.h>
#include <linux/types.h>

struct net_iov_area;
struct page_pool;

/**
 * struct net_iov - one buffer of device memory (its area's buffer size)
 * @__unused_flags: struct page's flags word; always 0
 * @pp_magic: PP_SIGNATURE while a page pool owns the buffer
 * @pp: the owning page pool; the allocator's free-list link while free
 * @owner: the area (binding) the buffer belongs to
 * @dma_addr: where the device writes it
 * @pp_ref_count: references the page pool hands out (skb frags, tokens)
 */
struct net_iov {
	unsigned long __unused_flags;
	unsigned long pp_magic;
	struct page_pool *pp;
	struct net_iov_area *owner;
	unsigned long dma_addr;
	atomic_long_t pp_ref_count;
};

/**
 * struct net_iov_area - an array of net_iovs cut from one mapping
 * @niovs: the buffers, in order of their offset in the memory
 * @num_niovs: how many
 * @shift: log2 of the size of each buffer: PAGE_SHIFT, or more for a
 *	binding with a larger rx-page-size
 * @tx: mapped for sending: the buffers belong to no page pool, and a
 *	reference on one is a reference on the area's binding
 */
struct net_iov_area {
	struct net_iov *niovs;
	size_t num_niovs;
	u8 shift;
	bool tx;
};

static inline struct net_iov_area *net_iov_owner(const struct net_iov *niov)
{
	return niov->owner;
}

static inline unsigned int net_iov_idx(const struct net_iov *niov)
{
	return niov - net_iov_owner(niov)->niovs;
}

/* Byte offset of @niov in the memory its area was cut from. */
static inline unsigned long net_iov_offset(const struct net_iov *niov)
{
	return (unsigned long)net_iov_idx(niov) << net_iov_owner(niov)->shift;
}

typedef unsigned long __bitwise netmem_ref;

#define NET_IOV		0x01UL

static inline bool netmem_is_net_iov(netmem_ref netmem)
{
	return (__force unsigned long)netmem & NET_IOV;
}

/* The page behind @netmem, or NULL for a net_iov. */
static inline struct page *netmem_to_page(netmem_ref netmem)
{
	if (netmem_is_net_iov(netmem))
		return NULL;
	return (__force struct page *)netmem;
}

/* The net_iov behind @netmem, or NULL for a page. */
static inline struct net_iov *netmem_to_net_iov(netmem_ref netmem)
{
	if (!netmem_is_net_iov(netmem))
		return NULL;
	return (struct net_iov *)((__force unsigned long)netmem & ~NET_IOV);
}

static inline netmem_ref page_to_netmem(struct page *page)
{
	return (__force netmem_ref)page;
}

static inline netmem_ref net_iov_to_netmem(struct net_iov *niov)
{
	return (__force netmem_ref)((unsigned long)niov | NET_IOV);
}

/* The pool-owned fields (pp_magic, pp, dma_addr) of either kind, through
 * struct page's layout (offsets checked at build time in
 * net/core/devmem.c). Page-pool code only.
 */
static inline struct page *__netmem_pp_view(netmem_ref netmem)
{
	return (struct page *)((__force unsigned long)netmem & ~NET_IOV);
}

static inline struct page_pool *netmem_get_pp(netmem_ref netmem)
{
	return __netmem_pp_view(netmem)->pp;
}

#if IS_ENABLED(CONFIG_NET_DEVMEM)
void net_iov_tx_get(struct net_iov *niov);
void net_iov_put(struct net_iov *niov);

/* The id of the dma-buf binding @niov belongs to (bind-rx's reply). */
u32 net_iov_binding_id(const struct net_iov *niov);
#else
/* Without CONFIG_NET_DEVMEM nothing makes a net_iov. */
static inline void net_iov_tx_get(struct net_iov *niov)
{
}

static inline void net_iov_put(struct net_iov *niov)
{
}

static inline u32 net_iov_binding_id(const struct net_iov *niov)
{
	return 0;
}
#endif

/* A reference on a net_iov. For one the page pool handed out (rx), skb
 * frags and socket tokens hold one each: the pool hands it out with one
 * (page_pool_alloc_netmem()), and when the last is dropped the net_iov
 * goes back to its pool. A net_iov of a tx binding belongs to no pool:
 * each skb frag naming it holds its binding (net/core/devmem.c).
 */
static inline void net_iov_get(struct net_iov *niov)
{
	if (net_iov_owner(niov)->tx) {
		net_iov_tx_get(niov);
		return;
	}
	atomic_long_inc(&niov->pp_ref_count);
}

#endif /* _NET_NETMEM_H */
