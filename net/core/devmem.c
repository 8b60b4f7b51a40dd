// SPDX-License-Identifier: GPL-2.0
/*
 * Device-memory bindings and their page-pool memory provider.
 *
 * bind-rx and bind-tx hand us a dma-buf: we attach it to the device's DMA
 * device, map it, and cut the mapping into page-sized net_iovs, each
 * knowing its DMA address and (by its index) its offset in the dma-buf.
 * An rx binding is then installed on rx queues: their page pools, when
 * (re)created, take buffers from the binding's free list instead of the
 * page allocator. A tx binding is looked up by id when a socket sends
 * from it (devmem_tx.c); each skb frag that names one of its net_iovs
 * holds a reference on the binding.
 *
 * Lifetime. A binding is refcounted: its owner (the netlink socket that
 * bound it, until unbind) holds one reference and every page pool drawing
 * from it holds one until the pool is freed. A pool is freed only once
 * every buffer it handed out has come back (page_pool.c counts them in
 * flight), so a net_iov in an skb or held by a socket keeps the memory
 * mapped through its pool. A tx binding's frags hold it directly. The
 * last reference unmaps, detaches and puts the dma-buf, from a work item
 * since it may drop in any context; the binding itself is freed after an
 * RCU grace period, since senders look published ids up under RCU.
 *
 * Locking: rtnl protects installing and removing bindings on queues
 * (rxq->mp_ops/mp_priv, binding->dev, binding->bound_rxqs); the free
 * list has its own lock since buffers come back from any context; the
 * list of tx bindings has its own, since they are freed from a work item.
 */
#include <linux/cred.h>
#include <linux/dma-buf.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/netdevice.h>
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/rtnetlink.h>
#include <linux/hash.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <net/netdev_rx_queue.h>
#include <net/netmem.h>
#include <net/page_pool.h>
#include <net/page_pool_mp.h>
#include <net/sock.h>
#include <uapi/linux/netdev.h>

#include "devmem.h"

/* A net_iov must look like struct page to the page pool. */
#define NET_IOV_ASSERT_OFFSET(pg, iov)					\
	static_assert(offsetof(struct page, pg) ==			\
		      offsetof(struct net_iov, iov))
NET_IOV_ASSERT_OFFSET(flags, __unused_flags);
NET_IOV_ASSERT_OFFSET(pp_magic, pp_magic);
NET_IOV_ASSERT_OFFSET(pp, pp);
NET_IOV_ASSERT_OFFSET(dma_addr, dma_addr);
NET_IOV_ASSERT_OFFSET(pp_frag_count, pp_ref_count);
static_assert(sizeof(struct net_iov) <= 48);

/* A binding's memory is the caller's: charged to its memory cgroup, and
 * a limit there fails the bind (ENOMEM) rather than wake the OOM killer.
 */
#define NET_DEVMEM_GFP	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL)

/* Published bindings by id: the owner's and queue-get's view. */
static DEFINE_XARRAY_FLAGS(net_devmem_bindings, XA_FLAGS_ALLOC1);
static u32 net_devmem_next_id;
/* How many are published: most closing sockets need not look (or lock). */
static atomic_t net_devmem_published = ATOMIC_INIT(0);
/* Every tx binding until it is freed, published or not: a device going
 * away must be forgotten by those still carrying sends too.
 */
static LIST_HEAD(net_devmem_tx_bindings);
static DEFINE_SPINLOCK(net_devmem_tx_lock);

/* Published bindings by their owner's (namespace, port id): a closing
 * netlink socket looks at its own bucket only. Changed under rtnl and
 * the lock; read under either.
 */
#define NET_DEVMEM_OWNER_BITS	8
static struct hlist_head net_devmem_owners[1 << NET_DEVMEM_OWNER_BITS];
static DEFINE_SPINLOCK(net_devmem_owner_lock);

/* Tx bindings need no capability: each uid may have this many alive
 * (bound, or still carrying sends) at once; net.core.devmem_tx_bindings_per_user.
 */
static int net_devmem_tx_per_user __read_mostly = 1024;
/* uid (in the initial user namespace) -> its tx bindings, as xa values */
static DEFINE_XARRAY(net_devmem_tx_users);
static DEFINE_MUTEX(net_devmem_tx_users_lock);

