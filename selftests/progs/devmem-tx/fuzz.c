// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz=SEED:ITERATIONS[:MAXLEN], a step of devmem-tx send: a bounded,
 * deterministic fuzzer of the send side of device-memory TCP, on the
 * step's connected socket and its own tx binding. MAXLEN caps each range
 * (the numbers drawn stay the same).
 *
 * Each iteration draws one of:
 *   devmem   sendmsg(MSG_ZEROCOPY) of 1-8 ranges of the dma-buf naming the
 *            own binding; half the ranges continue where the last one
 *            ended, so that ranges merge into one frag, within a call and
 *            across calls; some iovecs are empty (stepped over)
 *   burst    2-32 such sends of one range each, of one length, back to
 *            back, each continuing the last: a stream whose sends merge
 *            into what TCP has not sent yet of the last one
 *   fault    the same with a range past the dma-buf's end: crossing it,
 *            beyond it, or an empty iovec beyond it before a good range
 *            (a fault only before the first byte: advancing past a
 *            range steps over the empty iovecs after it)
 *   badid    an id no binding has (EINVAL)
 *   noflag   no MSG_ZEROCOPY (EINVAL)
 *   cmsglen  a cmsg payload other than 4 bytes (EINVAL)
 *   id0      id 0: no binding, so an ordinary send from user addresses
 *            below mmap_min_addr (EFAULT)
 *   plain    host memory, without a cmsg, MSG_ZEROCOPY half the time
 *   sockopt  TCP_NODELAY, TCP_CORK, SO_SNDBUF, IP_TOS (which resets the
 *            route), SO_ZEROCOPY (off: every devmem send is EINVAL), or
 *            reading the completions
 *   rest     uncork and push, wait until everything is acknowledged and
 *            every MSG_ZEROCOPY send's completion has arrived: the
 *            socket's send memory (SO_MEMINFO wmem_alloc, wmem_queued) must
 *            then be zero
 * with MSG_DONTWAIT and MSG_MORE on some sends. Every result must be one
 * docs/design.md section 11 gives for that input: a devmem or plain send
 * returns its whole length (MSG_DONTWAIT: part of it, or EAGAIN), a fault
 * EFAULT or at most the bytes before the bad range, the refusals their
 * errno, and any MSG_ZEROCOPY send on an SO_ZEROCOPY socket may get
 * ENOBUFS (its completions hold the socket's option memory). What the
 * kernel accepted is added to the stream: at the end the socket is at
 * rest once more and the step prints
 *
 *   fuzz drawn devmem=N fault=N badid=N noflag=N cmsglen=N id0=N plain=N sockopt=N rest=N
 *   fuzz results whole=N partial=N efault=N einval=N eagain=N enobufs=N zerocopy=N rests=N
 *   fuzz sent=BYTES cksum=CRC
 *
 * the "drawn" line the seed's alone; CRC is what POSIX cksum prints for
 * the stream sent, so a test compares it with the receiver's copy. Its
 * completions are counted from the step's start: make it the first step
 * that sends with MSG_ZEROCOPY. A
 * result outside the rules, or send memory left at a rest, prints the
 * iteration, the call and what was expected, and exits 1.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define PROG		"devmem-tx"

#include "../lib/die.h"
#include "../lib/pattern.h"
#include "../lib/fuzz.h"
#include "devmem-tx.h"

#define FUZZ_IOV	8
#define USER_BUF	(256 << 10)
/* below mmap_min_addr: never mapped */
#define LOW_ADDR_MAX	(64 << 10)

enum kind { K_DEVMEM, K_BURST, K_FAULT, K_BADID, K_NOFLAG, K_CMSGLEN,
	    K_ID0, K_PLAIN, K_SOCKOPT, K_REST, K_NKINDS };
static const char *const kind_names[K_NKINDS] = {
	"devmem", "burst", "fault", "badid", "noflag", "cmsglen", "id0",
	"plain", "sockopt", "rest",
};
/* percent of the iterations */
static const unsigned int kind_pct[K_NKINDS] = {
	34, 6, 8, 4, 3, 3, 3, 14, 22, 3,
};

enum { R_WHOLE, R_PARTIAL, R_EFAULT, R_EINVAL, R_EAGAIN, R_ENOBUFS, R_N };

static uint64_t iter;
static unsigned int drawn[K_NKINDS], results[R_N], rests;
static bool zc_on, nodelay, corked;
static uint64_t zc_sends;
static size_t next_off, max_len = ~(size_t)0;
static unsigned char *user_buf;
static char call[1024];

/* --- the stream's POSIX cksum ---------------------------------------- */

static uint32_t crc_tab[256], crc;
static uint64_t sent;

static void crc_init(void)
{
	uint32_t c;
	int i, b;

	for (i = 0; i < 256; i++) {
		c = (uint32_t)i << 24;
		for (b = 0; b < 8; b++)
			c = c & 0x80000000u ? (c << 1) ^ 0x04c11db7u : c << 1;
		crc_tab[i] = c;
	}
}

static uint32_t crc_byte(uint32_t c, unsigned char b)
{
	return (c << 8) ^ crc_tab[((c >> 24) ^ b) & 0xff];
}

static void crc_add(const unsigned char *p, size_t n)
{
	sent += n;
	while (n--)
		crc = crc_byte(crc, *p++);
}

/* cksum appends the length, least significant byte first, and inverts. */
static uint32_t crc_final(void)
{
	uint64_t len = sent;
	uint32_t c = crc;

	for (; len; len >>= 8)
		c = crc_byte(c, len & 0xff);
	return ~c;
}

/* The dma-buf's bytes [@off, @off + @len) into the stream. */
static void crc_add_dmabuf(size_t off, size_t len)
{
	unsigned char b[512];
	size_t n, i;

	while (len) {
		n = len < sizeof(b) ? len : sizeof(b);
		for (i = 0; i < n; i++)
			b[i] = 'a' + (off + i) % 26;
		crc_add(b, n);
		off += n;
		len -= n;
	}
}

/* The first @n bytes of @iov into the stream; a devmem send's next
 * range continues (half the time) where its last byte was.
 */
static void account(const struct iovec *iov, int niov, size_t n, bool devmem)
{
	size_t len;
	int i;

	for (i = 0; i < niov && n; i++) {
		len = iov[i].iov_len < n ? iov[i].iov_len : n;
		if (devmem) {
			crc_add_dmabuf((size_t)iov[i].iov_base, len);
			next_off = (size_t)iov[i].iov_base + len;
		} else {
			crc_add(iov[i].iov_base, len);
		}
		n -= len;
	}
}

/* --- drawing calls ----------------------------------------------------- */

/* A range's length, capped at max_len (the draw is the same). */
static size_t draw_len(void)
{
	size_t len;

	switch (below(10)) {
	case 0: case 1:
		len = 1 + below(64);
		break;
	case 2: case 3: case 4: case 5:
		len = 1 + below(4096);
		break;
	case 6: case 7: case 8:
		len = 1 + below(64 << 10);
		break;
	default:
		len = 1 + below(256 << 10);
		break;
	}
	return len < max_len ? len : max_len;
}

/* One range inside the dma-buf, half the time where the last one ended
 * (the one before it in this call, or the last byte sent); now and then
 * an empty one.
 */
static void draw_range(struct iovec *v)
{
	size_t off, len;

	if (chance(10)) {
		v->iov_base = (void *)(uintptr_t)below(dmabuf_size);
		v->iov_len = 0;
		return;
	}
	off = chance(50) ? next_off : below(dmabuf_size);
	if (off >= dmabuf_size)
		off = 0;
	len = draw_len();
	if (len > dmabuf_size - off)
		len = dmabuf_size - off;
	v->iov_base = (void *)(uintptr_t)off;
	v->iov_len = len;
	next_off = off + len;
}

static size_t iov_total(const struct iovec *iov, int niov)
{
	size_t t = 0;
	int i;

	for (i = 0; i < niov; i++)
		t += iov[i].iov_len;
	return t;
}

/* 1 to FUZZ_IOV good ranges (mostly up to 3), at least one byte. */
static int draw_ranges(struct iovec *iov)
{
	int n = 1 + below(chance(20) ? FUZZ_IOV : 3), i;

	for (i = 0; i < n; i++)
		draw_range(&iov[i]);
	if (!iov_total(iov, n)) {
		iov[n - 1].iov_base = 0;
		iov[n - 1].iov_len = 1;
	}
	return n;
}

/* Good ranges, then a bad one, maybe a good one after it (never reached);
 * the bytes before the bad range's first bad byte in *@prefix.
 */
static int draw_fault(struct iovec *iov, size_t *prefix)
{
	int n = below(3), i;
	size_t off;

	for (i = 0; i < n; i++)
		draw_range(&iov[i]);
	*prefix = iov_total(iov, n);
	switch (below(3)) {
	case 0:		/* crossing the end */
		off = dmabuf_size - 1 - below(dmabuf_size < 4096 ? dmabuf_size : 4096);
		iov[n].iov_base = (void *)(uintptr_t)off;
		iov[n].iov_len = dmabuf_size - off + 1 + below(4096);
		*prefix += dmabuf_size - off;
		break;
	case 1:		/* beyond it: just past, or far */
		off = chance(50) ? dmabuf_size + below(1 << 20) : 1ull << 40;
		iov[n].iov_base = (void *)(uintptr_t)off;
		iov[n].iov_len = 1 + below(4096);
		break;
	default:	/* empty, beyond it, before a good range */
		iov[n].iov_base = (void *)(uintptr_t)(dmabuf_size + below(1 << 20));
		iov[n].iov_len = 0;
		/* Only one before the first byte is looked at: advancing
		 * past a range steps over the empty iovecs after it,
		 * wherever they point.
		 */
		if (*prefix)
			*prefix = ~(size_t)0;
		n++;
		iov[n].iov_base = 0;
		iov[n].iov_len = 1 + below(4096);
		break;
	}
	n++;
	if (chance(30)) {
		iov[n].iov_base = 0;
		iov[n].iov_len = 1 + below(4096);
		n++;
	}
	return n;
}

static int draw_plain(struct iovec *iov)
{
	int n = 1 + below(3), i;
	size_t off, len;

	for (i = 0; i < n; i++) {
		off = below(USER_BUF);
		len = draw_len();
		if (len > USER_BUF - off)
			len = USER_BUF - off;
		iov[i].iov_base = user_buf + off;
		iov[i].iov_len = len;
	}
	return n;
}

/* A burst's next send: @len bytes where the last one ended, from the
 * start once the dma-buf is left behind.
 */
static int draw_burst_send(struct iovec *iov, size_t len)
{
	if (len > dmabuf_size)
		len = dmabuf_size;
	if (next_off + len > dmabuf_size)
		next_off = 0;
	iov[0].iov_base = (void *)(uintptr_t)next_off;
	iov[0].iov_len = len;
	next_off += len;
	return 1;
}

static int draw_low(struct iovec *iov)
{
	iov[0].iov_base = (void *)(uintptr_t)below(LOW_ADDR_MAX - 4096);
	iov[0].iov_len = 1 + below(4096);
	return 1;
}

static int draw_flags(void)
{
	int flags = 0;

	if (chance(15))
		flags |= MSG_DONTWAIT;
	if (chance(15))
		flags |= MSG_MORE;
	return flags;
}

static void describe(const char *kind, const struct iovec *iov, int niov,
		     uint32_t id, size_t cmsglen, int flags, bool devmem)
{
	int len, i;

	len = snprintf(call, sizeof(call), "%s: sendmsg(", kind);
	for (i = 0; i < niov && len < (int)sizeof(call) - 64; i++)
		len += snprintf(call + len, sizeof(call) - len, "%s%s%#zx+%zu",
				i ? " " : "", devmem ? "" : "user ",
				devmem ? (size_t)iov[i].iov_base :
				(size_t)((unsigned char *)iov[i].iov_base - user_buf),
				iov[i].iov_len);
	if (cmsglen)
		len += snprintf(call + len, sizeof(call) - len,
				", id %u in %zu bytes", id, cmsglen);
	snprintf(call + len, sizeof(call) - len, ", flags%s%s%s) on SO_ZEROCOPY %s",
		 flags & MSG_ZEROCOPY ? " ZEROCOPY" : "",
		 flags & MSG_DONTWAIT ? " DONTWAIT" : "",
		 flags & MSG_MORE ? " MORE" : "", zc_on ? "on" : "off");
}

static void __attribute__((noreturn)) bad(const char *got, const char *want)
{
	fflush(stdout);
	fprintf(stderr, PROG ": fuzz: iteration %llu: %s: got %s, expected %s\n",
		(unsigned long long)iter, call, got, want);
	exit(1);
}

/* --- checking a result --------------------------------------------------- */

/* A send of @total bytes whose first @good are good (the rest past the
 * dma-buf) returned @n (errno @err): check it against the rules of
 * @refusal (0: none, else the errno every call of its kind gets) and add
 * what was sent to the stream.
 */
static void check(ssize_t n, int err, const struct iovec *iov, int niov,
		  size_t total, size_t good, int refusal, int flags, bool devmem)
{
	bool zc = (flags & MSG_ZEROCOPY) && zc_on;
	char got[64], want[160];

	if (n >= 0)
		snprintf(got, sizeof(got), "%zd", n);
	else
		snprintf(got, sizeof(got), "%s", errname(err));

	if (n < 0 && err == ENOBUFS && zc) {
		results[R_ENOBUFS]++;
		drain_completions(10);
		return;
	}
	if (refusal) {
		snprintf(want, sizeof(want), "%s", errname(refusal));
		if (n >= 0 || err != refusal) {
			/* id 0 copies from user memory: it may wait for it */
			if (!(refusal == EFAULT && n < 0 && err == EAGAIN &&
			      (flags & MSG_DONTWAIT)))
				bad(got, want);
			results[R_EAGAIN]++;
			return;
		}
		results[refusal == EFAULT ? R_EFAULT : R_EINVAL]++;
		return;
	}
	if (good < total)
		snprintf(want, sizeof(want), "EFAULT or 1 to %zu bytes%s", good,
			 flags & MSG_DONTWAIT ? " or EAGAIN" : "");
	else if (flags & MSG_DONTWAIT)
		snprintf(want, sizeof(want), "1 to %zu bytes or EAGAIN", total);
	else
		snprintf(want, sizeof(want), "%zu", total);
	if (n < 0) {
		if (err == EAGAIN && (flags & MSG_DONTWAIT)) {
			results[R_EAGAIN]++;
			return;
		}
		if (err == EFAULT && good < total) {
			results[R_EFAULT]++;
			return;
		}
		bad(got, want);
	}
	if (n == 0 || (size_t)n > good ||
	    ((size_t)n < total && good == total && !(flags & MSG_DONTWAIT)))
		bad(got, want);
	results[(size_t)n == total ? R_WHOLE : R_PARTIAL]++;
	if (zc)
		zc_sends++;
	account(iov, niov, n, devmem);
}

static ssize_t send_plain(struct iovec *iov, int niov, int flags)
{
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = niov };

	return sendmsg(sock, &msg, flags | MSG_NOSIGNAL);
}

