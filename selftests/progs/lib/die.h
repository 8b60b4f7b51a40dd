/* SPDX-License-Identifier: GPL-2.0 */
/*
 * die(): for the test programs, a fatal error. Prints "PROG: message" on
 * standard error, after flushing what standard output holds, and exits
 * with status 1. The program defines PROG, its name, before including.
 */
#ifndef SELFTESTS_PROGS_DIE_H
#define SELFTESTS_PROGS_DIE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef PROG
#error "define PROG, the program's name, before including die.h"
#endif

static void __attribute__((format(printf, 1, 2), noreturn))
die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

#endif
