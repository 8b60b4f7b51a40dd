// SPDX-License-Identifier: GPL-2.0
/*
 * The CUDA provider and the GPU unpack against tests/fake-cuda (a
 * libcuda.so.1 over host memory, run with LD_LIBRARY_PATH pointing at
 * it): every failure the driver can report comes back as the documented
 * errno with its reason, nothing stays allocated or referenced after a
 * failure or a free, in any order, and a batch's bytes, bounds and
 * tokens are handled as devmem.h says.
 *
 *   cuda-fake        the fake of a current driver
 *   cuda-fake old    the fake of a driver before CUDA 11.7
 *   cuda-fake nodriver  no libcuda.so.1 at all (skips where there is one)
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <devmem.h>

#include "test.h"

static int (*outstanding)(void);
static int (*ctx_refs)(void);
static int (*launches)(int kind);

#define CHECK_ERR(call, err, text)					\
	do {								\
		CHECK_EQ((call), (err));				\
		if (strcmp(devmem_last_error(), (text))) {		\
			fprintf(stderr, "%s:%d: reason \"%s\", not \"%s\"\n", \
				__FILE__, __LINE__, devmem_last_error(), (text)); \
			return T_FAIL;					\
		}							\
	} while (0)

/* Nothing of the fake driver's is held. */
#define CHECK_CLEAN()							\
	do {								\
		CHECK_EQ(outstanding(), 0);				\
		CHECK_EQ(ctx_refs(), 0);				\
	} while (0)

static int fake(const char *what)
{
	return setenv("FAKE_CUDA", what, 1) ? T_FAIL : T_PASS;
}

static int test_export(void)
{
	size_t size = 2 << 20;
	struct devmem_dmabuf *db;
	unsigned char buf[64];
	unsigned char *gpu;

	CHECK_EQ(fake(""), 0);
	CHECK_EQ(devmem_dmabuf_new_cuda(&db, 0, size), 0);
	CHECK_EQ(devmem_dmabuf_kind(db), DEVMEM_DMABUF_CUDA);
	CHECK_EQ(devmem_dmabuf_size(db), size);
	CHECK_EQ(lseek(devmem_dmabuf_fd(db), 0, SEEK_END), (off_t)size);
	gpu = devmem_dmabuf_cuda_addr(db);
	CHECK(gpu);
	CHECK_EQ((uintptr_t)gpu % 4096, 0);
	memset(gpu + size - 64, 0x5a, 64);
	CHECK_EQ(devmem_dmabuf_read(db, size - 64, buf, 64), 0);
	CHECK_EQ(buf[0], 0x5a);
	CHECK_EQ(buf[63], 0x5a);
	/* the CPU has no view of GPU memory */
	CHECK_EQ(devmem_dmabuf_map(db, DEVMEM_ACCESS_READ, (void **)&gpu), -EOPNOTSUPP);
	CHECK_EQ(strcmp(devmem_last_error(), "the CPU cannot map this buffer's memory (GPU memory: use devmem_dmabuf_cuda_addr() in GPU code)"), 0);
	CHECK_EQ(devmem_dmabuf_begin_access(db, DEVMEM_ACCESS_READ), -EOPNOTSUPP);
	CHECK_EQ(ctx_refs(), 1);
	devmem_dmabuf_free(db);
	CHECK_CLEAN();
	return T_PASS;
}

/* cuMemAlloc gives an address dma-buf export cannot take: allocate
 * again with room to align.
 */
static int test_export_unaligned_alloc(void)
{
	struct devmem_dmabuf *db;

	CHECK_EQ(fake("unaligned"), 0);
	CHECK_EQ(devmem_dmabuf_new_cuda(&db, 0, 1 << 20), 0);
	CHECK_EQ((uintptr_t)devmem_dmabuf_cuda_addr(db) % 4096, 0);
	devmem_dmabuf_free(db);
	CHECK_CLEAN();
	return T_PASS;
}

