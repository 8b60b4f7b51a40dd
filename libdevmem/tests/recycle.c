// SPDX-License-Identifier: GPL-2.0
/*
 * The recycler's batching, sorting, merging and splitting, against a fake
 * socket behind the library's SO_DEVMEM_DONTNEED hook. The fake holds a
 * set of tokens as a socket's token table does, frees what it is given
 * as the kernel does (looking at no more than 1024 tokens a call), and
 * checks every call against the kernel's limits.
 */
#include "internal.h"
#include "dmabuf.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test.h"

#define HELD_MAX	(1U << 16)
#define MAX_CALLS	64
#define MAX_SENT	(1U << 14)

struct fake_sock {
	unsigned char held[HELD_MAX];	/* tokens the socket holds */
	int hold_all;			/* every token, whatever its number */
	unsigned int calls;
	unsigned int ranges[MAX_CALLS], tokens[MAX_CALLS];
	uint32_t sent[MAX_SENT];	/* every token handed back, in order */
	size_t nr_sent;
	unsigned int fail_call;		/* 1-based call to fail, 0: none */
	int fail_err;
	int overclaim;			/* claim more freed than given */
	int bad;			/* the library broke a rule */
};

static int fake_dontneed(int fd, const struct dmabuf_token *r, unsigned int nr,
			 void *arg)
{
	struct fake_sock *s = arg;
	unsigned int i, j, looked = 0, total = 0;
	uint32_t t;
	int freed = 0;

	(void)fd;
	if (s->fail_call && s->calls + 1 == s->fail_call)
		return s->fail_err;
	if (s->calls == MAX_CALLS || !nr || nr > DEVMEM_DONTNEED_MAX_RANGES) {
		s->bad = 1;
		return -EINVAL;
	}
	for (i = 0; i < nr; i++) {
		total += r[i].token_count;
		/* Sorted, each range non-empty and not touching the last. */
		if (!r[i].token_count ||
		    (i && r[i].token_start <= r[i - 1].token_start +
					     r[i - 1].token_count))
			s->bad = 1;
	}
	if (total > DEVMEM_DONTNEED_MAX_TOKENS)
		s->bad = 1;
	s->ranges[s->calls] = nr;
	s->tokens[s->calls] = total;
	s->calls++;

	for (i = 0; i < nr; i++) {
		for (j = 0; j < r[i].token_count; j++) {
			if (looked++ == DEVMEM_DONTNEED_MAX_TOKENS)
				return freed;
			t = r[i].token_start + j;
			if (s->nr_sent < MAX_SENT)
				s->sent[s->nr_sent++] = t;
			if (s->hold_all) {
				freed++;
			} else if (t < HELD_MAX && s->held[t]) {
				s->held[t] = 0;
				freed++;
			}
		}
	}
	return s->overclaim ? (int)total + 1 : freed;
}

static struct fake_sock *fake_new(void)
{
	return calloc(1, sizeof(struct fake_sock));
}

static int new_rc(struct devmem_recycler **rc, unsigned int batch,
		  struct fake_sock *s)
{
	int err = devmem_recycler_new(rc, 3, 0);

	if (err)
		return err;
	devmem_recycler_set_dontneed(*rc, fake_dontneed, s);
	if (batch && devmem_recycler_set_batch(*rc, batch) != (int)batch) {
		devmem_recycler_free(*rc);
		return -EPROTO;
	}
	return 0;
}

static int add_all(struct devmem_recycler *rc, const uint32_t *t, size_t n)
{
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		err = devmem_recycler_add(rc, t[i]);
		if (err)
			return err;
	}
	return 0;
}

static void hold(struct fake_sock *s, const uint32_t *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		s->held[t[i]] = 1;
}

