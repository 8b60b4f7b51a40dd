// SPDX-License-Identifier: GPL-2.0
/*
 * devmem_last_error() for every public function that can fail: a failing
 * call leaves a reason of its own (never the text an earlier call left),
 * and a call that succeeds leaves the text empty. Functions that cannot
 * fail leave it alone. Runs without a devmem kernel: the failures are
 * argument checks, and the successes need only loopback and a socket.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <devmem.h>

#include "test.h"

#define STALE	"no network device \"stale.reason.0\""

/* Leave a known reason behind, as an earlier failed call would. */
static void stale(void)
{
	devmem_ifindex("stale.reason.0");
}

static int is_stale(void)
{
	return !strcmp(devmem_last_error(), STALE);
}

/* @call fails with @err and a reason of its own. */
#define FAILS(call, err)						\
	do {								\
		stale();						\
		CHECK_EQ((long)(call), (long)(err));			\
		CHECK(devmem_last_error()[0] != '\0');			\
		if (is_stale()) {					\
			fprintf(stderr, "%s:%d: %s kept the old reason\n", \
				__FILE__, __LINE__, #call);		\
			return T_FAIL;					\
		}							\
	} while (0)

/* @call succeeds (returns what @ok says) and leaves no reason. */
#define SUCCEEDS(call, ok)						\
	do {								\
		long __r;						\
		stale();						\
		__r = (long)(call);					\
		CHECK(ok);						\
		if (devmem_last_error()[0]) {				\
			fprintf(stderr, "%s:%d: %s = %ld left \"%s\"\n", \
				__FILE__, __LINE__, #call, __r,		\
				devmem_last_error());			\
			return T_FAIL;					\
		}							\
	} while (0)

static int test_receive(void)
{
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct devmem_frag frags[1];
	struct msghdr msg = { 0 };
	struct devmem_rx *rx;
	size_t nr;
	char buf[8];
	int sv[2];

	FAILS(devmem_rx_new(NULL, 0, 0), -EINVAL);
	FAILS(devmem_rx_new(&rx, 0, 1U << 9), -EINVAL);
	SUCCEEDS(devmem_rx_new(&rx, 0, 0), __r == 0);
	FAILS(devmem_rx_set_recycler(NULL, NULL), -EINVAL);
	SUCCEEDS(devmem_rx_set_recycler(rx, NULL), __r == 0);

	FAILS(devmem_recv(NULL, 0, buf, sizeof(buf), 0, &res), -EINVAL);
	FAILS(devmem_recv(rx, 0, buf, sizeof(buf), 0, NULL), -EINVAL);
	FAILS(devmem_recv(rx, 0, NULL, 1, 0, &res), -EINVAL);
	res.size = 1;
	FAILS(devmem_recv(rx, 0, buf, sizeof(buf), 0, &res), -EINVAL);
	res.size = sizeof(res);
	FAILS(devmem_recv(rx, -1, buf, sizeof(buf), 0, &res), -EBADF);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	FAILS(devmem_recv(rx, sv[0], buf, sizeof(buf), MSG_DONTWAIT, &res),
	      -EAGAIN);
	/* A fixed text, which the next call's own outcome replaces. */
	CHECK(!strcmp(devmem_last_error(),
		      "recvmsg(MSG_SOCK_DEVMEM): Resource temporarily unavailable"));
	CHECK_EQ(write(sv[1], "x", 1), 1);
	CHECK_EQ(devmem_recv(rx, sv[0], buf, sizeof(buf), 0, &res), 1);
	CHECK(devmem_last_error()[0] == '\0');
	CHECK_EQ(devmem_recv(rx, sv[0], buf, sizeof(buf), MSG_DONTWAIT, &res),
		 -EAGAIN);
	stale();
	CHECK(is_stale());
	CHECK_EQ(write(sv[1], "x", 1), 1);
	SUCCEEDS(devmem_recv(rx, sv[0], buf, sizeof(buf), 0, &res), __r == 1);
	close(sv[1]);
	SUCCEEDS(devmem_recv(rx, sv[0], buf, sizeof(buf), 0, &res), __r == 0);
	close(sv[0]);
	devmem_rx_free(rx);

	FAILS(devmem_parse_cmsgs(NULL, 0, frags, 1, &nr, NULL), -EINVAL);
	FAILS(devmem_parse_cmsgs(&msg, 1U << 9, frags, 1, &nr, NULL), -EINVAL);
	FAILS(devmem_parse_cmsgs(&msg, 0, NULL, 1, &nr, NULL), -EINVAL);
	msg.msg_flags = MSG_CTRUNC;
	FAILS(devmem_parse_cmsgs(&msg, 0, frags, 1, &nr, NULL), -EBADMSG);
	msg.msg_flags = 0;
	SUCCEEDS(devmem_parse_cmsgs(&msg, 0, frags, 1, &nr, NULL), __r == 0);
	return T_PASS;
}

static int test_recycler(void)
{
	struct devmem_frag frag = { .size = 4096, .token = 1 };
	struct devmem_recycler *rc;
	int sv[2];

	FAILS(devmem_recycler_new(NULL, 0, 0), -EINVAL);
	FAILS(devmem_recycler_new(&rc, -1, 0), -EBADF);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	SUCCEEDS(devmem_recycler_new(&rc, sv[0], 0), __r == 0);
	FAILS(devmem_recycler_set_batch(NULL, 1), -EINVAL);
	SUCCEEDS(devmem_recycler_set_batch(rc, 2), __r == 2);
	FAILS(devmem_recycler_add(NULL, 1), -EINVAL);
	SUCCEEDS(devmem_recycler_add(rc, 1), __r == 0);
	FAILS(devmem_recycler_add_frags(NULL, &frag, 1), -EINVAL);
	FAILS(devmem_recycler_add_frags(rc, NULL, 1), -EINVAL);
	/* the second token fills the batch: the flush fails on a socket
	 * that is not TCP
	 */
	stale();
	CHECK(devmem_recycler_add_frags(rc, &frag, 1) < 0);
	CHECK(devmem_last_error()[0] != '\0');
	CHECK(!is_stale());
	FAILS(devmem_recycler_flush(NULL), -EINVAL);
	stale();
	CHECK(devmem_recycler_flush(rc) < 0);
	CHECK(!is_stale());
	devmem_recycler_free(rc);
	close(sv[0]);
	close(sv[1]);
	return T_PASS;
}

static int test_dmabuf(void)
{
	struct devmem_dmabuf *db;
	void *p;
	char x;

	FAILS(devmem_dmabuf_new_udmabuf(NULL, 4096), -EINVAL);
	FAILS(devmem_dmabuf_new_udmabuf(&db, 1), -EINVAL);
	FAILS(devmem_dmabuf_new_udmabuf_huge(NULL, 2 << 20), -EINVAL);
	FAILS(devmem_dmabuf_new_udmabuf_huge(&db, 4096), -EINVAL);
	FAILS(devmem_dmabuf_new_heap(&db, "", 4096), -EINVAL);
	FAILS(devmem_dmabuf_new_cuda(&db, -1, 4096), -EINVAL);
	FAILS(devmem_dmabuf_new_import(&db, -1), -EBADF);
	FAILS(devmem_dmabuf_read(NULL, 0, &x, 1), -EINVAL);
	FAILS(devmem_dmabuf_map(NULL, DEVMEM_ACCESS_READ, &p), -EINVAL);
	FAILS(devmem_dmabuf_begin_access(NULL, DEVMEM_ACCESS_READ), -EINVAL);
	FAILS(devmem_dmabuf_end_access(NULL, DEVMEM_ACCESS_READ), -EINVAL);
	return T_PASS;
}

static int test_netlink(void)
{
	struct devmem_page_pool *pp;
	struct devmem_binding *b;
	struct devmem_queue *q;
	uint32_t queue = 0;
	int lo;

	FAILS(devmem_ifindex(NULL), -EINVAL);
	FAILS(devmem_ifindex("no.such.dev"), -ENODEV);
	lo = if_nametoindex("lo");
	SUCCEEDS(devmem_ifindex("lo"), __r == lo);
	FAILS(devmem_binding_new_rx(NULL, lo, &queue, 1, 0), -EINVAL);
	FAILS(devmem_binding_new_rx(&b, lo, NULL, 1, 0), -EINVAL);
	FAILS(devmem_binding_new_rx(&b, 0, &queue, 1, 0), -EINVAL);
	FAILS(devmem_binding_new_rx(&b, lo, &queue, 1, -1), -EBADF);
	FAILS(devmem_binding_new_rx_sized(NULL, lo, &queue, 1, 0, 16384),
	      -EINVAL);
	FAILS(devmem_binding_new_rx_sized(&b, lo, NULL, 1, 0, 16384), -EINVAL);
	FAILS(devmem_binding_new_rx_sized(&b, 0, &queue, 1, 0, 16384), -EINVAL);
	FAILS(devmem_binding_new_rx_sized(&b, lo, &queue, 1, -1, 0), -EBADF);
	FAILS(devmem_binding_new_rx_flags(NULL, lo, &queue, 1, 0, 0, 0),
	      -EINVAL);
	FAILS(devmem_binding_new_rx_flags(&b, lo, NULL, 1, 0, 0, 0), -EINVAL);
	FAILS(devmem_binding_new_rx_flags(&b, lo, &queue, 1, -1, 0, 0), -EBADF);
	FAILS(devmem_binding_new_rx_flags(&b, lo, &queue, 1, 0, 0, 2), -EINVAL);
	FAILS(devmem_binding_new_rx_flags(&b, lo, &queue, 1, 0, 0, ~0U),
	      -EINVAL);
	FAILS(devmem_binding_new_tx(NULL, lo, 0), -EINVAL);
	FAILS(devmem_binding_new_tx(&b, 0, 0), -EINVAL);
	FAILS(devmem_binding_new_tx(&b, -1, 0), -EINVAL);
	FAILS(devmem_binding_new_tx(&b, lo, -1), -EBADF);
	FAILS(devmem_queue_dump(NULL, 0), -EINVAL);
	FAILS(devmem_queue_dump(&q, -1), -EINVAL);
	FAILS(devmem_page_pool_dump(NULL, 0), -EINVAL);
	(void)pp;
	return T_PASS;
}

static int test_nic(void)
{
	struct devmem_flow f = { .size = sizeof(f) };
	struct devmem_nic *n;

	FAILS(devmem_flow_parse(NULL, "10.0.0.1", NULL, "80"), -EINVAL);
	f.size = 0;
	FAILS(devmem_flow_parse(&f, "10.0.0.1", NULL, "80"), -EINVAL);
	f.size = sizeof(f);
	FAILS(devmem_flow_parse(&f, "10.0.0", NULL, "80"), -EINVAL);
	FAILS(devmem_flow_parse(&f, "10.0.0.1", "::1", "80"), -EINVAL);
	FAILS(devmem_flow_parse(&f, "10.0.0.1", NULL, "0"), -EINVAL);
	SUCCEEDS(devmem_flow_parse(&f, "10.0.0.1", NULL, "80"), __r == 0);
	FAILS(devmem_nic_new(NULL, 1), -EINVAL);
	FAILS(devmem_nic_new(&n, 0), -EINVAL);
	FAILS(devmem_nic_new_recover(NULL, 1), -EINVAL);
	FAILS(devmem_nic_new_from_file(NULL, "x"), -EINVAL);
	FAILS(devmem_nic_new_from_file(&n, ""), -EINVAL);
	FAILS(devmem_nic_header_split(NULL, 1), -EINVAL);
	FAILS(devmem_nic_rss_exclude(NULL, 0, 0), -EINVAL);
	FAILS(devmem_nic_flow_add(NULL, &f, 0, NULL), -EINVAL);
	FAILS(devmem_nic_flow_del(NULL, 0), -EINVAL);
	FAILS(devmem_nic_setup(NULL, 0, 0, NULL), -EINVAL);
	FAILS(devmem_nic_restore(NULL), -EINVAL);
	FAILS(devmem_nic_save(NULL, "x"), -EINVAL);
	SUCCEEDS(devmem_nic_new(&n, if_nametoindex("lo")), __r == 0);
	/* nothing recorded: nothing to undo, no system call */
	SUCCEEDS(devmem_nic_restore(n), __r == 0);
	devmem_nic_free(n);
	return T_PASS;
}

static int test_uring(void)
{
	struct devmem_uring_completion c = { .size = sizeof(c) };
	struct devmem_urecv *r;
	struct devmem_uring *u;
	char buf[8];
	int err;

	FAILS(devmem_uring_new(NULL, 1, 0, 0), -EINVAL);
	FAILS(devmem_uring_new(&u, DEVMEM_URING_MAX_ENTRIES + 1, 0, 0),
	      -EINVAL);
	stale();
	err = devmem_uring_new(&u, 1, 0, 0);
	if (err == -ENOSYS || err == -EPERM)
		return t_skip("%s", devmem_last_error());
	CHECK_EQ(err, 0);
	CHECK_EQ(devmem_last_error()[0], '\0');
	FAILS(devmem_uring_submit(NULL, 0, buf, 1, 0, 0), -EINVAL);
	FAILS(devmem_uring_submit(u, -1, buf, 1, 0, 0), -EBADF);
	FAILS(devmem_uring_wait(u, &c), -ENOENT);
	FAILS(devmem_uring_peek(u, &c), -ENOENT);
	FAILS(devmem_uring_wait(NULL, &c), -EINVAL);
	devmem_uring_free(u);

	FAILS(devmem_urecv_new(NULL, 0, 0), -EINVAL);
	SUCCEEDS(devmem_urecv_new(&r, 0, 0), __r == 0);
	FAILS(devmem_urecv_prep(r, NULL, 0, buf, 1, 0), -EINVAL);
	devmem_urecv_free(r);
	return T_PASS;
}

static int test_send(void)
{
	struct devmem_span sp = { 0, 4096 }, done[1];
	struct devmem_send_completion c;
	struct devmem_sender *s;

	FAILS(devmem_sender_new(NULL, 0, NULL), -EINVAL);
	FAILS(devmem_sender_new(&s, -1, NULL), -EBADF);
	FAILS(devmem_sender_new(&s, 0, NULL), -EINVAL);
	FAILS(devmem_send(NULL, &sp, 1, 0), -EINVAL);
	FAILS(devmem_sender_reap(NULL, done, 1, 0), -EINVAL);
	FAILS(devmem_send_tagged(NULL, &sp, 1, 0, 1), -EINVAL);
	FAILS(devmem_sender_reap_tagged(NULL, &c, 1, 0), -EINVAL);
	return T_PASS;
}

static int test_unpack(void)
{
	struct devmem_unpack *up;

	FAILS(devmem_unpack_new(&up, NULL, 1), -EINVAL);
	return T_PASS;
}

/* Functions that cannot fail leave the reason alone. */
static int test_cannot_fail(void)
{
	stale();
	devmem_version();
	devmem_rx_free(NULL);
	devmem_recycler_free(NULL);
	devmem_dmabuf_free(NULL);
	devmem_binding_free(NULL);
	devmem_sender_free(NULL);
	devmem_queue_dump_free(NULL);
	devmem_page_pool_dump_free(NULL);
	devmem_nic_free(NULL);
	devmem_uring_free(NULL);
	devmem_urecv_free(NULL);
	devmem_unpack_free(NULL);
	CHECK(is_stale());
	return T_PASS;
}

static const struct t_case cases[] = {
	{ "receive", test_receive },
	{ "recycler", test_recycler },
	{ "dmabuf", test_dmabuf },
	{ "netlink", test_netlink },
	{ "nic", test_nic },
	{ "uring", test_uring },
	{ "send", test_send },
	{ "unpack", test_unpack },
	{ "cannot-fail", test_cannot_fail },
};

int main(void)
{
	return T_RUN(cases);
}
