// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * The CUDA driver calls of the plugin, through libcuda.so.1 loaded at
 * run time: pinned host memory the GPU reaches (the unpack records, copy
 * mode's bounce and staging buffers), copies between host and GPU, and
 * the dma-buf export of NCCL's buffers for devmem sends. Every call runs
 * in the caller's current context, which NCCL's proxy threads have.
 */
#include "plugin.h"

#include <dlfcn.h>
#include <string.h>

#define NDM_CUDA_LIB			"libcuda.so.1"
#define NDM_HOSTALLOC_PORTABLE		0x01
#define NDM_HOSTALLOC_DEVICEMAP		0x02
#define NDM_HOSTREGISTER_PORTABLE	0x01
#define NDM_HOSTREGISTER_DEVICEMAP	0x02
#define NDM_HANDLE_TYPE_DMA_BUF_FD	1
#define NDM_STREAM_NON_BLOCKING		0x1

ncclResult_t ndm_gpu_check(int res, const char *what)
{
	const char *name = NULL;

	if (res == 0)
		return ncclSuccess;
	if (!ndm.gpu.get_error_name || ndm.gpu.get_error_name(res, &name) ||
	    !name)
		name = "unknown error";
	NDM_WARN("%s: %s (%d)", what, name, res);
	return ncclUnhandledCudaError;
}

ncclResult_t ndm_gpu_load(void)
{
	struct ndm_gpu *g = &ndm.gpu;
	const char *missing = NULL;

	if (ndm.gpu_loaded)
		return ncclSuccess;
	memset(g, 0, sizeof(*g));
	g->lib = dlopen(NDM_CUDA_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!g->lib) {
		NDM_WARN("no CUDA driver: %s", dlerror());
		return ncclSystemError;
	}
#define NDM_SYM(field, name)						\
	do {								\
		*(void **)&g->field = dlsym(g->lib, name);		\
		if (!g->field && !missing)				\
			missing = name;					\
	} while (0)
	NDM_SYM(init, "cuInit");
	NDM_SYM(ctx_get_device, "cuCtxGetDevice");
	NDM_SYM(host_alloc, "cuMemHostAlloc");
	NDM_SYM(free_host, "cuMemFreeHost");
	NDM_SYM(host_get_device_pointer, "cuMemHostGetDevicePointer_v2");
	NDM_SYM(host_register, "cuMemHostRegister_v2");
	NDM_SYM(host_unregister, "cuMemHostUnregister");
	NDM_SYM(stream_create, "cuStreamCreate");
	NDM_SYM(stream_destroy, "cuStreamDestroy_v2");
	NDM_SYM(stream_synchronize, "cuStreamSynchronize");
	NDM_SYM(memcpy_htod_async, "cuMemcpyHtoDAsync_v2");
	NDM_SYM(memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2");
	NDM_SYM(get_error_name, "cuGetErrorName");
	/* CUDA 11.7 and later; without it, sends are staged (copy mode). */
	*(void **)&g->get_handle = dlsym(g->lib,
					 "cuMemGetHandleForAddressRange");
#undef NDM_SYM
	if (missing) {
		NDM_WARN(NDM_CUDA_LIB " has no %s", missing);
		goto err_close;
	}
	if (ndm_gpu_check(g->init(0), "cuInit"))
		goto err_close;
	ndm.gpu_loaded = true;
	return ncclSuccess;

err_close:
	dlclose(g->lib);
	memset(g, 0, sizeof(*g));
	return ncclSystemError;
}

void ndm_gpu_unload(void)
{
	if (!ndm.gpu_loaded)
		return;
	dlclose(ndm.gpu.lib);
	memset(&ndm.gpu, 0, sizeof(ndm.gpu));
	ndm.gpu_loaded = false;
}

ncclResult_t ndm_mapped_alloc(struct ndm_mapped *m, size_t size)
{
	unsigned long long dev;
	void *p;

	memset(m, 0, sizeof(*m));
	if (ndm_gpu_check(ndm.gpu.host_alloc(&p, size, NDM_HOSTALLOC_PORTABLE |
					     NDM_HOSTALLOC_DEVICEMAP),
			  "cuMemHostAlloc"))
		return ncclUnhandledCudaError;
	if (ndm_gpu_check(ndm.gpu.host_get_device_pointer(&dev, p, 0),
			  "cuMemHostGetDevicePointer")) {
		ndm.gpu.free_host(p);
		return ncclUnhandledCudaError;
	}
	memset(p, 0, size);
	m->host = p;
	m->dev = dev;
	m->size = size;
	return ncclSuccess;
}

ncclResult_t ndm_mapped_register(struct ndm_mapped *m, void *p, size_t size)
{
	unsigned long long dev;

	memset(m, 0, sizeof(*m));
	if (ndm_gpu_check(ndm.gpu.host_register(p, size,
						NDM_HOSTREGISTER_PORTABLE |
						NDM_HOSTREGISTER_DEVICEMAP),
			  "cuMemHostRegister"))
		return ncclUnhandledCudaError;
	if (ndm_gpu_check(ndm.gpu.host_get_device_pointer(&dev, p, 0),
			  "cuMemHostGetDevicePointer")) {
		ndm.gpu.host_unregister(p);
		return ncclUnhandledCudaError;
	}
	m->host = p;
	m->dev = dev;
	m->size = size;
	m->registered = true;
	return ncclSuccess;
}

void ndm_mapped_free(struct ndm_mapped *m)
{
	if (!m->host)
		return;
	if (m->registered)
		ndm.gpu.host_unregister(m->host);
	else
		ndm.gpu.free_host(m->host);
	memset(m, 0, sizeof(*m));
}

ncclResult_t ndm_gpu_export(void *ptr, size_t size, int *fd, uint64_t *offset)
{
	uintptr_t start = (uintptr_t)ptr & ~(uintptr_t)4095;
	uintptr_t end = ((uintptr_t)ptr + size + 4095) & ~(uintptr_t)4095;

	if (!ndm.gpu.get_handle)
		return ncclSystemError;
	*fd = -1;
	if (ndm.gpu.get_handle(fd, start, end - start,
			       NDM_HANDLE_TYPE_DMA_BUF_FD, 0) || *fd < 0)
		return ncclSystemError;
	*offset = (uintptr_t)ptr - start;
	return ncclSuccess;
}

/*
 * Copies go on a stream of their own, one per comm, that does not
 * synchronize with the default stream: a plain cuMemcpy (the legacy
 * default stream) would wait for NCCL's kernel, which waits for this very
 * copy's data.
 */
static ncclResult_t ndm_copy_stream(void **stream)
{
	if (*stream)
		return ncclSuccess;
	return ndm_gpu_check(ndm.gpu.stream_create(stream,
						   NDM_STREAM_NON_BLOCKING),
			     "cuStreamCreate");
}

void ndm_stream_free(void **stream)
{
	if (*stream)
		ndm.gpu.stream_destroy(*stream);
	*stream = NULL;
}

/* A copy between host memory and memory of @type: to it, or from it. */
static ncclResult_t ndm_copy(void **stream, bool to, void *host, void *mem,
			     int type, size_t len)
{
	int res;

	if (!len)
		return ncclSuccess;
	if (!(type & NCCL_PTR_CUDA)) {
		memcpy(to ? mem : host, to ? host : mem, len);
		return ncclSuccess;
	}
	if (ndm_copy_stream(stream))
		return ncclUnhandledCudaError;
	res = to ? ndm.gpu.memcpy_htod_async((uintptr_t)mem, host, len, *stream) :
		   ndm.gpu.memcpy_dtoh_async(host, (uintptr_t)mem, len, *stream);
	if (ndm_gpu_check(res, to ? "cuMemcpyHtoDAsync" : "cuMemcpyDtoHAsync"))
		return ncclUnhandledCudaError;
	return ndm_gpu_check(ndm.gpu.stream_synchronize(*stream),
			     "cuStreamSynchronize");
}

ncclResult_t ndm_copy_to(void **stream, void *dst, int type, const void *src,
			 size_t len)
{
	return ndm_copy(stream, true, (void *)src, dst, type, len);
}

ncclResult_t ndm_copy_from(void **stream, void *dst, const void *src, int type,
			   size_t len)
{
	return ndm_copy(stream, false, dst, (void *)src, type, len);
}
