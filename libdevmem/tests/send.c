// SPDX-License-Identifier: GPL-2.0
/*
 * The sender against a fake socket behind the library's sendmsg and
 * error-queue hooks: the control message and iovecs of every call, the
 * split at 1024 iovecs and at 1 GiB, partial sends and refusals (which
 * take no zerocopy id), and the reaping of completion reports in order,
 * out of order, as ranges, across the wrap of the u32 id, into an array
 * too small for them, and reports that name no pending send. The socket
 * itself is a loopback TCP one (SO_ZEROCOPY needs TCP): the waits poll
 * it, and a reset peer is its pending error. Then the real kernel: the
 * zerocopy reports of loopback sends from host memory (the hook turns
 * offsets into addresses and leaves the devmem cmsg out), and a devmem
 * send that a kernel without this binding refuses. Tagged sends: one
 * completion per call, in call order, of the bytes it queued; a sender
 * takes one kind of send only.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/errqueue.h>
#include <netinet/in.h>

#include "tcp.h"
#include "test.h"

#define ID		7	/* the fake tx binding's */
#define MAX_CALLS	64
#define MAX_REPORTS	16
#define GIB		(1ULL << 30)

struct fake_call {
	size_t niov, bytes;
	int flags;
	uint64_t first_off, last_off;	/* iov_base of the first and last */
	size_t last_len;
};

struct fake_report {
	uint32_t lo, hi;
	uint8_t origin;
	uint32_t err;
	int level, type;		/* 0: SOL_IP, IP_RECVERR */
	int ctrunc;
};

struct fake_tx {
	struct fake_call calls[MAX_CALLS];
	unsigned int nr_calls;
	size_t limit;		/* the most bytes a call queues; 0: all */
	unsigned int fail_call;	/* 1-based call to refuse, 0: none */
	ssize_t fail_err;
	int bad;		/* a call broke a rule */
	struct fake_report reports[MAX_REPORTS];
	unsigned int nr_reports, next_report;
	/* loopback: offsets are into this buffer, sent without the cmsg */
	const char *host;
	int recvmsg_calls;
};

static ssize_t fake_sendmsg(int fd, const struct msghdr *msg, int flags,
			    void *arg)
{
	struct fake_tx *t = arg;
	struct fake_call *c;
	struct cmsghdr *cm = CMSG_FIRSTHDR(msg);
	uint32_t id;
	size_t i;

	(void)fd;
	if (t->nr_calls == MAX_CALLS || !msg->msg_iovlen ||
	    msg->msg_iovlen > UIO_MAXIOV || !cm ||
	    cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_DEVMEM_DMABUF ||
	    cm->cmsg_len != CMSG_LEN(sizeof(id)) ||
	    CMSG_NXTHDR((struct msghdr *)msg, cm) || !(flags & MSG_ZEROCOPY)) {
		t->bad = 1;
		return -EINVAL;
	}
	memcpy(&id, CMSG_DATA(cm), sizeof(id));
	if (id != ID) {
		t->bad = 1;
		return -EINVAL;
	}
	if (t->fail_call && t->nr_calls + 1 == t->fail_call)
		return t->fail_err;
	c = &t->calls[t->nr_calls++];
	c->niov = msg->msg_iovlen;
	c->flags = flags;
	c->bytes = 0;
	for (i = 0; i < msg->msg_iovlen; i++) {
		if (!msg->msg_iov[i].iov_len)
			t->bad = 1;
		c->bytes += msg->msg_iov[i].iov_len;
	}
	c->first_off = (uintptr_t)msg->msg_iov[0].iov_base;
	c->last_off = (uintptr_t)msg->msg_iov[i - 1].iov_base;
	c->last_len = msg->msg_iov[i - 1].iov_len;
	if (t->limit && c->bytes > t->limit)
		return (ssize_t)t->limit;
	return (ssize_t)c->bytes;
}

/* The error queue: one report a call, as the kernel gives them. */
static ssize_t fake_recvmsg(int fd, struct msghdr *msg, int flags, void *arg)
{
	struct fake_tx *t = arg;
	struct fake_report *r;
	struct sock_extended_err ee = { 0 };
	struct cmsghdr *cm;

	(void)fd;
	t->recvmsg_calls++;
	if (flags != (MSG_ERRQUEUE | MSG_DONTWAIT)) {
		t->bad = 1;
		return -EINVAL;
	}
	if (t->next_report == t->nr_reports)
		return -EAGAIN;
	r = &t->reports[t->next_report++];
	ee.ee_origin = r->origin ? r->origin : SO_EE_ORIGIN_ZEROCOPY;
	ee.ee_errno = r->err;
	ee.ee_info = r->lo;
	ee.ee_data = r->hi;
	cm = CMSG_FIRSTHDR(msg);
	cm->cmsg_level = r->level ? r->level : SOL_IP;
	cm->cmsg_type = r->type ? r->type : IP_RECVERR;
	/* the offender's address follows, as in the kernel's errhdr */
	cm->cmsg_len = CMSG_LEN(sizeof(ee) + sizeof(struct sockaddr_in6));
	memset(CMSG_DATA(cm), 0, sizeof(ee) + sizeof(struct sockaddr_in6));
	memcpy(CMSG_DATA(cm), &ee, sizeof(ee));
	msg->msg_controllen = CMSG_SPACE(sizeof(ee) +
					 sizeof(struct sockaddr_in6));
	msg->msg_flags = MSG_ERRQUEUE | (r->ctrunc ? MSG_CTRUNC : 0);
	return 0;
}

