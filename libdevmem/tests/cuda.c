// SPDX-License-Identifier: GPL-2.0
/*
 * GPU memory from CUDA device 0 as a dma-buf: its fd is a dma-buf of the
 * right size, the library copies out of it, it imports, and it frees.
 * Skips, saying why, where there is no usable GPU (the error contract
 * itself is checked by the dmabuf test).
 */
#include <errno.h>
#include <unistd.h>

#include <devmem.h>

#include "test.h"

static int test_cuda(void)
{
	size_t size = 2 << 20;
	struct devmem_dmabuf *db, *imp;
	static unsigned char buf[2 << 20];
	int ret;

	ret = devmem_dmabuf_new_cuda(&db, 0, size);
	if (ret == -ENOENT || ret == -ENODEV || ret == -EOPNOTSUPP)
		return t_skip("no CUDA dma-buf: %s", devmem_last_error());
	CHECK_EQ(ret, 0);
	CHECK(devmem_dmabuf_fd(db) >= 0);
	CHECK_EQ(devmem_dmabuf_size(db), size);
	CHECK_EQ(devmem_dmabuf_kind(db), DEVMEM_DMABUF_CUDA);
	CHECK_EQ(lseek(devmem_dmabuf_fd(db), 0, SEEK_END), (off_t)size);

	CHECK_EQ(devmem_dmabuf_read(db, 0, buf, size), 0);
	CHECK_EQ(devmem_dmabuf_read(db, size - 4096, buf, 4096), 0);
	CHECK_EQ(devmem_dmabuf_read(db, size - 4096, buf, 4097), -EINVAL);

	CHECK_EQ(devmem_dmabuf_new_import(&imp, devmem_dmabuf_fd(db)), 0);
	CHECK_EQ(devmem_dmabuf_size(imp), size);
	devmem_dmabuf_free(imp);

	/* A second buffer at once, then both gone. */
	CHECK_EQ(devmem_dmabuf_new_cuda(&imp, 0, size), 0);
	devmem_dmabuf_free(imp);
	devmem_dmabuf_free(db);
	return T_PASS;
}

static const struct t_case cases[] = {
	{ "cuda", test_cuda },
};

int main(void)
{
	return T_RUN(cases);
}
