/* SPDX-License-Identifier: GPL-2.0 */
/*
 * die(): for the test programs, a fatal error. Prints "PROG: message" on
 * standard error, after flushing what standard output holds, and exits
 * with status 1. usage_error(): the same for a bad command line, with
 * " (see --help)" after the message and exit status 2. The program
 * defines PROG, its name, before including.
 */
#ifndef SELFTESTS_PROGS_DIE_H
#define SELFTESTS_PROGS_DIE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef PROG
#error "define PROG, the program's name, before including die.h"
#endif

/* What die() does, with @ap: "PROG: message", then @end, on standard
 * error, and exit(@status); for the program's own kinds of fatal error.
 */
static inline void __attribute__((format(printf, 3, 0), noreturn))
vdie(int status, const char *end, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, PROG ": ");
	vfprintf(stderr, fmt, ap);
	fputs(end, stderr);
	exit(status);
}

/* vdie() with its arguments in place of @ap. */
static inline void __attribute__((format(printf, 3, 4), noreturn))
die_status(int status, const char *end, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(status, end, fmt, ap);
	va_end(ap);
}

#define die(...)		die_status(1, "\n", __VA_ARGS__)
#define usage_error(...)	die_status(2, " (see --help)\n", __VA_ARGS__)

#endif
