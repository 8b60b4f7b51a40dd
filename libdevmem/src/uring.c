// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * recvmsg(MSG_SOCK_DEVMEM) through io_uring (liburing).
 *
 * Each request slot owns a msghdr, its iovec and a control buffer
 * (struct devmem_ctrl, shared with devmem_recv()): io_uring reads the
 * msghdr when it issues the request and the kernel writes msg_flags and
 * msg_controllen back into it when the receive ends, so all of it must
 * live until the completion. A completion's user_data is the slot's
 * index; the caller's user_data stays in the slot.
 *
 * ETOOSMALL means the kernel consumed nothing (the control buffer cannot
 * hold the first cmsg), so the slot's buffer grows and the same request
 * goes back to the kernel before the caller sees anything. At most
 * @entries requests are in flight and the submission queue has that many
 * entries, each submitted at once, so there is always an SQE for a
 * resubmission and the completion queue (twice as large) cannot overflow.
 */
#include "internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>

#define DEVMEM_URING_DEFAULT_ENTRIES	16U
/* user_data of the cancellation devmem_uring_free() queues */
#define DEVMEM_URING_CANCEL		UINT64_MAX

struct devmem_uring_req {
	struct msghdr msg;
	struct iovec iov;
	struct devmem_ctrl ctrl;
	uint64_t user_data;
	int fd;
	int flags;
	bool busy;
};

struct devmem_uring {
	struct io_uring ring;
	unsigned int cmsg_flags;
	unsigned int nr;		/* slots */
	unsigned int inflight;
	unsigned int nr_free;
	unsigned int *free;		/* stack of free slot indices */
	struct devmem_uring_req *reqs;
	bool cancel_failed;		/* devmem_uring_free() */
	devmem_recvmsg_fn recvmsg;	/* test hook; NULL: the kernel */
	void *recvmsg_arg;
};

static void devmem_uring_release(struct devmem_uring *u)
{
	unsigned int i;

	for (i = 0; i < u->nr; i++)
		devmem_ctrl_release(&u->reqs[i].ctrl);
	free(u->reqs);
	free(u->free);
	free(u);
}

DEVMEM_EXPORT int devmem_uring_new(struct devmem_uring **up,
				   unsigned int entries, unsigned int frags,
				   unsigned int cmsg_flags)
{
	struct devmem_uring *u;
	unsigned int i;
	int err;

	devmem_error_clear();
	if (!up)
		return devmem_fail(-EINVAL, "no place for the result");
	if (cmsg_flags & ~DEVMEM_CMSG_SKIP_OTHER)
		return devmem_fail(-EINVAL, "unknown cmsg flags 0x%x",
				   cmsg_flags);
	if (entries > DEVMEM_URING_MAX_ENTRIES)
		return devmem_fail(-EINVAL, "%u entries are more than %u",
				   entries, DEVMEM_URING_MAX_ENTRIES);
	if (!entries)
		entries = DEVMEM_URING_DEFAULT_ENTRIES;

	u = calloc(1, sizeof(*u));
	if (!u)
		return devmem_fail(-ENOMEM, "out of memory");
	u->cmsg_flags = cmsg_flags;
	u->reqs = calloc(entries, sizeof(*u->reqs));
	u->free = calloc(entries, sizeof(*u->free));
	if (!u->reqs || !u->free) {
		err = devmem_fail(-ENOMEM, "out of memory");
		goto err_release;
	}
	for (; u->nr < entries; u->nr++) {
		err = devmem_ctrl_init(&u->reqs[u->nr].ctrl, frags);
		if (err) {
			devmem_fail(err, "out of memory");
			goto err_release;
		}
	}
	/* Slot 0 is taken first. */
	for (i = 0; i < entries; i++)
		u->free[i] = entries - 1 - i;
	u->nr_free = entries;

	err = io_uring_queue_init(entries, &u->ring, 0);
	if (err < 0) {
		devmem_fail_errno(err, "io_uring_setup");
		goto err_release;
	}

	*up = u;
	return 0;

err_release:
	devmem_uring_release(u);
	return err;
}

void devmem_uring_set_recvmsg(struct devmem_uring *u, devmem_recvmsg_fn fn,
			      void *arg)
{
	u->recvmsg = fn;
	u->recvmsg_arg = arg;
}

/* Put slot @r's request on the submission queue and submit it. */
static int devmem_uring_queue(struct devmem_uring *u,
			      struct devmem_uring_req *r)
{
	struct io_uring_sqe *sqe;

	sqe = io_uring_get_sqe(&u->ring);
	if (!sqe)	/* never: no more requests than entries */
		return devmem_fail(-EBUSY, "no free submission queue entry");
	devmem_ctrl_msg(&r->ctrl, &r->msg, &r->iov);
	if (u->recvmsg)
		io_uring_prep_nop(sqe);
	else
		io_uring_prep_recvmsg(sqe, r->fd, &r->msg,
				      (unsigned int)r->flags | MSG_SOCK_DEVMEM);
	io_uring_sqe_set_data64(sqe, r - u->reqs);
	/* A failure leaves the SQE queued: the next enter takes it. */
	io_uring_submit(&u->ring);
	return 0;
}