static void report(struct fake_tx *t, uint32_t lo, uint32_t hi)
{
	struct fake_report *r = &t->reports[t->nr_reports++];

	memset(r, 0, sizeof(*r));
	r->lo = lo;
	r->hi = hi;
}

/* A fake transmitter on a loopback TCP socket of its own. */
struct rig {
	struct fake_tx t;
	struct devmem_binding *b;
	struct devmem_sender *s;
	int cfd, sfd;
};

static int rig_open(struct rig *r)
{
	int err;

	memset(r, 0, sizeof(*r));
	r->cfd = r->sfd = -1;
	err = tcp_pair(&r->cfd, &r->sfd);
	if (err)
		return err;
	err = devmem_binding_new_unbound(&r->b, ID, 1);
	if (err)
		return err;
	err = devmem_sender_new(&r->s, r->cfd, r->b);
	if (err)
		return err;
	devmem_sender_set_hooks(r->s, fake_sendmsg, fake_recvmsg, &r->t);
	return 0;
}

static void rig_close(struct rig *r)
{
	devmem_sender_free(r->s);
	devmem_binding_free(r->b);
	if (r->cfd >= 0)
		close(r->cfd);
	if (r->sfd >= 0)
		close(r->sfd);
}

#define RIG(r)								\
	do {								\
		int err_ = rig_open(r);					\
		if (err_) {						\
			rig_close(r);					\
			if (err_ == -ENOPROTOOPT || err_ == -EOPNOTSUPP) \
				return t_skip("%s", devmem_last_error()); \
			return t_skip("no loopback TCP: %s",		\
				      strerror(-err_));			\
		}							\
	} while (0)

/* Queue a report for ids @lo to @hi and reap, without waiting. */
static ssize_t reap_after(struct rig *r, uint32_t lo, uint32_t hi,
			  struct devmem_span *done, size_t max)
{
	report(&r->t, lo, hi);
	return devmem_sender_reap(r->s, done, max, 0);
}

static int same_spans(const struct devmem_span *a, const struct devmem_span *b,
		      size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i].offset != b[i].offset || a[i].len != b[i].len)
			return 0;
	return 1;
}

/* The cmsg, the flags and each iovec of one call. */
static int test_cmsg_iov(void)
{
	struct devmem_span spans[] = {
		{ 0, 4096 }, { 1 << 20, 100 }, { 12288, 8192 },
	};
	struct devmem_span done[4];
	struct rig r;
	int one = 0;
	socklen_t len = sizeof(one);

	RIG(&r);
	CHECK_EQ(getsockopt(r.cfd, SOL_SOCKET, SO_ZEROCOPY, &one, &len), 0);
	CHECK_EQ(one, 1);
	CHECK_EQ(devmem_send(r.s, spans, 3, MSG_DONTWAIT), 4096 + 100 + 8192);
	CHECK_EQ(devmem_last_error()[0], '\0');
	CHECK(!r.t.bad);
	CHECK_EQ(r.t.nr_calls, 1);
	CHECK_EQ(r.t.calls[0].niov, 3);
	CHECK_EQ(r.t.calls[0].flags, MSG_ZEROCOPY | MSG_DONTWAIT);
	CHECK_EQ(r.t.calls[0].first_off, 0);
	CHECK_EQ(r.t.calls[0].last_off, 12288);
	CHECK_EQ(r.t.calls[0].last_len, 8192);
	CHECK_EQ(devmem_sender_pending(r.s), 4096 + 100 + 8192);

	/* nothing reported: nothing reaped, without waiting */
	CHECK_EQ(devmem_sender_reap(r.s, done, 4, 0), 0);
	CHECK_EQ(reap_after(&r, 0, 0, done, 4), 3);
	CHECK(same_spans(done, spans, 3));
	CHECK_EQ(devmem_sender_pending(r.s), 0);
	CHECK_EQ(devmem_last_error()[0], '\0');
	rig_close(&r);
	return T_PASS;
}

/* 2500 spans: calls of 1024, 1024 and 452 iovecs, ids 0 to 2. */
static int test_iov_max(void)
{
	static struct devmem_span spans[2500], done[2500];
	struct rig r;
	size_t i;

	RIG(&r);
	for (i = 0; i < 2500; i++) {
		spans[i].offset = i * 8192;
		spans[i].len = 100 + i;
	}
	CHECK_EQ(devmem_send(r.s, spans, 2500, 0),
		 2500 * 100 + 2499 * 2500 / 2);
	CHECK(!r.t.bad);
	CHECK_EQ(r.t.nr_calls, 3);
	CHECK_EQ(r.t.calls[0].niov, 1024);
	CHECK_EQ(r.t.calls[1].niov, 1024);
	CHECK_EQ(r.t.calls[2].niov, 452);
	CHECK_EQ(r.t.calls[1].first_off, 1024 * 8192);
	CHECK_EQ(r.t.calls[2].last_off, 2499 * 8192);
	/* the first two sends reported: their spans alone */
	CHECK_EQ(reap_after(&r, 0, 1, done, 2500), 2048);
	CHECK(same_spans(done, spans, 2048));
	CHECK_EQ(reap_after(&r, 2, 2, done, 2500), 452);
	CHECK(same_spans(done, spans + 2048, 452));
	CHECK_EQ(devmem_sender_pending(r.s), 0);
	rig_close(&r);
	return T_PASS;
}

