// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in for NVIDIA's libcuda.so.1, for the tests of the CUDA
 * provider and the GPU unpack on machines without a GPU: the entry
 * points libdevmem loads, over host memory. "GPU" memory is malloc'ed,
 * an exported range is a memfd of its size, and cuLaunchKernel runs the
 * unpack kernel's gather on the CPU, so the library's side of a batch
 * (the list it builds, the bounds it checks, when tokens go back) is
 * tested for real, and which of the kernels it picked is counted.
 * FAKE_CUDA, a comma-separated list, makes it fail:
 *
 *   noinit     cuInit: CUDA_ERROR_NO_DEVICE
 *   nodmabuf   the device cannot export dma-bufs
 *   oom        cuMemAlloc: out of memory
 *   unaligned  the first cuMemAlloc of a context returns an unaligned
 *              address (the provider must allocate again)
 *   noexport   cuMemGetHandleForAddressRange: CUDA_ERROR_NOT_SUPPORTED
 *   short      the exported dma-buf is a page shorter than the range
 *   nolaunch   cuLaunchKernel: CUDA_ERROR_INVALID_VALUE
 *   busy       cuEventQuery answers NOT_READY once per batch
 *
 * Built with -DFAKE_CUDA_OLD it lacks cuMemGetHandleForAddressRange, as
 * drivers before CUDA 11.7 do. FAKE_CUDA_LOG names a file that gets a
 * line per allocation and free, so tests can check nothing leaks.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CUDA_SUCCESS			0
#define CUDA_ERROR_INVALID_VALUE	1
#define CUDA_ERROR_OUT_OF_MEMORY	2
#define CUDA_ERROR_NO_DEVICE		100
#define CUDA_ERROR_INVALID_DEVICE	101
#define CUDA_ERROR_INVALID_IMAGE	200
#define CUDA_ERROR_NOT_READY		600
#define CUDA_ERROR_NOT_SUPPORTED	801

#define FAKE_FATBIN_MAGIC		0xba55ed50U

typedef unsigned long long cu_deviceptr;

struct fake_ent {
	uint64_t src;
	uint64_t dst;
};

static int fake_ctx_refs;
static int fake_allocs;
static int fake_event_polls;
static int fake_launches[2];	/* list in place, in the parameters */

/* Callers may be several threads (the NCCL plugin's harness). */
static int fake_count(int *counter, int by)
{
	return __atomic_add_fetch(counter, by, __ATOMIC_SEQ_CST);
}