DEVMEM_EXPORT int devmem_uring_submit(struct devmem_uring *u, int fd,
				      void *buf, size_t len, int flags,
				      uint64_t user_data)
{
	struct devmem_uring_req *r;

	devmem_error_clear();
	if (!u || (len && !buf))
		return devmem_fail(-EINVAL, "%s", !u ? "no ring" : "no buffer");
	if (fd < 0)
		return devmem_fail(-EBADF, "socket fd %d", fd);
	if (!u->nr_free)
		return devmem_fail(-EBUSY, "all %u requests are in flight",
				   u->nr);

	r = &u->reqs[u->free[u->nr_free - 1]];
	r->fd = fd;
	r->flags = flags;
	r->user_data = user_data;
	r->iov.iov_base = buf;
	r->iov.iov_len = len;
	u->nr_free--;
	u->inflight++;
	r->busy = true;
	return devmem_uring_queue(u, r);
}

/*
 * Take completion @cqe off the queue. Returns 1 with the request it ends
 * in *@c, or 0 when it ends none (a resubmission after ETOOSMALL, the
 * cancellation's own completion). With @c NULL (devmem_uring_free()) the
 * request ends whatever its result.
 */
static int devmem_uring_reap(struct devmem_uring *u,
			     struct io_uring_cqe *cqe,
			     struct devmem_uring_completion *c)
{
	uint64_t idx = io_uring_cqe_get_data64(cqe);
	struct devmem_uring_req *r;
	ssize_t ret = cqe->res;
	int err;

	io_uring_cqe_seen(&u->ring, cqe);
	if (idx == DEVMEM_URING_CANCEL) {
		if (ret < 0 && ret != -ENOENT && ret != -EALREADY)
			u->cancel_failed = true;
		return 0;
	}
	if (idx >= u->nr || !u->reqs[idx].busy)
		return 0;
	r = &u->reqs[idx];
	if (c && u->recvmsg && ret == 0)
		ret = u->recvmsg(r->fd, &r->msg,
				 r->flags | MSG_SOCK_DEVMEM, u->recvmsg_arg);

	if (c && ret == -ETOOSMALL) {
		err = devmem_ctrl_grow(&r->ctrl);
		if (!err)
			err = devmem_uring_queue(u, r);
		if (!err)
			return 0;
		ret = err;
	}

	r->busy = false;
	u->inflight--;
	u->free[u->nr_free++] = idx;
	if (!c)
		return 1;
	c->user_data = r->user_data;
	c->fd = r->fd;
	c->buf = r->iov.iov_base;
	c->ret = devmem_ctrl_result(&r->ctrl, &r->msg, u->cmsg_flags,
				    r->iov.iov_base, ret, &c->rx);
	return 1;
}

/* One completion into *@c; @wait: block for it, else -EAGAIN. */
static int devmem_uring_next(struct devmem_uring *u,
			     struct devmem_uring_completion *c, bool wait)
{
	struct io_uring_cqe *cqe;
	int err;

	devmem_error_clear();
	if (!u || !c)
		return devmem_fail(-EINVAL, "%s", !u ? "no ring" :
				   "no place for the completion");
	for (;;) {
		if (!u->inflight)
			return devmem_fail(-ENOENT, "no request in flight");
		err = io_uring_peek_cqe(&u->ring, &cqe);
		if (!err) {
			if (devmem_uring_reap(u, cqe, c))
				return 0;
			continue;
		}
		if (err != -EAGAIN)
			return devmem_fail_errno(err, "io_uring completion");
		/* Nothing yet: submit what a failed enter left queued. */
		if (wait)
			err = io_uring_submit_and_wait(&u->ring, 1);
		else
			err = io_uring_submit(&u->ring);
		if (err < 0)
			return devmem_fail_errno(err, "io_uring_enter");
		if (!wait && !io_uring_cq_ready(&u->ring))
			return devmem_fail(-EAGAIN, "no completion yet");
	}
}

DEVMEM_EXPORT int devmem_uring_wait(struct devmem_uring *u,
				    struct devmem_uring_completion *c)
{
	return devmem_uring_next(u, c, true);
}

DEVMEM_EXPORT int devmem_uring_peek(struct devmem_uring *u,
				    struct devmem_uring_completion *c)
{
	return devmem_uring_next(u, c, false);
}

DEVMEM_EXPORT int devmem_uring_fd(const struct devmem_uring *u)
{
	return u ? u->ring.ring_fd : -EINVAL;
}

DEVMEM_EXPORT unsigned int devmem_uring_inflight(const struct devmem_uring *u)
{
	return u ? u->inflight : 0;
}

/*
 * The kernel writes into a request's msghdr, control buffer and data
 * buffer until it completes: cancel everything and reap it all before the
 * memory goes. Should the kernel refuse the cancellation, closing the
 * ring cancels what is left (it removes the requests that wait for data
 * before close() returns).
 */
DEVMEM_EXPORT void devmem_uring_free(struct devmem_uring *u)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int err;

	if (!u)
		return;
	sqe = u->inflight ? io_uring_get_sqe(&u->ring) : NULL;
	if (sqe) {
		io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
		io_uring_sqe_set_data64(sqe, DEVMEM_URING_CANCEL);
	}
	while (sqe && u->inflight && !u->cancel_failed) {
		err = io_uring_submit_and_wait(&u->ring, 1);
		if (err < 0 && err != -EINTR)
			break;
		while (!io_uring_peek_cqe(&u->ring, &cqe))
			devmem_uring_reap(u, cqe, NULL);
	}
	io_uring_queue_exit(&u->ring);
	devmem_uring_release(u);
}