static int test_unsorted(void)
{
	static const uint32_t t[] = { 5, 3, 4, 1, 2 };
	struct devmem_recycler_stats st;
	struct devmem_recycler *rc;
	struct fake_sock *s = fake_new();

	CHECK(s);
	hold(s, t, 5);
	CHECK_EQ(new_rc(&rc, 0, s), 0);
	CHECK_EQ(add_all(rc, t, 5), 0);
	CHECK_EQ(s->calls, 0);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.pending, 5);

	CHECK_EQ(devmem_recycler_flush(rc), 5);
	CHECK_EQ(s->calls, 1);
	CHECK_EQ(s->ranges[0], 1);
	CHECK_EQ(s->sent[0], 1);
	CHECK_EQ(s->sent[4], 5);
	CHECK(!s->bad);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.freed, 5);
	CHECK_EQ(st.unknown, 0);
	CHECK_EQ(st.calls, 1);
	CHECK_EQ(st.pending, 0);

	/* Nothing pending: no call. */
	CHECK_EQ(devmem_recycler_flush(rc), 0);
	CHECK_EQ(s->calls, 1);
	devmem_recycler_free(rc);
	free(s);
	return T_PASS;
}

static int test_duplicates(void)
{
	static const uint32_t t[] = { 8, 7, 7, 8, 7 };
	struct devmem_recycler_stats st;
	struct devmem_recycler *rc;
	struct fake_sock *s = fake_new();

	CHECK(s);
	hold(s, t, 5);
	CHECK_EQ(new_rc(&rc, 0, s), 0);
	CHECK_EQ(add_all(rc, t, 5), 0);
	CHECK_EQ(devmem_recycler_flush(rc), 2);
	CHECK_EQ(s->ranges[0], 1);
	CHECK_EQ(s->tokens[0], 2);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.freed, 2);
	CHECK_EQ(st.unknown, 3);
	CHECK(!s->bad);
	devmem_recycler_free(rc);
	free(s);
	return T_PASS;
}

static int test_gaps(void)
{
	static const uint32_t t[] = { 20, 11, 1, 3, 10, 2 };
	struct devmem_recycler *rc;
	struct fake_sock *s = fake_new();

	CHECK(s);
	hold(s, t, 6);
	CHECK_EQ(new_rc(&rc, 0, s), 0);
	CHECK_EQ(add_all(rc, t, 6), 0);
	CHECK_EQ(devmem_recycler_flush(rc), 6);
	/* {1, 3}, {10, 2}, {20, 1} */
	CHECK_EQ(s->calls, 1);
	CHECK_EQ(s->ranges[0], 3);
	CHECK_EQ(s->tokens[0], 6);
	CHECK(!s->bad);
	devmem_recycler_free(rc);
	free(s);
	return T_PASS;
}

static int test_edges(void)
{
	static const uint32_t t[] = { 0xffffffff, 0, 0xfffffffe };
	struct devmem_recycler_stats st;
	struct devmem_recycler *rc;
	struct fake_sock *s = fake_new();

	CHECK(s);
	s->hold_all = 1;
	CHECK_EQ(new_rc(&rc, 0, s), 0);
	CHECK_EQ(add_all(rc, t, 3), 0);
	CHECK_EQ(devmem_recycler_flush(rc), 3);
	/* {0, 1}, {0xfffffffe, 2}: no wrap-around into token 0. */
	CHECK_EQ(s->ranges[0], 2);
	CHECK_EQ(s->sent[0], 0);
	CHECK(s->sent[1] == 0xfffffffe);
	CHECK(s->sent[2] == 0xffffffff);
	CHECK(!s->bad);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.freed, 3);
	devmem_recycler_free(rc);
	free(s);
	return T_PASS;
}

/* 300 tokens, none next to another: 300 ranges in calls of 128. */
static int test_many_ranges(void)
{
	struct devmem_recycler_stats st;
	struct devmem_recycler *rc;
	struct fake_sock *s = fake_new();
	uint32_t i;

	CHECK(s);
	CHECK_EQ(new_rc(&rc, 4096, s), 0);
	for (i = 0; i < 300; i++) {
		s->held[2 * i + 1] = 1;
		CHECK_EQ(devmem_recycler_add(rc, 2 * (299 - i) + 1), 0);
	}
	CHECK_EQ(devmem_recycler_flush(rc), 300);
	CHECK_EQ(s->calls, 3);
	CHECK_EQ(s->ranges[0], 128);
	CHECK_EQ(s->ranges[1], 128);
	CHECK_EQ(s->ranges[2], 44);
	CHECK_EQ(s->nr_sent, 300);
	for (i = 0; i < 300; i++)
		CHECK_EQ(s->sent[i], 2 * i + 1);
	CHECK(!s->bad);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.calls, 3);
	CHECK_EQ(st.freed, 300);
	devmem_recycler_free(rc);
	free(s);
	return T_PASS;
}

