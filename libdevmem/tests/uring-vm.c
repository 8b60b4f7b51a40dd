// SPDX-License-Identifier: GPL-2.0
/*
 * uring-vm IFNAME QUEUE PORT BYTES READY-FILE [SEED]: receive a device-
 * memory TCP flow through io_uring (devmem_uring) on our kernel, in the
 * test VM (selftests/libdevmem.bats runs it on netdevsim, the flow
 * steered to QUEUE, header split on).
 *
 * Binds a 64 MiB udmabuf to rx queue QUEUE of IFNAME through the
 * library, listens on 0.0.0.0 PORT, creates READY-FILE, accepts one
 * connection and receives BYTES bytes with one IORING_OP_RECVMSG
 * (MSG_SOCK_DEVMEM) request in flight at a time. Every byte is checked
 * in the order of the completions' segments against the test stream's
 * pattern of seed SEED (default 1: tcpxfer's); see vm-stream.h. Tokens
 * go back through a recycler. Then the peer must close.
 *
 * Prints:
 *   bound id=ID ifindex=IFINDEX queue=QUEUE
 *   received B bytes: linear L, dmabuf D in F frags, R receives, M mixed, P plain
 *   tokens freed=N unknown=U calls=K
 * (M: receives with both host and device bytes; P: receives of host
 * memory alone). Exits 0 when every check held, 1 when one failed (a
 * wrong byte says which, with its stream offset), 77 without io_uring or
 * udmabuf, 2 on bad arguments.
 */
#include "vm-stream.h"

static int receive(struct vm_stream *s, int fd, uint64_t bytes)
{
	static uint8_t host[VM_HOST_LEN];
	struct devmem_uring_completion c = { .size = sizeof(c) };
	struct devmem_uring *u;
	int err;

	err = devmem_uring_new(&u, 2, 0, 0);
	if (err == -ENOSYS || err == -EPERM)
		return t_skip("%s", devmem_last_error());
	REQUIRE(!err, "devmem_uring_new: %s", devmem_last_error());
	err = devmem_recycler_new(&s->rc, fd, 0);
	REQUIRE(!err, "devmem_recycler_new: %s", strerror(-err));

	for (;;) {
		err = devmem_uring_submit(u, fd, host, sizeof(host), 0,
					  s->receives);
		REQUIRE(!err, "devmem_uring_submit: %s", devmem_last_error());
		err = devmem_uring_wait(u, &c);
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
	devmem_uring_free(u);
	return vm_finish(s, bytes);
}

int main(int argc, char **argv)
{
	struct vm_stream s = { .size = 64U << 20 };
	uint64_t bytes;
	int fd, ret;

	vm_prog = "uring-vm";
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = vm_accept(&s, argc - 1, argv + 1, &bytes, &ret);
	if (fd >= 0) {
		ret = receive(&s, fd, bytes);
		close(fd);
	}
	vm_release(&s);
	return ret;
}