static enum dma_data_direction
net_devmem_dir(const struct net_devmem_dmabuf_binding *binding)
{
	return binding->area.tx ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
}

/* Count one more tx binding for @uid, within the per-user limit. */
static int net_devmem_tx_user_charge(kuid_t uid, struct netlink_ext_ack *extack)
{
	unsigned long key = from_kuid(&init_user_ns, uid);
	unsigned long n;
	int err = 0;

	mutex_lock(&net_devmem_tx_users_lock);
	n = xa_to_value(xa_load(&net_devmem_tx_users, key) ?: xa_mk_value(0));
	if (n >= READ_ONCE(net_devmem_tx_per_user)) {
		NL_SET_ERR_MSG_FMT(extack,
				   "uid %lu has %lu tx bindings, the limit (net.core.devmem_tx_bindings_per_user)",
				   key, n);
		err = -ENOSPC;
	} else {
		err = xa_err(xa_store(&net_devmem_tx_users, key,
				      xa_mk_value(n + 1), GFP_KERNEL));
	}
	mutex_unlock(&net_devmem_tx_users_lock);
	return err;
}

static void net_devmem_tx_user_uncharge(kuid_t uid)
{
	unsigned long key = from_kuid(&init_user_ns, uid);
	unsigned long n;

	mutex_lock(&net_devmem_tx_users_lock);
	n = xa_to_value(xa_load(&net_devmem_tx_users, key) ?: xa_mk_value(1));
	if (n > 1)
		xa_store(&net_devmem_tx_users, key, xa_mk_value(n - 1),
			 GFP_KERNEL);
	else
		xa_erase(&net_devmem_tx_users, key);
	mutex_unlock(&net_devmem_tx_users_lock);
}

static void net_devmem_free_work(struct work_struct *work)
{
	struct net_devmem_dmabuf_binding *binding =
		container_of(work, typeof(*binding), free_work);

	if (binding->area.tx) {
		spin_lock_bh(&net_devmem_tx_lock);
		list_del(&binding->tx_node);
		spin_unlock_bh(&net_devmem_tx_lock);
		if (binding->user_charged)
			net_devmem_tx_user_uncharge(binding->owner_uid);
	}
	if (binding->sgt)
		dma_buf_unmap_attachment_unlocked(binding->attachment,
						  binding->sgt,
						  net_devmem_dir(binding));
	if (binding->attachment)
		dma_buf_detach(binding->dmabuf, binding->attachment);
	dma_buf_put(binding->dmabuf);
	put_device(binding->dma_dev);
	kvfree(binding->area.niovs);
	xa_destroy(&binding->bound_rxqs);
	kfree_rcu(binding, rcu);
}

void net_devmem_binding_put(struct net_devmem_dmabuf_binding *binding)
{
	if (refcount_dec_and_test(&binding->ref))
		queue_work(system_unbound_wq, &binding->free_work);
}

struct net_devmem_dmabuf_binding *net_devmem_lookup(u32 id)
{
	struct net_devmem_dmabuf_binding *binding;

	rcu_read_lock();
	binding = xa_load(&net_devmem_bindings, id);
	if (binding && !refcount_inc_not_zero(&binding->ref))
		binding = NULL;
	rcu_read_unlock();
	return binding;
}

/* Cut the mapping into net_iovs of 1 << @shift bytes, in one pass that
 * also threads the free list (lowest offsets first); refuse a segment
 * whose address or length is not a multiple of that size, naming it.
 */
