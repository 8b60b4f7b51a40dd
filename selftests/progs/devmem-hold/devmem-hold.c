// SPDX-License-Identifier: GPL-2.0
/*
 * devmem-hold: own a dma-buf binding and a devmem TCP socket in one
 * process, and let a test tear them down one at a time, in the order it
 * chooses, while the socket holds tokens.
 *
 * It enters the network namespace NETNS (a file such as /run/netns/nsb),
 * creates a udmabuf, binds it to rx queue QUEUE of IFINDEX through a
 * netlink socket of its own (the binding's owner), opens a listening TCP
 * socket on PORT, and goes back to the namespace it came from: from then
 * on only its sockets keep NETNS alive. It prints
 *
 *   bound id=ID ino=INO
 *
 * (the binding's id and the dma-buf's inode, as
 * /sys/kernel/debug/dma_buf/bufinfo shows it), accepts one connection,
 * receives BYTES with recvmsg(MSG_SOCK_DEVMEM), checks each byte against
 * the test pattern (selftests/progs/lib/pattern.h, seed 1) through the dma-buf's
 * mmap, unmaps it, keeps every token and prints
 *
 *   held T tokens for B bytes: linear L, dmabuf D
 *
 * Then it reads commands from standard input, one per line, and answers
 * each with one line once it is done:
 *
 *   tokens   give every held token back (SO_DEVMEM_DONTNEED, which must
 *            free them all)               -> "returned T tokens"
 *   sock     close the TCP socket with SO_LINGER 0 (a reset: the socket
 *            is destroyed at once, with the tokens it still holds)
 *                                         -> "sock closed"
 *   nl       close the netlink socket that owns the binding
 *                                         -> "nl closed"
 *
 * At the end of its input it exits, closing the dma-buf's fd last.
 * The only file references to the dma-buf it keeps are its fd's.
 *
 * Exit status: 0 success, 1 failure (a message on standard error), 2 usage.
 */
/* linux/uio.h first, then tell glibc its struct iovec is defined (both
 * define it), as devmem-rx does.
 */
#include <linux/uio.h>
#define __iovec_defined 1
#include <stddef.h>
#include <linux/dma-buf.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/udmabuf.h>
#include <linux/netdev.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/pattern.h"

#ifndef MSG_SOCK_DEVMEM
#define MSG_SOCK_DEVMEM	0x2000000	/* not in the uapi, as in mainline */
#endif

#define PROG		"devmem-hold"

#include "../lib/die.h"
#include "../lib/size.h"
/* Above any BYTES the tests use: no recvmsg stops within a frag, so each
 * token names a buffer of its own.
 */
#define IOV_LEN		(1024 * 1024)
#define CTRL_LEN	(CMSG_SPACE(sizeof(struct dmabuf_cmsg)) * 1024)
#define MAX_RANGES	128		/* per SO_DEVMEM_DONTNEED */
#define MAX_FRAGS	1024

static void usage(FILE *f, int status)
{
	fprintf(f,
"Usage: " PROG " -N NETNS -i IFINDEX -q QUEUE -s SIZE -p PORT -n BYTES\n"
"\n"
"Bind a udmabuf of SIZE bytes to rx queue QUEUE of IFINDEX in network\n"
"namespace NETNS (a file, e.g. /run/netns/nsb), receive BYTES on TCP port\n"
"PORT there holding every token, then take commands on standard input:\n"
"tokens (give them back), sock (close the socket with a reset), nl (close\n"
"the binding's netlink socket). See the source's header for the output.\n");
	exit(status);
}

/* ---- the netdev family: one bind-rx request ---- */

struct req {
	struct nlmsghdr nlh;
	struct genlmsghdr genl;
	char attrs[512];
} __attribute__((aligned(NLMSG_ALIGNTO)));

static void put_attr(struct req *r, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + r->nlh.nlmsg_len);

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nlh.nlmsg_len += NLA_ALIGN(a->nla_len);
}

static void put_u32(struct req *r, uint16_t type, uint32_t v)
{
	put_attr(r, type, &v, sizeof(v));
}

static void req_init(struct req *r, uint16_t family, uint8_t cmd)
{
	memset(r, 0, sizeof(*r));
	r->nlh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->nlh.nlmsg_type = family;
	r->nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	r->nlh.nlmsg_seq = 1;
	r->genl.cmd = cmd;
	r->genl.version = 1;
}