/* --- the other draws ------------------------------------------------------ */

static void sockopt(void)
{
	static const int sndbufs[] = { 4096, 16384, 65536, 262144, 1 << 20 };
	static const int tos[] = { 0, 0x10, 0x28 };
	bool on;
	int v;

	switch (below(6)) {
	case 0:
		nodelay = !nodelay;
		set_int(IPPROTO_TCP, TCP_NODELAY, "TCP_NODELAY", nodelay);
		break;
	case 1:
		corked = !corked;
		set_int(IPPROTO_TCP, TCP_CORK, "TCP_CORK", corked);
		break;
	case 2:
		set_int(SOL_SOCKET, SO_SNDBUF, "SO_SNDBUF", sndbufs[below(5)]);
		break;
	case 3:
		v = tos[below(3)];
		if (v6)
			set_int(IPPROTO_IPV6, IPV6_TCLASS, "IPV6_TCLASS", v);
		else
			set_int(IPPROTO_IP, IP_TOS, "IP_TOS", v);
		break;
	case 4:
		/* mostly on: off, every devmem send is refused */
		on = chance(75);
		zc_on = zc_on ? on : true;
		set_int(SOL_SOCKET, SO_ZEROCOPY, "SO_ZEROCOPY", zc_on);
		break;
	default:
		drain_completions(0);
		break;
	}
}