static int net_devmem_cut(struct net_devmem_dmabuf_binding *binding,
			  unsigned int shift, struct netlink_ext_ack *extack)
{
	size_t n = binding->dmabuf->size >> shift, i = 0, k, bufs;
	const size_t size = 1UL << shift;
	struct net_iov *niovs, *niov;
	size_t len, offset = 0;
	struct scatterlist *sg;
	dma_addr_t addr;
	unsigned int s;

	niovs = kvmalloc_array(n, sizeof(*niovs), NET_DEVMEM_GFP);
	if (!niovs) {
		NL_SET_ERR_MSG(extack, "out of memory for the binding's buffers");
		return -ENOMEM;
	}
	binding->area.niovs = niovs;
	binding->area.num_niovs = n;
	binding->area.shift = shift;

	for_each_sgtable_dma_sg(binding->sgt, sg, s) {
		addr = sg_dma_address(sg);
		len = sg_dma_len(sg);
		if (!IS_ALIGNED(addr, size) || !IS_ALIGNED(len, size)) {
			NL_SET_ERR_MSG_FMT(extack,
					   "dma-buf segment %u at offset %zu (%zu bytes) is not %zu-aligned",
					   s, offset, len, size);
			return -EINVAL;
		}
		bufs = min_t(size_t, len >> shift, n - i);
		for (k = 0; k < bufs; k++, i++) {
			niov = &niovs[i];
			niov->__unused_flags = 0;
			niov->pp_magic = 0;
			/* an rx buffer's pp links the free list until a
			 * pool takes it; a tx buffer never has one
			 */
			niov->pp = (void *)(i + 1 < n && !binding->area.tx ?
					    niov + 1 : NULL);
			niov->owner = &binding->area;
			niov->dma_addr = addr + k * size;
			atomic_long_set(&niov->pp_ref_count, 0);
		}
		offset += len;
	}
	/* a segment smaller than a buffer was refused above; this is the
	 * mapping of no segment at all
	 */
	if (!n) {
		NL_SET_ERR_MSG_FMT(extack,
				   "dma-buf of %zu bytes is smaller than one %zu-byte buffer",
				   binding->dmabuf->size, size);
		return -EINVAL;
	}
	if (i != n) {
		NL_SET_ERR_MSG(extack,
			       "dma-buf mapping does not cover the dma-buf");
		return -EINVAL;
	}
	binding->free_list = binding->area.tx ? NULL : niovs;
	return 0;
}

struct net_devmem_dmabuf_binding *
net_devmem_bind_dmabuf(struct net_device *dev, unsigned int fd,
		       enum dma_data_direction dir, unsigned int shift,
		       struct netlink_ext_ack *extack)
{
	struct net_devmem_dmabuf_binding *binding;
	struct device *dma_dev = dev->dev.parent;
	struct dma_buf *dmabuf;
	int err;

	if (!dma_dev) {
		NL_SET_ERR_MSG(extack, "device has no DMA device");
		return ERR_PTR(-EOPNOTSUPP);
	}
	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf)) {
		NL_SET_ERR_MSG(extack, "fd is not a dma-buf");
		return ERR_CAST(dmabuf);
	}
	if (!dmabuf->size || !PAGE_ALIGNED(dmabuf->size)) {
		NL_SET_ERR_MSG(extack,
			       "dma-buf size is not a multiple of the page size");
		dma_buf_put(dmabuf);
		return ERR_PTR(-EINVAL);
	}

	binding = kzalloc(sizeof(*binding), NET_DEVMEM_GFP);
	if (!binding) {
		NL_SET_ERR_MSG(extack, "out of memory for the binding");
		dma_buf_put(dmabuf);
		return ERR_PTR(-ENOMEM);
	}
	binding->dmabuf = dmabuf;
	binding->dma_dev = get_device(dma_dev);
	binding->dev = dev;
	binding->area.tx = dir == DMA_TO_DEVICE;
	binding->owner_uid = current_euid();
	xa_init(&binding->bound_rxqs);
	refcount_set(&binding->ref, 1);
	spin_lock_init(&binding->free_lock);
	INIT_WORK(&binding->free_work, net_devmem_free_work);
	INIT_LIST_HEAD(&binding->tx_node);
	if (binding->area.tx) {
		spin_lock_bh(&net_devmem_tx_lock);
		list_add(&binding->tx_node, &net_devmem_tx_bindings);
		spin_unlock_bh(&net_devmem_tx_lock);
		err = net_devmem_tx_user_charge(binding->owner_uid, extack);
		if (err)
			goto err_put;
		binding->user_charged = true;
	}

	binding->attachment = dma_buf_attach(dmabuf, dma_dev);
	if (IS_ERR(binding->attachment)) {
		err = PTR_ERR(binding->attachment);
		binding->attachment = NULL;
		NL_SET_ERR_MSG(extack, "cannot attach the dma-buf to the device");
		goto err_put;
	}
	binding->sgt = dma_buf_map_attachment_unlocked(binding->attachment,
						       dir);
	if (IS_ERR(binding->sgt)) {
		err = PTR_ERR(binding->sgt);
		binding->sgt = NULL;
		NL_SET_ERR_MSG(extack, "cannot map the dma-buf for the device");
		goto err_put;
	}
	err = net_devmem_cut(binding, shift, extack);
	if (err)
		goto err_put;
	return binding;