/* One run of 3000 tokens: split at the 1024-token limit. */
static int test_many_tokens(void)
{
	struct devmem_recycler *rc;
	struct fake_sock *s = fake_new();
	uint32_t i;

	CHECK(s);
	CHECK_EQ(new_rc(&rc, 8192, s), 0);
	for (i = 0; i < 3000; i++) {
		s->held[i + 100] = 1;
		CHECK_EQ(devmem_recycler_add(rc, i + 100), 0);
	}
	CHECK_EQ(devmem_recycler_flush(rc), 3000);
	CHECK_EQ(s->calls, 3);
	CHECK_EQ(s->tokens[0], 1024);
	CHECK_EQ(s->tokens[1], 1024);
	CHECK_EQ(s->tokens[2], 952);
	CHECK_EQ(s->ranges[0], 1);
	for (i = 0; i < 3000; i++)
		CHECK_EQ(s->sent[i], i + 100);
	CHECK(!s->bad);
	devmem_recycler_free(rc);
	free(s);
	return T_PASS;
}

/* 100 runs of 20: both limits in play, a run split across calls. */
static int test_mixed_limits(void)
{
	struct devmem_recycler *rc;
	struct fake_sock *s = fake_new();
	uint32_t i, j, k = 0;

	CHECK(s);
	CHECK_EQ(new_rc(&rc, 8192, s), 0);
	for (i = 0; i < 100; i++) {
		for (j = 0; j < 20; j++) {
			s->held[i * 30 + j] = 1;
			CHECK_EQ(devmem_recycler_add(rc, i * 30 + j), 0);
		}
	}
	CHECK_EQ(devmem_recycler_flush(rc), 2000);
	CHECK_EQ(s->calls, 2);
	CHECK_EQ(s->tokens[0], 1024);
	CHECK_EQ(s->ranges[0], 52);	/* 51 whole runs and 4 tokens */
	CHECK_EQ(s->tokens[1], 976);
	CHECK_EQ(s->ranges[1], 49);
	for (i = 0; i < 100; i++)
		for (j = 0; j < 20; j++)
			CHECK_EQ(s->sent[k++], i * 30 + j);
	CHECK(!s->bad);
	devmem_recycler_free(rc);
	free(s);
	return T_PASS;
}

/* Tokens the socket does not hold are counted, never retried. */
static int test_partial(void)
{
	static const uint32_t known[] = { 1, 2, 3, 7, 8, 9 };
	struct devmem_recycler_stats st;
	struct devmem_recycler *rc;
	struct fake_sock *s = fake_new();
	uint32_t i;

	CHECK(s);
	hold(s, known, 6);
	CHECK_EQ(new_rc(&rc, 0, s), 0);
	for (i = 1; i <= 10; i++)
		CHECK_EQ(devmem_recycler_add(rc, i), 0);
	CHECK_EQ(devmem_recycler_flush(rc), 6);
	CHECK_EQ(s->calls, 1);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.freed, 6);
	CHECK_EQ(st.unknown, 4);
	CHECK_EQ(st.pending, 0);
	CHECK_EQ(devmem_recycler_flush(rc), 0);
	CHECK_EQ(s->calls, 1);
	devmem_recycler_free(rc);
	free(s);
	return T_PASS;
}

static int test_auto_flush(void)
{
	struct devmem_frag frags[3] = {
		{ .token = 10 }, { .token = 12 }, { .token = 11 },
	};
	struct devmem_recycler_stats st;
	struct devmem_recycler *rc;
	struct fake_sock *s = fake_new();

	CHECK(s);
	s->hold_all = 1;
	CHECK_EQ(new_rc(&rc, 4, s), 0);
	CHECK_EQ(devmem_recycler_add(rc, 1), 0);
	CHECK_EQ(devmem_recycler_add_frags(rc, frags, 2), 0);
	CHECK_EQ(s->calls, 0);
	CHECK_EQ(devmem_recycler_add_frags(rc, frags + 2, 1), 0);
	CHECK_EQ(s->calls, 1);
	CHECK_EQ(s->ranges[0], 2);	/* {1, 1}, {10, 3} */
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.pending, 0);
	CHECK_EQ(st.freed, 4);

	/* Past the batch in one go: all of it, in one flush. */
	CHECK_EQ(devmem_recycler_add_frags(rc, frags, 3), 0);
	CHECK_EQ(devmem_recycler_add_frags(rc, frags, 0), 0);
	CHECK_EQ(s->calls, 1);
	CHECK_EQ(devmem_recycler_add_frags(rc, frags, 3), 0);
	CHECK_EQ(s->calls, 2);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.pending, 0);
	CHECK_EQ(st.unknown, 3);	/* the second 10, 11 and 12 */
	CHECK(!s->bad);
	devmem_recycler_free(rc);
	free(s);
	return T_PASS;
}

