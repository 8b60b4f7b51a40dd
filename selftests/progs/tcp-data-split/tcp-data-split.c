// SPDX-License-Identifier: GPL-2.0
/*
 * tcp-data-split: get or set the ethtool ring parameter tcp-data-split
 * (header split), or hds-thresh, of a network device over ethtool generic
 * netlink.
 *
 * Debian's ethtool 6.1 can show the parameter but not set it; our kernel
 * accepts ETHTOOL_A_RINGS_TCP_DATA_SPLIT in ETHTOOL_MSG_RINGS_SET for
 * drivers that declare support, and ETHTOOL_A_RINGS_HDS_THRESH (numbered
 * as in Linux 6.14).  Raw netlink only: glibc and uapi headers.
 *
 * Exit status: 0 success, 1 failure, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#define PROG		"tcp-data-split"
#define RX_BUF_SIZE	32768
#define TX_BUF_SIZE	256
#define DETAIL_SIZE	256

#define GENL_CTRL_VERSION	1

#include "../lib/die.h"

#define __printf(a, b)	__attribute__((format(printf, a, b)))

/* A request being built; the union keeps the buffer nlmsghdr-aligned. */
struct msg {
	union {
		struct nlmsghdr nh;
		char b[TX_BUF_SIZE];
	};
	bool overflow;
};

struct nl {
	int fd;
	__u32 portid;
	__u32 seq;
	__u16 family;
	int cb_err;			/* first error a reply callback hit */
	char detail[DETAIL_SIZE];	/* extack text, or our own detail */
	union {
		struct nlmsghdr nh;
		char b[RX_BUF_SIZE];
	} rx;
};

typedef int (*reply_cb)(struct nl *nl, const struct nlmsghdr *nh, void *arg);

/* What a RINGS_GET reply told us. */
struct rings {
	bool got;
	bool has_split;
	__u8 split;
	bool has_thresh;
	__u32 thresh, thresh_max;
};

static bool hds_thresh_mode;	/* -t: hds-thresh instead of tcp-data-split */
/* --raw ATTR:TYPE: set that rings attribute as it is (tests of refusals) */
static __u16 raw_attr;
static bool raw_u8;

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " DEV               show tcp-data-split of DEV\n"
		"       " PROG " DEV on|off|auto   set it (auto: driver default)\n"
		"       " PROG " -t DEV            show hds-thresh of DEV\n"
		"       " PROG " -t DEV BYTES      set it\n"
		"       " PROG " -h|--help\n"
		"\n"
		"Gets or sets the ethtool ring parameter tcp-data-split (header\n"
		"split) over ethtool generic netlink.  Showing prints one line,\n"
		"'DEV: tcp-data-split on|off|unknown'; setting prints nothing.\n"
		"\n"
		"  -t, --hds-thresh  hds-thresh instead: the largest payload the\n"
		"                    device keeps whole in the header buffer.\n"
		"                    Showing prints 'DEV: hds-thresh N max M', or\n"
		"                    'DEV: hds-thresh unsupported'.\n"
		"  --raw ATTR:u8|u32 setting only: put VALUE (a number) in rings\n"
		"                    attribute number ATTR of that type, whatever\n"
		"                    the kernel makes of it\n"
		"\n"
		"Exit status: 0 success, 1 failure, 2 usage error.\n");
}

/* Record a detail for the error message (unless the kernel gave one). */
static int fail(struct nl *nl, int err, const char *fmt, ...)
	__printf(3, 4);

static int fail(struct nl *nl, int err, const char *fmt, ...)
{
	va_list ap;

	if (!nl->detail[0]) {
		va_start(ap, fmt);
		vsnprintf(nl->detail, sizeof(nl->detail), fmt, ap);
		va_end(ap);
	}
	return err;
}

/* ---- building requests ---- */

static struct genlmsghdr *msg_init(struct msg *m, __u16 type, __u8 cmd,
				   __u8 version)
{
	struct genlmsghdr *genl;

	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m->nh.nlmsg_type = type;
	m->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	genl = NLMSG_DATA(&m->nh);
	genl->cmd = cmd;
	genl->version = version;
	return genl;
}

/* Append an attribute; returns its offset in the message, 0 on overflow. */
static size_t attr_put(struct msg *m, __u16 type, const void *data,
		       size_t len)
{
	size_t off = NLMSG_ALIGN(m->nh.nlmsg_len);
	struct nlattr *a;

	if (m->overflow || len > sizeof(m->b) ||
	    off + NLA_HDRLEN + NLA_ALIGN(len) > sizeof(m->b)) {
		m->overflow = true;
		return 0;
	}
	a = (struct nlattr *)(m->b + off);
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy(m->b + off + NLA_HDRLEN, data, len);
	m->nh.nlmsg_len = off + NLA_ALIGN(a->nla_len);
	return off;
}