err_put:
	net_devmem_binding_put(binding);
	return ERR_PTR(err);
}

/* Header split keeps headers in host memory: without it, headers would
 * land in device memory, where the stack cannot read them. A threshold
 * above 0 would keep small payloads whole in the header buffer, in host
 * memory, where a devmem socket would get them as SO_DEVMEM_LINEAR.
 */
static int net_devmem_check_hds(struct net_device *dev,
				struct netlink_ext_ack *extack)
{
	const struct ethtool_ops *ops = dev->ethtool_ops;
	struct kernel_ethtool_ringparam kring = {};
	struct ethtool_ringparam ring = {};
	int err;

	if (ops && ops->get_ringparam) {
		/* as ethtool calls it: between the driver's begin and complete */
		err = ops->begin ? ops->begin(dev) : 0;
		if (err) {
			NL_SET_ERR_MSG(extack,
				       "cannot read the device's ring parameters");
			return err;
		}
		ops->get_ringparam(dev, &ring, &kring, NULL);
		if (ops->complete)
			ops->complete(dev);
	}
	if (kring.tcp_data_split != ETHTOOL_TCP_DATA_SPLIT_ENABLED) {
		NL_SET_ERR_MSG(extack,
			       "header split (tcp-data-split) is off on the device");
		return -EINVAL;
	}
	if (kring.hds_thresh) {
		NL_SET_ERR_MSG(extack, "hds-thresh is not zero");
		return -EINVAL;
	}
	return 0;
}

static void net_devmem_rxq_clear(struct net_devmem_dmabuf_binding *binding,
				 struct netdev_rx_queue *rxq, u32 idx)
{
	rxq->mp_ops = NULL;
	rxq->mp_priv = NULL;
	xa_erase(&binding->bound_rxqs, idx);
}

static const struct memory_provider_ops net_devmem_mp_ops;

int net_devmem_bind_dmabuf_to_queue(struct net_devmem_dmabuf_binding *binding,
				    u32 idx, struct netlink_ext_ack *extack)
{
	struct net_device *dev = binding->dev;
	struct netdev_rx_queue *rxq;
	int err;

	ASSERT_RTNL();
	if (idx >= dev->real_num_rx_queues) {
		NL_SET_ERR_MSG(extack, "rx queue id is out of range");
		return -ERANGE;
	}
	rxq = __netif_get_rx_queue(dev, idx);
	if (rxq->mp_ops) {
		NL_SET_ERR_MSG(extack, "rx queue is already bound to a dma-buf");
		return -EEXIST;
	}
#ifdef CONFIG_XDP_SOCKETS
	if (rxq->pool) {
		NL_SET_ERR_MSG(extack, "rx queue is in use by an AF_XDP socket");
		return -EBUSY;
	}
#endif
	/* Asked before the restart, up or down: a down device builds no
	 * pools, so the check below cannot see a driver that never opted in.
	 */
	if (!dev->queue_mgmt_ops->ndo_queue_mp_supported ||
	    !dev->queue_mgmt_ops->ndo_queue_mp_supported(dev, idx)) {
		NL_SET_ERR_MSG(extack,
			       "driver does not support device memory on this rx queue");
		return -EOPNOTSUPP;
	}
	if (binding->area.shift != PAGE_SHIFT &&
	    !(dev->queue_mgmt_ops->supported_params & QCFG_RX_PAGE_SIZE)) {
		NL_SET_ERR_MSG(extack, "device does not support: rx_page_size");
		return -EOPNOTSUPP;
	}
	err = net_devmem_check_hds(dev, extack);
	if (err)
		return err;

	err = xa_insert(&binding->bound_rxqs, idx, rxq, GFP_KERNEL);
	if (err)
		return err;
	rxq->mp_ops = &net_devmem_mp_ops;
	rxq->mp_priv = binding;

	err = netdev_rx_queue_restart(dev, idx);
	if (err) {
		net_devmem_rxq_clear(binding, rxq, idx);
		NL_SET_ERR_MSG(extack, "cannot restart the rx queue");
		return err;
	}
	/* A running queue must now draw from the binding: a driver that
	 * did not opt in built host-memory pools.
	 */
	if (netif_running(dev) && !page_pool_queue_uses_mp(rxq, binding)) {
		net_devmem_rxq_clear(binding, rxq, idx);
		netdev_rx_queue_restart(dev, idx);
		NL_SET_ERR_MSG(extack,
			       "driver does not support device memory on this rx queue");
		return -EOPNOTSUPP;
	}
	return 0;
}

