/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * What a dma-buf provider (udmabuf.c, dma_heap.c, cuda.c) gives the common
 * code in dmabuf.c. Never installed.
 */
#ifndef LIBDEVMEM_DMABUF_H
#define LIBDEVMEM_DMABUF_H

#include "internal.h"

struct devmem_dmabuf_ops {
	/* Copy out of memory the CPU cannot map; NULL: mmap and sync. */
	int (*read)(struct devmem_dmabuf *db, uint64_t off, void *dst,
		    size_t len);
	/* Free the memory behind the buffer, after its fd is closed. */
	void (*release)(struct devmem_dmabuf *db);
};

struct devmem_dmabuf {
	int fd;
	size_t size;
	enum devmem_dmabuf_kind kind;
	void *map;		/* made by the first map or read, then kept */
	const struct devmem_dmabuf_ops *ops;	/* NULL: nothing to add */
	void *priv;			/* the provider's */
};

/* A buffer object that owns dma-buf @fd and @priv from then on; NULL,
 * taking neither, when out of memory.
 */
struct devmem_dmabuf *devmem_dmabuf_wrap(enum devmem_dmabuf_kind kind, int fd,
					 size_t size,
					 const struct devmem_dmabuf_ops *ops,
					 void *priv);

/* 0 if @size can back a binding (a positive multiple of the page size),
 * else -EINVAL with the reason set.
 */
int devmem_dmabuf_check_size(size_t size);

/* The size of the file behind @fd (a dma-buf: lseek(SEEK_END)), leaving
 * its position as it was. 0, or -errno with the reason set (-EINVAL for
 * a directory or an empty file).
 */
int devmem_fd_size(int fd, size_t *size);

#endif /* LIBDEVMEM_DMABUF_H */
