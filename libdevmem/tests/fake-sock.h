/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fake devmem TCP socket for the recvmsg hooks of src/internal.h
 * (tests recv and uring): it queues device-memory fragments and behaves
 * as the kernel does, ETOOSMALL only when nothing fits and an early stop
 * when the control buffer fills. Include after internal.h.
 */
#ifndef LIBDEVMEM_TEST_FAKE_SOCK_H
#define LIBDEVMEM_TEST_FAKE_SOCK_H

#include <errno.h>
#include <string.h>

#define SLOT		CMSG_SPACE(sizeof(struct dmabuf_cmsg))

/* A queue of device-memory fragments, each optionally preceded by linear
 * bytes, as one unreadable skb after another.
 */
struct fake_sock {
	unsigned int min_slots;	/* ETOOSMALL below this many slots */
	size_t nr, next;	/* fragments queued, and received */
	uint32_t frag_size;
	uint32_t linear;	/* bytes before each fragment */
	ssize_t force;		/* nonzero: return this instead */
	int bad_sum;		/* report one byte more than the cmsgs */
	unsigned int calls, toosmall;
	int saw_devmem_flag;
};

static void put_dc(struct msghdr *msg, size_t *used, int type,
		   const struct dmabuf_cmsg *dc)
{
	struct cmsghdr *cm = (struct cmsghdr *)((char *)msg->msg_control + *used);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = type;
	cm->cmsg_len = CMSG_LEN(sizeof(*dc));
	memcpy(CMSG_DATA(cm), dc, sizeof(*dc));
	*used += SLOT;
}

static ssize_t fake_recvmsg(int fd, struct msghdr *msg, int flags, void *arg)
{
	struct fake_sock *s = arg;
	size_t slots = msg->msg_controllen / SLOT, used = 0, per, n;
	struct dmabuf_cmsg dc;
	ssize_t done = 0;

	(void)fd;
	s->calls++;
	s->saw_devmem_flag = !!(flags & MSG_SOCK_DEVMEM);
	if (s->force)
		return s->force;
	if (s->next == s->nr)
		return 0;
	if (slots < s->min_slots || !slots) {
		s->toosmall++;
		return -ETOOSMALL;
	}

	/* Whole skbs only: a linear cmsg and a fragment cmsg each. */
	per = s->linear ? 2 : 1;
	for (n = 0; s->next < s->nr && (n + 1) * per <= slots; n++) {
		if (s->linear) {
			memset(&dc, 0, sizeof(dc));
			dc.frag_size = s->linear;
			put_dc(msg, &used, SCM_DEVMEM_LINEAR, &dc);
			memset((char *)msg->msg_iov[0].iov_base + (done -
			       (ssize_t)(n * s->frag_size)), 'L', s->linear);
			done += s->linear;
		}
		memset(&dc, 0, sizeof(dc));
		dc.frag_offset = s->next * 4096;
		dc.frag_size = s->frag_size;
		dc.frag_token = s->next + 1;
		dc.dmabuf_id = 3;
		put_dc(msg, &used, SCM_DEVMEM_DMABUF, &dc);
		done += s->frag_size;
		s->next++;
	}
	msg->msg_controllen = used;
	return done + s->bad_sum;
}

#endif /* LIBDEVMEM_TEST_FAKE_SOCK_H */
