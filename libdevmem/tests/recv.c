// SPDX-License-Identifier: GPL-2.0
/*
 * devmem_recv(): against a fake socket behind the library's recvmsg hook
 * (fake-sock.h), which queues device-memory fragments and behaves as the
 * kernel does (ETOOSMALL only when nothing fits, an early stop when the
 * control buffer fills), and on a real loopback TCP connection, whose
 * plain host data comes back without cmsgs.
 */
#include "internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake-sock.h"
#include "tcp.h"
#include "test.h"

static int new_rx(struct devmem_rx **rx, unsigned int frags,
		  struct fake_sock *s)
{
	int err = devmem_rx_new(rx, frags, 0);

	if (!err)
		devmem_rx_set_recvmsg(*rx, fake_recvmsg, s);
	return err;
}

static int test_grow(void)
{
	struct fake_sock s = { .nr = 20, .frag_size = 4096, .min_slots = 5 };
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct devmem_rx *rx;
	char buf[64];

	CHECK_EQ(new_rx(&rx, 1, &s), 0);
	/* 1, 2 and 4 slots are refused, 8 take eight fragments. */
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res), 8 * 4096);
	CHECK(s.saw_devmem_flag);
	CHECK_EQ(s.toosmall, 3);
	CHECK_EQ(s.calls, 4);
	CHECK_EQ(res.nr_frags, 8);
	CHECK_EQ(res.dmabuf_bytes, 8 * 4096);
	CHECK_EQ(res.host_bytes, 0);
	CHECK_EQ(res.frags[7].token, 8);
	CHECK_EQ(res.frags[7].dmabuf_id, 3);

	/* The buffer stays grown. */
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res), 8 * 4096);
	CHECK_EQ(s.calls, 5);
	CHECK_EQ(res.frags[0].token, 9);
	devmem_rx_free(rx);
	return T_PASS;
}

static int test_grow_bounded(void)
{
	struct fake_sock s = { .nr = 1, .frag_size = 4096,
			       .min_slots = DEVMEM_RX_MAX_FRAGS + 1 };
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct devmem_rx *rx;
	char buf[64];

	CHECK_EQ(new_rx(&rx, 1, &s), 0);
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res), -EMSGSIZE);
	/* 1, 2, 4, ... DEVMEM_RX_MAX_FRAGS (2^16): seventeen tries. */
	CHECK_EQ(s.calls, 17);
	CHECK_EQ(s.next, 0);
	CHECK_EQ(res.nr_frags, 0);
	devmem_rx_free(rx);
	return T_PASS;
}

/* Everything queued arrives exactly once, in order, in small bites. */
static int test_no_loss(void)
{
	struct fake_sock s = { .nr = 1000, .frag_size = 1000, .linear = 66 };
	struct devmem_rx_result res = { .size = sizeof(res) };
	uint32_t expect = 1;
	uint64_t total = 0;
	struct devmem_rx *rx;
	static char buf[16 * 66];
	ssize_t ret;
	size_t i;

	CHECK_EQ(new_rx(&rx, 16, &s), 0);
	while ((ret = devmem_recv(rx, 0, buf, sizeof(buf), 0, &res)) > 0) {
		CHECK(res.nr_frags >= 1 && res.nr_frags <= 8);
		CHECK_EQ(res.host_bytes, 66 * res.nr_frags);
		CHECK_EQ(res.dmabuf_bytes, 1000 * res.nr_frags);
		CHECK_EQ((size_t)ret, res.host_bytes + res.dmabuf_bytes);
		CHECK(buf[0] == 'L');
		for (i = 0; i < res.nr_frags; i++)
			CHECK_EQ(res.frags[i].token, expect++);
		total += ret;
	}
	CHECK_EQ(ret, 0);
	CHECK_EQ(total, 1000 * (1000 + 66));
	CHECK_EQ(expect, 1001);
	CHECK_EQ(s.toosmall, 0);
	devmem_rx_free(rx);
	return T_PASS;
}

