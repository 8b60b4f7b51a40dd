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
#include <stdlib.h>
#include <string.h>

#define DEVMEM_RX_DEFAULT_FRAGS	128U
#define DEVMEM_RX_SLOT		CMSG_SPACE(sizeof(struct dmabuf_cmsg))

struct devmem_rx {
	unsigned int cmsg_flags;
	struct devmem_ctrl ctrl;
	devmem_recvmsg_fn recvmsg;
	void *recvmsg_arg;
};

static ssize_t devmem_rx_sys_recvmsg(int fd, struct msghdr *msg, int flags,
				     void *arg)
{
	ssize_t ret;

	(void)arg;
	ret = recvmsg(fd, msg, flags);
	return ret < 0 ? -errno : ret;
}

/* Both arrays at @slots; on failure the old ones stay as they were. */
static int devmem_ctrl_resize(struct devmem_ctrl *c, unsigned int slots)
{
	struct devmem_frag *frags;
	void *control;

	control = malloc((size_t)slots * DEVMEM_RX_SLOT);
	if (!control)
		return -ENOMEM;
	frags = calloc(slots, sizeof(*frags));
	if (!frags)
		goto err_free_control;

	free(c->control);
	free(c->frags);
	c->control = control;
	c->frags = frags;
	c->slots = slots;
	return 0;

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
	return devmem_ctrl_resize(c, frags);
}

void devmem_ctrl_release(struct devmem_ctrl *c)
{
	free(c->control);
	free(c->frags);
	c->control = NULL;
	c->frags = NULL;
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
 * data, every byte of which a cmsg accounts for: the kernel never mixes
 * the two in one call.
 */
static int devmem_ctrl_account(const struct devmem_ctrl *c, size_t nr,
			       uint64_t linear, size_t received,
			       struct devmem_rx_result *res)
{
	uint64_t dmabuf = 0;
	size_t i;

	for (i = 0; i < nr; i++)
		dmabuf += c->frags[i].size;
	if (dmabuf > received)
		return -EPROTO;
	if ((nr || linear) && linear + dmabuf != received)
		return -EPROTO;

	res->frags = c->frags;
	res->nr_frags = nr;
	res->dmabuf_bytes = dmabuf;
	res->host_bytes = received - dmabuf;
	return 0;
}

ssize_t devmem_ctrl_result(const struct devmem_ctrl *c,
			   const struct msghdr *msg, unsigned int cmsg_flags,
			   ssize_t ret, struct devmem_rx_result *res)
{
	uint64_t linear;
	size_t nr;
	int err;

	memset(res, 0, sizeof(*res));
	if (ret <= 0)
		return ret;
	err = devmem_parse_cmsgs(msg, cmsg_flags, c->frags, c->slots, &nr,
				 &linear);
	if (err == -ENOSPC)
		err = -EPROTO;	/* more cmsgs than fit: not the kernel */
	if (!err)
		err = devmem_ctrl_account(c, nr, linear, ret, res);
	return err ? err : ret;
}

DEVMEM_EXPORT int devmem_rx_new(struct devmem_rx **rxp, unsigned int frags,
				unsigned int cmsg_flags)
{
	struct devmem_rx *rx;
	int err;

	if (!rxp || (cmsg_flags & ~DEVMEM_CMSG_SKIP_OTHER))
		return -EINVAL;

	rx = calloc(1, sizeof(*rx));
	if (!rx)
		return -ENOMEM;
	rx->cmsg_flags = cmsg_flags;
	rx->recvmsg = devmem_rx_sys_recvmsg;
	err = devmem_ctrl_init(&rx->ctrl, frags);
	if (err)
		goto err_free_rx;

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
	rx->recvmsg = fn ? fn : devmem_rx_sys_recvmsg;
	rx->recvmsg_arg = arg;
}

DEVMEM_EXPORT ssize_t devmem_recv(struct devmem_rx *rx, int fd, void *buf,
				  size_t len, int flags,
				  struct devmem_rx_result *res)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg;
	ssize_t ret;
	int err;

	if (!rx || !res || (len && !buf))
		return -EINVAL;
	memset(res, 0, sizeof(*res));

	for (;;) {
		devmem_ctrl_msg(&rx->ctrl, &msg, &iov);
		ret = rx->recvmsg(fd, &msg, flags | MSG_SOCK_DEVMEM,
				  rx->recvmsg_arg);
		if (ret != -ETOOSMALL)
			break;
		err = devmem_ctrl_grow(&rx->ctrl);
		if (err)
			return err;
	}
	return devmem_ctrl_result(&rx->ctrl, &msg, rx->cmsg_flags, ret, res);
}