/* A span of 3 GiB + 5 bytes goes out in calls of at most 1 GiB. */
static int test_byte_split(void)
{
	struct devmem_span spans[] = { { 4096, 3 * GIB + 5 }, { 0, 10 } };
	struct devmem_span done[8];
	struct rig r;

	RIG(&r);
	CHECK_EQ(devmem_send(r.s, spans, 2, 0), 3 * GIB + 15);
	CHECK_EQ(r.t.nr_calls, 4);
	CHECK_EQ(r.t.calls[0].bytes, GIB);
	CHECK_EQ(r.t.calls[1].bytes, GIB);
	CHECK_EQ(r.t.calls[1].first_off, 4096 + GIB);
	CHECK_EQ(r.t.calls[2].bytes, GIB);
	CHECK_EQ(r.t.calls[3].niov, 2);
	CHECK_EQ(r.t.calls[3].first_off, 4096 + 3 * GIB);
	CHECK_EQ(r.t.calls[3].bytes, 15);
	CHECK_EQ(reap_after(&r, 0, 3, done, 8), 5);
	CHECK_EQ(done[0].offset, 4096);
	CHECK_EQ(done[0].len, GIB);
	CHECK_EQ(done[2].offset, 4096 + 2 * GIB);
	CHECK_EQ(done[3].offset, 4096 + 3 * GIB);
	CHECK_EQ(done[3].len, 5);
	CHECK_EQ(done[4].offset, 0);
	CHECK_EQ(done[4].len, 10);
	CHECK_EQ(devmem_sender_pending(r.s), 0);
	rig_close(&r);
	return T_PASS;
}

/* Five sends of one span each, at offsets 0, 1000, ... 4000. */
static int five_sends(struct rig *r)
{
	unsigned int calls = r->t.nr_calls;
	uint64_t pending = devmem_sender_pending(r->s);
	struct devmem_span sp;
	int i;

	for (i = 0; i < 5; i++) {
		sp.offset = 1000 * i;
		sp.len = 100 + i;
		CHECK_EQ(devmem_send(r->s, &sp, 1, 0), 100 + i);
	}
	CHECK_EQ(r->t.nr_calls, calls + 5);
	CHECK_EQ(devmem_sender_pending(r->s), pending + 5 * 100 + 10);
	return T_PASS;
}

static int test_in_order(void)
{
	struct devmem_span done[8];
	struct rig r;
	int i;

	RIG(&r);
	CHECK_EQ(five_sends(&r), T_PASS);
	for (i = 0; i < 5; i++) {
		report(&r.t, i, i);
		CHECK_EQ(devmem_sender_reap(r.s, done, 8, 0), 1);
		CHECK_EQ(done[0].offset, 1000 * i);
		CHECK_EQ(done[0].len, 100 + i);
	}
	CHECK_EQ(devmem_sender_pending(r.s), 0);
	/* every id was ours once: a repeat is not pending */
	CHECK_EQ(reap_after(&r, 4, 4, done, 8), -EPROTO);
	CHECK_EQ(strcmp(devmem_last_error(), "a completion report for sends 4 to 4, with none awaiting one"), 0);
	rig_close(&r);
	return T_PASS;
}

/*
 * Reports for later sends first: those wait for the sends before them,
 * and every completion comes back in send order.
 */
static int test_out_of_order(void)
{
	struct devmem_span done[8];
	struct rig r;

	RIG(&r);
	CHECK_EQ(five_sends(&r), T_PASS);
	report(&r.t, 3, 3);
	CHECK_EQ(reap_after(&r, 1, 1, done, 8), 0);
	CHECK_EQ(devmem_sender_pending(r.s), 510);
	/* the gaps stay pending; a repeat of a reported one is refused */
	CHECK_EQ(reap_after(&r, 1, 1, done, 8), -EPROTO);
	CHECK_EQ(strcmp(devmem_last_error(), "a completion report for sends 1 to 1: send 1 was reported before (awaiting: 0 to 4)"), 0);
	report(&r.t, 4, 4);
	CHECK_EQ(reap_after(&r, 0, 0, done, 8), 2);
	CHECK_EQ(done[0].offset, 0);
	CHECK_EQ(done[1].offset, 1000);
	CHECK_EQ(devmem_sender_pending(r.s), 102 + 103 + 104);
	/* nothing ready: no wait is needed to say so */
	CHECK_EQ(devmem_sender_reap(r.s, done, 8, 0), 0);
	CHECK_EQ(reap_after(&r, 2, 2, done, 8), 3);
	CHECK_EQ(done[0].offset, 2000);
	CHECK_EQ(done[1].offset, 3000);
	CHECK_EQ(done[2].offset, 4000);
	CHECK_EQ(devmem_sender_pending(r.s), 0);
	rig_close(&r);
	return T_PASS;
}

/* One report for a range; a range reaching past the last send. */
static int test_ranged(void)
{
	struct devmem_span done[8];
	struct rig r;
	int i;

	RIG(&r);
	CHECK_EQ(five_sends(&r), T_PASS);
	CHECK_EQ(reap_after(&r, 1, 5, done, 8), -EPROTO);
	CHECK_EQ(strcmp(devmem_last_error(), "a completion report for sends 1 to 5: send 5 is not ours (awaiting: 0 to 4)"), 0);
	/* nothing of the refused report counted */
	CHECK_EQ(devmem_sender_pending(r.s), 510);
	CHECK_EQ(reap_after(&r, 0, 4, done, 8), 5);
	for (i = 0; i < 5; i++)
		CHECK_EQ(done[i].offset, 1000 * i);
	CHECK_EQ(devmem_sender_pending(r.s), 0);
	rig_close(&r);
	return T_PASS;
}

