// SPDX-License-Identifier: GPL-2.0
/*
 * devmem_uring: the io_uring receive. On real loopback TCP connections
 * (the host's data is readable, so MSG_SOCK_DEVMEM just copies and no
 * cmsg comes): a stream checked byte by byte, end of stream, completions
 * routed to their requests, -EBUSY with every request in flight,
 * MSG_DONTWAIT, the ring's fd, freeing a ring with requests in flight.
 * Against the fake socket (fake-sock.h) behind the library's recvmsg
 * hook, each request going through the ring as a NOP: ETOOSMALL growth
 * and its bound, nothing lost over many requests. A completion filled
 * only as far as the caller's size says. A recycler linked to a socket's
 * receives flushes before a wait or an EAGAIN, only while the socket has
 * a request in flight.
 *
 * devmem_urecv, a request on a ring the test owns (liburing directly):
 * the SQE it fills and what it leaves alone; completions the test makes
 * itself, the request's msghdr written as the kernel writes it (by the
 * fake socket): ETOOSMALL, its growth and bound, errors with their
 * reasons, segments in stream order; through the test's ring with the
 * fake socket behind the hook, the caller's links and user_data kept:
 * growth and resubmission, host bytes and fragments in order; on
 * loopback TCP: a plain stream checked byte by byte, two sockets at once,
 * MSG_DONTWAIT, a cancelled request, a descriptor that is no socket.
 * Skips only where io_uring itself is unavailable (ENOSYS, EPERM).
 */
#include "internal.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../selftests/progs/lib/pattern.h"
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
	struct devmem_uring_completion c = { .size = sizeof(c) };
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
	CHECK(strstr(devmem_last_error(), "no ring"));
	CHECK(devmem_uring_fd(u) >= 0);
	CHECK_EQ(*devmem_last_error(), '\0');
	CHECK_EQ(devmem_uring_inflight(NULL), 0);
	/* a socket that is not one: the kernel's error, in the completion */
	CHECK_EQ(devmem_uring_submit(u, devmem_uring_fd(u), buf, sizeof(buf),
				     0, 5), 0);
	CHECK_EQ(devmem_uring_wait(u, &c), 0);
	CHECK_EQ(c.user_data, 5);
	CHECK_EQ(c.ret, -ENOTSOCK);
	CHECK(strstr(devmem_last_error(), "recvmsg: "));
	CHECK_EQ(c.rx.nr_frags, 0);
	devmem_uring_free(u);
	devmem_uring_free(NULL);
	return T_PASS;
}

/* c.size: too small is refused before anything is reaped; the library
 * writes no further than it says, for an older or a newer caller.
 */