static int test_export_errors(void)
{
	struct devmem_dmabuf *db = NULL;

	CHECK_EQ(fake(""), 0);
	CHECK_ERR(devmem_dmabuf_new_cuda(&db, 0, 0), -EINVAL,
		  "size 0 is not a positive multiple of the page size (4096)");
	CHECK_ERR(devmem_dmabuf_new_cuda(&db, 0, 4097), -EINVAL,
		  "size 4097 is not a positive multiple of the page size (4096)");
	CHECK_ERR(devmem_dmabuf_new_cuda(&db, -1, 4096), -EINVAL,
		  "bad CUDA device -1");
	CHECK_ERR(devmem_dmabuf_new_cuda(NULL, 0, 4096), -EINVAL,
		  "no place for the result");
	CHECK_ERR(devmem_dmabuf_new_cuda(&db, 1, 4096), -ENODEV,
		  "cuDeviceGet: CUDA_ERROR_INVALID_DEVICE (101)");
	CHECK_CLEAN();

	CHECK_EQ(fake("noinit"), 0);
	CHECK_ERR(devmem_dmabuf_new_cuda(&db, 0, 4096), -ENODEV,
		  "cuInit: CUDA_ERROR_NO_DEVICE (100)");
	CHECK_EQ(fake("nodmabuf"), 0);
	CHECK_ERR(devmem_dmabuf_new_cuda(&db, 0, 4096), -EOPNOTSUPP,
		  "CUDA device 0 cannot export dma-bufs (needs NVIDIA's open kernel modules)");
	CHECK_EQ(fake("oom"), 0);
	CHECK_ERR(devmem_dmabuf_new_cuda(&db, 0, 4096), -ENOMEM,
		  "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2)");
	CHECK_EQ(fake("noexport"), 0);
	CHECK_ERR(devmem_dmabuf_new_cuda(&db, 0, 4096), -EOPNOTSUPP,
		  "cuMemGetHandleForAddressRange: CUDA_ERROR_NOT_SUPPORTED (801)");
	CHECK_EQ(fake("short"), 0);
	CHECK_ERR(devmem_dmabuf_new_cuda(&db, 0, 8192), -EIO,
		  "cuMemGetHandleForAddressRange: a dma-buf of 4096 bytes, not 8192");
	CHECK(!db);
	CHECK_CLEAN();
	return T_PASS;
}

/* The buffer and another holder of its dma-buf (an import here, the
 * kernel's binding in real use) let go in either order.
 */
static int test_free_order(void)
{
	struct devmem_dmabuf *db, *imp;
	int order;

	CHECK_EQ(fake(""), 0);
	for (order = 0; order < 2; order++) {
		CHECK_EQ(devmem_dmabuf_new_cuda(&db, 0, 1 << 20), 0);
		CHECK_EQ(devmem_dmabuf_new_import(&imp, devmem_dmabuf_fd(db)), 0);
		CHECK_EQ(devmem_dmabuf_size(imp), 1 << 20);
		devmem_dmabuf_free(order ? imp : db);
		devmem_dmabuf_free(order ? db : imp);
		CHECK_CLEAN();
	}
	return T_PASS;
}

static int test_unpack_args(void)
{
	struct devmem_dmabuf *db, *host;
	struct devmem_unpack *up = NULL;
	int fd;

	CHECK_EQ(fake(""), 0);
	fd = memfd_create("host", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, 4096), 0);
	CHECK_EQ(devmem_dmabuf_new_import(&host, fd), 0);
	close(fd);
	CHECK(!devmem_dmabuf_cuda_addr(host));
	CHECK(!devmem_dmabuf_cuda_addr(NULL));
	CHECK_ERR(devmem_unpack_new(&up, host, 16), -EINVAL,
		  "not GPU memory: GPU unpack needs a buffer from devmem_dmabuf_new_cuda()");
	devmem_dmabuf_free(host);

	CHECK_EQ(devmem_dmabuf_new_cuda(&db, 0, 1 << 20), 0);
	CHECK_ERR(devmem_unpack_new(NULL, db, 16), -EINVAL,
		  "no place for the result, or no buffer");
	CHECK_ERR(devmem_unpack_new(&up, db, 0), -EINVAL,
		  "batch of 0 fragments: 1 to 16777216");
	CHECK_ERR(devmem_unpack_new(&up, db, (1 << 24) + 1), -EINVAL,
		  "batch of 16777217 fragments: 1 to 16777216");
	CHECK(!up);
	CHECK_ERR(devmem_unpack_complete(NULL, NULL, 0), -EINVAL, "no unpacker");
	devmem_unpack_free(NULL);
	devmem_dmabuf_free(db);
	CHECK_CLEAN();
	return T_PASS;
}