/* Ids 0xfffffffe, 0xffffffff, 0, 1, 2: reports across the wrap. */
static int test_wrap(void)
{
	struct devmem_span done[8];
	struct rig r;

	RIG(&r);
	devmem_sender_set_next_id(r.s, 0xfffffffe);
	CHECK_EQ(five_sends(&r), T_PASS);
	/* the oldest send, 0xfffffffe, is still out: nothing yet */
	CHECK_EQ(reap_after(&r, 0xffffffff, 0, done, 8), 0);
	CHECK_EQ(reap_after(&r, 0xfffffffe, 2, done, 8), -EPROTO);
	CHECK_EQ(strcmp(devmem_last_error(), "a completion report for sends 4294967294 to 2: send 4294967295 was reported before (awaiting: 4294967294 to 2)"), 0);
	report(&r.t, 0xfffffffe, 0xfffffffe);
	CHECK_EQ(reap_after(&r, 1, 2, done, 8), 5);
	CHECK_EQ(done[0].offset, 0);
	CHECK_EQ(done[1].offset, 1000);
	CHECK_EQ(done[2].offset, 2000);
	CHECK_EQ(done[3].offset, 3000);
	CHECK_EQ(done[4].offset, 4000);
	/* the next send is id 3 */
	CHECK_EQ(five_sends(&r), T_PASS);
	CHECK_EQ(reap_after(&r, 3, 7, done, 8), 5);
	CHECK_EQ(devmem_sender_pending(r.s), 0);
	rig_close(&r);
	return T_PASS;
}

/* Reports that are not for us, or not completions at all. */
static int test_bad_reports(void)
{
	struct devmem_span done[8];
	struct rig r;

	RIG(&r);
	CHECK_EQ(reap_after(&r, 0, 0, done, 8), -EPROTO);
	CHECK_EQ(strcmp(devmem_last_error(), "a completion report for sends 0 to 0, with none awaiting one"), 0);
	CHECK_EQ(five_sends(&r), T_PASS);
	CHECK_EQ(reap_after(&r, 9, 9, done, 8), -EPROTO);
	CHECK_EQ(strcmp(devmem_last_error(), "a completion report for sends 9 to 9: send 9 is not ours (awaiting: 0 to 4)"), 0);
	/* an ICMP error, a zerocopy report with an errno, a cut one */
	report(&r.t, 0, 0);
	r.t.reports[r.t.nr_reports - 1].origin = SO_EE_ORIGIN_ICMP;
	r.t.reports[r.t.nr_reports - 1].err = EHOSTUNREACH;
	CHECK_EQ(devmem_sender_reap(r.s, done, 8, 0), -EPROTO);
	CHECK(strstr(devmem_last_error(), "that is no zerocopy completion: origin 2, errno 113"));
	report(&r.t, 0, 0);
	r.t.reports[r.t.nr_reports - 1].err = EIO;
	CHECK_EQ(devmem_sender_reap(r.s, done, 8, 0), -EPROTO);
	report(&r.t, 0, 0);
	r.t.reports[r.t.nr_reports - 1].ctrunc = 1;
	CHECK_EQ(devmem_sender_reap(r.s, done, 8, 0), -EPROTO);
	CHECK(strstr(devmem_last_error(), "was truncated"));
	/* a cmsg of another kind */
	report(&r.t, 0, 0);
	r.t.reports[r.t.nr_reports - 1].type = IP_PKTINFO;
	CHECK_EQ(devmem_sender_reap(r.s, done, 8, 0), -EPROTO);
	CHECK(strstr(devmem_last_error(), "without an extended error"));
	/* an IPv6 socket's report is as good */
	report(&r.t, 0, 4);
	r.t.reports[r.t.nr_reports - 1].level = SOL_IPV6;
	r.t.reports[r.t.nr_reports - 1].type = IPV6_RECVERR;
	CHECK_EQ(devmem_sender_reap(r.s, done, 8, 0), 5);
	CHECK_EQ(devmem_last_error()[0], '\0');
	CHECK(!r.t.bad);
	rig_close(&r);
	return T_PASS;
}

/* Completed spans that do not fit come with the next calls, which do not
 * wait for more.
 */
static int test_small_array(void)
{
	struct devmem_span spans[5], done[2];
	struct rig r;
	int i;

	RIG(&r);
	for (i = 0; i < 5; i++) {
		spans[i].offset = 4096 * i;
		spans[i].len = 10 + i;
	}
	CHECK_EQ(devmem_send(r.s, spans, 3, 0), 33);
	CHECK_EQ(devmem_send(r.s, spans + 3, 2, 0), 27);
	report(&r.t, 0, 1);
	CHECK_EQ(devmem_sender_reap(r.s, done, 2, -1), 2);
	CHECK(same_spans(done, spans, 2));
	CHECK_EQ(devmem_sender_pending(r.s), 60 - 21);
	CHECK_EQ(devmem_sender_reap(r.s, done, 2, -1), 2);
	CHECK(same_spans(done, spans + 2, 2));
	CHECK_EQ(devmem_sender_reap(r.s, done, 1, -1), 1);
	CHECK(same_spans(done, spans + 4, 1));
	CHECK_EQ(devmem_sender_pending(r.s), 0);
	/* nothing pending: no wait either */
	CHECK_EQ(devmem_sender_reap(r.s, done, 2, -1), 0);
	rig_close(&r);
	return T_PASS;
}

