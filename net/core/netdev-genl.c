// SPDX-License-Identifier: GPL-2.0
/*
 * The "netdev" generic netlink family (include/uapi/linux/netdev.h), with
 * mainline's numbering: dev-get and queue-get, do and dump.
 *
 * Everything runs under rtnl_lock, which keeps devices, their queue
 * counts and the queues' NAPI pointers stable while a reply is built.
 * Dumps resume by position, as rtnetlink's classic dumps do: a device
 * registered or unregistered between two parts of a dump may be missed
 * or seen twice, never half.
 */
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/busy_poll.h>
#include <net/genetlink.h>
#include <net/netdev_queues.h>
#include <net/sock.h>
#include <uapi/linux/netdev.h>

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

static int netdev_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net_device *dev;
	struct sk_buff *rsp;
	int err = -ENODEV;

	if (NETDEV_NL_MISSING(info, NETDEV_A_DEV_IFINDEX, "ifindex is required"))
		return -EINVAL;
	rsp = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!rsp)
		return -ENOMEM;
	rtnl_lock();
	dev = netdev_nl_dev(genl_info_net(info),
			    info->attrs[NETDEV_A_DEV_IFINDEX], info->extack);
	if (dev)
		err = netdev_nl_dev_fill(rsp, dev, info->snd_portid,
					 info->snd_seq, 0);
	rtnl_unlock();
	if (err) {
		nlmsg_free(rsp);
		return err;
	}
	return genlmsg_reply(rsp, info);
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

static int netdev_nl_queue_get_doit(struct sk_buff *skb,
				    struct genl_info *info)
{
	struct net_device *dev;
	struct sk_buff *rsp;
	int err = -ENODEV;
	u32 id, type;

	if (NETDEV_NL_MISSING(info, NETDEV_A_QUEUE_IFINDEX,
			      "ifindex is required") ||
	    NETDEV_NL_MISSING(info, NETDEV_A_QUEUE_TYPE,
			      "queue type is required") ||
	    NETDEV_NL_MISSING(info, NETDEV_A_QUEUE_ID, "queue id is required"))
		return -EINVAL;
	id = nla_get_u32(info->attrs[NETDEV_A_QUEUE_ID]);
	type = nla_get_u32(info->attrs[NETDEV_A_QUEUE_TYPE]);
	rsp = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!rsp)
		return -ENOMEM;
	rtnl_lock();
	dev = netdev_nl_dev(genl_info_net(info),
			    info->attrs[NETDEV_A_QUEUE_IFINDEX], info->extack);
	if (dev && id >= netdev_nl_queue_count(dev, type)) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[NETDEV_A_QUEUE_ID],
				    "no queue with this id and type on the device");
		err = -EINVAL;
	} else if (dev) {
		err = netdev_nl_queue_fill(rsp, dev, type, id,
					   info->snd_portid, info->snd_seq, 0);
	}
	rtnl_unlock();
	if (err) {
		nlmsg_free(rsp);
		return err;
	}
	return genlmsg_reply(rsp, info);
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