static int test_completion_size(void)
{
	struct {
		struct devmem_uring_completion c;
		unsigned char tail[32];
	} big;
	struct devmem_uring_completion c;
	struct devmem_uring *u;
	const unsigned char *p;
	size_t i, old;
	char buf[8];
	int cfd, sfd;

	if (tcp_pair(&cfd, &sfd))
		return t_skip("no loopback TCP here");
	CHECK_EQ(new_ring(&u, 1, 0), 0);
	CHECK_EQ(write(cfd, "abcdefgh", 8), 8);
	CHECK_EQ(devmem_uring_submit(u, sfd, buf, 4, 0, 1), 0);
	memset(&c, 0xaa, sizeof(c));
	c.size = offsetof(struct devmem_uring_completion, rx);
	CHECK_EQ(devmem_uring_wait(u, &c), -EINVAL);
	CHECK(strstr(devmem_last_error(), "size"));
	CHECK_EQ(c.user_data, 0xaaaaaaaaaaaaaaaaULL);
	CHECK_EQ(devmem_uring_inflight(u), 1);

	/* The first version's rx ends with its flags. */
	old = offsetof(struct devmem_uring_completion, rx) +
	      offsetof(struct devmem_rx_result, flags) + sizeof(unsigned int);
	c.size = old;
	CHECK_EQ(devmem_uring_wait(u, &c), 0);
	CHECK_EQ(c.size, old);
	CHECK_EQ(c.user_data, 1);
	CHECK_EQ(c.ret, 4);
	CHECK_EQ(c.rx.size, old - offsetof(struct devmem_uring_completion, rx));
	CHECK_EQ(c.rx.nr_segs, 1);
	CHECK_EQ(c.rx.flags, DEVMEM_RX_PLAIN);
	for (p = (const unsigned char *)&c + old; p < (const unsigned char *)(&c + 1); p++)
		CHECK_EQ(*p, 0xaa);

	/* A caller that knows a larger struct. */
	memset(&big, 0xaa, sizeof(big));
	big.c.size = sizeof(big);
	CHECK_EQ(devmem_uring_submit(u, sfd, buf, 4, 0, 2), 0);
	CHECK_EQ(devmem_uring_wait(u, &big.c), 0);
	CHECK_EQ(big.c.size, sizeof(big));
	CHECK_EQ(big.c.ret, 4);
	CHECK(!memcmp(buf, "efgh", 4));
	CHECK_EQ(big.c.rx.host_bytes, 4);
	for (i = 0; i < sizeof(big.tail); i++)
		CHECK_EQ(big.tail[i], 0xaa);
	devmem_uring_free(u);
	close(cfd);
	close(sfd);
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
	struct devmem_uring_completion c = { .size = sizeof(c) };
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
	struct devmem_uring_completion c = { .size = sizeof(c) };
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
	CHECK_EQ(*devmem_last_error(), '\0');
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
	struct devmem_uring_completion c = { .size = sizeof(c) };
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
	struct devmem_uring_completion c = { .size = sizeof(c) };
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
	struct devmem_uring_completion c = { .size = sizeof(c) };
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
	struct devmem_uring_completion c = { .size = sizeof(c) };
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

/*
 * devmem_urecv: a request on the test's own ring
 */

#define URECV_USER_DATA	0x5eedULL

static struct msghdr *sqe_msg(const struct io_uring_sqe *sqe)
{
	return (struct msghdr *)(uintptr_t)sqe->addr;
}

/* @cqe as the kernel posts the completion of result @res. */
static void cqe_set(struct io_uring_cqe *cqe, int res)
{
	memset(cqe, 0, sizeof(*cqe));
	cqe->user_data = URECV_USER_DATA;
	cqe->res = res;
}

static int test_urecv_args(void)
{
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct io_uring_sqe sqe, before;
	struct io_uring_cqe cqe;
	struct devmem_urecv *r;
	struct msghdr *msg;
	char buf[64];

	CHECK_EQ(devmem_urecv_new(NULL, 0, 0), -EINVAL);
	CHECK(strstr(devmem_last_error(), "result"));
	CHECK_EQ(devmem_urecv_new(&r, 0, 1U << 9), -EINVAL);
	CHECK(strstr(devmem_last_error(), "cmsg flags"));
	CHECK_EQ(devmem_urecv_new(&r, 0, DEVMEM_CMSG_SKIP_OTHER), 0);
	CHECK_EQ(*devmem_last_error(), '\0');

	memset(&sqe, 0x5a, sizeof(sqe));
	before = sqe;
	CHECK_EQ(devmem_urecv_prep(NULL, &sqe, 3, buf, sizeof(buf), 0), -EINVAL);
	CHECK_EQ(devmem_urecv_prep(r, NULL, 3, buf, sizeof(buf), 0), -EINVAL);
	CHECK(strstr(devmem_last_error(), "SQE"));
	CHECK_EQ(devmem_urecv_prep(r, &sqe, 3, NULL, 1, 0), -EINVAL);
	CHECK(strstr(devmem_last_error(), "buffer"));
	CHECK_EQ(devmem_urecv_prep(r, &sqe, -1, buf, sizeof(buf), 0), -EBADF);
	CHECK(!memcmp(&sqe, &before, sizeof(sqe)));
	cqe_set(&cqe, 0);
	CHECK_EQ(devmem_urecv_complete(r, &cqe, &res), -EINVAL);
	CHECK(strstr(devmem_last_error(), "no receive prepared"));
	CHECK_EQ(devmem_urecv_complete(NULL, &cqe, &res), -EINVAL);
	CHECK_EQ(devmem_urecv_complete(r, NULL, &res), -EINVAL);
	CHECK_EQ(devmem_urecv_complete(r, &cqe, NULL), -EINVAL);

	/* What goes to the kernel: the caller's user_data stays. */
	sqe.user_data = URECV_USER_DATA;
	CHECK_EQ(devmem_urecv_prep(r, &sqe, 3, buf, sizeof(buf), MSG_DONTWAIT),
		 0);
	CHECK_EQ(*devmem_last_error(), '\0');
	CHECK_EQ(sqe.opcode, IORING_OP_RECVMSG);
	CHECK_EQ(sqe.fd, 3);
	CHECK_EQ(sqe.flags, 0);
	CHECK_EQ(sqe.len, 1);
	CHECK_EQ(sqe.msg_flags, MSG_SOCK_DEVMEM | MSG_DONTWAIT);
	CHECK_EQ(sqe.user_data, URECV_USER_DATA);
	msg = sqe_msg(&sqe);
	CHECK(msg && msg->msg_iovlen == 1);
	CHECK(msg->msg_iov[0].iov_base == buf);
	CHECK_EQ(msg->msg_iov[0].iov_len, sizeof(buf));
	CHECK(msg->msg_control);
	CHECK_EQ(msg->msg_controllen, 128 * SLOT);

	/* In flight: no second prep; a result struct too small is refused
	 * and leaves it in flight.
	 */
	before = sqe;
	CHECK_EQ(devmem_urecv_prep(r, &sqe, 4, buf, sizeof(buf), 0), -EBUSY);
	CHECK(strstr(devmem_last_error(), "in flight"));
	CHECK(!memcmp(&sqe, &before, sizeof(sqe)));
	res.size = offsetof(struct devmem_rx_result, flags);
	CHECK_EQ(devmem_urecv_complete(r, &cqe, &res), -EINVAL);
	CHECK(strstr(devmem_last_error(), "size"));
	res.size = sizeof(res);
	cqe_set(&cqe, -EAGAIN);
	CHECK_EQ(devmem_urecv_complete(r, &cqe, &res), -EAGAIN);
	CHECK(strstr(devmem_last_error(), "recvmsg: "));
	CHECK_EQ(res.size, sizeof(res));
	CHECK_EQ(res.nr_segs, 0);
	/* completed: not twice */
	CHECK_EQ(devmem_urecv_complete(r, &cqe, &res), -EINVAL);
	devmem_urecv_free(r);
	devmem_urecv_free(NULL);
	return T_PASS;
}

/*
 * Completions the test makes, after the fake socket wrote the request's
 * msghdr as the kernel would: ETOOSMALL grows the buffer (a larger one in
 * the next SQE) until the first cmsg fits; then the segments in the
 * stream's order; end of stream; the kernel's errors.
 */
static int test_urecv_synthetic(void)
{
	struct fake_sock s = { .nr = 4, .frag_size = 1000, .linear = 66,
			       .min_slots = 8 };
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct io_uring_sqe sqe;
	struct io_uring_cqe cqe;
	struct devmem_urecv *r;
	struct msghdr *msg;
	unsigned int slots;
	static char buf[4096];
	ssize_t ret;
	size_t i;

	CHECK_EQ(devmem_urecv_new(&r, 2, 0), 0);
	for (slots = 2; slots < 8; slots *= 2) {
		memset(&sqe, 0, sizeof(sqe));
		CHECK_EQ(devmem_urecv_prep(r, &sqe, 9, buf, sizeof(buf), 0), 0);
		msg = sqe_msg(&sqe);
		CHECK_EQ(msg->msg_controllen, slots * SLOT);
		cqe_set(&cqe, fake_recvmsg(9, msg, sqe.msg_flags, &s));
		CHECK_EQ(cqe.res, -ETOOSMALL);
		res.nr_segs = 99;
		CHECK_EQ(devmem_urecv_complete(r, &cqe, &res),
			 DEVMEM_URECV_RESUBMIT);
		CHECK_EQ(*devmem_last_error(), '\0');
		CHECK_EQ(res.nr_segs, 0);
	}
	CHECK_EQ(devmem_urecv_prep(r, &sqe, 9, buf, sizeof(buf), 0), 0);
	msg = sqe_msg(&sqe);
	CHECK_EQ(msg->msg_controllen, 8 * SLOT);
	cqe_set(&cqe, fake_recvmsg(9, msg, sqe.msg_flags, &s));
	CHECK(s.saw_devmem_flag);
	ret = devmem_urecv_complete(r, &cqe, &res);
	/* eight cmsgs: four skbs, linear bytes before each fragment */
	CHECK_EQ(ret, 4 * (66 + 1000));
	CHECK_EQ(*devmem_last_error(), '\0');
	CHECK_EQ(res.nr_segs, 8);
	CHECK_EQ(res.nr_frags, 4);
	CHECK_EQ(res.host_bytes, 4 * 66);
	CHECK_EQ(res.dmabuf_bytes, 4 * 1000);
	CHECK_EQ(res.flags, 0);
	for (i = 0; i < 8; i++) {
		const struct devmem_seg *seg = &res.segs[i];

		if (i % 2 == 0) {
			CHECK_EQ(seg->type, DEVMEM_SEG_HOST);
			CHECK_EQ(seg->len, 66);
			CHECK(seg->host == buf + i / 2 * 66);
			CHECK(!memcmp(seg->host, "LLLL", 4));
		} else {
			CHECK_EQ(seg->type, DEVMEM_SEG_DMABUF);
			CHECK_EQ(seg->len, 1000);
			CHECK_EQ(seg->frag.token, i / 2 + 1);
			CHECK_EQ(seg->frag.offset, i / 2 * 4096);
			CHECK_EQ(seg->frag.dmabuf_id, 3);
			CHECK(!memcmp(&seg->frag, &res.frags[i / 2],
				      sizeof(seg->frag)));
		}
	}

	/* What the kernel says as it is, with a reason. */
	CHECK_EQ(devmem_urecv_prep(r, &sqe, 9, buf, sizeof(buf), 0), 0);
	cqe_set(&cqe, fake_recvmsg(9, sqe_msg(&sqe), sqe.msg_flags, &s));
	CHECK_EQ(cqe.res, 0);
	CHECK_EQ(devmem_urecv_complete(r, &cqe, &res), 0);
	CHECK_EQ(res.nr_segs, 0);
	CHECK_EQ(devmem_urecv_prep(r, &sqe, 9, buf, sizeof(buf), 0), 0);
	cqe_set(&cqe, -ECONNRESET);
	CHECK_EQ(devmem_urecv_complete(r, &cqe, &res), -ECONNRESET);
	CHECK(strstr(devmem_last_error(), "recvmsg: "));

	/* Control data the kernel truncated. */
	s.next = 0;
	CHECK_EQ(devmem_urecv_prep(r, &sqe, 9, buf, sizeof(buf), 0), 0);
	msg = sqe_msg(&sqe);
	cqe_set(&cqe, fake_recvmsg(9, msg, sqe.msg_flags, &s));
	msg->msg_flags |= MSG_CTRUNC;
	CHECK_EQ(devmem_urecv_complete(r, &cqe, &res), -EBADMSG);
	CHECK(strstr(devmem_last_error(), "MSG_CTRUNC"));
	CHECK_EQ(res.nr_segs, 0);
	devmem_urecv_free(r);

	/* The largest buffer still too small: -EMSGSIZE, no resubmission. */
	CHECK_EQ(devmem_urecv_new(&r, DEVMEM_RX_MAX_FRAGS, 0), 0);
	CHECK_EQ(devmem_urecv_prep(r, &sqe, 9, buf, sizeof(buf), 0), 0);
	CHECK_EQ(sqe_msg(&sqe)->msg_controllen,
		 (size_t)DEVMEM_RX_MAX_FRAGS * SLOT);
	cqe_set(&cqe, -ETOOSMALL);
	CHECK_EQ(devmem_urecv_complete(r, &cqe, &res), -EMSGSIZE);
	CHECK(strstr(devmem_last_error(), "control buffer"));
	CHECK_EQ(devmem_urecv_prep(r, &sqe, 9, buf, sizeof(buf), 0), 0);
	devmem_urecv_free(r);
	return T_PASS;
}

static int own_ring(struct io_uring *ring, unsigned int entries)
{
	return io_uring_queue_init(entries, ring, 0);
}

/*
 * One receive of @r on the test's @ring as an application would: prep,
 * the caller's user_data and a NOP linked after it, submit, reap both.
 * Returns what devmem_urecv_complete() returned, in *@ret.
 */
static int ring_recv(struct io_uring *ring, struct devmem_urecv *r, int fd,
		     void *buf, size_t len, int flags,
		     struct devmem_rx_result *res, ssize_t *ret)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int seen = 0;

	sqe = io_uring_get_sqe(ring);
	CHECK(sqe);
	CHECK_EQ(devmem_urecv_prep(r, sqe, fd, buf, len, flags), 0);
	io_uring_sqe_set_data64(sqe, URECV_USER_DATA);
	sqe->flags |= IOSQE_IO_LINK;
	sqe = io_uring_get_sqe(ring);
	CHECK(sqe);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, URECV_USER_DATA + 1);
	CHECK_EQ(io_uring_submit(ring), 2);
	while (seen != 3) {
		CHECK_EQ(io_uring_wait_cqe(ring, &cqe), 0);
		if (cqe->user_data == URECV_USER_DATA) {
			CHECK(!(seen & 1));
			*ret = devmem_urecv_complete(r, cqe, res);
			seen |= 1;
		} else {
			/* a link that failed ends the NOP as well */
			CHECK_EQ(cqe->user_data, URECV_USER_DATA + 1);
			CHECK(cqe->res == 0 || cqe->res == -ECANCELED);
			CHECK(seen & 1);
			seen |= 2;
		}
		io_uring_cqe_seen(ring, cqe);
	}
	return T_PASS;
}