static void attr_put_str(struct msg *m, __u16 type, const char *s)
{
	attr_put(m, type, s, strlen(s) + 1);
}

static void attr_put_u32(struct msg *m, __u16 type, __u32 v)
{
	attr_put(m, type, &v, sizeof(v));
}

static void attr_put_u8(struct msg *m, __u16 type, __u8 v)
{
	attr_put(m, type, &v, sizeof(v));
}

static size_t nest_start(struct msg *m, __u16 type)
{
	return attr_put(m, type | NLA_F_NESTED, NULL, 0);
}

static void nest_end(struct msg *m, size_t off)
{
	struct nlattr *a;

	if (m->overflow || !off)
		return;
	a = (struct nlattr *)(m->b + off);
	a->nla_len = m->nh.nlmsg_len - off;
}

/* ---- parsing replies ---- */

/* Like the kernel's nla_parse(): index attributes by type, check bounds. */
static int attr_parse(const void *data, size_t len,
		      const struct nlattr **tb, unsigned int max)
{
	const char *p = data;
	size_t off = 0;

	memset(tb, 0, (max + 1) * sizeof(*tb));
	while (len - off >= NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)(p + off);
		unsigned int type = a->nla_type & NLA_TYPE_MASK;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > len - off)
			return -EPROTO;
		if (type <= max)
			tb[type] = a;
		off += NLA_ALIGN(a->nla_len);
		if (off > len)	/* last attribute without its padding */
			break;
	}
	return 0;
}

static const void *attr_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

static size_t attr_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

static int attr_get(const struct nlattr *a, void *v, size_t size)
{
	if (attr_len(a) < size)
		return -EPROTO;
	memcpy(v, attr_data(a), size);
	return 0;
}

/* Copy a string attribute, stopping at its NUL or end; mask control chars. */
static void attr_get_str(const struct nlattr *a, char *buf, size_t size)
{
	const char *s = attr_data(a);
	size_t i, n = attr_len(a);

	for (i = 0; i < n && i + 1 < size && s[i]; i++)
		buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	buf[i] = '\0';
}

/* Payload of a genetlink message after the genl header, or NULL. */
static const struct genlmsghdr *genl_hdr(const struct nlmsghdr *nh,
					 const void **attrs, size_t *len)
{
	if (nh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return NULL;
	*attrs = (const char *)NLMSG_DATA(nh) + GENL_HDRLEN;
	*len = nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	return NLMSG_DATA(nh);
}

/* ---- the socket ---- */

static int nl_open(struct nl *nl)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	socklen_t salen = sizeof(sa);
	int one = 1;

	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		return fail(nl, -errno, "netlink socket");
	/* Without extended acks we merely lose the kernel's text. */
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return fail(nl, -errno, "netlink bind");
	if (getsockname(nl->fd, (struct sockaddr *)&sa, &salen) < 0)
		return fail(nl, -errno, "netlink getsockname");
	if (salen != sizeof(sa) || sa.nl_family != AF_NETLINK)
		return fail(nl, -EPROTO, "netlink getsockname");
	nl->portid = sa.nl_pid;
	nl->seq = (__u32)getpid() << 8;
	return 0;
}

static int nl_send(struct nl *nl, struct msg *m)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	ssize_t n;

	if (m->overflow)
		return fail(nl, -EMSGSIZE, "request too large");
	m->nh.nlmsg_seq = ++nl->seq;
	do {
		n = sendto(nl->fd, m->b, m->nh.nlmsg_len, 0,
			   (struct sockaddr *)&sa, sizeof(sa));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return fail(nl, -errno, "netlink send");
	if ((size_t)n != m->nh.nlmsg_len)
		return fail(nl, -EIO, "netlink send: short write");
	return 0;
}

