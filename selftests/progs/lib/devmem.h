/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The receive side of device-memory TCP for the test programs: the
 * dma-buf a binding fills, mapped, and the cmsgs of a
 * recvmsg(MSG_SOCK_DEVMEM) gone through: every byte checked against the
 * test stream's pattern (pattern.h), in the user buffer or through the
 * mapping, counted, and each token held or given back (tokens.h). A
 * failure is fatal (die.h, included first).
 *
 * The program includes linux/uio.h before glibc's headers and then
 * defines __iovec_defined (both define struct iovec), as mainline's
 * ncdevmem does: struct dmabuf_cmsg is there.
 */
#ifndef SELFTESTS_PROGS_DEVMEM_H
#define SELFTESTS_PROGS_DEVMEM_H

#ifndef SELFTESTS_PROGS_DIE_H
#error "include die.h before devmem.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <linux/dma-buf.h>
#include <linux/uio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pattern.h"
#include "size.h"
#include "tokens.h"

#ifndef MSG_SOCK_DEVMEM
#define MSG_SOCK_DEVMEM	0x2000000	/* not in the uapi, as in mainline */
#endif
#ifndef ETOOSMALL
#define ETOOSMALL	525	/* kernel-internal; devmem recvmsg's */
#endif

/* A stream being received into a dma-buf. */
struct dm_rx {
	int fd;			/* the dma-buf */
	uint32_t id;		/* its binding's id; 0: not checked */
	uint8_t *map;		/* its mmap */
	size_t size;
	uint64_t base;		/* the pattern's base: seed * PATTERN_GOLDEN */
	bool nocheck;		/* count the bytes, do not look at them */
	bool host_ok;		/* bytes without a cmsg: host memory */
	uint64_t off;		/* stream bytes so far */
	uint64_t linear, dmabuf, host, frags, cmsgs;
	uint8_t *buf;		/* dm_rx_recv()'s user buffer */
	size_t buf_len;
	void *ctrl;		/* and its control buffer */
};

/* The dma-buf netdev-nl bind-rx --run passes: its fd in DEVMEM_DMABUF_FD,
 * its binding's id in DEVMEM_DMABUF_ID (0 when not set).
 */
static inline void dm_rx_env(struct dm_rx *rx)
{
	const char *fd = getenv("DEVMEM_DMABUF_FD");
	const char *id = getenv("DEVMEM_DMABUF_ID");

	if (!fd)
		die("no dma-buf: run under netdev-nl bind-rx --run");
	rx->fd = size_arg(fd);
	rx->id = id ? size_arg(id) : 0;
}

/* Map the dma-buf, @rx->fd, for reading. */
static inline void dm_rx_map(struct dm_rx *rx)
{
	off_t size = lseek(rx->fd, 0, SEEK_END);

	if (size <= 0)
		die("fd %d is not a dma-buf: %s", rx->fd, strerror(errno));
	rx->size = size;
	rx->map = mmap(NULL, size, PROT_READ, MAP_SHARED, rx->fd, 0);
	if (rx->map == MAP_FAILED)
		die("mmap of the dma-buf: %s", strerror(errno));
}

/* The next @len bytes of the stream are @buf. */
static inline void dm_rx_check(struct dm_rx *rx, const uint8_t *buf,
			       size_t len, const char *where)
{
	size_t bad = rx->nocheck ? len :
		     pattern_check(rx->base, rx->off, buf, len);

	if (bad != len)
		die("%s: byte %" PRIu64 " of the stream is 0x%02x, expected 0x%02x",
		    where, rx->off + bad, buf[bad],
		    pattern_byte(rx->base, rx->off + bad));
	rx->off += len;
}

/* DMA_BUF_IOCTL_SYNC @flags (START or END) for reading. */
static inline void dm_rx_sync(const struct dm_rx *rx, uint64_t flags)
{
	struct dma_buf_sync sync = { .flags = flags | DMA_BUF_SYNC_READ };

	if (ioctl(rx->fd, DMA_BUF_IOCTL_SYNC, &sync))
		die("DMA_BUF_IOCTL_SYNC: %s", strerror(errno));
}

