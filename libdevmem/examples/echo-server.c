// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * echo-server: a small multi-connection server on device memory. Each
 * connection's bytes land in a dma-buf, are checked there by the CPU and
 * go back to the client from where they landed.
 *
 *   echo-server IFNAME ADDRESS PORT QUEUE CONNECTIONS
 *
 * Sets IFNAME up for device-memory TCP (header split on, rx queue QUEUE
 * out of RSS, TCP to ADDRESS:PORT steered to QUEUE), binds one 8 MiB
 * udmabuf to QUEUE for receiving and to IFNAME for sending, and serves
 * CONNECTIONS connections on ADDRESS:PORT, up to 16 at once, then puts
 * the device back. Every connection has one receive in flight on the
 * library's io_uring ring, its recycler linked to the ring. Each receive:
 *
 *  - its bytes go into the connection's CRC-32 (zlib's) in stream order,
 *    the fragments read in place through the library's mapping of the
 *    dma-buf, within one CPU access;
 *  - its fragments go back to the client from the dma-buf, tagged with
 *    the receive's number, and bytes the card left in host memory with
 *    send() between them, so the echo keeps the stream's order;
 *  - its tokens go back to the kernel once every send of that number has
 *    completed, since until then the card may still read the buffers.
 *
 * When a client has sent everything (it shuts its side down) and all of
 * the echo is complete, the server prints "BYTES bytes, crc32 CRC" for
 * the connection and closes it; at the end, a summary.
 *
 * Build: make (the Makefile here uses pkg-config).
 * Needs CAP_NET_ADMIN, /dev/udmabuf, and a device that can send from
 * device memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devmem.h>

#include "crc32.h"
#include "tcp-accept.h"

#define DMABUF_SIZE	(8U << 20)
#define MAX_CONNS	16
#define MAX_SPANS	256	/* fragments per devmem_send_tagged() */
#define MAX_BATCHES	1024	/* receives echoed and not complete */

/*
 * The tokens of one receive's fragments, and its sends not complete,
 * plus one while the receive is still being sent.
 */
struct batch {
	uint32_t *tokens;
	size_t nr;
	unsigned int refs;
};

struct conn {
	int fd;				/* -1: a free slot */
	struct devmem_recycler *rc;
	struct devmem_sender *snd;
	struct batch batches[MAX_BATCHES];
	uint64_t head, tail;		/* receives echoed; complete */
	uint64_t bytes, dev;
	uint32_t crc;
	uint8_t host[64 << 10];		/* host-memory bytes of a receive */
};

static struct conn conns[MAX_CONNS];
static struct devmem_dmabuf *db;
static const uint8_t *base;	/* db, mapped */
/* Drop a reference to batch @tag; the last one hands its tokens back. */
static int batch_put(struct conn *c, uint64_t tag)
{
	struct batch *b = &c->batches[tag % MAX_BATCHES];
	size_t k;

	if (--b->refs)
		return 0;
	for (k = 0; k < b->nr; k++)
		if (devmem_recycler_add(c->rc, b->tokens[k]) < 0) {
			fprintf(stderr, "recycle: %s\n", devmem_last_error());
			return -1;
		}
	free(b->tokens);
	b->tokens = NULL;
	while (c->tail < c->head && !c->batches[c->tail % MAX_BATCHES].refs)
		c->tail++;
	return 0;
}

/* Completions of @c's sends: the tokens of complete receives go back. */
static int reap(struct conn *c, int timeout_ms)
{
	struct devmem_send_completion done[64];
	ssize_t n, i;

	n = devmem_sender_reap_tagged(c->snd, done, 64, timeout_ms);
	if (n < 0) {
		fprintf(stderr, "reap: %s\n", devmem_last_error());
		return -1;
	}
	for (i = 0; i < n; i++)
		if (batch_put(c, done[i].tag) < 0)
			return -1;
	return 0;
}

/* Send all of @nr spans (maybe none) as part of receive @tag. */
static int send_spans(struct conn *c, struct devmem_span *spans, size_t nr,
		      uint64_t tag)
{
	ssize_t n;

	while (nr) {
		n = devmem_send_tagged(c->snd, spans, nr, MSG_NOSIGNAL, tag);
		if (n == -ENOBUFS) {
			/* too many sends await their reports: reap some */
			if (reap(c, -1) < 0)
				return -1;
			continue;
		}
		if (n < 0) {
			fprintf(stderr, "send: %s\n", devmem_last_error());
			return -1;
		}
		c->batches[tag % MAX_BATCHES].refs++;
		for (; nr && (uint64_t)n >= spans->len; spans++, nr--)
			n -= spans->len;
		if (nr) {
			spans->offset += n;
			spans->len -= n;
		}
	}
	return 0;
}