/* The fake socket behind the hook, through the test's ring: ETOOSMALL
 * resubmitted by the caller until the buffer fits, then segments in
 * order; the bound; nothing lost.
 */
static int test_urecv_ring_fake(void)
{
	struct fake_sock s = { .nr = 20, .frag_size = 4096, .linear = 100,
			       .min_slots = 5 };
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct devmem_urecv *r;
	struct io_uring ring;
	static char buf[16 * 100];
	unsigned int resubmits = 0;
	uint32_t expect = 1;
	ssize_t ret;
	size_t i;

	CHECK_EQ(own_ring(&ring, 4), 0);
	CHECK_EQ(devmem_urecv_new(&r, 1, 0), 0);
	devmem_urecv_set_recvmsg(r, fake_recvmsg, &s);
	for (;;) {
		if (ring_recv(&ring, r, 9, buf, sizeof(buf), 0, &res, &ret))
			return T_FAIL;
		if (ret == DEVMEM_URECV_RESUBMIT) {
			resubmits++;
			continue;
		}
		if (ret <= 0)
			break;
		/* 8 slots: four skbs of linear bytes and a fragment */
		CHECK_EQ(res.nr_frags, 4);
		CHECK_EQ(res.nr_segs, 8);
		CHECK_EQ(ret, 4 * (100 + 4096));
		for (i = 0; i < res.nr_segs; i++) {
			CHECK_EQ(res.segs[i].type, i % 2 ? DEVMEM_SEG_DMABUF :
							   DEVMEM_SEG_HOST);
			if (i % 2)
				CHECK_EQ(res.segs[i].frag.token, expect++);
			else
				CHECK(res.segs[i].host == buf + i / 2 * 100);
		}
	}
	CHECK_EQ(ret, 0);
	CHECK_EQ(expect, 21);
	/* 1, 2 and 4 slots refused, once each: the buffer stays grown */
	CHECK_EQ(resubmits, 3);
	CHECK_EQ(s.toosmall, 3);
	CHECK_EQ(s.calls, 3 + 5 + 1);
	devmem_urecv_free(r);

	/* Never more than DEVMEM_RX_MAX_FRAGS: 1, 2, ... 2^16 slots. */
	s = (struct fake_sock){ .nr = 1, .frag_size = 4096,
				.min_slots = DEVMEM_RX_MAX_FRAGS + 1 };
	CHECK_EQ(devmem_urecv_new(&r, 1, 0), 0);
	devmem_urecv_set_recvmsg(r, fake_recvmsg, &s);
	resubmits = 0;
	do {
		if (ring_recv(&ring, r, 9, buf, sizeof(buf), 0, &res, &ret))
			return T_FAIL;
	} while (ret == DEVMEM_URECV_RESUBMIT && ++resubmits < 100);
	CHECK_EQ(ret, -EMSGSIZE);
	CHECK_EQ(resubmits, 16);
	CHECK_EQ(s.calls, 17);
	CHECK_EQ(s.next, 0);

	/* cmsgs that do not add up */
	s = (struct fake_sock){ .nr = 1, .frag_size = 4096, .bad_sum = 1 };
	if (ring_recv(&ring, r, 9, buf, sizeof(buf), 0, &res, &ret))
		return T_FAIL;
	CHECK_EQ(ret, -EPROTO);
	CHECK(strstr(devmem_last_error(), "account for"));
	devmem_urecv_free(r);
	io_uring_queue_exit(&ring);
	return T_PASS;
}

