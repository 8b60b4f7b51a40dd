/* SPDX-License-Identifier: GPL-2.0 */
/*
 * netdevsim datapath: a linked pair of ports behaves like two multi-queue
 * NICs joined by a cable.
 *
 *   peer.c         link/unlink of two ports (bus sysfs files)
 *   wire.c         transmit: checksum, steer, hand to the peer; the TSO
 *                  engine that cuts GSO skbs into wire packets
 *   steer.c        receive queue selection: n-tuple rules, then RSS
 *   rxq.c          receive queues: NAPI, page pools, simulated DMA, GRO,
 *                  the queue restart operations
 *   rxq_debugfs.c  per-queue fault knobs
 *   dp_ethtool.c   channels, rings, header split, statistics
 */
#ifndef _NETDEVSIM_DATAPATH_H
#define _NETDEVSIM_DATAPATH_H

#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/u64_stats_sync.h>
#include <net/netdev_rx_queue.h>
#include <net/netmem.h>

struct netdevsim;
struct page_pool;
struct netdev_queue_mgmt_ops;

/* TCP small queues lets one socket keep 1 MB below it (about 724 full
 * segments); the peer's ACKs for the other direction share the queue and
 * can add as many again: a bidirectional flow cannot overflow the FIFO.
 */
#define NSIM_RING_DEFAULT	2048
#define NSIM_RING_MAX		4096
#define NSIM_HDR_BUF_SIZE	256	/* header buffer, header split on */
/* The largest hds-thresh: a packet kept whole (headers and up to this
 * much payload) still fits one header-pool page.
 */
#define NSIM_HDS_THRESH_MAX	1024
#define NSIM_RSS_KEY_SIZE	40
#define NSIM_RSS_INDIR_SIZE	128
#define NSIM_NTUPLE_MAX		128	/* rule locations 0..127 */
#define NSIM_HOLD_MAX		64	/* buffers one queue may hold */

/* Per-queue counters, in `ethtool -S` order. */
enum {
	NSIM_RQ_PACKETS,
	NSIM_RQ_BYTES,
	NSIM_RQ_HDR_BUFS,
	NSIM_RQ_PAYLOAD_BUFS,
	NSIM_RQ_DROPS,
	NSIM_RQ_ALLOC_FAIL,
	NSIM_RQ_DEVMEM_DROPS,
	NSIM_RQ_CSUM_UNNECESSARY,
	NSIM_RQ_CSUM_COMPLETE,
	NSIM_RQ_CSUM_NONE,
	NSIM_RQ_HW_GRO_PACKETS,
	NSIM_RQ_HW_GRO_WIRE_PACKETS,
	NSIM_RQ_NSTATS
};

/* What a queue tells the stack about each packet's checksum (its
 * rxq/Q/csum knob), with rx-checksumming on.
 */
enum nsim_rx_csum {
	NSIM_RX_CSUM_UNNECESSARY,	/* TCP/UDP verified by the "NIC" */
	NSIM_RX_CSUM_COMPLETE,		/* skb->csum: sum of all after L2 */
	NSIM_RX_CSUM_NONE,		/* nothing: the stack verifies */
};

/* Counters of one rx queue, written only by its NAPI poll. */
struct nsim_rq_stats {
	u64 packets;
	u64 bytes;
	u64 hdr_bufs;
	u64 payload_bufs;
	u64 drops;
	u64 alloc_fail;
	u64 devmem_drops;	/* of drops: payload went to device memory */
	u64 csum[CHECKSUM_COMPLETE + 1];	/* delivered, by ip_summed */
	u64 hw_gro_packets;		/* HW-GRO aggregates */
	u64 hw_gro_wire_packets;	/* wire packets in them */
	struct u64_stats_sync syncp;
};

/* What a queue restart replaces: the buffer pools of one rx queue. */
struct nsim_rq_mem {
	struct page_pool *pp;		/* payload buffers */
	struct page_pool *hdr_pp;	/* header buffers, always host memory */
	/* the payload buffer being filled (pack), with the queue's
	 * reference on it, and how much of it is used
	 */
	netmem_ref agg;
	unsigned int agg_off;
};

struct nsim_rq {
	struct netdevsim *ns;
	unsigned int idx;
	struct napi_struct napi;
	/* Wire packets waiting for the poll; running is read and written
	 * under backlog.lock.
	 */
	struct sk_buff_head backlog;
	unsigned int backlog_pkts;	/* wire packets in the backlog */
	bool running;
	struct nsim_rq_mem mem;
	struct nsim_rq_stats stats;
	atomic64_t ring_drops;		/* FIFO full or queue stopped */

