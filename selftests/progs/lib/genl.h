/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Generic netlink with nothing but libc, for the test programs: a request
 * built in a fixed buffer (attributes, nests), sent and answered until its
 * ack or the end of its dump; the attributes of an answer by type; the
 * extended ack of a refusal; a family's id by name (CTRL_CMD_GETFAMILY).
 * A failure of the socket itself is fatal (die.h, included first); what
 * the kernel refuses is the caller's to report.
 */
#ifndef SELFTESTS_PROGS_GENL_H
#define SELFTESTS_PROGS_GENL_H

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#ifndef SELFTESTS_PROGS_DIE_H
#error "include die.h before genl.h"
#endif

#define GENL_REQ_ATTRS	4096

/* A request under construction. */
struct genl_req {
	struct nlmsghdr nlh;
	struct genlmsghdr genl;
	char attrs[GENL_REQ_ATTRS];
	bool overflow;		/* an attribute did not fit */
} __attribute__((aligned(NLMSG_ALIGNTO)));

/* Command @cmd of family @family, with NLM_F_REQUEST | NLM_F_ACK and
 * @flags (NLM_F_DUMP for a dump).
 */
static inline void genl_req_init(struct genl_req *r, uint16_t family,
				 uint8_t cmd, uint16_t flags)
{
	memset(r, 0, sizeof(*r));
	r->nlh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->nlh.nlmsg_type = family;
	r->nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	r->genl.cmd = cmd;
	r->genl.version = 1;
}

/* Append attribute @type with the @len bytes at @data: its offset in the
 * request, or 0 when it does not fit. Then nothing more is added, and
 * genl_transact() refuses to send the request.
 */
static inline size_t genl_put(struct genl_req *r, uint16_t type,
			      const void *data, size_t len)
{
	size_t off = r->nlh.nlmsg_len, total = NLA_HDRLEN + len;
	struct nlattr *a = (struct nlattr *)((char *)r + off);

	if (r->overflow || len > GENL_REQ_ATTRS || off + NLA_ALIGN(total) >
	    NLMSG_LENGTH(GENL_HDRLEN) + GENL_REQ_ATTRS) {
		r->overflow = true;
		return 0;
	}
	a->nla_type = type;
	a->nla_len = total;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	memset((char *)a + total, 0, NLA_ALIGN(total) - total);
	r->nlh.nlmsg_len += NLA_ALIGN(total);
	return off;
}

static inline void genl_put_u32(struct genl_req *r, uint16_t type, uint32_t v)
{
	genl_put(r, type, &v, sizeof(v));
}

/* Open nest @type (NLA_F_NESTED set); genl_nest_end() closes it. */
static inline size_t genl_nest_start(struct genl_req *r, uint16_t type)
{
	return genl_put(r, type | NLA_F_NESTED, NULL, 0);
}

/* The nest opened at @off holds what was added since. */
static inline void genl_nest_end(struct genl_req *r, size_t off)
{
	if (off && !r->overflow)
		((struct nlattr *)((char *)r + off))->nla_len =
			r->nlh.nlmsg_len - off;
}

/* ---- answers ---- */

static inline const void *genl_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

static inline size_t genl_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

/* The attribute at @p when it lies whole before @end, else NULL. */
static inline const struct nlattr *genl_attr_at(const void *p, const void *end)
{
	const struct nlattr *a = p;
	long room = (const char *)end - (const char *)p;

	if (room < NLA_HDRLEN || a->nla_len < NLA_HDRLEN || a->nla_len > room)
		return NULL;
	return a;
}

/* The attributes of message @nlh after the first @hdrlen bytes of its
 * payload (GENL_HDRLEN for a genetlink message), by type up to @max, in
 * @tb (NULL: absent). Returns 0, or -1 at a malformed one: then @tb is
 * all NULL.
 */
static inline int genl_parse(const struct nlmsghdr *nlh, size_t hdrlen,
			     const struct nlattr **tb, int max)
{
	const char *p = (const char *)NLMSG_DATA(nlh) + hdrlen;
	const char *end = (const char *)nlh + nlh->nlmsg_len;
	const struct nlattr *a;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	for (; (a = genl_attr_at(p, end)); p += NLA_ALIGN(a->nla_len))
		if ((a->nla_type & NLA_TYPE_MASK) <= max)
			tb[a->nla_type & NLA_TYPE_MASK] = a;
	if (end - p < NLA_HDRLEN)
		return 0;
	memset(tb, 0, sizeof(*tb) * (max + 1));
	return -1;
}

/* The first attribute of type @type in @nlh after @hdrlen, or NULL. */
static inline const struct nlattr *genl_find(const struct nlmsghdr *nlh,
					     size_t hdrlen, int type)
{
	const char *p = (const char *)NLMSG_DATA(nlh) + hdrlen;
	const char *end = (const char *)nlh + nlh->nlmsg_len;
	const struct nlattr *a;

	for (; (a = genl_attr_at(p, end)); p += NLA_ALIGN(a->nla_len))
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
	return NULL;
}

/* Integer attribute @a of 1, 2, 4 or 8 bytes in *@v: 0, or -1 when @a
 * is NULL or of another length.
 */
