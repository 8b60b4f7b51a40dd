// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * GPU unpack: the fragments of one receive batch, scattered over a CUDA
 * dma-buf, gathered into contiguous GPU memory on the caller's stream.
 *
 * The kernel (cuda/unpack.cu) is built by nvcc into a fatbin that this
 * file embeds (unpack_fatbin.S) when the library is built where nvcc
 * exists; it is loaded with cuModuleLoadData into the device's primary
 * context, the one the CUDA runtime uses too, so cudaStream_t and
 * device pointers of the application's work there are valid here. Without
 * the fatbin every call but devmem_unpack_free() says so.
 *
 * A batch is: the fragment list, written once into pinned host memory as
 * (source offset, destination offset) pairs and their total; the kernel,
 * which reads the list in place (or, for a small batch, gets it in its
 * launch parameters); an event. A copy of the list to GPU memory before
 * the kernel measured 5 to 30 us on an H100, a fifth of the time of a
 * 64K-fragment batch; read in place it overlaps the copying. (A 32 KiB
 * parameter block for up to 2040 fragments measured no better than
 * reading in place.) The tokens
 * of the batch are kept until devmem_unpack_complete() sees the event
 * done.
 */
#include "cuda_api.h"
#include "dmabuf.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef DEVMEM_HAVE_UNPACK_FATBIN
extern const unsigned char devmem_unpack_fatbin[];
#endif

#define DEVMEM_UNPACK_MAX_FRAGS	(1U << 24)
/* as in cuda/unpack.cu: a batch this small goes in the launch parameters */
#define DEVMEM_UNPACK_SMALL		250
#define DEVMEM_UNPACK_THREADS_PER_SM	2048

/* as in cuda/unpack.cu */
struct devmem_unpack_ent {
	uint64_t src;
	uint64_t dst;
};

struct devmem_unpack {
	struct devmem_cuda_ctx c;
	cu_module mod;
	cu_function fn;			/* the list read in place */
	cu_function fn_small;		/* in the launch parameters */
	unsigned int resident;		/* threads the GPU runs at once */
	cu_event done;
	uint64_t src;			/* the buffer's GPU address */
	size_t src_size;
	size_t max;			/* fragments a batch may hold */
	struct devmem_unpack_ent *list;	/* pinned host memory, nr_list */
	size_t nr_list;
	struct devmem_frag *held;	/* the batch in flight, max */
	size_t nr_held;
};

static int devmem_unpack_load(struct devmem_unpack *up)
{
#ifdef DEVMEM_HAVE_UNPACK_FATBIN
	int sms = 0;
	cu_result res;

	res = up->c.api.module_load_data(&up->mod, devmem_unpack_fatbin);
	if (res != CUDA_SUCCESS)
		return devmem_cuda_fail(&up->c, -EOPNOTSUPP, res,
					"cuModuleLoadData (the unpack kernel does not run on this GPU)");
	res = up->c.api.module_get_function(&up->fn, up->mod,
					    "devmem_unpack_kernel");
	if (res == CUDA_SUCCESS)
		res = up->c.api.module_get_function(&up->fn_small, up->mod,
						    "devmem_unpack_kernel_small");
	if (res != CUDA_SUCCESS) {
		up->c.api.module_unload(up->mod);
		return devmem_cuda_fail(&up->c, -EIO, res,
					"cuModuleGetFunction");
	}
	if (up->c.api.device_get_attribute(&sms,
					   CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
					   up->c.dev) != CUDA_SUCCESS || sms < 1)
		sms = 1;
	up->resident = (unsigned int)sms * DEVMEM_UNPACK_THREADS_PER_SM;
	return 0;
#else
	(void)up;
	return devmem_fail(-EOPNOTSUPP,
			   "libdevmem was built without nvcc: no GPU unpack");
#endif
}