/* One receive: check it in place, echo it, keep its tokens until then. */
static int serve(struct conn *c, const struct devmem_rx_result *res)
{
	struct devmem_span spans[MAX_SPANS];
	uint64_t tag = c->head;
	struct batch *b;
	size_t i, nr = 0;

	if (res->nr_frags &&
	    devmem_dmabuf_begin_access(db, DEVMEM_ACCESS_READ) < 0) {
		fprintf(stderr, "access: %s\n", devmem_last_error());
		return -1;
	}
	for (i = 0; i < res->nr_segs; i++) {
		const struct devmem_seg *s = &res->segs[i];

		c->crc = crc32_update(c->crc, s->type == DEVMEM_SEG_HOST ?
				      s->host : base + s->frag.offset, s->len);
	}
	if (res->nr_frags &&
	    devmem_dmabuf_end_access(db, DEVMEM_ACCESS_READ) < 0) {
		fprintf(stderr, "access: %s\n", devmem_last_error());
		return -1;
	}
	c->bytes += res->host_bytes + res->dmabuf_bytes;
	c->dev += res->dmabuf_bytes;
	if (!res->nr_frags) {
		if (send(c->fd, c->host, res->host_bytes, MSG_NOSIGNAL) !=
		    (ssize_t)res->host_bytes) {
			perror("send");
			return -1;
		}
		return 0;
	}

	while (c->head - c->tail == MAX_BATCHES)
		if (reap(c, -1) < 0)
			return -1;
	b = &c->batches[tag % MAX_BATCHES];
	b->nr = res->nr_frags;
	b->refs = 1;	/* dropped once all of it is sent */
	b->tokens = malloc(b->nr * sizeof(*b->tokens));
	if (!b->tokens) {
		perror("malloc");
		return -1;
	}
	for (i = 0; i < b->nr; i++)
		b->tokens[i] = res->frags[i].token;
	c->head++;

	for (i = 0; i < res->nr_segs; i++) {
		const struct devmem_seg *s = &res->segs[i];

		if (s->type == DEVMEM_SEG_DMABUF) {
			spans[nr].offset = s->frag.offset;
			spans[nr++].len = s->len;
			if (nr == MAX_SPANS) {
				if (send_spans(c, spans, nr, tag) < 0)
					return -1;
				nr = 0;
			}
			continue;
		}
		/* host bytes: after the fragments before them */
		if (send_spans(c, spans, nr, tag) < 0)
			return -1;
		nr = 0;
		if (send(c->fd, s->host, s->len, MSG_NOSIGNAL) != (ssize_t)s->len) {
			perror("send");
			return -1;
		}
	}
	if (send_spans(c, spans, nr, tag) < 0)
		return -1;
	return batch_put(c, tag);
}

/* A new connection in a free slot: its recycler, sender, first receive. */
static int conn_open(struct devmem_uring *u, int fd,
		     const struct devmem_binding *rxb,
		     const struct devmem_binding *txb)
{
	struct conn *c;
	int i;

	for (i = 0; i < MAX_CONNS && conns[i].fd >= 0; i++)
		;
	c = &conns[i];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	if (devmem_recycler_new(&c->rc, fd, devmem_binding_buffers(rxb)) < 0 ||
	    devmem_sender_new(&c->snd, fd, txb) < 0 ||
	    devmem_uring_set_recycler(u, fd, c->rc) < 0 ||
	    devmem_uring_submit(u, fd, c->host, sizeof(c->host), 0, i) < 0) {
		fprintf(stderr, "connection: %s\n", devmem_last_error());
		return -1;
	}
	return 0;
}

/*
 * Free a connection's slot. Sends not complete keep their memory until
 * they are (the kernel holds the binding); tokens not handed back go
 * back when the socket closes.
 */
static void conn_free(struct conn *c)
{
	uint64_t t;

	for (t = c->tail; t < c->head; t++)
		free(c->batches[t % MAX_BATCHES].tokens);
	devmem_sender_free(c->snd);
	devmem_recycler_free(c->rc);
	close(c->fd);
	c->fd = -1;
}

/* The client is done sending: finish the echo, say what came, close. */
static int conn_close(struct devmem_uring *u, struct conn *c)
{
	int ret = 0;

	while (c->tail < c->head && !ret)
		ret = reap(c, -1);
	if (!ret && devmem_recycler_flush(c->rc) < 0) {
		fprintf(stderr, "recycle: %s\n", devmem_last_error());
		ret = -1;
	}
	if (!ret)
		printf("%llu bytes, crc32 %08x\n", (unsigned long long)c->bytes,
		       c->crc);
	devmem_uring_set_recycler(u, c->fd, NULL);
	conn_free(c);
	return ret;
}

/*
 * Serve @total connections. The ring's completions are read without
 * waiting (which hands the linked recyclers' tokens back when none is
 * ready); poll() then waits for a completion, a connection, or a send
 * report (POLLERR on a connection's socket), so that no receive waits on
 * buffers whose sends are already complete.
 */
