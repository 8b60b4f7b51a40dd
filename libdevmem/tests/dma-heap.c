// SPDX-License-Identifier: GPL-2.0
/*
 * A buffer from the system dma-heap: allocated, written through its own
 * mapping, read back with devmem_dmabuf_read(). Skips without
 * /dev/dma_heap/system.
 */
#include <errno.h>
#include <unistd.h>

#include <devmem.h>

#include "hostbuf.h"
#include "test.h"

static int test_system_heap(void)
{
	size_t size = 4 * (size_t)sysconf(_SC_PAGESIZE);
	struct devmem_dmabuf *db;
	int ret;

	ret = devmem_dmabuf_new_heap(&db, NULL, size);
	if (ret == -ENOENT)
		return t_skip("no system dma-heap: %s", devmem_last_error());
	CHECK_EQ(ret, 0);
	CHECK_EQ(check_host_buffer(db, DEVMEM_DMABUF_HEAP, size), T_PASS);
	devmem_dmabuf_free(db);
	return T_PASS;
}

static const struct t_case cases[] = {
	{ "system-heap", test_system_heap },
};

int main(void)
{
	return T_RUN(cases);
}
