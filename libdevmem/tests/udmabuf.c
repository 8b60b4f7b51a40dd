// SPDX-License-Identifier: GPL-2.0
/*
 * A udmabuf: allocated, written through its own mapping, read back with
 * devmem_dmabuf_read(), imported a second time. Skips without
 * /dev/udmabuf.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <devmem.h>

#include "hostbuf.h"
#include "test.h"

static int test_udmabuf(void)
{
	size_t size = 4 * (size_t)sysconf(_SC_PAGESIZE);
	struct devmem_dmabuf *db, *imp;
	unsigned char byte;
	int ret;

	ret = devmem_dmabuf_new_udmabuf(&db, size);
	if (ret == -ENOENT) {
		/* the reason names the kernel option it takes */
		CHECK(strcmp(devmem_last_error(),
			     "/dev/udmabuf (the kernel needs CONFIG_UDMABUF): No such file or directory") == 0);
		return t_skip("no udmabuf: %s", devmem_last_error());
	}
	CHECK_EQ(ret, 0);
	CHECK_EQ(check_host_buffer(db, DEVMEM_DMABUF_UDMABUF, size), T_PASS);

	/* The same dma-buf through import: its size from lseek. */
	CHECK_EQ(devmem_dmabuf_new_import(&imp, devmem_dmabuf_fd(db)), 0);
	CHECK_EQ(devmem_dmabuf_size(imp), size);
	CHECK_EQ(devmem_dmabuf_read(imp, size - 1, &byte, 1), 0);
	CHECK_EQ(byte, pattern(size - 1));
	devmem_dmabuf_free(imp);
	devmem_dmabuf_free(db);
	return T_PASS;
}

static const struct t_case cases[] = {
	{ "udmabuf", test_udmabuf },
};

int main(void)
{
	return T_RUN(cases);
}