/* Real sockets: plain data (no cmsgs) is one host segment. */
static int test_urecv_ring_tcp(void)
{
	static uint8_t buf[65536];
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct writer w = { .bytes = STREAM_BYTES };
	struct devmem_urecv *r;
	struct io_uring ring;
	uint64_t off = 0;
	pthread_t thread;
	ssize_t ret;
	int sfd;

	if (tcp_pair(&w.fd, &sfd))
		return t_skip("no loopback TCP here");
	CHECK_EQ(own_ring(&ring, 4), 0);
	CHECK_EQ(devmem_urecv_new(&r, 0, 0), 0);
	CHECK_EQ(pthread_create(&thread, NULL, write_stream, &w), 0);
	for (;;) {
		if (ring_recv(&ring, r, sfd, buf, sizeof(buf), 0, &res, &ret))
			return T_FAIL;
		if (ret <= 0)
			break;
		CHECK_EQ(res.flags, DEVMEM_RX_PLAIN);
		CHECK_EQ(res.nr_segs, 1);
		CHECK_EQ(res.segs[0].type, DEVMEM_SEG_HOST);
		CHECK(res.segs[0].host == buf);
		CHECK_EQ(res.segs[0].len, ret);
		CHECK_EQ(res.host_bytes, ret);
		CHECK_EQ(res.nr_frags, 0);
		CHECK_EQ(pattern_check(SEED_BASE, off, buf, ret), ret);
		off += ret;
	}
	CHECK_EQ(ret, 0);	/* end of stream */
	CHECK_EQ(off, STREAM_BYTES);
	CHECK_EQ(pthread_join(thread, NULL), 0);
	CHECK_EQ(w.err, 0);
	close(sfd);
	devmem_urecv_free(r);
	io_uring_queue_exit(&ring);
	return T_PASS;
}

