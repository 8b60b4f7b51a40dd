// SPDX-License-Identifier: GPL-2.0
/*
 * ncdevmem server: NIC set-up, a dma-buf bound to rx queues, one TCP
 * connection received with recvmsg(MSG_SOCK_DEVMEM).
 *
 * The stream is checked in order: devmem_recv() gives each receive as
 * segments in stream order, bytes the kernel copied into our buffer and
 * fragments left in the dma-buf. Fragments are read through
 * devmem_dmabuf_read(); tokens go back through a devmem_recycler.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <devmem.h>

#include "ncdevmem.h"

#define IOV_LEN		(2 << 20)	/* linear bytes and the receive's limit */
#define RX_FRAGS	4096		/* control buffer, in fragments, to start */
#define READ_CHUNK	(64 << 10)	/* dma-buf reads */

struct server {
	const struct config *cfg;
	int ifindex;
	uint32_t first, last;
	struct devmem_dmabuf *db;
	struct devmem_nic *nic;
	struct devmem_binding *binding;
	uint32_t binding_id;
	struct devmem_recycler *rc;
	int lfd, fd;
	FILE *out;			/* -o */
	FILE *trace;			/* --trace */
	bool validating;
	struct checker *chk;
	struct devmem_rx *rx;
	uint8_t *iov, *tmp;

	/* the stream */
	uint64_t off;			/* bytes so far */
	uint64_t dmabuf_bytes, frags, linear_bytes, plain_bytes;
	double t0, secs;
	struct progress pr;
	struct devmem_recycler_stats rs;

	/* the first failure; the run goes on only to count where that helps */
	const char *failure;
	int status;			/* EXIT_FAIL or EXIT_SKIP with failure */
	char why[512];
};