/*
 * Linear bytes and fragments mixed in one receive: the segments give
 * them in stream order, host bytes packed from the buffer's start, and
 * the fragments alone come in the same order.
 */
static int test_order(void)
{
	struct fake_sock s = { .nr = 5, .frag_size = 1000, .linear = 66 };
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct devmem_rx *rx;
	char buf[1024];
	size_t i;

	CHECK_EQ(new_rx(&rx, 16, &s), 0);
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res),
		 5 * (66 + 1000));
	CHECK_EQ(res.nr_segs, 10);
	CHECK_EQ(res.nr_frags, 5);
	CHECK_EQ(res.host_bytes, 5 * 66);
	CHECK_EQ(res.dmabuf_bytes, 5 * 1000);
	CHECK_EQ(res.flags, 0);
	for (i = 0; i < 5; i++) {
		const struct devmem_seg *h = &res.segs[2 * i];
		const struct devmem_seg *d = &res.segs[2 * i + 1];

		CHECK_EQ(h->type, DEVMEM_SEG_HOST);
		CHECK_EQ(h->len, 66);
		CHECK(h->host == buf + 66 * i);
		CHECK_EQ(h->frag.size, 0);
		CHECK_EQ(d->type, DEVMEM_SEG_DMABUF);
		CHECK_EQ(d->len, 1000);
		CHECK(d->host == NULL);
		CHECK_EQ(d->frag.token, i + 1);
		CHECK_EQ(d->frag.offset, i * 4096);
		CHECK_EQ(d->frag.size, 1000);
		CHECK_EQ(d->frag.dmabuf_id, 3);
		CHECK_EQ(res.frags[i].token, d->frag.token);
	}
	devmem_rx_free(rx);
	return T_PASS;
}

static int test_errors(void)
{
	struct fake_sock s = { .nr = 4, .frag_size = 4096, .force = -EAGAIN };
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct devmem_rx *rx;
	char buf[64];

	CHECK_EQ(new_rx(&rx, 4, &s), 0);
	memset(&res, 0xff, sizeof(res));
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res), -EAGAIN);
	CHECK_EQ(res.nr_frags, 0);
	CHECK(res.frags == NULL);

	/* Fragments adding up to more, or less, than recvmsg returned. */
	s.force = 0;
	s.bad_sum = -1;
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res), -EPROTO);
	s.next = 0;
	s.bad_sum = 1;
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res), -EPROTO);

	CHECK_EQ(devmem_recv(NULL, 0, buf, sizeof(buf), 0, &res), -EINVAL);
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, NULL), -EINVAL);
	/* A result without its size, or of less than the first version. */
	s.next = 0;
	s.bad_sum = 0;
	res.size = 0;
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res), -EINVAL);
	res.size = offsetof(struct devmem_rx_result, flags);
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res), -EINVAL);
	CHECK_EQ(s.next, 0);
	res.size = sizeof(res);
	CHECK_EQ(devmem_recv(rx, 0, NULL, 1, 0, &res), -EINVAL);
	CHECK_EQ(devmem_rx_new(&rx, 1, 1U << 9), -EINVAL);
	devmem_rx_free(rx);
	devmem_rx_free(NULL);
	return T_PASS;
}

/*
 * A socket for devmem_rx_set_recycler(): @queued bytes are there at once,
 * @later arrive only for a call that waits. Every call and every
 * SO_DEVMEM_DONTNEED goes into @log in order: 'r' a call that does not
 * wait, 'R' one that waits, 'd' a flush.
 */
struct wait_sock {
	size_t queued, later;
	int dontneed_err;
	char log[16];
	size_t n;
};

static void wait_log(struct wait_sock *w, char c)
{
	if (w->n + 1 < sizeof(w->log))
		w->log[w->n++] = c;
}

