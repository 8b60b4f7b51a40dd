// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * GPU memory as a dma-buf through the CUDA driver API: cuMemAlloc in the
 * device's primary context, exported with cuMemGetHandleForAddressRange
 * (CUDA 11.7 and later, NVIDIA's open kernel modules). libcuda.so.1 is
 * loaded when a buffer is made, never linked: the library works on
 * machines without it. Each buffer holds its own reference on the
 * driver library and on the primary context.
 */
#include "dmabuf.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define DEVMEM_CUDA_LIB		"libcuda.so.1"

/*
 * The few types, values and entry points of NVIDIA's driver API used here,
 * declared from its documentation so that building needs no CUDA toolkit.
 * Entry points with a _v2 are those cuda.h maps the plain names to.
 */
typedef int cu_result;
typedef int cu_device;
typedef struct cu_ctx *cu_context;
#if UINTPTR_MAX > 0xffffffffU
typedef unsigned long long cu_deviceptr;
#else
typedef unsigned int cu_deviceptr;
#endif

#define CUDA_SUCCESS				0
#define CUDA_ERROR_OUT_OF_MEMORY		2
#define CUDA_ERROR_NOT_SUPPORTED		801
#define CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED	124
#define CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD	1

struct devmem_cuda_api {
	cu_result (*init)(unsigned int flags);
	cu_result (*device_get)(cu_device *dev, int ordinal);
	cu_result (*device_get_attribute)(int *value, int attr, cu_device dev);
	cu_result (*primary_ctx_retain)(cu_context *ctx, cu_device dev);
	cu_result (*primary_ctx_release)(cu_device dev);
	cu_result (*ctx_push)(cu_context ctx);
	cu_result (*ctx_pop)(cu_context *ctx);
	cu_result (*mem_alloc)(cu_deviceptr *ptr, size_t size);
	cu_result (*mem_free)(cu_deviceptr ptr);
	cu_result (*memcpy_dtoh)(void *dst, cu_deviceptr src, size_t len);
	cu_result (*get_handle)(void *handle, cu_deviceptr ptr, size_t size,
				int type, unsigned long long flags);
	cu_result (*get_error_name)(cu_result res, const char **name);
};

struct devmem_cuda {
	void *lib;
	struct devmem_cuda_api api;
	cu_device dev;
	cu_context ctx;
	cu_deviceptr base;		/* what cuMemAlloc returned */
	cu_deviceptr ptr;		/* the page-aligned buffer in it */
};

static int devmem_cuda_fail(const struct devmem_cuda *cu, int err,
			    cu_result res, const char *what)
{
	const char *name = NULL;

	if (cu->api.get_error_name(res, &name) != CUDA_SUCCESS || !name)
		name = "unknown error";
	return devmem_fail(err, "%s: %s (%d)", what, name, res);
}

static void *devmem_cuda_sym(void *lib, const char *name,
			     const char **missing)
{
	void *sym = dlsym(lib, name);

	if (!sym && !*missing)
		*missing = name;
	return sym;
}

static int devmem_cuda_syms(struct devmem_cuda *cu)
{
	struct devmem_cuda_api *api = &cu->api;
	const char *missing = NULL;

#define DEVMEM_CUDA_SYM(field, name)					\
	(api->field = (__typeof__(api->field))				\
		devmem_cuda_sym(cu->lib, name, &missing))
	DEVMEM_CUDA_SYM(init, "cuInit");
	DEVMEM_CUDA_SYM(device_get, "cuDeviceGet");
	DEVMEM_CUDA_SYM(device_get_attribute, "cuDeviceGetAttribute");
	DEVMEM_CUDA_SYM(primary_ctx_retain, "cuDevicePrimaryCtxRetain");
	DEVMEM_CUDA_SYM(primary_ctx_release, "cuDevicePrimaryCtxRelease_v2");
	DEVMEM_CUDA_SYM(ctx_push, "cuCtxPushCurrent_v2");
	DEVMEM_CUDA_SYM(ctx_pop, "cuCtxPopCurrent_v2");
	DEVMEM_CUDA_SYM(mem_alloc, "cuMemAlloc_v2");
	DEVMEM_CUDA_SYM(mem_free, "cuMemFree_v2");
	DEVMEM_CUDA_SYM(memcpy_dtoh, "cuMemcpyDtoH_v2");
	DEVMEM_CUDA_SYM(get_handle, "cuMemGetHandleForAddressRange");
	DEVMEM_CUDA_SYM(get_error_name, "cuGetErrorName");
#undef DEVMEM_CUDA_SYM

	if (missing)
		return devmem_fail(-EOPNOTSUPP,
				   DEVMEM_CUDA_LIB " has no %s (a driver older than CUDA 11.7?)",
				   missing);
	return 0;
}

static int devmem_cuda_load(struct devmem_cuda *cu)
{
	int err;

	cu->lib = dlopen(DEVMEM_CUDA_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!cu->lib)
		return devmem_fail(-ENOENT, "no CUDA driver: %s", dlerror());
	err = devmem_cuda_syms(cu);
	if (err)
		goto err_close_lib;
	return 0;

err_close_lib:
	dlclose(cu->lib);
	return err;
}

/* The device, if it can export dma-bufs, and its primary context. */
static int devmem_cuda_open(struct devmem_cuda *cu, int ordinal)
{
	cu_result res;
	int dmabuf = 0;

	res = cu->api.init(0);
	if (res != CUDA_SUCCESS)
		return devmem_cuda_fail(cu, -ENODEV, res, "cuInit");
	res = cu->api.device_get(&cu->dev, ordinal);
	if (res != CUDA_SUCCESS)
		return devmem_cuda_fail(cu, -ENODEV, res, "cuDeviceGet");
	res = cu->api.device_get_attribute(&dmabuf,
					   CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
					   cu->dev);
	if (res != CUDA_SUCCESS || !dmabuf)
		return devmem_fail(-EOPNOTSUPP,
				   "CUDA device %d cannot export dma-bufs (needs NVIDIA's open kernel modules)",
				   ordinal);
	res = cu->api.primary_ctx_retain(&cu->ctx, cu->dev);
	if (res != CUDA_SUCCESS)
		return devmem_cuda_fail(cu, -EIO, res,
					"cuDevicePrimaryCtxRetain");
	return 0;
}

static int devmem_cuda_push(struct devmem_cuda *cu)
{
	cu_result res = cu->api.ctx_push(cu->ctx);

	if (res != CUDA_SUCCESS)
		return devmem_cuda_fail(cu, -EIO, res, "cuCtxPushCurrent");
	return 0;
}

static void devmem_cuda_pop(struct devmem_cuda *cu)
{
	cu_context ctx;

	cu->api.ctx_pop(&ctx);
}

/* dma-buf export wants a page-aligned range: cuMemAlloc's alignment is
 * only documented to suit any kind of variable, so over-allocate if the
 * first try is not.
 */
static int devmem_cuda_alloc(struct devmem_cuda *cu, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	cu_result res;

	res = cu->api.mem_alloc(&cu->base, size);
	if (res == CUDA_SUCCESS && cu->base % page) {
		cu->api.mem_free(cu->base);
		res = size > SIZE_MAX - page ? CUDA_ERROR_OUT_OF_MEMORY :
		      cu->api.mem_alloc(&cu->base, size + page);
	}
	if (res != CUDA_SUCCESS)
		return devmem_cuda_fail(cu, res == CUDA_ERROR_OUT_OF_MEMORY ?
					    -ENOMEM : -EIO, res, "cuMemAlloc");
	cu->ptr = (cu->base + page - 1) / page * page;
	return 0;
}

/* Allocate @size bytes of GPU memory and export them: the dma-buf's fd. */
static int devmem_cuda_export(struct devmem_cuda *cu, size_t size)
{
	cu_result res;
	int fd = -1, err;

	err = devmem_cuda_push(cu);
	if (err)
		return err;
	err = devmem_cuda_alloc(cu, size);
	if (err)
		goto err_pop;
	res = cu->api.get_handle(&fd, cu->ptr, size,
				 CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (res != CUDA_SUCCESS) {
		err = devmem_cuda_fail(cu, res == CUDA_ERROR_NOT_SUPPORTED ?
					   -EOPNOTSUPP : -EIO, res,
				       "cuMemGetHandleForAddressRange");
		goto err_free_mem;
	}
	devmem_cuda_pop(cu);
	return fd;

err_free_mem:
	cu->api.mem_free(cu->base);
err_pop:
	devmem_cuda_pop(cu);
	return err;
}

static void devmem_cuda_free_mem(struct devmem_cuda *cu)
{
	if (devmem_cuda_push(cu))
		return;		/* no context: the driver frees it at exit */
	cu->api.mem_free(cu->base);
	devmem_cuda_pop(cu);
}

static int devmem_cuda_read(struct devmem_dmabuf *db, uint64_t off,
			    void *dst, size_t len)
{
	struct devmem_cuda *cu = db->priv;
	cu_result res;
	int err;

	err = devmem_cuda_push(cu);
	if (err)
		return err;
	res = cu->api.memcpy_dtoh(dst, cu->ptr + off, len);
	devmem_cuda_pop(cu);
	if (res != CUDA_SUCCESS)
		return devmem_cuda_fail(cu, -EIO, res, "cuMemcpyDtoH");
	return 0;
}

/* The dma-buf's fd is closed by now; importers may still hold the
 * dma-buf, which keeps its own reference on the memory in the driver.
 */
static void devmem_cuda_release(struct devmem_dmabuf *db)
{
	struct devmem_cuda *cu = db->priv;

	devmem_cuda_free_mem(cu);
	cu->api.primary_ctx_release(cu->dev);
	dlclose(cu->lib);
	free(cu);
}

static const struct devmem_dmabuf_ops devmem_cuda_ops = {
	.read = devmem_cuda_read,
	.release = devmem_cuda_release,
};

DEVMEM_EXPORT int devmem_dmabuf_cuda(struct devmem_dmabuf **dbp, int device,
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
	err = devmem_cuda_load(cu);
	if (err)
		goto err_free_cu;
	err = devmem_cuda_open(cu, device);
	if (err)
		goto err_close_lib;
	fd = devmem_cuda_export(cu, size);
	if (fd < 0) {
		err = fd;
		goto err_release_ctx;
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
err_release_ctx:
	cu->api.primary_ctx_release(cu->dev);
err_close_lib:
	dlclose(cu->lib);
err_free_cu:
	free(cu);
	return err;
}
