// SPDX-License-Identifier: GPL-2.0
/*
 * stall-vm [--uring] [-s DMABUF-SIZE] IFNAME QUEUE PORT BYTES READY-FILE [SEED]:
 * the stall check of devmem_recv() (with --uring: of devmem_uring_wait(),
 * one request in flight), in the test VM (selftests/libdevmem.bats runs
 * it on netdevsim).
 *
 * Receives a flow as recv-vm does (every byte checked; tokens through a
 * recycler made with the binding's buffer count and linked to the
 * receive), with devmem_rx_set_stall_check() on the binding every
 * 300 ms, but keeps every fragment's token instead of handing it to the
 * recycler, as a server that forgets them would. Once the application
 * holds every buffer, a receive must fail with ENOBUFS. Then the tokens
 * go back through the recycler, and the same socket receives the rest,
 * recycling; no receive may be refused again.
 *
 * Prints:
 *   bound id=ID ifindex=IFINDEX queue=QUEUE buffers=N
 *   recycler batch=T
 *   stalled after B bytes: REASON
 *   held buffers=H tokens=K          (devmem_binding_held() then)
 *   gave back K tokens
 *   held buffers=0 tokens=0
 *   received B bytes: ... (as recv-vm)
 *   tokens freed=N unknown=U calls=C
 * Exits 0 when every check held, 1 when one failed, 77 without udmabuf,
 * 2 on bad arguments.
 */
#include "vm-stream.h"

#define STALL_MS	300

static void held_line(struct vm_stream *s, uint64_t *held, uint64_t *tokens)
{
	*held = devmem_binding_held(s->b, tokens);
	printf("held buffers=%" PRIu64 " tokens=%" PRIu64 "\n", *held,
	       *tokens);
}

/*
 * The wait ended with @ret, after s->off bytes: it must be ENOBUFS with
 * every buffer held (s->kept: the tokens the application kept). Then the
 * cure the reason names: the tokens go back, and nothing is held.
 */
static int stalled_then_cured(struct vm_stream *s, ssize_t ret)
{
	uint64_t held, tokens;
	int err;

	REQUIRE(ret == -ENOBUFS, "wait after %" PRIu64 " bytes: %zd (%s), "
		"expected ENOBUFS", s->off, ret, devmem_last_error());
	printf("stalled after %" PRIu64 " bytes: %s\n", s->off,
	       devmem_last_error());
	held_line(s, &held, &tokens);
	REQUIRE(held == s->buffers && tokens == s->nr_kept,
		"held %" PRIu64 " buffers, %" PRIu64 " tokens; kept %zu",
		held, tokens, s->nr_kept);

	s->keep = 0;
	err = devmem_recycler_add_frags(s->rc, s->kept, s->nr_kept);
	REQUIRE(err >= 0, "devmem_recycler_add_frags: %s",
		devmem_last_error());
	REQUIRE(devmem_recycler_flush(s->rc) >= 0, "devmem_recycler_flush: %s",
		devmem_last_error());
	printf("gave back %zu tokens\n", s->nr_kept);
	held_line(s, &held, &tokens);
	REQUIRE(!held && !tokens, "still held after the flush");
	return T_PASS;
}

