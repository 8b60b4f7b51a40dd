// SPDX-License-Identifier: GPL-2.0
/*
 * ethtool for the netdevsim datapath: channels (-l/-L), rings (-g/-G) with
 * tcp-data-split, and the per-queue counters of `ethtool -S`.
 * Steering (-N/-n, -X/-x) lives in steer.c.
 */
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>

#include "netdevsim.h"

static const char nsim_dev_stat_names[][ETH_GSTRING_LEN] = {
	"tx_drop_no_peer",
	"tx_drop_peer_down",
	"tx_errors",
	"tx_tso_skbs",
	"tx_sw_gso_skbs",
	"tx_devmem_packets",
	"tx_devmem_bytes",
	"rx_length_errors",
	"rx_filtered",
};

static const char nsim_rq_stat_names[NSIM_RQ_NSTATS][ETH_GSTRING_LEN] = {
	[NSIM_RQ_PACKETS]	= "packets",
	[NSIM_RQ_BYTES]		= "bytes",
	[NSIM_RQ_HDR_BUFS]	= "hdr_bufs",
	[NSIM_RQ_PAYLOAD_BUFS]	= "payload_bufs",
	[NSIM_RQ_DROPS]		= "drops",
	[NSIM_RQ_ALLOC_FAIL]	= "alloc_fail",
	[NSIM_RQ_DEVMEM_DROPS]	= "devmem_drops",
	[NSIM_RQ_CSUM_UNNECESSARY] = "csum_unnecessary",
	[NSIM_RQ_CSUM_COMPLETE]	= "csum_complete",
	[NSIM_RQ_CSUM_NONE]	= "csum_none",
	[NSIM_RQ_HW_GRO_PACKETS] = "hw_gro_packets",
	[NSIM_RQ_HW_GRO_WIRE_PACKETS] = "hw_gro_wire_packets",
};

#define NSIM_DEV_NSTATS ARRAY_SIZE(nsim_dev_stat_names)

static bool nsim_has_dp(struct net_device *dev)
{
	return ((struct netdevsim *)netdev_priv(dev))->dp.rqs;
}

int nsim_dp_get_sset_count(struct net_device *dev, int sset)
{
	if (sset != ETH_SS_STATS || !nsim_has_dp(dev))
		return -EOPNOTSUPP;
	return NSIM_DEV_NSTATS + dev->real_num_rx_queues * NSIM_RQ_NSTATS;
}

void nsim_dp_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	unsigned int q, i;

	if (sset != ETH_SS_STATS || !nsim_has_dp(dev))
		return;
	memcpy(data, nsim_dev_stat_names, sizeof(nsim_dev_stat_names));
	data += sizeof(nsim_dev_stat_names);
	for (q = 0; q < dev->real_num_rx_queues; q++)
		for (i = 0; i < NSIM_RQ_NSTATS; i++) {
			snprintf(data, ETH_GSTRING_LEN, "rx%u_%s", q,
				 nsim_rq_stat_names[i]);
			data += ETH_GSTRING_LEN;
		}
}

void nsim_dp_get_ethtool_stats(struct net_device *dev,
			       struct ethtool_stats *stats, u64 *data)
{
	struct netdevsim *ns = netdev_priv(dev);
	unsigned int q;

	if (!nsim_has_dp(dev))
		return;
	*data++ = atomic64_read(&ns->dp.tx_drop_no_peer);
	*data++ = atomic64_read(&ns->dp.tx_drop_peer_down);
	*data++ = atomic64_read(&ns->dp.tx_errors);
	*data++ = atomic64_read(&ns->dp.tx_tso_skbs);
	*data++ = atomic64_read(&ns->dp.tx_sw_gso_skbs);
	*data++ = atomic64_read(&ns->dp.tx_devmem_packets);
	*data++ = atomic64_read(&ns->dp.tx_devmem_bytes);
	*data++ = atomic64_read(&ns->dp.rx_length_errors);
	*data++ = atomic64_read(&ns->dp.rx_filtered);
	for (q = 0; q < dev->real_num_rx_queues; q++) {
		nsim_rq_read_stats(&ns->dp.rqs[q], data);
		data += NSIM_RQ_NSTATS;
	}
}

void nsim_dp_get_ringparam(struct net_device *dev,
			   struct ethtool_ringparam *ring,
			   struct kernel_ethtool_ringparam *kring,
			   struct netlink_ext_ack *extack)
{
	struct netdevsim *ns = netdev_priv(dev);

