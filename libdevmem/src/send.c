// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Sending from device memory: sendmsg(MSG_ZEROCOPY) with a
 * SCM_DEVMEM_DMABUF cmsg naming a tx binding, each iovec a span of its
 * dma-buf (iov_base the offset, not an address).
 *
 * The kernel numbers a socket's zerocopy sends: each sendmsg() that
 * queues at least one byte takes the next id of a u32 counter that
 * starts at 0 and wraps, one that queues nothing takes none. Once the
 * device no longer needs a send's bytes, the socket's error queue gets a
 * report naming an inclusive range of ids; TCP reports in order, merged
 * into ranges, but nothing here depends on the order: a send reported
 * before an earlier one is held until that one is, so that the caller
 * gets completions in send order whatever the kernel does. The sender
 * keeps one record per id, in id order from the oldest unreaped one:
 * record i is id head_id + i, found by subtraction, wrap-around
 * included. Each record keeps the spans its sendmsg() queued (pieces of
 * the caller's spans where a span was split over two calls or sent in
 * part) until its report, since only then may the caller overwrite them.
 *
 * The kernel takes at most UIO_MAXIOV iovecs in one call and truncates
 * a call of more than MAX_RW_COUNT bytes (INT_MAX rounded down to a
 * page) without saying so, so a long list of spans, or a long span, goes
 * out in several calls of at most DEVMEM_SEND_MAX_IOV iovecs and
 * DEVMEM_SEND_MAX_BYTES bytes.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <linux/errqueue.h>
#include <netinet/in.h>

#define DEVMEM_SEND_MAX_IOV	UIO_MAXIOV
/* Below MAX_RW_COUNT whatever the page size. */
#define DEVMEM_SEND_MAX_BYTES	((size_t)1 << 30)
/* A report's cmsg: struct sock_extended_err and the offender's address. */
#define DEVMEM_REPORT_CONTROL	256

/* The spans of one send (one id) that the caller has not reaped yet. */
struct devmem_send_rec {
	uint64_t first;		/* its first span, an index into the spans */
	uint64_t bytes;		/* what the sendmsg() queued */
	uint64_t tag;		/* the caller's call's, when tagged */
	uint32_t nr;		/* spans left to hand back */
	uint8_t done;		/* the kernel reported it */
	uint8_t last;		/* the last of a tagged call's records */
};

/* What the first send made of a sender. */
enum devmem_send_mode {
	DEVMEM_SEND_ANY,	/* no send yet */
	DEVMEM_SEND_SPANS,	/* devmem_send(), reaped as spans */
	DEVMEM_SEND_TAGGED,	/* devmem_send_tagged(), reaped as tags */
};

struct devmem_sender {
	int fd;
	uint32_t dmabuf_id;
	uint32_t head_id;	/* the id of recs[0] */
	uint32_t next_id;	/* the id of the next send: head_id + nr_recs */
	struct devmem_send_rec *recs;
	size_t nr_recs, cap_recs;
	struct devmem_span *spans;	/* of every record, in id order */
	uint64_t spans_base;	/* the index of spans[0] */
	size_t nr_spans, cap_spans;
	uint64_t pending;	/* bytes sent and not reaped */
	enum devmem_send_mode mode;
	devmem_sendmsg_fn sendmsg;
	devmem_recvmsg_fn recvmsg;
	void *hook_arg;
	struct iovec iov[DEVMEM_SEND_MAX_IOV];
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} ctrl;
};

static ssize_t devmem_sender_sys_sendmsg(int fd, const struct msghdr *msg,
					 int flags, void *arg)
{
	ssize_t ret;

	(void)arg;
	ret = sendmsg(fd, msg, flags);
	return ret < 0 ? -errno : ret;
}