static int test_errors(void)
{
	struct devmem_recycler_stats st;
	struct devmem_recycler *rc;
	struct fake_sock *s = fake_new();
	uint32_t i;

	CHECK(s);
	s->hold_all = 1;
	CHECK_EQ(new_rc(&rc, 2048, s), 0);

	/* A failing call keeps everything pending. */
	s->fail_call = 1;
	s->fail_err = -ENOPROTOOPT;
	CHECK_EQ(devmem_recycler_add(rc, 5), 0);
	CHECK_EQ(devmem_recycler_flush(rc), -ENOPROTOOPT);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.pending, 1);
	CHECK_EQ(st.calls, 0);
	s->fail_call = 0;
	CHECK_EQ(devmem_recycler_flush(rc), 1);

	/* Failing halfway: what went back is gone, the rest stays. */
	for (i = 0; i < 1500; i++)
		CHECK_EQ(devmem_recycler_add(rc, i), 0);
	s->fail_call = s->calls + 2;
	s->fail_err = -ENOMEM;
	CHECK_EQ(devmem_recycler_flush(rc), -ENOMEM);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.pending, 1500 - 1024);
	s->fail_call = 0;
	CHECK_EQ(devmem_recycler_flush(rc), 1500 - 1024);
	CHECK_EQ(s->sent[1 + 1024], 1024);

	/* An auto-flush's error comes back from add; the token stays. */
	devmem_recycler_free(rc);
	CHECK_EQ(new_rc(&rc, 2, s), 0);
	s->fail_call = s->calls + 1;
	s->fail_err = -EBADF;
	CHECK_EQ(devmem_recycler_add(rc, 1), 0);
	CHECK_EQ(devmem_recycler_add(rc, 2), -EBADF);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.pending, 2);
	s->fail_call = 0;
	CHECK_EQ(devmem_recycler_add(rc, 3), 0);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.pending, 0);
	CHECK_EQ(st.freed, 3);

	/* A kernel claiming more than it was given. */
	s->overclaim = 1;
	CHECK_EQ(devmem_recycler_add(rc, 9), 0);
	CHECK_EQ(devmem_recycler_flush(rc), -EPROTO);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.pending, 0);
	CHECK(!s->bad);
	devmem_recycler_free(rc);

	CHECK_EQ(devmem_recycler_new(&rc, -1, 0), -EBADF);
	CHECK_EQ(devmem_recycler_new(NULL, 3, 0), -EINVAL);
	CHECK_EQ(devmem_recycler_add_frags(NULL, NULL, 0), -EINVAL);
	devmem_recycler_free(NULL);
	free(s);
	return T_PASS;
}

/*
 * Told the binding's buffer count, the recycler flushes before a quarter
 * of the buffers are pending (capped at what one DONTNEED call takes):
 * the rest is left to the socket's queues and the page pools, and the
 * flow cannot stall on tokens the application already gave back.
 */
