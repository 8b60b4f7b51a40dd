// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * NIC set-up for a devmem TCP receiver: header split, an RSS carve-out
 * and n-tuple rules, each change recorded so that it can be undone.
 *
 * Settings that ethtool netlink carries (tcp-data-split, the ntuple
 * feature) go through the "ethtool" generic netlink family, so that the
 * kernel's extack text becomes the reason. RSS tables and n-tuple rules
 * have no netlink request in 6.1: they go through the ethtool ioctl,
 * issued on the same netlink socket (any socket reaches dev_ioctl), in
 * the namespace the socket was made in. The socket is opened on first
 * use: an object that only loads, saves or restores nothing makes no
 * system call beyond if_indextoname().
 *
 * Every change reserves its record before it touches the device, so a
 * change made is a change recorded.
 *
 * A state with changes recorded keeps them in the device's state file
 * too (DIR/netns-<netns inode>-ifindex-<ifindex>), rewritten after each
 * change or undo and locked (flock) for as long as the state is open, so
 * that devmem_nic_new_recover() can take it over once its owner is gone.
 */
#include "netlink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/sockios.h>

#define NIC_STATE_MAGIC		"libdevmem-nic"
#define NIC_STATE_VERSION	1
/* Bounds of what a state file may hold: far above any real device. */
#define NIC_STATE_MAX_BYTES	(1U << 20)
#define NIC_TABLE_MAX		65536U	/* RSS entries, n-tuple rules */
#define NIC_NTUPLE_FEATURE	"rx-ntuple-filter"
/* The size of the buffer behind devmem_last_error(). */
#define NIC_REASON_LEN		256
/* Where the state files of devices live, and its override. */
#define NIC_STATE_DIR		"/run/devmem"
#define NIC_STATE_DIR_ENV	"DEVMEM_STATE_DIR"
/* Opening a state file that its owner renames meanwhile: tries. */
#define NIC_RECOVER_TRIES	16

enum nic_kind {
	NIC_HDS = 1,		/* header split was hds */
	NIC_NTUPLE,		/* the ntuple feature was off */
	NIC_RSS,		/* the indirection table was this */
	NIC_RULE,		/* a rule was inserted */
	NIC_HDS_THRESH,		/* hds-thresh was thresh */
};

struct nic_change {
	enum nic_kind kind;
	union {
		uint8_t hds;			/* ETHTOOL_TCP_DATA_SPLIT_* */
		uint32_t thresh;		/* hds-thresh */
		struct {
			uint32_t size;		/* 0: the default table */
			uint32_t *table;
		} rss;
		struct {
			uint32_t loc;
			uint32_t queue;
			struct devmem_flow flow;
		} rule;
	};
};

struct devmem_nic {
	int ifindex;
	char name[IF_NAMESIZE];
	struct devmem_nl nl;		/* nl.sk is NULL until first used */
	struct nic_change *ch;		/* oldest first */
	size_t nr, cap;
	int state_fd;			/* locked state file; -1: none */
	char *state_path;		/* its name while state_fd is open */
	const struct devmem_nic_hooks *hooks;	/* tests: a fake device */
	void *hook_arg;
};

/* The reason of a failure, kept while undoing changes overwrites it. */
struct nic_reason {
	int err;
	char text[NIC_REASON_LEN];
};

static void nic_reason_keep(struct nic_reason *r, int err)
{
	if (r->err || !err)
		return;
	r->err = err;
	snprintf(r->text, sizeof(r->text), "%s", devmem_last_error());
}

static int nic_reason_return(const struct nic_reason *r)
{
	if (!r->err)
		return 0;
	return devmem_fail(r->err, "%s", r->text);
}

/* ---- the record ---- */

static int nic_reserve(struct devmem_nic *n, size_t more)
{
	struct nic_change *ch;
	size_t cap;

	if (n->nr + more <= n->cap)
		return 0;
	cap = n->cap ? n->cap * 2 : 8;
	while (cap < n->nr + more)
		cap *= 2;
	ch = realloc(n->ch, cap * sizeof(*ch));
	if (!ch)
		return devmem_fail(-ENOMEM, "out of memory");
	n->ch = ch;
	n->cap = cap;
	return 0;
}

/* Room must have been reserved. */
static struct nic_change *nic_record(struct devmem_nic *n, enum nic_kind kind)
{
	struct nic_change *c = &n->ch[n->nr++];

	memset(c, 0, sizeof(*c));
	c->kind = kind;
	return c;
}

static struct nic_change *nic_find(struct devmem_nic *n, enum nic_kind kind)
{
	size_t i;

	for (i = 0; i < n->nr; i++)
		if (n->ch[i].kind == kind)
			return &n->ch[i];
	return NULL;
}

static struct nic_change *nic_find_rule(struct devmem_nic *n, uint32_t loc)
{
	size_t i;

	for (i = 0; i < n->nr; i++)
		if (n->ch[i].kind == NIC_RULE && n->ch[i].rule.loc == loc)
			return &n->ch[i];
	return NULL;
}

static void nic_change_free(struct nic_change *c)
{
	if (c->kind == NIC_RSS)
		free(c->rss.table);
}

static void nic_forget(struct devmem_nic *n, struct nic_change *c)
{
	size_t i = c - n->ch;

	nic_change_free(c);
	memmove(c, c + 1, (n->nr - i - 1) * sizeof(*c));
	n->nr--;
}

/* ---- the device and the socket ---- */

static int nic_device_name(int ifindex, char *name)
{
	if (!if_indextoname(ifindex, name)) {
		if (errno == ENXIO || errno == ENODEV)
			return devmem_fail(-ENODEV,
					   "no network device with ifindex %d",
					   ifindex);
		return devmem_fail_errno(-errno, "network device %d", ifindex);
	}
	return 0;
}

static int nic_sock(struct devmem_nic *n)
{
	if (n->nl.sk)
		return 0;
	return devmem_nl_open_family(&n->nl, ETHTOOL_GENL_NAME,
				     ETHTOOL_GENL_VERSION);
}

/* What a test hook returned, with a reason when it failed. */
static int nic_hooked(struct devmem_nic *n, int err, const char *what)
{
	if (err)
		return devmem_fail_errno(err, "%s: %s", n->name, what);
	return 0;
}

/* One ethtool ioctl on the device, by its current name. */
static int nic_ioctl(struct devmem_nic *n, void *data, const char *what)
{
	struct ifreq ifr;
	int err;

	if (n->hooks)
		return nic_hooked(n, n->hooks->ioctl(n->hook_arg, data), what);
	err = nic_sock(n);
	if (err)
		return err;
	err = nic_device_name(n->ifindex, n->name);
	if (err)
		return err;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, n->name, sizeof(ifr.ifr_name));
	ifr.ifr_data = data;
	if (ioctl(nl_socket_get_fd(n->nl.sk), SIOCETHTOOL, &ifr) < 0)
		return devmem_fail_errno(-errno, "%s: %s", n->name, what);
	return 0;
}

/* Every ethtool request has its header nest at the same number. */
#define NIC_A_HEADER		ETHTOOL_A_RINGS_HEADER
_Static_assert((int)ETHTOOL_A_FEATURES_HEADER == (int)NIC_A_HEADER,
	       "ethtool request headers");

/*
 * An ethtool netlink request @cmd for the device, with room for @attrs
 * more bytes of attributes.
 */
static int nic_request(struct devmem_nic *n, uint8_t cmd, uint32_t flags,
		       size_t attrs, struct nl_msg **reqp)
{
	struct nlattr *hdr;
	struct nl_msg *req;
	int err;

	err = nic_sock(n);
	if (err)
		return err;
	req = devmem_nl_request(&n->nl, cmd, 0,
				nla_total_size(2 * nla_total_size(4)) + attrs);
	if (!req)
		return devmem_fail(-ENOMEM, "out of memory");
	hdr = nla_nest_start(req, NIC_A_HEADER | NLA_F_NESTED);
	if (!hdr || nla_put_u32(req, ETHTOOL_A_HEADER_DEV_INDEX, n->ifindex) ||
	    (flags && nla_put_u32(req, ETHTOOL_A_HEADER_FLAGS, flags))) {
		nlmsg_free(req);
		return devmem_fail(-ENOMEM, "ethtool request does not fit");
	}
	nla_nest_end(req, hdr);
	*reqp = req;
	return 0;
}