DEVMEM_EXPORT int devmem_sender_new(struct devmem_sender **sp, int sockfd,
				    const struct devmem_binding *tx)
{
	struct devmem_sender *s;
	struct cmsghdr *cm;
	int one = 1;

	devmem_error_clear();
	if (!sp)
		return devmem_fail(-EINVAL, "no place for the sender");
	if (sockfd < 0)
		return devmem_fail(-EBADF, "socket fd %d", sockfd);
	if (!tx)
		return devmem_fail(-EINVAL, "no binding to send from");
	if (!devmem_binding_is_tx(tx))
		return devmem_fail(-EINVAL, "binding %u is for receiving: sending needs one of devmem_binding_new_tx()",
				   devmem_binding_id(tx));

	s = calloc(1, sizeof(*s));
	if (!s)
		return devmem_fail(-ENOMEM, "out of memory");
	if (setsockopt(sockfd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one))) {
		free(s);
		return devmem_fail_errno(-errno, "SO_ZEROCOPY on fd %d",
					 sockfd);
	}
	s->fd = sockfd;
	s->dmabuf_id = devmem_binding_id(tx);
	s->sendmsg = devmem_sender_sys_sendmsg;
	s->recvmsg = devmem_sys_recvmsg;

	cm = &s->ctrl.align;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_DEVMEM_DMABUF;
	cm->cmsg_len = CMSG_LEN(sizeof(uint32_t));
	memcpy(CMSG_DATA(cm), &s->dmabuf_id, sizeof(uint32_t));
	*sp = s;
	return 0;
}

DEVMEM_EXPORT void devmem_sender_free(struct devmem_sender *s)
{
	if (!s)
		return;
	free(s->recs);
	free(s->spans);
	free(s);
}

void devmem_sender_set_hooks(struct devmem_sender *s,
			     devmem_sendmsg_fn sendmsg_fn,
			     devmem_recvmsg_fn recvmsg_fn, void *arg)
{
	s->sendmsg = sendmsg_fn ? sendmsg_fn : devmem_sender_sys_sendmsg;
	s->recvmsg = recvmsg_fn ? recvmsg_fn : devmem_sys_recvmsg;
	s->hook_arg = arg;
}

void devmem_sender_set_next_id(struct devmem_sender *s, uint32_t id)
{
	s->head_id = id;
	s->next_id = id;
}

DEVMEM_EXPORT uint64_t devmem_sender_pending(const struct devmem_sender *s)
{
	return s->pending;
}

/* Room in *@array (of *@cap elements of @size) for @need. */
static int devmem_grow(void **array, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need && n <= SIZE_MAX / 2 / size)
		n *= 2;
	if (n < need)
		return -ENOMEM;
	p = realloc(*array, n * size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = n;
	return 0;
}

/* Room for one more record of up to @spans spans, before the send: once
 * the kernel has taken the bytes, recording them cannot fail.
 */
static int devmem_sender_reserve(struct devmem_sender *s, size_t spans)
{
	if (s->nr_recs == UINT32_MAX)
		return devmem_fail(-ENOBUFS, "%zu sends await their completion reports",
				   s->nr_recs);
	if (devmem_grow((void **)&s->recs, &s->cap_recs, s->nr_recs + 1,
			sizeof(*s->recs)) ||
	    devmem_grow((void **)&s->spans, &s->cap_spans, s->nr_spans + spans,
			sizeof(*s->spans)))
		return devmem_fail(-ENOMEM, "out of memory for %zu sends awaiting their reports",
				   s->nr_recs + 1);
	return 0;
}

/* Record the send of the first @bytes of s->iov as the next id. */
static void devmem_sender_record(struct devmem_sender *s, size_t bytes,
				 uint64_t tag)
{
	struct devmem_send_rec *r = &s->recs[s->nr_recs++];
	struct devmem_span *sp;
	size_t i;

	r->first = s->spans_base + s->nr_spans;
	r->bytes = bytes;
	r->tag = tag;
	r->nr = 0;
	r->done = 0;
	r->last = 0;
	for (i = 0; bytes; i++) {
		sp = &s->spans[s->nr_spans++];
		sp->offset = (uintptr_t)s->iov[i].iov_base;
		sp->len = s->iov[i].iov_len < bytes ? s->iov[i].iov_len : bytes;
		bytes -= sp->len;
		r->nr++;
	}
	s->next_id++;
}

/* Spans that overflow, are empty, or add up to more than one call can
 * say it sent.
 */
static int devmem_spans_check(const struct devmem_span *spans, size_t nr)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < nr; i++) {
		if (!spans[i].len)
			return devmem_fail(-EINVAL, "span %zu is empty", i);
		if (spans[i].offset + spans[i].len < spans[i].offset)
			return devmem_fail(-EINVAL, "span %zu ends beyond 2^64",
					   i);
#if UINTPTR_MAX < UINT64_MAX
		if (spans[i].offset + spans[i].len > UINTPTR_MAX)
			return devmem_fail(-EINVAL, "span %zu ends beyond what an iovec holds",
					   i);
#endif
		if (spans[i].len > SSIZE_MAX - total)
			return devmem_fail(-EINVAL, "the spans add up to more than %zd bytes",
					   (ssize_t)SSIZE_MAX);
		total += spans[i].len;
	}
	return 0;
}