/* A call that queued part of its bytes: the record holds that part. */
static int test_partial(void)
{
	struct devmem_span spans[] = { { 0, 4096 }, { 8192, 4096 } };
	static struct devmem_span many[2000];
	struct devmem_span done[4];
	struct rig r;
	size_t i;

	RIG(&r);
	r.t.limit = 5000;
	CHECK_EQ(devmem_send(r.s, spans, 2, MSG_DONTWAIT), 5000);
	CHECK_EQ(r.t.nr_calls, 1);
	CHECK_EQ(devmem_sender_pending(r.s), 5000);
	/* the rest, as the caller sends it again */
	r.t.limit = 0;
	spans[1].offset += 5000 - 4096;
	spans[1].len -= 5000 - 4096;
	CHECK_EQ(devmem_send(r.s, spans + 1, 1, 0), 3192);
	CHECK_EQ(reap_after(&r, 0, 0, done, 4), 2);
	CHECK_EQ(done[0].offset, 0);
	CHECK_EQ(done[0].len, 4096);
	CHECK_EQ(done[1].offset, 8192);
	CHECK_EQ(done[1].len, 5000 - 4096);
	CHECK_EQ(reap_after(&r, 1, 1, done, 4), 1);
	CHECK_EQ(done[0].offset, 8192 + 5000 - 4096);
	CHECK_EQ(done[0].len, 3192);
	CHECK_EQ(devmem_sender_pending(r.s), 0);

	/* a partial call among several ends the send there */
	for (i = 0; i < 2000; i++)
		many[i] = (struct devmem_span){ i * 4096, 4096 };
	r.t.nr_calls = 0;
	r.t.limit = 100;
	CHECK_EQ(devmem_send(r.s, many, 2000, 0), 100);
	CHECK_EQ(r.t.nr_calls, 1);
	CHECK_EQ(reap_after(&r, 2, 2, done, 4), 1);
	CHECK_EQ(done[0].offset, 0);
	CHECK_EQ(done[0].len, 100);
	rig_close(&r);
	return T_PASS;
}

/*
 * Refusals take no id; one after bytes went out leaves the bytes counted
 * and comes back with the next send.
 */
static int test_refused(void)
{
	static struct devmem_span spans[1500];
	struct devmem_span done[4];
	char want[160];
	struct rig r;
	size_t i;

	RIG(&r);
	for (i = 0; i < 1500; i++)
		spans[i] = (struct devmem_span){ i * 4096, 1000 };
	r.t.fail_call = 1;
	r.t.fail_err = -EFAULT;
	CHECK_EQ(devmem_send(r.s, spans, 1, 0), -EFAULT);
	snprintf(want, sizeof(want), "sendmsg of 1000 bytes in 1 iovecs from binding 7 on fd %d: Bad address",
		 r.cfd);
	CHECK_EQ(strcmp(devmem_last_error(), want), 0);
	r.t.fail_err = -ENODEV;
	CHECK_EQ(devmem_send(r.s, spans, 1, 0), -ENODEV);
	r.t.fail_err = -EINVAL;
	CHECK_EQ(devmem_send(r.s, spans, 1, 0), -EINVAL);
	CHECK(strstr(devmem_last_error(), ": Invalid argument"));
	CHECK_EQ(devmem_sender_pending(r.s), 0);

	/* the second call of three fails: the first one's bytes count */
	r.t.fail_call = 2;
	r.t.fail_err = -EPIPE;
	CHECK_EQ(devmem_send(r.s, spans, 1500, 0), 1024 * 1000);
	CHECK_EQ(devmem_last_error()[0], '\0');
	CHECK_EQ(r.t.nr_calls, 1);
	r.t.fail_call = 2;
	CHECK_EQ(devmem_send(r.s, spans + 1024, 476, 0), -EPIPE);
	snprintf(want, sizeof(want), "sendmsg of 476000 bytes in 476 iovecs from binding 7 on fd %d: Broken pipe",
		 r.cfd);
	CHECK_EQ(strcmp(devmem_last_error(), want), 0);
	/* the one send that went out is id 0 */
	CHECK_EQ(reap_after(&r, 0, 0, done, 4), 4);
	CHECK_EQ(devmem_sender_pending(r.s), 1020 * 1000);
	rig_close(&r);
	return T_PASS;
}

