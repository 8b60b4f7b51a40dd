// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-netlink: a bounded, deterministic fuzzer of the "netdev" generic
 * netlink family (every command number, do and dump) and of the ethtool
 * netlink commands our patches changed (rings and channels, get and set).
 *
 * Each request is built from the seed alone: a random command (mostly
 * the four the family implements, also every other number), random
 * netlink flags (with and without NLM_F_DUMP, NLM_F_ACK, reserved bits),
 * random genetlink header bytes and random attributes: any type (0, the
 * policy's maximum and beyond), any length (0, odd, truncated, longer
 * than the message), nested to random depth with NLA_F_NESTED set or
 * not. Half of the requests are shaped like real ones (the device's
 * ifindex, queue ids, page-pool ids, ethtool headers, ring sizes and
 * tcp-data-split values, channel counts, bind-rx of real udmabufs to
 * random queue lists, bind-tx of them) so that the deep paths run: binds that work and
 * every refusal. Sockets are closed and reopened at random, which must
 * undo every binding they made. The random numbers drawn never depend on
 * the kernel's answers, so the requests are the same on every run.
 *
 * What the request alone decides is checked exactly (see expect()): no
 * answer, an ack of 0, or EINVAL or EOPNOTSUPP from genetlink's own
 * checks. A request that reaches a handler must succeed (a reply, or
 * for a dump NLMSG_DONE) or fail with an errno that command documents
 * (handler_errno()). Every reply must be well formed: data messages of
 * the family and command with attributes that parse, error acks echoing
 * the request with valid extack TLVs, dumps that end with NLMSG_DONE
 * within 10 seconds, an ack for every NLM_F_ACK request read. After each
 * socket that bound something closes, and at the end, no queue of the
 * device may be bound and no page pool may draw from a dma-buf.
 *
 * Prints its seed and iteration count first; at the end the counts the
 * seed decides (requests, ethtool ones, dumps, sockets, and how many the
 * request alone decides, how many reach each command's handler), then
 * what the kernel made of them. On a failure, the iteration, the reason
 * and the request in hex, then exits 1. Replay with the same --seed and
 * --iterations (the requests before the failing one set the kernel's
 * state it met).
 *
 * Exit status: 0 pass, 1 failure, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netdev.h>

#include "../lib/pattern.h"
#include "../lib/fuzz.h"

#define PROG		"fuzz-netlink"

#include "../lib/die.h"
#include "../lib/genl.h"
#include "../lib/udmabuf.h"
#define MSG_MAX		2048
#define RX_MAX		(256 * 1024)
#define MAX_DEPTH	4
#define DUMP_TIMEOUT_MS	10000

/* ---- the request ---- */

static uint8_t req[MSG_MAX + 64] __attribute__((aligned(8)));
static size_t req_len;		/* bytes built */
static size_t send_len;		/* bytes sent */
static uint64_t iter;
static uint64_t seed, iterations;

static void dump_req(void)
{
	size_t i;

	fprintf(stderr, PROG ": request (%zu bytes sent):", send_len);
	for (i = 0; i < send_len; i++)
		fprintf(stderr, "%s%02x", i % 32 ? "" : "\n  ", req[i]);
	fputc('\n', stderr);
}

static void __attribute__((format(printf, 1, 2), noreturn)) fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);		/* what was printed comes first */
	fprintf(stderr, PROG ": FAIL at iteration %" PRIu64 " (replay: --seed %"
		PRIu64 " --iterations %" PRIu64 "): ", iter, seed, iter + 1);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	dump_req();
	exit(1);
}

/* ---- what the fuzzer knows about the machine ---- */

static uint32_t ifindex;	/* the device under test */
static const char *ifname;
static int dmabufs[3];		/* udmabufs: 8M, 4M, one page */
static int memfd;		/* an fd that is not a dma-buf */
static uint16_t netdev_id, ethtool_id;

struct nl {
	int fd;
	uint32_t portid;
	bool cap_ack;
};

/* ---- attribute building ---- */

/* Append an attribute header of @type with @len payload bytes at @at;
 * returns the offset after it (aligned), or 0 when it does not fit. Not
 * inlined: GCC then warns of writes at offsets that cannot happen.
 */
static __attribute__((noinline)) size_t put(size_t at, size_t end,
					    uint16_t type, const void *data,
					    size_t len)
{
	struct nlattr *a = (struct nlattr *)(req + at);

	if (at + NLA_ALIGN(NLA_HDRLEN + len) > end)
		return 0;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy(req + at + NLA_HDRLEN, data, len);
	memset(req + at + NLA_HDRLEN + len, 0,
	       NLA_ALIGN(NLA_HDRLEN + len) - NLA_HDRLEN - len);
	return at + NLA_ALIGN(NLA_HDRLEN + len);
}

static size_t put_u32(size_t at, size_t end, uint16_t type, uint32_t v)
{
	return put(at, end, type, &v, 4) ?: at;
}

static size_t put_u8(size_t at, size_t end, uint16_t type, uint8_t v)
{
	return put(at, end, type, &v, 1) ?: at;
}

/* An interesting 32-bit value. */
static uint32_t some_u32(void)
{
	switch (below(12)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return ifindex;
	case 3: return below(8);
	case 4: return UINT32_MAX;
	case 5: return 0x7fffffff;
	case 6: return 0x80000000;
	case 7: return dmabufs[below(3)];
	case 8: return ifindex + 1 + below(4);
	case 9: return below(4096);
	default: return rnd();
	}
}

