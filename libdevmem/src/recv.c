// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * recvmsg(MSG_SOCK_DEVMEM) with a control buffer that grows on demand.
 *
 * The kernel fails a receive with ETOOSMALL only when the control buffer
 * cannot hold even the first cmsg, so nothing was consumed and the call
 * can be retried with a larger one. A buffer that fills later ends the
 * receive early instead: the rest stays queued. Every devmem cmsg takes
 * CMSG_SPACE(sizeof(struct dmabuf_cmsg)) bytes, so a buffer of N such
 * slots never reports more than N fragments.
 *
 * The buffer, its growth and the parsing of what came back (struct
 * devmem_ctrl) serve the io_uring receive too (src/uring.c).
 */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEVMEM_RX_DEFAULT_FRAGS	128U
#define DEVMEM_RX_SLOT		CMSG_SPACE(sizeof(struct dmabuf_cmsg))

struct devmem_rx {
	unsigned int cmsg_flags;
	struct devmem_ctrl ctrl;
	devmem_recvmsg_fn recvmsg;
	void *recvmsg_arg;
	struct devmem_recycler *rc;	/* flushed before a wait; or NULL */
	const struct devmem_binding *stall_b;	/* watched while waiting */
	unsigned int stall_ms;
};

ssize_t devmem_sys_recvmsg(int fd, struct msghdr *msg, int flags, void *arg)
{
	ssize_t ret;

	(void)arg;
	ret = recvmsg(fd, msg, flags);
	return ret < 0 ? -errno : ret;
}

/* Every array at @slots; on failure the old ones stay as they were. A
 * receive has a segment per cmsg, or one for plain host data.
 */
static int devmem_ctrl_resize(struct devmem_ctrl *c, unsigned int slots)
{
	struct devmem_frag *frags;
	struct devmem_seg *segs;
	void *control;

	control = malloc((size_t)slots * DEVMEM_RX_SLOT);
	if (!control)
		return -ENOMEM;
	frags = calloc(slots, sizeof(*frags));
	if (!frags)
		goto err_free_control;
	segs = calloc((size_t)slots + 1, sizeof(*segs));
	if (!segs)
		goto err_free_frags;

	free(c->control);
	free(c->frags);
	free(c->segs);
	c->control = control;
	c->frags = frags;
	c->segs = segs;
	c->slots = slots;
	return 0;

err_free_frags:
	free(frags);
err_free_control:
	free(control);
	return -ENOMEM;
}

int devmem_ctrl_init(struct devmem_ctrl *c, unsigned int frags)
{
	if (!frags)
		frags = DEVMEM_RX_DEFAULT_FRAGS;
	if (frags > DEVMEM_RX_MAX_FRAGS)
		frags = DEVMEM_RX_MAX_FRAGS;
	c->control = NULL;
	c->frags = NULL;
	c->segs = NULL;
	return devmem_ctrl_resize(c, frags);
}

void devmem_ctrl_release(struct devmem_ctrl *c)
{
	free(c->control);
	free(c->frags);
	free(c->segs);
	c->control = NULL;
	c->frags = NULL;
	c->segs = NULL;
	c->slots = 0;
}

void devmem_ctrl_msg(struct devmem_ctrl *c, struct msghdr *msg,
		     struct iovec *iov)
{
	memset(msg, 0, sizeof(*msg));
	msg->msg_iov = iov;
	msg->msg_iovlen = 1;
	msg->msg_control = c->control;
	msg->msg_controllen = (size_t)c->slots * DEVMEM_RX_SLOT;
}

int devmem_ctrl_grow_fail(const struct devmem_ctrl *c, int err)
{
	if (err == -EMSGSIZE)
		return devmem_fail(err, "a control buffer of %u fragments is still too small",
				   c->slots);
	return devmem_fail(err, "out of memory growing the control buffer past %u fragments",
			   c->slots);
}