/* A GET of the device: a request with the header alone, @parse (of
 * devmem_nl_transact) reads the reply into @arg.
 */
static int nic_get(struct devmem_nic *n, uint8_t cmd,
		   devmem_nl_reply_fn parse, void *arg)
{
	struct nl_msg *req;
	int err;

	err = nic_request(n, cmd, 0, 0, &req);
	if (err)
		return err;
	return devmem_nl_transact(&n->nl, req, parse, arg);
}

/* ---- header split (ethtool netlink: rings) ---- */

static const char *nic_hds_name(uint8_t v)
{
	switch (v) {
	case ETHTOOL_TCP_DATA_SPLIT_DISABLED:	return "off";
	case ETHTOOL_TCP_DATA_SPLIT_ENABLED:	return "on";
	}
	return "unknown";
}

/* What a rings reply says of header split, and the rx ring's size. */
struct nic_rings {
	uint8_t hds;			/* ETHTOOL_TCP_DATA_SPLIT_* */
	int has_thresh;			/* the device reports hds-thresh */
	uint32_t thresh;
	uint32_t rx;			/* entries of each rx ring; 0: none said */
};

static int nic_rings_reply(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[ETHTOOL_A_RINGS_MAX + 1];
	struct nic_rings *r = arg;
	int err;

	err = devmem_nl_parse(msg, tb, ETHTOOL_A_RINGS_MAX);
	if (err)
		return err;
	/* The kernel leaves attributes out when the driver says nothing. */
	r->hds = ETHTOOL_TCP_DATA_SPLIT_UNKNOWN;
	r->has_thresh = !!tb[ETHTOOL_A_RINGS_HDS_THRESH];
	r->thresh = 0;
	r->rx = 0;
	if (tb[ETHTOOL_A_RINGS_RX]) {
		err = devmem_nl_u32(tb[ETHTOOL_A_RINGS_RX], "rx ring size",
				    &r->rx);
		if (err)
			return err;
	}
	if (r->has_thresh) {
		err = devmem_nl_u32(tb[ETHTOOL_A_RINGS_HDS_THRESH],
				    "hds-thresh", &r->thresh);
		if (err)
			return err;
	}
	if (!tb[ETHTOOL_A_RINGS_TCP_DATA_SPLIT])
		return 0;
	err = devmem_nl_u8(tb[ETHTOOL_A_RINGS_TCP_DATA_SPLIT],
			   "tcp-data-split", &r->hds);
	if (!err && r->hds > ETHTOOL_TCP_DATA_SPLIT_ENABLED)
		return devmem_fail(-EPROTO, "the kernel's tcp-data-split is %u",
				   r->hds);
	return err;
}

static int nic_hds_get(struct devmem_nic *n, uint8_t *v)
{
	struct nic_rings r;
	int err;

	if (n->hooks)
		return nic_hooked(n, n->hooks->hds_get(n->hook_arg, v),
				  "tcp-data-split");
	err = nic_get(n, ETHTOOL_MSG_RINGS_GET, nic_rings_reply, &r);
	if (!err)
		*v = r.hds;
	return err;
}

int devmem_nic_rx_ring(int ifindex, uint32_t *entries)
{
	struct devmem_nic *n;
	struct nic_rings r;
	int err;

	err = devmem_nic_new(&n, ifindex);
	if (err)
		return err;
	err = nic_get(n, ETHTOOL_MSG_RINGS_GET, nic_rings_reply, &r);
	devmem_nic_free(n);
	if (!err)
		*entries = r.rx;
	return err;
}

/* One u32 or u8 rings attribute @type set to @v. */
static int nic_rings_set(struct devmem_nic *n, int type, uint32_t v)
{
	int u8 = type == ETHTOOL_A_RINGS_TCP_DATA_SPLIT;
	struct nl_msg *req;
	int err;

	err = nic_request(n, ETHTOOL_MSG_RINGS_SET, 0,
			  nla_total_size(u8 ? 1 : 4), &req);
	if (err)
		return err;
	if (u8 ? nla_put_u8(req, type, v) : nla_put_u32(req, type, v)) {
		nlmsg_free(req);
		return devmem_fail(-ENOMEM, "ethtool request does not fit");
	}
	return devmem_nl_transact(&n->nl, req, NULL, NULL);
}

static int nic_hds_set(struct devmem_nic *n, uint8_t v)
{
	if (n->hooks)
		return nic_hooked(n, n->hooks->hds_set(n->hook_arg, v),
				  "setting tcp-data-split");
	return nic_rings_set(n, ETHTOOL_A_RINGS_TCP_DATA_SPLIT, v);
}

/* hds-thresh in *@v, *@has 0 when the device has none (a kernel before
 * Linux 6.14's rings attributes, or a driver without it).
 */
static int nic_thresh_get(struct devmem_nic *n, int *has, uint32_t *v)
{
	struct nic_rings r;
	int err;

	if (n->hooks) {
		*has = !!n->hooks->thresh_get;
		*v = 0;
		if (!*has)
			return 0;
		return nic_hooked(n, n->hooks->thresh_get(n->hook_arg, v),
				  "hds-thresh");
	}
	err = nic_get(n, ETHTOOL_MSG_RINGS_GET, nic_rings_reply, &r);
	if (err)
		return err;
	*has = r.has_thresh;
	*v = r.thresh;
	return 0;
}

static int nic_thresh_set(struct devmem_nic *n, uint32_t v)
{
	if (n->hooks)
		return nic_hooked(n, n->hooks->thresh_set(n->hook_arg, v),
				  "setting hds-thresh");
	return nic_rings_set(n, ETHTOOL_A_RINGS_HDS_THRESH, v);
}

/* ---- the ntuple feature (ethtool netlink: features) ---- */

/*
 * Whether bitset @set names feature @name as on: a list (NOMASK) names
 * only the bits that are on; with a mask every bit of the mask is named
 * and VALUE says it is on.
 */
static int nic_bitset_has(struct nlattr *set, const char *name, int *on)
{
	struct nlattr *tb[ETHTOOL_A_BITSET_MAX + 1];
	struct nlattr *bit[ETHTOOL_A_BITSET_BIT_MAX + 1];
	struct nlattr *pos;
	int rem;

	*on = 0;
	if (!set || nla_parse_nested(tb, ETHTOOL_A_BITSET_MAX, set, NULL) ||
	    !tb[ETHTOOL_A_BITSET_BITS])
		return devmem_fail(-EPROTO,
				   "the kernel's feature reply is malformed");
	nla_for_each_nested(pos, tb[ETHTOOL_A_BITSET_BITS], rem) {
		if (nla_type(pos) != ETHTOOL_A_BITSET_BITS_BIT)
			continue;
		if (nla_parse_nested(bit, ETHTOOL_A_BITSET_BIT_MAX, pos, NULL))
			return devmem_fail(-EPROTO,
					   "the kernel's feature reply is malformed");
		if (!bit[ETHTOOL_A_BITSET_BIT_NAME] ||
		    nla_strcmp(bit[ETHTOOL_A_BITSET_BIT_NAME], name))
			continue;
		*on = tb[ETHTOOL_A_BITSET_NOMASK] ||
		      bit[ETHTOOL_A_BITSET_BIT_VALUE];
		break;
	}
	return 0;
}

struct nic_features {
	int active;		/* the ntuple feature is on */
	int changeable;		/* and may be turned on or off */
};

static int nic_features_reply(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[ETHTOOL_A_FEATURES_MAX + 1];
	struct nic_features *f = arg;
	int err;

	err = devmem_nl_parse(msg, tb, ETHTOOL_A_FEATURES_MAX);
	if (!err)
		err = nic_bitset_has(tb[ETHTOOL_A_FEATURES_ACTIVE],
				     NIC_NTUPLE_FEATURE, &f->active);
	if (!err)
		err = nic_bitset_has(tb[ETHTOOL_A_FEATURES_HW],
				     NIC_NTUPLE_FEATURE, &f->changeable);
	return err;
}