static int test_args(void)
{
	struct devmem_span sp[2] = { { 0, 1 }, { 0, 0 } }, done[1];
	struct devmem_binding *rx;
	struct devmem_sender *s;
	char want[80];
	struct rig r;
	int sv[2];

	RIG(&r);
	CHECK_EQ(devmem_send(NULL, sp, 1, 0), -EINVAL);
	CHECK_EQ(strcmp(devmem_last_error(), "no sender"), 0);
	CHECK_EQ(devmem_send(r.s, NULL, 1, 0), -EINVAL);
	CHECK_EQ(devmem_send(r.s, sp, 0, 0), -EINVAL);
	CHECK_EQ(strcmp(devmem_last_error(), "no spans to send"), 0);
	CHECK_EQ(devmem_send(r.s, sp, 2, 0), -EINVAL);
	CHECK_EQ(strcmp(devmem_last_error(), "span 1 is empty"), 0);
	sp[1] = (struct devmem_span){ UINT64_MAX, 2 };
	CHECK_EQ(devmem_send(r.s, sp, 2, 0), -EINVAL);
	CHECK_EQ(strcmp(devmem_last_error(), "span 1 ends beyond 2^64"), 0);
	sp[0] = (struct devmem_span){ 0, (uint64_t)SSIZE_MAX };
	sp[1] = (struct devmem_span){ 0, 1 };
	CHECK_EQ(devmem_send(r.s, sp, 2, 0), -EINVAL);
	CHECK(strstr(devmem_last_error(), "add up to more than"));
	CHECK_EQ(r.t.nr_calls, 0);

	CHECK_EQ(devmem_sender_reap(NULL, done, 1, 0), -EINVAL);
	CHECK_EQ(strcmp(devmem_last_error(), "no sender"), 0);
	CHECK_EQ(devmem_sender_reap(r.s, NULL, 1, 0), -EINVAL);
	CHECK_EQ(devmem_sender_reap(r.s, done, 0, 0), -EINVAL);
	CHECK_EQ(strcmp(devmem_last_error(), "no room for completions"), 0);
	CHECK_EQ(r.t.recvmsg_calls, 0);

	CHECK_EQ(devmem_sender_new(NULL, r.cfd, r.b), -EINVAL);
	CHECK_EQ(devmem_sender_new(&s, -1, r.b), -EBADF);
	CHECK_EQ(strcmp(devmem_last_error(), "socket fd -1"), 0);
	CHECK_EQ(devmem_sender_new(&s, r.cfd, NULL), -EINVAL);
	CHECK_EQ(devmem_binding_new_unbound(&rx, 12, 0), 0);
	CHECK_EQ(devmem_sender_new(&s, r.cfd, rx), -EINVAL);
	CHECK_EQ(strcmp(devmem_last_error(), "binding 12 is for receiving: sending needs one of devmem_binding_new_tx()"), 0);
	devmem_binding_free(rx);
	/* SO_ZEROCOPY is for TCP and UDP sockets */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CHECK_EQ(devmem_sender_new(&s, sv[0], r.b), -EOPNOTSUPP);
	snprintf(want, sizeof(want), "SO_ZEROCOPY on fd %d: Operation not supported",
		 sv[0]);
	CHECK_EQ(strcmp(devmem_last_error(), want), 0);
	close(sv[0]);
	close(sv[1]);
	devmem_sender_free(NULL);
	rig_close(&r);
	return T_PASS;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Waiting polls the socket: a timeout, then a reset peer's error. */
static int test_wait(void)
{
	struct linger lin = { .l_onoff = 1, .l_linger = 0 };
	struct devmem_span sp = { 0, 100 }, done[1];
	struct timespec t0;
	struct rig r;

	RIG(&r);
	CHECK_EQ(devmem_send(r.s, &sp, 1, 0), 100);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(devmem_sender_reap(r.s, done, 1, 100), 0);
	CHECK(ms_since(&t0) >= 90);
	CHECK_EQ(devmem_last_error()[0], '\0');

	CHECK_EQ(setsockopt(r.sfd, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin)), 0);
	close(r.sfd);
	r.sfd = -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(devmem_sender_reap(r.s, done, 1, 5000), -ECONNRESET);
	CHECK(ms_since(&t0) < 4000);
	CHECK(strstr(devmem_last_error(), ": Connection reset by peer"));
	rig_close(&r);
	return T_PASS;
}

/* Offsets into t->host, sent as plain MSG_ZEROCOPY without the cmsg. */
static ssize_t host_sendmsg(int fd, const struct msghdr *msg, int flags,
			    void *arg)
{
	struct fake_tx *t = arg;
	struct iovec iov[UIO_MAXIOV];
	struct msghdr m = *msg;
	ssize_t ret;
	size_t i;

	for (i = 0; i < msg->msg_iovlen; i++) {
		iov[i].iov_base = (char *)t->host +
				  (uintptr_t)msg->msg_iov[i].iov_base;
		iov[i].iov_len = msg->msg_iov[i].iov_len;
	}
	m.msg_iov = iov;
	m.msg_control = NULL;
	m.msg_controllen = 0;
	t->nr_calls++;
	ret = sendmsg(fd, &m, flags);
	return ret < 0 ? -errno : ret;
}

/*
 * The kernel's own reports: loopback zerocopy sends from a host buffer,
 * read by the receiver, reaped until nothing is pending; the spans come
 * back in send order and cover every byte once.
 */
