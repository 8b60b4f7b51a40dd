// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * The control messages of recvmsg(MSG_SOCK_DEVMEM): SCM_DEVMEM_DMABUF for
 * each fragment of payload in a dma-buf, SCM_DEVMEM_LINEAR for bytes the
 * kernel copied to the user buffer instead. Both carry a struct
 * dmabuf_cmsg. The kernel never truncates one (it stops the receive
 * instead), so any cmsg that is not whole is corruption, not a short
 * buffer.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>

#define DEVMEM_CMSG_LEN		CMSG_LEN(sizeof(struct dmabuf_cmsg))

static int devmem_cmsg_is_devmem(const struct cmsghdr *cm)
{
	return cm->cmsg_level == SOL_SOCKET &&
	       (cm->cmsg_type == SCM_DEVMEM_DMABUF ||
		cm->cmsg_type == SCM_DEVMEM_LINEAR);
}

/*
 * Walked by hand rather than with CMSG_NXTHDR(), which ends the walk
 * without a word at a cmsg whose length runs past the buffer: here that
 * is an error. @fn sees each devmem cmsg, in the order of the buffer; a
 * nonzero return ends the walk with that value.
 */
int devmem_cmsg_walk(const struct msghdr *msg, unsigned int flags,
		     devmem_cmsg_fn fn, void *arg)
{
	const unsigned char *pos, *end;
	struct dmabuf_cmsg dc;
	struct cmsghdr cm;
	int err;

	if (msg->msg_flags & MSG_CTRUNC)
		return devmem_fail(-EBADMSG, "the kernel truncated the control data (MSG_CTRUNC)");

	pos = msg->msg_control;
	end = pos + msg->msg_controllen;
	/* Fewer bytes than a header left: the last cmsg's padding. */
	while ((size_t)(end - pos) >= sizeof(cm)) {
		memcpy(&cm, pos, sizeof(cm));
		if (cm.cmsg_len < CMSG_LEN(0) ||
		    cm.cmsg_len > (size_t)(end - pos))
			return devmem_fail(-EPROTO, "a cmsg of %zu bytes at offset %td of %zu",
					   (size_t)cm.cmsg_len,
					   pos - (const unsigned char *)msg->msg_control,
					   (size_t)msg->msg_controllen);

		if (!devmem_cmsg_is_devmem(&cm)) {
			if (!(flags & DEVMEM_CMSG_SKIP_OTHER))
				return devmem_fail(-EPROTO, "a cmsg of level %d type %d, not a devmem one",
						   cm.cmsg_level, cm.cmsg_type);
		} else if (cm.cmsg_len != DEVMEM_CMSG_LEN) {
			return devmem_fail(-EPROTO, "a devmem cmsg of %zu bytes, not %zu",
					   (size_t)cm.cmsg_len,
					   (size_t)DEVMEM_CMSG_LEN);
		} else {
			memcpy(&dc, pos + CMSG_LEN(0), sizeof(dc));
			err = fn(cm.cmsg_type == SCM_DEVMEM_LINEAR, &dc, arg);
			if (err)
				return err;
		}
		/* The last cmsg may end without its padding. */
		if (CMSG_ALIGN(cm.cmsg_len) >= (size_t)(end - pos))
			break;
		pos += CMSG_ALIGN(cm.cmsg_len);
	}
	return 0;
}

void devmem_frag_from_cmsg(struct devmem_frag *f, const struct dmabuf_cmsg *dc)
{
	f->offset = dc->frag_offset;
	f->size = dc->frag_size;
	f->token = dc->frag_token;
	f->dmabuf_id = dc->dmabuf_id;
}

struct devmem_parse_state {
	struct devmem_frag *frags;
	size_t max, n;
	uint64_t linear;
};

static int devmem_parse_one(int linear, const struct dmabuf_cmsg *dc,
			    void *arg)
{
	struct devmem_parse_state *st = arg;

	if (linear) {
		st->linear += dc->frag_size;
		return 0;
	}
	if (st->n < st->max)
		devmem_frag_from_cmsg(&st->frags[st->n], dc);
	st->n++;
	return 0;
}

DEVMEM_EXPORT int devmem_parse_cmsgs(const struct msghdr *msg,
				     unsigned int flags,
				     struct devmem_frag *frags,
				     size_t max_frags, size_t *nr_frags,
				     uint64_t *linear)
{
	struct devmem_parse_state st = { .frags = frags, .max = max_frags };
	int err;

	devmem_error_clear();
	if (!msg)
		return devmem_fail(-EINVAL, "no message");
	if (flags & ~DEVMEM_CMSG_SKIP_OTHER)
		return devmem_fail(-EINVAL, "unknown flags 0x%x",
				   flags & ~DEVMEM_CMSG_SKIP_OTHER);
	if (max_frags && !frags)
		return devmem_fail(-EINVAL, "no array for %zu fragments",
				   max_frags);
	if (msg->msg_controllen && !msg->msg_control)
		return devmem_fail(-EINVAL, "msg_controllen %zu without msg_control",
				   (size_t)msg->msg_controllen);
	err = devmem_cmsg_walk(msg, flags, devmem_parse_one, &st);
	if (err)
		return err;

	if (nr_frags)
		*nr_frags = st.n;
	if (linear)
		*linear = st.linear;
	if (st.n > max_frags)
		return devmem_fail(-ENOSPC, "%zu fragments, room for %zu",
				   st.n, max_frags);
	return 0;
}
