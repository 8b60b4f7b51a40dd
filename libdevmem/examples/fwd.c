// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * fwd: forward one TCP stream from one device to another through device
 * memory, the payload never copied by the CPU.
 *
 *   fwd IFNAME ADDRESS PORT QUEUE OUT_IFNAME DEST_ADDRESS DEST_PORT [BUF_SIZE]
 *
 * Sets IFNAME up for device-memory TCP as recv-checksum does, binds one
 * 8 MiB udmabuf to its rx queue QUEUE and, for sending, to OUT_IFNAME,
 * connects to DEST_ADDRESS:DEST_PORT through OUT_IFNAME, accepts one
 * connection on ADDRESS:PORT and forwards it until the peer closes.
 * With BUF_SIZE (a power of two above the page size, such as 16384) the
 * udmabuf is of 2 MiB huge pages and the receive buffers are BUF_SIZE
 * bytes each (an rx page size; vm.nr_hugepages must hold 4 free pages).
 * Each fragment received into the dma-buf is sent on from where it
 * landed (a devmem_span of the same bytes); its token goes back to the
 * receiving socket only once the send is reported complete, since until
 * then the device may still read the buffer. Bytes a receive left in
 * host memory go out with a plain send() on the same socket, between the
 * device-memory sends, so the stream keeps its order.
 *
 * Build: make (the Makefile here uses pkg-config).
 * Needs CAP_NET_ADMIN, /dev/udmabuf, and an OUT_IFNAME that can send
 * from device memory.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devmem.h>

#include "tcp-accept.h"

#define DMABUF_SIZE	(8U << 20)
/* Fragments sent and not complete, at most: each holds a buffer of the
 * dma-buf, and a buffer may hold more than one.
 */
#define MAX_FRAGS	(4 * DMABUF_SIZE / 4096)
#define MAX_SPANS	256	/* fragments per devmem_send() */

/* Fragments sent and not yet complete, oldest first: a ring. */
static struct devmem_frag fifo[MAX_FRAGS];
static uint64_t fifo_head, fifo_tail;
static uint32_t fifo_done;	/* bytes of the oldest already complete */

/* Hand back the tokens of fragments whose sends have completed. */
static int reap(struct devmem_sender *snd, struct devmem_recycler *rc,
		int timeout_ms)
{
	struct devmem_span done[64];
	ssize_t n, i;
	uint64_t len;

	n = devmem_sender_reap(snd, done, 64, timeout_ms);
	if (n < 0) {
		fprintf(stderr, "reap: %s\n", devmem_last_error());
		return -1;
	}
	/* completions come in send order: they finish the oldest first */
	for (i = 0; i < n; i++) {
		for (len = done[i].len; len; ) {
			struct devmem_frag *f = &fifo[fifo_tail % MAX_FRAGS];
			uint32_t take = f->size - fifo_done;

			if (take > len)
				take = len;
			len -= take;
			fifo_done += take;
			if (fifo_done < f->size)
				break;
			if (devmem_recycler_add(rc, f->token) < 0) {
				fprintf(stderr, "recycle: %s\n", devmem_last_error());
				return -1;
			}
			fifo_tail++;
			fifo_done = 0;
		}
	}
	return 0;
}

/* Send @nr spans (maybe none) from the dma-buf, all of their bytes. */
static int send_spans(struct devmem_sender *snd, struct devmem_recycler *rc,
		      struct devmem_span *spans, size_t nr)
{
	ssize_t n;

	while (nr) {
		n = devmem_send(snd, spans, nr, MSG_NOSIGNAL);
		if (n == -ENOBUFS) {
			/* too many sends await their reports: reap some */
			if (reap(snd, rc, -1) < 0)
				return -1;
			continue;
		}
		if (n < 0) {
			fprintf(stderr, "send: %s\n", devmem_last_error());
			return -1;
		}
		/* fewer bytes when a later sendmsg() failed: send the rest */
		for (; nr && (uint64_t)n >= spans->len; spans++, nr--)
			n -= spans->len;
		if (nr) {
			spans->offset += n;
			spans->len -= n;
		}
	}
	return 0;
}

/* One receive's segments on to @out, in order. */
static int forward(int out, struct devmem_sender *snd,
		   struct devmem_recycler *rc, const struct devmem_rx_result *res)
{
	struct devmem_span spans[MAX_SPANS];
	size_t i, nr = 0;

	for (i = 0; i < res->nr_segs; i++) {
		const struct devmem_seg *s = &res->segs[i];

		if (s->type == DEVMEM_SEG_DMABUF) {
			if (fifo_head - fifo_tail == MAX_FRAGS) {
				/* full: send what is queued, wait for the oldest */
				if (send_spans(snd, rc, spans, nr) < 0 ||
				    reap(snd, rc, -1) < 0)
					return -1;
				nr = 0;
			}
			fifo[fifo_head++ % MAX_FRAGS] = s->frag;
			spans[nr].offset = s->frag.offset;
			spans[nr++].len = s->len;
			if (nr == MAX_SPANS) {
				if (send_spans(snd, rc, spans, nr) < 0)
					return -1;
				nr = 0;
			}
			continue;
		}
		/* host bytes: after the fragments before them */
		if (send_spans(snd, rc, spans, nr) < 0)
			return -1;
		nr = 0;
		if (send(out, s->host, s->len, MSG_NOSIGNAL) != (ssize_t)s->len) {
			perror("send");
			return -1;
		}
	}
	return send_spans(snd, rc, spans, nr);
}

