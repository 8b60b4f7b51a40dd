// SPDX-License-Identifier: GPL-2.0
/*
 * devmem_uring: the io_uring receive. On real loopback TCP connections
 * (the host's data is readable, so MSG_SOCK_DEVMEM just copies and no
 * cmsg comes): a stream checked byte by byte, end of stream, completions
 * routed to their requests, -EBUSY with every request in flight,
 * MSG_DONTWAIT, the ring's fd, freeing a ring with requests in flight.
 * Against the fake socket (fake-sock.h) behind the library's recvmsg
 * hook, each request going through the ring as a NOP: ETOOSMALL growth
 * and its bound, nothing lost over many requests. Skips only where
 * io_uring itself is unavailable (ENOSYS, EPERM).
 */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../selftests/progs/pattern.h"
#include "fake-sock.h"
#include "tcp.h"
#include "test.h"

#define STREAM_BYTES	(8U << 20)
#define SEED_BASE	(7 * PATTERN_GOLDEN)

static int new_ring(struct devmem_uring **u, unsigned int entries,
		    unsigned int frags)
{
	return devmem_uring_new(u, entries, frags, 0);
}

static int test_args(void)
{
	struct devmem_uring_completion c;
	struct devmem_uring *u;
	char buf[8];

	CHECK_EQ(devmem_uring_new(NULL, 0, 0, 0), -EINVAL);
	CHECK_EQ(devmem_uring_new(&u, 0, 0, 1U << 9), -EINVAL);
	CHECK_EQ(devmem_uring_new(&u, DEVMEM_URING_MAX_ENTRIES + 1, 0, 0),
		 -EINVAL);
	CHECK(strstr(devmem_last_error(), "entries"));
	CHECK_EQ(new_ring(&u, 0, 0), 0);
	CHECK(devmem_uring_fd(u) >= 0);
	CHECK_EQ(devmem_uring_inflight(u), 0);
	CHECK_EQ(devmem_uring_submit(NULL, 0, buf, sizeof(buf), 0, 0), -EINVAL);
	CHECK_EQ(devmem_uring_submit(u, 0, NULL, 1, 0, 0), -EINVAL);
	CHECK_EQ(devmem_uring_submit(u, -1, buf, sizeof(buf), 0, 0), -EBADF);
	CHECK_EQ(devmem_uring_wait(NULL, &c), -EINVAL);
	CHECK_EQ(devmem_uring_wait(u, NULL), -EINVAL);
	CHECK_EQ(devmem_uring_peek(u, NULL), -EINVAL);
	CHECK_EQ(devmem_uring_wait(u, &c), -ENOENT);
	CHECK_EQ(devmem_uring_peek(u, &c), -ENOENT);
	CHECK_EQ(devmem_uring_inflight(u), 0);
	CHECK_EQ(devmem_uring_fd(NULL), -EINVAL);
	CHECK_EQ(devmem_uring_inflight(NULL), 0);
	/* a socket that is not one: the kernel's error, in the completion */
	CHECK_EQ(devmem_uring_submit(u, devmem_uring_fd(u), buf, sizeof(buf),
				     0, 5), 0);
	CHECK_EQ(devmem_uring_wait(u, &c), 0);
	CHECK_EQ(c.user_data, 5);
	CHECK_EQ(c.ret, -ENOTSOCK);
	CHECK_EQ(c.rx.nr_frags, 0);
	devmem_uring_free(u);
	devmem_uring_free(NULL);
	return T_PASS;
}

struct writer {
	int fd;
	size_t bytes;
	int err;
};

/* Write the pattern in pieces of odd sizes, then close. */
static void *write_stream(void *arg)
{
	static uint8_t chunk[100003];
	struct writer *w = arg;
	size_t off = 0, n;
	ssize_t done;

	while (off < w->bytes) {
		n = w->bytes - off < sizeof(chunk) ? w->bytes - off :
						     sizeof(chunk);
		pattern_fill(SEED_BASE, off, chunk, n);
		done = write(w->fd, chunk, n);
		if (done <= 0) {
			w->err = done ? errno : EPIPE;
			break;
		}
		off += done;
	}
	close(w->fd);
	return NULL;
}

