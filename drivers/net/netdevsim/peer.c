// SPDX-License-Identifier: GPL-2.0
/*
 * Linking two netdevsim ports with a virtual cable.
 *
 *   echo "NETNSFD:IFINDEX NETNSFD:IFINDEX" > /sys/bus/netdevsim/link_device
 *   echo "NETNSFD:IFINDEX" > /sys/bus/netdevsim/unlink_device
 *
 * (link and unlink are the same files under shorter names). The netns file
 * descriptors are looked up in the writer's file table, so the two ports may
 * live in different network namespaces. A linked port delivers what it
 * transmits to its peer (wire.c). Carrier does not follow the cable: an
 * up port transmits, and what finds no peer, or a peer that is down, is
 * dropped and counted by the port (tx_drop_no_peer, tx_drop_peer_down).
 */
#include <linux/device.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/net_namespace.h>

#include "netdevsim.h"

bool nsim_dp_is_nsim(const struct net_device *dev)
{
	/* Only ports with the datapath (not VFs) can be linked. */
	return dev->netdev_ops->ndo_start_xmit == nsim_wire_xmit;
}

/* Cut the cable at both ends; packets already on it are still delivered. */
void nsim_peer_unlink(struct netdevsim *ns)
{
	struct netdevsim *peer = rtnl_dereference(ns->dp.peer);

	ASSERT_RTNL();
	if (!peer)
		return;
	RCU_INIT_POINTER(ns->dp.peer, NULL);
	RCU_INIT_POINTER(peer->dp.peer, NULL);
}

int nsim_peer_get_iflink(const struct net_device *dev)
{
	struct netdevsim *ns = netdev_priv(dev);
	struct netdevsim *peer;
	int iflink;

	rcu_read_lock();
	peer = rcu_dereference(ns->dp.peer);
	iflink = peer ? READ_ONCE(peer->netdev->ifindex) : dev->ifindex;
	rcu_read_unlock();
	return iflink;
}

/* "FD:IFINDEX" with nothing after it but white space; *end is where the
 * next field may start.
 */
static int nsim_parse_port(const char *s, int *fd, int *ifindex,
			   const char **end)
{
	int n = 0;

	if (sscanf(s, " %d:%d%n", fd, ifindex, &n) != 2 || !n)
		return -EINVAL;
	if (s[n] && !isspace(s[n]))
		return -EINVAL;
	if (*fd < 0 || *ifindex <= 0)
		return -EINVAL;
	*end = s + n;
	return 0;
}

static bool nsim_only_space(const char *s)
{
	while (*s && isspace(*s))
		s++;
	return !*s;
}

/* Must be called under rtnl; returns the port or an ERR_PTR. */
static struct netdevsim *nsim_port_lookup(struct net *net, int ifindex,
					  const char *what)
{
	struct net_device *dev = __dev_get_by_index(net, ifindex);

	if (!dev) {
		pr_err("netdevsim: %s: no device with ifindex %d in that netns\n",
		       what, ifindex);
		return ERR_PTR(-EINVAL);
	}
	if (!nsim_dp_is_nsim(dev)) {
		pr_err("netdevsim: %s: %s is not a netdevsim port\n",
		       what, dev->name);
		return ERR_PTR(-EINVAL);
	}
	return netdev_priv(dev);
}

static struct net *nsim_get_net(int fd, const char *what)
{
	struct net *net = get_net_ns_by_fd(fd);

	if (IS_ERR(net)) {
		pr_err("netdevsim: %s: fd %d is not a network namespace\n",
		       what, fd);
		return ERR_PTR(-EINVAL);
	}
	return net;
}

static ssize_t nsim_link_store(struct bus_type *bus, const char *buf,
			       size_t count)
{
	int fda, fdb, ifa, ifb, err;
	struct netdevsim *a, *b;
	struct net *neta, *netb;
	const char *p;

	if (nsim_parse_port(buf, &fda, &ifa, &p) ||
	    nsim_parse_port(p, &fdb, &ifb, &p) || !nsim_only_space(p)) {
		pr_err("netdevsim: link: expected \"NETNSFD:IFINDEX NETNSFD:IFINDEX\"\n");
		return -EINVAL;
	}

	neta = nsim_get_net(fda, "link");
	if (IS_ERR(neta))
		return PTR_ERR(neta);
	netb = nsim_get_net(fdb, "link");
	if (IS_ERR(netb)) {
		put_net(neta);
		return PTR_ERR(netb);
	}

	rtnl_lock();
	a = nsim_port_lookup(neta, ifa, "link");
	err = PTR_ERR_OR_ZERO(a);
	if (err)
		goto out;
	b = nsim_port_lookup(netb, ifb, "link");
	err = PTR_ERR_OR_ZERO(b);
	if (err)
		goto out;
	err = -EINVAL;
	if (a == b) {
		pr_err("netdevsim: link: cannot link %s to itself\n",
		       a->netdev->name);
		goto out;
	}
	err = -EBUSY;
	if (rtnl_dereference(a->dp.peer) || rtnl_dereference(b->dp.peer)) {
		pr_err("netdevsim: link: %s is already linked\n",
		       rtnl_dereference(a->dp.peer) ? a->netdev->name :
						      b->netdev->name);
		goto out;
	}
	rcu_assign_pointer(a->dp.peer, b);
	rcu_assign_pointer(b->dp.peer, a);
	err = 0;
out:
	rtnl_unlock();
	put_net(netb);
	put_net(neta);
	return err ? err : count;
}

static ssize_t nsim_unlink_store(struct bus_type *bus, const char *buf,
				 size_t count)
{
	struct netdevsim *ns;
	int fd, ifindex, err;
	struct net *net;
	const char *p;

	if (nsim_parse_port(buf, &fd, &ifindex, &p) || !nsim_only_space(p)) {
		pr_err("netdevsim: unlink: expected \"NETNSFD:IFINDEX\"\n");
		return -EINVAL;
	}
	net = nsim_get_net(fd, "unlink");
	if (IS_ERR(net))
		return PTR_ERR(net);

	rtnl_lock();
	ns = nsim_port_lookup(net, ifindex, "unlink");
	err = PTR_ERR_OR_ZERO(ns);
	if (!err && !rtnl_dereference(ns->dp.peer)) {
		pr_err("netdevsim: unlink: %s is not linked\n",
		       ns->netdev->name);
		err = -EINVAL;
	}
	if (!err)
		nsim_peer_unlink(ns);
	rtnl_unlock();
	put_net(net);
	return err ? err : count;
}

/* Mainline's names, and the short ones. */
struct bus_attribute bus_attr_link_device =
	__ATTR(link_device, 0200, NULL, nsim_link_store);
struct bus_attribute bus_attr_unlink_device =
	__ATTR(unlink_device, 0200, NULL, nsim_unlink_store);
struct bus_attribute bus_attr_link =
	__ATTR(link, 0200, NULL, nsim_link_store);
struct bus_attribute bus_attr_unlink =
	__ATTR(unlink, 0200, NULL, nsim_unlink_store);