/* Kernel extended ack: take NLMSGERR_ATTR_MSG, else name the offset. */
static void nl_extack(struct nl *nl, const struct nlmsghdr *nh,
		      const struct nlmsgerr *e)
{
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off = NLMSG_HDRLEN + sizeof(*e);
	__u32 offs;

	if (!(nh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nh->nlmsg_flags & NLM_F_CAPPED)) {
		/* The request's payload is echoed before the TLVs. */
		if (e->msg.nlmsg_len < NLMSG_HDRLEN ||
		    e->msg.nlmsg_len > nh->nlmsg_len)
			return;
		off += NLMSG_ALIGN(e->msg.nlmsg_len - NLMSG_HDRLEN);
	}
	if (off >= nh->nlmsg_len ||
	    attr_parse((const char *)nh + off, nh->nlmsg_len - off, tb,
		       NLMSGERR_ATTR_MAX))
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		attr_get_str(tb[NLMSGERR_ATTR_MSG], nl->detail,
			     sizeof(nl->detail));
	else if (tb[NLMSGERR_ATTR_OFFS] &&
		 !attr_get(tb[NLMSGERR_ATTR_OFFS], &offs, sizeof(offs)))
		snprintf(nl->detail, sizeof(nl->detail),
			 "kernel rejected the attribute at offset %u", offs);
}

/* NLMSG_ERROR: 1 for a positive ack, else the kernel's -errno. */
static int nl_ack(struct nl *nl, const struct nlmsghdr *nh)
{
	const struct nlmsgerr *e = NLMSG_DATA(nh);

	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
		return fail(nl, -EPROTO, "short netlink error message");
	if (e->error > 0 || e->error < -4095)
		return fail(nl, -EPROTO, "bad netlink error code %d",
			    e->error);
	if (!e->error)
		return 1;
	nl->detail[0] = '\0';	/* the kernel's word beats ours */
	nl_extack(nl, nh, e);
	return e->error;
}

/* One message: 0 to go on, 1 when acked, -errno on error. */
static int nl_handle(struct nl *nl, const struct nlmsghdr *nh,
		     reply_cb cb, void *arg)
{
	int err;

	if (nh->nlmsg_seq != nl->seq)
		return fail(nl, -EPROTO, "netlink sequence %u, expected %u",
			    nh->nlmsg_seq, nl->seq);
	if (nh->nlmsg_pid != nl->portid)
		return fail(nl, -EPROTO, "netlink port id %u, expected %u",
			    nh->nlmsg_pid, nl->portid);
	switch (nh->nlmsg_type) {
	case NLMSG_ERROR:
		return nl_ack(nl, nh);
	case NLMSG_DONE:
		return 1;
	case NLMSG_OVERRUN:
		return fail(nl, -ENOBUFS, "netlink overrun");
	}
	if (nh->nlmsg_type < NLMSG_MIN_TYPE || !cb)
		return 0;
	err = cb(nl, nh, arg);
	if (err && !nl->cb_err)
		nl->cb_err = err;
	return 0;
}

/* Read one datagram and walk its messages; same returns as nl_handle(). */
static int nl_recv(struct nl *nl, reply_cb cb, void *arg)
{
	struct sockaddr_nl sa;
	struct iovec iov = { .iov_base = nl->rx.b, .iov_len = sizeof(nl->rx) };
	struct msghdr mh = {
		.msg_name = &sa, .msg_namelen = sizeof(sa),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	size_t len, off = 0;
	ssize_t n;
	int ret;

	n = recvmsg(nl->fd, &mh, 0);
	if (n < 0)
		return errno == EINTR ? 0 : fail(nl, -errno, "netlink receive");
	if (mh.msg_flags & MSG_TRUNC)
		return fail(nl, -EMSGSIZE, "netlink reply truncated");
	if (mh.msg_namelen != sizeof(sa) || sa.nl_pid != 0)
		return 0;	/* not from the kernel */
	len = n;
	while (len - off >= NLMSG_HDRLEN) {
		const struct nlmsghdr *nh = (const void *)(nl->rx.b + off);

		if (nh->nlmsg_len < NLMSG_HDRLEN || nh->nlmsg_len > len - off)
			return fail(nl, -EPROTO, "bad netlink message length");
		ret = nl_handle(nl, nh, cb, arg);
		if (ret)
			return ret;
		off += NLMSG_ALIGN(nh->nlmsg_len);
		if (off > len)
			break;
	}
	return 0;
}

/* Send a request; feed replies to cb until the kernel acks it. */
static int nl_transact(struct nl *nl, struct msg *m, reply_cb cb, void *arg)
{
	int ret;

	nl->cb_err = 0;
	ret = nl_send(nl, m);
	while (!ret)
		ret = nl_recv(nl, cb, arg);
	if (ret < 0)
		return ret;
	return nl->cb_err;
}

/* ---- generic netlink family lookup ---- */

static int family_cb(struct nl *nl, const struct nlmsghdr *nh, void *arg)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1];
	const struct genlmsghdr *genl;
	const void *attrs;
	size_t len;
	__u16 *id = arg;

	genl = genl_hdr(nh, &attrs, &len);
	if (nh->nlmsg_type != GENL_ID_CTRL || !genl ||
	    genl->cmd != CTRL_CMD_NEWFAMILY)
		return fail(nl, -EPROTO, "unexpected genetlink controller reply");
	if (attr_parse(attrs, len, tb, CTRL_ATTR_MAX))
		return fail(nl, -EPROTO, "malformed genetlink controller reply");
	if (!tb[CTRL_ATTR_FAMILY_ID] ||
	    attr_get(tb[CTRL_ATTR_FAMILY_ID], id, sizeof(*id)) || !*id)
		return fail(nl, -EPROTO, "no family id in controller reply");
	return 0;
}