static size_t gen_attrs(size_t at, size_t end, int depth, int max);

/* One random attribute of a list whose policy knows types 1..@max. */
static size_t gen_attr(size_t at, size_t end, int depth, int max)
{
	uint8_t data[64];
	uint16_t type;
	size_t len, next, start;
	struct nlattr *a;

	switch (below(8)) {
	case 0: type = 0; break;
	case 1: type = max + 1 + below(3); break;
	case 2: type = below(0x4000); break;
	default: type = 1 + below(max ? max : 1); break;
	}
	if (chance(10))
		type |= NLA_F_NET_BYTEORDER;

	if (depth < MAX_DEPTH && chance(25)) {
		/* nested, flag set or not */
		if (chance(70))
			type |= NLA_F_NESTED;
		start = at;
		next = put(at, end, type, NULL, 0);
		if (!next)
			return at;
		next = gen_attrs(next, end, depth + 1, max);
		a = (struct nlattr *)(req + start);
		a->nla_len = next - start;
		return next;
	}

	switch (below(8)) {
	case 0: len = 0; break;
	case 1: len = 1; break;
	case 2: len = 2; break;
	case 3: len = 8; break;
	case 4: len = 1 + below(sizeof(data)); break;
	default: len = 4; break;
	}
	if (len == 4) {
		uint32_t v = some_u32();

		memcpy(data, &v, 4);
	} else if (len == 8) {
		uint64_t v = chance(50) ? some_u32() : rnd();

		memcpy(data, &v, 8);
	} else {
		for (size_t i = 0; i < len; i++)
			data[i] = chance(30) ? 0 : rnd();
	}
	next = put(at, end, type, data, len);
	if (!next)
		return at;
	a = (struct nlattr *)(req + at);
	/* a length that lies: below the header, or past the end */
	if (chance(4))
		a->nla_len = below(NLA_HDRLEN);
	else if (chance(4))
		a->nla_len += 1 + below(64);
	return next;
}

static size_t gen_attrs(size_t at, size_t end, int depth, int max)
{
	unsigned int n = below(depth ? 4 : 6);

	while (n--)
		at = gen_attr(at, end, depth, max);
	return at;
}

/* ---- requests shaped like real ones ---- */

static uint32_t some_ifindex(void)
{
	switch (below(8)) {
	case 0: return 1;		/* lo: no queue management */
	case 1: return 0;
	case 2: return ifindex + 1 + below(100);
	case 3: return rnd();
	default: return ifindex;
	}
}

static size_t queue_nest(size_t at, size_t end)
{
	size_t start = at, next;

	next = put(at, end, NETDEV_A_DMABUF_QUEUES |
		   (chance(90) ? NLA_F_NESTED : 0), NULL, 0);
	if (!next)
		return at;
	if (chance(92))
		next = put_u32(next, end, NETDEV_A_QUEUE_ID,
			       chance(85) ? below(6) : some_u32());
	if (chance(92))
		next = put_u32(next, end, NETDEV_A_QUEUE_TYPE,
			       chance(85) ? NETDEV_QUEUE_TYPE_RX : below(4));
	if (chance(10))
		next = gen_attr(next, end, MAX_DEPTH - 1, NETDEV_A_QUEUE_MAX);
	((struct nlattr *)(req + start))->nla_len = next - start;
	return next;
}

static size_t shaped_netdev(size_t at, size_t end, uint8_t cmd)
{
	unsigned int i, n;
	uint32_t fd;

	switch (cmd) {
	case NETDEV_CMD_DEV_GET:
		if (chance(80))
			at = put_u32(at, end, NETDEV_A_DEV_IFINDEX, some_ifindex());
		break;
	case NETDEV_CMD_QUEUE_GET:
		if (chance(85))
			at = put_u32(at, end, NETDEV_A_QUEUE_IFINDEX, some_ifindex());
		if (chance(80))
			at = put_u32(at, end, NETDEV_A_QUEUE_TYPE, below(3));
		if (chance(80))
			at = put_u32(at, end, NETDEV_A_QUEUE_ID,
				     chance(80) ? below(6) : some_u32());
		break;
	case NETDEV_CMD_PAGE_POOL_GET:
		if (chance(85)) {
			uint64_t id = chance(70) ? below(64) :
				      chance(50) ? (uint64_t)UINT32_MAX + below(3) : rnd();
			size_t len = chance(60) ? 4 : chance(70) ? 8 : below(12);

			at = put(at, end, NETDEV_A_PAGE_POOL_ID, &id, len) ?: at;
		}
		break;
	case NETDEV_CMD_BIND_TX:
		if (chance(50)) {
			/* well formed: our device and a dma-buf */
			at = put_u32(at, end, NETDEV_A_DMABUF_IFINDEX, ifindex);
			return put_u32(at, end, NETDEV_A_DMABUF_FD,
				       dmabufs[below(2)]);
		}
		break;
	case NETDEV_CMD_BIND_RX:
		if (chance(50)) {
			/* well formed: our device, a dma-buf, one or two rx
			 * queues that exist (unless a channels-set removed
			 * them); bound already or not
			 */
			at = put_u32(at, end, NETDEV_A_DMABUF_IFINDEX, ifindex);
			at = put_u32(at, end, NETDEV_A_DMABUF_FD, dmabufs[below(2)]);
			n = 1 + below(2);
			for (i = 0; i < n; i++) {
				size_t start = at;

				at = put(at, end, NETDEV_A_DMABUF_QUEUES | NLA_F_NESTED,
					 NULL, 0) ?: at;
				at = put_u32(at, end, NETDEV_A_QUEUE_ID, below(4));
				at = put_u32(at, end, NETDEV_A_QUEUE_TYPE,
					     NETDEV_QUEUE_TYPE_RX);
				((struct nlattr *)(req + start))->nla_len = at - start;
			}
			/* an rx page size: powers of two from a page (whose
			 * segments may not fit), or anything
			 */
			if (chance(25))
				at = put_u32(at, end, NETDEV_A_DMABUF_RX_PAGE_SIZE,
					     chance(80) ? 4096U << below(6) :
					     some_u32());
			return at;
		}
		if (chance(92))
			at = put_u32(at, end, NETDEV_A_DMABUF_IFINDEX, some_ifindex());
		if (chance(92)) {
			switch (below(10)) {
			case 0: fd = memfd; break;
			case 1: fd = 0; break;
			case 2: fd = UINT32_MAX; break;
			case 3: fd = 1000 + below(1000); break;
			case 4: fd = dmabufs[2]; break;
			default: fd = dmabufs[below(2)]; break;
			}
			at = put_u32(at, end, NETDEV_A_DMABUF_FD, fd);
		}
		n = chance(90) ? 1 + below(4) : 0;
		for (i = 0; i < n; i++)
			at = queue_nest(at, end);
		break;
	}
	if (chance(20))
		at = gen_attr(at, end, 0, NETDEV_A_DMABUF_MAX);
	return at;
}