static int nic_ntuple_get(struct devmem_nic *n, struct nic_features *f)
{
	if (n->hooks)
		return nic_hooked(n, n->hooks->ntuple_get(n->hook_arg, &f->active,
							  &f->changeable),
				  NIC_NTUPLE_FEATURE);
	/* Without ETHTOOL_FLAG_COMPACT_BITSETS: bits come with names. */
	return nic_get(n, ETHTOOL_MSG_FEATURES_GET, nic_features_reply, f);
}

/* Wanted on or off; the kernel decides what becomes active. */
static int nic_ntuple_want(struct devmem_nic *n, int on)
{
	struct nlattr *set, *bits, *bit;
	struct nl_msg *req;
	int err;

	if (n->hooks)
		return nic_hooked(n, n->hooks->ntuple_set(n->hook_arg, on),
				  "setting " NIC_NTUPLE_FEATURE);
	err = nic_request(n, ETHTOOL_MSG_FEATURES_SET, ETHTOOL_FLAG_OMIT_REPLY,
			  4 * nla_total_size(0) +
			  nla_total_size(sizeof(NIC_NTUPLE_FEATURE)), &req);
	if (err)
		return err;
	/* Without NOMASK the bits named are the ones to change. */
	set = nla_nest_start(req, ETHTOOL_A_FEATURES_WANTED | NLA_F_NESTED);
	bits = set ? nla_nest_start(req, ETHTOOL_A_BITSET_BITS | NLA_F_NESTED) :
		     NULL;
	bit = bits ? nla_nest_start(req, ETHTOOL_A_BITSET_BITS_BIT |
					 NLA_F_NESTED) : NULL;
	if (!bit ||
	    nla_put_string(req, ETHTOOL_A_BITSET_BIT_NAME, NIC_NTUPLE_FEATURE) ||
	    (on && nla_put_flag(req, ETHTOOL_A_BITSET_BIT_VALUE))) {
		nlmsg_free(req);
		return devmem_fail(-ENOMEM, "ethtool request does not fit");
	}
	nla_nest_end(req, bit);
	nla_nest_end(req, bits);
	nla_nest_end(req, set);
	return devmem_nl_transact(&n->nl, req, NULL, NULL);
}

/* Turn the feature on, recording that it was off. Room reserved. */
static int nic_ntuple_on(struct devmem_nic *n)
{
	struct nic_features f;
	int err;

	err = nic_ntuple_get(n, &f);
	if (err || f.active)
		return err;
	if (!f.changeable)
		return devmem_fail(-EOPNOTSUPP,
				   "%s: n-tuple filters (%s) cannot be turned on",
				   n->name, NIC_NTUPLE_FEATURE);
	err = nic_ntuple_want(n, 1);
	if (!err)
		err = nic_ntuple_get(n, &f);
	if (!err && !f.active) {
		nic_ntuple_want(n, 0);
		err = devmem_fail(-EOPNOTSUPP,
				  "%s: n-tuple filters (%s) did not turn on",
				  n->name, NIC_NTUPLE_FEATURE);
	}
	if (!err && !nic_find(n, NIC_NTUPLE))
		nic_record(n, NIC_NTUPLE);
	return err;
}

/* ---- RSS (ethtool ioctl) ---- */

static int nic_rx_queues(struct devmem_nic *n, uint32_t *nq)
{
	struct ethtool_rxnfc nfc = { .cmd = ETHTOOL_GRXRINGS };
	int err;

	err = nic_ioctl(n, &nfc, "rx queue count (ETHTOOL_GRXRINGS)");
	if (err)
		return err;
	if (!nfc.data || nfc.data > UINT32_MAX)
		return devmem_fail(-EPROTO, "%s: the kernel counts %llu rx queues",
				   n->name, (unsigned long long)nfc.data);
	*nq = nfc.data;
	return 0;
}

/* The indirection table, in a buffer of the caller's. */
static int nic_rss_get(struct devmem_nic *n, struct ethtool_rxfh_indir **rp)
{
	struct ethtool_rxfh_indir size = { .cmd = ETHTOOL_GRXFHINDIR }, *r;
	int err;

	err = nic_ioctl(n, &size, "RSS table size (ETHTOOL_GRXFHINDIR)");
	if (err)
		return err;
	if (!size.size || size.size > NIC_TABLE_MAX)
		return devmem_fail(-EOPNOTSUPP,
				   "%s: the RSS table has %u entries",
				   n->name, size.size);
	r = calloc(1, sizeof(*r) + size.size * sizeof(r->ring_index[0]));
	if (!r)
		return devmem_fail(-ENOMEM, "out of memory");
	r->cmd = ETHTOOL_GRXFHINDIR;
	r->size = size.size;
	err = nic_ioctl(n, r, "RSS table (ETHTOOL_GRXFHINDIR)");
	if (err) {
		free(r);
		return err;
	}
	*rp = r;
	return 0;
}

/* Write @table (@size entries), or the default table when @size is 0. */
static int nic_rss_set(struct devmem_nic *n, const uint32_t *table,
		       uint32_t size)
{
	struct ethtool_rxfh_indir *r;
	int err;

	r = calloc(1, sizeof(*r) + size * sizeof(r->ring_index[0]));
	if (!r)
		return devmem_fail(-ENOMEM, "out of memory");
	r->cmd = ETHTOOL_SRXFHINDIR;
	r->size = size;
	if (size)
		memcpy(r->ring_index, table, size * sizeof(table[0]));
	err = nic_ioctl(n, r, size ? "setting the RSS table (ETHTOOL_SRXFHINDIR)" :
			"resetting the RSS table (ETHTOOL_SRXFHINDIR)");
	free(r);
	return err;
}

/* Record @old as what to restore: "default" when it is the kernel's
 * default spread over @nq queues. Room reserved.
 */
static int nic_rss_record(struct devmem_nic *n,
			  const struct ethtool_rxfh_indir *old, uint32_t nq)
{
	struct nic_change *c;
	uint32_t *table = NULL;
	uint32_t i;

	for (i = 0; i < old->size; i++)
		if (old->ring_index[i] != i % nq)
			break;
	if (i < old->size) {
		table = malloc(old->size * sizeof(*table));
		if (!table)
			return devmem_fail(-ENOMEM, "out of memory");
		memcpy(table, old->ring_index, old->size * sizeof(*table));
	}
	c = nic_record(n, NIC_RSS);
	c->rss.table = table;
	c->rss.size = table ? old->size : 0;
	return 0;
}

/* ---- n-tuple rules (ethtool ioctl) ---- */

static void nic_flow_spec(struct ethtool_rx_flow_spec *fs,
			  const struct devmem_flow *f, uint32_t queue)
{
	memset(fs, 0, sizeof(*fs));
	if (f->family == AF_INET) {
		fs->flow_type = TCP_V4_FLOW;
		memcpy(&fs->h_u.tcp_ip4_spec.ip4dst, f->dst, 4);
		fs->m_u.tcp_ip4_spec.ip4dst = 0xffffffff;
		fs->h_u.tcp_ip4_spec.pdst = htons(f->dst_port);
		fs->m_u.tcp_ip4_spec.pdst = 0xffff;
		if (f->has_src) {
			memcpy(&fs->h_u.tcp_ip4_spec.ip4src, f->src, 4);
			fs->m_u.tcp_ip4_spec.ip4src = 0xffffffff;
		}
	} else {
		fs->flow_type = TCP_V6_FLOW;
		memcpy(fs->h_u.tcp_ip6_spec.ip6dst, f->dst, 16);
		memset(fs->m_u.tcp_ip6_spec.ip6dst, 0xff, 16);
		fs->h_u.tcp_ip6_spec.pdst = htons(f->dst_port);
		fs->m_u.tcp_ip6_spec.pdst = 0xffff;
		if (f->has_src) {
			memcpy(fs->h_u.tcp_ip6_spec.ip6src, f->src, 16);
			memset(fs->m_u.tcp_ip6_spec.ip6src, 0xff, 16);
		}
	}
	fs->ring_cookie = queue;
}

/* The fields a rule of ours sets, compared one by one (drivers that
 * rebuild the spec need not keep the padding).
 */
