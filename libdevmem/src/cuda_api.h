/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * The part of NVIDIA's CUDA driver API that libdevmem uses, loaded from
 * libcuda.so.1 at run time (the library never links it): the types,
 * values and entry points are declared here from the driver API's
 * documentation, so that building needs no CUDA toolkit. Never installed.
 */
#ifndef LIBDEVMEM_CUDA_API_H
#define LIBDEVMEM_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

typedef int cu_result;
typedef int cu_device;
typedef struct cu_ctx *cu_context;
typedef struct cu_mod *cu_module;
typedef struct cu_func *cu_function;
typedef struct cu_stream *cu_stream;
typedef struct cu_event *cu_event;
#if UINTPTR_MAX > 0xffffffffU
typedef unsigned long long cu_deviceptr;
#else
typedef unsigned int cu_deviceptr;
#endif

#define CUDA_SUCCESS				0
#define CUDA_ERROR_INVALID_VALUE		1
#define CUDA_ERROR_OUT_OF_MEMORY		2
#define CUDA_ERROR_NOT_READY			600
#define CUDA_ERROR_NOT_SUPPORTED		801
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT	16
#define CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED	124
#define CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD	1
#define CU_EVENT_DISABLE_TIMING			2

/* Entry points with a _v2 are those cuda.h maps the plain names to. */
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
	cu_result (*mem_alloc_host)(void **ptr, size_t size);
	cu_result (*mem_free_host)(void *ptr);
	cu_result (*memcpy_dtoh)(void *dst, cu_deviceptr src, size_t len);
	cu_result (*get_handle)(void *handle, cu_deviceptr ptr, size_t size,
				int type, unsigned long long flags);
	cu_result (*module_load_data)(cu_module *mod, const void *image);
	cu_result (*module_unload)(cu_module mod);
	cu_result (*module_get_function)(cu_function *fn, cu_module mod,
					 const char *name);
	cu_result (*launch_kernel)(cu_function fn, unsigned int gx,
				   unsigned int gy, unsigned int gz,
				   unsigned int bx, unsigned int by,
				   unsigned int bz, unsigned int shared,
				   cu_stream stream, void **params,
				   void **extra);
	cu_result (*event_create)(cu_event *ev, unsigned int flags);
	cu_result (*event_destroy)(cu_event ev);
	cu_result (*event_record)(cu_event ev, cu_stream stream);
	cu_result (*event_query)(cu_event ev);
	cu_result (*event_synchronize)(cu_event ev);
	cu_result (*stream_synchronize)(cu_stream stream);
	cu_result (*get_error_name)(cu_result res, const char **name);
};

/* A device's primary context, held, with the driver library behind it. */
struct devmem_cuda_ctx {
	void *lib;
	struct devmem_cuda_api api;
	cu_device dev;
	cu_context ctx;
};

/*
 * Load libcuda.so.1, initialise the driver and retain device @ordinal's
 * primary context; with @need_dmabuf, refuse a device that cannot export
 * dma-bufs. Returns 0, or -errno with the reason set: -ENOENT (no
 * driver), -EOPNOTSUPP (a driver older than CUDA 11.7, or no dma-buf
 * export), -ENODEV (no such device, or the driver found none), -EIO.
 */
int devmem_cuda_ctx_open(struct devmem_cuda_ctx *c, int ordinal,
			 int need_dmabuf);
void devmem_cuda_ctx_close(struct devmem_cuda_ctx *c);

/* Make the context current on this thread / undo that. */
int devmem_cuda_ctx_push(struct devmem_cuda_ctx *c);
void devmem_cuda_ctx_pop(struct devmem_cuda_ctx *c);

/* Set the reason "@what: CUDA_ERROR_NAME (res)" and return @err. */
int devmem_cuda_fail(const struct devmem_cuda_ctx *c, int err, cu_result res,
		     const char *what);

/* The CUDA device ordinal a devmem_dmabuf_new_cuda() buffer was made on. */
struct devmem_dmabuf;
int devmem_cuda_ordinal(const struct devmem_dmabuf *db);

#endif /* LIBDEVMEM_CUDA_API_H */