static int fake(const char *what)
{
	const char *env = getenv("FAKE_CUDA");
	size_t n = strlen(what);
	const char *p;

	for (p = env; p && (p = strstr(p, what)); p += n)
		if ((p == env || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

static void fake_log(const char *fmt, unsigned long long v)
{
	const char *path = getenv("FAKE_CUDA_LOG");
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	fprintf(f, fmt, v);
	fputc('\n', f);
	fclose(f);
}

int cuInit(unsigned int flags)
{
	(void)flags;
	return fake("noinit") ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}

int cuDeviceGet(int *dev, int ordinal)
{
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = 0;
	return CUDA_SUCCESS;
}

int cuDeviceGetAttribute(int *value, int attr, int dev)
{
	(void)dev;
	if (attr == 124)	/* DMA_BUF_SUPPORTED */
		*value = !fake("nodmabuf");
	else if (attr == 16)	/* MULTIPROCESSOR_COUNT */
		*value = 2;
	else
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
	(void)dev;
	*ctx = &fake_ctx_refs;
	fake_log("ctx+ %llu", (unsigned long long)fake_count(&fake_ctx_refs, 1));
	return CUDA_SUCCESS;
}

int cuDevicePrimaryCtxRelease_v2(int dev)
{
	(void)dev;
	fake_log("ctx- %llu", (unsigned long long)fake_count(&fake_ctx_refs, -1));
	return CUDA_SUCCESS;
}

int cuCtxPushCurrent_v2(void *ctx)
{
	return ctx == &fake_ctx_refs && fake_ctx_refs > 0 ?
	       CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

int cuCtxPopCurrent_v2(void **ctx)
{
	if (ctx)
		*ctx = &fake_ctx_refs;
	return CUDA_SUCCESS;
}

int cuMemAlloc_v2(cu_deviceptr *ptr, size_t size)
{
	static int unaligned_done;
	char *p;

	if (fake("oom"))
		return CUDA_ERROR_OUT_OF_MEMORY;
	p = aligned_alloc(4096, (size + 4096 + 4095) / 4096 * 4096);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fake_log("alloc %llu", (unsigned long long)fake_count(&fake_allocs, 1));
	if (fake("unaligned") && !unaligned_done) {
		unaligned_done = 1;
		p += 256;	/* freed through the offset below */
	}
	*ptr = (cu_deviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

int cuMemFree_v2(cu_deviceptr ptr)
{
	fake_log("free %llu", (unsigned long long)fake_count(&fake_allocs, -1));
	free((void *)(uintptr_t)(ptr & ~4095ULL));
	return CUDA_SUCCESS;
}

int cuMemAllocHost_v2(void **ptr, size_t size)
{
	if (fake("oom"))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*ptr = malloc(size);
	if (!*ptr)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fake_log("alloc %llu", (unsigned long long)fake_count(&fake_allocs, 1));
	return CUDA_SUCCESS;
}

int cuMemFreeHost(void *ptr)
{
	fake_log("free %llu", (unsigned long long)fake_count(&fake_allocs, -1));
	free(ptr);
	return CUDA_SUCCESS;
}

/* Pinned host memory is malloc'ed; its "device" address is itself. */
int cuMemHostAlloc(void **ptr, size_t size, unsigned int flags)
{
	(void)flags;
	return cuMemAllocHost_v2(ptr, size);
}

int cuMemHostGetDevicePointer_v2(cu_deviceptr *dptr, void *ptr,
				 unsigned int flags)
{
	if (flags || !ptr)
		return CUDA_ERROR_INVALID_VALUE;
	*dptr = (cu_deviceptr)(uintptr_t)ptr;
	return CUDA_SUCCESS;
}

int cuMemHostRegister_v2(void *ptr, size_t size, unsigned int flags)
{
	(void)flags;
	if (!ptr || !size)
		return CUDA_ERROR_INVALID_VALUE;
	fake_log("alloc %llu", (unsigned long long)fake_count(&fake_allocs, 1));
	return CUDA_SUCCESS;
}

int cuMemHostUnregister(void *ptr)
{
	(void)ptr;
	fake_log("free %llu", (unsigned long long)fake_count(&fake_allocs, -1));
	return CUDA_SUCCESS;
}

int cuMemcpyHtoD_v2(cu_deviceptr dst, const void *src, size_t len)
{
	memcpy((void *)(uintptr_t)dst, src, len);
	return CUDA_SUCCESS;
}

int cuMemcpyDtoH_v2(void *dst, cu_deviceptr src, size_t len);

int cuStreamCreate(void **stream, unsigned int flags)
{
	(void)flags;
	*stream = malloc(1);
	if (!*stream)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fake_log("alloc %llu", (unsigned long long)fake_count(&fake_allocs, 1));
	return CUDA_SUCCESS;
}

int cuStreamDestroy_v2(void *stream)
{
	fake_log("free %llu", (unsigned long long)fake_count(&fake_allocs, -1));
	free(stream);
	return CUDA_SUCCESS;
}

int cuMemcpyHtoDAsync_v2(cu_deviceptr dst, const void *src, size_t len,
			 void *stream)
{
	(void)stream;
	return cuMemcpyHtoD_v2(dst, src, len);
}

int cuMemcpyDtoHAsync_v2(void *dst, cu_deviceptr src, size_t len, void *stream)
{
	(void)stream;
	return cuMemcpyDtoH_v2(dst, src, len);
}

int cuCtxGetDevice(int *dev)
{
	*dev = 0;
	return CUDA_SUCCESS;
}

int cuMemcpyDtoH_v2(void *dst, cu_deviceptr src, size_t len)
{
	memcpy(dst, (const void *)(uintptr_t)src, len);
	return CUDA_SUCCESS;
}

#ifndef FAKE_CUDA_OLD
int cuMemGetHandleForAddressRange(void *handle, cu_deviceptr ptr, size_t size,
				  int type, unsigned long long flags)
{
	int fd;

	if (fake("noexport"))
		return CUDA_ERROR_NOT_SUPPORTED;
	if (type != 1 || flags || (ptr & 4095) || (size & 4095))
		return CUDA_ERROR_INVALID_VALUE;
	fd = memfd_create("fake-cuda-dmabuf", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)size - (fake("short") ? 4096 : 0)) < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*(int *)handle = fd;
	return CUDA_SUCCESS;
}
#endif

int cuModuleLoadData(void **mod, const void *image)
{
	uint32_t magic;

	memcpy(&magic, image, sizeof(magic));
	if (magic != FAKE_FATBIN_MAGIC)
		return CUDA_ERROR_INVALID_IMAGE;
	*mod = &fake_allocs;
	fake_log("alloc %llu", (unsigned long long)fake_count(&fake_allocs, 1));
	return CUDA_SUCCESS;
}

int cuModuleUnload(void *mod)
{
	(void)mod;
	fake_log("free %llu", (unsigned long long)fake_count(&fake_allocs, -1));
	return CUDA_SUCCESS;
}

/* the kernels: the list read in place, or in the launch parameters */
static int fake_kernel, fake_kernel_small;

int cuModuleGetFunction(void **fn, void *mod, const char *name)
{
	(void)mod;
	if (!strcmp(name, "devmem_unpack_kernel"))
		*fn = &fake_kernel;
	else if (!strcmp(name, "devmem_unpack_kernel_small"))
		*fn = &fake_kernel_small;
	else
		return 500;	/* CUDA_ERROR_NOT_FOUND */
	return CUDA_SUCCESS;
}

/* The unpack kernel, on the CPU. */
int cuLaunchKernel(void *fn, unsigned int gx, unsigned int gy, unsigned int gz,
		   unsigned int bx, unsigned int by, unsigned int bz,
		   unsigned int shared, void *stream, void **params,
		   void **extra)
{
	const struct fake_ent *list;
	const unsigned char *src;
	unsigned char *dst;
	unsigned int n, i, g;

	(void)stream; (void)extra; (void)shared;
	if (fake("nolaunch") || !gx || gy != 1 || gz != 1 || bx % 32 ||
	    bx > 1024 || by != 1 || bz != 1)
		return CUDA_ERROR_INVALID_VALUE;
	n = *(unsigned int *)params[1];
	src = *(const unsigned char **)params[2];
	dst = *(unsigned char **)params[3];
	g = *(unsigned int *)params[4];
	/* a group is a power of two of threads, inside a block */
	if (g < 32 || g > bx || (g & (g - 1)) || bx % g)
		return CUDA_ERROR_INVALID_VALUE;
	if (fn == &fake_kernel_small && n <= 250) {
		list = params[0];
		fake_launches[1]++;
	} else if (fn == &fake_kernel) {
		list = *(const struct fake_ent **)params[0];
		fake_launches[0]++;
	} else {
		return CUDA_ERROR_INVALID_VALUE;
	}
	for (i = 0; i < n; i++)
		memcpy(dst + list[i].dst, src + list[i].src,
		       list[i + 1].dst - list[i].dst);
	fake_event_polls = 0;
	return CUDA_SUCCESS;
}

int cuEventCreate(void **ev, unsigned int flags)
{
	(void)flags;
	*ev = &fake_event_polls;
	fake_log("alloc %llu", (unsigned long long)fake_count(&fake_allocs, 1));
	return CUDA_SUCCESS;
}

int cuEventDestroy_v2(void *ev)
{
	(void)ev;
	fake_log("free %llu", (unsigned long long)fake_count(&fake_allocs, -1));
	return CUDA_SUCCESS;
}

int cuEventRecord(void *ev, void *stream)
{
	(void)ev; (void)stream;
	return CUDA_SUCCESS;
}

int cuEventQuery(void *ev)
{
	(void)ev;
	if (fake("busy") && !fake_event_polls++)
		return CUDA_ERROR_NOT_READY;
	return CUDA_SUCCESS;
}

int cuEventSynchronize(void *ev)
{
	(void)ev;
	return CUDA_SUCCESS;
}

int cuStreamSynchronize(void *stream)
{
	(void)stream;
	return CUDA_SUCCESS;
}

int cuGetErrorName(int res, const char **name)
{
	switch (res) {
	case CUDA_ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; break;
	case CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
	case CUDA_ERROR_NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; break;
	case CUDA_ERROR_INVALID_DEVICE: *name = "CUDA_ERROR_INVALID_DEVICE"; break;
	case CUDA_ERROR_INVALID_IMAGE: *name = "CUDA_ERROR_INVALID_IMAGE"; break;
	case CUDA_ERROR_NOT_SUPPORTED: *name = "CUDA_ERROR_NOT_SUPPORTED"; break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

/* For the tests: what is still allocated, and context references. */
int fake_cuda_outstanding(void)
{
	return fake_allocs;
}

int fake_cuda_ctx_refs(void)
{
	return fake_ctx_refs;
}

int fake_cuda_launches(int kind)
{
	return fake_launches[!!kind];
}