static int nic_same_spec(const struct ethtool_rx_flow_spec *a,
			 const struct ethtool_rx_flow_spec *b)
{
	const struct ethtool_tcpip4_spec *a4 = &a->h_u.tcp_ip4_spec;
	const struct ethtool_tcpip4_spec *b4 = &b->h_u.tcp_ip4_spec;
	const struct ethtool_tcpip4_spec *am4 = &a->m_u.tcp_ip4_spec;
	const struct ethtool_tcpip4_spec *bm4 = &b->m_u.tcp_ip4_spec;
	const struct ethtool_tcpip6_spec *a6 = &a->h_u.tcp_ip6_spec;
	const struct ethtool_tcpip6_spec *b6 = &b->h_u.tcp_ip6_spec;
	const struct ethtool_tcpip6_spec *am6 = &a->m_u.tcp_ip6_spec;
	const struct ethtool_tcpip6_spec *bm6 = &b->m_u.tcp_ip6_spec;

	if ((a->flow_type & ~(FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS)) !=
	    b->flow_type || a->ring_cookie != b->ring_cookie)
		return 0;
	if (b->flow_type == TCP_V4_FLOW)
		return a4->ip4src == b4->ip4src && a4->ip4dst == b4->ip4dst &&
		       a4->psrc == b4->psrc && a4->pdst == b4->pdst &&
		       am4->ip4src == bm4->ip4src &&
		       am4->ip4dst == bm4->ip4dst &&
		       am4->psrc == bm4->psrc && am4->pdst == bm4->pdst;
	return !memcmp(a6->ip6src, b6->ip6src, 16) &&
	       !memcmp(a6->ip6dst, b6->ip6dst, 16) &&
	       a6->psrc == b6->psrc && a6->pdst == b6->pdst &&
	       !memcmp(am6->ip6src, bm6->ip6src, 16) &&
	       !memcmp(am6->ip6dst, bm6->ip6dst, 16) &&
	       am6->psrc == bm6->psrc && am6->pdst == bm6->pdst;
}

static int nic_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Where to insert a rule: RX_CLS_LOC_ANY when the driver picks one
 * itself, else the lowest location no rule uses.
 */
static int nic_rule_loc(struct devmem_nic *n, uint32_t *loc)
{
	struct ethtool_rxnfc cnt = { .cmd = ETHTOOL_GRXCLSRLCNT }, *all;
	uint32_t i, want, size;
	int err;

	err = nic_ioctl(n, &cnt, "n-tuple rule count (ETHTOOL_GRXCLSRLCNT)");
	if (err)
		return err;
	if (cnt.data & RX_CLS_LOC_SPECIAL) {
		*loc = RX_CLS_LOC_ANY;
		return 0;
	}
	if (cnt.rule_cnt > NIC_TABLE_MAX)
		return devmem_fail(-EPROTO, "%s: the kernel counts %u n-tuple rules",
				   n->name, cnt.rule_cnt);
	all = calloc(1, sizeof(*all) + cnt.rule_cnt * sizeof(all->rule_locs[0]));
	if (!all)
		return devmem_fail(-ENOMEM, "out of memory");
	all->cmd = ETHTOOL_GRXCLSRLALL;
	all->rule_cnt = cnt.rule_cnt;
	err = nic_ioctl(n, all, "n-tuple rules (ETHTOOL_GRXCLSRLALL)");
	if (err)
		goto out;
	size = all->data;
	qsort(all->rule_locs, all->rule_cnt, sizeof(all->rule_locs[0]),
	      nic_u32_cmp);
	want = 0;
	for (i = 0; i < all->rule_cnt && all->rule_locs[i] <= want; i++)
		if (all->rule_locs[i] == want)
			want++;
	if (want >= size) {
		err = devmem_fail(-ENOSPC,
				  "%s: every n-tuple rule location (%u) is taken",
				  n->name, size);
		goto out;
	}
	*loc = want;
out:
	free(all);
	return err;
}

static int nic_rule_insert(struct devmem_nic *n, const struct devmem_flow *f,
			   uint32_t queue, uint32_t *loc)
{
	struct ethtool_rxnfc ins = { .cmd = ETHTOOL_SRXCLSRLINS };
	int err;

	nic_flow_spec(&ins.fs, f, queue);
	err = nic_rule_loc(n, &ins.fs.location);
	if (err)
		return err;
	err = nic_ioctl(n, &ins,
			"inserting an n-tuple rule (ETHTOOL_SRXCLSRLINS)");
	if (err)
		return err;
	*loc = ins.fs.location;
	return 0;
}

static int nic_rule_delete(struct devmem_nic *n, uint32_t loc)
{
	struct ethtool_rxnfc del = { .cmd = ETHTOOL_SRXCLSRLDEL };

	del.fs.location = loc;
	return nic_ioctl(n, &del,
			 "deleting an n-tuple rule (ETHTOOL_SRXCLSRLDEL)");
}

/* Delete a rule we inserted, if the one at its location still is. */
static int nic_rule_undo(struct devmem_nic *n, const struct nic_change *c)
{
	struct ethtool_rxnfc get = { .cmd = ETHTOOL_GRXCLSRULE };
	struct ethtool_rx_flow_spec want;
	int err;

	get.fs.location = c->rule.loc;
	err = nic_ioctl(n, &get, "reading an n-tuple rule (ETHTOOL_GRXCLSRULE)");
	if (err == -ENOENT)
		return 0;		/* already gone */
	if (err)
		return err;
	nic_flow_spec(&want, &c->rule.flow, c->rule.queue);
	if (!nic_same_spec(&get.fs, &want))
		return devmem_fail(-ESTALE,
				   "%s: the n-tuple rule at location %u is no longer the one set up: left in place",
				   n->name, c->rule.loc);
	return nic_rule_delete(n, c->rule.loc);
}

/* ---- undo ---- */

static int nic_undo_one(struct devmem_nic *n, const struct nic_change *c)
{
	switch (c->kind) {
	case NIC_HDS:
		return nic_hds_set(n, c->hds);
	case NIC_HDS_THRESH:
		return nic_thresh_set(n, c->thresh);
	case NIC_NTUPLE:
		return nic_ntuple_want(n, 0);
	case NIC_RSS:
		return nic_rss_set(n, c->rss.table, c->rss.size);
	case NIC_RULE:
		return nic_rule_undo(n, c);
	}
	return devmem_fail(-EINVAL, "unknown change %d", c->kind);
}

static int nic_state_sync(struct devmem_nic *n);

/*
 * Undo the changes recorded from @mark on, newest first. A change undone
 * is forgotten (and, with @sync, the state file rewritten); one that
 * fails stays recorded. Returns the first error, with its reason.
 */
static int nic_undo_from(struct devmem_nic *n, size_t mark, int sync)
{
	struct nic_reason r = { 0 };
	size_t i;
	int err;

	for (i = n->nr; i-- > mark; ) {
		err = nic_undo_one(n, &n->ch[i]);
		nic_reason_keep(&r, err);
		if (err)
			continue;
		nic_forget(n, &n->ch[i]);
		if (sync)
			nic_reason_keep(&r, nic_state_sync(n));
	}
	return nic_reason_return(&r);
}

/* Undo after a failure @err: its reason is the one that stays. */
static int nic_unwind(struct devmem_nic *n, size_t mark, int err)
{
	struct nic_reason r = { 0 };

	nic_reason_keep(&r, err);
	nic_undo_from(n, mark, 0);
	return nic_reason_return(&r);
}

/* ---- flows ---- */

static int nic_parse_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;
	const char *p;

	if (!s || !*s)
		return devmem_fail(-EINVAL, "no port");
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return devmem_fail(-EINVAL,
					   "port \"%s\" is not a decimal number",
					   s);
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > 65535)
			break;
	}
	if (!v || v > 65535)
		return devmem_fail(-EINVAL, "port \"%s\" is not in 1-65535", s);
	*port = (uint16_t)v;
	return 0;
}

static int nic_parse_addr(const char *s, const char *what, int *family,
			  uint8_t *addr)
{
	if (!s || !*s)
		return devmem_fail(-EINVAL, "no %s address", what);
	if (inet_pton(AF_INET, s, addr) == 1) {
		*family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*family = AF_INET6;
		return 0;
	}
	return devmem_fail(-EINVAL,
			   "%s address \"%s\" is neither IPv4 nor IPv6", what, s);
}

static const char *nic_family_name(int family)
{
	return family == AF_INET ? "IPv4" : "IPv6";
}

/* The fields of the first version of struct devmem_flow. */
#define DEVMEM_FLOW_SIZE_1_0 \
	(offsetof(struct devmem_flow, dst_port) + sizeof(uint16_t))

