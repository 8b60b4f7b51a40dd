/* SPDX-License-Identifier: GPL-2.0 */
/*
 * udmabufs for the test programs: a memfd named after the program and
 * sealed against shrinking, as /dev/udmabuf wants it, and the dma-buf
 * made of it. A failure is fatal (die.h, included first), naming the call:
 * "PROG: UDMABUF_CREATE: <strerror>".
 */
#ifndef SELFTESTS_PROGS_UDMABUF_H
#define SELFTESTS_PROGS_UDMABUF_H

#include <errno.h>
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef SELFTESTS_PROGS_DIE_H
#error "include die.h before udmabuf.h"
#endif

/* A memfd of @size bytes, with @flags (MFD_HUGETLB ...) besides
 * MFD_ALLOW_SEALING | MFD_CLOEXEC.
 */
static inline int udmabuf_memfd(uint64_t size, unsigned int flags)
{
	int fd = memfd_create(PROG, MFD_ALLOW_SEALING | MFD_CLOEXEC | flags);

	if (fd < 0)
		die("memfd_create%s: %s",
		    flags & MFD_HUGETLB ? "(MFD_HUGETLB)" : "",
		    strerror(errno));
	if (ftruncate(fd, size) < 0)
		die("ftruncate: %s", strerror(errno));
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) < 0)
		die("F_ADD_SEALS: %s", strerror(errno));
	return fd;
}

/* ioctl @req of /dev/udmabuf (named @name), with @arg: the dma-buf's fd */
static inline int udmabuf_ioctl_named(unsigned long req, const char *name,
				      void *arg)
{
	int dev, fd;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		die("/dev/udmabuf: %s", strerror(errno));
	fd = ioctl(dev, req, arg);
	if (fd < 0)
		die("%s: %s", name, strerror(errno));
	close(dev);
	return fd;
}

/* UDMABUF_CREATE or UDMABUF_CREATE_LIST, with @arg */
#define udmabuf_ioctl(req, arg)	udmabuf_ioctl_named(req, #req, arg)

/* The dma-buf of the first @size bytes of @memfd, which this closes. */
static inline int udmabuf_of(int memfd, uint64_t size)
{
	struct udmabuf_create c = {
		.memfd = memfd, .flags = UDMABUF_FLAGS_CLOEXEC, .size = size,
	};
	int fd = udmabuf_ioctl(UDMABUF_CREATE, &c);

	close(memfd);
	return fd;
}

/* A udmabuf of @size bytes over a memfd of its own. */
static inline int udmabuf_create(uint64_t size)
{
	return udmabuf_of(udmabuf_memfd(size, 0), size);
}

#endif