/*
 * Two requests in flight on two sockets, each completion routed by the
 * caller's user_data; MSG_DONTWAIT; a request cancelled through the ring
 * can be prepared again; the kernel's error for a descriptor that is no
 * socket.
 */
static int test_urecv_ring_many(void)
{
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct devmem_urecv *r[2];
	struct io_uring ring;
	char buf[2][16];
	int cfd[2], sfd[2], seen = 0, i;
	ssize_t ret;

	if (tcp_pair(&cfd[0], &sfd[0]) || tcp_pair(&cfd[1], &sfd[1]))
		return t_skip("no loopback TCP here");
	CHECK_EQ(own_ring(&ring, 8), 0);
	for (i = 0; i < 2; i++) {
		CHECK_EQ(devmem_urecv_new(&r[i], 0, 0), 0);
		sqe = io_uring_get_sqe(&ring);
		CHECK_EQ(devmem_urecv_prep(r[i], sqe, sfd[i], buf[i],
					   sizeof(buf[i]), 0), 0);
		io_uring_sqe_set_data64(sqe, 10 + i);
	}
	CHECK_EQ(io_uring_submit(&ring), 2);
	CHECK_EQ(write(cfd[1], "one", 3), 3);
	CHECK_EQ(write(cfd[0], "zero", 4), 4);
	while (seen != 3) {
		CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0);
		i = (int)cqe->user_data - 10;
		CHECK(i == 0 || i == 1);
		CHECK(!(seen & (1 << i)));
		seen |= 1 << i;
		ret = devmem_urecv_complete(r[i], cqe, &res);
		io_uring_cqe_seen(&ring, cqe);
		CHECK_EQ(ret, i ? 3 : 4);
		CHECK(res.segs[0].host == buf[i]);
		CHECK(!memcmp(buf[i], i ? "one" : "zero", ret));
	}

	/* Nothing to read. */
	if (ring_recv(&ring, r[0], sfd[0], buf[0], sizeof(buf[0]),
		      MSG_DONTWAIT, &res, &ret))
		return T_FAIL;
	CHECK_EQ(ret, -EAGAIN);

	/* Waiting for data, then cancelled: the same request goes again
	 * and nothing was consumed.
	 */
	sqe = io_uring_get_sqe(&ring);
	CHECK_EQ(devmem_urecv_prep(r[0], sqe, sfd[0], buf[0], sizeof(buf[0]),
				   0), 0);
	io_uring_sqe_set_data64(sqe, 10);
	CHECK_EQ(io_uring_submit(&ring), 1);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_cancel64(sqe, 10, 0);
	io_uring_sqe_set_data64(sqe, 20);
	CHECK_EQ(io_uring_submit(&ring), 1);
	for (seen = 0; seen != 3;) {
		CHECK_EQ(io_uring_wait_cqe(&ring, &cqe), 0);
		if (cqe->user_data == 20) {
			CHECK_EQ(cqe->res, 0);
			seen |= 2;
		} else {
			CHECK_EQ(cqe->user_data, 10);
			CHECK_EQ(devmem_urecv_complete(r[0], cqe, &res),
				 -ECANCELED);
			seen |= 1;
		}
		io_uring_cqe_seen(&ring, cqe);
	}
	CHECK_EQ(write(cfd[0], "again", 5), 5);
	if (ring_recv(&ring, r[0], sfd[0], buf[0], sizeof(buf[0]), 0, &res,
		      &ret))
		return T_FAIL;
	CHECK_EQ(ret, 5);
	CHECK(!memcmp(buf[0], "again", 5));

	if (ring_recv(&ring, r[1], ring.ring_fd, buf[1], sizeof(buf[1]), 0,
		      &res, &ret))
		return T_FAIL;
	CHECK_EQ(ret, -ENOTSOCK);
	CHECK(strstr(devmem_last_error(), "recvmsg: "));
	for (i = 0; i < 2; i++) {
		devmem_urecv_free(r[i]);
		close(cfd[i]);
		close(sfd[i]);
	}
	io_uring_queue_exit(&ring);
	return T_PASS;
}

