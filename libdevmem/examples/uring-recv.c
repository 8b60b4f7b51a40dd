// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * uring-recv: receive one TCP stream into device memory on the program's
 * own io_uring ring and write it to standard output.
 *
 *   uring-recv IFNAME ADDRESS PORT QUEUE > FILE
 *
 * The device must be set up already ("devmemctl setup dev IFNAME queues
 * QUEUE flow tcp4 dst ADDRESS port PORT", or the nic-setup example):
 * this binds a 2 MiB udmabuf to rx queue QUEUE, accepts one connection on
 * ADDRESS:PORT and receives until the peer closes. Each receive is an
 * IORING_OP_RECVMSG submission on the program's ring that libdevmem
 * prepares (devmem_urecv_prep) and whose completion it reads
 * (devmem_urecv_complete); the program owns the ring and could put its
 * other I/O on it. The stream goes to standard output in order, host
 * bytes and dma-buf fragments as they come.
 *
 * Build: make (the Makefile here uses pkg-config, also for liburing).
 * Needs CAP_NET_ADMIN and /dev/udmabuf.
 */
#include <errno.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devmem.h>

#include "tcp-accept.h"

#define DMABUF_SIZE	(2U << 20)

/*
 * Write one receive's segments to standard output, in order: the
 * fragments straight from the library's mapping of the dma-buf, within
 * one CPU access.
 */
static int put_segments(const struct devmem_rx_result *res,
			struct devmem_dmabuf *db)
{
	const uint8_t *base;
	size_t i;
	int ret = 0;

	if (!res->nr_frags)
		base = NULL;
	else if (devmem_dmabuf_map(db, DEVMEM_ACCESS_READ, (void **)&base) < 0 ||
		 devmem_dmabuf_begin_access(db, DEVMEM_ACCESS_READ) < 0) {
		fprintf(stderr, "access: %s\n", devmem_last_error());
		return -1;
	}
	for (i = 0; i < res->nr_segs && !ret; i++) {
		const struct devmem_seg *s = &res->segs[i];
		const void *bytes = s->type == DEVMEM_SEG_DMABUF ?
			base + s->frag.offset : s->host;

		if (fwrite(bytes, 1, s->len, stdout) != s->len) {
			perror("write");
			ret = -1;
		}
	}
	if (base && devmem_dmabuf_end_access(db, DEVMEM_ACCESS_READ) < 0) {
		fprintf(stderr, "access: %s\n", devmem_last_error());
		ret = -1;
	}
	return ret;
}

/* One receive at a time on @ring until the peer closes. */
static int receive(struct io_uring *ring, int fd, struct devmem_dmabuf *db,
		   const struct devmem_binding *b)
{
	struct devmem_rx_result res = { .size = sizeof(res) };
	static uint8_t host[64 << 10];
	struct devmem_recycler *rc = NULL;
	struct devmem_urecv *r = NULL;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	ssize_t n = -1;
	int err;

	if (devmem_urecv_new(&r, 0, 0) < 0 ||
	    devmem_recycler_new(&rc, fd, devmem_binding_buffers(b)) < 0) {
		fprintf(stderr, "receive: %s\n", devmem_last_error());
		goto out;
	}
	for (;;) {
		sqe = io_uring_get_sqe(ring);
		if (!sqe || devmem_urecv_prep(r, sqe, fd, host, sizeof(host), 0) < 0) {
			fprintf(stderr, "prep: %s\n",
				sqe ? devmem_last_error() : "ring full");
			goto out;
		}
		/* tokens go back before a wait: the data it waits for may
		 * need their buffers
		 */
		if (devmem_recycler_flush(rc) < 0) {
			fprintf(stderr, "recycle: %s\n", devmem_last_error());
			goto out;
		}
		err = io_uring_submit_and_wait(ring, 1);
		if (err >= 0)
			err = io_uring_wait_cqe(ring, &cqe);
		if (err < 0) {
			fprintf(stderr, "io_uring: %s\n", strerror(-err));
			goto out;
		}
		n = devmem_urecv_complete(r, cqe, &res);
		io_uring_cqe_seen(ring, cqe);
		if (n == DEVMEM_URECV_RESUBMIT)
			continue;	/* the control buffer grew */
		if (n <= 0)
			break;
		if (put_segments(&res, db) < 0 ||
		    devmem_recycler_add_frags(rc, res.frags, res.nr_frags) < 0) {
			if (devmem_last_error()[0])
				fprintf(stderr, "recycle: %s\n", devmem_last_error());
			n = -1;
			goto out;
		}
	}
	if (n < 0)
		fprintf(stderr, "receive: %s\n", devmem_last_error());
	else if (fflush(stdout))
		n = -1;
out:
	devmem_recycler_free(rc);
	devmem_urecv_free(r);
	return n == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct devmem_binding *b = NULL;
	struct devmem_dmabuf *db = NULL;
	struct io_uring ring;
	int ifindex, fd, err, ret = 1;
	uint32_t queue;
	char *end;

	if (argc != 5) {
		fprintf(stderr, "usage: uring-recv IFNAME ADDRESS PORT QUEUE > FILE\n");
		return 2;
	}
	queue = strtoul(argv[4], &end, 10);
	if (*end || end == argv[4]) {
		fprintf(stderr, "uring-recv: bad queue %s\n", argv[4]);
		return 2;
	}
	ifindex = devmem_ifindex(argv[1]);
	if (ifindex < 0) {
		fprintf(stderr, "uring-recv: %s\n", devmem_last_error());
		return 2;
	}
	err = io_uring_queue_init(8, &ring, 0);
	if (err < 0) {
		fprintf(stderr, "io_uring: %s\n", strerror(-err));
		return 1;
	}
	if (devmem_dmabuf_new_udmabuf(&db, DMABUF_SIZE) < 0 ||
	    devmem_binding_new_rx(&b, ifindex, &queue, 1,
				  devmem_dmabuf_fd(db)) < 0) {
		fprintf(stderr, "set-up: %s\n", devmem_last_error());
		goto out;
	}
	fd = accept_one(argv[2], argv[3], DMABUF_SIZE / 4);
	if (fd >= 0) {
		ret = receive(&ring, fd, db, b) < 0;
		close(fd);
	}
out:
	devmem_binding_free(b);
	devmem_dmabuf_free(db);
	io_uring_queue_exit(&ring);
	return ret;
}