static inline int genl_uint(const struct nlattr *a, unsigned long long *v)
{
	union {
		uint8_t u8;
		uint16_t u16;
		uint32_t u32;
		uint64_t u64;
	} u;
	size_t len = a ? genl_len(a) : 0;

	if (len != 1 && len != 2 && len != 4 && len != 8)
		return -1;
	memcpy(&u, genl_data(a), len);
	*v = len == 1 ? u.u8 : len == 2 ? u.u16 : len == 4 ? u.u32 : u.u64;
	return 0;
}

/* For genl_transact(): the value of attribute @type (genl_uint()) of the
 * answers, the last one that has it.
 */
struct genl_val {
	int type;
	bool found;
	unsigned long long v;
};

static inline void genl_take(const struct nlmsghdr *nlh, void *arg)
{
	struct genl_val *val = arg;

	if (!genl_uint(genl_find(nlh, GENL_HDRLEN, val->type), &val->v))
		val->found = true;
}

/* The error of @nlh, an error ack or the NLMSG_DONE that ends a dump
 * (0 or -errno), and the attributes of its extended ack in @tb (all NULL
 * without one).
 */
static inline int genl_ext_ack(const struct nlmsghdr *nlh,
			       const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1])
{
	const struct nlmsgerr *e = NLMSG_DATA(nlh);
	size_t hdr = sizeof(int);
	int err;

	memcpy(&err, NLMSG_DATA(nlh), sizeof(err));
	memset(tb, 0, sizeof(*tb) * (NLMSGERR_ATTR_MAX + 1));
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		hdr = sizeof(*e);
		/* the request comes back whole, unless capped */
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED) &&
		    e->msg.nlmsg_len >= NLMSG_HDRLEN)
			hdr += NLMSG_ALIGN(e->msg.nlmsg_len) - NLMSG_HDRLEN;
	}
	if (err && (nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		genl_parse(nlh, hdr, tb, NLMSGERR_ATTR_MAX);
	return err;
}

/* What @nlh's extended ack says, in @buf: ": MESSAGE" when it has one,
 * then " (missing attribute N)" when it names one; "" without.
 */
static inline void genl_ext_ack_str(const struct nlmsghdr *nlh, char *buf,
				    size_t size)
{
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	unsigned long long miss;
	int len = 0;

	genl_ext_ack(nlh, tb);
	buf[0] = 0;
	if (tb[NLMSGERR_ATTR_MSG])
		len = snprintf(buf, size, ": %.*s",
			       (int)genl_len(tb[NLMSGERR_ATTR_MSG]),
			       (const char *)genl_data(tb[NLMSGERR_ATTR_MSG]));
	if (len >= 0 && (size_t)len < size &&
	    !genl_uint(tb[NLMSGERR_ATTR_MISS_TYPE], &miss))
		snprintf(buf + len, size - len, " (missing attribute %llu)",
			 miss);
}

/* ---- the socket ---- */

/* How long genl_transact() waits for each answer, in ms (-1: for ever);
 * it dies when none comes in time.
 */
static int genl_timeout_ms = -1;

/* Called by genl_transact() for each answer but the last. */
typedef void (*genl_cb)(const struct nlmsghdr *nlh, void *arg);

/*
 * Send @r on @fd, with a sequence number of its own, then read the
 * answers to it until its ack, or the NLMSG_DONE that ends a dump: @cb,
 * when not NULL, gets the others, with @arg. Returns the error of that
 * last message, 0 or -errno; with @last, the message itself (for
 * genl_ext_ack()), valid until the next call.
 */
static inline int genl_transact(int fd, struct genl_req *r, genl_cb cb,
				void *arg, const struct nlmsghdr **last)
{
	static char buf[65536] __attribute__((aligned(NLMSG_ALIGNTO)));
	static uint32_t seq;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct nlmsghdr *nlh;
	ssize_t n;
	int err;

	if (r->overflow)
		die("netlink request too long");
	r->nlh.nlmsg_seq = ++seq;
	if (sendto(fd, r, r->nlh.nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0)
		die("netlink send: %s", strerror(errno));
	for (;;) {
		if (genl_timeout_ms >= 0 && poll(&pfd, 1, genl_timeout_ms) != 1)
			die("no netlink answer within %d ms", genl_timeout_ms);
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("netlink recv: %s", strerror(errno));
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, n);
		     nlh = NLMSG_NEXT(nlh, n)) {
			if (nlh->nlmsg_seq != r->nlh.nlmsg_seq)
				continue;
			if (nlh->nlmsg_type != NLMSG_ERROR &&
			    nlh->nlmsg_type != NLMSG_DONE) {
				if (cb)
					cb(nlh, arg);
				continue;
			}
			if (last)
				*last = nlh;
			memcpy(&err, NLMSG_DATA(nlh), sizeof(err));
			return err;
		}
	}
}

/* A generic netlink socket with extended acks, capped. */
static inline int genl_open(void)
{
	int fd, one = 1;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		die("netlink socket: %s", strerror(errno));
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return fd;
}

/* The id of family @name, asked on @fd; dies when the kernel has none. */
static inline uint16_t genl_family(int fd, const char *name)
{
	struct genl_val id = { .type = CTRL_ATTR_FAMILY_ID };
	static struct genl_req r;

	genl_req_init(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	genl_put(&r, CTRL_ATTR_FAMILY_NAME, name, strlen(name) + 1);
	if (genl_transact(fd, &r, genl_take, &id, NULL))
		die("this kernel has no \"%s\" genetlink family", name);
	if (!id.found || !id.v || id.v > UINT16_MAX)
		die("family lookup: no id for \"%s\"", name);
	return id.v;
}

#endif
