// SPDX-License-Identifier: GPL-2.0
/*
 * Page pools as user space sees them (netdev family, page-pool-get), and
 * the attachment of memory providers to the pools of an rx queue.
 *
 * Every pool created for a network device (page_pool_params netdev) gets
 * an id, cyclic from 1, and stays listed until it is freed - which may be
 * long after its driver destroyed it (detach-time), while its buffers are
 * still in flight. When the device goes away first, its pools move to the
 * namespace's loopback device and are reported without an ifindex; when
 * loopback goes too (namespace teardown), they are no longer reported.
 */
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/xarray.h>
#include <net/busy_poll.h>
#include <net/flow.h>
#include <net/net_namespace.h>
#include <net/page_pool.h>
#include <net/page_pool_mp.h>
#include <uapi/linux/netdev.h>

#include "page_pool_user.h"

static DEFINE_XARRAY_FLAGS(page_pools, XA_FLAGS_ALLOC1);
static u32 page_pools_next;
/* Protects page_pools and the user fields of every listed pool. */
static DEFINE_MUTEX(page_pools_lock);

/* A pool for a bound queue takes the queue's provider, if its driver
 * opted in; pools of drivers that did not are refused by bind-rx, which
 * checks that a pool of each bound queue uses the binding.
 */
static int page_pool_mp_attach(struct page_pool *pool)
{
	struct netdev_rx_queue *rxq;
	int err;

	if (!(pool->p.flags & PP_FLAG_ALLOW_UNREADABLE_NETMEM))
		return 0;
	/* Installing or removing a provider happens under rtnl. */
	ASSERT_RTNL();
	if (pool->p.queue_idx >= pool->p.netdev->real_num_rx_queues)
		return 0;
	rxq = __netif_get_rx_queue(pool->p.netdev, pool->p.queue_idx);
	if (!rxq->mp_ops)
		return 0;
	/* Buffers the CPU cannot touch: no fragments, no CPU-side sync.
	 * The provider checks the order against its buffers.
	 */
	if (pool->p.flags & PP_FLAG_PAGE_FRAG)
		return -EINVAL;
	pool->p.flags &= ~PP_FLAG_DMA_SYNC_DEV;
	pool->mp_priv = rxq->mp_priv;
	err = rxq->mp_ops->init(pool);
	if (err) {
		pool->mp_priv = NULL;
		return err;
	}
	pool->mp_ops = rxq->mp_ops;
	return 0;
}

int page_pool_user_add(struct page_pool *pool)
{
	int err;

	if (!pool->p.netdev)
		return 0;
	err = page_pool_mp_attach(pool);
	if (err)
		return err;

	mutex_lock(&page_pools_lock);
	err = xa_alloc_cyclic(&page_pools, &pool->user.id, pool, xa_limit_32b,
			      &page_pools_next, GFP_KERNEL);
	if (err >= 0) {
		pool->user.netdev = pool->p.netdev;
		err = 0;
	}
	mutex_unlock(&page_pools_lock);
	/* The caller frees the pool, which releases the provider. */
	return err;
}

/* The driver destroyed the pool; it lives on while buffers are out. */
void page_pool_user_detach(struct page_pool *pool)
{
	if (!pool->user.id)
		return;
	mutex_lock(&page_pools_lock);
	pool->user.detach_time = ktime_get_boottime_seconds() ?: 1;
	/* The NAPI instance may go away with the queue. */
	WRITE_ONCE(pool->p.napi, NULL);
	mutex_unlock(&page_pools_lock);
}

void page_pool_user_del(struct page_pool *pool)
{
	if (pool->user.id) {
		mutex_lock(&page_pools_lock);
		xa_erase(&page_pools, pool->user.id);
		mutex_unlock(&page_pools_lock);
		pool->user.id = 0;
	}
	if (pool->mp_ops) {
		pool->mp_ops->destroy(pool);
		pool->mp_ops = NULL;
		pool->mp_priv = NULL;
	}
}

bool page_pool_queue_uses_mp(struct netdev_rx_queue *rxq, void *mp_priv)
{
	unsigned int idx = get_netdev_rx_queue_index(rxq);
	struct page_pool *pool;
	unsigned long id;
	bool found = false;

	mutex_lock(&page_pools_lock);
	xa_for_each(&page_pools, id, pool) {
		if (pool->user.netdev == rxq->dev && !pool->user.detach_time &&
		    pool->p.queue_idx == idx && pool->mp_priv == mp_priv) {
			found = true;
			break;
		}
	}
	mutex_unlock(&page_pools_lock);
	return found;
}

