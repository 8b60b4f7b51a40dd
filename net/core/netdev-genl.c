// SPDX-License-Identifier: GPL-2.0
/*
 * The "netdev" generic netlink family (include/uapi/linux/netdev.h), with
 * mainline's numbering: dev-get, queue-get and page-pool-get (do and
 * dump), and bind-rx, which binds a dma-buf to rx queues for as long as
 * the requesting socket stays open (net/core/devmem.c).
 *
 * Everything runs under rtnl_lock, which keeps devices, their queue
 * counts and the queues' NAPI pointers stable while a reply is built.
 * Dumps resume by position, as rtnetlink's classic dumps do: a device
 * registered or unregistered between two parts of a dump may be missed
 * or seen twice, never half.
 */
#include <linux/log2.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/busy_poll.h>
#include <net/genetlink.h>
#include <net/netdev_rx_queue.h>
#include <net/sock.h>
#include <uapi/linux/netdev.h>

#include "devmem.h"
#include "page_pool_user.h"

static struct genl_family netdev_nl_family;

/* True, with the missing attribute and MSG in the extack, when the
 * request lacks ATTR.
 */
#define NETDEV_NL_MISSING(info, attr, msg) ({				\
	struct genl_info *__nl_info = (info);				\
	bool __missing = GENL_REQ_ATTR_CHECK(__nl_info, attr);		\
									\
	if (__missing)							\
		NL_SET_ERR_MSG(__nl_info->extack, msg);		\
	__missing;							\
})

static const struct nla_policy netdev_dev_policy[NETDEV_A_DEV_IFINDEX + 1] = {
	[NETDEV_A_DEV_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy netdev_queue_policy[NETDEV_A_QUEUE_TYPE + 1] = {
	[NETDEV_A_QUEUE_ID] = { .type = NLA_U32 },
	[NETDEV_A_QUEUE_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[NETDEV_A_QUEUE_TYPE] = NLA_POLICY_MAX(NLA_U32, NETDEV_QUEUE_TYPE_TX),
};

/* Mainline's page-pool id is a "uint" (4 or 8 bytes) in [1, U32_MAX]:
 * NLA_POLICY_FULL_RANGE(NLA_UINT, ...). 6.1 has no NLA_UINT; this refuses
 * what that policy refuses, with its errnos and messages.
 */
static int netdev_nl_page_pool_id_validate(const struct nlattr *attr,
					   struct netlink_ext_ack *extack)
{
	u64 id;

	if (nla_len(attr) == sizeof(u32)) {
		id = nla_get_u32(attr);
	} else if (nla_len(attr) == sizeof(u64)) {
		id = nla_get_u64(attr);
	} else {
		NL_SET_ERR_MSG_ATTR(extack, attr, "invalid attribute length");
		return -EINVAL;
	}
	if (!id || id > U32_MAX) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "integer out of range");
		return -ERANGE;
	}
	return 0;
}

static const struct nla_policy netdev_page_pool_policy[NETDEV_A_PAGE_POOL_ID + 1] = {
	[NETDEV_A_PAGE_POOL_ID] =
		NLA_POLICY_VALIDATE_FN(NLA_BINARY,
				       netdev_nl_page_pool_id_validate),
};

/* One queue of a bind-rx request. */
static const struct nla_policy netdev_queue_id_policy[NETDEV_A_QUEUE_TYPE + 1] = {
	[NETDEV_A_QUEUE_ID] = { .type = NLA_U32 },
	[NETDEV_A_QUEUE_TYPE] = NLA_POLICY_MAX(NLA_U32, NETDEV_QUEUE_TYPE_TX),
};

static const struct nla_policy netdev_bind_rx_policy[NETDEV_A_DMABUF_RX_PAGE_SIZE + 1] = {
	[NETDEV_A_DMABUF_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[NETDEV_A_DMABUF_QUEUES] = NLA_POLICY_NESTED(netdev_queue_id_policy),
	[NETDEV_A_DMABUF_FD] = { .type = NLA_U32 },
	[NETDEV_A_DMABUF_RX_PAGE_SIZE] = NLA_POLICY_MIN(NLA_U32, PAGE_SIZE),
};

static const struct nla_policy netdev_bind_tx_policy[NETDEV_A_DMABUF_FD + 1] = {
	[NETDEV_A_DMABUF_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[NETDEV_A_DMABUF_FD] = { .type = NLA_U32 },
};

/* Answer a do request with the one message @fill builds, under rtnl. */
static int netdev_nl_reply(struct genl_info *info,
			   int (*fill)(struct sk_buff *rsp,
				       struct genl_info *info))
{
	struct sk_buff *rsp;
	int err;

	rsp = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!rsp)
		return -ENOMEM;
	rtnl_lock();
	err = fill(rsp, info);
	rtnl_unlock();
	if (err) {
		nlmsg_free(rsp);
		return err;
	}
	return genlmsg_reply(rsp, info);
}

/* The device @attr names in the requester's netns, under rtnl. */
static struct net_device *netdev_nl_dev(struct net *net, struct nlattr *attr,
					struct netlink_ext_ack *extack)
{
	struct net_device *dev;

	dev = __dev_get_by_index(net, nla_get_u32(attr));
	if (!dev || !netif_device_present(dev)) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "no network device with this ifindex");
		return NULL;
	}
	return dev;
}

