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
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEVMEM_RX_DEFAULT_FRAGS	128U
#define DEVMEM_RX_SLOT		CMSG_SPACE(sizeof(struct dmabuf_cmsg))

struct devmem_rx {
	unsigned int cmsg_flags;
	unsigned int slots;		/* devmem cmsgs the buffer holds */
	void *control;			/* slots * DEVMEM_RX_SLOT bytes */
	struct devmem_frag *frags;	/* slots entries */
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
static int devmem_rx_resize(struct devmem_rx *rx, unsigned int slots)
{
	struct devmem_frag *frags;
	void *control;

	control = malloc((size_t)slots * DEVMEM_RX_SLOT);
	if (!control)
		return -ENOMEM;
	frags = calloc(slots, sizeof(*frags));
	if (!frags)
		goto err_free_control;

	free(rx->control);
	free(rx->frags);
	rx->control = control;
	rx->frags = frags;
	rx->slots = slots;
	return 0;

err_free_control:
	free(control);
	return -ENOMEM;
}

DEVMEM_EXPORT int devmem_rx_new(struct devmem_rx **rxp, unsigned int frags,
				unsigned int cmsg_flags)
{
	struct devmem_rx *rx;
	int err;

	if (!rxp || (cmsg_flags & ~DEVMEM_CMSG_SKIP_OTHER))
		return -EINVAL;
	if (!frags)
		frags = DEVMEM_RX_DEFAULT_FRAGS;
	if (frags > DEVMEM_RX_MAX_FRAGS)
		frags = DEVMEM_RX_MAX_FRAGS;

	rx = calloc(1, sizeof(*rx));
	if (!rx)
		return -ENOMEM;
	rx->cmsg_flags = cmsg_flags;
	rx->recvmsg = devmem_rx_sys_recvmsg;
	err = devmem_rx_resize(rx, frags);
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
	free(rx->control);
	free(rx->frags);
	free(rx);
}

void devmem_rx_set_recvmsg(struct devmem_rx *rx, devmem_recvmsg_fn fn,
			   void *arg)
{
	rx->recvmsg = fn ? fn : devmem_rx_sys_recvmsg;
	rx->recvmsg_arg = arg;
}

static int devmem_rx_grow(struct devmem_rx *rx)
{
	unsigned int slots = rx->slots * 2;

	if (rx->slots >= DEVMEM_RX_MAX_FRAGS)
		return -EMSGSIZE;
	if (slots > DEVMEM_RX_MAX_FRAGS)
		slots = DEVMEM_RX_MAX_FRAGS;
	return devmem_rx_resize(rx, slots);
}

/*
 * A receive is either plain host data (no devmem cmsgs) or device-memory
 * data, every byte of which a cmsg accounts for: the kernel never mixes
 * the two in one call.
 */
static int devmem_rx_account(const struct devmem_rx *rx, size_t nr,
			     uint64_t linear, size_t received,
			     struct devmem_rx_result *res)
{
	uint64_t dmabuf = 0;
	size_t i;

	for (i = 0; i < nr; i++)
		dmabuf += rx->frags[i].size;
	if (dmabuf > received)
		return -EPROTO;
	if ((nr || linear) && linear + dmabuf != received)
		return -EPROTO;

	res->frags = rx->frags;
	res->nr_frags = nr;
	res->dmabuf_bytes = dmabuf;
	res->host_bytes = received - dmabuf;
	return 0;
}

DEVMEM_EXPORT ssize_t devmem_recv(struct devmem_rx *rx, int fd, void *buf,
				  size_t len, int flags,
				  struct devmem_rx_result *res)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg;
	uint64_t linear;
	ssize_t ret;
	size_t nr;
	int err;

	if (!rx || !res || (len && !buf))
		return -EINVAL;
	memset(res, 0, sizeof(*res));

	for (;;) {
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = rx->control;
		msg.msg_controllen = (size_t)rx->slots * DEVMEM_RX_SLOT;
		ret = rx->recvmsg(fd, &msg, flags | MSG_SOCK_DEVMEM,
				  rx->recvmsg_arg);
		if (ret != -ETOOSMALL)
			break;
		err = devmem_rx_grow(rx);
		if (err)
			return err;
	}
	if (ret <= 0)
		return ret;

	err = devmem_parse_cmsgs(&msg, rx->cmsg_flags, rx->frags, rx->slots,
				 &nr, &linear);
	if (err == -ENOSPC)
		err = -EPROTO;	/* more cmsgs than fit: not the kernel */
	if (!err)
		err = devmem_rx_account(rx, nr, linear, ret, res);
	return err ? err : ret;
}
