// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * recv-checksum: receive one TCP stream into device memory and print its
 * length and CRC-32.
 *
 *   recv-checksum IFNAME ADDRESS PORT QUEUE
 *
 * Sets IFNAME up for device-memory TCP (header split on, rx queue QUEUE
 * out of RSS, TCP to ADDRESS:PORT steered to QUEUE), binds a 2 MiB
 * udmabuf to QUEUE, accepts one connection on ADDRESS:PORT and receives
 * until the peer closes. The payload stays in the dma-buf; the checksum
 * reads each fragment where it landed, through the library's mapping of
 * the buffer, in stream order, as a GPU program would hand each fragment
 * to its kernels. Tokens go back as it goes, so
 * a stream of any length fits through the small buffer; should the
 * program ever keep them all, the stall check turns the endless wait
 * into an error that says so. Afterwards the device is put back as it
 * was.
 *
 * Build: make (the Makefile here uses pkg-config).
 * Needs CAP_NET_ADMIN and /dev/udmabuf.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <devmem.h>

#include "crc32.h"
#include "tcp-accept.h"

#define DMABUF_SIZE	(2U << 20)

/* Receive until the peer closes; the stream's length and CRC-32. */
static int receive(int fd, struct devmem_dmabuf *db,
		   const struct devmem_binding *b)
{
	struct devmem_rx_result res = { .size = sizeof(res) };
	static uint8_t host[64 << 10];
	struct devmem_recycler *rc = NULL;
	struct devmem_rx *rx = NULL;
	const uint8_t *base;
	uint64_t total = 0;
	uint32_t crc = 0;
	ssize_t n = -1;
	size_t i;

	if (devmem_dmabuf_map(db, DEVMEM_ACCESS_READ, (void **)&base) < 0 ||
	    devmem_rx_new(&rx, 0, 0) < 0 ||
	    devmem_recycler_new(&rc, fd, devmem_binding_buffers(b)) < 0 ||
	    devmem_rx_set_recycler(rx, rc) < 0 ||
	    /* a receive that waits while every buffer is held fails */
	    devmem_rx_set_stall_check(rx, b, 1000) < 0) {
		fprintf(stderr, "receive: %s\n", devmem_last_error());
		goto out;
	}
	while ((n = devmem_recv(rx, fd, host, sizeof(host), 0, &res)) > 0) {
		/* one access for all the fragments of this receive */
		if (res.nr_frags &&
		    devmem_dmabuf_begin_access(db, DEVMEM_ACCESS_READ) < 0) {
			fprintf(stderr, "access: %s\n", devmem_last_error());
			goto out;
		}
		for (i = 0; i < res.nr_segs; i++) {
			const struct devmem_seg *s = &res.segs[i];

			crc = crc32_update(crc, s->type == DEVMEM_SEG_HOST ?
					   s->host : base + s->frag.offset,
					   s->len);
		}
		if (res.nr_frags &&
		    devmem_dmabuf_end_access(db, DEVMEM_ACCESS_READ) < 0) {
			fprintf(stderr, "access: %s\n", devmem_last_error());
			goto out;
		}
		total += n;
		if (devmem_recycler_add_frags(rc, res.frags, res.nr_frags) < 0) {
			fprintf(stderr, "recycle: %s\n", devmem_last_error());
			goto out;
		}
	}
	if (n < 0)
		fprintf(stderr, "receive: %s\n", devmem_last_error());
	else
		printf("%llu bytes, crc32 %08x\n", (unsigned long long)total, crc);
out:
	devmem_recycler_free(rc);
	devmem_rx_free(rx);
	return n == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct devmem_binding *b = NULL;
	struct devmem_dmabuf *db = NULL;
	struct devmem_nic *nic = NULL;
	struct devmem_flow flow = { .size = sizeof(flow) };
	int ifindex, fd, ret = 1;
	uint32_t queue;
	char *end;

	if (argc != 5) {
		fprintf(stderr, "usage: recv-checksum IFNAME ADDRESS PORT QUEUE\n");
		return 2;
	}
	queue = strtoul(argv[4], &end, 10);
	ifindex = devmem_ifindex(argv[1]);
	if (ifindex < 0 || *end || end == argv[4] ||
	    devmem_flow_parse(&flow, argv[2], NULL, argv[3]) < 0) {
		fprintf(stderr, "recv-checksum: %s\n",
			*end || end == argv[4] ? "bad queue" : devmem_last_error());
		return 2;
	}
	crc32_init();

	if (devmem_nic_new(&nic, ifindex) < 0 ||
	    devmem_nic_setup(nic, queue, queue, &flow) < 0 ||
	    devmem_dmabuf_new_udmabuf(&db, DMABUF_SIZE) < 0 ||
	    devmem_binding_new_rx(&b, ifindex, &queue, 1,
				  devmem_dmabuf_fd(db)) < 0) {
		fprintf(stderr, "set-up: %s\n", devmem_last_error());
		goto out;
	}
	fd = accept_one(argv[2], argv[3], DMABUF_SIZE / 4);
	if (fd >= 0) {
		ret = receive(fd, db, b) < 0;
		close(fd);
	}
out:
	/* unbind first: header split must stay on while queues are bound */
	devmem_binding_free(b);
	if (nic && devmem_nic_restore(nic) < 0) {
		fprintf(stderr, "restore: %s\n", devmem_last_error());
		ret = 1;
	}
	devmem_nic_free(nic);
	devmem_dmabuf_free(db);
	return ret;
}
