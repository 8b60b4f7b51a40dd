// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Token recycling: tokens go back to the socket with SO_DEVMEM_DONTNEED
 * as ranges of consecutive numbers. The kernel takes at most
 * DEVMEM_DONTNEED_MAX_RANGES ranges per call, looks at no more than
 * DEVMEM_DONTNEED_MAX_TOKENS tokens (the rest of a longer call is
 * ignored, not refused) and returns how many it freed. Tokens come back
 * from the application in any order, so a batch is sorted first: runs
 * of consecutive tokens become single ranges.
 *
 * Each pending token keeps one buffer of the binding out of the NIC's
 * reach, and a receiver waiting for data adds none: a recycler that waits
 * for more tokens than the NIC can spare stalls its flow for good. So a
 * recycler told the binding's buffer count never lets a quarter of them
 * sit pending (devmem_recycler_new(3) says why a quarter), and one told
 * nothing flushes every DEVMEM_RECYCLER_DEFAULT_BATCH tokens.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The binding and buffer of a token a linked receive handed out; id 0:
 * none (binding ids start at 1).
 */
struct devmem_held_tok {
	uint32_t id;
	uint32_t buf;
};

/* Tokens are the socket's small indexes (the kernel hands out the lowest
 * free one); those at or above this are not tracked.
 */
#define DEVMEM_HELD_TOKENS_MAX	(1U << 22)

struct devmem_recycler {
	int fd;
	size_t buffers;			/* the binding's; 0: not known */
	unsigned int batch;		/* flush when this many are pending */
	uint32_t *tokens;		/* pending */
	size_t nr, cap;
	struct devmem_recycler_stats stats;
	struct devmem_held_tok *held;	/* by token: what a receive noted */
	size_t held_cap;
	devmem_dontneed_fn dontneed;
	void *dontneed_arg;
	struct dmabuf_token ranges[DEVMEM_DONTNEED_MAX_RANGES];
};

static int devmem_recycler_sys_dontneed(int fd,
					const struct dmabuf_token *ranges,
					unsigned int nr, void *arg)
{
	int ret;

	(void)arg;
	ret = setsockopt(fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, ranges,
			 nr * sizeof(*ranges));
	return ret < 0 ? -errno : ret;
}

/* The flush threshold for a wanted @batch (0: the default) and the
 * binding's @buffers (0: not known).
 */
static unsigned int devmem_recycler_threshold(size_t buffers,
					      unsigned int batch)
{
	size_t share;

	if (!buffers)
		return batch ? batch : DEVMEM_RECYCLER_DEFAULT_BATCH;
	if (!batch)
		batch = DEVMEM_DONTNEED_MAX_TOKENS;
	share = buffers / DEVMEM_RECYCLER_SHARE;
	if (!share)
		share = 1;
	return share < batch ? (unsigned int)share : batch;
}

DEVMEM_EXPORT int devmem_recycler_new(struct devmem_recycler **rcp, int fd,
				      size_t buffers)
{
	struct devmem_recycler *rc;

	devmem_error_clear();
	if (!rcp)
		return devmem_fail(-EINVAL, "no place for the recycler");
	if (fd < 0)
		return devmem_fail(-EBADF, "socket fd %d", fd);

	rc = calloc(1, sizeof(*rc));
	if (!rc)
		return devmem_fail(-ENOMEM, "out of memory");
	rc->fd = fd;
	rc->buffers = buffers;
	rc->batch = devmem_recycler_threshold(buffers, 0);
	rc->dontneed = devmem_recycler_sys_dontneed;
	*rcp = rc;
	return 0;
}

DEVMEM_EXPORT int devmem_recycler_set_batch(struct devmem_recycler *rc,
					    unsigned int batch)
{
	devmem_error_clear();
	if (!rc)
		return devmem_fail(-EINVAL, "no recycler");
	if (batch > INT_MAX)
		return devmem_fail(-EINVAL, "a batch of %u tokens", batch);
	rc->batch = devmem_recycler_threshold(rc->buffers, batch);
	return (int)rc->batch;
}