/* One request in flight at a time; every byte checked; then EOF. */
static int test_stream(void)
{
	static uint8_t buf[65536];
	struct devmem_uring_completion c;
	struct devmem_uring *u;
	struct writer w = { .bytes = STREAM_BYTES };
	uint64_t off = 0, calls = 0;
	pthread_t thread;
	int sfd;

	if (tcp_pair(&w.fd, &sfd))
		return t_skip("no loopback TCP here");
	CHECK_EQ(new_ring(&u, 4, 0), 0);
	CHECK_EQ(pthread_create(&thread, NULL, write_stream, &w), 0);
	for (;;) {
		CHECK_EQ(devmem_uring_submit(u, sfd, buf, sizeof(buf), 0,
					     calls), 0);
		CHECK_EQ(devmem_uring_inflight(u), 1);
		CHECK_EQ(devmem_uring_wait(u, &c), 0);
		CHECK_EQ(devmem_uring_inflight(u), 0);
		CHECK_EQ(c.user_data, calls);
		CHECK_EQ(c.fd, sfd);
		CHECK(c.buf == buf);
		calls++;
		if (c.ret <= 0)
			break;
		CHECK_EQ(c.rx.host_bytes, c.ret);
		CHECK_EQ(c.rx.dmabuf_bytes, 0);
		CHECK_EQ(c.rx.nr_frags, 0);
		CHECK_EQ(pattern_check(SEED_BASE, off, buf, c.ret), c.ret);
		off += c.ret;
	}
	CHECK_EQ(c.ret, 0);	/* end of stream */
	CHECK_EQ(off, STREAM_BYTES);
	CHECK_EQ(c.rx.host_bytes, 0);
	CHECK_EQ(pthread_join(thread, NULL), 0);
	CHECK_EQ(w.err, 0);
	close(sfd);
	devmem_uring_free(u);
	return T_PASS;
}

/*
 * Two slots, both waiting on idle sockets: a third is -EBUSY; data on the
 * second socket completes the second request; its slot takes a new
 * request; the ring's fd turns readable with a completion; a ring freed
 * with requests in flight cancels them.
 */
static int test_busy(void)
{
	char b1[16], b2[16], b3[16];
	struct devmem_uring_completion c;
	struct pollfd pfd;
	struct devmem_uring *u;
	int c1, s1, c2, s2;

	if (tcp_pair(&c1, &s1) || tcp_pair(&c2, &s2))
		return t_skip("no loopback TCP here");
	CHECK_EQ(new_ring(&u, 2, 0), 0);
	CHECK_EQ(devmem_uring_submit(u, s1, b1, sizeof(b1), 0, 1), 0);
	CHECK_EQ(devmem_uring_submit(u, s2, b2, sizeof(b2), 0, 2), 0);
	CHECK_EQ(devmem_uring_submit(u, s2, b3, sizeof(b3), 0, 3), -EBUSY);
	CHECK(strstr(devmem_last_error(), "in flight"));
	CHECK_EQ(devmem_uring_inflight(u), 2);
	CHECK_EQ(devmem_uring_peek(u, &c), -EAGAIN);

	CHECK_EQ(write(c2, "second", 6), 6);
	pfd.fd = devmem_uring_fd(u);
	pfd.events = POLLIN;
	CHECK_EQ(poll(&pfd, 1, 10000), 1);
	CHECK(pfd.revents & POLLIN);
	CHECK_EQ(devmem_uring_peek(u, &c), 0);
	CHECK_EQ(c.user_data, 2);
	CHECK_EQ(c.ret, 6);
	CHECK(c.buf == b2 && !memcmp(b2, "second", 6));
	CHECK_EQ(devmem_uring_inflight(u), 1);

	/* The freed slot takes a request; MSG_DONTWAIT with nothing queued
	 * completes at once.
	 */
	CHECK_EQ(devmem_uring_submit(u, s2, b3, sizeof(b3), MSG_DONTWAIT, 3),
		 0);
	CHECK_EQ(devmem_uring_wait(u, &c), 0);
	CHECK_EQ(c.user_data, 3);
	CHECK_EQ(c.ret, -EAGAIN);

	/* Request 1 is still waiting for data: freeing cancels it. */
	CHECK_EQ(devmem_uring_submit(u, s2, b3, sizeof(b3), 0, 4), 0);
	CHECK_EQ(devmem_uring_inflight(u), 2);
	devmem_uring_free(u);
	/* nothing was consumed by the cancelled requests */
	CHECK_EQ(write(c1, "x", 1), 1);
	CHECK_EQ(read(s1, b1, sizeof(b1)), 1);
	CHECK_EQ(b1[0], 'x');
	close(c1);
	close(s1);
	close(c2);
	close(s2);
	return T_PASS;
}