/* The first attribute of type @type in the message @nlh, after @hdrlen. */
static const struct nlattr *find_attr(const struct nlmsghdr *nlh,
				      size_t hdrlen, int type)
{
	const char *p = (const char *)NLMSG_DATA(nlh) + hdrlen;
	const char *end = (const char *)nlh + nlh->nlmsg_len;

	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const struct nlattr *)p;

		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			return NULL;
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		p += NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

static uint32_t attr_u32(const struct nlattr *a, const char *what)
{
	uint32_t v;

	if (!a || a->nla_len < NLA_HDRLEN + 2)
		die("no %s in the reply", what);
	if (a->nla_len == NLA_HDRLEN + 2) {
		uint16_t s;

		memcpy(&s, (const char *)a + NLA_HDRLEN, 2);
		return s;
	}
	memcpy(&v, (const char *)a + NLA_HDRLEN, 4);
	return v;
}

/* Send @r on @fd; call @cb for each reply message until the ack. */
static void transact(int fd, struct req *r,
		     void (*cb)(const struct nlmsghdr *, void *), void *arg)
{
	static char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *nlh;
	ssize_t n;

	if (send(fd, r, r->nlh.nlmsg_len, 0) < 0)
		die("netlink send: %s", strerror(errno));
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			die("netlink recv: %s", strerror(errno));
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, n);
		     nlh = NLMSG_NEXT(nlh, n)) {
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nlh);

				if (e->error)
					die("netlink request %u: %s",
					    r->genl.cmd, strerror(-e->error));
				return;
			}
			cb(nlh, arg);
		}
	}
}

static void take_family(const struct nlmsghdr *nlh, void *arg)
{
	*(uint32_t *)arg = attr_u32(find_attr(nlh, GENL_HDRLEN,
					      CTRL_ATTR_FAMILY_ID), "family id");
}

static void take_id(const struct nlmsghdr *nlh, void *arg)
{
	*(uint32_t *)arg = attr_u32(find_attr(nlh, GENL_HDRLEN,
					      NETDEV_A_DMABUF_ID), "binding id");
}

/* Bind @dmabuf to rx queue @queue of @ifindex; returns the netlink socket
 * (the owner) and the binding's id in @id.
 */
static int bind_rx(uint32_t ifindex, uint32_t queue, int dmabuf, uint32_t *id)
{
	struct req r;
	struct nlattr *nest;
	uint32_t family = 0, start;
	int fd;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		die("netlink socket: %s", strerror(errno));
	req_init(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY);
	put_attr(&r, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME,
		 sizeof(NETDEV_FAMILY_NAME));
	transact(fd, &r, take_family, &family);
	if (!family)
		die("no netdev family");

	req_init(&r, family, NETDEV_CMD_BIND_RX);
	put_u32(&r, NETDEV_A_DMABUF_IFINDEX, ifindex);
	put_u32(&r, NETDEV_A_DMABUF_FD, dmabuf);
	nest = (struct nlattr *)((char *)&r + r.nlh.nlmsg_len);
	start = r.nlh.nlmsg_len;
	put_attr(&r, NETDEV_A_DMABUF_QUEUES | NLA_F_NESTED, NULL, 0);
	put_u32(&r, NETDEV_A_QUEUE_ID, queue);
	put_u32(&r, NETDEV_A_QUEUE_TYPE, NETDEV_QUEUE_TYPE_RX);
	nest->nla_len = r.nlh.nlmsg_len - start;
	*id = 0;
	transact(fd, &r, take_id, id);
	if (!*id)
		die("bind-rx answered no id");
	return fd;
}

static int udmabuf_create(uint64_t size)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = size };
	int memfd, dev, fd;

	memfd = memfd_create(PROG, MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0)
		die("memfd_create: %s", strerror(errno));
	if (ftruncate(memfd, size) < 0)
		die("ftruncate: %s", strerror(errno));
	if (fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) < 0)
		die("F_ADD_SEALS: %s", strerror(errno));
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		die("/dev/udmabuf: %s", strerror(errno));
	c.memfd = memfd;
	fd = ioctl(dev, UDMABUF_CREATE, &c);
	if (fd < 0)
		die("UDMABUF_CREATE: %s", strerror(errno));
	close(dev);
	close(memfd);
	return fd;
}