	/* fault knobs (rxq_debugfs.c) */
	bool fail_pool_create;		/* next page-pool creation fails */
	bool devmem_optout;		/* payload pools refuse device memory */
	bool order_ignore;		/* payload pools of pages, any provider */
	bool pack;			/* fill large buffers with several payloads */
	u8 csum;			/* enum nsim_rx_csum, read per packet */
	u32 hds_payload;		/* payload bytes in the header buffer */
	atomic_t fail_alloc;		/* fail this many buffer allocations */
	atomic_t drop_next;		/* drop this many packets */
	struct page *held[NSIM_HOLD_MAX];	/* buffers the "NIC" keeps */
	unsigned int nheld;
	unsigned int nunpooled;		/* held buffers that left their pool */
	struct dentry *ddir;
};

/* Where a received packet's headers end, found by the "NIC" parser. */
struct nsim_pkt_info {
	u16 hdr_len;		/* 0: not TCP/UDP over IPv4/IPv6 */
	u16 l4_off;		/* TCP/UDP header, when hdr_len != 0 */
	u8 l3;			/* 4, 6, or 0 when not IP */
	u8 l4proto;		/* IPPROTO_TCP/UDP when hdr_len != 0 */
	__be32 saddr[4];
	__be32 daddr[4];
	__be16 sport;
	__be16 dport;
};

/* What travels with a transmitted skb through the peer's FIFO. */
struct nsim_wire_cb {
	u32 hash;
	u16 hdr_len;		/* headers of each wire packet (parser) */
	u8 l4;			/* hash covers ports: PKT_HASH_TYPE_L4 */
	u8 l3;			/* TSO: 4 or 6 */
	u16 l4_off;		/* TSO: TCP header offset */
	u16 mss;		/* TSO: payload per segment; 0: one packet */
	u16 seg_next;		/* TSO: next segment to put on the wire */
	u16 seg_end;		/* TSO: segments that fit into the FIFO */
	bool agg_stop;		/* TSO: no more HW-GRO aggregates */
};

#define NSIM_WIRE_CB(skb) ((struct nsim_wire_cb *)(skb)->cb)

/* Headers of a TSO segment longer than this go through software GSO. */
#define NSIM_TSO_HDR_MAX	192

/* One wire packet as the receiving NIC's DMA engine reads it: @hdr_len
 * bytes from @hdr, then the rest of the @len bytes from @skb at @off.
 * A packet sent whole has hdr_len 0 and off 0. Payload in device memory
 * is read through bus addresses translated for @dma_dev: both ports of a
 * link are direct-DMA devices of one bus, where a bus address means the
 * same to each.
 */
struct nsim_wpkt {
	struct sk_buff *skb;
	struct device *dma_dev;		/* reads device memory (net_iovs) */
	unsigned int len;
	unsigned int off;
	unsigned int hdr_len;
	/* TSO segment: the TCP checksum is summed as the payload is read
	 * (nsim_wpkt_copy) and filled in after (nsim_wpkt_csum)
	 */
	bool csum_pending;
	__wsum csum;			/* of the payload read so far */
	u8 hdr[NSIM_TSO_HDR_MAX];
};

struct nsim_ntuple_rule {
	struct list_head list;		/* sorted by location */
	struct rcu_head rcu;
	struct ethtool_rx_flow_spec fs;
};

struct nsim_dp {
	struct netdevsim __rcu *peer;
	struct nsim_rq *rqs;		/* one per allocated rx queue */
	unsigned int num_rqs;
	u32 ring_size;
	bool hds;			/* tcp-data-split */
	u32 hds_thresh;			/* hds-thresh, read per packet */
	/* the device's queue_mgmt_ops: nsim_queue_mgmt_ops, with the
	 * rx_page_size knob's supported_params
	 */
	struct netdev_queue_mgmt_ops qops;

	u8 rss_key[NSIM_RSS_KEY_SIZE];
	u32 rss_indir[NSIM_RSS_INDIR_SIZE];
	struct list_head rules;		/* RCU; written under rtnl */
	unsigned int nrules;

	atomic64_t tx_packets;
	atomic64_t tx_bytes;
	atomic64_t tx_drop_no_peer;
	atomic64_t tx_drop_peer_down;
	atomic64_t tx_errors;		/* could not segment or checksum */
	atomic64_t tx_tso_skbs;		/* GSO skbs the TSO engine cut up */
	atomic64_t tx_sw_gso_skbs;	/* GSO skbs segmented in software */
	atomic64_t tx_devmem_packets;	/* wire packets with device memory */
	atomic64_t tx_devmem_bytes;	/* payload read from device memory */
	atomic64_t rx_length_errors;	/* runt, or longer than the MTU */
	atomic64_t rx_filtered;		/* n-tuple rule with action drop */
	struct dentry *ddir;
};