#ifdef DEVMEM_HAVE_UNPACK_FATBIN
static uint8_t pat(uint64_t off)
{
	return (uint8_t)(off * 7 + (off >> 8));
}

static int test_unpack(void)
{
	size_t size = 1 << 20;
	struct devmem_frag frags[5] = {
		{ .offset = 8192, .size = 4096, .token = 10 },
		{ .offset = 3, .size = 1448, .token = 11 },	/* unaligned */
		{ .offset = size - 100, .size = 100, .token = 12 }, /* the end */
		{ .offset = 65536 + 17, .size = 8948, .token = 13 },
		{ .offset = 4096, .size = 1, .token = 14 },
	};
	struct devmem_recycler_stats st;
	struct devmem_recycler *rc;
	struct devmem_unpack *up;
	struct devmem_dmabuf *db;
	unsigned char *gpu, *dst;
	uint64_t total = 0, at;
	int sv[2];
	size_t i, j;

	CHECK_EQ(fake("busy"), 0);
	CHECK_EQ(devmem_dmabuf_new_cuda(&db, 0, size), 0);
	gpu = devmem_dmabuf_cuda_addr(db);
	for (i = 0; i < size; i++)
		gpu[i] = pat(i);
	for (i = 0; i < 5; i++)
		total += frags[i].size;
	dst = calloc(1, total);
	CHECK(dst);
	CHECK_EQ(devmem_unpack_new(&up, db, 5), 0);

	CHECK_EQ(devmem_unpack_complete(up, NULL, 0), 1);	/* no batch */
	CHECK_EQ(devmem_unpack_gather(up, frags, 5, dst, NULL), (ssize_t)total);
	for (i = 0, at = 0; i < 5; i++)
		for (j = 0; j < frags[i].size; j++, at++)
			CHECK_EQ(dst[at], pat(frags[i].offset + j));
	CHECK_ERR(devmem_unpack_gather(up, frags, 1, dst, NULL), -EBUSY,
		  "the last batch is not complete (devmem_unpack_complete)");
	/* the fake's event is not ready the first time it is asked */
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK_EQ(devmem_recycler_new(&rc, sv[0], 0), 0);
	CHECK_EQ(devmem_unpack_complete(up, rc, 0), 0);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.pending, 0);		/* still held */
	CHECK_EQ(devmem_unpack_complete(up, rc, 0), 1);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.pending, 5);		/* handed over */
	CHECK_EQ(devmem_unpack_complete(up, rc, 1), 1);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.pending, 5);		/* once */

	CHECK_ERR(devmem_unpack_gather(up, frags, 6, dst, NULL), -EINVAL,
		  "6 fragments: this unpacker takes at most 5");
	CHECK_ERR(devmem_unpack_gather(up, frags, 0, dst, NULL), -EINVAL,
		  "no unpacker, fragments or destination");
	CHECK_ERR(devmem_unpack_gather(up, frags, 1, NULL, NULL), -EINVAL,
		  "no unpacker, fragments or destination");
	frags[2].size = 101;
	CHECK_ERR(devmem_unpack_gather(up, frags, 5, dst, NULL), -EINVAL,
		  "fragment 2 (offset 1048476, 101 bytes) is outside the 1048576-byte buffer");
	frags[2].offset = size + 1;
	frags[2].size = 0;
	CHECK_ERR(devmem_unpack_gather(up, frags, 5, dst, NULL), -EINVAL,
		  "fragment 2 (offset 1048577, 0 bytes) is outside the 1048576-byte buffer");
	frags[2].offset = 0;

	/* a launch CUDA refuses holds nothing */
	CHECK_EQ(fake("nolaunch"), 0);
	CHECK_ERR(devmem_unpack_gather(up, frags, 2, dst, NULL), -EIO,
		  "cuLaunchKernel: CUDA_ERROR_INVALID_VALUE (1)");
	CHECK_EQ(fake(""), 0);
	CHECK_EQ(devmem_unpack_gather(up, frags, 2, dst, NULL), 4096 + 1448);
	/* freeing with a batch in flight waits for it */
	devmem_unpack_free(up);
	devmem_recycler_free(rc);
	close(sv[0]);
	close(sv[1]);
	free(dst);
	CHECK_EQ(ctx_refs(), 1);
	devmem_dmabuf_free(db);
	CHECK_CLEAN();
	return T_PASS;
}