static struct hlist_head *net_devmem_owner_bucket(const struct net *net,
						  u32 portid)
{
	return &net_devmem_owners[hash_64(net->net_cookie ^ portid,
					  NET_DEVMEM_OWNER_BITS)];
}

int net_devmem_publish(struct net_devmem_dmabuf_binding *binding,
		       struct sock *owner, u32 portid)
{
	if (xa_alloc_cyclic(&net_devmem_bindings, &binding->id, binding,
			    xa_limit_32b, &net_devmem_next_id, GFP_KERNEL) < 0)
		return -ENOMEM;
	sock_hold(owner);
	binding->owner = owner;
	binding->owner_portid = portid;
	binding->owner_netns = sock_net(owner)->net_cookie;
	spin_lock(&net_devmem_owner_lock);
	hlist_add_head(&binding->owner_node,
		       net_devmem_owner_bucket(sock_net(owner), portid));
	spin_unlock(&net_devmem_owner_lock);
	atomic_inc(&net_devmem_published);
	return 0;
}

u32 net_devmem_binding_id(const struct net_devmem_dmabuf_binding *binding)
{
	return binding->id;
}

/* Take the binding off every queue; restart those of a live device. */
static void net_devmem_detach_queues(struct net_devmem_dmabuf_binding *binding,
				     bool restart)
{
	struct netdev_rx_queue *rxq;
	unsigned long idx;
	int err;

	xa_for_each(&binding->bound_rxqs, idx, rxq) {
		net_devmem_rxq_clear(binding, rxq, idx);
		if (!restart)
			continue;
		/* On failure the queue keeps its old pools, which hold the
		 * binding; its next restart leaves device memory.
		 */
		err = netdev_rx_queue_restart(binding->dev, idx);
		if (err)
			netdev_warn(binding->dev,
				    "rx queue %lu: restart without device memory failed: %d\n",
				    idx, err);
	}
}

void net_devmem_unbind_dmabuf(struct net_devmem_dmabuf_binding *binding)
{
	ASSERT_RTNL();
	/* A tx binding keeps its device: what is in flight still goes out
	 * (and is retransmitted) until it completes.
	 */
	if (binding->dev && !binding->area.tx) {
		net_devmem_detach_queues(binding, true);
		binding->dev = NULL;
	}
	if (binding->id) {
		xa_erase(&net_devmem_bindings, binding->id);
		spin_lock(&net_devmem_owner_lock);
		hlist_del(&binding->owner_node);
		spin_unlock(&net_devmem_owner_lock);
		atomic_dec(&net_devmem_published);
		sock_put(binding->owner);
		binding->owner = NULL;
	}
	net_devmem_binding_put(binding);
}

u32 net_devmem_rxq_binding_id(const struct netdev_rx_queue *rxq)
{
	const struct net_devmem_dmabuf_binding *binding = rxq->mp_priv;

	return rxq->mp_ops == &net_devmem_mp_ops ? binding->id : 0;
}

/* --- the memory provider ------------------------------------------------ */

static int net_devmem_mp_init(struct page_pool *pool)
{
	struct net_devmem_dmabuf_binding *binding = pool->mp_priv;

	/* The DMA addresses are the attachment's device's. */
	if (pool->p.dev != binding->dma_dev)
		return -EINVAL;
	/* The driver fills whole buffers: they must be the pool's size. */
	if (pool->p.order != binding->area.shift - PAGE_SHIFT)
		return -E2BIG;
	refcount_inc(&binding->ref);
	return 0;
}

static void net_devmem_mp_destroy(struct page_pool *pool)
{
	net_devmem_binding_put(pool->mp_priv);
}

static struct page *net_devmem_mp_alloc(struct page_pool *pool, gfp_t gfp)
{
	struct net_devmem_dmabuf_binding *binding = pool->mp_priv;
	struct net_iov *niov;
	unsigned long flags;