/* Push what cork and MSG_MORE hold, wait for rest, check it. */
static void rest(void)
{
	uint32_t mem[SK_MEMINFO_VARS];
	char got[128];

	snprintf(call, sizeof(call), "rest after %llu MSG_ZEROCOPY sends",
		 (unsigned long long)zc_sends);
	if (corked)
		set_int(IPPROTO_TCP, TCP_CORK, "TCP_CORK", 0);
	corked = false;
	set_int(IPPROTO_TCP, TCP_NODELAY, "TCP_NODELAY", 1);
	at_rest(mem, zc_sends);
	set_int(IPPROTO_TCP, TCP_NODELAY, "TCP_NODELAY", nodelay);
	if (mem[SK_MEMINFO_WMEM_ALLOC] || mem[SK_MEMINFO_WMEM_QUEUED] ||
	    zc_completed != zc_sends) {
		snprintf(got, sizeof(got),
			 "wmem_alloc=%u wmem_queued=%u, %llu completed",
			 mem[SK_MEMINFO_WMEM_ALLOC], mem[SK_MEMINFO_WMEM_QUEUED],
			 (unsigned long long)zc_completed);
		bad(got, "send memory zero, every send completed");
	}
	rests++;
}

static void burst(uint32_t id)
{
	unsigned int sends = 2 + below(31), i;
	size_t len = draw_len();
	int flags = MSG_ZEROCOPY | draw_flags();
	struct iovec iov[1];
	ssize_t n;

	for (i = 0; i < sends; i++) {
		draw_burst_send(iov, len);
		describe("burst", iov, 1, id, sizeof(id), flags, true);
		n = send_ranges(iov, 1, id, sizeof(id), flags);
		check(n, errno, iov, 1, len, len, zc_on ? 0 : EINVAL, flags,
		      true);
	}
}