static int family_resolve(struct nl *nl, const char *name)
{
	struct msg m;
	__u16 id = 0;
	int ret;

	msg_init(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, GENL_CTRL_VERSION);
	attr_put_str(&m, CTRL_ATTR_FAMILY_NAME, name);
	ret = nl_transact(nl, &m, family_cb, &id);
	if (ret == -ENOENT)
		return fail(nl, ret, "generic netlink family %s not found",
			    name);
	if (!ret && !id)
		return fail(nl, -EPROTO, "no genetlink controller reply");
	nl->family = id;
	return ret;
}

/* ---- ethtool rings ---- */

static void rings_init(struct msg *m, struct nl *nl, __u8 cmd,
		       const char *dev)
{
	size_t nest;

	msg_init(m, nl->family, cmd, ETHTOOL_GENL_VERSION);
	nest = nest_start(m, ETHTOOL_A_RINGS_HEADER);
	attr_put_str(m, ETHTOOL_A_HEADER_DEV_NAME, dev);
	nest_end(m, nest);
}

static int rings_cb(struct nl *nl, const struct nlmsghdr *nh, void *arg)
{
	const struct nlattr *tb[ETHTOOL_A_RINGS_MAX + 1];
	const struct nlattr *split;
	const struct genlmsghdr *genl;
	struct rings *r = arg;
	const void *attrs;
	size_t len;

	genl = genl_hdr(nh, &attrs, &len);
	if (nh->nlmsg_type != nl->family || !genl ||
	    genl->cmd != ETHTOOL_MSG_RINGS_GET_REPLY)
		return fail(nl, -EPROTO, "unexpected ethtool reply");
	if (attr_parse(attrs, len, tb, ETHTOOL_A_RINGS_MAX))
		return fail(nl, -EPROTO, "malformed ethtool reply");
	split = tb[ETHTOOL_A_RINGS_TCP_DATA_SPLIT];
	if (split && attr_get(split, &r->split, sizeof(r->split)))
		return fail(nl, -EPROTO, "malformed tcp-data-split attribute");
	r->has_split = !!split;
	r->has_thresh = tb[ETHTOOL_A_RINGS_HDS_THRESH] &&
			tb[ETHTOOL_A_RINGS_HDS_THRESH_MAX];
	if (r->has_thresh &&
	    (attr_get(tb[ETHTOOL_A_RINGS_HDS_THRESH], &r->thresh,
		      sizeof(r->thresh)) ||
	     attr_get(tb[ETHTOOL_A_RINGS_HDS_THRESH_MAX], &r->thresh_max,
		      sizeof(r->thresh_max))))
		return fail(nl, -EPROTO, "malformed hds-thresh attribute");
	r->got = true;
	return 0;
}

static const char *split_name(const struct rings *r)
{
	if (!r->has_split)
		return "unknown";
	switch (r->split) {
	case ETHTOOL_TCP_DATA_SPLIT_DISABLED:
		return "off";
	case ETHTOOL_TCP_DATA_SPLIT_ENABLED:
		return "on";
	}
	return "unknown";
}

static int rings_show(struct nl *nl, const char *dev)
{
	struct rings r = {};
	struct msg m;
	int ret;

	rings_init(&m, nl, ETHTOOL_MSG_RINGS_GET, dev);
	ret = nl_transact(nl, &m, rings_cb, &r);
	if (ret)
		return ret;
	if (!r.got)
		return fail(nl, -EPROTO, "no ethtool reply");
	if (!hds_thresh_mode)
		printf("%s: tcp-data-split %s\n", dev, split_name(&r));
	else if (r.has_thresh)
		printf("%s: hds-thresh %u max %u\n", dev, r.thresh,
		       r.thresh_max);
	else
		printf("%s: hds-thresh unsupported\n", dev);
	return 0;
}

