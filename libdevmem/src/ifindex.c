// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Network devices by name or index, as tools take them on the command
 * line. Names come first: "7" is a valid device name.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdlib.h>

DEVMEM_EXPORT int devmem_ifindex(const char *name_or_index)
{
	const char *s = name_or_index;
	char name[IF_NAMESIZE];
	unsigned long v;
	unsigned int idx;
	char *end;

	devmem_error_clear();
	if (!s)
		return devmem_fail(-EINVAL, "no device name");
	idx = if_nametoindex(s);
	if (idx && idx <= INT_MAX)
		return (int)idx;
	if (!idx && errno != ENODEV)
		return devmem_fail_errno(-errno, "network device \"%s\"", s);

	if (*s >= '0' && *s <= '9') {
		v = strtoul(s, &end, 10);
		if (!*end && v && v <= INT_MAX && if_indextoname(v, name))
			return (int)v;
	}
	return devmem_fail(-ENODEV, "no network device \"%s\"", s);
}