	spin_lock_irqsave(&binding->free_lock, flags);
	niov = binding->free_list;
	if (niov)
		binding->free_list = (struct net_iov *)niov->pp;
	spin_unlock_irqrestore(&binding->free_lock, flags);
	if (!niov)
		return NULL;
	niov->pp = NULL;
	atomic_long_set(&niov->pp_ref_count, 0);
	return (struct page *)niov;
}

static void net_devmem_mp_release(struct page_pool *pool, struct page *page)
{
	struct net_iov *niov = (struct net_iov *)page;
	struct net_devmem_dmabuf_binding *binding = net_devmem_binding_of(niov);
	unsigned long flags;

	spin_lock_irqsave(&binding->free_lock, flags);
	niov->pp = (void *)binding->free_list;
	binding->free_list = niov;
	spin_unlock_irqrestore(&binding->free_lock, flags);
}

/* --- references on net_iovs (skb frags, socket tokens) ------------------ */

void net_iov_put(struct net_iov *niov)
{
	if (net_iov_owner(niov)->tx) {
		net_devmem_binding_put(net_devmem_binding_of(niov));
		return;
	}
	if (atomic_long_dec_and_test(&niov->pp_ref_count))
		page_pool_put_full_page(niov->pp, (struct page *)niov, false);
}
EXPORT_SYMBOL_GPL(net_iov_put);

void net_iov_put_bulk(struct net_iov **niovs, unsigned int n)
{
	struct page_pool *pool = NULL;
	unsigned int i, last = 0;
	struct net_iov *niov;

	for (i = 0; i < n; i++) {
		niov = niovs[i];
		if (net_iov_owner(niov)->tx) {
			net_devmem_binding_put(net_devmem_binding_of(niov));
			continue;
		}
		if (!atomic_long_dec_and_test(&niov->pp_ref_count))
			continue;
		/* entries before @i are done with: the run reuses them */
		if (last && niov->pp != pool) {
			page_pool_put_netmem_bulk(pool, niovs, last);
			last = 0;
		}
		pool = niov->pp;
		niovs[last++] = niov;
	}
	if (last)
		page_pool_put_netmem_bulk(pool, niovs, last);
}
EXPORT_SYMBOL_GPL(net_iov_put_bulk);

void net_iov_tx_get(struct net_iov *niov)
{
	refcount_inc(&net_devmem_binding_of(niov)->ref);
}
EXPORT_SYMBOL_GPL(net_iov_tx_get);

u32 net_iov_binding_id(const struct net_iov *niov)
{
	return net_devmem_binding_of(niov)->id;
}

/**
 * skb_frags_join_net_iov() - fold a frag into the one before it
 * @shinfo: the frags
 * @i: the frag that may continue frag @i - 1
 *
 * A NIC that packs payloads into large buffers puts consecutive segments
 * of a flow side by side in one net_iov. Where GRO or coalescing appends
 * such a segment's frag right after the previous one, the two become a
 * single frag: frag @i - 1 grows by frag @i, whose reference on the
 * net_iov is dropped (frag @i - 1 holds another), and the frags after
 * @i move down one.
 *
 * Return: true if frag @i was folded in.
 */
bool skb_frags_join_net_iov(struct skb_shared_info *shinfo, unsigned int i)
{
	skb_frag_t *prev, *frag;
	struct net_iov *niov;

	if (!i || i >= shinfo->nr_frags)
		return false;
	prev = &shinfo->frags[i - 1];
	frag = &shinfo->frags[i];
	niov = skb_frag_net_iov(frag);
	if (!niov || niov != skb_frag_net_iov(prev) ||
	    skb_frag_off(prev) + skb_frag_size(prev) != skb_frag_off(frag))
		return false;

	skb_frag_size_add(prev, skb_frag_size(frag));
	net_iov_put(niov);
	memmove(frag, frag + 1, (shinfo->nr_frags - i - 1) * sizeof(*frag));
	shinfo->nr_frags--;
	return true;
}
EXPORT_SYMBOL_GPL(skb_frags_join_net_iov);

static int net_devmem_mp_nl_fill(void *mp_priv, struct sk_buff *rsp)
{
	struct net_devmem_dmabuf_binding *binding = mp_priv;

	return nla_put_u32(rsp, NETDEV_A_PAGE_POOL_DMABUF, binding->id);
}

static unsigned int net_devmem_mp_page_order(const void *mp_priv)
{
	const struct net_devmem_dmabuf_binding *binding = mp_priv;

	return binding->area.shift - PAGE_SHIFT;
}