/* Requests on several sockets at once: each completion names its own. */
static int test_many(void)
{
	enum { N = 8 };
	char bufs[N][32];
	struct devmem_uring_completion c;
	struct devmem_uring *u;
	int cfd[N], sfd[N], seen = 0, i;

	for (i = 0; i < N; i++)
		if (tcp_pair(&cfd[i], &sfd[i]))
			return t_skip("no loopback TCP here");
	CHECK_EQ(new_ring(&u, N, 0), 0);
	for (i = 0; i < N; i++)
		CHECK_EQ(devmem_uring_submit(u, sfd[i], bufs[i],
					     sizeof(bufs[i]), 0, 100 + i), 0);
	for (i = N - 1; i >= 0; i--)
		CHECK_EQ(write(cfd[i], &i, sizeof(i)), sizeof(i));
	while (devmem_uring_inflight(u)) {
		CHECK_EQ(devmem_uring_wait(u, &c), 0);
		CHECK(c.user_data >= 100 && c.user_data < 100 + N);
		i = c.user_data - 100;
		CHECK(!(seen & (1 << i)));
		seen |= 1 << i;
		CHECK_EQ(c.fd, sfd[i]);
		CHECK(c.buf == bufs[i]);
		CHECK_EQ(c.ret, sizeof(i));
		CHECK(!memcmp(bufs[i], &i, sizeof(i)));
	}
	CHECK_EQ(seen, (1 << N) - 1);
	devmem_uring_free(u);
	for (i = 0; i < N; i++) {
		close(cfd[i]);
		close(sfd[i]);
	}
	return T_PASS;
}

static int fake_ring(struct devmem_uring **u, unsigned int entries,
		     unsigned int frags, struct fake_sock *s)
{
	int err = new_ring(u, entries, frags);

	if (!err)
		devmem_uring_set_recvmsg(*u, fake_recvmsg, s);
	return err;
}

static int test_grow(void)
{
	struct fake_sock s = { .nr = 20, .frag_size = 4096, .min_slots = 5 };
	struct devmem_uring_completion c;
	struct devmem_uring *u;
	char buf[64];

	CHECK_EQ(fake_ring(&u, 2, 1, &s), 0);
	/* 1, 2 and 4 slots are refused, 8 take eight fragments: resubmitted
	 * through the ring without a completion in between.
	 */
	CHECK_EQ(devmem_uring_submit(u, 9, buf, sizeof(buf), 0, 42), 0);
	CHECK_EQ(devmem_uring_wait(u, &c), 0);
	CHECK_EQ(c.user_data, 42);
	CHECK_EQ(c.ret, 8 * 4096);
	CHECK(s.saw_devmem_flag);
	CHECK_EQ(s.toosmall, 3);
	CHECK_EQ(s.calls, 4);
	CHECK_EQ(c.rx.nr_frags, 8);
	CHECK_EQ(c.rx.dmabuf_bytes, 8 * 4096);
	CHECK_EQ(c.rx.host_bytes, 0);
	CHECK_EQ(c.rx.frags[7].token, 8);
	CHECK_EQ(c.rx.frags[7].dmabuf_id, 3);
	CHECK_EQ(devmem_uring_inflight(u), 0);

	/* The same slot (the last freed is taken first) stays grown. */
	CHECK_EQ(devmem_uring_submit(u, 9, buf, sizeof(buf), 0, 43), 0);
	CHECK_EQ(devmem_uring_wait(u, &c), 0);
	CHECK_EQ(c.ret, 8 * 4096);
	CHECK_EQ(s.calls, 5);
	CHECK_EQ(c.rx.frags[0].token, 9);
	devmem_uring_free(u);
	return T_PASS;
}

