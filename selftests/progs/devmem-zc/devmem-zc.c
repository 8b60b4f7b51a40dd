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
#include <linux/dma-buf.h>
#include <linux/sockios.h>
#include <linux/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../lib/pattern.h"

#ifndef MSG_SOCK_DEVMEM
#define MSG_SOCK_DEVMEM	0x2000000
#endif

#define PROG		"devmem-zc"

#include "../lib/die.h"
#define COPYBUF_LEN	(256 * 1024)
#define IOV_LEN		(64 * 1024)
#define NCMSG		256

static uint64_t base, off;
static uint8_t *map;
static size_t map_size;
static int dmabuf_fd;
static uint32_t dmabuf_id;

static void usage(void)
{
	fprintf(stderr, "usage: " PROG " -p PORT -a HOST_BYTES -b DEVICE_BYTES [-r READY] [-S SEED]\n");
	exit(2);
}

/* The next @len bytes of the stream are @buf. */
static void check(const uint8_t *buf, size_t len, const char *where)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != pattern_byte(base, off + i))
			die("%s: byte %" PRIu64 " is 0x%02x, expected 0x%02x",
			    where, off + i, buf[i], pattern_byte(base, off + i));
	off += len;
}

static void sync_dmabuf(uint64_t flags)
{
	struct dma_buf_sync s = { .flags = flags | DMA_BUF_SYNC_READ };

	if (ioctl(dmabuf_fd, DMA_BUF_IOCTL_SYNC, &s))
		die("DMA_BUF_IOCTL_SYNC: %s", strerror(errno));
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
	static uint8_t iov_buf[IOV_LEN];
	static uint8_t ctrl[CMSG_SPACE(sizeof(struct dmabuf_cmsg)) * NCMSG]
		__attribute__((aligned(8)));
	uint64_t got = 0, linear = 0, dmabuf = 0;

	while (got < want) {
		struct iovec iov = { iov_buf, sizeof(iov_buf) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctrl, .msg_controllen = sizeof(ctrl),
		};
		struct dmabuf_cmsg *dc;
		struct cmsghdr *cm;
		size_t lin = 0, sum = 0;
		ssize_t n;

		n = recvmsg(fd, &msg, MSG_SOCK_DEVMEM);
		if (n < 0)
			die("recvmsg(MSG_SOCK_DEVMEM): %s", strerror(errno));
		if (n == 0)
			die("end of stream after %" PRIu64 " of %" PRIu64 " bytes",
			    got, want);
		if (msg.msg_flags & MSG_CTRUNC)
			die("control message truncated");
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct dmabuf_token tok;

			if (cm->cmsg_level != SOL_SOCKET ||
			    (cm->cmsg_type != SO_DEVMEM_LINEAR &&
			     cm->cmsg_type != SO_DEVMEM_DMABUF))
				continue;
			dc = (struct dmabuf_cmsg *)CMSG_DATA(cm);
			if (cm->cmsg_type == SO_DEVMEM_LINEAR) {
				if (lin + dc->frag_size > (size_t)n)
					die("linear cmsg beyond the bytes returned");
				check(iov_buf + lin, dc->frag_size, "linear");
				lin += dc->frag_size;
				linear += dc->frag_size;
				sum += dc->frag_size;
				continue;
			}
			if (dc->frag_offset + dc->frag_size > map_size)
				die("frag outside the dma-buf");
			if (dmabuf_id && dc->dmabuf_id != dmabuf_id)
				die("frag of binding %u, expected %u",
				    dc->dmabuf_id, dmabuf_id);
			sync_dmabuf(DMA_BUF_SYNC_START);
			check(map + dc->frag_offset, dc->frag_size, "dmabuf");
			sync_dmabuf(DMA_BUF_SYNC_END);
			dmabuf += dc->frag_size;
			sum += dc->frag_size;
			tok.token_start = dc->frag_token;
			tok.token_count = 1;
			if (setsockopt(fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, &tok,
				       sizeof(tok)) != 1)
				die("SO_DEVMEM_DONTNEED: %s", strerror(errno));
		}
		if (sum != (size_t)n)
			die("cmsgs account for %zu of %zd bytes", sum, n);
		got += n;
	}
	if (got != want)
		die("received %" PRIu64 " bytes, expected %" PRIu64, got, want);
	printf("devmem: %" PRIu64 " bytes, linear %" PRIu64 ", dmabuf %" PRIu64 "\n",
	       got, linear, dmabuf);
}

int main(int argc, char **argv)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
	struct tcp_zerocopy_receive zc = {};
	long host = -1, dev = -1, port = -1;
	const char *ready = NULL, *env;
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
	base = seed * PATTERN_GOLDEN;
	env = getenv("DEVMEM_DMABUF_FD");
	if (!env)
		die("no dma-buf: run under netdev-nl bind-rx --run");
	dmabuf_fd = atoi(env);
	env = getenv("DEVMEM_DMABUF_ID");
	if (env)
		dmabuf_id = atoi(env);
	map_size = lseek(dmabuf_fd, 0, SEEK_END);
	map = mmap(NULL, map_size, PROT_READ, MAP_SHARED, dmabuf_fd, 0);
	if (map == MAP_FAILED)
		die("mmap of the dma-buf: %s", strerror(errno));
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
	if (ready) {
		c = open(ready, O_CREAT | O_WRONLY, 0644);
		if (c < 0)
			die("%s: %s", ready, strerror(errno));
		close(c);
	}
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept: %s", strerror(errno));
	close(lfd);

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
	check(copybuf, zc.copybuf_len, "copybuf");
	printf("copybuf: %d bytes, pattern ok\n", zc.copybuf_len);
	fflush(stdout);

	receive_devmem(fd, host + dev - off);
	close(fd);
	return 0;
}
