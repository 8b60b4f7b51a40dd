// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * The library's version, as the header it was built with gives it.
 */
#include "internal.h"

DEVMEM_EXPORT unsigned int devmem_version(void)
{
	return DEVMEM_VERSION;
}
