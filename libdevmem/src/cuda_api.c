// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * libcuda.so.1, loaded at run time, and the primary context of one
 * device: what the CUDA dma-buf provider (cuda.c) and the GPU unpack
 * (unpack.c) share. Each user holds its own reference on the driver
 * library and on the context, so they can be freed in any order.
 */
#include "cuda_api.h"
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>

#define DEVMEM_CUDA_LIB		"libcuda.so.1"

int devmem_cuda_fail(const struct devmem_cuda_ctx *c, int err, cu_result res,
		     const char *what)
{
	const char *name = NULL;

	if (c->api.get_error_name(res, &name) != CUDA_SUCCESS || !name)
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

static int devmem_cuda_syms(struct devmem_cuda_ctx *c)
{
	struct devmem_cuda_api *api = &c->api;
	const char *missing = NULL;

#define DEVMEM_CUDA_SYM(field, name)					\
	(api->field = (__typeof__(api->field))				\
		devmem_cuda_sym(c->lib, name, &missing))
	DEVMEM_CUDA_SYM(init, "cuInit");
	DEVMEM_CUDA_SYM(device_get, "cuDeviceGet");
	DEVMEM_CUDA_SYM(device_get_attribute, "cuDeviceGetAttribute");
	DEVMEM_CUDA_SYM(primary_ctx_retain, "cuDevicePrimaryCtxRetain");
	DEVMEM_CUDA_SYM(primary_ctx_release, "cuDevicePrimaryCtxRelease_v2");
	DEVMEM_CUDA_SYM(ctx_push, "cuCtxPushCurrent_v2");
	DEVMEM_CUDA_SYM(ctx_pop, "cuCtxPopCurrent_v2");
	DEVMEM_CUDA_SYM(mem_alloc, "cuMemAlloc_v2");
	DEVMEM_CUDA_SYM(mem_free, "cuMemFree_v2");
	DEVMEM_CUDA_SYM(mem_alloc_host, "cuMemAllocHost_v2");
	DEVMEM_CUDA_SYM(mem_free_host, "cuMemFreeHost");
	DEVMEM_CUDA_SYM(memcpy_dtoh, "cuMemcpyDtoH_v2");
	DEVMEM_CUDA_SYM(get_handle, "cuMemGetHandleForAddressRange");
	DEVMEM_CUDA_SYM(module_load_data, "cuModuleLoadData");
	DEVMEM_CUDA_SYM(module_unload, "cuModuleUnload");
	DEVMEM_CUDA_SYM(module_get_function, "cuModuleGetFunction");
	DEVMEM_CUDA_SYM(launch_kernel, "cuLaunchKernel");
	DEVMEM_CUDA_SYM(event_create, "cuEventCreate");
	DEVMEM_CUDA_SYM(event_destroy, "cuEventDestroy_v2");
	DEVMEM_CUDA_SYM(event_record, "cuEventRecord");
	DEVMEM_CUDA_SYM(event_query, "cuEventQuery");
	DEVMEM_CUDA_SYM(event_synchronize, "cuEventSynchronize");
	DEVMEM_CUDA_SYM(stream_synchronize, "cuStreamSynchronize");
	DEVMEM_CUDA_SYM(get_error_name, "cuGetErrorName");
#undef DEVMEM_CUDA_SYM

	if (missing)
		return devmem_fail(-EOPNOTSUPP,
				   DEVMEM_CUDA_LIB " has no %s (a driver older than CUDA 11.7?)",
				   missing);
	return 0;
}

int devmem_cuda_ctx_open(struct devmem_cuda_ctx *c, int ordinal,
			 int need_dmabuf)
{
	cu_result res;
	int dmabuf = 0, err;

	c->lib = dlopen(DEVMEM_CUDA_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!c->lib)
		return devmem_fail(-ENOENT, "no CUDA driver: %s", dlerror());
	err = devmem_cuda_syms(c);
	if (err)
		goto err_close_lib;

	res = c->api.init(0);
	if (res != CUDA_SUCCESS) {
		err = devmem_cuda_fail(c, -ENODEV, res, "cuInit");
		goto err_close_lib;
	}
	res = c->api.device_get(&c->dev, ordinal);
	if (res != CUDA_SUCCESS) {
		err = devmem_cuda_fail(c, -ENODEV, res, "cuDeviceGet");
		goto err_close_lib;
	}
	if (need_dmabuf) {
		res = c->api.device_get_attribute(&dmabuf,
						  CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
						  c->dev);
		if (res != CUDA_SUCCESS || !dmabuf) {
			err = devmem_fail(-EOPNOTSUPP,
					  "CUDA device %d cannot export dma-bufs (needs NVIDIA's open kernel modules)",
					  ordinal);
			goto err_close_lib;
		}
	}
	res = c->api.primary_ctx_retain(&c->ctx, c->dev);
	if (res != CUDA_SUCCESS) {
		err = devmem_cuda_fail(c, -EIO, res, "cuDevicePrimaryCtxRetain");
		goto err_close_lib;
	}
	return 0;

err_close_lib:
	dlclose(c->lib);
	return err;
}

void devmem_cuda_ctx_close(struct devmem_cuda_ctx *c)
{
	c->api.primary_ctx_release(c->dev);
	dlclose(c->lib);
}

int devmem_cuda_ctx_push(struct devmem_cuda_ctx *c)
{
	cu_result res = c->api.ctx_push(c->ctx);

	if (res != CUDA_SUCCESS)
		return devmem_cuda_fail(c, -EIO, res, "cuCtxPushCurrent");
	return 0;
}

void devmem_cuda_ctx_pop(struct devmem_cuda_ctx *c)
{
	cu_context ctx;

	c->api.ctx_pop(&ctx);
}
