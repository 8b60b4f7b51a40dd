// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Host memory as a dma-buf: a sealed memfd handed to /dev/udmabuf. The
 * seal matters: udmabuf refuses a memfd that could shrink under it. A
 * memfd of huge pages gives a dma-buf whose scatter-gather entries are
 * whole huge pages (udmabuf merges the contiguous pages of each).
 */
#include "dmabuf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define DEVMEM_UDMABUF_DEV	"/dev/udmabuf"
#define DEVMEM_HUGE_PAGE	(2UL << 20)
#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB		(21U << 26)	/* log2 of the size, shifted */
#endif

/* The memfd behind a udmabuf: @huge, of 2 MiB huge pages, else shmem.
 * Its pages are left to udmabuf, which allocates them (mainline since
 * 6.11, this kernel's udmabuf too).
 */
static int devmem_udmabuf_memfd(size_t size, int huge)
{
	unsigned int flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
	int memfd, err;

	if (huge)
		flags |= MFD_HUGETLB | MFD_HUGE_2MB;
	memfd = memfd_create("libdevmem-udmabuf", flags);
	if (memfd < 0)
		return devmem_fail_errno(-errno, huge ?
					 "memfd_create of huge pages (CONFIG_HUGETLBFS)" :
					 "memfd_create");
	if (ftruncate(memfd, size)) {
		err = devmem_fail_errno(-errno, "memfd of %zu bytes", size);
		goto err_close;
	}
	return memfd;

err_close:
	close(memfd);
	return err;
}

static int devmem_udmabuf_new(struct devmem_dmabuf **dbp, size_t size,
			      int huge)
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
	if (huge && (!size || size % DEVMEM_HUGE_PAGE))
		return devmem_fail(-EINVAL,
				   "size %zu is not a positive multiple of 2 MiB",
				   size);
	err = devmem_dmabuf_check_size(size);
	if (err)
		return err;

	dev = open(DEVMEM_UDMABUF_DEV, O_RDWR | O_CLOEXEC);
	if (dev < 0 && (errno == ENOENT || errno == ENODEV || errno == ENXIO))
		return devmem_fail_errno(-errno,
					 "%s (the kernel needs CONFIG_UDMABUF)",
					 DEVMEM_UDMABUF_DEV);
	if (dev < 0 && (errno == EACCES || errno == EPERM))
		return devmem_fail_errno(-errno,
					 "%s (this user may not open it: see its owner and mode)",
					 DEVMEM_UDMABUF_DEV);
	if (dev < 0)
		return devmem_fail_errno(-errno, "%s", DEVMEM_UDMABUF_DEV);
	memfd = devmem_udmabuf_memfd(size, huge);
	if (memfd < 0) {
		err = memfd;
		goto err_close_dev;
	}
	if (fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		err = devmem_fail_errno(-errno, "sealing the memfd");
		goto err_close_memfd;
	}
	create.memfd = memfd;
	fd = ioctl(dev, UDMABUF_CREATE, &create);
	if (fd < 0 && huge && (errno == ENOMEM || errno == ENOSPC)) {
		err = devmem_fail_errno(-ENOMEM,
					"%zu MiB of free 2 MiB huge pages (vm.nr_hugepages)",
					size >> 20);
		goto err_close_memfd;
	}
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

DEVMEM_EXPORT int devmem_dmabuf_new_udmabuf(struct devmem_dmabuf **dbp,
					size_t size)
{
	return devmem_udmabuf_new(dbp, size, 0);
}

DEVMEM_EXPORT int devmem_dmabuf_new_udmabuf_huge(struct devmem_dmabuf **dbp,
					     size_t size)
{
	return devmem_udmabuf_new(dbp, size, 1);
}