static int nic_flow_size(const struct devmem_flow *f)
{
	if (f->size < DEVMEM_FLOW_SIZE_1_0)
		return devmem_fail(-EINVAL, "a flow of size %zu: set .size to sizeof(struct devmem_flow)",
				   f->size);
	return 0;
}

DEVMEM_EXPORT int devmem_flow_parse(struct devmem_flow *f, const char *dst,
				    const char *src, const char *port)
{
	struct devmem_flow flow = { .size = sizeof(flow) };
	int src_family, err;

	devmem_error_clear();
	if (!f)
		return devmem_fail(-EINVAL, "no place for the flow");
	err = nic_flow_size(f);
	if (err)
		return err;
	err = nic_parse_addr(dst, "destination", &flow.family, flow.dst);
	if (err)
		return err;
	if (src) {
		err = nic_parse_addr(src, "source", &src_family, flow.src);
		if (err)
			return err;
		if (src_family != flow.family)
			return devmem_fail(-EINVAL,
					   "source %s is %s, destination %s is %s",
					   src, nic_family_name(src_family),
					   dst, nic_family_name(flow.family));
		flow.has_src = 1;
	}
	err = nic_parse_port(port, &flow.dst_port);
	if (err)
		return err;
	memcpy((char *)f + sizeof(f->size), (char *)&flow + sizeof(flow.size),
	       (f->size < sizeof(flow) ? f->size : sizeof(flow)) -
	       sizeof(flow.size));
	return 0;
}

/* The caller's flow @f, as much of it as its size covers, into @out;
 * then checked.
 */
static int nic_check_flow(struct devmem_flow *out, const struct devmem_flow *f)
{
	int err;

	if (!f)
		return devmem_fail(-EINVAL, "no flow");
	err = nic_flow_size(f);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	memcpy(out, f, f->size < sizeof(*out) ? f->size : sizeof(*out));
	out->size = sizeof(*out);
	f = out;
	if (f->family != AF_INET && f->family != AF_INET6)
		return devmem_fail(-EINVAL, "flow family %d is neither AF_INET nor AF_INET6",
				   f->family);
	if (!f->dst_port)
		return devmem_fail(-EINVAL, "flow destination port 0");
	return 0;
}

/* ---- state files ---- */

static int nic_write_change(FILE *fp, const struct nic_change *c)
{
	char dst[INET6_ADDRSTRLEN], src[INET6_ADDRSTRLEN];
	const struct devmem_flow *f;
	uint32_t i;

	switch (c->kind) {
	case NIC_HDS:
		return fprintf(fp, "header-split %s\n", nic_hds_name(c->hds));
	case NIC_HDS_THRESH:
		return fprintf(fp, "hds-thresh %u\n", c->thresh);
	case NIC_NTUPLE:
		return fprintf(fp, "ntuple off\n");
	case NIC_RSS:
		if (!c->rss.size)
			return fprintf(fp, "rss default\n");
		fprintf(fp, "rss table %u", c->rss.size);
		for (i = 0; i < c->rss.size; i++)
			fprintf(fp, " %u", c->rss.table[i]);
		return fprintf(fp, "\n");
	case NIC_RULE:
		f = &c->rule.flow;
		inet_ntop(f->family, f->dst, dst, sizeof(dst));
		if (f->has_src)
			inet_ntop(f->family, f->src, src, sizeof(src));
		return fprintf(fp, "rule %u %u %s %u %s\n", c->rule.loc,
			       c->rule.queue, dst, f->dst_port,
			       f->has_src ? src : "any");
	}
	return -1;
}

/* The state as the text of a state file, in a buffer to free. */
static int nic_format(const struct devmem_nic *n, char **bufp, size_t *lenp)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *fp;
	int bad;

	fp = open_memstream(&buf, &len);
	if (!fp)
		return devmem_fail(-ENOMEM, "out of memory");
	fprintf(fp, "%s %d\ndevice %d %s\n", NIC_STATE_MAGIC,
		NIC_STATE_VERSION, n->ifindex, n->name);
	for (i = 0; i < n->nr; i++)
		nic_write_change(fp, &n->ch[i]);
	bad = ferror(fp);
	if (fclose(fp) || bad) {
		free(buf);
		return devmem_fail(-ENOMEM, "out of memory");
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

/*
 * The device's own state file. While a state has changes recorded it
 * holds the file open and flock()ed: the kernel drops the lock when the
 * process ends, however it ends, which tells an abandoned state from one
 * in use.
 */
static const char *nic_state_dir(void)
{
	const char *dir = secure_getenv(NIC_STATE_DIR_ENV);

	return dir && *dir ? dir : NIC_STATE_DIR;
}

/*
 * @what (the state directory @dir or a file in it) failed with @err: for
 * a directory this user may not write, the reason says where set-up keeps
 * its state and what to do about it.
 */
static int nic_state_dir_fail(int err, const char *what, const char *dir)
{
	char text[64];

	if (err != -EACCES && err != -EPERM && err != -EROFS)
		return devmem_fail_errno(err, "%s", what);
	return devmem_fail(err,
			   "%s: %s: set-up records what it changes in %s; run it as root, or set "
			   NIC_STATE_DIR_ENV " to a directory this user can write",
			   what, strerror_r(-err, text, sizeof(text)), dir);
}

/*
 * A new file next to @path (@path.XXXXXX) holding the state, written and
 * synced: its name in *@tmpp (to free), its open fd in *@fdp.
 */
static int nic_write_tmp(const struct devmem_nic *n, const char *path,
			 char **tmpp, int *fdp)
{
	size_t len = 0, off = 0;
	char *buf = NULL, *tmp;
	ssize_t w;
	int fd, err;

	err = nic_format(n, &buf, &len);
	if (err)
		return err;
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0) {
		free(buf);
		return devmem_fail(-ENOMEM, "out of memory");
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = devmem_fail_errno(-errno, "a new file next to %s", path);
		goto err_free;
	}
	while (off < len) {
		w = write(fd, buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			err = devmem_fail_errno(-errno, "writing %s", tmp);
			goto err_unlink;
		}
		off += (size_t)w;
	}
	if (fsync(fd)) {
		err = devmem_fail_errno(-errno, "writing %s", tmp);
		goto err_unlink;
	}
	free(buf);
	*tmpp = tmp;
	*fdp = fd;
	return 0;

err_unlink:
	close(fd);
	unlink(tmp);
err_free:
	free(tmp);
	free(buf);
	return err;
}

/* The state file of device @ifindex of the caller's network namespace
 * (two namespaces may each have a device of that index), a name to free.
 */
static int nic_state_path(int ifindex, char **pathp)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return devmem_fail_errno(-errno,
					 "cannot tell the network namespace: /proc/self/ns/net");
	if (asprintf(pathp, "%s/netns-%llu-ifindex-%d", nic_state_dir(),
		     (unsigned long long)st.st_ino, ifindex) < 0)
		return devmem_fail(-ENOMEM, "out of memory");
	return 0;
}

/* Another state's file @path is in the way: -EBUSY, saying whose. */
static int nic_state_busy(const struct devmem_nic *n, const char *path)
{
	int fd, live = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		live = flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK;
		close(fd);
	}
	if (live)
		return devmem_fail(-EBUSY,
				   "%s is already set up by a running process (state file %s is locked)",
				   n->name, path);
	return devmem_fail(-EBUSY,
			   "%s is already set up (state file %s): run \"devmemctl teardown dev %s\" if no process is using it",
			   n->name, path, n->name);
}

/*
 * Before a change that may be recorded: the state file, created with
 * what is recorded so far and locked, unless the state has it already.
 * It is written and locked under a temporary name and then linked to its
 * own, which fails if it exists: it never exists empty or unlocked.
 */
