// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-sockopt: a bounded, deterministic fuzzer of the device-memory
 * socket API: recvmsg(MSG_SOCK_DEVMEM) with random control-buffer and
 * data-buffer sizes and flags, and setsockopt(SO_DEVMEM_DONTNEED) with
 * random ranges and lengths, on a socket that receives a live devmem
 * flow and on sockets that hold no tokens (TCP, UDP, UNIX).
 *
 * It accepts one TCP connection carrying the test pattern
 * (selftests/progs/lib/pattern.h) into a dma-buf bound to its queue; run it
 * under `netdev-nl bind-rx ... --run` as devmem-rx is run. Every byte a
 * recvmsg hands out is checked, in the user buffer or through the
 * dma-buf's mmap. The fuzzer keeps the table of tokens it holds and
 * predicts exactly what each DONTNEED must return; every error must be
 * one the documentation gives for that input (docs/design.md 1.3,
 * net/README.md, docs/mainline-reference.md section 7, recv(2),
 * setsockopt(2)):
 *
 * recvmsg:
 *   MSG_ERRQUEUE            EAGAIN (a TCP socket's error queue is empty)
 *   MSG_OOB                 EINVAL (no urgent data)
 *   device data without MSG_SOCK_DEVMEM (and without MSG_TRUNC): EFAULT
 *   device data, control buffer NULL or under CMSG_LEN(24): ETOOSMALL
 *     (525) if nothing was returned, else the bytes so far
 *   control buffer that faults: EFAULT
 *   nothing queued and MSG_DONTWAIT: EAGAIN
 *   MSG_TRUNC: the bytes are dropped, nothing copied, no cmsg
 *   MSG_PEEK: the same bytes again next time; devmem peeks hand out tokens
 * SO_DEVMEM_DONTNEED:
 *   optlen < 4: EINVAL; first 4 bytes unreadable: EFAULT; not TCP: EBADF;
 *   optlen not a multiple of 8 or over 128 ranges: EINVAL; ranges
 *   unreadable: EFAULT; else the number of held tokens freed among the
 *   first 1024 looked at (token numbers wrap at 2^32).
 *
 * Tokens are 1 to 2^31 - 1, handed out as the kernel's token table does
 * (docs/design.md, 1.6): the one freed longest ago first, else the next
 * never used; a failed call hands out none. A token 0 fails the run
 * at its end (the rest is still checked; the first call that got one is
 * named). At the end every token is returned and the rest of the stream
 * read; the stream must have arrived whole.
 *
 * The random numbers drawn never depend on what the kernel answers, so
 * the calls made and their arguments are the seed's alone (which held
 * token a "held" pick lands on aside); so are the counts of the summary's
 * errqueue, oob and DONTNEED lines. Prints the seed and iterations first,
 * a summary last; on a failure the iteration, the exact call and what was
 * expected, then exits 1. --token-zero runs the minimal case of the token
 * 0 instead of the random calls. Exit status: 0 pass, 1 failure, 2 usage.
 */
#include <linux/uio.h>
#define __iovec_defined 1
#include <stddef.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <time.h>
#include <unistd.h>

#include "../lib/fuzz.h"

#define PROG		"fuzz-sockopt"

#include "../lib/die.h"
#include "../lib/size.h"
#include "../lib/devmem.h"
#include "../lib/listen.h"
#define IOV_MAX_LEN	(1 << 20)
#define CTRL_MAX_LEN	(1 << 20)
#define CMSG_DM_LEN	CMSG_LEN(sizeof(struct dmabuf_cmsg))
#define MAX_TOKEN	(1u << 20)	/* the tokens a run can reach */
#define HOLD_LIMIT	2048
#define RANGES_MAX	128
#define LOOK_MAX	1024
#define RCV_TIMEOUT_S	30

static uint64_t seed = 1, iterations = 2000, iter;

/* The call being made, for the failure report. */
static char what[512];