/*
 * A recycler linked to the ring's receives on its socket: the fake
 * SO_DEVMEM_DONTNEED below is the only thing that makes data arrive, so
 * a wait that did not flush first would never end.
 */
struct link_fake {
	int peer;	/* written to when tokens come back; -1: none */
	int calls;
	int tokens;
	int fail;	/* answer this -errno */
};

static int link_dontneed(int fd, const struct dmabuf_token *ranges,
			 unsigned int nr, void *arg)
{
	struct link_fake *f = arg;
	unsigned int i;
	int n = 0;

	(void)fd;
	f->calls++;
	if (f->fail)
		return f->fail;
	for (i = 0; i < nr; i++)
		n += ranges[i].token_count;
	f->tokens += n;
	if (f->peer >= 0 && write(f->peer, "go", 2) != 2)
		return -EIO;
	return n;
}

static int test_recycler_link(void)
{
	struct devmem_uring_completion c = { .size = sizeof(c) };
	struct link_fake f1 = { .peer = -1 }, f2 = { .peer = -1 };
	struct devmem_recycler *rc1, *rc2;
	struct devmem_uring *u;
	char b1[16], b2[16], want[96];
	int c1, s1, c2, s2;

	if (tcp_pair(&c1, &s1) || tcp_pair(&c2, &s2))
		return t_skip("no loopback TCP here");
	/* a wait that does not flush would never end: end the test */
	alarm(20);
	f1.peer = c1;
	CHECK_EQ(new_ring(&u, 4, 0), 0);
	CHECK_EQ(devmem_recycler_new(&rc1, s1, 0), 0);
	CHECK_EQ(devmem_recycler_new(&rc2, s2, 0), 0);
	devmem_recycler_set_dontneed(rc1, link_dontneed, &f1);
	devmem_recycler_set_dontneed(rc2, link_dontneed, &f2);

	CHECK_EQ(devmem_uring_set_recycler(NULL, s1, rc1), -EINVAL);
	CHECK_EQ(devmem_uring_set_recycler(u, -1, rc1), -EBADF);
	CHECK_EQ(devmem_uring_set_recycler(u, s2, rc1), -EINVAL);
	snprintf(want, sizeof(want), "the recycler hands tokens back to fd %d, not fd %d",
		 s1, s2);
	CHECK_EQ(strcmp(devmem_last_error(), want), 0);
	/* unlinking what was never linked is no error */
	CHECK_EQ(devmem_uring_set_recycler(u, s2, NULL), 0);

	CHECK_EQ(devmem_recycler_add(rc1, 5), 0);
	CHECK_EQ(devmem_recycler_add(rc1, 6), 0);
	CHECK_EQ(devmem_recycler_add(rc2, 7), 0);
	CHECK_EQ(devmem_uring_set_recycler(u, s1, rc1), 0);
	CHECK_EQ(devmem_uring_set_recycler(u, s2, rc2), 0);
	CHECK_EQ(*devmem_last_error(), '\0');

	/* only s1 has a request in flight: its tokens go back, s2's stay */
	CHECK_EQ(devmem_uring_submit(u, s1, b1, sizeof(b1), 0, 1), 0);
	CHECK_EQ(devmem_uring_wait(u, &c), 0);
	CHECK_EQ(c.user_data, 1);
	CHECK_EQ(c.ret, 2);
	CHECK_EQ(f1.calls, 1);
	CHECK_EQ(f1.tokens, 2);
	CHECK_EQ(devmem_recycler_get_stats(rc1)->pending, 0);
	CHECK_EQ(f2.calls, 0);
	CHECK_EQ(devmem_recycler_get_stats(rc2)->pending, 1);

	/* a peek that would say EAGAIN flushes first */
	CHECK_EQ(devmem_uring_submit(u, s2, b2, sizeof(b2), 0, 2), 0);
	CHECK_EQ(devmem_uring_peek(u, &c), -EAGAIN);
	CHECK_EQ(f2.calls, 1);
	CHECK_EQ(devmem_recycler_get_stats(rc2)->pending, 0);
	/* nothing pending: no call */
	CHECK_EQ(devmem_uring_peek(u, &c), -EAGAIN);
	CHECK_EQ(f2.calls, 1);

	/* unlinked, the request in flight no longer flushes; linked again,
	 * it does
	 */
	CHECK_EQ(devmem_uring_set_recycler(u, s2, NULL), 0);
	CHECK_EQ(devmem_recycler_add(rc2, 8), 0);
	CHECK_EQ(devmem_uring_peek(u, &c), -EAGAIN);
	CHECK_EQ(f2.calls, 1);
	CHECK_EQ(devmem_uring_set_recycler(u, s2, rc2), 0);
	CHECK_EQ(devmem_uring_peek(u, &c), -EAGAIN);
	CHECK_EQ(f2.calls, 2);

	/* a failed flush fails the peek with its reason; the tokens stay */
	CHECK_EQ(devmem_recycler_add(rc2, 9), 0);
	f2.fail = -EIO;
	CHECK_EQ(devmem_uring_peek(u, &c), -EIO);
	snprintf(want, sizeof(want), "SO_DEVMEM_DONTNEED on fd %d, 1 tokens pending",
		 s2);
	CHECK(!strncmp(devmem_last_error(), want, strlen(want)));
	CHECK_EQ(devmem_recycler_get_stats(rc2)->pending, 1);
	f2.fail = 0;
	CHECK_EQ(devmem_uring_peek(u, &c), -EAGAIN);
	CHECK_EQ(devmem_recycler_get_stats(rc2)->pending, 0);

	CHECK_EQ(devmem_uring_set_recycler(u, s1, NULL), 0);
	CHECK_EQ(devmem_uring_set_recycler(u, s2, NULL), 0);
	alarm(0);
	devmem_uring_free(u);
	devmem_recycler_free(rc1);
	devmem_recycler_free(rc2);
	close(c1);
	close(s1);
	close(c2);
	close(s2);
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
	{ "completion-size", test_completion_size },
	{ "urecv-args", test_urecv_args },
	{ "urecv-synthetic", test_urecv_synthetic },
	{ "urecv-ring-fake", test_urecv_ring_fake },
	{ "urecv-ring-tcp", test_urecv_ring_tcp },
	{ "urecv-ring-many", test_urecv_ring_many },
	{ "recycler-link", test_recycler_link },
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