static int nic_state_claim(struct devmem_nic *n)
{
	const char *dir = nic_state_dir();
	char *path, *tmp, what[PATH_MAX + 32];
	int fd, err;

	if (n->state_fd >= 0)
		return 0;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		snprintf(what, sizeof(what), "state directory %s", dir);
		return nic_state_dir_fail(err, what, dir);
	}
	err = nic_state_path(n->ifindex, &path);
	if (err)
		return err;
	err = nic_write_tmp(n, path, &tmp, &fd);
	if (err == -EACCES || err == -EPERM || err == -EROFS)
		err = nic_state_dir_fail(err, path, dir);
	if (err)
		goto err_path;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = devmem_fail_errno(-errno, "locking %s", tmp);
		goto err_tmp;
	}
	if (link(tmp, path)) {
		if (errno == EEXIST)
			err = nic_state_busy(n, path);
		else
			err = devmem_fail_errno(-errno, "state file %s", path);
		goto err_tmp;
	}
	unlink(tmp);
	free(tmp);
	n->state_fd = fd;
	n->state_path = path;
	return 0;

err_tmp:
	close(fd);
	unlink(tmp);
	free(tmp);
err_path:
	free(path);
	return err;
}

/* Let go of the state file (and the lock), removing it when @remove. */
static int nic_state_close(struct devmem_nic *n, int remove)
{
	int err = 0;

	if (n->state_fd < 0)
		return 0;
	/* removed while still locked: a recovery never takes it over */
	if (remove && unlink(n->state_path) && errno != ENOENT)
		err = devmem_fail_errno(-errno, "removing %s", n->state_path);
	close(n->state_fd);
	free(n->state_path);
	n->state_fd = -1;
	n->state_path = NULL;
	return err;
}

/* The state file as the record is now: a new one renamed over it (and
 * locked before), or none when nothing is recorded.
 */
static int nic_state_sync(struct devmem_nic *n)
{
	char *tmp;
	int fd, err;

	if (n->state_fd < 0)
		return 0;
	if (!n->nr)
		return nic_state_close(n, 1);
	err = nic_write_tmp(n, n->state_path, &tmp, &fd);
	if (err)
		return err;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = devmem_fail_errno(-errno, "locking %s", tmp);
		goto err_tmp;
	}
	if (rename(tmp, n->state_path)) {
		err = devmem_fail_errno(-errno, "renaming %s to %s", tmp,
					n->state_path);
		goto err_tmp;
	}
	free(tmp);
	close(n->state_fd);
	n->state_fd = fd;
	return 0;

err_tmp:
	close(fd);
	unlink(tmp);
	free(tmp);
	return err;
}

/*
 * After a change from @mark on that returned @err (a failed change has
 * undone itself): the state file follows the record. A change it cannot
 * record is undone, with the file's error.
 */
static int nic_state_commit(struct devmem_nic *n, size_t mark, int err)
{
	struct nic_reason r = { 0 };

	if (!err) {
		err = nic_state_sync(n);
		if (!err)
			return 0;
		nic_reason_keep(&r, err);
		nic_undo_from(n, mark, 0);
	}
	nic_reason_keep(&r, err);
	nic_state_sync(n);
	return nic_reason_return(&r);
}

void devmem_nic_set_hooks(struct devmem_nic *n,
			  const struct devmem_nic_hooks *hooks, void *arg)
{
	n->hooks = hooks;
	n->hook_arg = arg;
}

/* ---- the API ---- */

static struct devmem_nic *nic_alloc(void)
{
	struct devmem_nic *n = calloc(1, sizeof(*n));

	if (n)
		n->state_fd = -1;
	return n;
}

DEVMEM_EXPORT int devmem_nic_new(struct devmem_nic **np, int ifindex)
{
	char name[IF_NAMESIZE];
	struct devmem_nic *n;
	int err;

	devmem_error_clear();
	if (!np)
		return devmem_fail(-EINVAL, "no place for the result");
	if (ifindex <= 0)
		return devmem_fail(-EINVAL, "ifindex %d is not a device index",
				   ifindex);
	err = nic_device_name(ifindex, name);
	if (err)
		return err;
	n = nic_alloc();
	if (!n)
		return devmem_fail(-ENOMEM, "out of memory");
	n->ifindex = ifindex;
	memcpy(n->name, name, sizeof(n->name));
	*np = n;
	return 0;
}

DEVMEM_EXPORT void devmem_nic_free(struct devmem_nic *n)
{
	size_t i;

	if (!n)
		return;
	/* with changes recorded, the file stays for a later recovery */
	nic_state_close(n, !n->nr);
	for (i = 0; i < n->nr; i++)
		nic_change_free(&n->ch[i]);
	free(n->ch);
	if (n->nl.sk)
		devmem_nl_close(&n->nl);
	free(n);
}

DEVMEM_EXPORT int devmem_nic_ifindex(const struct devmem_nic *n)
{
	return n->ifindex;
}

/* Payload kept with the headers would land in host memory: a device
 * with an hds-thresh gets 0, the old value recorded.
 */
static int nic_thresh_zero(struct devmem_nic *n)
{
	uint32_t old;
	int err, has;

	err = nic_thresh_get(n, &has, &old);
	if (err || !has || !old)
		return err;
	err = nic_thresh_set(n, 0);
	if (err)
		return err;
	if (!nic_find(n, NIC_HDS_THRESH))
		nic_record(n, NIC_HDS_THRESH)->thresh = old;
	return 0;
}

static int nic_hds_change(struct devmem_nic *n, int on)
{
	uint8_t old, want;
	int err;

	want = on ? ETHTOOL_TCP_DATA_SPLIT_ENABLED :
		    ETHTOOL_TCP_DATA_SPLIT_DISABLED;
	err = nic_reserve(n, 2);
	if (!err)
		err = nic_hds_get(n, &old);
	if (err)
		return err;
	if (old != want) {
		err = nic_hds_set(n, want);
		if (err)
			return err;
		if (!nic_find(n, NIC_HDS))
			nic_record(n, NIC_HDS)->hds = old;
	}
	return on ? nic_thresh_zero(n) : 0;
}

DEVMEM_EXPORT int devmem_nic_header_split(struct devmem_nic *n, int on)
{
	size_t mark;
	int err;

	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	err = nic_state_claim(n);
	if (err)
		return err;
	mark = n->nr;
	err = nic_hds_change(n, on);
	if (err)
		err = nic_unwind(n, mark, err);
	return nic_state_commit(n, mark, err);
}

/* A device state and a range of queues A..B from the caller. */
static int nic_check_queues(struct devmem_nic *n, uint32_t first,
			    uint32_t last)
{
	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	if (first > last)
		return devmem_fail(-EINVAL, "queues %u..%u: the first is after the last",
				   first, last);
	return 0;
}

static int nic_rss_change(struct devmem_nic *n, uint32_t first, uint32_t last)
{
	struct ethtool_rxfh_indir *old = NULL;
	uint32_t nq = 0, nleft, i, *table = NULL;
	int err;

	err = nic_reserve(n, 1);
	if (!err)
		err = nic_rx_queues(n, &nq);
	if (err)
		return err;
	if (last >= nq)
		return devmem_fail(-EINVAL, "%s has %u rx queues: no queue %u",
				   n->name, nq, last);
	nleft = nq - (last - first + 1);
	if (!nleft)
		return devmem_fail(-EINVAL,
				   "%s has %u rx queues: none would be left for RSS",
				   n->name, nq);

	err = nic_rss_get(n, &old);
	if (err)
		return err;
	table = malloc(old->size * sizeof(*table));
	if (!table) {
		err = devmem_fail(-ENOMEM, "out of memory");
		goto out;
	}
	/* Round robin over the queues below @first, then those above @last. */
	for (i = 0; i < old->size; i++) {
		table[i] = i % nleft;
		if (table[i] >= first)
			table[i] += last - first + 1;
	}
	if (!memcmp(table, old->ring_index, old->size * sizeof(*table)))
		goto out;
	if (!nic_find(n, NIC_RSS)) {
		err = nic_rss_record(n, old, nq);
		if (err)
			goto out;
		err = nic_rss_set(n, table, old->size);
		if (err)
			nic_forget(n, &n->ch[n->nr - 1]);
	} else {
		err = nic_rss_set(n, table, old->size);
	}
out:
	free(table);
	free(old);
	return err;
}

DEVMEM_EXPORT int devmem_nic_rss_exclude(struct devmem_nic *n, uint32_t first,
					 uint32_t last)
{
	size_t mark;
	int err;

	err = nic_check_queues(n, first, last);
	if (!err)
		err = nic_state_claim(n);
	if (err)
		return err;
	mark = n->nr;
	return nic_state_commit(n, mark, nic_rss_change(n, first, last));
}

