/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fuzzers' random numbers: a splitmix64 stream (pattern.h's mix64)
 * whose state, fuzz_rng, the program seeds. What a fuzzer draws must not
 * depend on the kernel's answers, so that a seed replays a run.
 */
#ifndef SELFTESTS_PROGS_FUZZ_H
#define SELFTESTS_PROGS_FUZZ_H

#include <stdbool.h>
#include <stdint.h>

#include "pattern.h"

static uint64_t fuzz_rng;

static inline uint64_t rnd(void)
{
	fuzz_rng += PATTERN_GOLDEN;
	return mix64(fuzz_rng);
}

/* 0 to @n - 1; 0 when @n is 0 */
static inline uint32_t below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static inline bool chance(unsigned int pct)
{
	return below(100) < pct;
}

#endif