static void __attribute__((format(printf, 1, 2), noreturn)) fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);		/* what was printed comes first */
	fprintf(stderr, PROG ": FAIL at iteration %" PRIu64 " (replay: --seed %"
		PRIu64 " --iterations %" PRIu64 ")\n" PROG ": call: %s\n" PROG ": ",
		iter, seed, iter + 1, what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static const char *ename(int err)
{
	static char buf[16];

	if (err == ETOOSMALL)
		return "ETOOSMALL";
	if (strerrorname_np(err))
		return strerrorname_np(err);
	snprintf(buf, sizeof(buf), "errno%d", err);
	return buf;
}

/* ---- the stream and the tokens ---- */

static struct dm_rx rx;		/* the dma-buf; off: stream bytes consumed */
static uint64_t rx_bytes;	/* the stream's length */
static bool rx_eof;
static uint8_t held[MAX_TOKEN];
static uint32_t nheld;
static uint32_t top_token = 1;	/* the highest token handed out, or 1 */
static uint64_t token0_seen;	/* times token 0 was handed out */
static char token0_call[600];	/* the first call that did */
static uint64_t tokens_given, tokens_freed;

/* The kernel's free tokens, oldest first (a ring), and its next new one. */
static uint32_t free_q[MAX_TOKEN];
static uint32_t free_head, free_len;
static uint32_t next_new = 1;

static uint32_t next_token(void)
{
	return free_len ? free_q[free_head] : next_new;
}

/* Token @tok, the one next_token() names, is handed out. */
static void token_given(uint32_t tok)
{
	if (free_len) {
		free_head = (free_head + 1) % MAX_TOKEN;
		free_len--;
	} else {
		next_new = tok + 1;
	}
}

static void token_freed(uint32_t tok)
{
	free_q[(free_head + free_len++) % MAX_TOKEN] = tok;
}

static void check_bytes(const uint8_t *buf, uint64_t off, size_t len,
			const char *where)
{
	size_t bad = pattern_check(rx.base, off, buf, len);

	if (bad != len)
		fail("%s: byte %" PRIu64 " of the stream is 0x%02x, expected 0x%02x",
		     where, off + bad, buf[bad], pattern_byte(rx.base, off + bad));
}

/* What the kernel must do with these ranges: free every held token among
 * the first LOOK_MAX looked at. Returns the count, updating the table.
 */
static int model_dontneed(const struct dmabuf_token *t, unsigned int nr)
{
	unsigned int looked = 0, i;
	uint32_t j, tok;
	int freed = 0;

	for (i = 0; i < nr && looked < LOOK_MAX; i++) {
		for (j = 0; j < t[i].token_count && looked < LOOK_MAX; j++) {
			looked++;
			tok = t[i].token_start + j;
			if (tok < MAX_TOKEN && held[tok]) {
				held[tok] = 0;
				nheld--;
				freed++;
				token_freed(tok);
			}
		}
	}
	return freed;
}

/* Return every held token, in correct calls, checking each count. */
static void return_all(int fd)
{
	struct dmabuf_token t[RANGES_MAX];
	uint32_t tok = 0;	/* 0 too, should the kernel hand it out */
	unsigned int nr;
	int ret, want;

	while (nheld) {
		nr = 0;
		for (; tok <= top_token && nr < RANGES_MAX; tok++) {
			if (!held[tok])
				continue;
			if (nr && t[nr - 1].token_start + t[nr - 1].token_count == tok &&
			    t[nr - 1].token_count < 64)
				t[nr - 1].token_count++;
			else
				t[nr++] = (struct dmabuf_token){ tok, 1 };
		}
		if (!nr)
			die("%u tokens held above the highest handed out", nheld);
		snprintf(what, sizeof(what), "returning held tokens: %u ranges from %u",
			 nr, t[0].token_start);
		want = model_dontneed(t, nr);
		ret = setsockopt(fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, t,
				 nr * sizeof(t[0]));
		if (ret != want)
			fail("SO_DEVMEM_DONTNEED returned %d (%s), expected %d", ret,
			     ret < 0 ? ename(errno) : "-", want);
		tokens_freed += ret;
	}
}

/* ---- recvmsg ---- */

static uint8_t iov_buf[IOV_MAX_LEN];
static uint8_t ctrl_buf[CTRL_MAX_LEN] __attribute__((aligned(8)));
static uint8_t *noaccess;	/* a PROT_NONE page */

struct counts {
	uint64_t calls, data, zero, bytes;
	uint64_t err[600];
};
static struct counts rc_recv, rc_errq, rc_oob, rc_dn, rc_plain;
static uint64_t plain_freed_zero;

/* The checks of one recvmsg that returned @n > 0 bytes. */
static void check_data(const struct msghdr *m, ssize_t n, int flags,
		       bool bad_ctrl)
{
	uint64_t off = rx.off;
	size_t linear = 0, total = 0;
	bool devmem = false;
	struct cmsghdr *cm;

	if (flags & MSG_TRUNC) {
		/* dropped, nothing copied, no cmsg */
		if (!bad_ctrl && m->msg_controllen)
			fail("MSG_TRUNC returned %zu bytes of control messages",
			     (size_t)m->msg_controllen);
		if (!(flags & MSG_PEEK))
			rx.off += n;
		return;
	}
	if (m->msg_flags & MSG_CTRUNC)
		fail("MSG_CTRUNC: a cmsg was truncated");
	if (!bad_ctrl) {
		for (cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR((struct msghdr *)m, cm)) {
			struct dmabuf_cmsg *dc = (struct dmabuf_cmsg *)CMSG_DATA(cm);

			if (cm->cmsg_level != SOL_SOCKET ||
			    (cm->cmsg_type != SO_DEVMEM_LINEAR &&
			     cm->cmsg_type != SO_DEVMEM_DMABUF))
				fail("unexpected cmsg level %d type %d", cm->cmsg_level,
				     cm->cmsg_type);
			if (!(flags & MSG_SOCK_DEVMEM))
				fail("a devmem cmsg without MSG_SOCK_DEVMEM");
			if (cm->cmsg_len != CMSG_DM_LEN)
				fail("cmsg of %zu bytes", (size_t)cm->cmsg_len);
			devmem = true;
			if (cm->cmsg_type == SO_DEVMEM_LINEAR) {
				if (dc->frag_offset || dc->frag_token || dc->dmabuf_id)
					fail("linear cmsg with more than frag_size set");
				if (linear + dc->frag_size > (size_t)n)
					fail("linear cmsgs cover more than the %zd bytes", n);
				check_bytes(iov_buf + linear, off, dc->frag_size, "linear");
				linear += dc->frag_size;
				rx.linear += (flags & MSG_PEEK) ? 0 : dc->frag_size;
			} else {
				if (dc->frag_offset + dc->frag_size > rx.size)
					fail("frag [%llu, +%u) outside the %zu-byte dma-buf",
					     (unsigned long long)dc->frag_offset,
					     dc->frag_size, rx.size);
				if (dc->dmabuf_id != rx.id)
					fail("frag of binding %u, ours is %u", dc->dmabuf_id, rx.id);
				/* Tokens are 1 to 2^31 - 1 (docs/design.md,
				 * 1.3). Token 0 is a finding, but the model
				 * can follow it: note the first and go on, so
				 * that the rest is still checked; it fails
				 * the run at the end.
				 */
				if (!dc->frag_token && !token0_seen++)
					snprintf(token0_call, sizeof(token0_call),
						 "iteration %" PRIu64 ": %s", iter, what);
				if (dc->frag_token && dc->frag_token != next_token())
					fail("token %u, but %u is next (the oldest free, else a new one)",
					     dc->frag_token, next_token());
				if (held[dc->frag_token])
					fail("token %u handed out twice", dc->frag_token);
				if (dc->frag_token)
					token_given(dc->frag_token);
				held[dc->frag_token] = 1;
				nheld++;
				if (dc->frag_token > top_token)
					top_token = dc->frag_token;
				tokens_given++;
				dm_rx_sync(&rx, DMA_BUF_SYNC_START);
				check_bytes(rx.map + dc->frag_offset, off, dc->frag_size,
					    "dmabuf");
				dm_rx_sync(&rx, DMA_BUF_SYNC_END);
				if (!(flags & MSG_PEEK)) {
					rx.dmabuf += dc->frag_size;
					rx.frags++;
				}
			}
			off += dc->frag_size;
			total += dc->frag_size;
		}
	}
	if (devmem && total != (size_t)n)
		fail("cmsgs account for %zu of %zd bytes", total, n);
	if (!devmem) {
		/* host memory: the bytes are in the user buffer */
		check_bytes(iov_buf, rx.off, n, "host data");
		if (!(flags & MSG_PEEK))
			rx.linear += n;
	}
	if (!(flags & MSG_PEEK))
		rx.off += n;
}

static const size_t ctrl_sizes[] = {
	0, 1, 4, 15, 16, 17, 39, CMSG_DM_LEN, CMSG_DM_LEN + 1,
	CMSG_SPACE(sizeof(struct dmabuf_cmsg)) - 1,
	CMSG_SPACE(sizeof(struct dmabuf_cmsg)),
	CMSG_SPACE(sizeof(struct dmabuf_cmsg)) + CMSG_DM_LEN - 1,
	CMSG_SPACE(sizeof(struct dmabuf_cmsg)) * 2,
	CMSG_SPACE(sizeof(struct dmabuf_cmsg)) * 7 + 3,
	4096, 65535, CTRL_MAX_LEN,
};

static const size_t iov_sizes[] = {
	0, 1, 7, 100, 1447, 1448, 4095, 4096, 9000, 65536, 262143, IOV_MAX_LEN,
};

static void fuzz_recv(int fd)
{
	size_t clen = ctrl_sizes[below(sizeof(ctrl_sizes) / sizeof(ctrl_sizes[0]))];
	size_t ilen = iov_sizes[below(sizeof(iov_sizes) / sizeof(iov_sizes[0]))];
	struct iovec iov = { iov_buf, ilen };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	int flags = 0, err;
	bool bad_ctrl = false, bad_iov = false, null_ctrl = false;
	void *ctl_ptr;
	size_t ctl_len;
	ssize_t n;

	if (chance(93))
		flags |= MSG_SOCK_DEVMEM;
	if (chance(20))
		flags |= MSG_PEEK;
	if (chance(10))
		flags |= MSG_TRUNC;
	if (chance(60))
		flags |= MSG_DONTWAIT;
	if (chance(15))
		flags |= MSG_WAITALL;
	/* A blocking MSG_WAITALL waits for the whole buffer: a peek of more
	 * than the receive window would wait for ever (recv(2)).
	 */
	if ((flags & MSG_WAITALL) && !(flags & MSG_DONTWAIT)) {
		flags &= ~MSG_PEEK;
		if (ilen > 65536)
			ilen = 65536;
		iov.iov_len = ilen;
	}
	if (chance(4))
		flags |= MSG_ERRQUEUE;
	if (chance(3))
		flags |= MSG_OOB;

	m.msg_control = clen ? ctrl_buf : NULL;
	m.msg_controllen = clen;
	if (chance(4)) {
		/* a control buffer the kernel cannot write: peek only, so
		 * that what it returns can be looked at again
		 */
		m.msg_control = noaccess;
		m.msg_controllen = 4096;
		flags |= MSG_PEEK;
		if ((flags & MSG_WAITALL) && !(flags & MSG_DONTWAIT))
			flags |= MSG_DONTWAIT;
		bad_ctrl = true;
	} else if (chance(3) && clen) {
		m.msg_control = NULL;	/* a length without a buffer */
		null_ctrl = true;
	}
	if (chance(3) && ilen) {
		iov.iov_base = noaccess;
		if (ilen > 4096)
			iov.iov_len = 4096;
		flags |= MSG_PEEK;	/* what it returns comes again */
		if ((flags & MSG_WAITALL) && !(flags & MSG_DONTWAIT))
			flags |= MSG_DONTWAIT;
		bad_iov = true;
	}
	snprintf(what, sizeof(what),
		 "recvmsg(iov %s%zu, control %s%zu, flags%s%s%s%s%s%s%s) at stream offset %"
		 PRIu64,
		 bad_iov ? "unmapped " : "", (size_t)iov.iov_len,
		 bad_ctrl ? "unmapped " : null_ctrl ? "NULL " : "",
		 (size_t)m.msg_controllen,
		 flags & MSG_SOCK_DEVMEM ? " SOCK_DEVMEM" : "",
		 flags & MSG_PEEK ? " PEEK" : "", flags & MSG_TRUNC ? " TRUNC" : "",
		 flags & MSG_DONTWAIT ? " DONTWAIT" : "",
		 flags & MSG_WAITALL ? " WAITALL" : "",
		 flags & MSG_ERRQUEUE ? " ERRQUEUE" : "", flags & MSG_OOB ? " OOB" : "",
		 rx.off);

	ctl_ptr = m.msg_control;
	ctl_len = m.msg_controllen;
	n = recvmsg(fd, &m, flags);
	err = n < 0 ? errno : 0;

	/* These two do not depend on the stream: their counts are the
	 * seed's alone.
	 */
	if (flags & MSG_ERRQUEUE) {
		rc_errq.calls++;
		if (n >= 0 || err != EAGAIN)
			fail("returned %zd (%s), expected EAGAIN: the error queue is empty",
			     n, n < 0 ? ename(err) : "-");
		rc_errq.err[err]++;
		return;
	}
	if (flags & MSG_OOB) {
		rc_oob.calls++;
		if (n >= 0 || err != EINVAL)
			fail("returned %zd (%s), expected EINVAL: no urgent data",
			     n, n < 0 ? ename(err) : "-");
		rc_oob.err[err]++;
		return;
	}
	rc_recv.calls++;
	if (n < 0) {
		switch (err) {
		case EAGAIN:
			if (!(flags & MSG_DONTWAIT))
				fail("a blocking recvmsg got nothing for %d s",
				     RCV_TIMEOUT_S);
			break;
		case ETOOSMALL:
			if (!(flags & MSG_SOCK_DEVMEM) || (flags & MSG_TRUNC) ||
			    (ctl_ptr && ctl_len >= CMSG_DM_LEN && !bad_ctrl))
				fail("ETOOSMALL, but the control buffer has room for a cmsg");
			break;
		case EFAULT:
			if ((flags & MSG_SOCK_DEVMEM) && !bad_ctrl && !bad_iov)
				fail("EFAULT with MSG_SOCK_DEVMEM and buffers that are mapped");
			if (flags & MSG_TRUNC)
				fail("EFAULT with MSG_TRUNC, which copies nothing");
			break;
		default:
			fail("undocumented error %s", ename(err));
		}
		rc_recv.err[err]++;
		return;
	}
	if (!n) {
		if (iov.iov_len) {
			if (rx.off != rx_bytes)
				fail("end of stream after %" PRIu64 " of %" PRIu64 " bytes",
				     rx.off, rx_bytes);
			rx_eof = true;
		}
		rc_recv.zero++;
		return;
	}
	if ((size_t)n > iov.iov_len)
		fail("returned %zd bytes for a %zu-byte buffer", n, (size_t)iov.iov_len);
	if (rx.off + ((flags & MSG_PEEK) ? 0 : n) > rx_bytes || rx.off + n > rx_bytes)
		fail("%zd bytes past offset %" PRIu64 " overrun the %" PRIu64
		     "-byte stream", n, rx.off, rx_bytes);
	if (bad_iov) {
		/* nothing of the user buffer could be written: device data,
		 * described by cmsgs only
		 */
		struct cmsghdr *cm;

		if (!(flags & MSG_SOCK_DEVMEM) && !(flags & MSG_TRUNC))
			fail("%zd bytes copied into an unmapped buffer", n);
		for (cm = CMSG_FIRSTHDR(&m); !bad_ctrl && cm;
		     cm = CMSG_NXTHDR(&m, cm))
			if (cm->cmsg_type == SO_DEVMEM_LINEAR)
				fail("a linear cmsg: bytes copied into an unmapped buffer");
	}
	if (bad_ctrl && !(flags & MSG_TRUNC) && (flags & MSG_SOCK_DEVMEM)) {
		/* no cmsg could be written: only host data may come back */
		if (bad_iov)
			fail("%zd bytes with neither buffer writable", n);
	}
	rc_recv.data++;
	rc_recv.bytes += (flags & MSG_PEEK) ? 0 : n;
	check_data(&m, n, flags, bad_ctrl);
}

/* ---- SO_DEVMEM_DONTNEED ---- */

/* Room for the huge option lengths too: the kernel must refuse them by
 * their length, not fault on the buffer.
 */
static struct dmabuf_token tbuf[(2 << 20) / sizeof(struct dmabuf_token)];
static uint8_t *guard;		/* a page followed by a PROT_NONE page */

/* The random numbers drawn never depend on the kernel's answers (each
 * branch draws a fixed number), so that the sequence of calls is the
 * seed's alone; only which token a "held" pick lands on depends on the
 * table.
 */
static uint32_t some_token(void)
{
	uint32_t k = below(10), r = rnd(), t;

	switch (k) {
	case 0: return 0;				/* never issued */
	case 1: return UINT32_MAX - r % 8;		/* wraps to 0, 1, ... */
	case 2: return 0x80000000u + r % 4;		/* beyond the 31-bit range */
	case 3: return MAX_TOKEN + r % 1000;		/* never handed out */
	case 4: return 1 + r % 64;
	default:
		/* a held one: the first at or after a random number up to
		 * the highest handed out (wrapping), else that number
		 */
		t = 1 + r % top_token;
		for (uint32_t u = 0; nheld && u < top_token; u++)
			if (held[1 + (t - 1 + u) % top_token])
				return 1 + (t - 1 + u) % top_token;
		return t;
	}
}

static uint32_t some_count(void)
{
	switch (below(8)) {
	case 0: return 0;
	case 1: return UINT32_MAX;
	case 2: return 1024 + below(2);
	case 3: return 2 + below(1100);
	default: return 1 + below(4);
	}
}

/* One random DONTNEED on @fd; @tcp: a TCP socket (else EBADF is due);
 * @c: where to count. Predicts the exact result from the token table
 * (empty unless @fd is the devmem socket).
 */
static void fuzz_dontneed(int fd, bool tcp, const char *sock, struct counts *c)
{
	unsigned int nr = below(8) ? below(6) : below(RANGES_MAX + 4), i;
	size_t optlen;
	const void *optval = tbuf;
	int expect_err = 0, ret, err, want = 0;
	enum { OK, NULLP, FAULT_ALL, FAULT_TAIL } where = OK;

	for (i = 0; i < nr; i++) {
		tbuf[i].token_start = some_token();
		tbuf[i].token_count = some_count();
		if (i && chance(15))	/* overlapping: the last one again, or part */
			tbuf[i] = tbuf[i - 1 - below(i)];
	}
	optlen = nr * sizeof(struct dmabuf_token);
	switch (below(16)) {
	case 0: optlen = below(4); break;			/* under an int */
	case 1: optlen += 1 + below(7); break;			/* misaligned */
	case 2: optlen = RANGES_MAX * 8 + 8 * (1 + below(4)); break;
	case 3: optlen = 1 << 20; break;			/* huge */
	case 4: optlen = 4 + below(4); break;			/* an int, no range */
	}
	switch (below(20)) {
	case 0: where = NULLP; optval = NULL; break;
	case 1: where = FAULT_ALL; optval = noaccess; break;
	case 2:
		/* the first 8 bytes readable, the rest in a PROT_NONE page */
		where = FAULT_TAIL;
		memcpy(guard + 4096 - 8, tbuf, 8);
		optval = guard + 4096 - 8;
		break;
	}

	/* The documented order of the checks. */
	if (optlen < sizeof(int))
		expect_err = EINVAL;
	else if (where == NULLP || where == FAULT_ALL)
		expect_err = EFAULT;
	else if (!tcp)
		expect_err = EBADF;
	else if (optlen % sizeof(struct dmabuf_token) ||
		 optlen > RANGES_MAX * sizeof(struct dmabuf_token))
		expect_err = EINVAL;
	else if (where == FAULT_TAIL && optlen > 8)
		expect_err = EFAULT;

	snprintf(what, sizeof(what), "setsockopt(%s, SO_DEVMEM_DONTNEED, %s, %zu)%s",
		 sock, where == NULLP ? "NULL" : where == FAULT_ALL ? "unmapped" :
		 where == FAULT_TAIL ? "8 bytes then unmapped" : "ranges", optlen,
		 nr ? " ranges:" : "");
	for (i = 0; i < nr && i < 12 && strlen(what) < sizeof(what) - 32; i++)
		snprintf(what + strlen(what), sizeof(what) - strlen(what),
			 " {%u,%u}", tbuf[i].token_start, tbuf[i].token_count);
	if (nr > 12)
		snprintf(what + strlen(what), sizeof(what) - strlen(what), " ...");

	c->calls++;
	ret = setsockopt(fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, optval, optlen);
	err = ret < 0 ? errno : 0;
	if (expect_err) {
		if (ret >= 0 || err != expect_err)
			fail("returned %d (%s), expected %s", ret,
			     ret < 0 ? ename(err) : "-", ename(expect_err));
		c->err[err]++;
		return;
	}
	/* the devmem socket's tokens are its own: another socket frees none */
	if (c != &rc_dn)
		want = 0;
	else if (where == FAULT_TAIL)
		want = model_dontneed(tbuf, 1);	/* 8 bytes: the first range */
	else
		want = model_dontneed(tbuf, optlen / sizeof(struct dmabuf_token));
	if (ret != want)
		fail("returned %d (%s), expected %d freed", ret,
		     ret < 0 ? ename(err) : "-", want);
	c->data++;
	c->bytes += ret;
	tokens_freed += ret;
	if (c == &rc_plain && !ret)
		plain_freed_zero++;
}

/* ---- the token-0 check ---- */

/* recvmsg(MSG_SOCK_DEVMEM) with room for one cmsg until it hands out a
 * token; returns that token.
 */
static uint32_t recv_one_token(int fd)
{
	uint64_t given = tokens_given;
	uint32_t tok = 0;

	while (tokens_given == given) {
		struct iovec iov = { iov_buf, IOV_MAX_LEN };
		struct msghdr m = {
			.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl_buf,
			.msg_controllen = CMSG_SPACE(sizeof(struct dmabuf_cmsg)),
		};
		ssize_t n;

		snprintf(what, sizeof(what), "recvmsg(iov %d, control %zu, flags SOCK_DEVMEM) at stream offset %" PRIu64,
			 IOV_MAX_LEN, (size_t)m.msg_controllen, rx.off);
		n = recvmsg(fd, &m, MSG_SOCK_DEVMEM);
		if (n <= 0)
			fail("returned %zd (%s), expected data", n, n < 0 ? ename(errno) : "-");
		check_data(&m, n, MSG_SOCK_DEVMEM, false);
		if (tokens_given != given)
			tok = ((struct dmabuf_cmsg *)CMSG_DATA(CMSG_FIRSTHDR(&m)))->frag_token;
	}
	return tok;
}

/* The minimal case of a token 0: with token 1 held, a DONTNEED range
 * from token 0 frees token 1 (token 0 was never handed out), and the
 * next token is again 1, the only free one.
 */
static void token_zero_check(int fd)
{
	struct dmabuf_token t = { 0, 2 };
	uint32_t first, next;
	int ret;

	first = recv_one_token(fd);
	snprintf(what, sizeof(what), "setsockopt(devmem socket, SO_DEVMEM_DONTNEED, {0, 2}) holding token %u",
		 first);
	ret = setsockopt(fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, &t, sizeof(t));
	if (ret != 1)
		fail("returned %d (%s), expected 1 freed", ret, ret < 0 ? ename(errno) : "-");
	model_dontneed(&t, 1);
	tokens_freed += ret;
	next = recv_one_token(fd);
	printf(PROG ": token-zero: first token %u; DONTNEED {0, 2} freed %d; next token %u\n",
	       first, ret, next);
	fflush(stdout);
	if (first != 1 || next != 1)
		fail("tokens %u then %u, expected 1 then 1 (the only free one, from 1)",
		     first, next);
}

/* ---- a token given back while recvmsg waits ---- */

struct waiter {
	int fd;
	struct msghdr m;
	ssize_t n;
	int err;
};

static void *wait_recv(void *arg)
{
	struct waiter *w = arg;

	w->n = recvmsg(w->fd, &w->m, MSG_SOCK_DEVMEM | MSG_WAITALL);
	w->err = errno;
	return NULL;
}

/* A recvmsg that waits (MSG_WAITALL) for the whole stream gets its first
 * @half bytes, in a buffer larger than a page that the queue packs, and
 * token 1 for them; then it sleeps without the socket lock, and this
 * thread gives token 1 back and prints so. The sender, stopped at @half,
 * goes on: the rest continues the same buffer, but may not grow the cmsg
 * of the token given back (that would lend the buffer under a token the
 * program no longer holds): it gets a cmsg and a token of its own, 1
 * again, the only free one.
 */
static void returned_token_check(int fd, uint64_t half)
{
	struct dmabuf_token t = { 1, 1 };
	struct iovec iov = { iov_buf, rx_bytes };
	struct waiter w = { .fd = fd };
	struct { uint64_t off; uint32_t size, token; } got[8];
	int inq = -1, ngot = 0, ret, i;
	uint64_t off = 0;
	struct tcp_info ti;
	struct cmsghdr *cm;
	socklen_t tl;
	pthread_t th;

	if (!half || half >= rx_bytes || rx_bytes > IOV_MAX_LEN)
		die("--returned-token HALF: 0 < HALF < BYTES <= %d", IOV_MAX_LEN);
	snprintf(what, sizeof(what), "recvmsg(%" PRIu64 " bytes, MSG_WAITALL) while token 1 is given back",
		 rx_bytes);
	w.m = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1,
			       .msg_control = ctrl_buf, .msg_controllen = 4096 };
	if (pthread_create(&th, NULL, wait_recv, &w))
		die("pthread_create failed");
	/* It holds the first half once that arrived and nothing is queued. */
	for (i = 0; ; i++) {
		tl = sizeof(ti);
		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) ||
		    ioctl(fd, SIOCINQ, &inq))
			die("TCP_INFO, SIOCINQ: %s", strerror(errno));
		if (ti.tcpi_bytes_received >= half && !inq)
			break;
		if (i == 20000)
			fail("the first %" PRIu64 " bytes never reached the waiting recvmsg (received %llu, queued %d)",
			     half, (unsigned long long)ti.tcpi_bytes_received, inq);
		usleep(1000);
	}
	ret = setsockopt(fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, &t, sizeof(t));
	if (ret != 1)
		fail("SO_DEVMEM_DONTNEED {1, 1} returned %d (%s), expected 1 freed",
		     ret, ret < 0 ? ename(errno) : "-");
	printf(PROG ": returned-token: token 1 given back while recvmsg waits\n");
	fflush(stdout);
	pthread_join(th, NULL);
	if (w.n != (ssize_t)rx_bytes)
		fail("returned %zd (%s), expected %" PRIu64, w.n,
		     w.n < 0 ? ename(w.err) : "-", rx_bytes);
	for (cm = CMSG_FIRSTHDR(&w.m); cm; cm = CMSG_NXTHDR(&w.m, cm)) {
		struct dmabuf_cmsg *dc = (struct dmabuf_cmsg *)CMSG_DATA(cm);

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SO_DEVMEM_DMABUF)
			fail("a cmsg of level %d type %d: every byte must be in the dma-buf",
			     cm->cmsg_level, cm->cmsg_type);
		if (ngot == 8 || dc->frag_offset + dc->frag_size > rx.size)
			fail("more than 8 frags, or one outside the dma-buf");
		got[ngot].off = dc->frag_offset;
		got[ngot].size = dc->frag_size;
		got[ngot++].token = dc->frag_token;
	}
	printf(PROG ": returned-token: %zd bytes in", w.n);
	for (i = 0; i < ngot; i++)
		printf(" [+%" PRIu64 ", %u bytes, token %u]", got[i].off - got[0].off,
		       got[i].size, got[i].token);
	printf("\n");
	fflush(stdout);
	dm_rx_sync(&rx, DMA_BUF_SYNC_START);
	for (i = 0; i < ngot; i++) {
		check_bytes(rx.map + got[i].off, off, got[i].size, "dma-buf");
		off += got[i].size;
	}
	dm_rx_sync(&rx, DMA_BUF_SYNC_END);
	if (ngot != 2 || got[0].size != half || got[0].token != 1 ||
	    got[1].off != got[0].off + half || got[1].token != 1)
		fail("expected [+0, %" PRIu64 " bytes, token 1] [+%" PRIu64 ", %" PRIu64 " bytes, token 1]",
		     half, half, rx_bytes - half);
	ret = setsockopt(fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, &t, sizeof(t));
	if (ret != 1)
		fail("SO_DEVMEM_DONTNEED {1, 1} returned %d, expected 1 freed", ret);
	rx.off = rx.dmabuf = rx_bytes;
	rx.frags = ngot;
	tokens_given = tokens_freed = 2;
}

