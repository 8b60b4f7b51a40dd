// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * A comm's I/O thread: it moves the bytes of the data sockets, as NCCL's
 * own socket transport does in its helper threads, so that NCCL's one
 * proxy thread per rank only posts requests and finds them done, and the
 * comms of a rank copy in parallel. Per socket it takes the oldest
 * request whose part there has bytes left, moves what the socket takes
 * without waiting, and when no socket moved anything, waits in poll()
 * for the sockets it needs, the control socket and the proxy's kick.
 *
 * Where moving bytes copies nothing, the proxy thread, which spins on
 * test() anyway, makes the same steps itself: a wake-up of another
 * thread would cost more than the step. A receiving comm in devmem mode
 * has no I/O thread at all; on a sending comm, devmem sends are moved by
 * whichever thread comes first, and so are host-memory sends where
 * NCCL_DEVMEM_PROXY_COPY lets the proxy copy (a bounded part per step).
 * A socket is one thread's at a time (c->busy).
 */
#include "plugin.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define NDM_TAG_SOCK_BITS	3

void ndm_io_kick(struct ndm_comm *c)
{
	uint64_t one = 1;

	if (c->efd >= 0 && write(c->efd, &one, sizeof(one)) < 0) {
		/* a full counter already wakes the thread */
	}
}

/* The oldest request with bytes left to move on socket @i. */
static struct ndm_request *ndm_io_next(struct ndm_comm *c, int i)
{
	struct ndm_request *r;
	uint64_t s;

	for (s = c->seq_head; s < c->seq_tail; s++) {
		r = &c->reqs[s % NDM_MAX_REQUESTS];
		if (!r->used)
			continue;
		if (c->kind == NDM_REQ_RECV && !r->hdr_done)
			return NULL;	/* later ones have no header either */
		if (i < r->nparts && r->parts[i].done < r->parts[i].len)
			return r;
	}
	return NULL;
}

static void ndm_io_acks(struct ndm_comm *c, int i, bool *moved)
{
	struct devmem_send_completion done[16];
	struct devmem_sender *s = c->sender[i];
	struct ndm_request *r;
	uint64_t seq;
	ssize_t n, k;

	do {
		pthread_mutex_unlock(&c->lock);
		n = devmem_sender_reap_tagged(s, done, 16, 0);
		pthread_mutex_lock(&c->lock);
		if (n < 0) {
			ndm_fail(c, "send completions: %s", devmem_last_error());
			return;
		}
		for (k = 0; k < n; k++) {
			seq = done[k].tag >> NDM_TAG_SOCK_BITS;
			r = &c->reqs[seq % NDM_MAX_REQUESTS];
			if (!r->used || r->seq != seq) {
				ndm_fail(c, "a send completion for no send");
				return;
			}
			r->parts[i].acked += done[k].bytes;
			*moved = true;
		}
	} while (n == 16);
}

/* One step on sending socket @i; POLLOUT in *@events when it is full.
 * The @proxy thread copies at most NCCL_DEVMEM_PROXY_COPY bytes.
 */