static int rings_set(struct nl *nl, const char *dev, __u32 value)
{
	struct msg m;

	rings_init(&m, nl, ETHTOOL_MSG_RINGS_SET, dev);
	if (raw_attr && raw_u8)
		attr_put_u8(&m, raw_attr, value);
	else if (raw_attr)
		attr_put_u32(&m, raw_attr, value);
	else if (hds_thresh_mode)
		attr_put_u32(&m, ETHTOOL_A_RINGS_HDS_THRESH, value);
	else
		attr_put_u8(&m, ETHTOOL_A_RINGS_TCP_DATA_SPLIT, value);
	return nl_transact(nl, &m, NULL, NULL);
}

/* ---- main ---- */

static int parse_value(const char *s, __u32 *split)
{
	unsigned long long v;
	char *end;

	if (hds_thresh_mode || raw_attr) {
		errno = 0;
		v = strtoull(s, &end, 10);
		if (!*s || *s == '-' || *end || errno ||
		    v > (raw_u8 ? 0xffULL : 0xffffffffULL))
			return -1;
		*split = v;
		return 0;
	}
	if (!strcmp(s, "on"))
		*split = ETHTOOL_TCP_DATA_SPLIT_ENABLED;
	else if (!strcmp(s, "off"))
		*split = ETHTOOL_TCP_DATA_SPLIT_DISABLED;
	else if (!strcmp(s, "auto"))
		*split = ETHTOOL_TCP_DATA_SPLIT_UNKNOWN;
	else
		return -1;
	return 0;
}

/* Options first: -h/--help; "--" ends them (for a DEV starting with '-'). */
static int parse_opts(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "hds-thresh", no_argument, NULL, 't' },
		{ "raw", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long a;
	char *end;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+ht", opts, NULL)) != -1) {
		if (c == 'h') {
			print_usage(stdout);
			exit(0);
		}
		if (c == 't') {
			hds_thresh_mode = true;
			continue;
		}
		if (c == 'r') {
			errno = 0;
			a = strtoul(optarg, &end, 10);
			if (end == optarg || errno || !a || a > 0xffff ||
			    (strcmp(end, ":u8") && strcmp(end, ":u32")))
				usage_error("bad --raw '%s' (want ATTR:u8 or ATTR:u32)",
					    optarg);
			raw_attr = a;
			raw_u8 = !strcmp(end, ":u8");
			continue;
		}
		usage_error("unknown option '%s'", argv[optind - 1]);
	}
	return 0;
}

static int run(const char *dev, const char *value)
{
	struct nl *nl;
	__u32 split = 0;
	int ret;

	if (value && parse_value(value, &split))
		usage_error(raw_attr ? (raw_u8 ?
			    "bad value '%s' (want 0 to 255)" :
			    "bad value '%s' (want 0 to 4294967295)") :
			    hds_thresh_mode ?
			    "bad value '%s' (want bytes, 0 to 4294967295)" :
			    "bad value '%s' (want on, off or auto)",
			    value);
	if (raw_attr && !value)
		usage_error("%s", "--raw needs a VALUE");
	nl = calloc(1, sizeof(*nl));
	if (!nl) {
		perror(PROG);
		return 1;
	}
	nl->fd = -1;
	ret = nl_open(nl);
	if (!ret)
		ret = family_resolve(nl, ETHTOOL_GENL_NAME);
	if (!ret)
		ret = value ? rings_set(nl, dev, split) : rings_show(nl, dev);
	if (ret) {
		fprintf(stderr, PROG ": %s: %s%s%s\n", dev, strerror(-ret),
			nl->detail[0] ? ": " : "", nl->detail);
		ret = 1;
	}
	if (nl->fd >= 0)
		close(nl->fd);
	free(nl);
	return ret;
}

int main(int argc, char **argv)
{
	const char *dev;
	int ret, nargs;

	ret = parse_opts(argc, argv);
	if (ret)
		return ret;
	nargs = argc - optind;
	if (nargs < 1 || nargs > 2)
		usage_error("%s", nargs < 1 ? "missing DEV" :
			    "too many arguments");
	dev = argv[optind];
	if (!dev[0])
		usage_error("%s", "empty device name");
	if (strlen(dev) > IFNAMSIZ - 1)
		usage_error("device name '%s' too long (at most %d characters)",
			    dev, IFNAMSIZ - 1);
	ret = run(dev, nargs == 2 ? argv[optind + 1] : NULL);
	if (fflush(stdout) && !ret) {
		perror(PROG);
		ret = 1;
	}
	return ret;
}