static int receive(struct vm_stream *s, int fd, uint64_t bytes)
{
	static uint8_t host[VM_HOST_LEN];
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct timeval tv = { .tv_sec = 20 };
	struct devmem_rx *rx;
	ssize_t ret;

	REQUIRE(!setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)),
		"SO_RCVTIMEO: %s", strerror(errno));
	REQUIRE(!devmem_rx_new(&rx, 0, 0), "devmem_rx_new: %s",
		devmem_last_error());
	if (vm_recycler(s, fd))
		return T_FAIL;
	REQUIRE(!devmem_rx_set_recycler(rx, s->rc), "devmem_rx_set_recycler: %s",
		devmem_last_error());
	REQUIRE(!devmem_rx_set_stall_check(rx, s->b, STALL_MS),
		"devmem_rx_set_stall_check: %s", devmem_last_error());

	s->keep = 1;
	while ((ret = devmem_recv(rx, fd, host, sizeof(host), 0, &res)) > 0) {
		if (vm_check_result(s, host, ret, &res))
			return T_FAIL;
		REQUIRE(s->off < bytes, "all %" PRIu64 " bytes without a stall",
			bytes);
	}
	if (stalled_then_cured(s, ret))
		return T_FAIL;

	while ((ret = devmem_recv(rx, fd, host, sizeof(host), 0, &res)) > 0)
		if (vm_check_result(s, host, ret, &res))
			return T_FAIL;
	REQUIRE(ret == 0, "receive after %" PRIu64 " bytes: %s", s->off,
		devmem_last_error());
	devmem_rx_free(rx);
	return vm_finish(s, bytes);
}

/* One receive through the ring: its bytes, 0 at the end, or -errno of
 * the wait (the request stays in flight then).
 */
static ssize_t uring_recv(struct vm_stream *s, struct devmem_uring *u,
			  int fd, uint8_t *host, int *inflight)
{
	struct devmem_uring_completion c = { .size = sizeof(c) };
	int err;

	if (!*inflight) {
		err = devmem_uring_submit(u, fd, host, VM_HOST_LEN, 0, 1);
		REQUIRE(!err, "devmem_uring_submit: %s", devmem_last_error());
		*inflight = 1;
	}
	err = devmem_uring_wait(u, &c);
	if (err)
		return err;
	*inflight = 0;
	REQUIRE(c.ret >= 0, "receive after %" PRIu64 " bytes: %s", s->off,
		strerror((int)-c.ret));
	if (c.ret && vm_check_result(s, host, c.ret, &c.rx))
		return -EPROTO;
	return c.ret;
}

static int receive_uring(struct vm_stream *s, int fd, uint64_t bytes)
{
	static uint8_t host[VM_HOST_LEN];
	struct devmem_uring *u;
	int err, inflight = 0;
	ssize_t ret;

	err = devmem_uring_new(&u, 2, 0, 0);
	if (err == -ENOSYS || err == -EPERM)
		return t_skip("%s", devmem_last_error());
	REQUIRE(!err, "devmem_uring_new: %s", devmem_last_error());
	if (vm_recycler(s, fd))
		return T_FAIL;
	REQUIRE(!devmem_uring_set_recycler(u, fd, s->rc),
		"devmem_uring_set_recycler: %s", devmem_last_error());
	REQUIRE(!devmem_uring_set_stall_check(u, s->b, STALL_MS),
		"devmem_uring_set_stall_check: %s", devmem_last_error());

	s->keep = 1;
	while ((ret = uring_recv(s, u, fd, host, &inflight)) > 0)
		REQUIRE(s->off < bytes, "all %" PRIu64 " bytes without a stall",
			bytes);
	/* the request stays in flight, and completes once cured */
	REQUIRE(inflight, "no request in flight after ENOBUFS");
	if (stalled_then_cured(s, ret))
		return T_FAIL;

	while ((ret = uring_recv(s, u, fd, host, &inflight)) > 0)
		;
	REQUIRE(ret == 0, "wait after %" PRIu64 " bytes: %s", s->off,
		devmem_last_error());
	devmem_uring_set_recycler(u, fd, NULL);
	devmem_uring_free(u);
	return vm_finish(s, bytes);
}

int main(int argc, char **argv)
{
	struct vm_stream s = { .size = 64U << 20 };
	int fd, ret, use_uring = 0;
	uint64_t bytes;

	vm_prog = "stall-vm";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "--uring")) {
		use_uring = 1;
		argc--;
		argv++;
	}
	fd = vm_accept(&s, argc - 1, argv + 1, &bytes, &ret);
	if (fd >= 0) {
		ret = use_uring ? receive_uring(&s, fd, bytes) :
				  receive(&s, fd, bytes);
		close(fd);
	}
	vm_release(&s);
	return ret;
}