static const char *const devmem_send_mode_calls[] = {
	[DEVMEM_SEND_SPANS] = "devmem_send() and devmem_sender_reap()",
	[DEVMEM_SEND_TAGGED] =
		"devmem_send_tagged() and devmem_sender_reap_tagged()",
};

/* -EINVAL with the reason unless the sender's sends are of @mode. */
static int devmem_sender_mode_check(const struct devmem_sender *s,
				    enum devmem_send_mode mode)
{
	if (s->mode == DEVMEM_SEND_ANY || s->mode == mode)
		return 0;
	return devmem_fail(-EINVAL, "this sender's sends are %s: use %s",
			   s->mode == DEVMEM_SEND_TAGGED ? "tagged" : "not tagged",
			   devmem_send_mode_calls[s->mode]);
}

static ssize_t devmem_send_common(struct devmem_sender *s,
				  const struct devmem_span *spans,
				  size_t nr_spans, int flags,
				  enum devmem_send_mode mode, uint64_t tag)
{
	struct msghdr msg = { 0 };
	size_t i = 0, niov, bytes, take;
	uint64_t off = 0;	/* into spans[i] */
	ssize_t sent = 0, ret;
	int err;

	devmem_error_clear();
	if (!s)
		return devmem_fail(-EINVAL, "no sender");
	err = devmem_sender_mode_check(s, mode);
	if (err)
		return err;
	if (!spans || !nr_spans)
		return devmem_fail(-EINVAL, "no spans to send");
	err = devmem_spans_check(spans, nr_spans);
	if (err)
		return err;

	msg.msg_iov = s->iov;
	msg.msg_control = s->ctrl.buf;
	msg.msg_controllen = sizeof(s->ctrl.buf);
	while (i < nr_spans) {
		for (niov = 0, bytes = 0; i < nr_spans &&
		     niov < DEVMEM_SEND_MAX_IOV && bytes < DEVMEM_SEND_MAX_BYTES;
		     niov++) {
			take = DEVMEM_SEND_MAX_BYTES - bytes;
			if (spans[i].len - off < take)
				take = spans[i].len - off;
			s->iov[niov].iov_base =
				(void *)(uintptr_t)(spans[i].offset + off);
			s->iov[niov].iov_len = take;
			bytes += take;
			off += take;
			if (off == spans[i].len) {
				i++;
				off = 0;
			}
		}
		msg.msg_iovlen = niov;
		err = devmem_sender_reserve(s, niov);
		if (err && sent)
			break;
		if (err)
			return err;
		ret = s->sendmsg(s->fd, &msg, flags | MSG_ZEROCOPY,
				 s->hook_arg);
		if (ret < 0) {
			/* What went out counts; the error comes again. */
			if (sent)
				break;
			return devmem_fail_errno((int)ret, "sendmsg of %zu bytes in %zu iovecs from binding %u on fd %d",
						 bytes, niov, s->dmabuf_id,
						 s->fd);
		}
		if (!ret)
			break;
		devmem_sender_record(s, (size_t)ret, tag);
		s->mode = mode;
		s->pending += (uint64_t)ret;
		sent += ret;
		if ((size_t)ret < bytes)
			break;
	}
	if (sent && mode == DEVMEM_SEND_TAGGED)
		s->recs[s->nr_recs - 1].last = 1;
	devmem_error_clear();
	return sent;
}

DEVMEM_EXPORT ssize_t devmem_send(struct devmem_sender *s,
				  const struct devmem_span *spans,
				  size_t nr_spans, int flags)
{
	return devmem_send_common(s, spans, nr_spans, flags, DEVMEM_SEND_SPANS,
				  0);
}

DEVMEM_EXPORT ssize_t devmem_send_tagged(struct devmem_sender *s,
					 const struct devmem_span *spans,
					 size_t nr_spans, int flags,
					 uint64_t tag)
{
	return devmem_send_common(s, spans, nr_spans, flags,
				  DEVMEM_SEND_TAGGED, tag);
}

