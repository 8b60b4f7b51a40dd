// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * The dma-buf object: lifetime, import of an fd made elsewhere, and CPU
 * reads of host-backed buffers through a mapping bracketed by
 * DMA_BUF_IOCTL_SYNC, which is what makes the device's writes visible.
 */
#include "dmabuf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct devmem_dmabuf *devmem_dmabuf_wrap(enum devmem_dmabuf_kind kind, int fd,
					 size_t size,
					 const struct devmem_dmabuf_ops *ops,
					 void *priv)
{
	struct devmem_dmabuf *db;

	db = calloc(1, sizeof(*db));
	if (!db)
		return NULL;
	db->fd = fd;
	db->size = size;
	db->kind = kind;
	db->ops = ops;
	db->priv = priv;
	return db;
}

int devmem_dmabuf_check_size(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (!size || size % page)
		return devmem_fail(-EINVAL,
				   "size %zu is not a positive multiple of the page size (%zu)",
				   size, page);
	return 0;
}

DEVMEM_EXPORT void devmem_dmabuf_free(struct devmem_dmabuf *db)
{
	if (!db)
		return;
	if (db->map)
		munmap(db->map, db->size);
	close(db->fd);
	if (db->ops && db->ops->release)
		db->ops->release(db);
	free(db);
}

DEVMEM_EXPORT int devmem_dmabuf_fd(const struct devmem_dmabuf *db)
{
	return db->fd;
}

DEVMEM_EXPORT size_t devmem_dmabuf_size(const struct devmem_dmabuf *db)
{
	return db->size;
}

DEVMEM_EXPORT enum devmem_dmabuf_kind
devmem_dmabuf_kind(const struct devmem_dmabuf *db)
{
	return db->kind;
}

/*
 * A dma-buf tells its size through lseek(SEEK_END) (st_size says the same
 * on current kernels). The fd shares its position with the caller's, so
 * put it back: dma-bufs have none (SEEK_CUR fails), other files do.
 */
int devmem_fd_size(int fd, size_t *size)
{
	struct stat st;
	off_t cur, end;

	if (fstat(fd, &st))
		return devmem_fail_errno(-errno, "fstat of fd %d", fd);
	if (S_ISDIR(st.st_mode))
		return devmem_fail(-EINVAL, "fd %d is a directory", fd);
	cur = lseek(fd, 0, SEEK_CUR);
	end = lseek(fd, 0, SEEK_END);
	if (end >= 0)
		lseek(fd, cur >= 0 ? cur : 0, SEEK_SET);
	else if (st.st_size > 0)
		end = st.st_size;
	else
		return devmem_fail_errno(-errno, "size of fd %d", fd);
	if (!end)
		return devmem_fail(-EINVAL, "fd %d is empty", fd);
	*size = (size_t)end;
	return 0;
}

DEVMEM_EXPORT int devmem_dmabuf_new_import(struct devmem_dmabuf **dbp, int fd)
{
	struct devmem_dmabuf *db;
	size_t size = 0;
	int dup, err;

	devmem_error_clear();
	if (!dbp)
		return devmem_fail(-EINVAL, "no place for the result");
	if (fd < 0)
		return devmem_fail(-EBADF, "fd %d", fd);
	dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup < 0)
		return devmem_fail_errno(-errno, "dup of fd %d", fd);
	err = devmem_fd_size(dup, &size);
	if (err)
		goto err_close_dup;
	db = devmem_dmabuf_wrap(DEVMEM_DMABUF_IMPORTED, dup, size, NULL, NULL);
	if (!db) {
		err = devmem_fail(-ENOMEM, "out of memory");
		goto err_close_dup;
	}
	*dbp = db;
	return 0;

err_close_dup:
	close(dup);
	return err;
}

static int devmem_dmabuf_sync(int fd, uint64_t flags)
{
	struct dma_buf_sync sync = { .flags = flags };

	while (ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync))
		if (errno != EINTR)
			return -errno;
	return 0;
}

static int devmem_dmabuf_writable(const struct devmem_dmabuf *db)
{
	int fl = fcntl(db->fd, F_GETFL);

	return fl >= 0 && (fl & O_ACCMODE) == O_RDWR;
}

/*
 * The buffer's mapping, made once and kept until the buffer is freed, so
 * that every caller gets the same address: writable when the fd was
 * opened for writing (as udmabuf and heap fds are), read-only otherwise.
 * Two threads may race to make it; the loser unmaps its own.
 */