static int devmem_unpack_alloc(struct devmem_unpack *up)
{
	size_t bytes;
	cu_result res;

	/* room for a whole parameter block too */
	up->nr_list = up->max + 1 > DEVMEM_UNPACK_SMALL + 1 ?
		      up->max + 1 : DEVMEM_UNPACK_SMALL + 1;
	bytes = up->nr_list * sizeof(*up->list);

	up->held = calloc(up->max, sizeof(*up->held));
	if (!up->held)
		return devmem_fail(-ENOMEM, "out of memory");
	res = up->c.api.mem_alloc_host((void **)&up->list, bytes);
	if (res != CUDA_SUCCESS)
		goto err_free_held;
	memset(up->list, 0, bytes);
	res = up->c.api.event_create(&up->done, CU_EVENT_DISABLE_TIMING);
	if (res != CUDA_SUCCESS)
		goto err_free_list;
	return 0;

err_free_list:
	up->c.api.mem_free_host(up->list);
err_free_held:
	free(up->held);
	return devmem_cuda_fail(&up->c, res == CUDA_ERROR_OUT_OF_MEMORY ?
				-ENOMEM : -EIO, res,
				"room for the fragment list");
}

DEVMEM_EXPORT int devmem_unpack_new(struct devmem_unpack **upp,
				    const struct devmem_dmabuf *db,
				    size_t max_frags)
{
	struct devmem_unpack *up;
	int err;

	devmem_error_clear();
	if (!upp || !db)
		return devmem_fail(-EINVAL, "no place for the result, or no buffer");
	if (db->kind != DEVMEM_DMABUF_CUDA)
		return devmem_fail(-EINVAL,
				   "not GPU memory: GPU unpack needs a buffer from devmem_dmabuf_new_cuda()");
	if (!max_frags || max_frags > DEVMEM_UNPACK_MAX_FRAGS)
		return devmem_fail(-EINVAL, "batch of %zu fragments: 1 to %u",
				   max_frags, DEVMEM_UNPACK_MAX_FRAGS);

	up = calloc(1, sizeof(*up));
	if (!up)
		return devmem_fail(-ENOMEM, "out of memory");
	err = devmem_cuda_ctx_open(&up->c, devmem_cuda_ordinal(db), 0);
	if (err)
		goto err_free_up;
	up->src = (uint64_t)(uintptr_t)devmem_dmabuf_cuda_addr(db);
	up->src_size = db->size;
	up->max = max_frags;

	err = devmem_cuda_ctx_push(&up->c);
	if (err)
		goto err_close_ctx;
	err = devmem_unpack_load(up);
	if (err)
		goto err_pop;
	err = devmem_unpack_alloc(up);
	if (err)
		goto err_unload;
	devmem_cuda_ctx_pop(&up->c);
	*upp = up;
	return 0;

err_unload:
	up->c.api.module_unload(up->mod);
err_pop:
	devmem_cuda_ctx_pop(&up->c);
err_close_ctx:
	devmem_cuda_ctx_close(&up->c);
err_free_up:
	free(up);
	return err;
}

/*
 * How a batch of @nr fragments, @total bytes, is spread: @g threads per
 * fragment (a power of two, 32 to 1024), blocks of @block threads, and
 * @blocks of them. Aim for one thread per four 16-byte words overall, up
 * to what the GPU runs at once; the groups stride over the rest.
 */
static void devmem_unpack_shape(const struct devmem_unpack *up, size_t nr,
				uint64_t total, unsigned int *g,
				unsigned int *block, unsigned int *blocks)
{
	uint64_t want = total / 64, per, threads;

	if (want > up->resident)
		want = up->resident;
	per = (want + nr - 1) / nr;
	for (*g = 32; *g < 1024 && *g < per; *g *= 2)
		;
	*block = *g > 256 ? *g : 256;
	threads = (uint64_t)nr * *g;
	if (threads > up->resident)
		threads = up->resident;
	*blocks = (unsigned int)((threads + *block - 1) / *block);
}