/* "uint" attributes: 4 bytes when the value fits, else 8. */
static int page_pool_put_uint(struct sk_buff *skb, int type, u64 v)
{
	if (v <= U32_MAX)
		return nla_put_u32(skb, type, v);
	return nla_put(skb, type, sizeof(v), &v);
}

static int page_pool_nl_fill_attrs(struct sk_buff *rsp, struct page_pool *pool)
{
	u32 hold = READ_ONCE(pool->pages_state_hold_cnt);
	u32 inflight = hold - atomic_read(&pool->pages_state_release_cnt);
	struct net_device *dev = pool->user.netdev;
	struct napi_struct *napi = READ_ONCE(pool->p.napi);
	unsigned int napi_id = napi ? READ_ONCE(napi->napi_id) : 0;

	if (page_pool_put_uint(rsp, NETDEV_A_PAGE_POOL_ID, pool->user.id))
		return -EMSGSIZE;
	if (dev->ifindex != LOOPBACK_IFINDEX &&
	    nla_put_u32(rsp, NETDEV_A_PAGE_POOL_IFINDEX, dev->ifindex))
		return -EMSGSIZE;
	if (napi_id >= MIN_NAPI_ID &&
	    page_pool_put_uint(rsp, NETDEV_A_PAGE_POOL_NAPI_ID, napi_id))
		return -EMSGSIZE;
	if (page_pool_put_uint(rsp, NETDEV_A_PAGE_POOL_INFLIGHT, inflight) ||
	    page_pool_put_uint(rsp, NETDEV_A_PAGE_POOL_INFLIGHT_MEM,
			       (u64)inflight * (PAGE_SIZE << pool->p.order)))
		return -EMSGSIZE;
	if (pool->user.detach_time &&
	    page_pool_put_uint(rsp, NETDEV_A_PAGE_POOL_DETACH_TIME,
			       pool->user.detach_time))
		return -EMSGSIZE;
	if (pool->mp_ops && pool->mp_ops->nl_fill(pool->mp_priv, rsp))
		return -EMSGSIZE;
	return 0;
}

/* A listed pool as @net sees it: its device is in @net. */
static bool page_pool_visible(struct page_pool *pool, struct net *net)
{
	return pool->user.netdev && net_eq(dev_net(pool->user.netdev), net);
}

static int page_pool_nl_fill(struct sk_buff *rsp, struct page_pool *pool,
			     const struct page_pool_nl_msg *msg)
{
	void *hdr;

	hdr = genlmsg_put(rsp, msg->portid, msg->seq, msg->family, msg->flags,
			  NETDEV_CMD_PAGE_POOL_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (page_pool_nl_fill_attrs(rsp, pool)) {
		genlmsg_cancel(rsp, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(rsp, hdr);
	return 0;
}

int page_pool_nl_get_one(struct sk_buff *rsp, struct net *net, u32 id,
			 const struct page_pool_nl_msg *msg)
{
	struct page_pool *pool;
	int err = -ENOENT;

	mutex_lock(&page_pools_lock);
	pool = xa_load(&page_pools, id);
	if (pool && page_pool_visible(pool, net))
		err = page_pool_nl_fill(rsp, pool, msg);
	mutex_unlock(&page_pools_lock);
	return err;
}

int page_pool_nl_dump(struct sk_buff *skb, struct net *net,
		      unsigned long *next, const struct page_pool_nl_msg *msg)
{
	struct page_pool *pool;
	unsigned long id;
	int err = 0;

	mutex_lock(&page_pools_lock);
	xa_for_each_start(&page_pools, id, pool, *next) {
		if (!page_pool_visible(pool, net))
			continue;
		err = page_pool_nl_fill(skb, pool, msg);
		if (err)
			break;
		*next = id + 1;
	}
	mutex_unlock(&page_pools_lock);
	return err;
}

/* Retarget the pools of a device that is going away. */
static int page_pool_netdevice_event(struct notifier_block *nb,
				     unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct net_device *lo = dev_net(dev)->loopback_dev;
	struct page_pool *pool;
	unsigned long id;

	if (event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;
	mutex_lock(&page_pools_lock);
	xa_for_each(&page_pools, id, pool) {
		if (pool->user.netdev != dev)
			continue;
		pool->user.netdev = dev == lo ? NULL : lo;
		WRITE_ONCE(pool->p.napi, NULL);
	}
	mutex_unlock(&page_pools_lock);
	return NOTIFY_OK;
}

static struct notifier_block page_pool_netdevice_nb = {
	.notifier_call = page_pool_netdevice_event,
};

static int __init page_pool_user_init(void)
{
	return register_netdevice_notifier(&page_pool_netdevice_nb);
}
subsys_initcall(page_pool_user_init);