	*ring = ns->ethtool.ring;
	if (!nsim_has_dp(dev))
		return;
	ring->rx_max_pending = min_t(u32, ring->rx_max_pending, NSIM_RING_MAX);
	ring->rx_pending = ns->dp.ring_size;
	kring->tcp_data_split = ns->dp.hds ? ETHTOOL_TCP_DATA_SPLIT_ENABLED :
					     ETHTOOL_TCP_DATA_SPLIT_DISABLED;
	kring->hds_thresh = ns->dp.hds_thresh;
	kring->hds_thresh_max = NSIM_HDS_THRESH_MAX;
}

static int nsim_set_ring_size(struct netdevsim *ns, u32 size,
			      struct netlink_ext_ack *extack)
{
	u32 old = ns->dp.ring_size;
	int err;

	if (size == old)
		return 0;
	WRITE_ONCE(ns->dp.ring_size, size);
	err = nsim_rq_restart_all(ns);
	if (!err)
		return 0;

	NL_SET_ERR_MSG(extack, "cannot rebuild the rx queues with the new ring size");
	/* Queues not yet rebuilt still run on the old size: go back to it. */
	WRITE_ONCE(ns->dp.ring_size, old);
	if (nsim_rq_restart_all(ns))
		netdev_warn(ns->netdev, "rx queues left with mixed ring sizes\n");
	return err;
}

int nsim_dp_set_ringparam(struct net_device *dev,
			  struct ethtool_ringparam *ring,
			  struct kernel_ethtool_ringparam *kring,
			  struct netlink_ext_ack *extack)
{
	struct netdevsim *ns = netdev_priv(dev);
	int err;

	if (!nsim_has_dp(dev)) {
		ns->ethtool.ring.rx_pending = ring->rx_pending;
	} else {
		if (!ring->rx_pending) {
			NL_SET_ERR_MSG(extack, "rx ring size must be at least 1");
			return -EINVAL;
		}
		if (kring->hds_thresh > NSIM_HDS_THRESH_MAX) {
			NL_SET_ERR_MSG(extack, "hds-thresh above its maximum");
			return -EINVAL;
		}
		err = nsim_set_ring_size(ns, ring->rx_pending, extack);
		if (err)
			return err;
		/* Unknown asks for the default, which is off. */
		WRITE_ONCE(ns->dp.hds, kring->tcp_data_split ==
				       ETHTOOL_TCP_DATA_SPLIT_ENABLED);
		WRITE_ONCE(ns->dp.hds_thresh, kring->hds_thresh);
	}
	ns->ethtool.ring.rx_jumbo_pending = ring->rx_jumbo_pending;
	ns->ethtool.ring.rx_mini_pending = ring->rx_mini_pending;
	ns->ethtool.ring.tx_pending = ring->tx_pending;
	return 0;
}

void nsim_dp_get_channels(struct net_device *dev, struct ethtool_channels *ch)
{
	struct netdevsim *ns = netdev_priv(dev);

	ch->max_combined = ns->nsim_bus_dev->num_queues;
	ch->combined_count = dev->real_num_rx_queues;
}

int nsim_dp_set_channels(struct net_device *dev, struct ethtool_channels *ch)
{
	struct netdevsim *ns = netdev_priv(dev);
	unsigned int old = dev->real_num_rx_queues;
	unsigned int n = ch->combined_count;
	bool up = netif_running(dev);
	int err;

	if (!nsim_has_dp(dev)) {
		err = netif_set_real_num_queues(dev, n, n);
		if (!err)
			ns->ethtool.channels = n;
		return err;
	}
	/* The core checks the RSS table; the n-tuple rules are ours. */
	if (n < nsim_steer_max_queue(ns)) {
		netdev_err(dev, "an n-tuple rule steers to queue %u: delete it first\n",
			   nsim_steer_max_queue(ns) - 1);
		return -EINVAL;
	}

	if (n > old && up) {
		/* Build the new queues before steering may pick them. */
		err = nsim_rq_open_range(ns, old, n);
		if (err)
			return err;
	}
	err = netif_set_real_num_queues(dev, n, n);
	if (err) {
		if (n > old && up)
			nsim_rq_close_range(ns, old, n);
		return err;
	}
	if (n < old && up) {
		/* Let transmitters that still saw the old count finish. */
		synchronize_net();
		nsim_rq_close_range(ns, n, old);
	}
	nsim_steer_channels_changed(ns);
	ns->ethtool.channels = n;
	return 0;
}
