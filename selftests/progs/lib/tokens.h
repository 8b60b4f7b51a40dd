/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tokens of a device-memory TCP receiver: those it holds, and giving
 * them back with SO_DEVMEM_DONTNEED, merged into ranges, in calls the
 * kernel takes whole (at most TOKENS_MAX_RANGES ranges naming at most
 * TOKENS_MAX_FRAGS tokens). Each call must free every token it names;
 * else, or when a call fails, the program dies (die.h, included first).
 * The program includes linux/uio.h before glibc's headers, as devmem-rx
 * does: struct dmabuf_token is there.
 */
#ifndef SELFTESTS_PROGS_TOKENS_H
#define SELFTESTS_PROGS_TOKENS_H

#include <errno.h>
#include <linux/uio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#ifndef SELFTESTS_PROGS_DIE_H
#error "include die.h before tokens.h"
#endif

#define TOKENS_MAX_RANGES	128	/* per SO_DEVMEM_DONTNEED */
#define TOKENS_MAX_FRAGS	1024	/* tokens one call looks at */

/* The tokens held, in the order they came. */
struct tokens {
	uint32_t *t;
	size_t n, cap;
};

static inline void tokens_hold(struct tokens *h, uint32_t token)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 4096;
		h->t = realloc(h->t, h->cap * sizeof(*h->t));
		if (!h->t)
			die("out of memory");
	}
	h->t[h->n++] = token;
}

/* Give tokens @t[0..@n) back to socket @fd. */
static inline void tokens_give_back(int fd, const uint32_t *t, size_t n)
{
	struct dmabuf_token ranges[TOKENS_MAX_RANGES];
	size_t i = 0, nr, count;
	int ret;

	while (i < n) {
		nr = 0;
		count = 0;
		while (i < n && count < TOKENS_MAX_FRAGS) {
			if (nr && ranges[nr - 1].token_start +
				  ranges[nr - 1].token_count == t[i]) {
				ranges[nr - 1].token_count++;
			} else if (nr < TOKENS_MAX_RANGES) {
				ranges[nr].token_start = t[i];
				ranges[nr++].token_count = 1;
			} else {
				break;
			}
			count++;
			i++;
		}
		ret = setsockopt(fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, ranges,
				 nr * sizeof(ranges[0]));
		if (ret < 0)
			die("SO_DEVMEM_DONTNEED: %s", strerror(errno));
		if ((size_t)ret != count)
			die("SO_DEVMEM_DONTNEED freed %d of %zu", ret, count);
	}
}

/* Every token @h holds back to @fd. */
static inline void tokens_return(struct tokens *h, int fd)
{
	tokens_give_back(fd, h->t, h->n);
	h->n = 0;
}

#endif