static int nic_flow_change(struct devmem_nic *n, const struct devmem_flow *f,
			   uint32_t queue, uint32_t *loc)
{
	struct nic_change *c;
	uint32_t where;
	size_t mark;
	int err;

	err = nic_reserve(n, 2);
	if (err)
		return err;
	mark = n->nr;
	err = nic_ntuple_on(n);
	if (!err)
		err = nic_rule_insert(n, f, queue, &where);
	if (err)
		return nic_unwind(n, mark, err);
	c = nic_record(n, NIC_RULE);
	c->rule.loc = where;
	c->rule.queue = queue;
	c->rule.flow = *f;
	if (loc)
		*loc = where;
	return 0;
}

DEVMEM_EXPORT int devmem_nic_flow_add(struct devmem_nic *n,
				      const struct devmem_flow *f,
				      uint32_t queue, uint32_t *loc)
{
	struct devmem_flow flow;
	size_t mark;
	int err;

	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	err = nic_check_flow(&flow, f);
	if (!err)
		err = nic_state_claim(n);
	if (err)
		return err;
	mark = n->nr;
	return nic_state_commit(n, mark,
				nic_flow_change(n, &flow, queue, loc));
}

DEVMEM_EXPORT int devmem_nic_flow_del(struct devmem_nic *n, uint32_t loc)
{
	struct nic_change *c;
	int err;

	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	err = nic_rule_delete(n, loc);
	if (err)
		return err;
	c = nic_find_rule(n, loc);
	if (!c)
		return 0;
	nic_forget(n, c);
	return nic_state_sync(n);
}

DEVMEM_EXPORT int devmem_nic_setup(struct devmem_nic *n, uint32_t first,
				   uint32_t last, const struct devmem_flow *f)
{
	struct devmem_flow flow;
	size_t mark;
	int err;

	err = nic_check_queues(n, first, last);
	if (!err && f) {
		err = nic_check_flow(&flow, f);
		f = &flow;
	}
	if (!err)
		err = nic_state_claim(n);
	if (err)
		return err;
	mark = n->nr;
	err = nic_hds_change(n, 1);
	if (!err)
		err = nic_rss_change(n, first, last);
	if (!err && f)
		err = nic_flow_change(n, f, first, NULL);
	if (err)
		err = nic_unwind(n, mark, err);
	return nic_state_commit(n, mark, err);
}

DEVMEM_EXPORT int devmem_nic_restore(struct devmem_nic *n)
{
	int err;

	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	err = nic_undo_from(n, 0, 1);
	/* a state recovered with nothing in it has its file still */
	if (!n->nr && n->state_fd >= 0) {
		struct nic_reason r = { 0 };

		nic_reason_keep(&r, err);
		nic_reason_keep(&r, nic_state_close(n, 1));
		err = nic_reason_return(&r);
	}
	return err;
}

/* ---- the state file ---- */

DEVMEM_EXPORT int devmem_nic_save(const struct devmem_nic *n, const char *path)
{
	char *tmp;
	int fd, err;

	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	if (!path || !*path)
		return devmem_fail(-EINVAL, "no file name");
	/* A new file renamed over the old one: never half a state. */
	err = nic_write_tmp(n, path, &tmp, &fd);
	if (err)
		return err;
	if (close(fd)) {
		err = devmem_fail_errno(-errno, "writing %s", tmp);
		goto err_unlink;
	}
	if (rename(tmp, path)) {
		err = devmem_fail_errno(-errno, "renaming %s to %s", tmp, path);
		goto err_unlink;
	}
	free(tmp);
	return 0;

err_unlink:
	unlink(tmp);
	free(tmp);
	return err;
}

/* What loading has to say where it is. */
struct nic_loader {
	const char *path;
	unsigned int line;
	char *words[6];		/* the first words of the line */
	char *rest;		/* after them, or NULL */
	unsigned int nr;
};

static int nic_bad(const struct nic_loader *l, const char *what)
{
	return devmem_fail(-EINVAL, "%s:%u: %s", l->path, l->line, what);
}

/* Split @line at single spaces into at most @max words; the rest after. */
static int nic_split(struct nic_loader *l, char *line, unsigned int max)
{
	char *p = line, *sp;

	l->nr = 0;
	l->rest = NULL;
	while (l->nr < max) {
		if (!*p || *p == ' ')
			return nic_bad(l, "empty field (fields are separated by one space)");
		l->words[l->nr++] = p;
		sp = strchr(p, ' ');
		if (!sp)
			return 0;
		*sp = '\0';
		p = sp + 1;
	}
	l->rest = p;
	return 0;
}

static int nic_parse_u32(const char *s, uint32_t max, uint32_t *v)
{
	unsigned long long x = 0;
	const char *p;

	if (!*s || (s[0] == '0' && s[1]))
		return -1;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		x = x * 10 + (unsigned long long)(*p - '0');
		if (x > max)
			return -1;
	}
	*v = (uint32_t)x;
	return 0;
}

static int nic_load_rss(struct devmem_nic *n, struct nic_loader *l)
{
	struct nic_change *c;
	uint32_t size, i, *table;
	char *p, *end = NULL;

	if (l->nr == 2 && !l->rest && !strcmp(l->words[1], "default")) {
		nic_record(n, NIC_RSS);
		return 0;
	}
	if (l->nr != 3 || strcmp(l->words[1], "table") || !l->rest ||
	    nic_parse_u32(l->words[2], NIC_TABLE_MAX, &size) || !size)
		return nic_bad(l, "expected \"rss default\" or \"rss table SIZE ENTRY...\"");
	table = malloc(size * sizeof(*table));
	if (!table)
		return devmem_fail(-ENOMEM, "out of memory");
	p = l->rest;
	for (i = 0; i < size; i++) {
		end = strchr(p, ' ');
		if (end)
			*end = '\0';
		if (nic_parse_u32(p, UINT32_MAX, &table[i]))
			break;
		if (!end) {
			i++;
			break;
		}
		p = end + 1;
	}
	if (i != size || end) {
		free(table);
		return nic_bad(l, "the RSS table does not have SIZE queue numbers");
	}
	c = nic_record(n, NIC_RSS);
	c->rss.size = size;
	c->rss.table = table;
	return 0;
}

static int nic_load_rule(struct devmem_nic *n, struct nic_loader *l)
{
	char why[NIC_REASON_LEN];
	struct devmem_flow f = { .size = sizeof(f) };
	struct nic_change *c;
	uint32_t loc, queue;
	const char *src;
	int err;

	if (l->nr != 6 || l->rest)
		return nic_bad(l, "expected \"rule LOC QUEUE DST PORT SRC|any\"");
	if (nic_parse_u32(l->words[1], UINT32_MAX - 1, &loc) ||
	    nic_parse_u32(l->words[2], UINT32_MAX, &queue))
		return nic_bad(l, "rule location or queue is not a number");
	if (nic_find_rule(n, loc))
		return nic_bad(l, "a second rule at the same location");
	src = strcmp(l->words[5], "any") ? l->words[5] : NULL;
	err = devmem_flow_parse(&f, l->words[3], src, l->words[4]);
	if (err) {
		/* (not the reason's own buffer as an argument) */
		snprintf(why, sizeof(why), "%s", devmem_last_error());
		return nic_bad(l, why);
	}
	c = nic_record(n, NIC_RULE);
	c->rule.loc = loc;
	c->rule.queue = queue;
	c->rule.flow = f;
	return 0;
}