static size_t header_nest(size_t at, size_t end, uint16_t type)
{
	size_t start = at, next;

	next = put(at, end, type | (chance(90) ? NLA_F_NESTED : 0), NULL, 0);
	if (!next)
		return at;
	switch (below(6)) {
	case 0:
		next = put(next, end, ETHTOOL_A_HEADER_DEV_NAME, ifname,
			   strlen(ifname) + 1) ?: next;
		break;
	case 1:
		break;
	default:
		next = put_u32(next, end, ETHTOOL_A_HEADER_DEV_INDEX,
			       some_ifindex());
		break;
	}
	if (chance(20))
		next = put_u32(next, end, ETHTOOL_A_HEADER_FLAGS, below(16));
	((struct nlattr *)(req + start))->nla_len = next - start;
	return next;
}

static uint32_t ring_size(void)
{
	static const uint32_t sizes[] = { 0, 1, 2, 63, 64, 256, 512, 1024,
					  4096, 65536, UINT32_MAX };

	return sizes[below(sizeof(sizes) / sizeof(sizes[0]))];
}

static size_t shaped_ethtool(size_t at, size_t end, uint8_t cmd)
{
	unsigned int i, n;

	if (chance(92))
		at = header_nest(at, end, 1);	/* ..._HEADER is 1 in both */
	if (cmd == ETHTOOL_MSG_RINGS_SET) {
		n = below(4);
		for (i = 0; i < n; i++) {
			switch (below(6)) {
			case 0: at = put_u32(at, end, ETHTOOL_A_RINGS_RX, ring_size()); break;
			case 1: at = put_u32(at, end, ETHTOOL_A_RINGS_TX, ring_size()); break;
			case 2: at = put_u32(at, end, ETHTOOL_A_RINGS_RX_BUF_LEN, ring_size()); break;
			case 3: at = put_u32(at, end, ETHTOOL_A_RINGS_CQE_SIZE, ring_size()); break;
			default:
				/* 0 default, 1 off, 2 on; 3 and up are out of range */
				at = put_u8(at, end, ETHTOOL_A_RINGS_TCP_DATA_SPLIT,
					    chance(60) ? ETHTOOL_TCP_DATA_SPLIT_ENABLED :
					    chance(80) ? below(3) : below(256));
				break;
			}
		}
	} else if (cmd == ETHTOOL_MSG_CHANNELS_SET) {
		n = below(3);
		for (i = 0; i < n; i++)
			at = put_u32(at, end, ETHTOOL_A_CHANNELS_RX_COUNT + below(4),
				     chance(80) ? below(9) : some_u32());
	}
	if (chance(20))
		at = gen_attr(at, end, 0, cmd <= ETHTOOL_MSG_RINGS_SET ?
			      ETHTOOL_A_RINGS_MAX : ETHTOOL_A_CHANNELS_MAX);
	return at;
}

/* ---- reply checking ---- */

#define NERR 134
static uint64_t err_count[NERR];

static void count_errno(int err, const char *where)
{
	if (err > 0)
		fail("%s: positive error %d", where, err);
	if (err <= -NERR)
		fail("%s: errno %d", where, -err);
	if (err)
		err_count[-err]++;
}

/* ---- what the kernel must answer ---- */