/* What one part of a dump returns: its length (0 once the dump is
 * complete). A full skb ends the part and the next one resumes; only a
 * message too big for an empty skb is an error.
 */
static int netdev_nl_dump_ret(struct sk_buff *skb, int err)
{
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ?: skb->len;
}

/* Mainline's dev attributes describe XDP features this kernel does not
 * track: only the ifindex can be reported truthfully.
 */
static int netdev_nl_dev_fill(struct sk_buff *rsp, struct net_device *dev,
			      u32 portid, u32 seq, int flags)
{
	void *hdr;

	hdr = genlmsg_put(rsp, portid, seq, &netdev_nl_family, flags,
			  NETDEV_CMD_DEV_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(rsp, NETDEV_A_DEV_IFINDEX, dev->ifindex)) {
		genlmsg_cancel(rsp, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(rsp, hdr);
	return 0;
}

static int netdev_nl_dev_get_one(struct sk_buff *rsp, struct genl_info *info)
{
	struct net_device *dev;

	dev = netdev_nl_dev(genl_info_net(info),
			    info->attrs[NETDEV_A_DEV_IFINDEX], info->extack);
	if (!dev)
		return -ENODEV;
	return netdev_nl_dev_fill(rsp, dev, info->snd_portid, info->snd_seq, 0);
}

static int netdev_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	if (NETDEV_NL_MISSING(info, NETDEV_A_DEV_IFINDEX, "ifindex is required"))
		return -EINVAL;
	return netdev_nl_reply(info, netdev_nl_dev_get_one);
}

static int netdev_nl_dev_get_dumpit(struct sk_buff *skb,
				    struct netlink_callback *cb)
{
	struct net *net = sock_net(skb->sk);
	struct net_device *dev;
	long pos = 0;
	int err = 0;

	rtnl_lock();
	for_each_netdev(net, dev) {
		if (pos++ < cb->args[0])
			continue;
		err = netdev_nl_dev_fill(skb, dev, NETLINK_CB(cb->skb).portid,
					 cb->nlh->nlmsg_seq, NLM_F_MULTI);
		if (err)
			break;
		cb->args[0] = pos;
	}
	rtnl_unlock();
	return netdev_nl_dump_ret(skb, err);
}

static struct napi_struct *netdev_queue_napi(struct net_device *dev,
					     u32 type, u32 id)
{
	if (type == NETDEV_QUEUE_TYPE_RX)
		return __netif_get_rx_queue(dev, id)->napi;
	return netdev_get_tx_queue(dev, id)->napi;
}

static int netdev_nl_queue_fill(struct sk_buff *rsp, struct net_device *dev,
				u32 type, u32 id, u32 portid, u32 seq,
				int flags)
{
	struct napi_struct *napi;
	u32 binding;
	void *hdr;

	hdr = genlmsg_put(rsp, portid, seq, &netdev_nl_family, flags,
			  NETDEV_CMD_QUEUE_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(rsp, NETDEV_A_QUEUE_ID, id) ||
	    nla_put_u32(rsp, NETDEV_A_QUEUE_TYPE, type) ||
	    nla_put_u32(rsp, NETDEV_A_QUEUE_IFINDEX, dev->ifindex))
		goto nomem;
	napi = netdev_queue_napi(dev, type, id);
	if (napi && napi->napi_id >= MIN_NAPI_ID &&
	    nla_put_u32(rsp, NETDEV_A_QUEUE_NAPI_ID, napi->napi_id))
		goto nomem;
	if (type == NETDEV_QUEUE_TYPE_RX) {
		binding = net_devmem_rxq_binding_id(__netif_get_rx_queue(dev, id));
		if (binding && nla_put_u32(rsp, NETDEV_A_QUEUE_DMABUF, binding))
			goto nomem;
	}
	genlmsg_end(rsp, hdr);
	return 0;
nomem:
	genlmsg_cancel(rsp, hdr);
	return -EMSGSIZE;
}

static u32 netdev_nl_queue_count(struct net_device *dev, u32 type)
{
	return type == NETDEV_QUEUE_TYPE_RX ? dev->real_num_rx_queues :
					      dev->real_num_tx_queues;
}

static int netdev_nl_queue_get_one(struct sk_buff *rsp,
				   struct genl_info *info)
{
	u32 id = nla_get_u32(info->attrs[NETDEV_A_QUEUE_ID]);
	u32 type = nla_get_u32(info->attrs[NETDEV_A_QUEUE_TYPE]);
	struct net_device *dev;

	dev = netdev_nl_dev(genl_info_net(info),
			    info->attrs[NETDEV_A_QUEUE_IFINDEX], info->extack);
	if (!dev)
		return -ENODEV;
	/* Mainline: a device that is down has no queues to show. */
	if (!(dev->flags & IFF_UP)) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[NETDEV_A_QUEUE_IFINDEX],
				    "device is down");
		return -ENOENT;
	}
	if (id >= netdev_nl_queue_count(dev, type)) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[NETDEV_A_QUEUE_ID],
				    "no queue with this id and type on the device");
		return -EINVAL;
	}
	return netdev_nl_queue_fill(rsp, dev, type, id, info->snd_portid,
				    info->snd_seq, 0);
}