static int check_threshold(size_t buffers, unsigned int want)
{
	struct devmem_recycler_stats st;
	struct devmem_recycler *rc;
	struct devmem_frag frags[7];
	struct fake_sock *s = fake_new();
	unsigned int i, j, n, calls, tok = 0;

	CHECK(s);
	s->hold_all = 1;
	CHECK_EQ(devmem_recycler_new(&rc, 3, buffers), 0);
	devmem_recycler_set_dontneed(rc, fake_dontneed, s);

	/* want - 1 tokens wait; the next one goes back with them */
	for (i = 0; i + 1 < want; i++)
		CHECK_EQ(devmem_recycler_add(rc, tok++), 0);
	CHECK_EQ(s->calls, 0);
	CHECK_EQ(devmem_recycler_add(rc, tok++), 0);
	CHECK_EQ(s->calls, 1);
	CHECK_EQ(s->tokens[0], want);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.pending, 0);

	/* receives of 1 to 7 fragments: never want tokens left pending, no
	 * flush larger than a receive over the threshold
	 */
	for (i = 0; tok < 30 * want; i++) {
		n = i % 7 + 1;
		for (j = 0; j < n; j++)
			frags[j].token = tok++;
		calls = s->calls;
		CHECK_EQ(devmem_recycler_add_frags(rc, frags, n), 0);
		st = *devmem_recycler_get_stats(rc);
		CHECK(st.pending < want);
		if (s->calls != calls)
			CHECK(s->tokens[calls] < want + n);
	}

	/* a batch asked for is capped by the count (only the default by
	 * what one call takes), a smaller one kept
	 */
	CHECK_EQ(devmem_recycler_set_batch(rc, 0), want);
	CHECK_EQ(devmem_recycler_set_batch(rc, 1U << 30),
		 buffers < 8 ? 1 : buffers / 4);
	CHECK_EQ(devmem_recycler_set_batch(rc, 2), want < 2 ? want : 2);
	CHECK(!s->bad);
	devmem_recycler_free(rc);
	free(s);
	return T_PASS;
}

static int test_threshold(void)
{
	static const struct {
		size_t buffers;
		unsigned int batch;
	} t[] = {
		{ 1, 1 }, { 3, 1 }, { 4, 1 }, { 7, 1 }, { 8, 2 }, { 64, 16 },
		{ 256, 64 },		/* 1 MiB of 4 KiB buffers */
		{ 512, 128 },		/* 2 MiB: the old default stalled */
		{ 2048, 512 }, { 4095, 1023 }, { 4096, 1024 }, { 4100, 1024 },
		{ 1U << 20, 1024 },	/* 4 GiB: what one call takes */
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (check_threshold(t[i].buffers, t[i].batch)) {
			fprintf(stderr, "with %zu buffers\n", t[i].buffers);
			return T_FAIL;
		}
	}
	return T_PASS;
}

/* Without a count: DEVMEM_RECYCLER_DEFAULT_BATCH, or what is asked. */
static int test_unsized(void)
{
	struct devmem_recycler_stats st;
	struct devmem_recycler *rc;
	struct fake_sock *s = fake_new();
	unsigned int i;

	CHECK(s);
	s->hold_all = 1;
	CHECK_EQ(DEVMEM_RECYCLER_DEFAULT_BATCH, 64);
	CHECK_EQ(DEVMEM_RECYCLER_SHARE, 4);
	CHECK_EQ(devmem_recycler_new(&rc, 3, 0), 0);
	devmem_recycler_set_dontneed(rc, fake_dontneed, s);
	for (i = 0; i < 63; i++)
		CHECK_EQ(devmem_recycler_add(rc, i), 0);
	CHECK_EQ(s->calls, 0);
	CHECK_EQ(devmem_recycler_add(rc, 63), 0);
	CHECK_EQ(s->calls, 1);
	CHECK_EQ(s->tokens[0], 64);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.pending, 0);
	CHECK_EQ(st.freed, 64);

	CHECK_EQ(devmem_recycler_set_batch(rc, 0), 64);
	CHECK_EQ(devmem_recycler_set_batch(rc, 5000), 5000);
	CHECK_EQ(devmem_recycler_set_batch(rc, 1), 1);
	CHECK_EQ(devmem_recycler_set_batch(rc, (unsigned int)INT_MAX + 1),
		 -EINVAL);
	CHECK_EQ(devmem_recycler_set_batch(NULL, 1), -EINVAL);
	CHECK(!s->bad);
	devmem_recycler_free(rc);
	free(s);
	return T_PASS;
}

/*
 * The binding's buffer count comes from the dma-buf's size
 * (lseek(SEEK_END), as a dma-buf answers it); the caller's fd keeps its
 * position. The kernel part is selftests/libdevmem.bats (recycle-vm).
 */