/* Token @t goes back: its buffer is no longer the application's. */
static void devmem_recycler_unheld(struct devmem_recycler *rc, uint32_t t)
{
	if (t >= rc->held_cap || !rc->held[t].id)
		return;
	devmem_held_put(rc->held[t].id, rc->held[t].buf);
	rc->held[t].id = 0;
}

DEVMEM_EXPORT void devmem_recycler_free(struct devmem_recycler *rc)
{
	size_t t;

	if (!rc)
		return;
	/* The socket closes after this and frees what it held. */
	for (t = 0; t < rc->held_cap; t++)
		devmem_recycler_unheld(rc, (uint32_t)t);
	free(rc->held);
	free(rc->tokens);
	free(rc);
}

/* Room in the token map for token @t. */
static int devmem_recycler_held_room(struct devmem_recycler *rc, uint32_t t)
{
	struct devmem_held_tok *held;
	size_t cap;

	if (t < rc->held_cap)
		return 0;
	if (t >= DEVMEM_HELD_TOKENS_MAX)
		return -ERANGE;
	cap = rc->held_cap ? rc->held_cap : 256;
	while (cap <= t)
		cap *= 2;
	held = realloc(rc->held, cap * sizeof(*held));
	if (!held)
		return -ENOMEM;
	memset(held + rc->held_cap, 0, (cap - rc->held_cap) * sizeof(*held));
	rc->held = held;
	rc->held_cap = cap;
	return 0;
}

void devmem_recycler_note(struct devmem_recycler *rc,
			  const struct devmem_frag *frags, size_t nr)
{
	uint32_t buf, t;
	size_t i;

	for (i = 0; i < nr; i++) {
		t = frags[i].token;
		/* a token the map cannot hold is not counted */
		if (devmem_recycler_held_room(rc, t))
			continue;
		devmem_recycler_unheld(rc, t);
		buf = devmem_held_take(frags[i].dmabuf_id, frags[i].offset);
		if (buf == DEVMEM_HELD_NONE)
			continue;
		rc->held[t].id = frags[i].dmabuf_id;
		rc->held[t].buf = buf;
	}
}

void devmem_recycler_set_dontneed(struct devmem_recycler *rc,
				  devmem_dontneed_fn fn, void *arg)
{
	rc->dontneed = fn ? fn : devmem_recycler_sys_dontneed;
	rc->dontneed_arg = arg;
}

size_t devmem_recycler_nr(const struct devmem_recycler *rc)
{
	return rc->nr;
}

int devmem_recycler_fd(const struct devmem_recycler *rc)
{
	return rc->fd;
}

/* The recycler's own copy, so that later versions can grow the struct. */
DEVMEM_EXPORT const struct devmem_recycler_stats *
devmem_recycler_get_stats(struct devmem_recycler *rc)
{
	rc->stats.pending = rc->nr;
	return &rc->stats;
}

/* Room for @more pending tokens. */
static int devmem_recycler_reserve(struct devmem_recycler *rc, size_t more)
{
	size_t need, cap;
	uint32_t *tokens;

	if (more > SIZE_MAX / sizeof(*tokens) - rc->nr)
		return devmem_fail(-ENOMEM, "%zu more pending tokens", more);
	need = rc->nr + more;
	if (need <= rc->cap)
		return 0;
	cap = need > 2 * rc->cap ? need : 2 * rc->cap;
	if (cap < 64)
		cap = 64;
	if (cap > SIZE_MAX / sizeof(*tokens))
		cap = need;

	tokens = realloc(rc->tokens, cap * sizeof(*tokens));
	if (!tokens)
		return devmem_fail(-ENOMEM, "out of memory for %zu pending tokens",
				   need);
	rc->tokens = tokens;
	rc->cap = cap;
	return 0;
}

static int devmem_recycler_maybe_flush(struct devmem_recycler *rc)
{
	ssize_t ret;

	if (rc->nr < rc->batch)
		return 0;
	ret = devmem_recycler_flush(rc);
	return ret < 0 ? (int)ret : 0;
}

