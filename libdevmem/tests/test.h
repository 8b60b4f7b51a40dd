/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the libdevmem test programs share. A program runs its cases and
 * exits T_PASS, T_FAIL, or T_SKIP when every case skipped; a skip prints
 * "skip: <reason>" on standard output, which is what the Bats wrapper
 * shows.
 */
#ifndef LIBDEVMEM_TEST_H
#define LIBDEVMEM_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#define T_PASS	0
#define T_FAIL	1
#define T_SKIP	77

/* In a case: report and fail it when @cond does not hold. */
#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: %s: failed: %s\n",	\
				__FILE__, __LINE__, __func__, #cond);	\
			return T_FAIL;					\
		}							\
	} while (0)

/* The same for two integers, showing both. */
#define CHECK_EQ(a, b)							\
	do {								\
		long long a_ = (long long)(a), b_ = (long long)(b);	\
		if (a_ != b_) {						\
			fprintf(stderr, "%s:%d: %s: %s is %lld, not %s (%lld)\n", \
				__FILE__, __LINE__, __func__, #a, a_,	\
				#b, b_);				\
			return T_FAIL;					\
		}							\
	} while (0)

struct t_case {
	const char *name;
	int (*run)(void);
};

static inline int __attribute__((format(printf, 1, 2)))
t_skip(const char *fmt, ...)
{
	va_list ap;

	printf("skip: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return T_SKIP;
}

static inline int t_run(const struct t_case *cases, size_t n)
{
	size_t i, failed = 0, skipped = 0;
	int ret;

	for (i = 0; i < n; i++) {
		ret = cases[i].run();
		if (ret == T_SKIP) {
			skipped++;
			continue;
		}
		printf("%s %s\n", ret == T_PASS ? "ok" : "FAIL", cases[i].name);
		if (ret != T_PASS)
			failed++;
	}
	fflush(stdout);
	if (failed)
		return T_FAIL;
	return skipped == n ? T_SKIP : T_PASS;
}

#define T_RUN(cases)	t_run(cases, sizeof(cases) / sizeof((cases)[0]))

#endif /* LIBDEVMEM_TEST_H */