static int netdev_nl_queue_get_doit(struct sk_buff *skb,
				    struct genl_info *info)
{
	if (NETDEV_NL_MISSING(info, NETDEV_A_QUEUE_IFINDEX,
			      "ifindex is required") ||
	    NETDEV_NL_MISSING(info, NETDEV_A_QUEUE_TYPE,
			      "queue type is required") ||
	    NETDEV_NL_MISSING(info, NETDEV_A_QUEUE_ID, "queue id is required"))
		return -EINVAL;
	return netdev_nl_reply(info, netdev_nl_queue_get_one);
}

/* Queues of one device, rx then tx, from where the last part stopped:
 * cb->args[1] and [2] count the rx and tx queues already sent.
 */
static int netdev_nl_queue_dump_dev(struct sk_buff *skb,
				    struct netlink_callback *cb,
				    struct net_device *dev)
{
	u32 portid = NETLINK_CB(cb->skb).portid, seq = cb->nlh->nlmsg_seq;
	int err;

	if (!(dev->flags & IFF_UP))
		return 0;
	for (; cb->args[1] < dev->real_num_rx_queues; cb->args[1]++) {
		err = netdev_nl_queue_fill(skb, dev, NETDEV_QUEUE_TYPE_RX,
					   cb->args[1], portid, seq,
					   NLM_F_MULTI);
		if (err)
			return err;
	}
	for (; cb->args[2] < dev->real_num_tx_queues; cb->args[2]++) {
		err = netdev_nl_queue_fill(skb, dev, NETDEV_QUEUE_TYPE_TX,
					   cb->args[2], portid, seq,
					   NLM_F_MULTI);
		if (err)
			return err;
	}
	return 0;
}

