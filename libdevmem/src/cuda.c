// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * GPU memory as a dma-buf through the CUDA driver API: cuMemAlloc in the
 * device's primary context, exported with cuMemGetHandleForAddressRange
 * (CUDA 11.7 and later, NVIDIA's open kernel modules). libcuda.so.1 is
 * loaded when a buffer is made, never linked: the library works on
 * machines without it. Each buffer holds its own reference on the
 * driver library and on the primary context.
 */
#include "cuda_api.h"
#include "dmabuf.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

struct devmem_cuda {
	struct devmem_cuda_ctx c;
	int ordinal;			/* the device asked for */
	cu_deviceptr base;		/* what cuMemAlloc returned */
	cu_deviceptr ptr;		/* the page-aligned buffer in it */
};

/* dma-buf export wants a page-aligned range: cuMemAlloc's alignment is
 * only documented to suit any kind of variable, so over-allocate if the
 * first try is not.
 */
static int devmem_cuda_alloc(struct devmem_cuda *cu, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	cu_result res;

	res = cu->c.api.mem_alloc(&cu->base, size);
	if (res == CUDA_SUCCESS && cu->base % page) {
		cu->c.api.mem_free(cu->base);
		res = size > SIZE_MAX - page ? CUDA_ERROR_OUT_OF_MEMORY :
		      cu->c.api.mem_alloc(&cu->base, size + page);
	}
	if (res != CUDA_SUCCESS)
		return devmem_cuda_fail(&cu->c, res == CUDA_ERROR_OUT_OF_MEMORY ?
					-ENOMEM : -EIO, res, "cuMemAlloc");
	cu->ptr = (cu->base + page - 1) / page * page;
	return 0;
}

/* Allocate @size bytes of GPU memory and export them: the dma-buf's fd. */
static int devmem_cuda_export(struct devmem_cuda *cu, size_t size)
{
	cu_result res;
	int fd = -1, err;
	off_t end;

	err = devmem_cuda_ctx_push(&cu->c);
	if (err)
		return err;
	err = devmem_cuda_alloc(cu, size);
	if (err)
		goto err_pop;
	res = cu->c.api.get_handle(&fd, cu->ptr, size,
				 CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (res != CUDA_SUCCESS) {
		err = devmem_cuda_fail(&cu->c, res == CUDA_ERROR_NOT_SUPPORTED ?
				       -EOPNOTSUPP : -EIO, res,
				       "cuMemGetHandleForAddressRange");
		goto err_free_mem;
	}
	/* what a binding will see: a dma-buf of exactly the range */
	end = lseek(fd, 0, SEEK_END);
	if (end != (off_t)size) {
		err = devmem_fail(-EIO,
				  "cuMemGetHandleForAddressRange: a dma-buf of %lld bytes, not %zu",
				  (long long)end, size);
		goto err_close_fd;
	}
	devmem_cuda_ctx_pop(&cu->c);
	return fd;

err_close_fd:
	close(fd);
err_free_mem:
	cu->c.api.mem_free(cu->base);
err_pop:
	devmem_cuda_ctx_pop(&cu->c);
	return err;
}

static void devmem_cuda_free_mem(struct devmem_cuda *cu)
{
	if (devmem_cuda_ctx_push(&cu->c))
		return;		/* no context: the driver frees it at exit */
	cu->c.api.mem_free(cu->base);
	devmem_cuda_ctx_pop(&cu->c);
}

static int devmem_cuda_read(struct devmem_dmabuf *db, uint64_t off,
			    void *dst, size_t len)
{
	struct devmem_cuda *cu = db->priv;
	cu_result res;
	int err;

	err = devmem_cuda_ctx_push(&cu->c);
	if (err)
		return err;
	res = cu->c.api.memcpy_dtoh(dst, cu->ptr + off, len);
	devmem_cuda_ctx_pop(&cu->c);
	if (res != CUDA_SUCCESS)
		return devmem_cuda_fail(&cu->c, -EIO, res, "cuMemcpyDtoH");
	return 0;
}

/* The dma-buf's fd is closed by now; importers may still hold the
 * dma-buf, which keeps its own reference on the memory in the driver.
 */
static void devmem_cuda_release(struct devmem_dmabuf *db)
{
	struct devmem_cuda *cu = db->priv;

	devmem_cuda_free_mem(cu);
	devmem_cuda_ctx_close(&cu->c);
	free(cu);
}

static const struct devmem_dmabuf_ops devmem_cuda_ops = {
	.read = devmem_cuda_read,
	.release = devmem_cuda_release,
};

DEVMEM_EXPORT int devmem_dmabuf_new_cuda(struct devmem_dmabuf **dbp, int device,
				     size_t size)
{
	struct devmem_dmabuf *db;
	struct devmem_cuda *cu;
	int fd, err;

	devmem_error_clear();
	if (!dbp)
		return devmem_fail(-EINVAL, "no place for the result");
	if (device < 0)
		return devmem_fail(-EINVAL, "bad CUDA device %d", device);
	err = devmem_dmabuf_check_size(size);
	if (err)
		return err;

	cu = calloc(1, sizeof(*cu));
	if (!cu)
		return devmem_fail(-ENOMEM, "out of memory");
	err = devmem_cuda_ctx_open(&cu->c, device, 1);
	if (err)
		goto err_free_cu;
	cu->ordinal = device;
	fd = devmem_cuda_export(cu, size);
	if (fd < 0) {
		err = fd;
		goto err_close_ctx;
	}
	db = devmem_dmabuf_wrap(DEVMEM_DMABUF_CUDA, fd, size, &devmem_cuda_ops,
				cu);
	if (!db) {
		err = devmem_fail(-ENOMEM, "out of memory");
		goto err_close_fd;
	}
	*dbp = db;
	return 0;

err_close_fd:
	close(fd);
	devmem_cuda_free_mem(cu);
err_close_ctx:
	devmem_cuda_ctx_close(&cu->c);
err_free_cu:
	free(cu);
	return err;
}

DEVMEM_EXPORT void *devmem_dmabuf_cuda_addr(const struct devmem_dmabuf *db)
{
	const struct devmem_cuda *cu;

	if (!db || db->kind != DEVMEM_DMABUF_CUDA)
		return NULL;
	cu = db->priv;
	return (void *)(uintptr_t)cu->ptr;
}

int devmem_cuda_ordinal(const struct devmem_dmabuf *db)
{
	const struct devmem_cuda *cu = db->priv;

	return cu->ordinal;
}
