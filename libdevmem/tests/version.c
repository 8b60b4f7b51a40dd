// SPDX-License-Identifier: GPL-2.0
/*
 * The version macros and devmem_version(): the library reports the
 * version of the header it was built with, in the documented encoding,
 * and the call leaves the error text alone.
 */
#include <string.h>

#include <devmem.h>

#include "test.h"

static int test_version(void)
{
	CHECK_EQ(DEVMEM_VERSION_NUMBER(1, 0), 0x10000);
	CHECK_EQ(DEVMEM_VERSION_NUMBER(2, 3), 0x20003);
	CHECK_EQ(DEVMEM_VERSION, DEVMEM_VERSION_NUMBER(DEVMEM_VERSION_MAJOR,
						       DEVMEM_VERSION_MINOR));
	CHECK_EQ(devmem_version(), DEVMEM_VERSION);
	CHECK_EQ(devmem_version() >> 16, DEVMEM_VERSION_MAJOR);
	CHECK_EQ(devmem_version() & 0xffff, DEVMEM_VERSION_MINOR);
	return T_PASS;
}

static int test_error_text_kept(void)
{
	struct devmem_dmabuf *db;

	CHECK(devmem_dmabuf_new_udmabuf(&db, 1) < 0);
	CHECK(devmem_last_error()[0] != '\0');
	devmem_version();
	CHECK(devmem_last_error()[0] != '\0');
	return T_PASS;
}

static const struct t_case cases[] = {
	{ "version", test_version },
	{ "error-text-kept", test_error_text_kept },
};

int main(void)
{
	return T_RUN(cases);
}
