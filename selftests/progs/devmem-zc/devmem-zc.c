// SPDX-License-Identifier: GPL-2.0
/*
 * devmem-zc: TCP_ZEROCOPY_RECEIVE's copy fallback on a stream whose
 * first bytes are in host memory and the rest in device memory.
 *
 * Accept one connection, wait until -a bytes are queued (printing
 * "queued N"), then until -a + -b bytes are; then one
 * getsockopt(TCP_ZEROCOPY_RECEIVE) with no mapping and a copy buffer
 * larger than what is queued, which makes the kernel copy the readable
 * bytes and compute the skip hint on the first unreadable skb. Print
 *
 *	zerocopy: ret R, length L, copybuf_len C, recv_skip_hint H
 *	copybuf: C bytes, pattern ok
 *
 * then receive the rest with recvmsg(MSG_SOCK_DEVMEM), every byte
 * checked against the pattern (selftests/progs/lib/pattern.h: linear bytes in
 * the user buffer, dma-buf bytes through its mmap), tokens given back:
 *
 *	devmem: B bytes, linear X, dmabuf Y
 *
 * Run it under `netdev-nl bind-rx ... --run`, which passes the dma-buf in
 * DEVMEM_DMABUF_FD and the binding's id in DEVMEM_DMABUF_ID.
 * Exit status: 0 success, 1 failure, 2 usage.
 */
#include <linux/uio.h>
#define __iovec_defined 1
#include <stddef.h>
#include <linux/sockios.h>
#include <linux/tcp.h>

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG		"devmem-zc"

#include "../lib/die.h"
#include "../lib/size.h"
#include "../lib/devmem.h"
#include "../lib/listen.h"
#define COPYBUF_LEN	(256 * 1024)
#define IOV_LEN		(64 * 1024)
#define NCMSG		256

static uint8_t iov_buf[IOV_LEN];
static uint8_t ctrl[CMSG_SPACE(sizeof(struct dmabuf_cmsg)) * NCMSG]
	__attribute__((aligned(8)));
static struct dm_rx rx = {
	.buf = iov_buf, .buf_len = sizeof(iov_buf), .ctrl = ctrl,
};

static void usage(void)
{
	fprintf(stderr, "usage: " PROG " -p PORT -a HOST_BYTES -b DEVICE_BYTES [-r READY] [-S SEED]\n");
	exit(2);
}

/* Wait (at most 20 s) until exactly @want bytes are queued on @fd. */
static void wait_inq(int fd, int want)
{
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	int inq = -1, i;

	for (i = 0; i < 2000; i++) {
		if (ioctl(fd, SIOCINQ, &inq))
			die("SIOCINQ: %s", strerror(errno));
		if (inq == want)
			return;
		if (inq > want)
			break;
		nanosleep(&nap, NULL);
	}
	die("%d bytes queued, waited for %d", inq, want);
}

/* recvmsg(MSG_SOCK_DEVMEM) until @want bytes came, each checked. */
static void receive_devmem(int fd, uint64_t want)
{
	uint64_t got = 0;
	ssize_t n;

	while (got < want) {
		/* each token back at once */
		n = dm_rx_recv(&rx, fd, 0, sizeof(ctrl), NULL);
		if (n < 0)
			die("recvmsg(MSG_SOCK_DEVMEM): %s", strerror(errno));
		if (n == 0)
			die("end of stream after %" PRIu64 " of %" PRIu64 " bytes",
			    got, want);
		got += n;
	}
	if (got != want)
		die("received %" PRIu64 " bytes, expected %" PRIu64, got, want);
	printf("devmem: %" PRIu64 " bytes, linear %" PRIu64 ", dmabuf %" PRIu64 "\n",
	       got, rx.linear, rx.dmabuf);
}

int main(int argc, char **argv)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
	struct tcp_zerocopy_receive zc = {};
	long host = -1, dev = -1, port = -1;
	const char *ready = NULL;
	uint64_t seed = 1;
	socklen_t zlen = sizeof(zc);
	uint8_t *copybuf;
	int c, lfd, fd, one = 1, ret;

	while ((c = getopt(argc, argv, "p:a:b:r:S:")) != -1) {
		switch (c) {
		case 'p': port = atol(optarg); break;
		case 'a': host = atol(optarg); break;
		case 'b': dev = atol(optarg); break;
		case 'r': ready = optarg; break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (optind != argc || port <= 0 || host <= 0 || dev <= 0 ||
	    host + dev >= COPYBUF_LEN)
		usage();
	rx.base = seed * PATTERN_GOLDEN;
	dm_rx_env(&rx);
	dm_rx_map(&rx);
	copybuf = malloc(COPYBUF_LEN);
	if (!copybuf)
		die("out of memory");

	lfd = socket(AF_INET6, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin6_port = htons(port);
	a.sin6_addr = in6addr_any;
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 1))
		die("bind/listen: %s", strerror(errno));
	ready_file(ready);
	fd = accept_only(lfd);

	wait_inq(fd, host);
	printf("queued %ld\n", host);
	fflush(stdout);
	wait_inq(fd, host + dev);

	zc.address = 0;
	zc.length = 0;
	zc.copybuf_address = (uintptr_t)copybuf;
	zc.copybuf_len = COPYBUF_LEN;
	ret = getsockopt(fd, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &zc, &zlen);
	if (ret)
		die("TCP_ZEROCOPY_RECEIVE: %s", strerror(errno));
	printf("zerocopy: ret %d, length %u, copybuf_len %d, recv_skip_hint %u\n",
	       ret, zc.length, zc.copybuf_len, zc.recv_skip_hint);
	if (zc.copybuf_len < 0)
		die("copybuf_len %d", zc.copybuf_len);
	dm_rx_check(&rx, copybuf, zc.copybuf_len, "copybuf");
	printf("copybuf: %d bytes, pattern ok\n", zc.copybuf_len);
	fflush(stdout);

	receive_devmem(fd, host + dev - rx.off);
	close(fd);
	return 0;
}