/* What the request alone decides, before any handler runs (in the order
 * of netlink_rcv_skb() and genl_family_rcv_msg()):
 *   SILENT   a length below the header or past what was sent: skipped,
 *            no answer; not NLM_F_REQUEST and no NLM_F_ACK: no answer
 *   ACK      not NLM_F_REQUEST, with NLM_F_ACK: an ack of 0
 *   ERR      *err exactly: EINVAL for a length below the genetlink
 *            header, and (for commands at or above the family's
 *            resv_start_op: all of netdev's, none of the ethtool
 *            commands fuzzed but the unknown ones) for a reserved byte
 *            that is not 0 or a flag other than REQUEST, ACK, ECHO and
 *            DUMP; EOPNOTSUPP for an unknown command or a dump of a
 *            command without one (bind-rx, rings-set, channels-set)
 *   HANDLER  the command's handler answers: success, or an errno of
 *            handler_errnos()
 * We run as root: never EPERM (bind-rx is GENL_ADMIN_PERM).
 */
enum expect { EXP_SILENT, EXP_ACK, EXP_ERR, EXP_HANDLER };

static bool has_op(bool ethtool, uint8_t cmd, bool dump)
{
	if (ethtool)
		return cmd == ETHTOOL_MSG_RINGS_GET || cmd == ETHTOOL_MSG_CHANNELS_GET ||
		       (!dump && (cmd == ETHTOOL_MSG_RINGS_SET ||
				  cmd == ETHTOOL_MSG_CHANNELS_SET));
	return cmd == NETDEV_CMD_DEV_GET || cmd == NETDEV_CMD_QUEUE_GET ||
	       cmd == NETDEV_CMD_PAGE_POOL_GET ||
	       (!dump && (cmd == NETDEV_CMD_BIND_RX ||
			  cmd == NETDEV_CMD_BIND_TX));
}

static enum expect expect(const struct nlmsghdr *nlh, size_t sent, bool ethtool,
			  int *err)
{
	const struct genlmsghdr *g = NLMSG_DATA(nlh);
	uint16_t flags = nlh->nlmsg_flags;
	bool dump = (flags & NLM_F_DUMP) == NLM_F_DUMP;

	*err = 0;
	if (nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > sent)
		return EXP_SILENT;
	if (!(flags & NLM_F_REQUEST))
		return flags & NLM_F_ACK ? EXP_ACK : EXP_SILENT;
	*err = -EINVAL;
	if (nlh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return EXP_ERR;
	if (!ethtool || g->cmd >= ETHTOOL_MSG_MODULE_GET + 1) {
		if (dump)
			flags &= ~NLM_F_DUMP;
		if (g->reserved || (flags & ~(NLM_F_REQUEST | NLM_F_ACK | NLM_F_ECHO)))
			return EXP_ERR;
	}
	*err = -EOPNOTSUPP;
	if (!has_op(ethtool, g->cmd, dump))
		return EXP_ERR;
	*err = 0;
	return EXP_HANDLER;
}

/* The errnos a handler may answer with, besides the policy's EINVAL
 * (malformed, unknown or missing attribute; NLA_F_NESTED wrong; ethtool:
 * no header) and ERANGE (a value or, in ethtool's liberal parse, a
 * length out of range): docs/design.md 1.1 and net/core/netdev-genl.c,
 * net/core/devmem.c; net/ethtool/{netlink,rings,channels}.c.
 *   dev-get        ENODEV   no such device in the netns
 *   queue-get      ENODEV; ENOENT the device is down (lo here)
 *   page-pool-get  ENOENT   no such pool
 *   bind-rx        ENODEV; EOPNOTSUPP no queue management (lo) or the
 *                  driver opts out; EEXIST queue already bound; EBADF
 *                  not an fd (a file that is not a dma-buf: EINVAL)
 *   bind-tx        ENODEV; EOPNOTSUPP no netmem tx (lo); EBADF not an fd
 *   ethtool        ENODEV no such device; EOPNOTSUPP unsupported header
 *                  flags or setting
 */
static bool handler_errno(bool ethtool, uint8_t cmd, int err)
{
	if (err == -EINVAL || err == -ERANGE)
		return true;
	if (ethtool)
		return err == -ENODEV || err == -EOPNOTSUPP;
	switch (cmd) {
	case NETDEV_CMD_DEV_GET:
		return err == -ENODEV;
	case NETDEV_CMD_QUEUE_GET:
		return err == -ENODEV || err == -ENOENT;
	case NETDEV_CMD_PAGE_POOL_GET:
		return err == -ENOENT;
	case NETDEV_CMD_BIND_RX:
		return err == -ENODEV || err == -EOPNOTSUPP || err == -EEXIST ||
		       err == -EBADF;
	case NETDEV_CMD_BIND_TX:
		return err == -ENODEV || err == -EOPNOTSUPP || err == -EBADF;
	}
	return false;
}

/* Attributes of [p, end): each within bounds; nested ones recursively. */
static void check_attrs(const uint8_t *p, const uint8_t *end, int depth,
			const char *what)
{
	while (p < end) {
		const struct nlattr *a = (const struct nlattr *)p;

		if (end - p < NLA_HDRLEN)
			fail("%s: %td stray bytes after the attributes", what, end - p);
		if (a->nla_len < NLA_HDRLEN || a->nla_len > end - p)
			fail("%s: attribute type %u of length %u in %td bytes",
			     what, a->nla_type, a->nla_len, end - p);
		if ((a->nla_type & NLA_F_NESTED) && depth < 8)
			check_attrs(p + NLA_HDRLEN, p + a->nla_len, depth + 1, what);
		if (NLA_ALIGN(a->nla_len) > end - p)
			break;		/* the last one need not be padded */
		p += NLA_ALIGN(a->nla_len);
	}
}

/* The extack TLVs of an error or DONE message. */
static void check_ext_tlvs(const uint8_t *p, const uint8_t *end)
{
	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const struct nlattr *)p;
		const uint8_t *d = p + NLA_HDRLEN;
		size_t len;
		uint32_t v;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > end - p)
			fail("ack TLV of length %u in %td bytes", a->nla_len, end - p);
		len = a->nla_len - NLA_HDRLEN;
		switch (a->nla_type & NLA_TYPE_MASK) {
		case NLMSGERR_ATTR_MSG:
			if (!len || d[len - 1] || strlen((const char *)d) + 1 != len)
				fail("ack message is not one NUL-terminated string");
			break;
		case NLMSGERR_ATTR_OFFS:
		case NLMSGERR_ATTR_MISS_NEST:
			if (len != 4)
				fail("ack offset TLV of %zu bytes", len);
			memcpy(&v, d, 4);
			if (v < NLMSG_HDRLEN || v >= send_len)
				fail("ack TLV %u points at offset %u of a %zu-byte request",
				     a->nla_type, v, send_len);
			break;
		case NLMSGERR_ATTR_MISS_TYPE:
			if (len != 4)
				fail("missing-type TLV of %zu bytes", len);
			break;
		case NLMSGERR_ATTR_POLICY:
			check_attrs(d, d + len, 1, "ack policy TLV");
			break;
		default:
			fail("unknown ack TLV type %u", a->nla_type);
		}
		p += NLA_ALIGN(a->nla_len);
	}
}