static int test_fd_size(void)
{
	size_t size = 0;
	int fd;

	fd = memfd_create("recycle", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, 2 << 20), 0);
	CHECK_EQ(lseek(fd, 12345, SEEK_SET), 12345);
	CHECK_EQ(devmem_fd_size(fd, &size), 0);
	CHECK_EQ(size, 2 << 20);
	CHECK_EQ(lseek(fd, 0, SEEK_CUR), 12345);
	CHECK_EQ(ftruncate(fd, 0), 0);
	CHECK_EQ(devmem_fd_size(fd, &size), -EINVAL);
	close(fd);
	return T_PASS;
}

/*
 * What the application holds (devmem_binding_held()): fragments noted by
 * a linked receive count their buffer once however many share it, and
 * leave it when their token goes back through the recycler, or when the
 * recycler goes; a binding the process did not make is not counted, nor
 * a token too large for the map.
 */
static int test_held(void)
{
	/* binding 41: 4 buffers of 16K; tokens 1-3 in buffer 0, 4 in 2 */
	const struct devmem_frag frags[] = {
		{ .offset = 0, .size = 1448, .token = 1, .dmabuf_id = 41 },
		{ .offset = 1448, .size = 1448, .token = 2, .dmabuf_id = 41 },
		{ .offset = 2896, .size = 1448, .token = 3, .dmabuf_id = 41 },
		{ .offset = 32768, .size = 100, .token = 4, .dmabuf_id = 41 },
		{ .offset = 0, .size = 100, .token = 5, .dmabuf_id = 42 },
		{ .offset = 65536, .size = 1, .token = 6, .dmabuf_id = 41 },
		{ .offset = 16384, .size = 1, .token = 1U << 30,
		  .dmabuf_id = 41 },
	};
	const uint32_t back[] = { 1, 2, 4 };
	struct devmem_recycler *rc;
	struct fake_sock *s = fake_new();
	uint64_t tokens = 99;

	CHECK(s != NULL);
	CHECK_EQ(devmem_held_register(41, 4, 16384), 0);
	CHECK_EQ(devmem_held_get(41, &tokens), 0);
	CHECK_EQ(tokens, 0);
	CHECK_EQ(new_rc(&rc, 100, s), 0);
	hold(s, (const uint32_t[]){ 1, 2, 3, 4, 5, 6 }, 6);
	devmem_recycler_note(rc, frags, sizeof(frags) / sizeof(frags[0]));
	/* buffers 0 and 2; the frag past the end and binding 42 are not */
	CHECK_EQ(devmem_held_get(41, &tokens), 2);
	CHECK_EQ(tokens, 4);
	CHECK_EQ(devmem_held_get(42, &tokens), 0);
	CHECK_EQ(tokens, 0);

	/* tokens 1, 2 and 4 back: buffer 0 still has token 3 */
	CHECK_EQ(add_all(rc, back, 3), 0);
	CHECK_EQ(devmem_held_get(41, &tokens), 2);
	CHECK_EQ(devmem_recycler_flush(rc), 3);
	CHECK_EQ(devmem_held_get(41, &tokens), 1);
	CHECK_EQ(tokens, 1);

	/* a token the kernel reissued replaces the stale entry */
	devmem_recycler_note(rc, &frags[2], 1);
	CHECK_EQ(devmem_held_get(41, &tokens), 1);
	CHECK_EQ(tokens, 1);

	/* the recycler goes with its socket: nothing is held */
	devmem_recycler_free(rc);
	CHECK_EQ(devmem_held_get(41, &tokens), 0);
	CHECK_EQ(tokens, 0);
	devmem_held_unregister(41);
	CHECK(!s->bad);
	free(s);
	return T_PASS;
}

static const struct t_case cases[] = {
	{ "unsorted", test_unsorted },
	{ "duplicates", test_duplicates },
	{ "adjacent-and-gaps", test_gaps },
	{ "token-number-edges", test_edges },
	{ "over-128-ranges", test_many_ranges },
	{ "over-1024-tokens", test_many_tokens },
	{ "both-limits", test_mixed_limits },
	{ "partial-frees", test_partial },
	{ "auto-flush", test_auto_flush },
	{ "errors", test_errors },
	{ "threshold-from-buffer-count", test_threshold },
	{ "default-without-count", test_unsized },
	{ "dmabuf-size", test_fd_size },
	{ "held-buffers", test_held },
};

int main(void)
{
	return T_RUN(cases);
}