static int listen_on(const char *port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
				   .sin6_port = htons(size_arg(port)) };
	int fd, one = 1, zero = 0;

	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1))
		die("listen on port %s: %s", port, strerror(errno));
	return fd;
}

/* ---- receiving and holding ---- */

static struct {
	uint8_t *map;
	size_t size;
	uint64_t off, linear, dmabuf;
	uint32_t *tokens;
	size_t ntokens, cap;
} rx;

static void check_stream(const uint8_t *buf, size_t len, const char *where)
{
	uint64_t base = 1 * PATTERN_GOLDEN;
	size_t bad = pattern_check(base, rx.off, buf, len);

	if (bad != len)
		die("%s: byte %" PRIu64 " of the stream is 0x%02x, expected 0x%02x",
		    where, rx.off + bad, buf[bad],
		    pattern_byte(base, rx.off + bad));
	rx.off += len;
}

static void hold_token(uint32_t token)
{
	if (rx.ntokens == rx.cap) {
		rx.cap = rx.cap ? rx.cap * 2 : 1024;
		rx.tokens = realloc(rx.tokens, rx.cap * sizeof(*rx.tokens));
		if (!rx.tokens)
			die("out of memory");
	}
	rx.tokens[rx.ntokens++] = token;
}

static void receive(int fd, int dmabuf, uint64_t bytes)
{
	static uint8_t iov_buf[IOV_LEN];
	static uint8_t ctrl[CTRL_LEN] __attribute__((aligned(8)));
	struct dma_buf_sync sync = {};
	struct dmabuf_cmsg *dc;
	struct cmsghdr *cm;
	size_t linear, total;
	ssize_t n;

	while (rx.off < bytes) {
		struct iovec iov = { iov_buf, sizeof(iov_buf) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctrl, .msg_controllen = sizeof(ctrl),
		};

		n = recvmsg(fd, &msg, MSG_SOCK_DEVMEM);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("recvmsg after %" PRIu64 " bytes: %s", rx.off,
			    n ? strerror(errno) : "peer closed");
		if (msg.msg_flags & MSG_CTRUNC)
			die("control message truncated");
		linear = total = 0;
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			if (cm->cmsg_level != SOL_SOCKET ||
			    (cm->cmsg_type != SO_DEVMEM_LINEAR &&
			     cm->cmsg_type != SO_DEVMEM_DMABUF))
				continue;
			dc = (struct dmabuf_cmsg *)CMSG_DATA(cm);
			if (cm->cmsg_type == SO_DEVMEM_LINEAR) {
				if (linear + dc->frag_size > (size_t)n)
					die("linear cmsg beyond the bytes returned");
				check_stream(iov_buf + linear, dc->frag_size,
					     "linear");
				linear += dc->frag_size;
				rx.linear += dc->frag_size;
			} else {
				if (dc->frag_offset + dc->frag_size > rx.size)
					die("frag outside the dma-buf");
				sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ;
				if (ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync))
					die("DMA_BUF_IOCTL_SYNC: %s", strerror(errno));
				check_stream(rx.map + dc->frag_offset,
					     dc->frag_size, "dmabuf");
				sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
				if (ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync))
					die("DMA_BUF_IOCTL_SYNC: %s", strerror(errno));
				rx.dmabuf += dc->frag_size;
				hold_token(dc->frag_token);
			}
			total += dc->frag_size;
		}
		if (total != (size_t)n)
			die("cmsgs account for %zu of %zd bytes", total, n);
		if (rx.off > bytes)
			die("peer sent more than %" PRIu64 " bytes", bytes);
	}
}

/* Every held token back, in calls of at most 128 ranges and 1024 tokens;
 * each call must free all it names.
 */
