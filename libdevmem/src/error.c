// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Reasons for failures, one buffer per thread: the only state the
 * library keeps outside its objects.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DEVMEM_ERROR_LEN	512

static __thread char devmem_error[DEVMEM_ERROR_LEN];
/* A literal that stands for the buffer when set (devmem_fail_const()). */
static __thread const char *devmem_error_const;

DEVMEM_EXPORT const char *devmem_last_error(void)
{
	return devmem_error_const ? devmem_error_const : devmem_error;
}

void devmem_error_clear(void)
{
	devmem_error_const = NULL;
	devmem_error[0] = '\0';
}

static void devmem_error_vset(const char *fmt, va_list ap)
{
	devmem_error_const = NULL;
	vsnprintf(devmem_error, sizeof(devmem_error), fmt, ap);
}

int devmem_fail_const(int err, const char *reason)
{
	devmem_error_const = reason;
	return err;
}

int devmem_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	devmem_error_vset(fmt, ap);
	va_end(ap);
	return err;
}

int devmem_fail_errno(int err, const char *fmt, ...)
{
	char text[64];
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	devmem_error_vset(fmt, ap);
	va_end(ap);
	n = strlen(devmem_error);
	snprintf(devmem_error + n, sizeof(devmem_error) - n, ": %s",
		 strerror_r(-err, text, sizeof(text)));
	return err;
}