/* ---- set-up ---- */

static int accept_one(const char *port, const char *ready)
{
	struct addrinfo hints = {
		.ai_family = AF_INET6, .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	};
	struct timeval tv = { .tv_sec = RCV_TIMEOUT_S };
	struct addrinfo *ai;
	int lfd, fd, one = 1, zero = 0;

	if (getaddrinfo(NULL, port, &hints, &ai))
		die("bad port %s", port);
	lfd = socket(AF_INET6, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 1))
		die("listen on port %s: %s", port, strerror(errno));
	freeaddrinfo(ai);
	ready_file(ready);
	fd = accept_only(lfd);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void print_errs(const char *name, const struct counts *c)
{
	printf(" %s %" PRIu64 " (", name, c->calls);
	printf("ok %" PRIu64, c->data);
	for (int e = 1; e < 600; e++)
		if (c->err[e])
			printf(", %s %" PRIu64, ename(e), c->err[e]);
	printf(")");
}

static void usage(FILE *f, int status)
{
	fprintf(f,
"Usage: " PROG " -p PORT -n BYTES [--seed N] [--iterations N] [-r FILE]\n"
"       " PROG " -p PORT -n BYTES --token-zero [-r FILE]\n"
"       " PROG " -p PORT -n BYTES --returned-token HALF [-r FILE]\n"
"\n"
"Accept one TCP connection on PORT whose BYTES bytes of the test pattern\n"
"(seed 1) land in the dma-buf $DEVMEM_DMABUF_FD (binding $DEVMEM_DMABUF_ID;\n"
"run under netdev-nl bind-rx ... --run), and make N (default 2000) random\n"
"calls of recvmsg(MSG_SOCK_DEVMEM) and SO_DEVMEM_DONTNEED on it and\n"
"DONTNEED on sockets without tokens, checking each result; then return\n"
"every token and read the rest of the stream. -r: create FILE once\n"
"listening. --token-zero: instead of the random calls, check that a\n"
"DONTNEED range from token 0 does not make 0 a token. --returned-token:\n"
"give token 1 back while a recvmsg that holds the first HALF bytes waits\n"
"for the rest (the sender stops at HALF and goes on once this prints\n"
"that it gave it back); the rest must not grow token 1's cmsg.\n"
"Exit status: 0 pass, 1 failure, 2 usage.\n");
	exit(status);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", 1, NULL, 's' }, { "iterations", 1, NULL, 'N' },
		{ "port", 1, NULL, 'p' }, { "bytes", 1, NULL, 'n' },
		{ "ready", 1, NULL, 'r' }, { "token-zero", 0, NULL, 'Z' },
		{ "returned-token", 1, NULL, 'R' },
		{ "help", 0, NULL, 'h' }, {}
	};
	const char *port = NULL, *ready = NULL;
	bool token_zero = false;
	uint64_t returned_half = 0;
	int c, fd, plain[4];
	const char *plain_name[4] = { "TCP unconnected", "TCP listening",
				      "UDP", "UNIX stream" };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };

	while ((c = getopt_long(argc, argv, "p:n:r:h", lo, NULL)) != -1) {
		switch (c) {
		case 's': seed = size_arg(optarg); break;
		case 'N': iterations = size_arg(optarg); break;
		case 'p': port = optarg; break;
		case 'n': rx_bytes = size_arg(optarg); break;
		case 'r': ready = optarg; break;
		case 'Z': token_zero = true; break;
		case 'R': returned_half = size_arg(optarg); break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc || !port || !rx_bytes)
		usage(stderr, 2);
	if (token_zero || returned_half)
		iterations = 0;
	dm_rx_env(&rx);
	printf(PROG ": seed %" PRIu64 " iterations %" PRIu64 "\n", seed, iterations);
	fflush(stdout);
	fuzz_rng = seed;
	rx.base = 1 * PATTERN_GOLDEN;
	dm_rx_map(&rx);
	noaccess = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	guard = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (noaccess == MAP_FAILED || guard == MAP_FAILED ||
	    mprotect(guard + 4096, 4096, PROT_NONE))
		die("mmap: %s", strerror(errno));

	plain[0] = socket(AF_INET6, SOCK_STREAM, 0);
	plain[1] = socket(AF_INET6, SOCK_STREAM, 0);
	plain[2] = socket(AF_INET, SOCK_DGRAM, 0);
	plain[3] = socket(AF_UNIX, SOCK_STREAM, 0);
	if (plain[0] < 0 || plain[1] < 0 || plain[2] < 0 || plain[3] < 0 ||
	    bind(plain[1], (struct sockaddr *)&sin6, sizeof(sin6)) ||
	    listen(plain[1], 1))
		die("plain sockets: %s", strerror(errno));

	fd = accept_one(port, ready);

	if (token_zero)
		token_zero_check(fd);
	if (returned_half)
		returned_token_check(fd, returned_half);
	for (iter = 0; iter < iterations; iter++) {
		unsigned int k = below(100);

		if (k < 50) {
			fuzz_recv(fd);
		} else if (k < 85) {
			fuzz_dontneed(fd, true, "devmem socket", &rc_dn);
		} else {
			unsigned int p = below(4);

			fuzz_dontneed(plain[p], p < 2, plain_name[p], &rc_plain);
		}
		if (nheld > HOLD_LIMIT)
			return_all(fd);
	}

	/* Give everything back, then read the rest of the stream. */
	iter = iterations;
	return_all(fd);
	while (!rx_eof) {
		struct iovec iov = { iov_buf, IOV_MAX_LEN };
		struct msghdr m = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctrl_buf, .msg_controllen = 64 * 1024,
		};
		ssize_t n;

		snprintf(what, sizeof(what), "recvmsg draining at stream offset %" PRIu64,
			 rx.off);
		n = recvmsg(fd, &m, MSG_SOCK_DEVMEM);
		if (n < 0)
			fail("%s", ename(errno));
		if (!n) {
			if (rx.off != rx_bytes)
				fail("end of stream after %" PRIu64 " of %" PRIu64 " bytes",
				     rx.off, rx_bytes);
			break;
		}
		check_data(&m, n, MSG_SOCK_DEVMEM, false);
		return_all(fd);
	}
	if (nheld)
		fail("%u tokens still held", nheld);

	printf(PROG ": %" PRIu64 " iterations:", iterations);
	print_errs("recvmsg", &rc_recv);
	/* the seed's alone from here */
	printf("\n" PROG ":");
	print_errs("errqueue", &rc_errq);
	print_errs("oob", &rc_oob);
	printf("\n" PROG ":");
	print_errs("dontneed", &rc_dn);
	print_errs("plain-dontneed", &rc_plain);
	printf("\n" PROG ": plain sockets freed 0 tokens in %" PRIu64 " calls\n",
	       plain_freed_zero);
	printf(PROG ": received %" PRIu64 " bytes: linear %" PRIu64 ", dmabuf %"
	       PRIu64 " in %" PRIu64 " frags; tokens handed out %" PRIu64
	       ", returned %" PRIu64 "\n", rx.off, rx.linear, rx.dmabuf, rx.frags,
	       tokens_given, tokens_freed);
	if (tokens_given != tokens_freed)
		fail("%" PRIu64 " tokens handed out, %" PRIu64 " returned",
		     tokens_given, tokens_freed);
	if (token0_seen) {
		snprintf(what, sizeof(what), "the end of the run");
		fail("token 0 handed out %" PRIu64 " times, first at %s; "
		     "tokens are 1 to 2^31 - 1", token0_seen, token0_call);
	}
	printf(PROG ": pass\n");
	close(fd);
	return 0;
}