DEVMEM_EXPORT ssize_t devmem_unpack_gather(struct devmem_unpack *up,
					   const struct devmem_frag *frags,
					   size_t nr, void *dst, void *stream)
{
	uint64_t total = 0;
	unsigned int g, block, blocks;
	cu_deviceptr src, out, list;
	cu_function fn;
	unsigned int n;
	void *params[5];
	cu_result res;
	size_t i;
	int err;

	devmem_error_clear();
	if (!up || !frags || !nr || !dst)
		return devmem_fail(-EINVAL, "no unpacker, fragments or destination");
	if (nr > up->max)
		return devmem_fail(-EINVAL, "%zu fragments: this unpacker takes at most %zu",
				   nr, up->max);
	if (up->nr_held)
		return devmem_fail(-EBUSY,
				   "the last batch is not complete (devmem_unpack_complete)");

	for (i = 0; i < nr; i++) {
		const struct devmem_frag *f = &frags[i];

		if (f->offset > up->src_size || f->size > up->src_size - f->offset)
			return devmem_fail(-EINVAL,
					   "fragment %zu (offset %llu, %u bytes) is outside the %zu-byte buffer",
					   i, (unsigned long long)f->offset,
					   f->size, up->src_size);
		up->list[i].src = f->offset;
		up->list[i].dst = total;
		total += f->size;
	}
	up->list[nr].src = 0;
	up->list[nr].dst = total;
	if (total > (uint64_t)SSIZE_MAX)
		return devmem_fail(-EINVAL, "batch too large");

	devmem_unpack_shape(up, nr, total, &g, &block, &blocks);
	n = (unsigned int)nr;
	src = (cu_deviceptr)up->src;
	out = (cu_deviceptr)(uintptr_t)dst;
	/* pinned memory: the same address on the GPU (unified addressing) */
	list = (cu_deviceptr)(uintptr_t)up->list;
	params[1] = &n;
	params[2] = &src;
	params[3] = &out;
	params[4] = &g;

	err = devmem_cuda_ctx_push(&up->c);
	if (err)
		return err;
	if (nr <= DEVMEM_UNPACK_SMALL) {
		/* the launch copies the list with its parameters */
		fn = up->fn_small;
		params[0] = up->list;
	} else {
		fn = up->fn;
		params[0] = &list;
	}
	res = up->c.api.launch_kernel(fn, blocks, 1, 1, block, 1, 1, 0,
				      (cu_stream)stream, params, NULL);
	if (res != CUDA_SUCCESS) {
		err = devmem_cuda_fail(&up->c, -EIO, res, "cuLaunchKernel");
		goto out_pop;
	}
	res = up->c.api.event_record(up->done, (cu_stream)stream);
	if (res != CUDA_SUCCESS) {
		/* The kernel is queued: let it finish before the list is
		 * written again or the tokens go back.
		 */
		up->c.api.stream_synchronize((cu_stream)stream);
		err = devmem_cuda_fail(&up->c, -EIO, res, "cuEventRecord");
		goto out_pop;
	}
	memcpy(up->held, frags, nr * sizeof(*frags));
	up->nr_held = nr;
	err = 0;
out_pop:
	devmem_cuda_ctx_pop(&up->c);
	return err ? err : (ssize_t)total;
}

DEVMEM_EXPORT int devmem_unpack_complete(struct devmem_unpack *up,
					 struct devmem_recycler *rc, int wait)
{
	cu_result res;
	int err;

	devmem_error_clear();
	if (!up)
		return devmem_fail(-EINVAL, "no unpacker");
	if (!up->nr_held)
		return 1;
	err = devmem_cuda_ctx_push(&up->c);
	if (err)
		return err;
	res = wait ? up->c.api.event_synchronize(up->done) :
		     up->c.api.event_query(up->done);
	devmem_cuda_ctx_pop(&up->c);
	if (res == CUDA_ERROR_NOT_READY)
		return 0;
	if (res != CUDA_SUCCESS)
		return devmem_cuda_fail(&up->c, -EIO, res,
					wait ? "cuEventSynchronize" : "cuEventQuery");
	err = rc ? devmem_recycler_add_frags(rc, up->held, up->nr_held) : 0;
	if (err == -ENOMEM)
		return err;	/* nothing queued: the batch stays held */
	up->nr_held = 0;
	/* queued; a flush the queueing triggered failed */
	return err < 0 ? err : 1;
}

DEVMEM_EXPORT void devmem_unpack_free(struct devmem_unpack *up)
{
	if (!up)
		return;
	if (devmem_cuda_ctx_push(&up->c))
		return;		/* no context: the driver frees all at exit */
	if (up->nr_held)
		up->c.api.event_synchronize(up->done);
	up->c.api.event_destroy(up->done);
	up->c.api.mem_free_host(up->list);
	up->c.api.module_unload(up->mod);
	devmem_cuda_ctx_pop(&up->c);
	devmem_cuda_ctx_close(&up->c);
	free(up->held);
	free(up);
}
