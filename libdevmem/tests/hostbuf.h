/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checks for a dma-buf backed by host memory (udmabuf, dma-heap): write a
 * pattern through a mapping of its fd, read it back with the library, then
 * through the library's own mapped view.
 */
#ifndef LIBDEVMEM_TEST_HOSTBUF_H
#define LIBDEVMEM_TEST_HOSTBUF_H

#include <linux/dma-buf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <devmem.h>

#include "test.h"

static inline unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 7 + (i >> 12));
}

static inline int fill(int fd, size_t size)
{
	struct dma_buf_sync sync = {
		.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE,
	};
	unsigned char *map;
	size_t i;

	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(map != MAP_FAILED);
	CHECK_EQ(ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync), 0);
	for (i = 0; i < size; i++)
		map[i] = pattern(i);
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE;
	CHECK_EQ(ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync), 0);
	munmap(map, size);
	return T_PASS;
}

/*
 * The library's mapping: it shows the pattern in place, and what the CPU
 * writes between begin and end of write access is what a read gives.
 */
static inline int check_mapped_view(struct devmem_dmabuf *db, size_t size)
{
	unsigned char *map, *again, got[3];
	size_t i;

	CHECK_EQ(devmem_dmabuf_map(db, DEVMEM_ACCESS_READ | DEVMEM_ACCESS_WRITE,
				   (void **)&map), 0);
	CHECK_EQ(devmem_dmabuf_begin_access(db, DEVMEM_ACCESS_READ), 0);
	for (i = 0; i < size; i++)
		CHECK_EQ(map[i], pattern(i));
	CHECK_EQ(devmem_dmabuf_end_access(db, DEVMEM_ACCESS_READ), 0);
	CHECK_EQ(devmem_dmabuf_begin_access(db, DEVMEM_ACCESS_WRITE), 0);
	memcpy(map + size - 3, "abc", 3);
	CHECK_EQ(devmem_dmabuf_end_access(db, DEVMEM_ACCESS_WRITE), 0);
	CHECK_EQ(devmem_dmabuf_read(db, size - 3, got, 3), 0);
	CHECK_EQ(memcmp(got, "abc", 3), 0);
	/* the pattern back, for the caller's later checks */
	CHECK_EQ(devmem_dmabuf_begin_access(db, DEVMEM_ACCESS_WRITE), 0);
	for (i = size - 3; i < size; i++)
		map[i] = pattern(i);
	CHECK_EQ(devmem_dmabuf_end_access(db, DEVMEM_ACCESS_WRITE), 0);
	CHECK_EQ(devmem_dmabuf_begin_access(db, DEVMEM_ACCESS_READ |
					    DEVMEM_ACCESS_WRITE), 0);
	CHECK_EQ(devmem_dmabuf_end_access(db, DEVMEM_ACCESS_READ |
					  DEVMEM_ACCESS_WRITE), 0);
	CHECK_EQ(devmem_dmabuf_map(db, DEVMEM_ACCESS_READ, (void **)&again), 0);
	CHECK(again == map);
	return T_PASS;
}

static inline int check_host_buffer(struct devmem_dmabuf *db,
				    enum devmem_dmabuf_kind kind, size_t size)
{
	unsigned char *buf;
	size_t i;

	CHECK(devmem_dmabuf_fd(db) >= 0);
	CHECK_EQ(devmem_dmabuf_size(db), size);
	CHECK_EQ(devmem_dmabuf_kind(db), kind);
	CHECK_EQ(fill(devmem_dmabuf_fd(db), size), T_PASS);

	buf = malloc(size);
	CHECK(buf);
	CHECK_EQ(devmem_dmabuf_read(db, 0, buf, size), 0);
	for (i = 0; i < size; i++)
		CHECK_EQ(buf[i], pattern(i));
	/* A stretch across a page boundary, and the last byte. */
	CHECK_EQ(devmem_dmabuf_read(db, 4000, buf, 200), 0);
	for (i = 0; i < 200; i++)
		CHECK_EQ(buf[i], pattern(4000 + i));
	CHECK_EQ(devmem_dmabuf_read(db, size - 1, buf, 1), 0);
	CHECK_EQ(buf[0], pattern(size - 1));
	CHECK_EQ(devmem_dmabuf_read(db, size - 1, buf, 2), -EINVAL);
	free(buf);
	return check_mapped_view(db, size);
}

#endif /* LIBDEVMEM_TEST_HOSTBUF_H */