static int netdev_nl_queue_get_dumpit(struct sk_buff *skb,
				      struct netlink_callback *cb)
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);
	struct nlattr *ifattr = info->attrs[NETDEV_A_QUEUE_IFINDEX];
	struct net *net = sock_net(skb->sk);
	struct net_device *dev;
	long pos = 0;
	int err = 0;

	rtnl_lock();
	if (ifattr) {
		dev = netdev_nl_dev(net, ifattr, cb->extack);
		err = dev ? netdev_nl_queue_dump_dev(skb, cb, dev) : -ENODEV;
	} else {
		for_each_netdev(net, dev) {
			if (pos < cb->args[0]) {
				pos++;
				continue;
			}
			err = netdev_nl_queue_dump_dev(skb, cb, dev);
			if (err)
				break;
			cb->args[0] = ++pos;
			cb->args[1] = 0;
			cb->args[2] = 0;
		}
	}
	rtnl_unlock();
	return netdev_nl_dump_ret(skb, err);
}

static int netdev_nl_page_pool_get_one(struct sk_buff *rsp,
				       struct genl_info *info)
{
	struct nlattr *attr = info->attrs[NETDEV_A_PAGE_POOL_ID];
	struct page_pool_nl_msg msg = {
		.family = &netdev_nl_family,
		.portid = info->snd_portid,
		.seq = info->snd_seq,
	};
	/* The policy let through 4 or 8 bytes holding at most U32_MAX. */
	u32 id = nla_len(attr) == sizeof(u32) ? nla_get_u32(attr) :
						nla_get_u64(attr);
	int err;

	err = page_pool_nl_get_one(rsp, genl_info_net(info), id, &msg);
	if (err == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "no page pool with this id");
	return err;
}

static int netdev_nl_page_pool_get_doit(struct sk_buff *skb,
					struct genl_info *info)
{
	if (NETDEV_NL_MISSING(info, NETDEV_A_PAGE_POOL_ID,
			      "page pool id is required"))
		return -EINVAL;
	return netdev_nl_reply(info, netdev_nl_page_pool_get_one);
}

static int netdev_nl_page_pool_get_dumpit(struct sk_buff *skb,
					  struct netlink_callback *cb)
{
	struct page_pool_nl_msg msg = {
		.family = &netdev_nl_family,
		.portid = NETLINK_CB(cb->skb).portid,
		.seq = cb->nlh->nlmsg_seq,
		.flags = NLM_F_MULTI,
	};
	unsigned long next = cb->args[0];
	int err;

	err = page_pool_nl_dump(skb, sock_net(skb->sk), &next, &msg);
	cb->args[0] = next;
	return netdev_nl_dump_ret(skb, err);
}

/* Bind every queue of the request, or none. */
static int netdev_nl_bind_queues(struct net_devmem_dmabuf_binding *binding,
				 struct genl_info *info)
{
	struct nlattr *tb[NETDEV_A_QUEUE_TYPE + 1];
	struct nlattr *attr;
	int rem, err;