static void wait_log_clear(struct wait_sock *w)
{
	w->n = 0;
	memset(w->log, 0, sizeof(w->log));
}

static ssize_t wait_recvmsg(int fd, struct msghdr *msg, int flags, void *arg)
{
	struct wait_sock *w = arg;
	size_t *from = &w->queued, n;

	(void)fd;
	wait_log(w, flags & MSG_DONTWAIT ? 'r' : 'R');
	msg->msg_controllen = 0;
	msg->msg_flags = 0;
	if (!w->queued) {
		if (flags & MSG_DONTWAIT || !w->later)
			return -EAGAIN;
		from = &w->later;
	}
	n = *from;
	if (n > msg->msg_iov[0].iov_len)
		n = msg->msg_iov[0].iov_len;
	memset(msg->msg_iov[0].iov_base, 'h', n);
	*from -= n;
	return (ssize_t)n;
}

static int wait_dontneed(int fd, const struct dmabuf_token *ranges,
			 unsigned int nr, void *arg)
{
	struct wait_sock *w = arg;
	unsigned int i;
	int freed = 0;

	(void)fd;
	wait_log(w, 'd');
	if (w->dontneed_err)
		return w->dontneed_err;
	for (i = 0; i < nr; i++)
		freed += (int)ranges[i].token_count;
	return freed;
}

static int test_recycler(void)
{
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct wait_sock w = { 0 };
	struct devmem_recycler *rc;
	struct devmem_rx *rx;
	char buf[64];

	CHECK_EQ(devmem_rx_new(&rx, 0, 0), 0);
	devmem_rx_set_recvmsg(rx, wait_recvmsg, &w);
	CHECK_EQ(devmem_recycler_new(&rc, 3, 0), 0);
	devmem_recycler_set_dontneed(rc, wait_dontneed, &w);
	CHECK_EQ(devmem_rx_set_recycler(rx, rc), 0);

	/* Nothing pending: the call waits at once. */
	w.later = 5;
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res), 5);
	CHECK(!strcmp(w.log, "R"));

	/* Pending and data queued: the look finds it, nothing is flushed. */
	CHECK_EQ(devmem_recycler_add(rc, 7), 0);
	CHECK_EQ(devmem_recycler_add(rc, 8), 0);
	wait_log_clear(&w);
	w.queued = 3;
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res), 3);
	CHECK(!strcmp(w.log, "r"));
	CHECK_EQ(devmem_recycler_get_stats(rc)->pending, 2);

	/* Pending, nothing queued: look, flush, then wait. */
	wait_log_clear(&w);
	w.later = 4;
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res), 4);
	CHECK(!strcmp(w.log, "rdR"));
	CHECK_EQ(devmem_recycler_get_stats(rc)->pending, 0);
	CHECK_EQ(devmem_recycler_get_stats(rc)->freed, 2);

	/* A caller that does not wait gets -EAGAIN after the flush. */
	CHECK_EQ(devmem_recycler_add(rc, 9), 0);
	wait_log_clear(&w);
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), MSG_DONTWAIT, &res),
		 -EAGAIN);
	CHECK(!strcmp(w.log, "rd"));
	CHECK_EQ(devmem_recycler_get_stats(rc)->pending, 0);

	/* A flush that fails fails the receive with its error; the token
	 * stays pending and nothing was received.
	 */
	CHECK_EQ(devmem_recycler_add(rc, 10), 0);
	wait_log_clear(&w);
	w.dontneed_err = -EBADF;
	w.later = 6;
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res), -EBADF);
	CHECK(!strcmp(w.log, "rd"));
	CHECK(strstr(devmem_last_error(), "SO_DEVMEM_DONTNEED") != NULL);
	CHECK_EQ(devmem_recycler_get_stats(rc)->pending, 1);
	CHECK_EQ(w.later, 6);

	/* Detached: no look, no flush. */
	w.dontneed_err = 0;
	CHECK_EQ(devmem_rx_set_recycler(rx, NULL), 0);
	wait_log_clear(&w);
	CHECK_EQ(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res), 6);
	CHECK(!strcmp(w.log, "R"));
	CHECK_EQ(devmem_recycler_get_stats(rc)->pending, 1);

	CHECK_EQ(devmem_rx_set_recycler(NULL, rc), -EINVAL);
	devmem_recycler_free(rc);
	devmem_rx_free(rx);
	return T_PASS;
}