struct result {
	int err;		/* of the ack or DONE */
	bool acked, done;
	unsigned int data;	/* data messages */
	bool bound;		/* a bind-rx reply with an id */
};

/* One message of a reply; @dump: the request was a dump. */
static void check_msg(const struct nl *nl, const struct nlmsghdr *nlh,
		      uint16_t family, uint8_t cmd, bool dump,
		      struct result *r)
{
	const struct nlmsghdr *q = (const struct nlmsghdr *)req;
	const uint8_t *p = (const uint8_t *)nlh;

	if (nlh->nlmsg_seq != q->nlmsg_seq)
		fail("reply of seq %u to request seq %u", nlh->nlmsg_seq, q->nlmsg_seq);
	if (nlh->nlmsg_pid != nl->portid)
		fail("reply to port %u, ours is %u", nlh->nlmsg_pid, nl->portid);
	if (r->acked || r->done)
		fail("message of type %u after the request's ack or DONE",
		     nlh->nlmsg_type);

	if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nlh);
		size_t off = NLMSG_HDRLEN + sizeof(*e);

		if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
			fail("error message of %u bytes", nlh->nlmsg_len);
		if (memcmp(&e->msg, q, sizeof(*q)))
			fail("error message does not echo the request's header");
		if (nlh->nlmsg_flags & NLM_F_CAPPED) {
			if (!nl->cap_ack && e->error)
				fail("capped ack on a socket without NETLINK_CAP_ACK");
		} else if (e->error) {
			size_t body = q->nlmsg_len - sizeof(*q);

			if (off + body > nlh->nlmsg_len)
				fail("error message too short for the echoed request");
			if (memcmp(p + off, req + sizeof(*q), body))
				fail("error message echoes a different request");
			off += NLMSG_ALIGN(body);
		}
		if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
			check_ext_tlvs(p + off, p + nlh->nlmsg_len);
		count_errno(e->error, "error ack");
		r->err = e->error;
		r->acked = true;
		return;
	}
	if (nlh->nlmsg_type == NLMSG_DONE) {
		int err;

		if (!dump)
			fail("NLMSG_DONE for a request that is not a dump");
		if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(int)))
			fail("DONE of %u bytes", nlh->nlmsg_len);
		memcpy(&err, NLMSG_DATA(nlh), sizeof(err));
		if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
			check_ext_tlvs(p + NLMSG_LENGTH(sizeof(int)),
				       p + nlh->nlmsg_len);
		count_errno(err, "DONE");
		r->err = err;
		r->done = true;
		return;
	}
	if (nlh->nlmsg_type != family)
		fail("message of type %u to a request of family %u",
		     nlh->nlmsg_type, family);
	if (nlh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		fail("data message of %u bytes", nlh->nlmsg_len);
	if (dump != !!(nlh->nlmsg_flags & NLM_F_MULTI))
		fail("data message %s NLM_F_MULTI", dump ? "without" : "with");
	{
		const struct genlmsghdr *g = NLMSG_DATA(nlh);
		bool ok;

		if (family == netdev_id)
			ok = g->cmd == cmd && (cmd == NETDEV_CMD_DEV_GET ||
					       cmd == NETDEV_CMD_QUEUE_GET ||
					       cmd == NETDEV_CMD_PAGE_POOL_GET ||
					       cmd == NETDEV_CMD_BIND_RX ||
					       cmd == NETDEV_CMD_BIND_TX);
		else
			ok = (cmd == ETHTOOL_MSG_RINGS_GET &&
			      g->cmd == ETHTOOL_MSG_RINGS_GET_REPLY) ||
			     (cmd == ETHTOOL_MSG_CHANNELS_GET &&
			      g->cmd == ETHTOOL_MSG_CHANNELS_GET_REPLY);
		if (!ok)
			fail("data message of command %u to command %u", g->cmd, cmd);
		if (family == netdev_id && (cmd == NETDEV_CMD_BIND_RX ||
					    cmd == NETDEV_CMD_BIND_TX)) {
			const struct nlattr *a = (const void *)(p + NLMSG_LENGTH(GENL_HDRLEN));

			if (nlh->nlmsg_len != NLMSG_LENGTH(GENL_HDRLEN) + NLA_HDRLEN + 4 ||
			    a->nla_type != NETDEV_A_DMABUF_ID || a->nla_len != NLA_HDRLEN + 4)
				fail("bind reply is not one 4-byte id");
			r->bound = cmd == NETDEV_CMD_BIND_RX;
		}
	}
	check_attrs(p + NLMSG_LENGTH(GENL_HDRLEN), p + nlh->nlmsg_len, 0,
		    "data message");
	r->data++;
}

