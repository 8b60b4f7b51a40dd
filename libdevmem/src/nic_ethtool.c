// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * NIC set-up: the device itself. Settings that ethtool netlink carries
 * (tcp-data-split, hds-thresh, the ntuple feature) go through the
 * "ethtool" generic netlink family, so that the kernel's extack text
 * becomes the reason; RSS tables and n-tuple rules have no netlink
 * request in 6.1 and go through the ethtool ioctl (nic_ioctl()), issued
 * on the same netlink socket (any socket reaches dev_ioctl), in the
 * namespace the socket was made in. The socket is opened on first use.
 */
#include "nic.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/sockios.h>

/* ---- the device and the socket ---- */

int nic_device_name(int ifindex, char *name)
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
int nic_ioctl(struct devmem_nic *n, void *data, const char *what)
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

const char *nic_hds_name(uint8_t v)
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

int nic_hds_get(struct devmem_nic *n, uint8_t *v)
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

int nic_hds_set(struct devmem_nic *n, uint8_t v)
{
	if (n->hooks)
		return nic_hooked(n, n->hooks->hds_set(n->hook_arg, v),
				  "setting tcp-data-split");
	return nic_rings_set(n, ETHTOOL_A_RINGS_TCP_DATA_SPLIT, v);
}

/* hds-thresh in *@v, *@has 0 when the device has none (a kernel before
 * Linux 6.14's rings attributes, or a driver without it).
 */
int nic_thresh_get(struct devmem_nic *n, int *has, uint32_t *v)
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

int nic_thresh_set(struct devmem_nic *n, uint32_t v)
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
int nic_ntuple_want(struct devmem_nic *n, int on)
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
int nic_ntuple_on(struct devmem_nic *n)
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