static int test_loopback(void)
{
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct devmem_rx *rx;
	char buf[64] = "";
	int cfd = -1, sfd = -1;

	if (tcp_pair(&cfd, &sfd))
		return t_skip("no loopback TCP here");
	CHECK_EQ(devmem_rx_new(&rx, 0, 0), 0);
	CHECK_EQ(write(cfd, "hello", 5), 5);
	CHECK_EQ(devmem_recv(rx, sfd, buf, sizeof(buf), 0, &res), 5);
	CHECK(!memcmp(buf, "hello", 5));
	CHECK_EQ(res.host_bytes, 5);
	CHECK_EQ(res.dmabuf_bytes, 0);
	CHECK_EQ(res.nr_frags, 0);
	/* Plain data is one host segment: the whole buffer's worth. */
	CHECK_EQ(res.nr_segs, 1);
	CHECK_EQ(res.segs[0].type, DEVMEM_SEG_HOST);
	CHECK_EQ(res.segs[0].len, 5);
	CHECK(res.segs[0].host == buf);
	CHECK_EQ(res.flags, DEVMEM_RX_PLAIN);

	CHECK_EQ(devmem_recv(rx, sfd, buf, sizeof(buf), MSG_DONTWAIT, &res),
		 -EAGAIN);
	close(cfd);
	CHECK_EQ(devmem_recv(rx, sfd, buf, sizeof(buf), 0, &res), 0);
	close(sfd);
	devmem_rx_free(rx);
	return T_PASS;
}

/* Receive on @fd with SO_RCVTIMEO @ms; *@took: how long it took (ms). */
static ssize_t timed_recv(struct devmem_rx *rx, int fd, int flags,
			  long ms, long *took)
{
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = ms % 1000 * 1000 };
	struct timespec a, b;
	char buf[64];
	ssize_t ret;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &a);
	ret = devmem_recv(rx, fd, buf, sizeof(buf), flags, &res);
	clock_gettime(CLOCK_MONOTONIC, &b);
	*took = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	return ret;
}

/*
 * devmem_rx_set_stall_check() on a real loopback connection with no
 * data: a wait ends with ENOBUFS once the application holds every buffer
 * of the binding (2 here, held through the recycler's notes), and only
 * then; SO_RCVTIMEO still ends it otherwise; MSG_DONTWAIT is never
 * watched; data queued is received whatever is held.
 */