	nlmsg_for_each_attr(attr, info->nlhdr, GENL_HDRLEN, rem) {
		if (nla_type(attr) != NETDEV_A_DMABUF_QUEUES)
			continue;
		err = nla_parse_nested(tb, NETDEV_A_QUEUE_TYPE, attr,
				       netdev_queue_id_policy, info->extack);
		if (err)
			return err;
		if (NL_REQ_ATTR_CHECK(info->extack, attr, tb,
				      NETDEV_A_QUEUE_ID)) {
			NL_SET_ERR_MSG(info->extack, "queue id is required");
			return -EINVAL;
		}
		if (NL_REQ_ATTR_CHECK(info->extack, attr, tb,
				      NETDEV_A_QUEUE_TYPE)) {
			NL_SET_ERR_MSG(info->extack, "queue type is required");
			return -EINVAL;
		}
		if (nla_get_u32(tb[NETDEV_A_QUEUE_TYPE]) !=
		    NETDEV_QUEUE_TYPE_RX) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    tb[NETDEV_A_QUEUE_TYPE],
					    "only rx queues can be bound to a dma-buf");
			return -EINVAL;
		}
		err = net_devmem_bind_dmabuf_to_queue(binding,
						      nla_get_u32(tb[NETDEV_A_QUEUE_ID]),
						      info->extack);
		if (err) {
			/* Point at the queue that failed. */
			info->extack->bad_attr = tb[NETDEV_A_QUEUE_ID];
			return err;
		}
	}
	return 0;
}

/* Publish a new binding and put its id in the reply; on failure it is
 * unbound.
 */
static int netdev_nl_bind_reply(struct sk_buff *rsp, struct genl_info *info,
				struct net_devmem_dmabuf_binding *binding)
{
	void *hdr;
	int err;

	/* The sender's socket owns it (its port id may be reused before
	 * its release is noticed).
	 */
	err = net_devmem_publish(binding, info->user_ptr[0],
				 info->snd_portid);
	if (err)
		goto err_unbind;

	err = -EMSGSIZE;
	hdr = genlmsg_put_reply(rsp, info, &netdev_nl_family, 0,
				info->genlhdr->cmd);
	if (!hdr)
		goto err_unbind;
	if (nla_put_u32(rsp, NETDEV_A_DMABUF_ID,
			net_devmem_binding_id(binding))) {
		genlmsg_cancel(rsp, hdr);
		goto err_unbind;
	}
	genlmsg_end(rsp, hdr);
	return 0;

err_unbind:
	net_devmem_unbind_dmabuf(binding);
	return err;
}

static int netdev_nl_bind_rx_one(struct sk_buff *rsp, struct genl_info *info)
{
	struct nlattr *size_attr = info->attrs[NETDEV_A_DMABUF_RX_PAGE_SIZE];
	struct net_devmem_dmabuf_binding *binding;
	unsigned int shift = PAGE_SHIFT;
	struct net_device *dev;
	int err;

	/* The policy refused sizes below a page (ERANGE). */
	if (size_attr) {
		if (!is_power_of_2(nla_get_u32(size_attr))) {
			NL_SET_ERR_MSG_ATTR(info->extack, size_attr,
					    "rx-page-size must be a power of two");
			return -EINVAL;
		}
		shift = ilog2(nla_get_u32(size_attr));
	}

	dev = netdev_nl_dev(genl_info_net(info),
			    info->attrs[NETDEV_A_DMABUF_IFINDEX], info->extack);
	if (!dev)
		return -ENODEV;
	if (!dev->queue_mgmt_ops) {
		NL_SET_ERR_MSG(info->extack,
			       "device cannot restart rx queues, which binding needs");
		return -EOPNOTSUPP;
	}
	if (dev_xdp_prog_count(dev)) {
		NL_SET_ERR_MSG(info->extack,
			       "device has an XDP program attached");
		return -EEXIST;
	}

	binding = net_devmem_bind_dmabuf(dev,
					 nla_get_u32(info->attrs[NETDEV_A_DMABUF_FD]),
					 DMA_FROM_DEVICE, shift, info->extack);
	if (IS_ERR(binding))
		return PTR_ERR(binding);
	err = netdev_nl_bind_queues(binding, info);
	if (err) {
		net_devmem_unbind_dmabuf(binding);
		return err;
	}
	return netdev_nl_bind_reply(rsp, info, binding);
}

