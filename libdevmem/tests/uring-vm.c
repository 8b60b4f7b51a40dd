// SPDX-License-Identifier: GPL-2.0
/*
 * uring-vm [--own-ring|--unsized] IFNAME QUEUE PORT BYTES READY-FILE [SEED]:
 * receive a device-memory TCP flow through io_uring on our kernel, in the
 * test VM (selftests/libdevmem.bats runs it on netdevsim, the flow
 * steered to QUEUE, header split on). The option comes first; the rest
 * is vm_accept()'s (vm-stream.h).
 *
 * By default the library's ring (devmem_uring), the recycler linked to
 * the socket's receives (devmem_uring_set_recycler), so that every wait
 * first hands the pending tokens back; a wait without a completion for
 * 20 s is a stall (SIGALRM ends it with EINTR). --unsized makes the
 * recycler without the binding's buffer count: it then flushes every 64
 * tokens, more than a small binding has, and only the flush before each
 * wait keeps the flow going. With --own-ring the
 * program's own liburing ring, each receive a devmem_urecv that the
 * library prepares and completes: the program submits it linked to a
 * timeout of 20 s, so that a stalled flow fails the test (the receive
 * ends with ECANCELED), and resubmits after ETOOSMALL.
 *
 * Binds a 64 MiB udmabuf to rx queue QUEUE of IFNAME through the
 * library, listens on 0.0.0.0 PORT, creates READY-FILE, accepts one
 * connection and receives BYTES bytes with one IORING_OP_RECVMSG
 * (MSG_SOCK_DEVMEM) request in flight at a time. Every byte is checked
 * in the order of the completions' segments against the test stream's
 * pattern of seed SEED (default 1: tcpxfer's); see vm-stream.h. Tokens
 * go back through a recycler made with the binding's buffer count. Then
 * the peer must close.
 *
 * Prints:
 *   bound id=ID ifindex=IFINDEX queue=QUEUE buffers=N
 *   recycler batch=T
 *   received B bytes: linear L, dmabuf D in F frags, R receives, M mixed, P plain
 *   tokens freed=N unknown=U calls=K
 * (M: receives with both host and device bytes; P: receives of host
 * memory alone). Exits 0 when every check held, 1 when one failed (a
 * wrong byte says which, with its stream offset), 77 without io_uring or
 * udmabuf, 2 on bad arguments.
 */
#include <liburing.h>
#include <signal.h>

#include "vm-stream.h"

#define STALL_S			20
#define OWN_TIMEOUT_DATA	UINT64_MAX

/*
 * One receive through @r on @ring: the receive, its linked timeout,
 * both completions reaped. *@ret: what devmem_urecv_complete() returned.
 */
static int own_receive(struct vm_stream *s, struct io_uring *ring,
		       struct devmem_urecv *r, int fd, void *buf, size_t len,
		       struct devmem_rx_result *res, ssize_t *ret)
{
	struct __kernel_timespec ts = { .tv_sec = STALL_S };
	struct io_uring_sqe *sqe, *timeout;
	struct io_uring_cqe *cqe;
	int err, reaped = 0;

	sqe = io_uring_get_sqe(ring);
	timeout = io_uring_get_sqe(ring);
	REQUIRE(sqe && timeout, "no free SQE");
	err = devmem_urecv_prep(r, sqe, fd, buf, len, 0);
	REQUIRE(!err, "devmem_urecv_prep: %s", devmem_last_error());
	io_uring_sqe_set_data64(sqe, s->receives);
	sqe->flags |= IOSQE_IO_LINK;
	io_uring_prep_link_timeout(timeout, &ts, 0);
	io_uring_sqe_set_data64(timeout, OWN_TIMEOUT_DATA);
	err = io_uring_submit(ring);
	REQUIRE(err == 2, "io_uring_submit: %s", strerror(-err));
	while (reaped != 3) {
		do
			err = io_uring_wait_cqe(ring, &cqe);
		while (err == -EINTR);
		REQUIRE(!err, "io_uring_wait_cqe: %s", strerror(-err));
		if (cqe->user_data == OWN_TIMEOUT_DATA) {
			/* cancelled by the receive's completion */
			REQUIRE(cqe->res == -ECANCELED || cqe->res == -ENOENT,
				"stalled: no data for %d s after %" PRIu64
				" bytes (timeout: %s)", STALL_S, s->off,
				strerror(-cqe->res));
			reaped |= 2;
		} else {
			REQUIRE(cqe->user_data == s->receives && !(reaped & 1),
				"completion of request %" PRIu64 ", expected %"
				PRIu64, (uint64_t)cqe->user_data, s->receives);
			*ret = devmem_urecv_complete(r, cqe, res);
			reaped |= 1;
		}
		io_uring_cqe_seen(ring, cqe);
	}
	return T_PASS;
}