static void ndm_io_send(struct ndm_comm *c, int i, short *events, bool *moved,
			bool proxy)
{
	struct ndm_request *r = ndm_io_next(c, i);
	struct devmem_span span;
	struct ndm_part *p;
	uint64_t tag, len;
	const char *buf;
	ssize_t n;
	int err;

	if (r && proxy && !r->devmem && !ndm.cfg.proxy_copy)
		r = NULL;	/* the I/O thread's to copy */
	if (r) {
		p = &r->parts[i];
		if (r->devmem) {
			span.offset = r->mr->tx_offset +
				      (uint64_t)((char *)r->data -
						 (char *)r->mr->base) +
				      p->off + p->done;
			span.len = p->len - p->done;
			tag = (r->seq << NDM_TAG_SOCK_BITS) | (uint64_t)i;
			pthread_mutex_unlock(&c->lock);
			n = devmem_send_tagged(c->sender[i], &span, 1,
					       MSG_DONTWAIT | MSG_NOSIGNAL, tag);
			err = n < 0 ? (int)-n : 0;
		} else {
			buf = r->src + p->off + p->done;
			len = p->len - p->done;
			if (proxy && len > ndm.cfg.proxy_copy)
				len = ndm.cfg.proxy_copy;
			pthread_mutex_unlock(&c->lock);
			n = send(c->fds[i], buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
			err = n < 0 ? errno : 0;
		}
		pthread_mutex_lock(&c->lock);
		if (n > 0) {
			p->done += (uint64_t)n;
			if (proxy && !r->devmem)
				r->proxy_copied += (uint64_t)n;
			*moved = true;
		} else if (err == EAGAIN || err == EINTR) {
			*events |= POLLOUT;
		} else {
			ndm_fail(c, "%s: %s", r->devmem ? "devmem send" : "send",
				 r->devmem ? devmem_last_error() :
				 strerror(err));
			return;
		}
	}
	/* Reports of devmem sends come on the error queue (POLLERR). */
	if (c->sender[i] && devmem_sender_pending(c->sender[i]))
		ndm_io_acks(c, i, moved);
}

/* Tokens NCCL has consumed go back through the socket's recycler, which
 * only the thread in the socket uses (a receive may flush it).
 */
static void ndm_io_giveback(struct ndm_comm *c, int i)
{
	struct devmem_frag *frags = c->giveback[i];
	size_t n = c->giveback_n[i], max = c->giveback_max[i];
	int err;

	if (!n)
		return;
	c->giveback[i] = NULL;
	c->giveback_n[i] = c->giveback_max[i] = 0;
	pthread_mutex_unlock(&c->lock);
	err = devmem_recycler_add_frags(c->rc[i], frags, n);
	pthread_mutex_lock(&c->lock);
	if (err && err != -ENOMEM)
		ndm_fail(c, "giving buffers back: %s", devmem_last_error());
	/* keep the array for the next ones */
	if (!c->giveback[i]) {
		c->giveback[i] = frags;
		c->giveback_max[i] = max;
	} else {
		free(frags);
	}
}

/* What NCCL consumed goes back now, from every socket no thread is in. */
void ndm_io_giveback_all(struct ndm_comm *c)
{
	int i;

	for (i = 0; i < c->nsocks; i++) {
		if (c->busy[i] || !c->giveback_n[i])
			continue;
		c->busy[i] = true;
		ndm_io_giveback(c, i);
		c->busy[i] = false;
	}
}

static void ndm_io_devmem_segs(struct ndm_comm *c, struct ndm_request *r,
			       int i, const struct devmem_rx_result *res)
{
	struct ndm_part *p = &r->parts[i];
	int type = r->mr ? r->mr->type : NCCL_PTR_HOST;
	const struct devmem_seg *seg;
	uint64_t dst;
	size_t k;

	if (res->host_bytes && !c->warned_plain) {
		c->warned_plain = true;
		NDM_INFO(NCCL_NET, "comm %#llx: data socket %d gets bytes in host memory (a card that splits late, or a flow not steered to the bound queues): the plugin copies them",
			 (unsigned long long)c->id, i);
	}
	for (k = 0; k < res->nr_segs; k++) {
		seg = &res->segs[k];
		dst = p->off + p->done;
		if (seg->type == DEVMEM_SEG_HOST) {
			if (ndm_copy_to(&c->stream, (char *)r->data + dst, type,
					seg->host, seg->len)) {
				ndm_fail(c, "copying received bytes failed");
				return;
			}
		} else {
			if (seg->frag.dmabuf_id !=
			    devmem_binding_id(ndm.rx.binding)) {
				ndm_fail(c, "a fragment of binding %u, not %u",
					 seg->frag.dmabuf_id,
					 devmem_binding_id(ndm.rx.binding));
				return;
			}
			c->frags_in++;
			if (ndm_keep_frag(c, r, &seg->frag, i) ||
			    ndm_record(c, r, seg->frag.offset, seg->len, dst))
				return;
		}
		p->done += seg->len;
	}
}

/* One step on receiving socket @i; POLLIN in *@events when it is empty. */
static void ndm_io_recv(struct ndm_comm *c, int i, short *events, bool *moved)
{
	struct devmem_rx_result res = { .size = sizeof(res) };
	struct ndm_request *r;
	struct ndm_part *p;
	uint64_t left;
	ssize_t n;
	char *buf;
	int err;

	if (c->devmem)
		ndm_io_giveback(c, i);
	r = ndm_io_next(c, i);
	if (!r || c->err[0])
		return;
	p = &r->parts[i];
	left = p->len - p->done;
	if (c->devmem) {
		pthread_mutex_unlock(&c->lock);
		n = devmem_recv(c->rx[i], c->fds[i], c->scratch,
				left < NDM_RECV_CHUNK ? left : NDM_RECV_CHUNK,
				MSG_DONTWAIT, &res);
		err = n < 0 ? (int)-n : 0;
	} else {
		buf = r->direct ? (char *)r->data + p->off + p->done :
		      (char *)c->ring.mem.host + r->ring_off + p->off +
		      p->done;
		pthread_mutex_unlock(&c->lock);
		n = recv(c->fds[i], buf, left, MSG_DONTWAIT);
		err = n < 0 ? errno : 0;
	}
	pthread_mutex_lock(&c->lock);
	if (n == 0) {
		ndm_fail(c, "the peer closed data socket %d", i);
	} else if (n < 0 && (err == EAGAIN || err == EINTR)) {
		*events |= POLLIN;
	} else if (n < 0) {
		ndm_fail(c, "%s: %s", c->devmem ? "devmem receive" : "receive",
			 c->devmem ? devmem_last_error() : strerror(err));
	} else {
		if (c->devmem)
			ndm_io_devmem_segs(c, r, i, &res);
		else
			p->done += (uint64_t)n;
		clock_gettime(CLOCK_MONOTONIC, &c->last_data);
		*moved = true;
	}
}

/*
 * One step on every data socket that no other thread is in, under
 * c->lock; headers first on a receiving comm. *@moved when bytes or
 * reports moved; @events gets what each socket waits for; @proxy for the
 * proxy thread's step. True when a socket was left to another thread.
 */
bool ndm_io_step(struct ndm_comm *c, short *events, bool *moved, bool proxy)
{
	bool skipped = false;
	int i;

	if (c->kind == NDM_REQ_RECV && ndm_recv_headers(c) > 0)
		*moved = true;
	for (i = 0; i < c->nsocks && !c->err[0]; i++) {
		events[i] = 0;
		if (c->busy[i]) {
			skipped = true;
			continue;
		}
		c->busy[i] = true;
		if (c->kind == NDM_REQ_SEND)
			ndm_io_send(c, i, &events[i], moved, proxy);
		else
			ndm_io_recv(c, i, &events[i], moved);
		c->busy[i] = false;
	}
	return skipped;
}

/* A receive waits for its header, and no whole one waits for room. */
static bool ndm_io_wants_header(struct ndm_comm *c)
{
	uint64_t s;

	if (c->kind != NDM_REQ_RECV || c->hdr_got == sizeof(c->hdr))
		return false;
	for (s = c->seq_head; s < c->seq_tail; s++)
		if (!c->reqs[s % NDM_MAX_REQUESTS].hdr_done)
			return true;
	return false;
}

static void *ndm_io_main(void *arg)
{
	struct pollfd pf[NDM_MAX_SOCKS + 2];
	struct ndm_comm *c = arg;
	short events[NDM_MAX_SOCKS];
	bool moved, skipped;
	uint64_t count;
	int i, n;

	pthread_mutex_lock(&c->lock);
	while (!c->stop) {
		moved = false;
		skipped = ndm_io_step(c, events, &moved, false);
		if (moved && !c->err[0])
			continue;
		pf[0].fd = c->efd;
		pf[0].events = POLLIN;
		n = 1;
		if (ndm_io_wants_header(c)) {
			pf[n].fd = c->ctl;
			pf[n].events = POLLIN;
			n++;
		}
		for (i = 0; i < c->nsocks && !c->err[0]; i++)
			if (events[i] || (c->sender[i] &&
					  devmem_sender_pending(c->sender[i]))) {
				pf[n].fd = c->fds[i];
				pf[n].events = events[i];
				n++;
			}
		pthread_mutex_unlock(&c->lock);
		/* The proxy may leave bytes in a socket it was in: look again. */
		if (poll(pf, (nfds_t)n, skipped ? 1 : -1) > 0 &&
		    (pf[0].revents & POLLIN) &&
		    read(c->efd, &count, sizeof(count)) < 0) {
			/* another reader took it: nothing to do */
		}
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

ncclResult_t ndm_io_start(struct ndm_comm *c)
{
	int err;

	c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->efd < 0)
		return ndm_fail(c, "eventfd: %s", strerror(errno));
	err = pthread_create(&c->io, NULL, ndm_io_main, c);
	if (err)
		return ndm_fail(c, "an I/O thread: %s", strerror(err));
	c->io_running = true;
	return ncclSuccess;
}

void ndm_io_stop(struct ndm_comm *c)
{
	int i;

	if (c->io_running) {
		pthread_mutex_lock(&c->lock);
		c->stop = true;
		pthread_mutex_unlock(&c->lock);
		ndm_io_kick(c);
		pthread_join(c->io, NULL);
		c->io_running = false;
	}
	if (c->efd >= 0)
		close(c->efd);
	c->efd = -1;
	/* What NCCL consumed but the thread had not given back yet. */
	for (i = 0; i < NDM_MAX_SOCKS; i++) {
		if (c->giveback_n[i] && c->rc[i])
			devmem_recycler_add_frags(c->rc[i], c->giveback[i],
						  c->giveback_n[i]);
		free(c->giveback[i]);
		c->giveback[i] = NULL;
		c->giveback_n[i] = 0;
	}
}