static int failf(struct server *s, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Record the first failure (and say it on stderr); returns -1. */
static int failf(struct server *s, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	note_failure(&s->failure, &s->status, s->why, sizeof(s->why), status,
		     fmt, ap);
	va_end(ap);
	return -1;
}

/* Errors that mean "this system cannot do it", not "it went wrong". */
static bool is_capability(int err)
{
	return err == -EOPNOTSUPP || err == -ENOENT || err == -EPERM ||
	       err == -ENODEV;
}

static int alloc_dmabuf(struct server *s)
{
	const struct config *cfg = s->cfg;
	const char *what;
	int err;

	switch (cfg->provider) {
	case DMABUF_HEAP:
		what = "dma-heap";
		err = devmem_dmabuf_new_heap(&s->db, cfg->heap, cfg->dmabuf_size);
		break;
	case DMABUF_CUDA:
		what = "CUDA";
		err = devmem_dmabuf_new_cuda(&s->db, cfg->cuda_device,
					 cfg->dmabuf_size);
		break;
	default:
		/* An rx page size above a page needs aligned SG entries. */
		if (cfg->rx_page_size > (uint32_t)getpagesize()) {
			what = "udmabuf (2M huge pages)";
			err = devmem_dmabuf_new_udmabuf_huge(&s->db,
							     cfg->dmabuf_size);
		} else {
			what = "udmabuf";
			err = devmem_dmabuf_new_udmabuf(&s->db,
							cfg->dmabuf_size);
		}
		break;
	}
	if (err)
		return failf(s, is_capability(err) ? EXIT_SKIP : EXIT_FAIL,
			     "%s dma-buf of %zu bytes: %s", what,
			     cfg->dmabuf_size, devmem_last_error());
	return 0;
}

/* The queues to bind: -t/-q, or the device's last -q rx queues. */
static int pick_queues(struct server *s)
{
	const struct config *cfg = s->cfg;
	struct devmem_queue *q = NULL;
	ssize_t n, i;
	long nrx = 0, first;

	n = devmem_queue_dump(&q, s->ifindex);
	if (n < 0) {
		if (n == -ENOENT)
			return failf(s, EXIT_SKIP, "no netdev netlink family in this kernel: %s",
				     devmem_last_error());
		return failf(s, EXIT_FAIL, "queue-get %s: %s", cfg->ifname,
			     devmem_last_error());
	}
	for (i = 0; i < n; i++)
		nrx += q[i].type == DEVMEM_QUEUE_RX;
	devmem_queue_dump_free(q);
	if (!nrx)
		return failf(s, EXIT_FAIL, "%s has no rx queues (is it up?)",
			     cfg->ifname);

	first = cfg->first_queue;
	if (first < 0) {
		first = nrx - cfg->queues;
		/* RSS needs at least one queue of its own */
		if (first < (cfg->no_setup ? 0 : 1))
			return failf(s, EXIT_FAIL,
				     "%s has %ld rx queues: too few to bind %d and keep one for RSS; give -t/-q",
				     cfg->ifname, nrx, cfg->queues);
	}
	if (first + cfg->queues > nrx)
		return failf(s, EXIT_FAIL, "queues %ld..%ld: %s has %ld rx queues",
			     first, first + cfg->queues - 1, cfg->ifname, nrx);
	s->first = first;
	s->last = first + cfg->queues - 1;
	return 0;
}

static int nic_setup(struct server *s)
{
	const struct config *cfg = s->cfg;
	struct devmem_flow flow = { .size = sizeof(flow) };
	int err;

	err = devmem_flow_parse(&flow, cfg->server_ip, cfg->client_ip,
				cfg->port);
	if (err)
		return failf(s, EXIT_FAIL, "flow: %s", devmem_last_error());
	err = devmem_nic_new(&s->nic, s->ifindex);
	if (err)
		return failf(s, is_capability(err) ? EXIT_SKIP : EXIT_FAIL,
			     "%s: %s", cfg->ifname, devmem_last_error());
	err = devmem_nic_setup(s->nic, s->first, s->last, &flow);
	if (err)
		return failf(s, is_capability(err) ? EXIT_SKIP : EXIT_FAIL,
			     "setting up %s for devmem TCP (queues %u..%u): %s",
			     cfg->ifname, s->first, s->last,
			     devmem_last_error());
	return 0;
}

static int bind_queues(struct server *s)
{
	uint32_t *queues;
	uint32_t i, n = s->last - s->first + 1;
	int err;

	queues = calloc(n, sizeof(*queues));
	if (!queues)
		return failf(s, EXIT_FAIL, "out of memory");
	for (i = 0; i < n; i++)
		queues[i] = s->first + i;
	err = devmem_binding_new_rx_sized(&s->binding, s->ifindex, queues, n,
					  devmem_dmabuf_fd(s->db),
					  s->cfg->rx_page_size);
	free(queues);
	if (err)
		return failf(s, is_capability(err) ? EXIT_SKIP : EXIT_FAIL,
			     "bind-rx %s queues %u..%u: %s", s->cfg->ifname,
			     s->first, s->last, devmem_last_error());
	s->binding_id = devmem_binding_id(s->binding);
	return 0;
}

static int listen_on(struct server *s)
{
	const struct config *cfg = s->cfg;
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV,
	};
	struct addrinfo *ai;
	int one = 1, err, fd;

	err = getaddrinfo(cfg->server_ip, cfg->port, &hints, &ai);
	if (err)
		return failf(s, EXIT_FAIL, "%s port %s: %s", cfg->server_ip,
			     cfg->port, gai_strerror(err));
	s->lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->lfd < 0) {
		freeaddrinfo(ai);
		return failf(s, EXIT_FAIL, "socket: %s", strerror(errno));
	}
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->lfd, ai->ai_addr, ai->ai_addrlen) || listen(s->lfd, 1)) {
		err = errno;
		freeaddrinfo(ai);
		return failf(s, EXIT_FAIL, "listen on %s port %s: %s",
			     cfg->server_ip, cfg->port, strerror(err));
	}
	freeaddrinfo(ai);

	msg("listening on %s port %s; %s rx queues %u..%u bound to dma-buf %u%s",
	    cfg->server_ip, cfg->port, cfg->ifname, s->first, s->last,
	    s->binding_id, cfg->no_setup ? " (NIC set-up left to the caller)" : "");
	if (cfg->ready_file) {
		fd = open(cfg->ready_file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0)
			return failf(s, EXIT_FAIL, "%s: %s", cfg->ready_file,
				     strerror(errno));
		close(fd);
	}
	return 0;
}

static int accept_one(struct server *s)
{
	for (;;) {
		if (stop_requested)
			return failf(s, EXIT_FAIL, "interrupted before a connection came");
		s->fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (s->fd >= 0)
			break;
		if (errno != EINTR)
			return failf(s, EXIT_FAIL, "accept: %s", strerror(errno));
	}
	close(s->lfd);
	s->lfd = -1;
	return 0;
}