static int test_grow_bounded(void)
{
	struct fake_sock s = { .nr = 1, .frag_size = 4096,
			       .min_slots = DEVMEM_RX_MAX_FRAGS + 1 };
	struct devmem_uring_completion c;
	struct devmem_uring *u;
	char buf[64];

	CHECK_EQ(fake_ring(&u, 1, 1, &s), 0);
	CHECK_EQ(devmem_uring_submit(u, 9, buf, sizeof(buf), 0, 7), 0);
	CHECK_EQ(devmem_uring_wait(u, &c), 0);
	CHECK_EQ(c.user_data, 7);
	CHECK_EQ(c.ret, -EMSGSIZE);
	/* 1, 2, 4, ... DEVMEM_RX_MAX_FRAGS (2^16): seventeen tries. */
	CHECK_EQ(s.calls, 17);
	CHECK_EQ(s.next, 0);
	CHECK_EQ(c.rx.nr_frags, 0);
	CHECK_EQ(devmem_uring_inflight(u), 0);
	/* the slot is usable again */
	CHECK_EQ(devmem_uring_submit(u, 9, buf, sizeof(buf), 0, 8), 0);
	devmem_uring_free(u);
	return T_PASS;
}

/* Everything queued arrives exactly once, in order, in small bites; a
 * cmsg sum that does not match is -EPROTO.
 */
static int test_no_loss(void)
{
	struct fake_sock s = { .nr = 1000, .frag_size = 1000, .linear = 66 };
	struct devmem_uring_completion c;
	static char buf[16 * 66];
	struct devmem_uring *u;
	uint32_t expect = 1;
	uint64_t total = 0;
	size_t i;

	CHECK_EQ(fake_ring(&u, 4, 16, &s), 0);
	for (;;) {
		CHECK_EQ(devmem_uring_submit(u, 9, buf, sizeof(buf), 0, 0), 0);
		CHECK_EQ(devmem_uring_wait(u, &c), 0);
		if (c.ret <= 0)
			break;
		CHECK(c.rx.nr_frags >= 1 && c.rx.nr_frags <= 8);
		CHECK_EQ(c.rx.host_bytes, 66 * c.rx.nr_frags);
		CHECK_EQ(c.rx.dmabuf_bytes, 1000 * c.rx.nr_frags);
		CHECK_EQ((size_t)c.ret, c.rx.host_bytes + c.rx.dmabuf_bytes);
		CHECK(buf[0] == 'L');
		for (i = 0; i < c.rx.nr_frags; i++)
			CHECK_EQ(c.rx.frags[i].token, expect++);
		total += c.ret;
	}
	CHECK_EQ(c.ret, 0);
	CHECK_EQ(total, 1000 * (1000 + 66));
	CHECK_EQ(expect, 1001);
	CHECK_EQ(s.toosmall, 0);

	s.next = 0;
	s.bad_sum = 1;
	CHECK_EQ(devmem_uring_submit(u, 9, buf, sizeof(buf), 0, 0), 0);
	CHECK_EQ(devmem_uring_wait(u, &c), 0);
	CHECK_EQ(c.ret, -EPROTO);
	CHECK_EQ(c.rx.nr_frags, 0);
	devmem_uring_free(u);
	return T_PASS;
}

static const struct t_case cases[] = {
	{ "args", test_args },
	{ "stream", test_stream },
	{ "busy", test_busy },
	{ "many", test_many },
	{ "etoosmall-grows", test_grow },
	{ "etoosmall-bounded", test_grow_bounded },
	{ "no-loss", test_no_loss },
};

int main(void)
{
	struct devmem_uring *u;
	int err;

	err = devmem_uring_new(&u, 1, 0, 0);
	if (err == -ENOSYS || err == -EPERM)
		return t_skip("no io_uring here: %s", devmem_last_error());
	if (!err)
		devmem_uring_free(u);
	return T_RUN(cases);
}