static int test_loopback_reports(void)
{
	static char host[1 << 20], sink[1 << 16];
	static struct devmem_span spans[256], done[64];
	uint64_t got = 0, sent = 0, reaped = 0;
	size_t i, n = 0, next = 0;
	ssize_t ret;
	struct rig r;

	RIG(&r);
	r.t.host = host;
	devmem_sender_set_hooks(r.s, host_sendmsg, NULL, &r.t);
	for (i = 0; i < 256; i++) {
		spans[i].offset = i * 4096;
		spans[i].len = 1 + (i * 37) % 4096;
		sent += spans[i].len;
	}
	/* in 16 sends of 16 spans */
	for (i = 0; i < 256; i += 16) {
		CHECK_EQ(devmem_send(r.s, spans + i, 16, 0) > 0, 1);
		while ((ret = recv(r.sfd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
			got += ret;
	}
	while (got < sent) {
		ret = recv(r.sfd, sink, sizeof(sink), 0);
		CHECK(ret > 0);
		got += ret;
	}
	CHECK_EQ(got, sent);
	while (devmem_sender_pending(r.s)) {
		ret = devmem_sender_reap(r.s, done, 64, 2000);
		if (ret <= 0)
			fprintf(stderr, "reap: %zd %s\n", ret,
				devmem_last_error());
		CHECK(ret > 0);
		for (i = 0; i < (size_t)ret; i++) {
			/* pieces of the spans, in order */
			CHECK_EQ(done[i].offset, spans[next].offset + n);
			n += done[i].len;
			CHECK(n <= spans[next].len);
			if (n == spans[next].len) {
				next++;
				n = 0;
			}
			reaped += done[i].len;
		}
	}
	CHECK_EQ(next, 256);
	CHECK_EQ(reaped, sent);
	CHECK_EQ(r.t.nr_calls, 16);
	rig_close(&r);
	return T_PASS;
}

/*
 * A devmem send on the real socket: no such binding here. (The offset
 * is an address, for valgrind, which takes iovecs for memory.)
 */
static int test_kernel_refuses(void)
{
	static char buf[4096];
	struct devmem_span sp = { (uintptr_t)buf, sizeof(buf) };
	struct rig r;

	RIG(&r);
	devmem_sender_set_hooks(r.s, NULL, NULL, NULL);
	CHECK_EQ(devmem_send(r.s, &sp, 1, MSG_DONTWAIT), -EINVAL);
	CHECK(!strncmp(devmem_last_error(), "sendmsg of 4096 bytes in 1 iovecs from binding 7 on fd ", 54));
	CHECK_EQ(devmem_sender_pending(r.s), 0);
	rig_close(&r);
	return T_PASS;
}

/* Queue a report for ids @lo to @hi and reap tagged, without waiting. */
static ssize_t reap_tagged_after(struct rig *r, uint32_t lo, uint32_t hi,
				 struct devmem_send_completion *done,
				 size_t max)
{
	report(&r->t, lo, hi);
	return devmem_sender_reap_tagged(r->s, done, max, 0);
}

/*
 * Three tagged calls: 2500 spans in ids 0 to 2, one span in id 3, one in
 * id 4. A call completes when all its ids are reported, in call order.
 */
static int test_tagged_order(void)
{
	static struct devmem_span spans[2500];
	struct devmem_send_completion done[4];
	struct devmem_span sp = { 1 << 20, 777 };
	uint64_t a = 0;
	struct rig r;
	size_t i;

	RIG(&r);
	for (i = 0; i < 2500; i++) {
		spans[i] = (struct devmem_span){ i * 8192, 100 + i };
		a += 100 + i;
	}
	CHECK_EQ(devmem_send_tagged(r.s, spans, 2500, 0, 0xa), (ssize_t)a);
	CHECK_EQ(devmem_last_error()[0], '\0');
	CHECK_EQ(r.t.nr_calls, 3);
	CHECK_EQ(devmem_send_tagged(r.s, &sp, 1, 0, 0xb), 777);
	sp.len = 5;
	CHECK_EQ(devmem_send_tagged(r.s, &sp, 1, 0, UINT64_MAX), 5);
	CHECK(!r.t.bad);
	CHECK_EQ(devmem_sender_pending(r.s), a + 777 + 5);

	/* b first: it waits for a; a's first two sends alone are not a */
	CHECK_EQ(reap_tagged_after(&r, 3, 3, done, 4), 0);
	CHECK_EQ(reap_tagged_after(&r, 0, 1, done, 4), 0);
	CHECK_EQ(devmem_sender_pending(r.s), a + 777 + 5);
	CHECK_EQ(reap_tagged_after(&r, 2, 2, done, 4), 2);
	CHECK_EQ(done[0].tag, 0xa);
	CHECK_EQ(done[0].bytes, a);
	CHECK_EQ(done[1].tag, 0xb);
	CHECK_EQ(done[1].bytes, 777);
	CHECK_EQ(devmem_sender_pending(r.s), 5);
	CHECK_EQ(devmem_sender_reap_tagged(r.s, done, 4, 0), 0);
	CHECK_EQ(reap_tagged_after(&r, 4, 4, done, 4), 1);
	CHECK_EQ(done[0].tag, UINT64_MAX);
	CHECK_EQ(done[0].bytes, 5);
	CHECK_EQ(devmem_sender_pending(r.s), 0);
	CHECK_EQ(devmem_last_error()[0], '\0');
	rig_close(&r);
	return T_PASS;
}

/*
 * What a call queued is its completion: a partial send, a 3 GiB span in
 * four sendmsg() calls; a refused call has none. Completions that do not
 * fit come back with the next call, the same tag twice twice.
 */
static int test_tagged_bytes(void)
{
	struct devmem_span spans[] = { { 0, 4096 }, { 8192, 4096 } };
	struct devmem_span big = { 4096, 3 * GIB + 5 };
	struct devmem_send_completion done[2];
	struct rig r;

	RIG(&r);
	r.t.limit = 5000;
	CHECK_EQ(devmem_send_tagged(r.s, spans, 2, MSG_DONTWAIT, 1), 5000);
	r.t.limit = 0;
	CHECK_EQ(devmem_send_tagged(r.s, &big, 1, 0, 2), 3 * GIB + 5);
	CHECK_EQ(r.t.nr_calls, 5);
	r.t.fail_call = 6;
	r.t.fail_err = -EPIPE;
	CHECK_EQ(devmem_send_tagged(r.s, spans, 2, 0, 3), -EPIPE);
	r.t.fail_call = 0;
	CHECK_EQ(devmem_send_tagged(r.s, spans, 1, 0, 2), 4096);
	CHECK_EQ(devmem_send_tagged(r.s, spans, 1, 0, 2), 4096);
	CHECK_EQ(devmem_sender_pending(r.s), 5000 + 3 * GIB + 5 + 8192);
	CHECK_EQ(reap_tagged_after(&r, 0, 6, done, 2), 2);
	CHECK_EQ(done[0].tag, 1);
	CHECK_EQ(done[0].bytes, 5000);
	CHECK_EQ(done[1].tag, 2);
	CHECK_EQ(done[1].bytes, 3 * GIB + 5);
	CHECK_EQ(devmem_sender_reap_tagged(r.s, done, 2, 0), 2);
	CHECK_EQ(done[0].tag, 2);
	CHECK_EQ(done[0].bytes, 4096);
	CHECK_EQ(done[1].tag, 2);
	CHECK_EQ(done[1].bytes, 4096);
	CHECK_EQ(devmem_sender_pending(r.s), 0);
	CHECK_EQ(devmem_sender_reap_tagged(r.s, done, 2, 0), 0);
	rig_close(&r);
	return T_PASS;
}

/*
 * The first send that queues bytes decides whether a sender's sends are
 * tagged; the other kind of send or reap is refused, nothing sent.
 */
static int test_tagged_mixed(void)
{
	struct devmem_span sp = { 0, 100 };
	struct devmem_send_completion c;
	struct devmem_span done;
	struct rig r;

	RIG(&r);
	/* nothing sent yet: both reaps find nothing */
	CHECK_EQ(devmem_sender_reap(r.s, &done, 1, 0), 0);
	CHECK_EQ(devmem_sender_reap_tagged(r.s, &c, 1, 0), 0);
	/* a refused send decides nothing */
	r.t.fail_call = 1;
	r.t.fail_err = -EPIPE;
	CHECK_EQ(devmem_send_tagged(r.s, &sp, 1, 0, 9), -EPIPE);
	r.t.fail_call = 0;
	CHECK_EQ(devmem_send(r.s, &sp, 1, 0), 100);
	CHECK_EQ(devmem_send_tagged(r.s, &sp, 1, 0, 9), -EINVAL);
	CHECK_EQ(strcmp(devmem_last_error(), "this sender's sends are not tagged: use devmem_send() and devmem_sender_reap()"), 0);
	CHECK_EQ(devmem_sender_reap_tagged(r.s, &c, 1, 0), -EINVAL);
	CHECK_EQ(strcmp(devmem_last_error(), "this sender's sends are not tagged: use devmem_send() and devmem_sender_reap()"), 0);
	CHECK_EQ(r.t.nr_calls, 1);
	CHECK_EQ(reap_after(&r, 0, 0, &done, 1), 1);
	rig_close(&r);

	RIG(&r);
	CHECK_EQ(devmem_send_tagged(r.s, &sp, 1, 0, 9), 100);
	CHECK_EQ(devmem_send(r.s, &sp, 1, 0), -EINVAL);
	CHECK_EQ(strcmp(devmem_last_error(), "this sender's sends are tagged: use devmem_send_tagged() and devmem_sender_reap_tagged()"), 0);
	CHECK_EQ(devmem_sender_reap(r.s, &done, 1, 0), -EINVAL);
	CHECK_EQ(r.t.nr_calls, 1);
	CHECK_EQ(devmem_sender_pending(r.s), 100);
	/* the refused reap read no report: the tagged one gets it */
	CHECK_EQ(reap_tagged_after(&r, 0, 0, &c, 1), 1);
	CHECK_EQ(c.tag, 9);
	CHECK_EQ(c.bytes, 100);

	/* arguments */
	CHECK_EQ(devmem_sender_reap_tagged(NULL, &c, 1, 0), -EINVAL);
	CHECK_EQ(devmem_sender_reap_tagged(r.s, NULL, 1, 0), -EINVAL);
	CHECK_EQ(devmem_sender_reap_tagged(r.s, &c, 0, 0), -EINVAL);
	CHECK_EQ(strcmp(devmem_last_error(), "no room for completions"), 0);
	CHECK_EQ(devmem_send_tagged(NULL, &sp, 1, 0, 1), -EINVAL);
	CHECK_EQ(devmem_send_tagged(r.s, NULL, 1, 0, 1), -EINVAL);
	CHECK_EQ(devmem_send_tagged(r.s, &sp, 0, 0, 1), -EINVAL);
	rig_close(&r);
	return T_PASS;
}

/* A tagged reap waits for the error queue as the span reap does. */
static int test_tagged_wait(void)
{
	struct devmem_span sp = { 0, 100 };
	struct devmem_send_completion c;
	struct timespec t0, t1;
	struct rig r;
	long ms;

	RIG(&r);
	CHECK_EQ(devmem_send_tagged(r.s, &sp, 1, 0, 5), 100);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(devmem_sender_reap_tagged(r.s, &c, 1, 150), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	CHECK(ms >= 140);
	/* once ready, no wait */
	report(&r.t, 0, 0);
	CHECK_EQ(devmem_sender_reap_tagged(r.s, &c, 1, -1), 1);
	CHECK_EQ(c.tag, 5);
	/* nothing pending: no wait either */
	CHECK_EQ(devmem_sender_reap_tagged(r.s, &c, 1, -1), 0);
	rig_close(&r);
	return T_PASS;
}

static const struct t_case cases[] = {
	{ "cmsg-iov", test_cmsg_iov },
	{ "iov-max", test_iov_max },
	{ "byte-split", test_byte_split },
	{ "in-order", test_in_order },
	{ "out-of-order", test_out_of_order },
	{ "ranged", test_ranged },
	{ "wrap", test_wrap },
	{ "bad-reports", test_bad_reports },
	{ "small-array", test_small_array },
	{ "partial", test_partial },
	{ "refused", test_refused },
	{ "args", test_args },
	{ "wait", test_wait },
	{ "loopback-reports", test_loopback_reports },
	{ "kernel-refuses", test_kernel_refuses },
	{ "tagged-order", test_tagged_order },
	{ "tagged-bytes", test_tagged_bytes },
	{ "tagged-mixed", test_tagged_mixed },
	{ "tagged-wait", test_tagged_wait },
};

int main(void)
{
	/* a reap that waits when it must not fails the test, not the run */
	alarm(20);
	return T_RUN(cases);
}