static int run(int lfd, unsigned int total, const struct devmem_binding *rxb,
	       const struct devmem_binding *txb)
{
	struct devmem_uring_completion cq = { .size = sizeof(cq) };
	struct pollfd pfd[2 + MAX_CONNS];
	unsigned int accepted = 0, closed = 0, open = 0;
	uint64_t bytes = 0, dev = 0;
	struct devmem_uring *u;
	struct conn *c;
	int i, fd, err, ret = -1;

	if (devmem_uring_new(&u, MAX_CONNS, 0, 0) < 0) {
		fprintf(stderr, "ring: %s\n", devmem_last_error());
		return -1;
	}
	while (closed < total) {
		while (!(err = devmem_uring_peek(u, &cq))) {
			c = &conns[cq.user_data];
			if (cq.ret < 0) {
				fprintf(stderr, "receive: %s\n", devmem_last_error());
				goto out;
			}
			if (!cq.ret) {
				bytes += c->bytes;
				dev += c->dev;
				if (conn_close(u, c) < 0)
					goto out;
				open--;
				closed++;
				continue;
			}
			if (serve(c, &cq.rx) < 0 || reap(c, 0) < 0 ||
			    devmem_uring_submit(u, c->fd, c->host, sizeof(c->host),
						0, cq.user_data) < 0)
				goto out;
		}
		if (err != -EAGAIN && err != -ENOENT) {
			fprintf(stderr, "ring: %s\n", devmem_last_error());
			goto out;
		}
		if (closed == total)
			break;

		pfd[0] = (struct pollfd){ .fd = devmem_uring_fd(u), .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = accepted < total && open < MAX_CONNS ?
					  lfd : -1, .events = POLLIN };
		for (i = 0; i < MAX_CONNS; i++)
			pfd[2 + i] = (struct pollfd){ .fd = conns[i].fd };
		if (poll(pfd, 2 + MAX_CONNS, -1) < 0) {
			perror("poll");
			goto out;
		}
		for (i = 0; i < MAX_CONNS; i++)
			if ((pfd[2 + i].revents & POLLERR) && reap(&conns[i], 0) < 0)
				goto out;
		if (pfd[1].revents & POLLIN) {
			fd = accept(lfd, NULL, NULL);
			if (fd < 0) {
				perror("accept");
				goto out;
			}
			if (conn_open(u, fd, rxb, txb) < 0)
				goto out;
			accepted++;
			open++;
		}
	}
	printf("%u connections: %llu bytes echoed, %llu of them from device memory\n",
	       total, (unsigned long long)bytes, (unsigned long long)dev);
	ret = 0;
out:
	/* cancels the receives in flight, then the connections can go */
	devmem_uring_free(u);
	for (i = 0; i < MAX_CONNS; i++)
		if (conns[i].fd >= 0)
			conn_free(&conns[i]);
	return ret;
}

int main(int argc, char **argv)
{
	struct devmem_binding *rxb = NULL, *txb = NULL;
	struct devmem_flow flow = { .size = sizeof(flow) };
	struct devmem_nic *nic = NULL;
	unsigned long total;
	int ifindex, lfd = -1, ret = 1, i;
	uint32_t queue;
	char *end;

	if (argc != 6) {
		fprintf(stderr, "usage: echo-server IFNAME ADDRESS PORT QUEUE CONNECTIONS\n");
		return 2;
	}
	queue = strtoul(argv[4], &end, 10);
	if (*end || end == argv[4]) {
		fprintf(stderr, "echo-server: bad queue\n");
		return 2;
	}
	total = strtoul(argv[5], &end, 10);
	if (*end || end == argv[5] || !total || total > 1000000) {
		fprintf(stderr, "echo-server: bad number of connections\n");
		return 2;
	}
	ifindex = devmem_ifindex(argv[1]);
	if (ifindex < 0 || devmem_flow_parse(&flow, argv[2], NULL, argv[3]) < 0) {
		fprintf(stderr, "echo-server: %s\n", devmem_last_error());
		return 2;
	}
	for (i = 0; i < MAX_CONNS; i++)
		conns[i].fd = -1;
	crc32_init();

	if (devmem_nic_new(&nic, ifindex) < 0 ||
	    devmem_nic_setup(nic, queue, queue, &flow) < 0 ||
	    devmem_dmabuf_new_udmabuf(&db, DMABUF_SIZE) < 0 ||
	    devmem_dmabuf_map(db, DEVMEM_ACCESS_READ, (void **)&base) < 0 ||
	    devmem_binding_new_rx(&rxb, ifindex, &queue, 1,
				  devmem_dmabuf_fd(db)) < 0 ||
	    devmem_binding_new_tx(&txb, ifindex, devmem_dmabuf_fd(db)) < 0) {
		fprintf(stderr, "set-up: %s\n", devmem_last_error());
		goto out;
	}
	/* the connections share the binding: a quarter of it among them */
	lfd = listen_on(argv[2], argv[3], DMABUF_SIZE / 4 / MAX_CONNS, MAX_CONNS,
			SOCK_NONBLOCK);
	if (lfd >= 0)
		ret = run(lfd, total, rxb, txb) < 0;
out:
	if (lfd >= 0)
		close(lfd);
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
