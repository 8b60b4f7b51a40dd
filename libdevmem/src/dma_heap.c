// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * A dma-buf from a dma-heap: /dev/dma_heap/<name>, "system" by default.
 */
#include "dmabuf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/dma-heap.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define DEVMEM_HEAP_DIR		"/dev/dma_heap"
#define DEVMEM_HEAP_DEFAULT	"system"

DEVMEM_EXPORT int devmem_dmabuf_new_heap(struct devmem_dmabuf **dbp,
				     const char *heap, size_t size)
{
	struct dma_heap_allocation_data alloc = {
		.len = size,
		.fd_flags = O_RDWR | O_CLOEXEC,
	};
	const char *name = heap ? heap : DEVMEM_HEAP_DEFAULT;
	char path[sizeof(DEVMEM_HEAP_DIR) + NAME_MAX + 1];
	struct devmem_dmabuf *db;
	int dev, err;

	devmem_error_clear();
	if (!dbp)
		return devmem_fail(-EINVAL, "no place for the result");
	if (!*name || strchr(name, '/') || strlen(name) > NAME_MAX)
		return devmem_fail(-EINVAL, "bad heap name \"%s\"", name);
	err = devmem_dmabuf_check_size(size);
	if (err)
		return err;

	snprintf(path, sizeof(path), DEVMEM_HEAP_DIR "/%s", name);
	dev = open(path, O_RDONLY | O_CLOEXEC);
	if (dev < 0)
		return devmem_fail_errno(-errno, "%s", path);
	if (ioctl(dev, DMA_HEAP_IOCTL_ALLOC, &alloc)) {
		err = devmem_fail_errno(-errno, "DMA_HEAP_IOCTL_ALLOC of %zu bytes from %s",
					size, path);
		goto err_close_dev;
	}
	db = devmem_dmabuf_wrap(DEVMEM_DMABUF_HEAP, alloc.fd, size, NULL, NULL);
	if (!db) {
		err = devmem_fail(-ENOMEM, "out of memory");
		goto err_close_fd;
	}

	close(dev);
	*dbp = db;
	return 0;

err_close_fd:
	close(alloc.fd);
err_close_dev:
	close(dev);
	return err;
}