/* Batches up to 250 fragments ride in the launch parameters; larger ones
 * are read in place from the list in pinned memory. Both gather the same
 * bytes.
 */
static int test_unpack_sizes(void)
{
	size_t size = 4 << 20, k, i, j;
	static const struct { size_t nr; int kind; } runs[] = {
		{ 1, 1 }, { 250, 1 }, { 251, 0 }, { 4000, 0 },
	};
	struct devmem_frag *frags;
	struct devmem_unpack *up;
	struct devmem_dmabuf *db;
	unsigned char *gpu, *dst;
	int before[2], kind;
	uint64_t at;

	CHECK_EQ(fake(""), 0);
	CHECK_EQ(devmem_dmabuf_new_cuda(&db, 0, size), 0);
	gpu = devmem_dmabuf_cuda_addr(db);
	for (i = 0; i < size; i++)
		gpu[i] = pat(i);
	frags = calloc(4000, sizeof(*frags));
	dst = malloc(4000 * 1000);
	CHECK(frags && dst);
	for (i = 0; i < 4000; i++) {
		frags[i].offset = (i * 7919 * 13) % (size - 1000);
		frags[i].size = 1 + (uint32_t)(i * 31 % 1000);
		frags[i].token = (uint32_t)i;
	}
	CHECK_EQ(devmem_unpack_new(&up, db, 4000), 0);
	for (k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		for (kind = 0; kind < 2; kind++)
			before[kind] = launches(kind);
		memset(dst, 0, 4000 * 1000);
		CHECK(devmem_unpack_gather(up, frags, runs[k].nr, dst, NULL) > 0);
		for (kind = 0; kind < 2; kind++)
			CHECK_EQ(launches(kind) - before[kind], kind == runs[k].kind);
		for (i = 0, at = 0; i < runs[k].nr; i++)
			for (j = 0; j < frags[i].size; j++, at++)
				CHECK_EQ(dst[at], pat(frags[i].offset + j));
		CHECK_EQ(devmem_unpack_complete(up, NULL, 1), 1);
	}
	devmem_unpack_free(up);
	devmem_dmabuf_free(db);
	free(frags);
	free(dst);
	CHECK_CLEAN();
	return T_PASS;
}

/* The unpacker keeps its own context: the buffer may go first. */
static int test_unpack_outlives_buffer(void)
{
	struct devmem_unpack *up;
	struct devmem_dmabuf *db;

	CHECK_EQ(fake(""), 0);
	CHECK_EQ(devmem_dmabuf_new_cuda(&db, 0, 1 << 20), 0);
	CHECK_EQ(devmem_unpack_new(&up, db, 64), 0);
	devmem_dmabuf_free(db);
	CHECK_EQ(ctx_refs(), 1);
	devmem_unpack_free(up);
	CHECK_CLEAN();
	return T_PASS;
}

