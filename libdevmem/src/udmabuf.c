// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Host memory as a dma-buf: a sealed memfd handed to /dev/udmabuf. The
 * seal matters: udmabuf refuses a memfd that could shrink under it.
 */
#include "dmabuf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define DEVMEM_UDMABUF_DEV	"/dev/udmabuf"

DEVMEM_EXPORT int devmem_dmabuf_new_udmabuf(struct devmem_dmabuf **dbp,
					size_t size)
{
	struct udmabuf_create create = {
		.flags = UDMABUF_FLAGS_CLOEXEC,
		.size = size,
	};
	struct devmem_dmabuf *db;
	int dev, memfd, fd, err;

	devmem_error_clear();
	if (!dbp)
		return devmem_fail(-EINVAL, "no place for the result");
	err = devmem_dmabuf_check_size(size);
	if (err)
		return err;

	dev = open(DEVMEM_UDMABUF_DEV, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return devmem_fail_errno(-errno, "%s (CONFIG_UDMABUF)",
					 DEVMEM_UDMABUF_DEV);
	memfd = memfd_create("libdevmem-udmabuf",
			     MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (memfd < 0) {
		err = devmem_fail_errno(-errno, "memfd_create");
		goto err_close_dev;
	}
	if (ftruncate(memfd, size)) {
		err = devmem_fail_errno(-errno, "memfd of %zu bytes", size);
		goto err_close_memfd;
	}
	if (fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		err = devmem_fail_errno(-errno, "sealing the memfd");
		goto err_close_memfd;
	}
	create.memfd = memfd;
	fd = ioctl(dev, UDMABUF_CREATE, &create);
	if (fd < 0) {
		err = devmem_fail_errno(-errno,
					"UDMABUF_CREATE of %zu bytes (udmabuf.size_limit_mb?)",
					size);
		goto err_close_memfd;
	}
	db = devmem_dmabuf_wrap(DEVMEM_DMABUF_UDMABUF, fd, size, NULL, NULL);
	if (!db) {
		err = devmem_fail(-ENOMEM, "out of memory");
		goto err_close_fd;
	}

	/* The dma-buf holds the pages; the memfd is no longer needed. */
	close(memfd);
	close(dev);
	*dbp = db;
	return 0;

err_close_fd:
	close(fd);
err_close_memfd:
	close(memfd);
err_close_dev:
	close(dev);
	return err;
}