int devmem_ctrl_grow(struct devmem_ctrl *c)
{
	unsigned int slots = c->slots * 2;

	if (c->slots >= DEVMEM_RX_MAX_FRAGS)
		return -EMSGSIZE;
	if (slots > DEVMEM_RX_MAX_FRAGS)
		slots = DEVMEM_RX_MAX_FRAGS;
	return devmem_ctrl_resize(c, slots);
}

/*
 * A receive is either plain host data (no devmem cmsgs) or device-memory
 * data, every byte of which a cmsg accounts for, in stream order: an
 * skb's linear bytes (SCM_DEVMEM_LINEAR, copied to the user buffer one
 * after the other), then its fragments.
 */
struct devmem_seg_state {
	struct devmem_ctrl *c;
	const unsigned char *host;	/* where the next host bytes are */
	size_t nr_segs, nr_frags;
	uint64_t host_bytes, dmabuf_bytes;
};

static int devmem_seg_add(int linear, const struct dmabuf_cmsg *dc,
			  void *arg)
{
	struct devmem_seg_state *st = arg;
	struct devmem_seg *seg, *last;

	/* Every cmsg takes a slot: more than fit is not the kernel. */
	if (st->nr_segs >= st->c->slots)
		return devmem_fail(-EPROTO, "more devmem cmsgs than the %u the control buffer holds",
				   st->c->slots);
	last = st->nr_segs ? &st->c->segs[st->nr_segs - 1] : NULL;
	if (linear) {
		st->host_bytes += dc->frag_size;
		if (!dc->frag_size)
			return 0;
		/* Linear bytes of consecutive skbs are one piece of the
		 * buffer.
		 */
		if (last && last->type == DEVMEM_SEG_HOST) {
			last->len += dc->frag_size;
		} else {
			seg = &st->c->segs[st->nr_segs++];
			memset(seg, 0, sizeof(*seg));
			seg->type = DEVMEM_SEG_HOST;
			seg->len = dc->frag_size;
			seg->host = st->host;
		}
		st->host += dc->frag_size;
		return 0;
	}
	seg = &st->c->segs[st->nr_segs++];
	memset(seg, 0, sizeof(*seg));
	seg->type = DEVMEM_SEG_DMABUF;
	seg->len = dc->frag_size;
	devmem_frag_from_cmsg(&seg->frag, dc);
	st->c->frags[st->nr_frags++] = seg->frag;
	st->dmabuf_bytes += dc->frag_size;
	return 0;
}

ssize_t devmem_ctrl_result(const struct devmem_ctrl *c,
			   const struct msghdr *msg, unsigned int cmsg_flags,
			   const void *buf, ssize_t ret,
			   struct devmem_rx_result *res)
{
	struct devmem_seg_state st = {
		.c = (struct devmem_ctrl *)c,
		.host = buf,
	};
	struct devmem_seg *seg;
	int err;

	memset(res, 0, sizeof(*res));
	res->size = sizeof(*res);
	if (ret <= 0)
		return ret;
	err = devmem_cmsg_walk(msg, cmsg_flags, devmem_seg_add, &st);
	if (err)
		return err;
	if (st.nr_segs || st.host_bytes) {
		if (st.host_bytes + st.dmabuf_bytes != (uint64_t)ret)
			return devmem_fail(-EPROTO, "the cmsgs account for %llu bytes, recvmsg returned %zd",
					   (unsigned long long)(st.host_bytes +
								st.dmabuf_bytes),
					   ret);
	} else {
		/* Plain data: all of it in the buffer. */
		seg = &c->segs[st.nr_segs++];
		memset(seg, 0, sizeof(*seg));
		seg->type = DEVMEM_SEG_HOST;
		seg->len = ret;
		seg->host = buf;
		st.host_bytes = ret;
		res->flags |= DEVMEM_RX_PLAIN;
	}

	res->segs = c->segs;
	res->nr_segs = st.nr_segs;
	res->frags = c->frags;
	res->nr_frags = st.nr_frags;
	res->host_bytes = st.host_bytes;
	res->dmabuf_bytes = st.dmabuf_bytes;
	return ret;
}