/*
 * Mark ids @lo to @hi (inclusive, wrapping) completed; each must be a
 * send of ours that no report named yet.
 */
static int devmem_sender_complete(struct devmem_sender *s, uint32_t lo,
				  uint32_t hi)
{
	uint64_t n = (uint64_t)(uint32_t)(hi - lo) + 1;
	uint32_t first = lo - s->head_id;
	uint64_t i;

	for (i = 0; i < n; i++)
		if (first + i >= s->nr_recs || s->recs[first + i].done)
			break;
	if (i < n) {
		if (!s->nr_recs)
			return devmem_fail(-EPROTO, "a completion report for sends %u to %u, with none awaiting one",
					   lo, hi);
		return devmem_fail(-EPROTO, "a completion report for sends %u to %u: send %u %s (awaiting: %u to %u)",
				   lo, hi, (uint32_t)(lo + i),
				   first + i < s->nr_recs ?
				   "was reported before" : "is not ours",
				   s->head_id, s->next_id - 1);
	}
	for (i = 0; i < n; i++)
		s->recs[first + i].done = 1;
	return 0;
}

/* One report from the error queue: 0, or -EAGAIN when there is none. */
static int devmem_sender_read_report(struct devmem_sender *s)
{
	union {
		char buf[DEVMEM_REPORT_CONTROL];
		struct cmsghdr align;
	} control;
	const struct sock_extended_err *ee = NULL;
	struct msghdr msg = { 0 };
	struct cmsghdr *cm;
	ssize_t ret;

	msg.msg_control = control.buf;
	msg.msg_controllen = sizeof(control.buf);
	ret = s->recvmsg(s->fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT,
			 s->hook_arg);
	if (ret == -EAGAIN)
		return -EAGAIN;
	if (ret < 0)
		return devmem_fail_errno((int)ret, "recvmsg(MSG_ERRQUEUE) on fd %d",
					 s->fd);
	if (msg.msg_flags & MSG_CTRUNC)
		return devmem_fail(-EPROTO, "a report from the error queue of fd %d was truncated",
				   s->fd);
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
		     (cm->cmsg_level == SOL_IPV6 &&
		      cm->cmsg_type == IPV6_RECVERR)) &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(*ee))) {
			ee = (const struct sock_extended_err *)CMSG_DATA(cm);
			break;
		}
	}
	if (!ee)
		return devmem_fail(-EPROTO, "a message from the error queue of fd %d without an extended error",
				   s->fd);
	if (ee->ee_origin != SO_EE_ORIGIN_ZEROCOPY || ee->ee_errno)
		return devmem_fail(-EPROTO, "a report on the error queue of fd %d that is no zerocopy completion: origin %u, errno %u",
				   s->fd, ee->ee_origin, ee->ee_errno);
	return devmem_sender_complete(s, ee->ee_info, ee->ee_data);
}

/* Every report queued now. */
static int devmem_sender_drain(struct devmem_sender *s)
{
	int err;

	while (!(err = devmem_sender_read_report(s)))
		;
	return err == -EAGAIN ? 0 : err;
}

/*
 * The records of the oldest tagged call not reaped: recs[0..*@end), the
 * last one flagged. 0 when not all of them are reported yet.
 */
static int devmem_sender_call_done(const struct devmem_sender *s, size_t from,
				   size_t *end)
{
	size_t i;

	for (i = from; i < s->nr_recs; i++) {
		if (!s->recs[i].done)
			return 0;
		if (s->recs[i].last) {
			*end = i + 1;
			return 1;
		}
	}
	return 0;
}

/* Something to hand back: spans of a completed send not reaped whole, or
 * a tagged call all of whose sends are reported.
 */
static int devmem_sender_ready(const struct devmem_sender *s)
{
	size_t i;

	if (s->mode == DEVMEM_SEND_TAGGED)
		return devmem_sender_call_done(s, 0, &i);
	for (i = 0; i < s->nr_recs && s->recs[i].done; i++)
		if (s->recs[i].nr)
			return 1;
	return 0;
}

/*
 * Wait for the error queue (POLLERR) up to @timeout_ms. POLLERR also
 * stands for a socket error, which the error queue then lacks: read
 * that. Returns 0 (reports read, or none in time) or -errno.
 */