/* @len payload bytes at the stream's current offset, wherever they are. */
static int consume(struct server *s, const uint8_t *buf, size_t len)
{
	if (s->validating)
		checker_feed(s->chk, s->off, buf, len);
	if (s->out && fwrite(buf, 1, len, s->out) != len)
		return failf(s, EXIT_FAIL, "writing %s: %s", s->cfg->output,
			     strerror(errno));
	s->off += len;
	return 0;
}

/* --trace: one line per part of the stream, in stream order. */
static int trace(struct server *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int trace(struct server *s, const char *fmt, ...)
{
	va_list ap;
	int ret;

	if (!s->trace)
		return 0;
	va_start(ap, fmt);
	ret = vfprintf(s->trace, fmt, ap);
	va_end(ap);
	if (ret < 0)
		return failf(s, EXIT_FAIL, "writing %s: %s", s->cfg->trace,
			     strerror(errno));
	return 0;
}

static int take_frag(struct server *s, const struct devmem_frag *f)
{
	uint64_t done, n;
	int err;

	if (f->dmabuf_id != s->binding_id)
		return failf(s, EXIT_FAIL,
			     "a fragment of dma-buf %u, ours is %u: flow steering error",
			     f->dmabuf_id, s->binding_id);
	if (f->offset + f->size > devmem_dmabuf_size(s->db))
		return failf(s, EXIT_FAIL, "fragment [%llu, +%u) outside the %zu-byte dma-buf",
			     (unsigned long long)f->offset, f->size,
			     devmem_dmabuf_size(s->db));
	if (s->validating || s->out) {
		for (done = 0; done < f->size; done += n) {
			n = f->size - done;
			if (n > READ_CHUNK)
				n = READ_CHUNK;
			err = devmem_dmabuf_read(s->db, f->offset + done,
						 s->tmp, n);
			if (err)
				return failf(s, EXIT_FAIL, "reading the dma-buf: %s",
					     devmem_last_error());
			if (consume(s, s->tmp, n))
				return -1;
		}
	} else {
		s->off += f->size;
	}
	if (trace(s, "d %llu %u\n", (unsigned long long)f->offset, f->size))
		return -1;
	s->dmabuf_bytes += f->size;
	s->frags++;
	err = devmem_recycler_add(s->rc, f->token);
	if (err)
		return failf(s, EXIT_FAIL, "SO_DEVMEM_DONTNEED: %s", strerror(-err));
	return 0;
}

/* The segments of one receive of @n bytes, in stream order. */
static int take(struct server *s, const struct devmem_rx_result *res,
		size_t n)
{
	const struct devmem_seg *seg;
	size_t i;

	if (res->flags & DEVMEM_RX_PLAIN) {
		/* host memory: the flow did not come through a bound queue */
		if (!s->plain_bytes)
			msg("%zu bytes at offset %llu arrived outside device memory: flow steering error",
			    n, (unsigned long long)s->off);
		s->plain_bytes += n;
		if (trace(s, "h %zu\n", n))
			return -1;
		return consume(s, s->iov, n);
	}
	for (i = 0; i < res->nr_segs; i++) {
		seg = &res->segs[i];
		if (seg->type == DEVMEM_SEG_DMABUF) {
			if (take_frag(s, &seg->frag))
				return -1;
			continue;
		}
		s->linear_bytes += seg->len;
		if (s->cfg->fail_on_linear)
			return failf(s, EXIT_FAIL,
				     "received SCM_DEVMEM_LINEAR (%u bytes at offset %llu) but --fail-on-linear (-L) set",
				     seg->len, (unsigned long long)s->off);
		if (trace(s, "l %u\n", seg->len) ||
		    consume(s, seg->host, seg->len))
			return -1;
	}
	return 0;
}

static void receive(struct server *s)
{
	struct devmem_rx_result res = { .size = sizeof(res) };
	ssize_t n;

	s->t0 = now_s();
	progress_init(&s->pr, s->cfg->progress, s->t0);
	for (;;) {
		if (stop_requested) {
			failf(s, EXIT_FAIL, "interrupted");
			break;
		}
		n = devmem_recv(s->rx, s->fd, s->iov, IOV_LEN, 0, &res);
		if (n == -EINTR)
			continue;
		if (n == -EPROTO || n == -EBADMSG) {
			failf(s, EXIT_FAIL, "recvmsg(MSG_SOCK_DEVMEM): control data %s",
			      n == -EPROTO ? "malformed" : "truncated (MSG_CTRUNC)");
			break;
		}
		if (n < 0) {
			failf(s, EXIT_FAIL, "recvmsg(MSG_SOCK_DEVMEM): %s",
			      strerror(-n));
			break;
		}
		if (!n)
			break;
		if (take(s, &res, n))
			break;
		if (s->cfg->has_bytes && s->off > s->cfg->bytes) {
			failf(s, EXIT_FAIL, "more than the %llu bytes expected",
			      (unsigned long long)s->cfg->bytes);
			break;
		}
		progress_tick(&s->pr, "received", s->off, s->frags, true);
	}
	s->secs = now_s() - s->t0;
}

static void finish_checks(struct server *s)
{
	const struct config *cfg = s->cfg;
	ssize_t ret;

	ret = devmem_recycler_flush(s->rc);
	if (ret < 0)
		failf(s, EXIT_FAIL, "SO_DEVMEM_DONTNEED: %s", strerror(-ret));
	s->rs = *devmem_recycler_get_stats(s->rc);
	if (s->rs.unknown)
		failf(s, EXIT_FAIL, "the socket did not hold %llu of the tokens handed back",
		      (unsigned long long)s->rs.unknown);
	else if (!s->failure && s->rs.freed != s->frags)
		failf(s, EXIT_FAIL, "%llu tokens handed back for %llu fragments",
		      (unsigned long long)s->rs.freed,
		      (unsigned long long)s->frags);
	if (s->plain_bytes)
		failf(s, EXIT_FAIL, "%llu bytes arrived outside device memory (flow steering)",
		      (unsigned long long)s->plain_bytes);
	if (s->validating && s->chk->mismatches)
		failf(s, EXIT_FAIL, "validation: %llu bytes differ, the first at offset %llu",
		      (unsigned long long)s->chk->mismatches,
		      (unsigned long long)s->chk->first_bad);
	if (cfg->has_bytes && s->off != cfg->bytes)
		failf(s, EXIT_FAIL, "received %llu bytes, expected %llu",
		      (unsigned long long)s->off,
		      (unsigned long long)cfg->bytes);
}

static void print_summary(struct server *s)
{
	FILE *dst = s->cfg->output && !strcmp(s->cfg->output, "-") ? stderr : stdout;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	double gbps = s->secs > 0 ? s->off * 8 / s->secs / 1e9 : 0;
	const struct checker *c = s->chk;

	if (!f)
		return;
	if (s->cfg->json) {
		fprintf(f, "{\"mode\":\"server\",\"bytes\":%llu,\"devmem_bytes\":%llu,"
			"\"devmem_frags\":%llu,\"linear_bytes\":%llu,"
			"\"plain_bytes\":%llu,\"tokens_returned\":%llu,"
			"\"seconds\":%.3f,\"gbps\":%.3f,",
			(unsigned long long)s->off,
			(unsigned long long)s->dmabuf_bytes,
			(unsigned long long)s->frags,
			(unsigned long long)s->linear_bytes,
			(unsigned long long)s->plain_bytes,
			(unsigned long long)s->rs.freed, s->secs, gbps);
		if (!s->validating)
			fprintf(f, "\"validation\":null,");
		else if (!c->mismatches)
			fprintf(f, "\"validation\":{\"period\":%u,\"mismatches\":0},",
				c->pat.period);
		else
			fprintf(f, "\"validation\":{\"period\":%u,\"mismatches\":%llu,"
				"\"first_offset\":%llu},", c->pat.period,
				(unsigned long long)c->mismatches,
				(unsigned long long)c->first_bad);
		fprintf(f, "\"result\":\"%s\"}\n", s->failure ? "fail" : "pass");
		emit_block(dst, f, &text, &len);
		return;
	}
	fprintf(f, PROG ": server summary\n");
	fprintf(f, "%-16s %llu\n", "bytes:", (unsigned long long)s->off);
	fprintf(f, "%-16s %llu\n", "devmem bytes:", (unsigned long long)s->dmabuf_bytes);
	fprintf(f, "%-16s %llu\n", "devmem frags:", (unsigned long long)s->frags);
	fprintf(f, "%-16s %llu\n", "linear bytes:", (unsigned long long)s->linear_bytes);
	fprintf(f, "%-16s %llu\n", "plain bytes:", (unsigned long long)s->plain_bytes);
	fprintf(f, "%-16s %llu\n", "tokens returned:", (unsigned long long)s->rs.freed);
	fprintf(f, "%-16s %.3f\n", "seconds:", s->secs);
	fprintf(f, "%-16s %.3f\n", "Gbit/s:", gbps);
	if (!s->validating)
		fprintf(f, "%-16s off\n", "validation:");
	else if (!c->mismatches)
		fprintf(f, "%-16s ok, period %u\n", "validation:", c->pat.period);
	else
		fprintf(f, "%-16s FAILED, period %u: %llu bytes differ, the first at offset %llu (0x%02x, expected 0x%02x)\n",
			"validation:", c->pat.period,
			(unsigned long long)c->mismatches,
			(unsigned long long)c->first_bad, c->first_got,
			c->first_want);
	if (s->failure)
		fprintf(f, "%-16s FAIL: %s\n", "result:", s->failure);
	else
		fprintf(f, "%-16s pass\n", "result:");
	emit_block(dst, f, &text, &len);
}

int run_server(const struct config *cfg)
{
	struct server s = { .cfg = cfg, .lfd = -1, .fd = -1 };
	bool connected = false;
	int err;

	s.validating = cfg->period != 0;
	s.iov = malloc(IOV_LEN);
	s.tmp = malloc(READ_CHUNK);
	s.chk = calloc(1, sizeof(*s.chk));
	if (!s.iov || !s.tmp || !s.chk ||
	    devmem_rx_new(&s.rx, RX_FRAGS, DEVMEM_CMSG_SKIP_OTHER)) {
		failf(&s, EXIT_FAIL, "out of memory");
		goto out;
	}
	if (s.validating)
		pattern_init(&s.chk->pat, pattern_period(cfg->period));

	s.ifindex = devmem_ifindex(cfg->ifname);
	if (s.ifindex < 0) {
		failf(&s, EXIT_FAIL, "%s: %s", cfg->ifname, devmem_last_error());
		goto out;
	}
	if (cfg->output) {
		s.out = strcmp(cfg->output, "-") ? fopen(cfg->output, "we") : stdout;
		if (!s.out) {
			failf(&s, EXIT_FAIL, "%s: %s", cfg->output, strerror(errno));
			goto out;
		}
	}
	if (cfg->trace) {
		s.trace = fopen(cfg->trace, "we");
		if (!s.trace) {
			failf(&s, EXIT_FAIL, "%s: %s", cfg->trace, strerror(errno));
			goto out;
		}
	}
	/* Set-up and teardown talk netlink: a signal then would cut a request
	 * short (EINTR) and could leave the NIC half done. It waits until the
	 * server listens, and is acted on there.
	 */
	signals_hold(true);
	if (alloc_dmabuf(&s) || pick_queues(&s))
		goto out;
	if (!cfg->no_setup && nic_setup(&s))
		goto out;
	if (bind_queues(&s) || listen_on(&s))
		goto out;
	if (trace(&s, "# ncdevmem trace 1: dmabuf-size %zu period %u\n",
		  devmem_dmabuf_size(s.db), cfg->period))
		goto out;
	signals_hold(false);
	if (accept_one(&s))
		goto out;
	connected = true;

	err = devmem_recycler_new(&s.rc, s.fd,
				  devmem_binding_buffers(s.binding));
	if (err) {
		failf(&s, EXIT_FAIL, "recycler: %s", strerror(-err));
		goto out;
	}
	devmem_rx_set_recycler(s.rx, s.rc);
	receive(&s);
	finish_checks(&s);
out:
	signals_hold(true);
	if (stop_requested && !s.failure)
		failf(&s, EXIT_FAIL, "interrupted");
	devmem_recycler_free(s.rc);
	if (s.fd >= 0)
		close(s.fd);
	if (s.lfd >= 0)
		close(s.lfd);
	/* unbind before the NIC goes back: header split stays on while bound */
	devmem_binding_free(s.binding);
	if (s.nic) {
		err = devmem_nic_restore(s.nic);
		if (err)
			failf(&s, EXIT_FAIL, "restoring %s: %s", cfg->ifname,
			      devmem_last_error());
		devmem_nic_free(s.nic);
	}
	devmem_dmabuf_free(s.db);
	if (s.trace && fclose(s.trace))
		failf(&s, EXIT_FAIL, "%s: %s", cfg->trace, strerror(errno));
	if (s.out && s.out != stdout && fclose(s.out))
		failf(&s, EXIT_FAIL, "%s: %s", cfg->output, strerror(errno));
	else if (s.out == stdout)
		fflush(stdout);
	if (connected)
		print_summary(&s);
	devmem_rx_free(s.rx);
	free(s.iov);
	free(s.tmp);
	free(s.chk);
	return s.failure ? s.status : EXIT_PASS;
}
