/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Page-pool memory providers: a page pool created for an rx queue that
 * has a provider installed takes its buffers from the provider instead of
 * the page allocator, and gives them back to it.
 *
 * A driver opts in per pool with PP_FLAG_ALLOW_UNREADABLE_NETMEM and by
 * naming the queue (page_pool_params netdev and queue_idx); such a pool
 * may hand out net_iovs, which the driver must treat as netmem (DMA
 * address only, never page_address()).
 */
#ifndef _NET_PAGE_POOL_MP_H
#define _NET_PAGE_POOL_MP_H

#include <linux/types.h>
#include <net/netmem.h>
#include <net/page_pool.h>

struct netdev_rx_queue;
struct sk_buff;

/**
 * struct memory_provider_ops - where a provider pool's buffers come from
 * @init: the pool takes the provider (pool->mp_priv is set); may refuse
 * @destroy: the pool is being freed: every buffer has come back
 * @alloc: one buffer for the pool, or NULL; the page pool sets its pool
 *	fields and counts it in flight. Called from the pool's
 *	allocation context (NAPI)
 * @release: take back a buffer that leaves the pool; any context
 * @nl_fill: add the provider's attributes to a page-pool-get reply
 * @page_order: the order of the buffers it hands out (optional: 0)
 */
struct memory_provider_ops {
	int (*init)(struct page_pool *pool);
	void (*destroy)(struct page_pool *pool);
	struct page *(*alloc)(struct page_pool *pool, gfp_t gfp);
	void (*release)(struct page_pool *pool, struct page *page);
	int (*nl_fill)(void *mp_priv, struct sk_buff *rsp);
	unsigned int (*page_order)(const void *mp_priv);
};

/* Called by page_pool.c: attach the provider installed on the pool's
 * queue (if any) and list the pool for page-pool-get; and the reverse.
 */
int page_pool_user_add(struct page_pool *pool);
void page_pool_user_del(struct page_pool *pool);
void page_pool_user_detach(struct page_pool *pool);

/* Is a pool of @rxq drawing from the provider @mp_priv? Under rtnl. */
bool page_pool_queue_uses_mp(struct netdev_rx_queue *rxq, void *mp_priv);

/* --- the netmem API of page pools, for drivers that opted in ----------- */

/* Does @pool hand out net_iovs (buffers the CPU must not touch)? */
static inline bool page_pool_is_unreadable(const struct page_pool *pool)
{
	return pool->mp_ops;
}

static inline netmem_ref page_pool_alloc_netmem(struct page_pool *pool,
						gfp_t gfp)
{
	struct page *page = page_pool_alloc_pages(pool, gfp);
	struct net_iov *niov;

	if (!page || !page_pool_is_unreadable(pool))
		return page_to_netmem(page);
	/* The caller holds the one reference (net_iov_get/put). */
	niov = (struct net_iov *)page;
	atomic_long_set(&niov->pp_ref_count, 1);
	return net_iov_to_netmem(niov);
}

static inline netmem_ref page_pool_dev_alloc_netmem(struct page_pool *pool)
{
	return page_pool_alloc_netmem(pool, GFP_ATOMIC | __GFP_NOWARN);
}

static inline dma_addr_t page_pool_get_dma_addr_netmem(netmem_ref netmem)
{
	return page_pool_get_dma_addr(__netmem_pp_view(netmem));
}

static inline void page_pool_put_full_netmem(struct page_pool *pool,
					     netmem_ref netmem,
					     bool allow_direct)
{
	page_pool_put_full_page(pool, __netmem_pp_view(netmem), allow_direct);
}

/* Same, from the pool's NAPI context. */
static inline void page_pool_recycle_direct_netmem(struct page_pool *pool,
						   netmem_ref netmem)
{
	page_pool_put_full_netmem(pool, netmem, true);
}

/* --- giving many net_iovs back at once -------------------------------- */

/* @niovs[0..@count), all of @pool, whose last reference went: back to
 * the pool in one round of its ring's lock. May overwrite the array.
 */
void page_pool_put_netmem_bulk(struct page_pool *pool, struct net_iov **niovs,
			       int count);

#if IS_ENABLED(CONFIG_NET_DEVMEM)
/* net_iov_put() on each of @niovs[0..@n), the buffers whose last
 * reference went going back to their pools a pool's run at a time. May
 * overwrite the array.
 */
void net_iov_put_bulk(struct net_iov **niovs, unsigned int n);
#else
static inline void net_iov_put_bulk(struct net_iov **niovs, unsigned int n)
{
}
#endif

#endif /* _NET_PAGE_POOL_MP_H */
