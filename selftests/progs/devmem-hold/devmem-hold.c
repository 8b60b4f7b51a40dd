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
#include <linux/netdev.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG		"devmem-hold"

#include "../lib/die.h"
#include "../lib/size.h"
#include "../lib/devmem.h"
#include "../lib/genl.h"
#include "../lib/listen.h"
#include "../lib/tokens.h"
#include "../lib/udmabuf.h"
/* Above any BYTES the tests use: no recvmsg stops within a frag, so each
 * token names a buffer of its own.
 */
#define IOV_LEN		(1024 * 1024)
#define CTRL_LEN	(CMSG_SPACE(sizeof(struct dmabuf_cmsg)) * 1024)

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

/* Bind @dmabuf to rx queue @queue of @ifindex; returns the netlink socket
 * (the owner) and the binding's id in @id.
 */
static int bind_rx(uint32_t ifindex, uint32_t queue, int dmabuf, uint32_t *id)
{
	struct genl_val val = { .type = NETDEV_A_DMABUF_ID };
	static struct genl_req r;
	size_t nest;
	int fd, err;

	fd = genl_open();
	genl_req_init(&r, genl_family(fd, NETDEV_FAMILY_NAME),
		      NETDEV_CMD_BIND_RX, 0);
	genl_put_u32(&r, NETDEV_A_DMABUF_IFINDEX, ifindex);
	genl_put_u32(&r, NETDEV_A_DMABUF_FD, dmabuf);
	nest = genl_nest_start(&r, NETDEV_A_DMABUF_QUEUES);
	genl_put_u32(&r, NETDEV_A_QUEUE_ID, queue);
	genl_put_u32(&r, NETDEV_A_QUEUE_TYPE, NETDEV_QUEUE_TYPE_RX);
	genl_nest_end(&r, nest);
	err = genl_transact(fd, &r, genl_take, &val, NULL);
	if (err)
		die("netlink request %u: %s", NETDEV_CMD_BIND_RX,
		    strerror(-err));
	*id = val.v;
	if (!*id)
		die("bind-rx answered no id");
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

static uint8_t iov_buf[IOV_LEN];
static uint8_t ctrl[CTRL_LEN] __attribute__((aligned(8)));
static struct dm_rx rx = {
	.base = 1 * PATTERN_GOLDEN,
	.buf = iov_buf, .buf_len = sizeof(iov_buf), .ctrl = ctrl,
};
static struct tokens held;

static void receive(int fd, uint64_t bytes)
{
	ssize_t n;

	while (rx.off < bytes) {
		n = dm_rx_recv(&rx, fd, 0, CTRL_LEN, &held);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("recvmsg after %" PRIu64 " bytes: %s", rx.off,
			    n ? strerror(errno) : "peer closed");
		if (rx.off > bytes)
			die("peer sent more than %" PRIu64 " bytes", bytes);
	}
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
	size_t n;

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

	rx.fd = dmabuf;
	dm_rx_map(&rx);
	fd = accept_only(lfd);
	receive(fd, bytes);
	/* The mapping would hold a file reference of its own. */
	if (munmap(rx.map, size))
		die("munmap: %s", strerror(errno));
	say("held %zu tokens for %" PRIu64 " bytes: linear %" PRIu64
	    ", dmabuf %" PRIu64, held.n, rx.off, rx.linear, rx.dmabuf);

	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		if (!strcmp(line, "tokens")) {
			if (fd < 0)
				die("tokens: the socket is closed");
			n = held.n;
			tokens_return(&held, fd);
			say("returned %zu tokens", n);
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