static int devmem_dmabuf_mapping(struct devmem_dmabuf *db, void **addrp)
{
	int prot = PROT_READ;
	void *map, *none = NULL;

	map = __atomic_load_n(&db->map, __ATOMIC_ACQUIRE);
	if (map) {
		*addrp = map;
		return 0;
	}
	if (devmem_dmabuf_writable(db))
		prot |= PROT_WRITE;
	map = mmap(NULL, db->size, prot, MAP_SHARED, db->fd, 0);
	if (map == MAP_FAILED)
		return devmem_fail_errno(-errno, "mmap of dma-buf fd %d",
					 db->fd);
	if (!__atomic_compare_exchange_n(&db->map, &none, map, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(map, db->size);
		map = none;
	}
	*addrp = map;
	return 0;
}

static uint64_t devmem_access_sync_flags(unsigned int access)
{
	if (access == (DEVMEM_ACCESS_READ | DEVMEM_ACCESS_WRITE))
		return DMA_BUF_SYNC_RW;
	return access == DEVMEM_ACCESS_WRITE ? DMA_BUF_SYNC_WRITE :
		DMA_BUF_SYNC_READ;
}

/* The arguments of every access call; 0 or -errno with the reason set. */
static int devmem_access_check(const struct devmem_dmabuf *db,
			       unsigned int access)
{
	if (!db)
		return devmem_fail(-EINVAL, "no buffer");
	if (!access || access & ~(DEVMEM_ACCESS_READ | DEVMEM_ACCESS_WRITE))
		return devmem_fail(-EINVAL, "access 0x%x: give DEVMEM_ACCESS_READ, DEVMEM_ACCESS_WRITE or both",
				   access);
	if (db->ops && db->ops->read)
		return devmem_fail(-EOPNOTSUPP, "the CPU cannot map this buffer's memory (GPU memory: use devmem_dmabuf_cuda_addr() in GPU code)");
	if ((access & DEVMEM_ACCESS_WRITE) && !devmem_dmabuf_writable(db))
		return devmem_fail(-EACCES, "dma-buf fd %d is open read-only: it cannot be written",
				   db->fd);
	return 0;
}

DEVMEM_EXPORT int devmem_dmabuf_map(struct devmem_dmabuf *db,
				    unsigned int access, void **addrp)
{
	int err;

	devmem_error_clear();
	err = devmem_access_check(db, access);
	if (err)
		return err;
	if (!addrp)
		return devmem_fail(-EINVAL, "no place for the address");
	return devmem_dmabuf_mapping(db, addrp);
}

static int devmem_dmabuf_access(struct devmem_dmabuf *db, unsigned int access,
				uint64_t when)
{
	int err;

	devmem_error_clear();
	err = devmem_access_check(db, access);
	if (err)
		return err;
	err = devmem_dmabuf_sync(db->fd, when | devmem_access_sync_flags(access));
	if (err)
		return devmem_fail_errno(err, "DMA_BUF_IOCTL_SYNC %s on fd %d",
					 when == DMA_BUF_SYNC_START ? "start" : "end",
					 db->fd);
	return 0;
}

DEVMEM_EXPORT int devmem_dmabuf_begin_access(struct devmem_dmabuf *db,
					     unsigned int access)
{
	return devmem_dmabuf_access(db, access, DMA_BUF_SYNC_START);
}

DEVMEM_EXPORT int devmem_dmabuf_end_access(struct devmem_dmabuf *db,
					   unsigned int access)
{
	return devmem_dmabuf_access(db, access, DMA_BUF_SYNC_END);
}

static int devmem_dmabuf_read_mapped(struct devmem_dmabuf *db, uint64_t off,
				     void *dst, size_t len)
{
	void *map;
	int err;

	err = devmem_dmabuf_mapping(db, &map);
	if (err)
		return err;
	err = devmem_dmabuf_sync(db->fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	if (err)
		return devmem_fail_errno(err, "DMA_BUF_IOCTL_SYNC start on fd %d",
					 db->fd);
	memcpy(dst, (const unsigned char *)map + off, len);
	err = devmem_dmabuf_sync(db->fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	if (err)
		return devmem_fail_errno(err, "DMA_BUF_IOCTL_SYNC end on fd %d",
					 db->fd);
	return 0;
}

DEVMEM_EXPORT int devmem_dmabuf_read(struct devmem_dmabuf *db, uint64_t off,
				     void *dst, size_t len)
{
	devmem_error_clear();
	if (!db || (len && !dst))
		return devmem_fail(-EINVAL, "no buffer");
	if (off > db->size || len > db->size - off)
		return devmem_fail(-EINVAL,
				   "bytes %llu+%zu are outside the %zu-byte buffer",
				   (unsigned long long)off, len, db->size);
	if (!len)
		return 0;
	if (db->ops && db->ops->read)
		return db->ops->read(db, off, dst, len);
	return devmem_dmabuf_read_mapped(db, off, dst, len);
}