static uint8_t rxbuf[RX_MAX] __attribute__((aligned(8)));

/* Read everything the request caused. A request the kernel acts on at
 * once (not a dump) has its answer queued when sendto() returns; a dump
 * must end with DONE or an error within DUMP_TIMEOUT_MS.
 */
static void collect(const struct nl *nl, uint16_t family, uint8_t cmd,
		    bool dump, struct result *r)
{
	struct pollfd pfd = { .fd = nl->fd, .events = POLLIN };
	ssize_t n;

	memset(r, 0, sizeof(*r));
	for (;;) {
		if (dump && !r->done && !r->acked) {
			int pr = poll(&pfd, 1, DUMP_TIMEOUT_MS);

			if (pr < 0)
				die("poll: %s", strerror(errno));
			if (!pr)
				fail("no end of the dump within %d ms", DUMP_TIMEOUT_MS);
		}
		n = recv(nl->fd, rxbuf, sizeof(rxbuf), MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN) {
			if (dump && !r->done && !r->acked)
				continue;
			return;
		}
		if (n < 0)
			fail("recv: %s", strerror(errno));
		if (!n)
			fail("recv returned 0");
		for (struct nlmsghdr *nlh = (struct nlmsghdr *)rxbuf;;
		     nlh = NLMSG_NEXT(nlh, n)) {
			if (!n)
				break;
			if (!NLMSG_OK(nlh, n))
				fail("malformed message: %zd bytes left, nlmsg_len %u",
				     n, n >= 4 ? nlh->nlmsg_len : 0);
			check_msg(nl, nlh, family, cmd, dump, r);
		}
	}
}

/* ---- sockets ---- */

static void nl_send_raw(const struct nl *nl, const void *buf, size_t len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (sendto(nl->fd, buf, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		fail("sendto: %s", strerror(errno));
}

static void nl_open(struct nl *nl, bool cap_ack)
{
	struct sockaddr_nl sa;
	socklen_t salen = sizeof(sa);
	int one = 1, size = 4 << 20;

	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		die("netlink socket: %s", strerror(errno));
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	nl->cap_ack = cap_ack;
	if (cap_ack)
		setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(nl->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	/* bind to get a port id to check replies against */
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(nl->fd, (struct sockaddr *)&sa, &salen))
		die("netlink bind: %s", strerror(errno));
	nl->portid = sa.nl_pid;
}

static uint32_t seq;

/* ---- the kernel's state ---- */

struct state {
	unsigned int bound_queues, dmabuf_pools, queues, pools;
};

static void queue_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct state *st = arg;

	st->queues++;
	if (genl_find(nlh, GENL_HDRLEN, NETDEV_A_QUEUE_DMABUF))
		st->bound_queues++;
}

static void pool_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct state *st = arg;

	st->pools++;
	if (genl_find(nlh, GENL_HDRLEN, NETDEV_A_PAGE_POOL_DMABUF))
		st->dmabuf_pools++;
}

/* No queue bound, no pool of device memory: what the kernel must show
 * once every socket that bound something is closed.
 */
static void check_unbound(const struct nl *chk, const char *when)
{
	static struct genl_req r;
	struct state st = {};
	int err;

	genl_req_init(&r, netdev_id, NETDEV_CMD_QUEUE_GET, NLM_F_DUMP);
	err = genl_transact(chk->fd, &r, queue_cb, &st, NULL);
	if (err)
		fail("%s: queue-get dump: %s", when, strerror(-err));
	genl_req_init(&r, netdev_id, NETDEV_CMD_PAGE_POOL_GET, NLM_F_DUMP);
	err = genl_transact(chk->fd, &r, pool_cb, &st, NULL);
	if (err)
		fail("%s: page-pool-get dump: %s", when, strerror(-err));
	if (st.bound_queues)
		fail("%s: %u queues still bound to a dma-buf", when, st.bound_queues);
	if (st.dmabuf_pools)
		fail("%s: %u page pools still draw from a dma-buf", when,
		     st.dmabuf_pools);
}

/* ---- set-up ---- */

