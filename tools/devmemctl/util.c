// SPDX-License-Identifier: GPL-2.0
/*
 * devmemctl: what every command's file uses - errors in iproute2's
 * "Error: " form, and devices by name or index.
 */
#include <net/if.h>
#include <stdarg.h>

#include "devmemctl.h"

void error_msg(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("Error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int lib_error(const char *what)
{
	const char *reason = devmem_last_error();

	if (!reason || !*reason)
		reason = "unknown error";
	if (what)
		error_msg("%s: %s", what, reason);
	else
		error_msg("%s", reason);
	return EXIT_FAIL;
}

int resolve_dev(const char *dev)
{
	int ifindex = devmem_ifindex(dev);

	if (ifindex < 0)
		lib_error(NULL);
	return ifindex;
}

const char *dev_name(int ifindex, char *buf)
{
	if (ifindex <= 0 || !if_indextoname((unsigned int)ifindex, buf))
		return NULL;
	return buf;
}