static int test_unpack_oom(void)
{
	struct devmem_unpack *up = NULL;
	struct devmem_dmabuf *db;

	CHECK_EQ(fake(""), 0);
	CHECK_EQ(devmem_dmabuf_new_cuda(&db, 0, 1 << 20), 0);
	CHECK_EQ(fake("oom"), 0);
	CHECK_ERR(devmem_unpack_new(&up, db, 64), -ENOMEM,
		  "room for the fragment list: CUDA_ERROR_OUT_OF_MEMORY (2)");
	CHECK(!up);
	CHECK_EQ(fake(""), 0);
	devmem_dmabuf_free(db);
	CHECK_CLEAN();
	return T_PASS;
}
#else
static int test_unpack_absent(void)
{
	struct devmem_unpack *up = NULL;
	struct devmem_dmabuf *db;

	CHECK_EQ(fake(""), 0);
	CHECK_EQ(devmem_dmabuf_new_cuda(&db, 0, 1 << 20), 0);
	CHECK_ERR(devmem_unpack_new(&up, db, 64), -EOPNOTSUPP,
		  "libdevmem was built without nvcc: no GPU unpack");
	devmem_dmabuf_free(db);
	CHECK_CLEAN();
	return T_PASS;
}
#endif

static const struct t_case cases[] = {
	{ "export", test_export },
	{ "export: cuMemAlloc unaligned", test_export_unaligned_alloc },
	{ "export: every failure", test_export_errors },
	{ "free in either order", test_free_order },
	{ "unpack: arguments", test_unpack_args },
#ifdef DEVMEM_HAVE_UNPACK_FATBIN
	{ "unpack: a batch", test_unpack },
	{ "unpack: batches in parameters and in place", test_unpack_sizes },
	{ "unpack: outlives its buffer", test_unpack_outlives_buffer },
	{ "unpack: out of memory", test_unpack_oom },
#else
	{ "unpack: built without nvcc", test_unpack_absent },
#endif
};

static int test_old_driver(void)
{
	struct devmem_dmabuf *db;

	CHECK_ERR(devmem_dmabuf_new_cuda(&db, 0, 4096), -EOPNOTSUPP,
		  "libcuda.so.1 has no cuMemGetHandleForAddressRange (a driver older than CUDA 11.7?)");
	CHECK_CLEAN();
	return T_PASS;
}

static const struct t_case old_cases[] = {
	{ "old driver", test_old_driver },
};

/* Run with no libcuda.so.1 to be found. */
static int test_no_driver(void)
{
	static const char want[] = "no CUDA driver: libcuda.so.1: ";
	struct devmem_dmabuf *db = NULL;

	CHECK_EQ(devmem_dmabuf_new_cuda(&db, 0, 4096), -ENOENT);
	CHECK(!strncmp(devmem_last_error(), want, sizeof(want) - 1));
	CHECK(!db);
	return T_PASS;
}

static const struct t_case no_driver_cases[] = {
	{ "no driver", test_no_driver },
};

int main(int argc, char **argv)
{
	void *lib;

	if (argc > 1 && !strcmp(argv[1], "nodriver")) {
		lib = dlopen("libcuda.so.1", RTLD_NOW);
		if (lib)
			return t_skip("this machine has a libcuda.so.1");
		return T_RUN(no_driver_cases);
	}
	/* hold the fake loaded, to read its books between cases */
	lib = dlopen("libcuda.so.1", RTLD_NOW);

	if (!lib || !(outstanding = dlsym(lib, "fake_cuda_outstanding")) ||
	    !(ctx_refs = dlsym(lib, "fake_cuda_ctx_refs")) ||
	    !(launches = dlsym(lib, "fake_cuda_launches"))) {
		fprintf(stderr, "run with LD_LIBRARY_PATH at tests/fake-cuda\n");
		return T_FAIL;
	}
	if (argc > 1 && !strcmp(argv[1], "old"))
		return T_RUN(old_cases);
	return T_RUN(cases);
}