static void give_back(int fd)
{
	struct dmabuf_token ranges[MAX_RANGES];
	const uint32_t *t = rx.tokens;
	size_t i = 0, nr, count, n = rx.ntokens;
	int ret;

	while (i < n) {
		nr = count = 0;
		while (i < n && count < MAX_FRAGS) {
			if (nr && ranges[nr - 1].token_start +
				  ranges[nr - 1].token_count == t[i]) {
				ranges[nr - 1].token_count++;
			} else if (nr < MAX_RANGES) {
				ranges[nr].token_start = t[i];
				ranges[nr++].token_count = 1;
			} else {
				break;
			}
			count++;
			i++;
		}
		ret = setsockopt(fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, ranges,
				 nr * sizeof(ranges[0]));
		if (ret < 0)
			die("SO_DEVMEM_DONTNEED: %s", strerror(errno));
		if ((size_t)ret != count)
			die("SO_DEVMEM_DONTNEED freed %d of %zu", ret, count);
	}
	rx.ntokens = 0;
}

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "netns", 1, NULL, 'N' }, { "ifindex", 1, NULL, 'i' },
		{ "queue", 1, NULL, 'q' }, { "size", 1, NULL, 's' },
		{ "port", 1, NULL, 'p' }, { "bytes", 1, NULL, 'n' },
		{ "help", 0, NULL, 'h' }, {}
	};
	const char *netns = NULL, *port = NULL;
	uint64_t ifindex = 0, queue = 0, size = 0, bytes = 0;
	int c, home, ns, dmabuf, nl, lfd, fd;
	char line[64];
	struct stat st;
	uint32_t id;
	size_t held;

	while ((c = getopt_long(argc, argv, "N:i:q:s:p:n:h", lo, NULL)) != -1) {
		switch (c) {
		case 'N': netns = optarg; break;
		case 'i': ifindex = size_arg(optarg); break;
		case 'q': queue = size_arg(optarg); break;
		case 's': size = size_arg(optarg); break;
		case 'p': port = optarg; break;
		case 'n': bytes = size_arg(optarg); break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc || !netns || !ifindex || !size || !port || !bytes)
		usage(stderr, 2);
	if (bytes > IOV_LEN)
		die("at most %d bytes: a token for every buffer", IOV_LEN);

	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0)
		die("/proc/self/ns/net: %s", strerror(errno));
	ns = open(netns, O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		die("%s: %s", netns, strerror(errno));
	if (setns(ns, CLONE_NEWNET))
		die("setns %s: %s", netns, strerror(errno));
	dmabuf = udmabuf_create(size);
	nl = bind_rx(ifindex, queue, dmabuf, &id);
	lfd = listen_on(port);
	/* Only the sockets keep the namespace now. */
	if (setns(home, CLONE_NEWNET))
		die("setns back: %s", strerror(errno));
	close(ns);
	close(home);
	if (fstat(dmabuf, &st))
		die("fstat: %s", strerror(errno));
	say("bound id=%u ino=%lu", id, (unsigned long)st.st_ino);

	rx.size = size;
	rx.map = mmap(NULL, size, PROT_READ, MAP_SHARED, dmabuf, 0);
	if (rx.map == MAP_FAILED)
		die("mmap of the dma-buf: %s", strerror(errno));
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept: %s", strerror(errno));
	close(lfd);
	receive(fd, dmabuf, bytes);
	/* The mapping would hold a file reference of its own. */
	if (munmap(rx.map, size))
		die("munmap: %s", strerror(errno));
	say("held %zu tokens for %" PRIu64 " bytes: linear %" PRIu64
	    ", dmabuf %" PRIu64, rx.ntokens, rx.off, rx.linear, rx.dmabuf);

	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		if (!strcmp(line, "tokens")) {
			if (fd < 0)
				die("tokens: the socket is closed");
			held = rx.ntokens;
			give_back(fd);
			say("returned %zu tokens", held);
		} else if (!strcmp(line, "sock")) {
			struct linger lg = { .l_onoff = 1, .l_linger = 0 };

			if (fd < 0)
				die("sock: already closed");
			if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
				die("SO_LINGER: %s", strerror(errno));
			close(fd);
			fd = -1;
			say("sock closed");
		} else if (!strcmp(line, "nl")) {
			if (nl < 0)
				die("nl: already closed");
			close(nl);
			nl = -1;
			say("nl closed");
		} else {
			die("unknown command '%s'", line);
		}
	}
	if (fd >= 0)
		close(fd);
	if (nl >= 0)
		close(nl);
	close(dmabuf);
	return 0;
}
