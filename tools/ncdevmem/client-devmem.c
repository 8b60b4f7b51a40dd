// SPDX-License-Identifier: GPL-2.0
/*
 * ncdevmem client with -f: the stream sent from device memory, as
 * mainline's client sends it (netdev bind-tx, then sendmsg(MSG_ZEROCOPY)
 * with iovecs that are offsets into the dma-buf and its id in
 * SCM_DEVMEM_DMABUF), on libdevmem's devmem_sender.
 *
 * The dma-buf is a ring: stdin (or the pattern) is written at the head,
 * sent from there, and the tail moves on as the kernel reports sends
 * complete, in the order they were sent; only bytes past the tail are
 * ever overwritten. Before closing, the client waits for every send to
 * complete.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include <devmem.h>

#include "ncdevmem.h"

#define FILL_MAX	(1 << 20)	/* bytes written, then sent, at a time */
#define MAX_SPANS	1024		/* spans per devmem_send(): UIO_MAXIOV */
#define REAP_MAX	256		/* spans per devmem_sender_reap() */
#define WAIT_MS		1000		/* a blocking reap, between signal checks */

struct dmclient {
	const struct config *cfg;
	struct devmem_dmabuf *db;
	struct devmem_binding *binding;
	struct devmem_sender *snd;
	uint8_t *map;			/* the dma-buf, mapped for writing */
	size_t size;
	int fd;

	/* stream bytes written and completed: the ring holds [tail, head) */
	uint64_t head, tail;
	struct pattern *pat;		/* -b */
	bool eof;
	struct devmem_span spans[MAX_SPANS];
	struct devmem_span done[REAP_MAX];
	struct client_stats st;
	struct progress pr;
	int status;			/* with st.failure */
	char why[512];
};

static int failf(struct dmclient *c, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Record the first failure (and say it on stderr); returns -1. */
static int failf(struct dmclient *c, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	note_failure(&c->st.failure, &c->status, c->why, sizeof(c->why),
		     status, fmt, ap);
	va_end(ap);
	return -1;
}

/* Errors that mean "this system cannot do it", not "it went wrong". */
static bool is_capability(int err)
{
	return err == -EOPNOTSUPP || err == -ENOENT || err == -EPERM ||
	       err == -ENODEV;
}

static int dmabuf_sync(struct dmclient *c, uint64_t flags)
{
	struct dma_buf_sync sync = { .flags = flags | DMA_BUF_SYNC_WRITE };

	while (ioctl(devmem_dmabuf_fd(c->db), DMA_BUF_IOCTL_SYNC, &sync))
		if (errno != EINTR)
			return failf(c, EXIT_FAIL, "DMA_BUF_IOCTL_SYNC: %s",
				     strerror(errno));
	return 0;
}

/* The dma-buf, mapped, and bound for tx on -f. */
static int setup(struct dmclient *c)
{
	const struct config *cfg = c->cfg;
	const char *what = cfg->provider == DMABUF_HEAP ? "dma-heap" : "udmabuf";
	int ifindex, err;

	ifindex = devmem_ifindex(cfg->ifname);
	if (ifindex < 0)
		return failf(c, EXIT_FAIL, "%s: %s", cfg->ifname,
			     devmem_last_error());
	if (cfg->provider == DMABUF_HEAP)
		err = devmem_dmabuf_new_heap(&c->db, cfg->heap, cfg->dmabuf_size);
	else
		err = devmem_dmabuf_new_udmabuf(&c->db, cfg->dmabuf_size);
	if (err)
		return failf(c, is_capability(err) ? EXIT_SKIP : EXIT_FAIL,
			     "%s dma-buf of %zu bytes: %s", what,
			     cfg->dmabuf_size, devmem_last_error());
	c->size = devmem_dmabuf_size(c->db);
	c->map = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      devmem_dmabuf_fd(c->db), 0);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		return failf(c, EXIT_FAIL, "mmap of the dma-buf: %s",
			     strerror(errno));
	}
	err = devmem_binding_new_tx(&c->binding, ifindex,
				    devmem_dmabuf_fd(c->db));
	if (err)
		return failf(c, is_capability(err) ? EXIT_SKIP : EXIT_FAIL,
			     "bind-tx %s: %s", cfg->ifname, devmem_last_error());
	c->st.dmabuf_id = devmem_binding_id(c->binding);
	return 0;
}

/* Completions: the tail moves on by the bytes of each span reported. */
static int reap(struct dmclient *c, int timeout_ms)
{
	ssize_t n, i;

	n = devmem_sender_reap(c->snd, c->done, REAP_MAX, timeout_ms);
	if (n == -EINTR)
		return 0;
	if (n < 0)
		return failf(c, EXIT_FAIL, "tx completions: %s",
			     devmem_last_error());
	for (i = 0; i < n; i++) {
		/* in the order sent: each starts where the tail is */
		if (c->done[i].offset != c->tail % c->size)
			return failf(c, EXIT_FAIL,
				     "tx completion of [%llu, +%llu) where [%llu, ...) was due",
				     (unsigned long long)c->done[i].offset,
				     (unsigned long long)c->done[i].len,
				     (unsigned long long)(c->tail % c->size));
		c->tail += c->done[i].len;
		c->st.completed += c->done[i].len;
	}
	if (c->tail > c->head)
		return failf(c, EXIT_FAIL, "tx completions for %llu bytes, %llu were sent",
			     (unsigned long long)c->tail,
			     (unsigned long long)c->head);
	return 0;
}