DEVMEM_EXPORT int devmem_recycler_add(struct devmem_recycler *rc,
				      uint32_t token)
{
	int err;

	devmem_error_clear();
	if (!rc)
		return devmem_fail(-EINVAL, "no recycler");
	err = devmem_recycler_reserve(rc, 1);
	if (err)
		return err;
	rc->tokens[rc->nr++] = token;
	return devmem_recycler_maybe_flush(rc);
}

DEVMEM_EXPORT int devmem_recycler_add_frags(struct devmem_recycler *rc,
					    const struct devmem_frag *frags,
					    size_t nr)
{
	size_t i;
	int err;

	devmem_error_clear();
	if (!rc)
		return devmem_fail(-EINVAL, "no recycler");
	if (nr && !frags)
		return devmem_fail(-EINVAL, "no array for %zu fragments", nr);
	err = devmem_recycler_reserve(rc, nr);
	if (err)
		return err;
	for (i = 0; i < nr; i++)
		rc->tokens[rc->nr++] = frags[i].token;
	return devmem_recycler_maybe_flush(rc);
}

static int devmem_token_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Sort the pending tokens and drop repeats, counting them as unknown:
 * the socket holds a token once, so the second return would find nothing.
 */
static void devmem_recycler_sort(struct devmem_recycler *rc)
{
	size_t i, n = 1;

	qsort(rc->tokens, rc->nr, sizeof(*rc->tokens), devmem_token_cmp);
	for (i = 1; i < rc->nr; i++)
		if (rc->tokens[i] != rc->tokens[n - 1])
			rc->tokens[n++] = rc->tokens[i];
	rc->stats.unknown += rc->nr - n;
	rc->nr = n;
}

/*
 * Fill rc->ranges from the sorted tokens at @first: as many ranges as one
 * call takes, without going over the token limit (a long run is split).
 * Returns the number of ranges; *@count says how many tokens they cover.
 */
static unsigned int devmem_recycler_ranges(struct devmem_recycler *rc,
					   size_t first, size_t *count)
{
	unsigned int nr = 0;
	size_t i = first, tokens = 0;
	uint32_t start, len;

	while (i < rc->nr && nr < DEVMEM_DONTNEED_MAX_RANGES &&
	       tokens < DEVMEM_DONTNEED_MAX_TOKENS) {
		start = rc->tokens[i++];
		len = 1;
		while (i < rc->nr && rc->tokens[i] == start + len &&
		       tokens + len < DEVMEM_DONTNEED_MAX_TOKENS) {
			i++;
			len++;
		}
		rc->ranges[nr].token_start = start;
		rc->ranges[nr].token_count = len;
		nr++;
		tokens += len;
	}
	*count = tokens;
	return nr;
}

DEVMEM_EXPORT ssize_t devmem_recycler_flush(struct devmem_recycler *rc)
{
	size_t done = 0, count, i;
	unsigned int nr;
	ssize_t freed = 0;
	int ret = 0;

	devmem_error_clear();
	if (!rc)
		return devmem_fail(-EINVAL, "no recycler");
	if (!rc->nr)
		return 0;

	devmem_recycler_sort(rc);
	while (done < rc->nr) {
		nr = devmem_recycler_ranges(rc, done, &count);
		ret = rc->dontneed(rc->fd, rc->ranges, nr, rc->dontneed_arg);
		if (ret < 0) {
			devmem_fail_errno(ret, "SO_DEVMEM_DONTNEED on fd %d, %zu tokens pending",
					  rc->fd, rc->nr - done);
			break;
		}
		/* The call went through: these tokens are no longer ours. */
		for (i = done; i < done + count; i++)
			devmem_recycler_unheld(rc, rc->tokens[i]);
		done += count;
		rc->stats.calls++;
		if ((size_t)ret > count) {
			ret = devmem_fail(-EPROTO, "SO_DEVMEM_DONTNEED freed %d tokens of the %zu handed back",
					  ret, count);
			break;
		}
		rc->stats.freed += ret;
		rc->stats.unknown += count - ret;
		freed += ret;
	}

	memmove(rc->tokens, rc->tokens + done,
		(rc->nr - done) * sizeof(*rc->tokens));
	rc->nr -= done;
	return ret < 0 ? ret : freed;
}