int devmem_rx_result_copy(struct devmem_rx_result *dst,
			  const struct devmem_rx_result *res)
{
	size_t size = dst->size;

	if (size < DEVMEM_RX_RESULT_SIZE_1_0)
		return -EINVAL;
	if (size > sizeof(*res))
		size = sizeof(*res);
	memcpy((char *)dst + sizeof(dst->size),
	       (const char *)res + sizeof(res->size), size - sizeof(res->size));
	return 0;
}

DEVMEM_EXPORT int devmem_rx_new(struct devmem_rx **rxp, unsigned int frags,
				unsigned int cmsg_flags)
{
	struct devmem_rx *rx;
	int err;

	devmem_error_clear();
	if (!rxp)
		return devmem_fail(-EINVAL, "no place for the receive context");
	if (cmsg_flags & ~DEVMEM_CMSG_SKIP_OTHER)
		return devmem_fail(-EINVAL, "unknown cmsg flags 0x%x",
				   cmsg_flags & ~DEVMEM_CMSG_SKIP_OTHER);

	rx = calloc(1, sizeof(*rx));
	if (!rx)
		return devmem_fail(-ENOMEM, "out of memory");
	rx->cmsg_flags = cmsg_flags;
	rx->recvmsg = devmem_sys_recvmsg;
	err = devmem_ctrl_init(&rx->ctrl, frags);
	if (err) {
		devmem_fail(err, "out of memory for %u fragments",
			    frags ? frags : DEVMEM_RX_DEFAULT_FRAGS);
		goto err_free_rx;
	}

	*rxp = rx;
	return 0;

err_free_rx:
	free(rx);
	return err;
}

DEVMEM_EXPORT void devmem_rx_free(struct devmem_rx *rx)
{
	if (!rx)
		return;
	devmem_ctrl_release(&rx->ctrl);
	free(rx);
}

void devmem_rx_set_recvmsg(struct devmem_rx *rx, devmem_recvmsg_fn fn,
			   void *arg)
{
	rx->recvmsg = fn ? fn : devmem_sys_recvmsg;
	rx->recvmsg_arg = arg;
}

DEVMEM_EXPORT int devmem_rx_set_recycler(struct devmem_rx *rx,
					 struct devmem_recycler *rc)
{
	devmem_error_clear();
	if (!rx)
		return devmem_fail(-EINVAL, "no receive context");
	rx->rc = rc;
	if (!rc)
		rx->stall_b = NULL;
	return 0;
}

DEVMEM_EXPORT int devmem_rx_set_stall_check(struct devmem_rx *rx,
					    const struct devmem_binding *b,
					    unsigned int ms)
{
	int err;

	devmem_error_clear();
	if (!rx)
		return devmem_fail(-EINVAL, "no receive context");
	err = devmem_stall_check_args(b, ms);
	if (err)
		return err;
	if (b && !rx->rc)
		return devmem_fail(-EINVAL, "no recycler linked: the check counts the tokens that receives hand it (devmem_rx_set_recycler() first)");
	rx->stall_b = b;
	rx->stall_ms = b ? ms : 0;
	return 0;
}

static int64_t devmem_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The socket's SO_RCVTIMEO in ms, 0 for none (or none readable). */
static int64_t devmem_rcvtimeo_ms(int fd)
{
	struct timeval tv;
	socklen_t len = sizeof(tv);

	if (getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len))
		return 0;
	return (int64_t)tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000;
}

/*
 * Wait for @fd to have something to read, as a blocking recvmsg() would
 * (up to its SO_RCVTIMEO, which started at @start), but look at the
 * watched binding after every stall_ms without data: when the
 * application holds every one of its buffers, the card has none to
 * receive into and nothing arrives until tokens go back, so the wait
 * ends with -ENOBUFS. Returns 0 when the socket is readable (or
 * has an error or end of stream for recvmsg to report), or -errno.
 */
