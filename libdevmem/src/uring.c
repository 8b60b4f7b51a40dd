// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * recvmsg(MSG_SOCK_DEVMEM) through io_uring (liburing).
 *
 * A receive request (struct devmem_urecv) owns a msghdr, its iovec and a
 * control buffer (struct devmem_ctrl, shared with devmem_recv()):
 * io_uring reads the msghdr when it issues the request and the kernel
 * writes msg_flags and msg_controllen back into it when the receive
 * ends, so all of it must live until the completion. ETOOSMALL means the
 * kernel consumed nothing (the control buffer cannot hold the first
 * cmsg), so the buffer grows and the same request can go back to the
 * kernel.
 *
 * On the application's ring the application submits and reaps
 * (devmem_urecv_prep()/_complete()) and resubmits after ETOOSMALL. A
 * devmem_uring is a ring of its own with a request per slot: a
 * completion's user_data is the slot's index, the caller's user_data
 * stays in the slot, and a request answered with ETOOSMALL goes back to
 * the kernel before the caller sees anything. At most @entries requests
 * are in flight and the submission queue has that many entries, each
 * submitted at once, so there is always an SQE for a resubmission and the
 * completion queue (twice as large) cannot overflow.
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

_Static_assert(DEVMEM_URECV_RESUBMIT == -ETOOSMALL,
	       "DEVMEM_URECV_RESUBMIT is the kernel's ETOOSMALL");

struct devmem_urecv {
	struct msghdr msg;
	struct iovec iov;
	struct devmem_ctrl ctrl;
	unsigned int cmsg_flags;
	int fd;
	int flags;
	bool inflight;			/* prepared, not completed */
	devmem_recvmsg_fn recvmsg;	/* test hook; NULL: the kernel */
	void *recvmsg_arg;
};

struct devmem_uring_req {
	struct devmem_urecv rv;
	uint64_t user_data;
	struct devmem_recycler *rc;	/* its socket's, flushed before a
					 * wait; or NULL */
};

/* A socket's recycler (devmem_uring_set_recycler()). */
struct devmem_uring_link {
	int fd;
	struct devmem_recycler *rc;
};

struct devmem_uring {
	struct io_uring ring;
	unsigned int nr;		/* slots */
	unsigned int inflight;
	unsigned int nr_free;
	unsigned int *free;		/* stack of free slot indices */
	struct devmem_uring_req *reqs;
	bool cancel_failed;		/* devmem_uring_free() */
	struct devmem_uring_link *links;
	size_t nr_links, cap_links;
	const struct devmem_binding *stall_b;	/* watched while waiting */
	unsigned int stall_ms;
};

static int devmem_urecv_init(struct devmem_urecv *r, unsigned int frags,
			     unsigned int cmsg_flags)
{
	r->cmsg_flags = cmsg_flags;
	return devmem_ctrl_init(&r->ctrl, frags);
}

/* Point the request at @fd and @buf, and @sqe at the request. */
static void devmem_urecv_arm(struct devmem_urecv *r, struct io_uring_sqe *sqe)
{
	devmem_ctrl_msg(&r->ctrl, &r->msg, &r->iov);
	if (r->recvmsg)
		io_uring_prep_nop(sqe);
	else
		io_uring_prep_recvmsg(sqe, r->fd, &r->msg,
				      (unsigned int)r->flags | MSG_SOCK_DEVMEM);
	r->inflight = true;
}

/*
 * The end of the receive whose completion's result is @ret: *@out (filled
 * whole) and what devmem_urecv_complete() returns, with a reason for an
 * error.
 */
static ssize_t devmem_urecv_end(struct devmem_urecv *r, ssize_t ret,
				struct devmem_rx_result *out)
{
	int err;

	r->inflight = false;
	devmem_ctrl_result(&r->ctrl, NULL, 0, NULL, 0, out);
	if (r->recvmsg && ret == 0)
		ret = r->recvmsg(r->fd, &r->msg, r->flags | MSG_SOCK_DEVMEM,
				 r->recvmsg_arg);
	if (ret == -ETOOSMALL) {
		err = devmem_ctrl_grow(&r->ctrl);
		if (err)
			return devmem_ctrl_grow_fail(&r->ctrl, err);
		return DEVMEM_URECV_RESUBMIT;
	}
	if (ret < 0)
		return devmem_fail_errno((int)ret, "recvmsg");
	if (!ret)
		return 0;
	return devmem_ctrl_result(&r->ctrl, &r->msg, r->cmsg_flags,
				  r->iov.iov_base, ret, out);
}

DEVMEM_EXPORT int devmem_urecv_new(struct devmem_urecv **rp,
				   unsigned int frags, unsigned int cmsg_flags)
{
	struct devmem_urecv *r;
	int err;

	devmem_error_clear();
	if (!rp)
		return devmem_fail(-EINVAL, "no place for the result");
	if (cmsg_flags & ~DEVMEM_CMSG_SKIP_OTHER)
		return devmem_fail(-EINVAL, "unknown cmsg flags 0x%x",
				   cmsg_flags);
	r = calloc(1, sizeof(*r));
	if (!r)
		return devmem_fail(-ENOMEM, "out of memory");
	err = devmem_urecv_init(r, frags, cmsg_flags);
	if (err) {
		free(r);
		return devmem_fail(err, "out of memory");
	}
	*rp = r;
	return 0;
}

