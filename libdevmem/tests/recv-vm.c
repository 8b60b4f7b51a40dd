// SPDX-License-Identifier: GPL-2.0
/*
 * recv-vm [-s DMABUF-SIZE] IFNAME QUEUE PORT BYTES READY-FILE [SEED]:
 * receive a device-memory TCP flow with devmem_recv() on our kernel, in
 * the test VM (selftests/libdevmem.bats runs it on netdevsim, the flow
 * steered to QUEUE, header split on; with the queue's hds_payload knob
 * set, part of every packet's payload lands in host memory, so that
 * receives mix host bytes and fragments).
 *
 * Binds a udmabuf of DMABUF-SIZE bytes (default 64 MiB) to rx queue
 * QUEUE of IFNAME, listens on 0.0.0.0 PORT, creates READY-FILE, accepts
 * one connection and receives BYTES bytes. Every byte is checked in the
 * order of the segments of each receive against the test stream's
 * pattern of seed SEED (default 1: tcpxfer's); see vm-stream.h. Tokens go
 * back through a recycler made with the binding's buffer count and linked
 * to the receive context (devmem_rx_set_recycler(), so that no receive
 * waits holding tokens), after each receive: a stream far larger than the
 * dma-buf must pass without a stall. A receive that waits 20 s for data
 * (SO_RCVTIMEO) fails the test as a stall. Then the peer must close.
 *
 * Prints:
 *   bound id=ID ifindex=IFINDEX queue=QUEUE buffers=N
 *   recycler batch=T
 *   received B bytes: linear L, dmabuf D in F frags, R receives, M mixed, P plain
 *   tokens freed=N unknown=U calls=K
 * (M: receives with both host and device bytes; P: receives of host
 * memory alone). Exits 0 when every check held, 1 when one failed, 77
 * without udmabuf, 2 on bad arguments.
 */
#include "vm-stream.h"

#define STALL_S	20

static int receive(struct vm_stream *s, int fd, uint64_t bytes)
{
	static uint8_t host[VM_HOST_LEN];
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct timeval tv = { .tv_sec = STALL_S };
	struct devmem_recycler_stats st;
	struct devmem_rx *rx;
	ssize_t ret;
	int err;

	REQUIRE(!setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)),
		"SO_RCVTIMEO: %s", strerror(errno));
	err = devmem_rx_new(&rx, 0, 0);
	REQUIRE(!err, "devmem_rx_new: %s", devmem_last_error());
	if (vm_recycler(s, fd))
		return T_FAIL;
	REQUIRE(!devmem_rx_set_recycler(rx, s->rc), "devmem_rx_set_recycler: %s",
		devmem_last_error());

	while ((ret = devmem_recv(rx, fd, host, sizeof(host), 0, &res)) > 0) {
		if (vm_check_result(s, host, ret, &res))
			return T_FAIL;
		REQUIRE(s->off <= bytes, "more than %" PRIu64 " bytes", bytes);
	}
	if (ret == -EAGAIN) {
		st = *devmem_recycler_get_stats(s->rc);
		REQUIRE(0, "stalled: no data for %d s after %" PRIu64 " of %"
			PRIu64 " bytes, %" PRIu64 " tokens pending in the "
			"recycler (batch %d) of the binding's %zu buffers",
			STALL_S, s->off, bytes, st.pending, s->batch,
			s->buffers);
	}
	REQUIRE(ret == 0, "receive after %" PRIu64 " bytes: %s", s->off,
		devmem_last_error());
	devmem_rx_free(rx);
	return vm_finish(s, bytes);
}

int main(int argc, char **argv)
{
	struct vm_stream s = { .size = 64U << 20 };
	uint64_t bytes;
	int fd, ret;

	vm_prog = "recv-vm";
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = vm_accept(&s, argc - 1, argv + 1, &bytes, &ret);
	if (fd >= 0) {
		ret = receive(&s, fd, bytes);
		close(fd);
	}
	vm_release(&s);
	return ret;
}