/*
 * The cmsgs of a recvmsg(MSG_SOCK_DEVMEM) with @msg that returned @len > 0
 * bytes, @iov the user buffer: the linear bytes checked there, the
 * dma-buf's through the mapping (within DMA_BUF_IOCTL_SYNC). Each frag's
 * token goes to @held, or with @held NULL back to socket @sock at once.
 * The cmsgs must account for every byte, but with @rx->host_ok bytes
 * without any are host memory (a readable skb), checked in @iov.
 */
static inline void dm_rx_cmsgs(struct dm_rx *rx, struct msghdr *msg,
			       const uint8_t *iov, size_t len,
			       struct tokens *held, int sock)
{
	size_t linear = 0, total = 0;
	uint64_t cmsgs = rx->cmsgs;
	struct dmabuf_cmsg *dc;
	struct cmsghdr *cm;

	if (msg->msg_flags & MSG_CTRUNC)
		die("control message truncated (MSG_CTRUNC)");
	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET ||
		    (cm->cmsg_type != SO_DEVMEM_LINEAR &&
		     cm->cmsg_type != SO_DEVMEM_DMABUF))
			continue;
		if (cm->cmsg_len != CMSG_LEN(sizeof(*dc)))
			die("cmsg of %zu bytes", (size_t)cm->cmsg_len);
		dc = (struct dmabuf_cmsg *)CMSG_DATA(cm);
		rx->cmsgs++;
		total += dc->frag_size;
		if (cm->cmsg_type == SO_DEVMEM_LINEAR) {
			if (linear + dc->frag_size > len)
				die("linear cmsg beyond the bytes returned");
			dm_rx_check(rx, iov + linear, dc->frag_size, "linear");
			linear += dc->frag_size;
			rx->linear += dc->frag_size;
			continue;
		}
		if (dc->frag_offset + dc->frag_size > rx->size)
			die("frag [%llu, +%u) outside the %zu-byte dma-buf",
			    (unsigned long long)dc->frag_offset, dc->frag_size,
			    rx->size);
		if (rx->id && dc->dmabuf_id != rx->id)
			die("frag of dma-buf binding %u, expected %u",
			    dc->dmabuf_id, rx->id);
		if (!rx->nocheck)
			dm_rx_sync(rx, DMA_BUF_SYNC_START);
		dm_rx_check(rx, rx->map + dc->frag_offset, dc->frag_size,
			    "dmabuf");
		if (!rx->nocheck)
			dm_rx_sync(rx, DMA_BUF_SYNC_END);
		rx->dmabuf += dc->frag_size;
		rx->frags++;
		if (held)
			tokens_hold(held, dc->frag_token);
		else
			tokens_give_back(sock, &dc->frag_token, 1);
	}
	if (rx->host_ok && rx->cmsgs == cmsgs) {
		/* one call never returns both kinds */
		dm_rx_check(rx, iov, len, "host");
		rx->host += len;
		return;
	}
	if (total != len)
		die("cmsgs account for %zu of %zu bytes", total, len);
}

/* One recvmsg(MSG_SOCK_DEVMEM | @flags) on socket @fd into @rx->buf, with
 * @ctrl_len bytes of @rx->ctrl (0: no control buffer), and dm_rx_cmsgs()
 * of what it returned. Returns recvmsg()'s result; errno as it left it.
 */
static inline ssize_t dm_rx_recv(struct dm_rx *rx, int fd, int flags,
				 size_t ctrl_len, struct tokens *held)
{
	struct iovec iov = { rx->buf, rx->buf_len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctrl_len ? rx->ctrl : NULL,
		.msg_controllen = ctrl_len,
	};
	ssize_t n;

	n = recvmsg(fd, &msg, MSG_SOCK_DEVMEM | flags);
	if (n > 0)
		dm_rx_cmsgs(rx, &msg, rx->buf, n, held, fd);
	return n;
}

#endif
