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
 * is an error.
 */
DEVMEM_EXPORT int devmem_parse_cmsgs(const struct msghdr *msg,
				     unsigned int flags,
				     struct devmem_frag *frags,
				     size_t max_frags, size_t *nr_frags,
				     uint64_t *linear)
{
	const unsigned char *pos, *end;
	struct dmabuf_cmsg dc;
	struct cmsghdr cm;
	uint64_t bytes = 0;
	size_t n = 0;

	if (!msg || (flags & ~DEVMEM_CMSG_SKIP_OTHER) ||
	    (max_frags && !frags) ||
	    (msg->msg_controllen && !msg->msg_control))
		return -EINVAL;
	if (msg->msg_flags & MSG_CTRUNC)
		return -EBADMSG;

	pos = msg->msg_control;
	end = pos + msg->msg_controllen;
	/* Fewer bytes than a header left: the last cmsg's padding. */
	while ((size_t)(end - pos) >= sizeof(cm)) {
		memcpy(&cm, pos, sizeof(cm));
		if (cm.cmsg_len < CMSG_LEN(0) ||
		    cm.cmsg_len > (size_t)(end - pos))
			return -EPROTO;

		if (!devmem_cmsg_is_devmem(&cm)) {
			if (!(flags & DEVMEM_CMSG_SKIP_OTHER))
				return -EPROTO;
		} else if (cm.cmsg_len != DEVMEM_CMSG_LEN) {
			return -EPROTO;
		} else {
			memcpy(&dc, pos + CMSG_LEN(0), sizeof(dc));
			if (cm.cmsg_type == SCM_DEVMEM_LINEAR) {
				bytes += dc.frag_size;
			} else {
				if (n < max_frags) {
					frags[n].offset = dc.frag_offset;
					frags[n].size = dc.frag_size;
					frags[n].token = dc.frag_token;
					frags[n].dmabuf_id = dc.dmabuf_id;
				}
				n++;
			}
		}
		/* The last cmsg may end without its padding. */
		if (CMSG_ALIGN(cm.cmsg_len) >= (size_t)(end - pos))
			break;
		pos += CMSG_ALIGN(cm.cmsg_len);
	}

	if (nr_frags)
		*nr_frags = n;
	if (linear)
		*linear = bytes;
	return n > max_frags ? -ENOSPC : 0;
}