/* Up to @room bytes into the ring at the head: how many (0: the end). */
static ssize_t fill(struct dmclient *c, size_t room)
{
	uint8_t *dst = c->map + c->head % c->size;
	size_t n, done;
	ssize_t r;

	if (c->pat) {
		if (room > c->cfg->bytes - c->head)
			room = c->cfg->bytes - c->head;
		for (done = 0; done < room; done += n) {
			n = room - done;
			if (n > PATTERN_REF_SPAN)
				n = PATTERN_REF_SPAN;
			memcpy(dst + done, pattern_at(c->pat, c->head + done), n);
		}
		return room;
	}
	for (;;) {
		r = read(STDIN_FILENO, dst, room);
		if (r >= 0)
			return r;
		if (errno != EINTR || stop_requested)
			return failf(c, EXIT_FAIL, "stdin: %s", stop_requested ?
				     "interrupted" : strerror(errno));
	}
}

/* Bytes [@off, @off + @len) of the ring, -z CHUNK bytes a span at most. */
static int send_range(struct dmclient *c, uint64_t off, size_t len)
{
	size_t chunk = c->cfg->chunk ? c->cfg->chunk : len;
	size_t nr, i, first = 0;
	uint64_t left;
	ssize_t n;

	for (nr = 0; nr * chunk < len; nr++) {
		c->spans[nr].offset = off + nr * chunk;
		c->spans[nr].len = len - nr * chunk < chunk ? len - nr * chunk : chunk;
	}
	c->st.spans += nr;
	while (first < nr) {
		if (stop_requested)
			return failf(c, EXIT_FAIL, "interrupted");
		n = devmem_send(c->snd, c->spans + first, nr - first, 0);
		if (n == -EINTR)
			continue;
		if (n == -ENOBUFS) {
			/* the socket's memory for zerocopy reports is full */
			if (reap(c, WAIT_MS))
				return -1;
			continue;
		}
		if (n < 0)
			return failf(c, EXIT_FAIL, "sendmsg(MSG_ZEROCOPY) from dma-buf %u: %s",
				     c->st.dmabuf_id, devmem_last_error());
		c->st.bytes += n;
		/* a signal may cut the send short: the rest goes again */
		for (i = first, left = n; i < nr && left; i++) {
			if (left < c->spans[i].len) {
				c->spans[i].offset += left;
				c->spans[i].len -= left;
				break;
			}
			left -= c->spans[i].len;
			first++;
		}
	}
	return 0;
}

static void stream(struct dmclient *c)
{
	size_t room, max = FILL_MAX;
	ssize_t n;

	/* MAX_SPANS spans a send at most */
	if (c->cfg->chunk && max > (size_t)c->cfg->chunk * MAX_SPANS)
		max = (size_t)c->cfg->chunk * MAX_SPANS;
	while (!c->eof) {
		if (stop_requested) {
			failf(c, EXIT_FAIL, "interrupted");
			return;
		}
		/* the free space up to the end of the buffer, or none */
		room = c->size - (c->head - c->tail);
		if (room > c->size - c->head % c->size)
			room = c->size - c->head % c->size;
		if (room > max)
			room = max;
		if (!room) {
			if (reap(c, WAIT_MS))
				return;
			continue;
		}
		if (dmabuf_sync(c, DMA_BUF_SYNC_START))
			return;
		n = fill(c, room);
		if (dmabuf_sync(c, DMA_BUF_SYNC_END) || n < 0)
			return;
		if (!n) {
			c->eof = true;
			break;
		}
		c->head += n;
		if (send_range(c, (c->head - n) % c->size, n))
			return;
		/* whatever has completed meanwhile, without waiting */
		if (reap(c, 0))
			return;
		progress_tick(&c->pr, "sent", c->st.bytes, 0, false);
	}
	while (c->tail < c->head) {
		if (stop_requested) {
			failf(c, EXIT_FAIL, "interrupted with %llu bytes sent and not completed",
			      (unsigned long long)(c->head - c->tail));
			return;
		}
		if (reap(c, WAIT_MS))
			return;
	}
}

int run_client_devmem(const struct config *cfg)
{
	struct dmclient c = { .cfg = cfg, .fd = -1 };
	double t0 = now_s();
	int err;

	if (cfg->has_bytes) {
		c.pat = malloc(sizeof(*c.pat));
		if (!c.pat) {
			msg("out of memory");
			return EXIT_FAIL;
		}
		pattern_init(c.pat, pattern_period(cfg->period));
	}
	/* netlink requests are not to be cut short by a signal (EINTR) */
	signals_hold(true);
	err = setup(&c);
	signals_hold(false);
	if (err)
		goto out;
	c.fd = client_connect(cfg);
	if (c.fd < 0) {
		c.st.failure = "connect failed";
		c.status = EXIT_FAIL;
		goto out;
	}
	err = devmem_sender_new(&c.snd, c.fd, c.binding);
	if (err) {
		failf(&c, EXIT_FAIL, "SO_ZEROCOPY: %s", devmem_last_error());
		goto out;
	}
	msg("sending to %s port %s from dma-buf %u (%zu bytes), bound for tx on %s",
	    cfg->server_ip, cfg->port, c.st.dmabuf_id, c.size, cfg->ifname);
	t0 = now_s();
	progress_init(&c.pr, cfg->progress, t0);
	stream(&c);
	if (!c.st.failure)
		client_finish(c.fd, &c.st);
	c.st.secs = now_s() - t0;
	if (c.st.failure && !c.status)
		c.status = EXIT_FAIL;
	client_summary(cfg, &c.st);
out:
	devmem_sender_free(c.snd);
	if (c.fd >= 0)
		close(c.fd);
	/* sends still in flight keep their memory until they complete */
	devmem_binding_free(c.binding);
	if (c.map)
		munmap(c.map, c.size);
	devmem_dmabuf_free(c.db);
	free(c.pat);
	return c.st.failure ? c.status : EXIT_PASS;
}