DEVMEM_EXPORT void devmem_urecv_free(struct devmem_urecv *r)
{
	if (!r)
		return;
	devmem_ctrl_release(&r->ctrl);
	free(r);
}

void devmem_urecv_set_recvmsg(struct devmem_urecv *r, devmem_recvmsg_fn fn,
			      void *arg)
{
	r->recvmsg = fn;
	r->recvmsg_arg = arg;
}

DEVMEM_EXPORT int devmem_urecv_prep(struct devmem_urecv *r,
				    struct io_uring_sqe *sqe, int fd,
				    void *buf, size_t len, int flags)
{
	devmem_error_clear();
	if (!r || !sqe || (len && !buf))
		return devmem_fail(-EINVAL, "%s", !r ? "no request" :
				   !sqe ? "no SQE" : "no buffer");
	if (fd < 0)
		return devmem_fail(-EBADF, "socket fd %d", fd);
	if (r->inflight)
		return devmem_fail(-EBUSY, "the request is in flight: "
				   "complete it first");
	r->fd = fd;
	r->flags = flags;
	r->iov.iov_base = buf;
	r->iov.iov_len = len;
	devmem_urecv_arm(r, sqe);
	return 0;
}

DEVMEM_EXPORT ssize_t devmem_urecv_complete(struct devmem_urecv *r,
					    const struct io_uring_cqe *cqe,
					    struct devmem_rx_result *res)
{
	struct devmem_rx_result out;
	ssize_t ret;
	int err;

	devmem_error_clear();
	if (!r || !cqe || !res)
		return devmem_fail(-EINVAL, "%s", !r ? "no request" :
				   !cqe ? "no CQE" : "no place for the result");
	devmem_ctrl_result(&r->ctrl, NULL, 0, NULL, 0, &out);
	err = devmem_rx_result_copy(res, &out);
	if (err)
		return devmem_fail(err, "result size %zu is too small",
				   res->size);
	if (!r->inflight)
		return devmem_fail(-EINVAL, "no receive prepared");

	ret = devmem_urecv_end(r, cqe->res, &out);
	if (ret > 0)
		devmem_rx_result_copy(res, &out);
	return ret;
}

/*
 * A ring of its own
 */

