// SPDX-License-Identifier: GPL-2.0
/*
 * recv-vm IFNAME QUEUE PORT BYTES READY-FILE [SEED]: receive a device-
 * memory TCP flow with devmem_recv() on our kernel, in the test VM
 * (selftests/libdevmem.bats runs it on netdevsim, the flow steered to
 * QUEUE, header split on; with the queue's hds_payload knob set, part of
 * every packet's payload lands in host memory, so that receives mix host
 * bytes and fragments).
 *
 * Binds a 64 MiB udmabuf to rx queue QUEUE of IFNAME, listens on 0.0.0.0
 * PORT, creates READY-FILE, accepts one connection and receives BYTES
 * bytes. Every byte is checked in the order of the segments of each
 * receive against the test stream's pattern of seed SEED (default 1:
 * tcpxfer's); see vm-stream.h. Tokens go back through a recycler. Then
 * the peer must close.
 *
 * Prints what uring-vm prints; exits as it does (77 without udmabuf).
 */
#include "vm-stream.h"

static int receive(struct vm_stream *s, int fd, uint64_t bytes)
{
	static uint8_t host[VM_HOST_LEN];
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct devmem_rx *rx;
	ssize_t ret;
	int err;

	err = devmem_rx_new(&rx, 0, 0);
	REQUIRE(!err, "devmem_rx_new: %s", strerror(-err));
	err = devmem_recycler_new(&s->rc, fd, 0);
	REQUIRE(!err, "devmem_recycler_new: %s", strerror(-err));

	while ((ret = devmem_recv(rx, fd, host, sizeof(host), 0, &res)) > 0) {
		if (vm_check_result(s, host, ret, &res))
			return T_FAIL;
		REQUIRE(s->off <= bytes, "more than %" PRIu64 " bytes", bytes);
	}
	REQUIRE(ret == 0, "receive after %" PRIu64 " bytes: %s", s->off,
		strerror((int)-ret));
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