static int receive_own_ring(struct vm_stream *s, int fd, uint64_t bytes)
{
	static uint8_t host[VM_HOST_LEN];
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct devmem_urecv *r;
	struct io_uring ring;
	ssize_t ret = 0;
	int err;

	err = io_uring_queue_init(4, &ring, 0);
	if (err == -ENOSYS || err == -EPERM)
		return t_skip("io_uring_queue_init: %s", strerror(-err));
	REQUIRE(!err, "io_uring_queue_init: %s", strerror(-err));
	err = devmem_urecv_new(&r, 0, 0);
	REQUIRE(!err, "devmem_urecv_new: %s", devmem_last_error());
	if (vm_recycler(s, fd))
		return T_FAIL;

	for (;;) {
		if (own_receive(s, &ring, r, fd, host, sizeof(host), &res, &ret))
			return T_FAIL;
		if (ret == DEVMEM_URECV_RESUBMIT)
			continue;
		REQUIRE(ret >= 0, "receive after %" PRIu64 " bytes: %s",
			s->off, devmem_last_error());
		if (!ret)
			break;
		if (vm_check_result(s, host, ret, &res))
			return T_FAIL;
		REQUIRE(s->off <= bytes, "more than %" PRIu64 " bytes", bytes);
	}
	devmem_urecv_free(r);
	io_uring_queue_exit(&ring);
	return vm_finish(s, bytes);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int receive(struct vm_stream *s, int fd, uint64_t bytes, int unsized)
{
	static uint8_t host[VM_HOST_LEN];
	struct devmem_uring_completion c = { .size = sizeof(c) };
	struct sigaction sa = { .sa_handler = on_alarm };
	struct devmem_uring *u;
	int err;

	err = devmem_uring_new(&u, 2, 0, 0);
	if (err == -ENOSYS || err == -EPERM)
		return t_skip("%s", devmem_last_error());
	REQUIRE(!err, "devmem_uring_new: %s", devmem_last_error());
	if (unsized) {
		size_t buffers = s->buffers;

		s->buffers = 0;
		err = vm_recycler(s, fd);
		s->buffers = buffers;
	} else {
		err = vm_recycler(s, fd);
	}
	if (err)
		return T_FAIL;
	err = devmem_uring_set_recycler(u, fd, s->rc);
	REQUIRE(!err, "devmem_uring_set_recycler: %s", devmem_last_error());
	/* no SA_RESTART: the alarm ends a wait with EINTR */
	REQUIRE(!sigaction(SIGALRM, &sa, NULL), "sigaction: %s",
		strerror(errno));

	for (;;) {
		err = devmem_uring_submit(u, fd, host, sizeof(host), 0,
					  s->receives);
		REQUIRE(!err, "devmem_uring_submit: %s", devmem_last_error());
		alarm(STALL_S);
		err = devmem_uring_wait(u, &c);
		alarm(0);
		REQUIRE(err != -EINTR, "stalled: no completion in %d s after %"
			PRIu64 " bytes, %" PRIu64 " tokens in the recycler",
			STALL_S, s->off,
			(uint64_t)devmem_recycler_get_stats(s->rc)->pending);
		REQUIRE(!err, "devmem_uring_wait: %s", devmem_last_error());
		REQUIRE(c.user_data == s->receives && c.fd == fd &&
			c.buf == host, "completion of request %" PRIu64
			" on fd %d", c.user_data, c.fd);
		REQUIRE(c.ret >= 0, "receive after %" PRIu64 " bytes: %s",
			s->off, strerror((int)-c.ret));
		if (!c.ret)
			break;
		if (vm_check_result(s, c.buf, c.ret, &c.rx))
			return T_FAIL;
		REQUIRE(s->off <= bytes, "more than %" PRIu64 " bytes", bytes);
	}
	devmem_uring_set_recycler(u, fd, NULL);
	devmem_uring_free(u);
	return vm_finish(s, bytes);
}

int main(int argc, char **argv)
{
	struct vm_stream s = { .size = 64U << 20 };
	int fd, ret, own_ring = 0, unsized = 0;
	uint64_t bytes;

	vm_prog = "uring-vm";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "--own-ring")) {
		own_ring = 1;
		argc--;
		argv++;
	} else if (argc > 1 && !strcmp(argv[1], "--unsized")) {
		unsized = 1;
		argc--;
		argv++;
	}
	fd = vm_accept(&s, argc - 1, argv + 1, &bytes, &ret);
	if (fd >= 0) {
		ret = own_ring ? receive_own_ring(&s, fd, bytes) :
				 receive(&s, fd, bytes, unsized);
		close(fd);
	}
	vm_release(&s);
	return ret;
}