static void devmem_uring_release(struct devmem_uring *u)
{
	unsigned int i;

	for (i = 0; i < u->nr; i++)
		devmem_ctrl_release(&u->reqs[i].rv.ctrl);
	free(u->reqs);
	free(u->free);
	free(u->links);
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
	u->reqs = calloc(entries, sizeof(*u->reqs));
	u->free = calloc(entries, sizeof(*u->free));
	if (!u->reqs || !u->free) {
		err = devmem_fail(-ENOMEM, "out of memory");
		goto err_release;
	}
	for (; u->nr < entries; u->nr++) {
		err = devmem_urecv_init(&u->reqs[u->nr].rv, frags, cmsg_flags);
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
	unsigned int i;

	for (i = 0; i < u->nr; i++)
		devmem_urecv_set_recvmsg(&u->reqs[i].rv, fn, arg);
}

/* Put slot @r's request on the submission queue and submit it. */
/* The recycler linked to socket @fd, or NULL. */
static struct devmem_recycler *devmem_uring_recycler(struct devmem_uring *u,
						     int fd)
{
	size_t i;

	for (i = 0; i < u->nr_links; i++)
		if (u->links[i].fd == fd)
			return u->links[i].rc;
	return NULL;
}

DEVMEM_EXPORT int devmem_uring_set_recycler(struct devmem_uring *u, int fd,
					    struct devmem_recycler *rc)
{
	struct devmem_uring_link *links;
	size_t i, cap;

	devmem_error_clear();
	if (!u)
		return devmem_fail(-EINVAL, "no ring");
	if (fd < 0)
		return devmem_fail(-EBADF, "socket fd %d", fd);
	if (rc && devmem_recycler_fd(rc) != fd)
		return devmem_fail(-EINVAL, "the recycler hands tokens back to fd %d, not fd %d",
				   devmem_recycler_fd(rc), fd);
	for (i = 0; i < u->nr_links && u->links[i].fd != fd; i++)
		;
	if (i == u->nr_links && rc) {
		if (u->nr_links == u->cap_links) {
			cap = u->cap_links ? 2 * u->cap_links : 8;
			links = realloc(u->links, cap * sizeof(*links));
			if (!links)
				return devmem_fail(-ENOMEM, "out of memory");
			u->links = links;
			u->cap_links = cap;
		}
		u->links[u->nr_links++].fd = fd;
	}
	if (i < u->nr_links) {
		if (rc)
			u->links[i].rc = rc;
		else
			u->links[i] = u->links[--u->nr_links];
	}
	/* requests already in flight follow the link too */
	for (i = 0; i < u->nr; i++)
		if (u->reqs[i].rv.inflight && u->reqs[i].rv.fd == fd)
			u->reqs[i].rc = rc;
	return 0;
}

/*
 * Before a wait, or before -EAGAIN reaches the caller: hand back the
 * tokens of every socket with a request in flight, so that no receive
 * waits for buffers its own application holds.
 */
static int devmem_uring_flush(struct devmem_uring *u)
{
	ssize_t ret;
	unsigned int i;

	for (i = 0; i < u->nr; i++) {
		struct devmem_uring_req *r = &u->reqs[i];

		if (!r->rv.inflight || !r->rc || !devmem_recycler_nr(r->rc))
			continue;
		ret = devmem_recycler_flush(r->rc);
		if (ret < 0)
			return (int)ret;
	}
	return 0;
}

static int devmem_uring_queue(struct devmem_uring *u,
			      struct devmem_uring_req *r)
{
	struct io_uring_sqe *sqe;

	sqe = io_uring_get_sqe(&u->ring);
	if (!sqe)	/* never: no more requests than entries */
		return devmem_fail(-EBUSY, "no free submission queue entry");
	devmem_urecv_arm(&r->rv, sqe);
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
	r->rv.fd = fd;
	r->rv.flags = flags;
	r->rv.iov.iov_base = buf;
	r->rv.iov.iov_len = len;
	r->user_data = user_data;
	r->rc = devmem_uring_recycler(u, fd);
	u->nr_free--;
	u->inflight++;
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
	struct devmem_rx_result out;
	struct devmem_uring_req *r;
	ssize_t ret = cqe->res;
	int err;

	io_uring_cqe_seen(&u->ring, cqe);
	if (idx == DEVMEM_URING_CANCEL) {
		if (ret < 0 && ret != -ENOENT && ret != -EALREADY)
			u->cancel_failed = true;
		return 0;
	}
	if (idx >= u->nr || !u->reqs[idx].rv.inflight)
		return 0;
	r = &u->reqs[idx];
	if (c) {
		ret = devmem_urecv_end(&r->rv, ret, &out);
		if (ret == DEVMEM_URECV_RESUBMIT) {
			err = devmem_uring_queue(u, r);
			if (!err)
				return 0;
			ret = err;
		}
		if (ret > 0 && r->rc)
			devmem_recycler_note(r->rc, out.frags, out.nr_frags);
	}

	r->rv.inflight = false;
	u->inflight--;
	u->free[u->nr_free++] = idx;
	if (!c)
		return 1;
	c->user_data = r->user_data;
	c->fd = r->rv.fd;
	c->buf = r->rv.iov.iov_base;
	c->ret = ret;
	c->rx.size = c->size - offsetof(struct devmem_uring_completion, rx);
	devmem_rx_result_copy(&c->rx, &out);
	return 1;
}

DEVMEM_EXPORT int devmem_uring_set_stall_check(struct devmem_uring *u,
					       const struct devmem_binding *b,
					       unsigned int ms)
{
	int err;

	devmem_error_clear();
	if (!u)
		return devmem_fail(-EINVAL, "no ring");
	err = devmem_stall_check_args(b, ms);
	if (err)
		return err;
	u->stall_b = b;
	u->stall_ms = b ? ms : 0;
	return 0;
}

/*
 * Wait up to stall_ms for a completion; none, and the application
 * holding every buffer of the watched binding, is -ENOBUFS. Returns 0
 * when there may be a completion to reap (or the time passed without
 * a stall), or -errno.
 */
static int devmem_uring_wait_watched(struct devmem_uring *u)
{
	struct __kernel_timespec ts = {
		.tv_sec = u->stall_ms / 1000,
		.tv_nsec = (long long)(u->stall_ms % 1000) * 1000000,
	};
	struct io_uring_cqe *cqe;
	int err;

	err = io_uring_submit(&u->ring);
	if (err < 0)
		return devmem_fail_errno(err, "io_uring_enter");
	err = io_uring_wait_cqe_timeout(&u->ring, &cqe, &ts);
	if (err == -ETIME)
		return devmem_held_stalled(u->stall_b, u->stall_ms);
	if (err < 0)
		return devmem_fail_errno(err, "io_uring_enter");
	return 0;
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
	if (c->size < DEVMEM_URING_COMPLETION_SIZE_1_0)
		return devmem_fail(-EINVAL, "completion size %zu is too small",
				   c->size);
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
		err = devmem_uring_flush(u);
		if (err)
			return err;
		/* Nothing yet: submit what a failed enter left queued. */
		if (wait && u->stall_b) {
			err = devmem_uring_wait_watched(u);
			if (err)
				return err;
			continue;
		}
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
	devmem_error_clear();
	if (!u)
		return devmem_fail(-EINVAL, "no ring");
	return u->ring.ring_fd;
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