static void usage(FILE *f, int status)
{
	fprintf(f,
"Usage: " PROG " --ifindex N --ifname NAME [--seed N] [--iterations N]\n"
"\n"
"Send N (default 2000) random requests of seed S (default 1) to the netdev\n"
"family (all commands, do and dump) and to ethtool's rings and channels\n"
"commands, about the device IFINDEX/NAME of this network namespace (it\n"
"should support device memory: bind-rx then works on some requests).\n"
"Checks every reply and that closing a socket undoes its bindings.\n"
"Exit status: 0 pass, 1 failure (with the request that failed), 2 usage.\n");
	exit(status);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", 1, NULL, 's' }, { "iterations", 1, NULL, 'n' },
		{ "ifindex", 1, NULL, 'i' }, { "ifname", 1, NULL, 'I' },
		{ "help", 0, NULL, 'h' }, {}
	};
	static const uint8_t netdev_ops[] = {
		NETDEV_CMD_DEV_GET, NETDEV_CMD_QUEUE_GET, NETDEV_CMD_PAGE_POOL_GET,
		NETDEV_CMD_BIND_RX, NETDEV_CMD_BIND_TX,
	};
	static const uint8_t ethtool_cmds[] = {
		ETHTOOL_MSG_RINGS_GET, ETHTOOL_MSG_RINGS_SET,
		ETHTOOL_MSG_CHANNELS_GET, ETHTOOL_MSG_CHANNELS_SET,
	};
	uint64_t requests = 0, dumps = 0, answered = 0, errors = 0, silent = 0;
	uint64_t bind_tries = 0, binds = 0, sockets = 0, ethtool_reqs = 0;
	uint64_t exp_silent = 0, exp_ack = 0, exp_err = 0, exp_handler = 0;
	static uint64_t to_handler[2][256], handler_ok[2][256];
	static const struct { bool ethtool; uint8_t cmd; const char *name; } ops[] = {
		{ 0, NETDEV_CMD_DEV_GET, "dev-get" },
		{ 0, NETDEV_CMD_QUEUE_GET, "queue-get" },
		{ 0, NETDEV_CMD_PAGE_POOL_GET, "page-pool-get" },
		{ 0, NETDEV_CMD_BIND_RX, "bind-rx" },
		{ 0, NETDEV_CMD_BIND_TX, "bind-tx" },
		{ 1, ETHTOOL_MSG_RINGS_GET, "rings-get" },
		{ 1, ETHTOOL_MSG_RINGS_SET, "rings-set" },
		{ 1, ETHTOOL_MSG_CHANNELS_GET, "channels-get" },
		{ 1, ETHTOOL_MSG_CHANNELS_SET, "channels-set" },
	};
	bool sock_bound = false;
	struct nl nl, chk;
	int c;

	seed = 1;
	iterations = 2000;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': iterations = strtoull(optarg, NULL, 0); break;
		case 'i': ifindex = strtoul(optarg, NULL, 0); break;
		case 'I': ifname = optarg; break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc || !ifindex || !ifname)
		usage(stderr, 2);
	printf(PROG ": seed %" PRIu64 " iterations %" PRIu64 "\n", seed, iterations);
	fflush(stdout);
	fuzz_rng = seed;

	dmabufs[0] = udmabuf_create(8 << 20);
	dmabufs[1] = udmabuf_create(4 << 20);
	dmabufs[2] = udmabuf_create(4096);
	memfd = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
	if (memfd < 0)
		die("memfd_create: %s", strerror(errno));

	nl_open(&chk, false);
	genl_timeout_ms = DUMP_TIMEOUT_MS;	/* the checks' answers */
	netdev_id = genl_family(chk.fd, NETDEV_FAMILY_NAME);
	ethtool_id = genl_family(chk.fd, ETHTOOL_GENL_NAME);
	nl_open(&nl, chance(50));
	sockets++;

	for (iter = 0; iter < iterations; iter++) {
		struct nlmsghdr *nlh = (struct nlmsghdr *)req;
		struct genlmsghdr *g = (struct genlmsghdr *)(req + NLMSG_HDRLEN);
		bool ethtool = chance(25), dump, shaped = chance(60);
		uint16_t family = ethtool ? ethtool_id : netdev_id, flags;
		struct result r;
		enum expect exp;
		uint8_t cmd;
		int want;

		/* a new socket now and then: closing one unbinds all it bound */
		if (chance(4)) {
			close(nl.fd);
			if (sock_bound)
				check_unbound(&chk, "after the socket that bound closed");
			sock_bound = false;
			nl_open(&nl, chance(50));
			sockets++;
		}

		if (ethtool)
			cmd = chance(95) ? ethtool_cmds[below(4)] : 100 + below(156);
		else if (chance(60))
			cmd = netdev_ops[below(5)];		/* the implemented ones */
		else if (chance(80))
			cmd = 1 + below(NETDEV_CMD_MAX);	/* every command */
		else
			cmd = chance(50) ? 0 : NETDEV_CMD_MAX + 1 + below(242);
		if (!ethtool && shaped && chance(40))
			cmd = NETDEV_CMD_BIND_RX;

		flags = NLM_F_REQUEST;
		if (chance(70))
			flags |= NLM_F_ACK;
		if (chance(35))
			flags |= NLM_F_DUMP;
		else if (chance(10))
			flags |= chance(50) ? NLM_F_ROOT : NLM_F_MATCH;
		if (chance(5))
			flags |= NLM_F_ECHO;
		if (chance(3))
			flags &= ~NLM_F_REQUEST;
		if (chance(3))
			flags |= rnd() & 0xfe00;

		memset(req, 0, sizeof(req));
		nlh->nlmsg_type = family;
		nlh->nlmsg_flags = flags;
		nlh->nlmsg_seq = ++seq;
		nlh->nlmsg_pid = chance(95) ? 0 : rnd();
		g->cmd = cmd;
		g->version = chance(90) ? 1 : below(256);
		g->reserved = chance(95) ? 0 : rnd();
		req_len = NLMSG_LENGTH(GENL_HDRLEN);
		if (shaped)
			req_len = ethtool ? shaped_ethtool(req_len, MSG_MAX, cmd) :
					    shaped_netdev(req_len, MSG_MAX, cmd);
		else
			req_len = gen_attrs(req_len, MSG_MAX, 0, 5);
		nlh->nlmsg_len = req_len;
		send_len = req_len;
		/* a message whose length lies: shorter than its headers, cut
		 * inside its attributes, or longer than what is sent
		 */
		if (chance(3)) {
			nlh->nlmsg_len = below(NLMSG_LENGTH(GENL_HDRLEN));
			send_len = nlh->nlmsg_len < NLMSG_HDRLEN ? NLMSG_HDRLEN :
								  nlh->nlmsg_len;
		} else if (chance(3) && req_len > NLMSG_LENGTH(GENL_HDRLEN)) {
			nlh->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) +
				below(req_len - NLMSG_LENGTH(GENL_HDRLEN));
			send_len = nlh->nlmsg_len;
		} else if (chance(2)) {
			nlh->nlmsg_len = req_len + 4 + below(64);
		}

		/* Does the kernel act on it, and as a dump? */
		dump = (flags & NLM_F_REQUEST) && (flags & NLM_F_DUMP) == NLM_F_DUMP &&
		       nlh->nlmsg_len >= NLMSG_HDRLEN && nlh->nlmsg_len <= send_len;

		exp = expect(nlh, send_len, ethtool, &want);
		nl_send_raw(&nl, req, send_len);
		collect(&nl, family, cmd, dump, &r);
		requests++;
		ethtool_reqs += ethtool;
		dumps += dump;
		if (r.err)
			errors++;
		else if (r.data || r.acked || r.done)
			answered++;
		else
			silent++;
		switch (exp) {
		case EXP_SILENT:
			exp_silent++;
			if (r.data || r.acked || r.done)
				fail("an answer to a request the kernel must skip");
			break;
		case EXP_ACK:
			exp_ack++;
			if (r.data || !r.acked || r.err)
				fail("not one ack of 0 to a message without NLM_F_REQUEST");
			break;
		case EXP_ERR:
			exp_err++;
			if (r.data || !r.acked || r.err != want)
				fail("%s (%s), expected error %s", r.acked || r.done ?
				     "answered" : "no answer", r.err ? strerrorname_np(-r.err) : "0",
				     strerrorname_np(-want));
			break;
		case EXP_HANDLER:
			exp_handler++;
			to_handler[ethtool][cmd]++;
			handler_ok[ethtool][cmd] += !r.err;
			if (r.err && !handler_errno(ethtool, cmd, r.err))
				fail("error %s is not one this command may return",
				     strerrorname_np(-r.err));
			if (!r.err && !r.data && !dump &&
			    !(ethtool && (cmd == ETHTOOL_MSG_RINGS_SET ||
					  cmd == ETHTOOL_MSG_CHANNELS_SET)))
				fail("a get or bind that succeeded without a reply");
			if (dump && !r.done && !r.err)
				fail("a dump without NLMSG_DONE");
			break;
		}
		/* A request with NLM_F_ACK that the kernel read must be acked. */
		if ((flags & (NLM_F_REQUEST | NLM_F_ACK)) == (NLM_F_REQUEST | NLM_F_ACK) &&
		    nlh->nlmsg_len >= NLMSG_HDRLEN && nlh->nlmsg_len <= send_len &&
		    !r.acked && !r.done)
			fail("a request with NLM_F_ACK got no ack");
		if (!ethtool && cmd == NETDEV_CMD_BIND_RX && (flags & NLM_F_REQUEST)) {
			bind_tries++;
			if (r.bound) {
				binds++;
				sock_bound = true;
			}
		}
	}
	close(nl.fd);
	check_unbound(&chk, "after the last socket closed");

	printf(PROG ": %" PRIu64 " requests (%" PRIu64 " ethtool, %" PRIu64
	       " dumps) on %" PRIu64 " sockets; by the request alone: %" PRIu64
	       " skipped, %" PRIu64 " acked, %" PRIu64 " refused, %" PRIu64
	       " to handlers\n", requests, ethtool_reqs, dumps, sockets,
	       exp_silent, exp_ack, exp_err, exp_handler);
	printf(PROG ": to handlers (succeeded):");
	for (c = 0; c < (int)(sizeof(ops) / sizeof(ops[0])); c++)
		printf("%s %s %" PRIu64 " (%" PRIu64 ")", c ? "," : "", ops[c].name,
		       to_handler[ops[c].ethtool][ops[c].cmd],
		       handler_ok[ops[c].ethtool][ops[c].cmd]);
	printf("\n");
	printf(PROG ": %" PRIu64 " answered, %" PRIu64 " refused, %" PRIu64
	       " silent; bind-rx %" PRIu64 " tried, %" PRIu64 " bound; errnos:",
	       answered, errors, silent, bind_tries, binds);
	for (c = 0; c < NERR; c++)
		if (err_count[c])
			printf(" %s=%" PRIu64, strerrorname_np(c), err_count[c]);
	printf("\n" PROG ": pass\n");
	return 0;
}