static int test_stall_check(void)
{
	const struct devmem_frag frags[] = {
		{ .offset = 0, .size = 100, .token = 1, .dmabuf_id = 77 },
		{ .offset = 4096, .size = 100, .token = 2, .dmabuf_id = 77 },
	};
	struct devmem_binding *b, *tx;
	struct wait_sock w = { 0 };
	struct devmem_recycler *rc;
	struct devmem_rx *rx;
	int cfd = -1, sfd = -1;
	long took;

	if (tcp_pair(&cfd, &sfd))
		return t_skip("no loopback TCP here");
	CHECK_EQ(devmem_rx_new(&rx, 0, 0), 0);
	CHECK_EQ(devmem_recycler_new(&rc, sfd, 2), 0);
	devmem_recycler_set_dontneed(rc, wait_dontneed, &w);
	CHECK_EQ(devmem_binding_new_unbound(&b, 77, 0), 0);
	devmem_binding_set_buffers(b, 2, 4096);
	CHECK_EQ(devmem_binding_new_unbound(&tx, 78, 1), 0);
	CHECK_EQ(devmem_held_register(77, 2, 4096), 0);

	CHECK_EQ(devmem_rx_set_stall_check(NULL, b, 50), -EINVAL);
	CHECK_EQ(devmem_rx_set_stall_check(rx, b, 50), -EINVAL);
	CHECK(strstr(devmem_last_error(), "no recycler linked") != NULL);
	CHECK_EQ(devmem_rx_set_recycler(rx, rc), 0);
	CHECK_EQ(devmem_rx_set_stall_check(rx, b, 0), -EINVAL);
	CHECK_EQ(devmem_rx_set_stall_check(rx, b, 1U << 31), -EINVAL);
	CHECK_EQ(devmem_rx_set_stall_check(rx, tx, 50), -EINVAL);
	CHECK_EQ(devmem_rx_set_stall_check(rx, b, 50), 0);

	/* data queued: received */
	CHECK_EQ(write(cfd, "hello", 5), 5);
	CHECK_EQ(timed_recv(rx, sfd, 0, 2000, &took), 5);

	/* one buffer of two held: only SO_RCVTIMEO ends the wait */
	devmem_recycler_note(rc, frags, 1);
	CHECK_EQ(timed_recv(rx, sfd, 0, 300, &took), -EAGAIN);
	CHECK(took >= 250);

	/* both held: ENOBUFS after a check, long before SO_RCVTIMEO */
	devmem_recycler_note(rc, &frags[1], 1);
	CHECK_EQ(timed_recv(rx, sfd, 0, 10000, &took), -ENOBUFS);
	CHECK(took < 5000);
	CHECK(!strcmp(devmem_last_error(), "stalled: no data for 50 ms, and the application holds all 2 buffers of binding 77 (2 tokens not given back): the card has none to receive into; give tokens back, or bind a larger dma-buf"));
	/* a receive that does not wait is not watched */
	CHECK_EQ(timed_recv(rx, sfd, MSG_DONTWAIT, 10000, &took), -EAGAIN);
	/* data queued is received whatever is held */
	CHECK_EQ(write(cfd, "again", 5), 5);
	CHECK_EQ(timed_recv(rx, sfd, 0, 2000, &took), 5);

	/* the tokens back through the recycler: nothing held */
	CHECK_EQ(devmem_recycler_add_frags(rc, frags, 2), 0);
	CHECK(devmem_recycler_flush(rc) >= 0);
	CHECK_EQ(devmem_recycler_get_stats(rc)->freed, 2);
	CHECK_EQ(devmem_binding_held(b, NULL), 0);
	CHECK_EQ(timed_recv(rx, sfd, 0, 300, &took), -EAGAIN);

	/* unlinking the recycler stops the watch */
	devmem_recycler_note(rc, frags, 2);
	CHECK_EQ(devmem_binding_held(b, NULL), 2);
	CHECK_EQ(devmem_rx_set_recycler(rx, NULL), 0);
	CHECK_EQ(devmem_rx_set_recycler(rx, rc), 0);
	CHECK_EQ(timed_recv(rx, sfd, 0, 300, &took), -EAGAIN);
	CHECK(took >= 250);

	/* the recycler goes with its socket: nothing held */
	devmem_recycler_free(rc);
	CHECK_EQ(devmem_binding_held(b, NULL), 0);
	devmem_held_unregister(77);
	devmem_binding_free(tx);
	devmem_binding_free(b);
	devmem_rx_free(rx);
	close(cfd);
	close(sfd);
	return T_PASS;
}

static const struct t_case cases[] = {
	{ "etoosmall-grows", test_grow },
	{ "etoosmall-bounded", test_grow_bounded },
	{ "no-loss", test_no_loss },
	{ "order", test_order },
	{ "errors", test_errors },
	{ "recycler-before-wait", test_recycler },
	{ "stall-check", test_stall_check },
	{ "loopback", test_loopback },
};

int main(void)
{
	return T_RUN(cases);
}