static int get_int(int level, int name)
{
	socklen_t len = sizeof(int);
	int v = 0;

	if (getsockopt(sock, level, name, &v, &len))
		die("getsockopt %d/%d: %s", level, name, strerror(errno));
	return v;
}

static enum kind draw_kind(void)
{
	unsigned int r = below(100), k;

	for (k = 0; k < K_NKINDS - 1 && r >= kind_pct[k]; k++)
		r -= kind_pct[k];
	return k;
}

void fuzz_step(const char *step, uint32_t id)
{
	struct timeval tmo = { .tv_sec = 60 };
	struct iovec iov[FUZZ_IOV + 2];
	unsigned long long seed, iterations, cap = 0;
	size_t total, good, cmsglen;
	int niov, flags, refusal;
	uint32_t use_id;
	enum kind k;
	ssize_t n;
	size_t i;

	if (sscanf(step, "fuzz=%llu:%llu:%llu", &seed, &iterations, &cap) < 2 ||
	    !tcp || !connected || !id || dmabuf_size < 26 ||
	    dmabuf_size > UINT32_MAX)
		die("bad step '%s' (a connected TCP socket with --dev, a dma-buf under 4G)",
		    step);
	if (cap)
		max_len = cap;
	printf("fuzz seed=%llu iterations=%llu\n", seed, iterations);
	fflush(stdout);
	fuzz_rng = mix64(seed ^ 0x5eed5eed5eed5eedULL);
	crc_init();
	user_buf = malloc(USER_BUF);
	if (!user_buf)
		die("out of memory");
	for (i = 0; i < USER_BUF; i++)
		user_buf[i] = rnd() >> 56;
	if (setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof(tmo)))
		die("SO_SNDTIMEO: %s", strerror(errno));
	zc_on = get_int(SOL_SOCKET, SO_ZEROCOPY);
	nodelay = get_int(IPPROTO_TCP, TCP_NODELAY);
	/* sends before this step are at rest, their completions read */
	at_rest((uint32_t[SK_MEMINFO_VARS]){}, ~0ULL);
	zc_completed = 0;

	for (iter = 0; iter < iterations; iter++) {
		k = draw_kind();
		drawn[k]++;
		flags = MSG_ZEROCOPY | draw_flags();
		cmsglen = sizeof(id);
		refusal = 0;
		good = ~(size_t)0;
		switch (k) {
		case K_SOCKOPT:
			sockopt();
			continue;
		case K_REST:
			rest();
			continue;
		case K_BURST:
			burst(id);
			continue;
		case K_PLAIN:
			if (chance(50))
				flags &= ~MSG_ZEROCOPY;
			niov = draw_plain(iov);
			total = iov_total(iov, niov);
			describe("plain", iov, niov, 0, 0, flags, false);
			n = send_plain(iov, niov, flags);
			check(n, errno, iov, niov, total, total, 0, flags, false);
			continue;
		case K_ID0:
			niov = draw_low(iov);
			describe("id0", iov, niov, 0, cmsglen, flags, true);
			n = send_ranges(iov, niov, 0, cmsglen, flags);
			check(n, errno, iov, niov, iov_total(iov, niov), 0,
			      EFAULT, flags, true);
			continue;
		case K_FAULT:
			niov = draw_fault(iov, &good);
			break;
		default:
			niov = draw_ranges(iov);
			break;
		}
		total = iov_total(iov, niov);
		if (good > total)
			good = total;
		switch (k) {
		case K_BADID:
			refusal = EINVAL;
			break;
		case K_NOFLAG:
			flags &= ~MSG_ZEROCOPY;
			refusal = EINVAL;
			break;
		case K_CMSGLEN:
			cmsglen = (size_t[]){ 0, 1, 2, 3, 5, 8, 16 }[below(7)];
			refusal = EINVAL;
			break;
		default:
			/* without SO_ZEROCOPY a devmem send is refused whole */
			if (!zc_on)
				refusal = EINVAL;
			break;
		}
		use_id = k == K_BADID ? UNKNOWN_ID - (uint32_t)below(1 << 20) : id;
		describe(kind_names[k], iov, niov, use_id, cmsglen, flags, true);
		n = send_ranges(iov, niov, use_id, cmsglen, flags);
		check(n, errno, iov, niov, total, good, refusal, flags, true);
	}
	rest();

	printf("fuzz drawn");
	for (k = 0; k < K_NKINDS; k++)
		printf(" %s=%u", kind_names[k], drawn[k]);
	printf("\nfuzz results whole=%u partial=%u efault=%u einval=%u eagain=%u enobufs=%u zerocopy=%llu rests=%u\n",
	       results[R_WHOLE], results[R_PARTIAL], results[R_EFAULT],
	       results[R_EINVAL], results[R_EAGAIN], results[R_ENOBUFS],
	       (unsigned long long)zc_sends, rests);
	printf("fuzz sent=%llu cksum=%u\n", (unsigned long long)sent,
	       crc_final());
	fflush(stdout);
	free(user_buf);
}