/* peer.c */
extern struct bus_attribute bus_attr_link_device;
extern struct bus_attribute bus_attr_unlink_device;
extern struct bus_attribute bus_attr_link;
extern struct bus_attribute bus_attr_unlink;
bool nsim_dp_is_nsim(const struct net_device *dev);
void nsim_peer_unlink(struct netdevsim *ns);
int nsim_peer_get_iflink(const struct net_device *dev);

/* wire.c */
netdev_tx_t nsim_wire_xmit(struct sk_buff *skb, struct net_device *dev);
int nsim_pkt_parse(const struct sk_buff *skb, struct nsim_pkt_info *pi);
unsigned int nsim_wire_pending(const struct sk_buff *skb);
bool nsim_wire_next(struct sk_buff *skb, struct nsim_wpkt *wp);
unsigned int nsim_wire_next_agg(struct sk_buff *skb, struct nsim_wpkt *wp,
				unsigned int max);
void nsim_wire_agg_undo(struct sk_buff *skb, unsigned int n);
void nsim_wpkt_copy(struct nsim_wpkt *wp, unsigned int pos, void *to,
		    unsigned int len);
__sum16 nsim_wpkt_csum(struct nsim_wpkt *wp);

/* steer.c */
void nsim_steer_init(struct netdevsim *ns);
void nsim_steer_uninit(struct netdevsim *ns);
int nsim_steer(struct netdevsim *ns, const struct nsim_pkt_info *pi,
	       u32 *hash);
u32 nsim_steer_max_queue(struct netdevsim *ns);
void nsim_steer_channels_changed(struct netdevsim *ns);
void nsim_steer_flush_rules(struct netdevsim *ns);
int nsim_get_rxnfc(struct net_device *dev, struct ethtool_rxnfc *cmd,
		   u32 *rule_locs);
int nsim_set_rxnfc(struct net_device *dev, struct ethtool_rxnfc *cmd);
u32 nsim_get_rxfh_key_size(struct net_device *dev);
u32 nsim_get_rxfh_indir_size(struct net_device *dev);
int nsim_get_rxfh(struct net_device *dev, u32 *indir, u8 *key, u8 *hfunc);
int nsim_set_rxfh(struct net_device *dev, const u32 *indir, const u8 *key,
		  const u8 hfunc);

/* rxq.c */
int nsim_dp_init(struct netdevsim *ns);
void nsim_dp_uninit(struct netdevsim *ns);
int nsim_dp_open(struct net_device *dev);
int nsim_dp_stop(struct net_device *dev);
int nsim_rq_enqueue(struct netdevsim *ns, unsigned int q, struct sk_buff *skb,
		    unsigned int npkts);
int nsim_rq_restart_all(struct netdevsim *ns);
int nsim_rq_open_range(struct netdevsim *ns, unsigned int from,
		       unsigned int to);
void nsim_rq_close_range(struct netdevsim *ns, unsigned int from,
			 unsigned int to);
void nsim_rq_release_held(struct nsim_rq *rq);
void nsim_rq_read_stats(struct nsim_rq *rq, u64 *out);
int nsim_rq_hold(struct nsim_rq *rq, unsigned int n);
unsigned int nsim_rq_unpool_held(struct nsim_rq *rq, unsigned int n);
void nsim_dp_get_stats64(struct net_device *dev,
			 struct rtnl_link_stats64 *stats);

/* rxq_debugfs.c */
void nsim_rq_debugfs_init(struct netdevsim *ns, struct dentry *port_ddir);
void nsim_rq_debugfs_exit(struct netdevsim *ns);

/* dp_ethtool.c */
void nsim_dp_get_ringparam(struct net_device *dev,
			   struct ethtool_ringparam *ring,
			   struct kernel_ethtool_ringparam *kring,
			   struct netlink_ext_ack *extack);
int nsim_dp_set_ringparam(struct net_device *dev,
			  struct ethtool_ringparam *ring,
			  struct kernel_ethtool_ringparam *kring,
			  struct netlink_ext_ack *extack);
void nsim_dp_get_channels(struct net_device *dev, struct ethtool_channels *ch);
int nsim_dp_set_channels(struct net_device *dev, struct ethtool_channels *ch);
int nsim_dp_get_sset_count(struct net_device *dev, int sset);
void nsim_dp_get_strings(struct net_device *dev, u32 sset, u8 *data);
void nsim_dp_get_ethtool_stats(struct net_device *dev,
			       struct ethtool_stats *stats, u64 *data);

#endif /* _NETDEVSIM_DATAPATH_H */
