/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Byte counts on the test programs' command lines: a number as strtoull()
 * reads it with base 0 (decimal, 0x hex, 0 octal), then optionally K, M
 * or G (1024-based, either case). Nothing before or after it: no sign,
 * no blanks, and no value that does not fit in 64 bits.
 */
#ifndef SELFTESTS_PROGS_SIZE_H
#define SELFTESTS_PROGS_SIZE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* @s as a byte count in *@v: 0, or -1 when it is not one. */
static inline int parse_size(const char *s, uint64_t *v)
{
	unsigned int shift = 0;
	unsigned long long n;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'G': case 'g': shift = 30; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'K': case 'k': shift = 10; end++; break;
	}
	if (*end || (shift && n > (UINT64_MAX >> shift)))
		return -1;
	*v = (uint64_t)n << shift;
	return 0;
}

#ifdef SELFTESTS_PROGS_DIE_H
/* parse_size(), or die(): "PROG: bad number 'S'". */
static inline uint64_t size_arg(const char *s)
{
	uint64_t v;

	if (parse_size(s, &v))
		die("bad number '%s'", s);
	return v;
}
#endif

#endif