static int nic_load_line(struct devmem_nic *n, struct nic_loader *l, char *line)
{
	const char *kind;
	uint32_t v;
	int err;

	/* An RSS table has as many words as entries: they stay in rest. */
	err = nic_split(l, line, strncmp(line, "rss ", 4) ? 6 : 3);
	if (!err)
		err = nic_reserve(n, 1);
	if (err)
		return err;
	kind = l->words[0];
	if (!strcmp(kind, "header-split")) {
		if (nic_find(n, NIC_HDS))
			return nic_bad(l, "a second header-split line");
		if (l->nr != 2 || l->rest)
			return nic_bad(l, "expected \"header-split on|off|unknown\"");
		if (!strcmp(l->words[1], "on"))
			nic_record(n, NIC_HDS)->hds = ETHTOOL_TCP_DATA_SPLIT_ENABLED;
		else if (!strcmp(l->words[1], "off"))
			nic_record(n, NIC_HDS)->hds = ETHTOOL_TCP_DATA_SPLIT_DISABLED;
		else if (!strcmp(l->words[1], "unknown"))
			nic_record(n, NIC_HDS)->hds = ETHTOOL_TCP_DATA_SPLIT_UNKNOWN;
		else
			return nic_bad(l, "expected \"header-split on|off|unknown\"");
		return 0;
	}
	if (!strcmp(kind, "hds-thresh")) {
		if (nic_find(n, NIC_HDS_THRESH))
			return nic_bad(l, "a second hds-thresh line");
		if (l->nr != 2 || l->rest ||
		    nic_parse_u32(l->words[1], UINT32_MAX, &v))
			return nic_bad(l, "expected \"hds-thresh BYTES\"");
		nic_record(n, NIC_HDS_THRESH)->thresh = v;
		return 0;
	}
	if (!strcmp(kind, "ntuple")) {
		if (nic_find(n, NIC_NTUPLE))
			return nic_bad(l, "a second ntuple line");
		if (l->nr != 2 || l->rest || strcmp(l->words[1], "off"))
			return nic_bad(l, "expected \"ntuple off\"");
		nic_record(n, NIC_NTUPLE);
		return 0;
	}
	if (!strcmp(kind, "rss")) {
		if (nic_find(n, NIC_RSS))
			return nic_bad(l, "a second rss line");
		return nic_load_rss(n, l);
	}
	if (!strcmp(kind, "rule"))
		return nic_load_rule(n, l);
	return nic_bad(l, "unknown line (header-split, hds-thresh, ntuple, rss or rule expected)");
}

/* The version and device lines. */
static int nic_load_head(struct devmem_nic *n, struct nic_loader *l, char *line)
{
	uint32_t v;

	if (l->line == 1) {
		if (nic_split(l, line, 2) || l->nr != 2 || l->rest ||
		    strcmp(l->words[0], NIC_STATE_MAGIC))
			return nic_bad(l, "not a libdevmem NIC state file (no \"" NIC_STATE_MAGIC " VERSION\" line)");
		if (nic_parse_u32(l->words[1], UINT32_MAX, &v) ||
		    v != NIC_STATE_VERSION)
			return nic_bad(l, "unsupported version (this library reads 1)");
		return 0;
	}
	if (nic_split(l, line, 3) || l->nr != 3 || l->rest ||
	    strcmp(l->words[0], "device") ||
	    nic_parse_u32(l->words[1], INT_MAX, &v) || !v ||
	    strlen(l->words[2]) >= IF_NAMESIZE)
		return nic_bad(l, "expected \"device IFINDEX NAME\"");
	n->ifindex = (int)v;
	strcpy(n->name, l->words[2]);
	return 0;
}

/* The whole of a state file, NUL-terminated, from @fd (named @path). */
static int nic_read_fd(int fd, const char *path, char **bufp, size_t *lenp)
{
	size_t len = 0;
	ssize_t got;
	char *buf;
	int err = 0;

	buf = malloc(NIC_STATE_MAX_BYTES + 1);
	if (!buf)
		return devmem_fail(-ENOMEM, "out of memory");
	while (len <= NIC_STATE_MAX_BYTES) {
		got = read(fd, buf + len, NIC_STATE_MAX_BYTES + 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = devmem_fail_errno(-errno, "reading %s", path);
			break;
		}
		if (!got)
			break;
		len += (size_t)got;
	}
	if (err)
		goto err_free;
	if (len > NIC_STATE_MAX_BYTES)
		err = devmem_fail(-EINVAL, "%s: larger than %u bytes", path,
				  NIC_STATE_MAX_BYTES);
	else if (memchr(buf, '\0', len))
		err = devmem_fail(-EINVAL, "%s: a NUL byte in a text file", path);
	else if (!len || buf[len - 1] != '\n')
		err = devmem_fail(-EINVAL, "%s: empty, or its last line has no newline",
				  path);
	if (err)
		goto err_free;
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;

err_free:
	free(buf);
	return err;
}

/* A state from the state file open at @fd (named @path), strictly. */
static int nic_load(struct devmem_nic **np, int fd, const char *path)
{
	struct nic_loader l = { .path = path };
	char name[IF_NAMESIZE];
	struct devmem_nic *n;
	char *buf = NULL, *line, *nl;
	size_t len;
	int err;

	err = nic_read_fd(fd, path, &buf, &len);
	if (err)
		return err;
	n = nic_alloc();
	if (!n) {
		free(buf);
		return devmem_fail(-ENOMEM, "out of memory");
	}
	for (line = buf; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = '\0';
		l.line++;
		if (l.line <= 2)
			err = nic_load_head(n, &l, line);
		else
			err = nic_load_line(n, &l, line);
		if (err)
			goto err_free;
	}
	if (l.line < 2) {
		err = devmem_fail(-EINVAL, "%s: no \"device IFINDEX NAME\" line",
				  path);
		goto err_free;
	}
	/* The device the state was recorded on, not another by its index. */
	err = nic_device_name(n->ifindex, name);
	if (err)
		goto err_free;
	if (strcmp(name, n->name)) {
		err = devmem_fail(-ENODEV,
				  "%s: ifindex %d is now \"%s\", not \"%s\"",
				  path, n->ifindex, name, n->name);
		goto err_free;
	}
	free(buf);
	*np = n;
	return 0;

err_free:
	free(buf);
	devmem_nic_free(n);
	return err;
}

DEVMEM_EXPORT int devmem_nic_new_from_file(struct devmem_nic **np, const char *path)
{
	int fd, err;

	devmem_error_clear();
	if (!np)
		return devmem_fail(-EINVAL, "no place for the result");
	if (!path || !*path)
		return devmem_fail(-EINVAL, "no file name");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return devmem_fail_errno(-errno, "%s", path);
	err = nic_load(np, fd, path);
	close(fd);
	return err;
}

/*
 * Open and lock the state file @path of device @name, if no one holds
 * it: the file locked is the one under that name (an owner renames a new
 * one over it, or removes it, between open() and flock()).
 */
static int nic_recover_lock(const char *path, const char *name, int *fdp)
{
	struct stat st, now;
	int fd, tries;

	for (tries = 0; tries < NIC_RECOVER_TRIES; tries++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			return devmem_fail(-ENOENT,
					   "%s is not set up (no state file %s)",
					   name, path);
		if (fd < 0)
			return devmem_fail_errno(-errno, "state file %s", path);
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			close(fd);
			if (errno == EWOULDBLOCK)
				return devmem_fail(-EBUSY,
						   "%s is set up by a running process (state file %s is locked)",
						   name, path);
			return devmem_fail_errno(-errno, "locking %s", path);
		}
		if (!fstat(fd, &st) && !stat(path, &now) &&
		    st.st_dev == now.st_dev && st.st_ino == now.st_ino) {
			*fdp = fd;
			return 0;
		}
		close(fd);
	}
	return devmem_fail(-EBUSY,
			   "%s is set up by a running process (state file %s keeps changing)",
			   name, path);
}

DEVMEM_EXPORT int devmem_nic_new_recover(struct devmem_nic **np, int ifindex)
{
	char name[IF_NAMESIZE], *path;
	struct devmem_nic *n;
	int fd = -1, err;

	devmem_error_clear();
	if (!np)
		return devmem_fail(-EINVAL, "no place for the result");
	if (ifindex <= 0)
		return devmem_fail(-EINVAL, "ifindex %d is not a device index",
				   ifindex);
	err = nic_device_name(ifindex, name);
	if (!err)
		err = nic_state_path(ifindex, &path);
	if (err)
		return err;
	err = nic_recover_lock(path, name, &fd);
	if (err)
		goto err_path;
	err = nic_load(&n, fd, path);
	if (err)
		goto err_close;
	if (n->ifindex != ifindex) {
		err = devmem_fail(-EINVAL, "%s: the state of ifindex %d, not %d",
				  path, n->ifindex, ifindex);
		devmem_nic_free(n);
		goto err_close;
	}
	n->state_fd = fd;
	n->state_path = path;
	*np = n;
	return 0;

err_close:
	close(fd);
err_path:
	free(path);
	return err;
}