static int run(int in, int out, const struct devmem_binding *rxb,
	       const struct devmem_binding *txb)
{
	struct devmem_rx_result res = { .size = sizeof(res) };
	static uint8_t host[64 << 10];
	struct devmem_recycler *rc = NULL;
	struct devmem_sender *snd = NULL;
	struct devmem_rx *rx = NULL;
	struct pollfd pfd[2] = { { .fd = in, .events = POLLIN }, { .fd = out } };
	uint64_t total = 0, dev = 0;
	int ret = -1;
	ssize_t n;

	if (devmem_rx_new(&rx, 0, 0) < 0 ||
	    devmem_recycler_new(&rc, in, devmem_binding_buffers(rxb)) < 0 ||
	    devmem_rx_set_recycler(rx, rc) < 0 ||
	    devmem_sender_new(&snd, out, txb) < 0) {
		fprintf(stderr, "set-up: %s\n", devmem_last_error());
		goto out;
	}
	for (;;) {
		/* completions (POLLERR on out) and data; a held token
		 * keeps a receive buffer, so completions must not wait
		 */
		if (poll(pfd, 2, -1) < 0) {
			perror("poll");
			goto out;
		}
		if ((pfd[1].revents & POLLERR) && reap(snd, rc, 0) < 0)
			goto out;
		if (pfd[1].revents & POLLHUP) {
			fprintf(stderr, "send: the destination closed\n");
			goto out;
		}
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = devmem_recv(rx, in, host, sizeof(host), 0, &res);
		if (n <= 0)
			break;
		if (forward(out, snd, rc, &res) < 0)
			goto out;
		total += n;
		dev += res.dmabuf_bytes;
	}
	if (n < 0) {
		fprintf(stderr, "receive: %s\n", devmem_last_error());
		goto out;
	}
	while (fifo_tail < fifo_head)
		if (reap(snd, rc, -1) < 0)
			goto out;
	if (devmem_recycler_flush(rc) < 0) {
		fprintf(stderr, "recycle: %s\n", devmem_last_error());
		goto out;
	}
	printf("%llu bytes forwarded, %llu from device memory\n",
	       (unsigned long long)total, (unsigned long long)dev);
	ret = 0;
out:
	devmem_sender_free(snd);
	devmem_recycler_free(rc);
	devmem_rx_free(rx);
	return ret;
}

int main(int argc, char **argv)
{
	struct devmem_binding *rxb = NULL, *txb = NULL;
	struct devmem_flow flow = { .size = sizeof(flow) };
	struct devmem_dmabuf *db = NULL;
	struct devmem_nic *nic = NULL;
	int ifindex, out_ifindex, in = -1, out = -1, ret = 1;
	unsigned long buf_size = 0;
	uint32_t queue;
	char *end;

	if (argc != 8 && argc != 9) {
		fprintf(stderr, "usage: fwd IFNAME ADDRESS PORT QUEUE OUT_IFNAME DEST_ADDRESS DEST_PORT [BUF_SIZE]\n");
		return 2;
	}
	if (argc == 9) {
		buf_size = strtoul(argv[8], &end, 10);
		if (*end || end == argv[8] || !buf_size) {
			fprintf(stderr, "fwd: bad buffer size\n");
			return 2;
		}
	}
	queue = strtoul(argv[4], &end, 10);
	if (*end || end == argv[4]) {
		fprintf(stderr, "fwd: bad queue\n");
		return 2;
	}
	ifindex = devmem_ifindex(argv[1]);
	out_ifindex = ifindex < 0 ? ifindex : devmem_ifindex(argv[5]);
	if (out_ifindex < 0 ||
	    devmem_flow_parse(&flow, argv[2], NULL, argv[3]) < 0) {
		fprintf(stderr, "fwd: %s\n", devmem_last_error());
		return 2;
	}

	if (devmem_nic_new(&nic, ifindex) < 0 ||
	    devmem_nic_setup(nic, queue, queue, &flow) < 0 ||
	    (buf_size ? devmem_dmabuf_new_udmabuf_huge(&db, DMABUF_SIZE) :
			devmem_dmabuf_new_udmabuf(&db, DMABUF_SIZE)) < 0 ||
	    devmem_binding_new_rx_sized(&rxb, ifindex, &queue, 1,
					devmem_dmabuf_fd(db), buf_size) < 0 ||
	    devmem_binding_new_tx(&txb, out_ifindex, devmem_dmabuf_fd(db)) < 0) {
		fprintf(stderr, "set-up: %s\n", devmem_last_error());
		goto out;
	}
	out = connect_via(argv[5], argv[6], argv[7]);
	if (out >= 0)
		in = accept_one(argv[2], argv[3], DMABUF_SIZE / 4);
	if (in >= 0)
		ret = run(in, out, rxb, txb) < 0;
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	/* sends in flight keep their memory until they complete */
	devmem_binding_free(txb);
	/* unbind first: header split must stay on while queues are bound */
	devmem_binding_free(rxb);
	if (nic && devmem_nic_restore(nic) < 0) {
		fprintf(stderr, "restore: %s\n", devmem_last_error());
		ret = 1;
	}
	devmem_nic_free(nic);
	devmem_dmabuf_free(db);
	return ret;
}