static const struct memory_provider_ops net_devmem_mp_ops = {
	.init = net_devmem_mp_init,
	.destroy = net_devmem_mp_destroy,
	.alloc = net_devmem_mp_alloc,
	.release = net_devmem_mp_release,
	.nl_fill = net_devmem_mp_nl_fill,
	.page_order = net_devmem_mp_page_order,
};

/* --- owners and devices going away --------------------------------------- */

/* A generic netlink socket closed. netlink_release() gives its port id
 * back before it calls us, and we may wait for rtnl, so by now another
 * socket can hold the same port id and have bound through it. The owner
 * we want is the released one: orphaned (SOCK_DEAD) before the notifier.
 */
static bool net_devmem_owner_released(const struct net_devmem_dmabuf_binding *binding,
				      const struct netlink_notify *n)
{
	return binding->owner_portid == n->portid &&
	       net_eq(sock_net(binding->owner), n->net) &&
	       sock_flag(binding->owner, SOCK_DEAD);
}

/* Does the released socket own a binding in @head? */
static bool net_devmem_owns_any(struct hlist_head *head,
				const struct netlink_notify *n)
{
	struct net_devmem_dmabuf_binding *binding;
	bool found = false;

	spin_lock(&net_devmem_owner_lock);
	hlist_for_each_entry(binding, head, owner_node) {
		if (net_devmem_owner_released(binding, n)) {
			found = true;
			break;
		}
	}
	spin_unlock(&net_devmem_owner_lock);
	return found;
}

static int net_devmem_netlink_event(struct notifier_block *nb,
				    unsigned long event, void *ptr)
{
	struct net_devmem_dmabuf_binding *binding;
	struct netlink_notify *n = ptr;
	struct hlist_node *next;
	struct hlist_head *head;

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !atomic_read(&net_devmem_published))
		return NOTIFY_DONE;
	/* Most closing sockets own nothing: they take no rtnl. */
	head = net_devmem_owner_bucket(n->net, n->portid);
	if (!net_devmem_owns_any(head, n))
		return NOTIFY_DONE;
	rtnl_lock();
	hlist_for_each_entry_safe(binding, next, head, owner_node) {
		if (net_devmem_owner_released(binding, n))
			net_devmem_unbind_dmabuf(binding);
	}
	rtnl_unlock();
	return NOTIFY_OK;
}

/* The device is going away: its queues and pools are already stopped.
 * The binding stays with its owner, bound to nothing (an rx binding) or
 * matching no device (a tx binding).
 */
static int net_devmem_netdevice_event(struct notifier_block *nb,
				      unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct net_devmem_dmabuf_binding *binding;
	unsigned long id;

	if (event != NETDEV_UNREGISTER)
		return NOTIFY_DONE;
	xa_for_each(&net_devmem_bindings, id, binding) {
		if (binding->dev != dev || binding->area.tx)
			continue;
		net_devmem_detach_queues(binding, false);
		binding->dev = NULL;
	}
	/* Sends still in flight from a tx binding no longer match any
	 * device: validate_xmit_skb() drops them.
	 */
	spin_lock_bh(&net_devmem_tx_lock);
	list_for_each_entry(binding, &net_devmem_tx_bindings, tx_node)
		if (binding->dev == dev)
			WRITE_ONCE(binding->dev, NULL);
	spin_unlock_bh(&net_devmem_tx_lock);
	return NOTIFY_OK;
}

static struct notifier_block net_devmem_netlink_nb = {
	.notifier_call = net_devmem_netlink_event,
};

static struct notifier_block net_devmem_netdevice_nb = {
	.notifier_call = net_devmem_netdevice_event,
};

static struct ctl_table net_devmem_sysctl[] = {
	{
		.procname	= "devmem_tx_bindings_per_user",
		.data		= &net_devmem_tx_per_user,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
	},
	{ }
};

static int __init net_devmem_init(void)
{
	int err;

	if (!register_net_sysctl(&init_net, "net/core", net_devmem_sysctl))
		return -ENOMEM;
	err = netlink_register_notifier(&net_devmem_netlink_nb);
	if (err)
		return err;
	return register_netdevice_notifier(&net_devmem_netdevice_nb);
}
subsys_initcall(net_devmem_init);