static int devmem_sender_wait(struct devmem_sender *s, int timeout_ms)
{
	struct pollfd pfd = { .fd = s->fd };
	socklen_t len = sizeof(int);
	int ret, soerr = 0;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return devmem_fail_errno(-errno, "poll on fd %d", s->fd);
	if (!ret || !(pfd.revents & POLLERR))
		return 0;
	ret = devmem_sender_drain(s);
	if (ret || devmem_sender_ready(s))
		return ret;
	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &soerr, &len))
		return devmem_fail_errno(-errno, "SO_ERROR on fd %d", s->fd);
	if (soerr)
		return devmem_fail_errno(-soerr, "socket fd %d", s->fd);
	return 0;
}

/* Forget the records at the head whose spans are all reaped. */
static void devmem_sender_trim(struct devmem_sender *s)
{
	size_t k = 0;
	uint64_t drop;

	while (k < s->nr_recs && s->recs[k].done && !s->recs[k].nr)
		k++;
	if (!k)
		return;
	memmove(s->recs, s->recs + k, (s->nr_recs - k) * sizeof(*s->recs));
	s->nr_recs -= k;
	s->head_id += k;
	drop = s->nr_recs ? s->recs[0].first - s->spans_base : s->nr_spans;
	memmove(s->spans, s->spans + drop,
		(s->nr_spans - drop) * sizeof(*s->spans));
	s->nr_spans -= drop;
	s->spans_base += drop;
}

/* What both reaps do first: check, read the reports, wait if need be. */
static int devmem_sender_reap_begin(struct devmem_sender *s, const void *done,
				    size_t max, int timeout_ms,
				    enum devmem_send_mode mode)
{
	int err;

	devmem_error_clear();
	if (!s)
		return devmem_fail(-EINVAL, "no sender");
	err = devmem_sender_mode_check(s, mode);
	if (err)
		return err;
	if (!done || !max)
		return devmem_fail(-EINVAL, "no room for completions");
	err = devmem_sender_drain(s);
	if (!err && timeout_ms && s->nr_recs && !devmem_sender_ready(s))
		err = devmem_sender_wait(s, timeout_ms);
	return err;
}

DEVMEM_EXPORT ssize_t devmem_sender_reap(struct devmem_sender *s,
					 struct devmem_span *done, size_t max,
					 int timeout_ms)
{
	struct devmem_send_rec *r;
	size_t i, n = 0, k;
	int err;

	err = devmem_sender_reap_begin(s, done, max, timeout_ms,
				       DEVMEM_SEND_SPANS);
	if (err)
		return err;
	if (max > SSIZE_MAX)
		max = SSIZE_MAX;

	/* Completed sends in the order they were sent, up to the first one
	 * still in flight: a send reported early waits for those before it.
	 */
	for (i = 0; i < s->nr_recs && n < max; i++) {
		r = &s->recs[i];
		if (!r->done)
			break;
		if (!r->nr)
			continue;
		k = r->nr < max - n ? r->nr : max - n;
		memcpy(done + n, s->spans + (r->first - s->spans_base),
		       k * sizeof(*done));
		r->first += k;
		r->nr -= k;
		while (k--)
			s->pending -= done[n++].len;
	}
	devmem_sender_trim(s);
	return (ssize_t)n;
}

DEVMEM_EXPORT ssize_t
devmem_sender_reap_tagged(struct devmem_sender *s,
			  struct devmem_send_completion *done, size_t max,
			  int timeout_ms)
{
	size_t i = 0, end, n = 0;
	uint64_t bytes;
	int err;

	err = devmem_sender_reap_begin(s, done, max, timeout_ms,
				       DEVMEM_SEND_TAGGED);
	if (err)
		return err;
	if (max > SSIZE_MAX)
		max = SSIZE_MAX;

	/* Whole calls in the order they were made, up to the first one with
	 * a send still in flight.
	 */
	while (n < max && devmem_sender_call_done(s, i, &end)) {
		done[n].tag = s->recs[i].tag;
		for (bytes = 0; i < end; i++) {
			bytes += s->recs[i].bytes;
			s->recs[i].nr = 0;
		}
		done[n++].bytes = bytes;
		s->pending -= bytes;
	}
	devmem_sender_trim(s);
	return (ssize_t)n;
}