static int devmem_rx_wait(struct devmem_rx *rx, int fd, int64_t start,
			  int64_t timeo)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int64_t slice, left;
	int ret;

	for (;;) {
		slice = rx->stall_ms;
		if (timeo) {
			left = timeo - (devmem_now_ms() - start);
			if (left <= 0)
				return devmem_fail(-EAGAIN, "recvmsg(MSG_SOCK_DEVMEM): no data within SO_RCVTIMEO");
			if (left < slice)
				slice = left;
		}
		ret = poll(&pfd, 1, (int)slice);
		if (ret < 0)
			return devmem_fail_errno(-errno, "poll");
		if (ret)
			return 0;
		if (slice < rx->stall_ms)
			continue;	/* SO_RCVTIMEO ends it above */
		ret = devmem_held_stalled(rx->stall_b, rx->stall_ms);
		if (ret)
			return ret;
	}
}

DEVMEM_EXPORT ssize_t devmem_recv(struct devmem_rx *rx, int fd, void *buf,
				  size_t len, int flags,
				  struct devmem_rx_result *res)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct devmem_rx_result out;
	int64_t start = -1, timeo = 0;
	ssize_t ret, flushed;
	int err, look, watch;
	struct msghdr msg;

	devmem_error_clear();
	if (!rx || !res)
		return devmem_fail(-EINVAL, "%s", !rx ? "no receive context" :
				   "no place for the result");
	if (len && !buf)
		return devmem_fail(-EINVAL, "no buffer for %zu bytes", len);
	devmem_ctrl_result(&rx->ctrl, NULL, 0, NULL, 0, &out);
	err = devmem_rx_result_copy(res, &out);
	if (err)
		return devmem_fail(err, "res->size is %zu: set it to sizeof(struct devmem_rx_result)",
				   res->size);

	/* With tokens pending in the recycler, a receive that would wait
	 * looks first without waiting; if nothing is queued, the tokens go
	 * back before it waits, or before -EAGAIN reaches a caller that does
	 * not wait.
	 */
	look = rx->rc && devmem_recycler_nr(rx->rc);
	/* A watched binding: the receive never blocks in recvmsg() but in
	 * devmem_rx_wait(), which looks at the binding while it waits.
	 */
	watch = rx->stall_b && !(flags & MSG_DONTWAIT);
	for (;;) {
		devmem_ctrl_msg(&rx->ctrl, &msg, &iov);
		ret = rx->recvmsg(fd, &msg, flags | MSG_SOCK_DEVMEM |
				  (look || watch ? MSG_DONTWAIT : 0),
				  rx->recvmsg_arg);
		if (ret == -EAGAIN && look) {
			look = 0;
			flushed = devmem_recycler_flush(rx->rc);
			if (flushed < 0)
				return flushed;
			if (flags & MSG_DONTWAIT)
				break;
			continue;
		}
		if (ret == -EAGAIN && watch) {
			if (start < 0) {
				start = devmem_now_ms();
				timeo = devmem_rcvtimeo_ms(fd);
			}
			err = devmem_rx_wait(rx, fd, start, timeo);
			if (err)
				return err;
			continue;
		}
		if (ret != -ETOOSMALL)
			break;
		err = devmem_ctrl_grow(&rx->ctrl);
		if (err)
			return devmem_ctrl_grow_fail(&rx->ctrl, err);
	}
	/* A caller polling with MSG_DONTWAIT meets this on every call. */
	if (ret == -EAGAIN)
		return devmem_fail_const(ret, "recvmsg(MSG_SOCK_DEVMEM): Resource temporarily unavailable");
	if (ret < 0)
		return devmem_fail_errno(ret, "recvmsg(MSG_SOCK_DEVMEM)");
	ret = devmem_ctrl_result(&rx->ctrl, &msg, rx->cmsg_flags, buf, ret,
				 &out);
	if (ret > 0) {
		if (rx->rc)
			devmem_recycler_note(rx->rc, out.frags, out.nr_frags);
		devmem_rx_result_copy(res, &out);
	}
	return ret;
}