static int netdev_nl_bind_tx_one(struct sk_buff *rsp, struct genl_info *info)
{
	struct net_devmem_dmabuf_binding *binding;
	struct net_device *dev;

	dev = netdev_nl_dev(genl_info_net(info),
			    info->attrs[NETDEV_A_DMABUF_IFINDEX], info->extack);
	if (!dev)
		return -ENODEV;
	if (!dev->netmem_tx) {
		NL_SET_ERR_MSG(info->extack,
			       "Driver does not support netmem TX");
		return -EOPNOTSUPP;
	}
	binding = net_devmem_bind_dmabuf(dev,
					 nla_get_u32(info->attrs[NETDEV_A_DMABUF_FD]),
					 DMA_TO_DEVICE, PAGE_SHIFT, info->extack);
	if (IS_ERR(binding))
		return PTR_ERR(binding);
	return netdev_nl_bind_reply(rsp, info, binding);
}

static int netdev_nl_bind_tx_doit(struct sk_buff *skb, struct genl_info *info)
{
	if (NETDEV_NL_MISSING(info, NETDEV_A_DMABUF_IFINDEX,
			      "ifindex is required") ||
	    NETDEV_NL_MISSING(info, NETDEV_A_DMABUF_FD,
			      "dma-buf fd is required"))
		return -EINVAL;
	info->user_ptr[0] = NETLINK_CB(skb).sk;
	return netdev_nl_reply(info, netdev_nl_bind_tx_one);
}

static int netdev_nl_bind_rx_doit(struct sk_buff *skb, struct genl_info *info)
{
	if (NETDEV_NL_MISSING(info, NETDEV_A_DMABUF_IFINDEX,
			      "ifindex is required") ||
	    NETDEV_NL_MISSING(info, NETDEV_A_DMABUF_FD,
			      "dma-buf fd is required") ||
	    NETDEV_NL_MISSING(info, NETDEV_A_DMABUF_QUEUES,
			      "at least one queue is required"))
		return -EINVAL;
	info->user_ptr[0] = NETLINK_CB(skb).sk;
	return netdev_nl_reply(info, netdev_nl_bind_rx_one);
}

static const struct genl_ops netdev_nl_ops[] = {
	{
		.cmd = NETDEV_CMD_DEV_GET,
		.doit = netdev_nl_dev_get_doit,
		.dumpit = netdev_nl_dev_get_dumpit,
		.policy = netdev_dev_policy,
		.maxattr = NETDEV_A_DEV_IFINDEX,
	},
	{
		.cmd = NETDEV_CMD_QUEUE_GET,
		.doit = netdev_nl_queue_get_doit,
		.dumpit = netdev_nl_queue_get_dumpit,
		.policy = netdev_queue_policy,
		.maxattr = NETDEV_A_QUEUE_TYPE,
	},
	{
		.cmd = NETDEV_CMD_PAGE_POOL_GET,
		.doit = netdev_nl_page_pool_get_doit,
		.dumpit = netdev_nl_page_pool_get_dumpit,
		.policy = netdev_page_pool_policy,
		.maxattr = NETDEV_A_PAGE_POOL_ID,
	},
	{
		.cmd = NETDEV_CMD_BIND_RX,
		.doit = netdev_nl_bind_rx_doit,
		.policy = netdev_bind_rx_policy,
		.maxattr = NETDEV_A_DMABUF_RX_PAGE_SIZE,
		/* CAP_NET_ADMIN over the user namespace that owns the
		 * netns, checked before the policy, as mainline (7.2)
		 */
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		/* no capability needed, as mainline: the caller sends
		 * only from a dma-buf it holds, through its own sockets
		 */
		.cmd = NETDEV_CMD_BIND_TX,
		.doit = netdev_nl_bind_tx_doit,
		.policy = netdev_bind_tx_policy,
		.maxattr = NETDEV_A_DMABUF_FD,
	},
};

static struct genl_family netdev_nl_family __ro_after_init = {
	.name = NETDEV_FAMILY_NAME,
	.version = NETDEV_FAMILY_VERSION,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = netdev_nl_ops,
	.n_ops = ARRAY_SIZE(netdev_nl_ops),
};

static int __init netdev_nl_init(void)
{
	return genl_register_family(&netdev_nl_family);
}
subsys_initcall(netdev_nl_init);
