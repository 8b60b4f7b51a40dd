// SPDX-License-Identifier: GPL-2.0
/*
 * devmem-rx: accept one TCP connection and receive its stream with
 * recvmsg(MSG_SOCK_DEVMEM), checking every byte against the test pattern
 * (selftests/progs/lib/pattern.h): bytes reported by SO_DEVMEM_LINEAR are read
 * from the user buffer, bytes reported by SO_DEVMEM_DMABUF from the
 * dma-buf through its mmap, bracketed by DMA_BUF_IOCTL_SYNC. Tokens go
 * back with SO_DEVMEM_DONTNEED, whose return is checked.
 *
 * The dma-buf must be bound to the queue the flow is steered to; run it
 * under `netdev-nl bind-rx ... --run`, which passes the dma-buf's fd and
 * the binding's id in DEVMEM_DMABUF_FD and DEVMEM_DMABUF_ID.
 *
 * For the tests, --probe runs one-shot checks of the socket API once data
 * is queued (see usage), and --hold keeps every token until SIGUSR1. With
 * --plain it receives with plain recv() instead (no dma-buf), for
 * comparison. --cpu reports the process's CPU time.
 *
 * Built against the repository's user ABI (build/uapi/include, made by
 * scripts/uapi-headers.sh).
 * Exit status: 0 success, 1 failure, 2 usage.
 */
/* linux/uio.h first, then tell glibc its struct iovec is defined (both
 * define it), as mainline's ncdevmem does.
 */
#include <linux/uio.h>
#define __iovec_defined 1
#include <stddef.h>
#include <linux/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG		"devmem-rx"

#include "../lib/die.h"
#include "../lib/size.h"
#include "../lib/devmem.h"
#include "../lib/listen.h"
#include "../lib/tokens.h"
#define IOV_LEN		(1024 * 1024)	/* the linear bytes of device data land here */
#define CTRL_LEN	(CMSG_SPACE(sizeof(struct dmabuf_cmsg)) * 1024)

struct opts {
	const char *addr, *port, *ready;
	uint64_t bytes, seed;
	int dmabuf_fd, rcvbuf, rcvlowat;
	unsigned int batch;		/* give back once this many are held */
	long dmabuf_id;
	bool plain, hold, cpu, quiet;
	const char *probes;
};

static uint8_t iov_buf[IOV_LEN];
static uint8_t ctrl[CTRL_LEN] __attribute__((aligned(8)));
/* the stream, and the dma-buf */
static struct dm_rx rx = {
	.buf = iov_buf, .buf_len = sizeof(iov_buf), .ctrl = ctrl,
};
static struct tokens held;	/* to give back */
static uint64_t batches;	/* given back while receiving */

static volatile sig_atomic_t release_held;

static void usage(FILE *f, int status)
{
	fprintf(f,
"Usage: " PROG " -p PORT [-b ADDR] -n BYTES [options]\n"
"\n"
"Accept one TCP connection on ADDR (default ::, which takes IPv4 too)\n"
"port PORT, receive BYTES bytes with recvmsg(MSG_SOCK_DEVMEM), check\n"
"each against the pattern of seed SEED, give tokens back, and expect\n"
"the peer to close. Prints one summary line:\n"
"  received B bytes: linear L, dmabuf D in F frags\n"
"\n"
"  -b, --bind ADDR      address to listen on\n"
"  -p, --port PORT      port to listen on\n"
"  -n, --bytes N        bytes to expect (K, M, G suffixes)\n"
"  -S, --seed N         pattern seed (default 1)\n"
"  -d, --dmabuf-fd FD   the bound dma-buf (default $DEVMEM_DMABUF_FD)\n"
"  -i, --dmabuf-id ID   its binding id (default $DEVMEM_DMABUF_ID)\n"
"  -r, --ready FILE     create FILE once listening\n"
"      --hold           keep every token until SIGUSR1, then return all\n"
"      --batch N        give tokens back once N (1 to 1024) are held, in\n"
"                       one SO_DEVMEM_DONTNEED (default 1: after each\n"
"                       read); the rest at the end of the stream\n"
"      --probe LIST     once data is queued, run these checks in order\n"
"                       and print one line each (comma-separated):\n"
"                       nodevmem  recv without MSG_SOCK_DEVMEM\n"
"                       peek      MSG_PEEK without MSG_SOCK_DEVMEM\n"
"                       peekdm    MSG_PEEK | MSG_SOCK_DEVMEM (tokens given back)\n"
"                       pause     read nothing until SIGUSR1\n"
"                       splice    splice to a pipe, non-blocking\n"
"                       zerocopy  TCP_ZEROCOPY_RECEIVE on an mmap\n"
"                       fionread  ioctl FIONREAD\n"
"                       ctrlN     recvmsg with an N-byte control buffer\n"
"                       ranges129 DONTNEED with 129 ranges\n"
"                       badlen    DONTNEED with a 12-byte option\n"
"                       foreign   another socket returns our tokens\n"
"                       huge      one range of 2^32-1 tokens\n"
"      --rcvbuf N       SO_RCVBUF N on the socket\n"
"      --rcvlowat N     SO_RCVLOWAT N on the socket: a read waits for N\n"
"                       bytes (or the end of the stream)\n"
"      --plain          plain recv(), no dma-buf (for comparison)\n"
"      --cpu            also print: cpu NS ns for B bytes, W wakeups,\n"
"                       P preemptions[, T token batches]\n"
"                       (W: the times the receiver slept and was woken;\n"
"                       T: how many times it gave tokens back, without\n"
"                       --plain)\n"
"      --no-check       do not look at the payload (for --cpu)\n"
"  -q, --quiet          no summary line\n");
	exit(status);
}

/* @s for option @opt: 1 to @max @unit, or die saying so. */
static unsigned int parse_count(const char *s, const char *opt,
				unsigned int max, const char *unit)
{
	uint64_t v = size_arg(s);

	if (v < 1 || v > max)
		die("%s %s: 1 to %u %s", opt, s, max, unit);
	return v;
}

/* One recvmsg(MSG_SOCK_DEVMEM) with a control buffer of @ctrl_len bytes
 * (0: none); what it returns is checked and its tokens held. Returns
 * recvmsg's result; errno as it left it.
 */
static ssize_t recv_devmem(int fd, size_t ctrl_len, int flags)
{
	return dm_rx_recv(&rx, fd, flags, ctrl_len, &held);
}

static const char *err_name(int err)
{
	switch (err) {
	case EFAULT: return "EFAULT";
	case EINVAL: return "EINVAL";
	case EAGAIN: return "EAGAIN";
	case ETOOSMALL: return "ETOOSMALL";
	case EBADF: return "EBADF";
	default: return strerror(err);
	}
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Receive, holding tokens, until more than @want are held. */
static void hold_at_least(int fd, size_t want)
{
	ssize_t n;

	while (held.n < want) {
		n = recv_devmem(fd, CTRL_LEN, 0);
		if (n <= 0)
			die("recvmsg while collecting tokens: %s",
			    n ? strerror(errno) : "peer closed");
	}
}

static void probe(int fd, const char *name)
{
	char buf[4096];
	ssize_t n;
	int ret;

	if (!strcmp(name, "nodevmem") || !strcmp(name, "peek")) {
		n = recv(fd, buf, sizeof(buf),
			 MSG_DONTWAIT | (name[0] == 'p' ? MSG_PEEK : 0));
		printf("probe %s: %s\n", name,
		       n < 0 ? err_name(errno) : "data");
	} else if (!strcmp(name, "peekdm")) {
		uint64_t off = rx.off, frags = rx.frags, kept = held.n;
		uint64_t lin = rx.linear, dm = rx.dmabuf;

		n = recv_devmem(fd, CTRL_LEN, MSG_PEEK | MSG_DONTWAIT);
		if (n <= 0)
			die("MSG_PEEK | MSG_SOCK_DEVMEM: %s", strerror(errno));
		printf("probe peekdm: %s, %s frags\n", "data",
		       rx.frags > frags ? "with" : "without");
		/* Peeked bytes come again: rewind, return the tokens. */
		tokens_give_back(fd, held.t + kept, held.n - kept);
		held.n = kept;
		rx.off = off;
		rx.frags = frags;
		rx.linear = lin;
		rx.dmabuf = dm;
	} else if (!strcmp(name, "pause")) {
		sigset_t usr1, old;

		/* Read nothing until SIGUSR1: the queue fills meanwhile. */
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_BLOCK, &usr1, &old);
		while (!release_held)
			sigsuspend(&old);
		sigprocmask(SIG_SETMASK, &old, NULL);
		release_held = 0;
		printf("probe pause: resumed\n");
	} else if (!strcmp(name, "splice")) {
		int p[2];

		if (pipe(p))
			die("pipe: %s", strerror(errno));
		n = splice(fd, NULL, p[1], NULL, sizeof(buf), SPLICE_F_NONBLOCK);
		printf("probe splice: %s\n", n < 0 ? err_name(errno) :
		       n ? "data" : "0 bytes");
		close(p[0]);
		close(p[1]);
	} else if (!strcmp(name, "zerocopy")) {
		struct tcp_zerocopy_receive zc = {};
		socklen_t len = sizeof(zc);
		void *addr;

		addr = mmap(NULL, 1 << 20, PROT_READ, MAP_SHARED, fd, 0);
		if (addr == MAP_FAILED)
			die("mmap of the socket: %s", strerror(errno));
		zc.address = (uintptr_t)addr;
		zc.length = 1 << 20;
		ret = getsockopt(fd, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &zc,
				 &len);
		printf("probe zerocopy: %s, %u bytes mapped\n",
		       ret ? err_name(errno) : "ok", zc.length);
		munmap(addr, 1 << 20);
	} else if (!strcmp(name, "fionread")) {
		int q = 0;

		if (ioctl(fd, FIONREAD, &q))
			die("FIONREAD: %s", strerror(errno));
		printf("probe fionread: %s\n", q > 0 ? "positive" : "zero");
	} else if (!strncmp(name, "ctrl", 4)) {
		size_t len = strtoul(name + 4, NULL, 10);
		uint64_t cmsgs = rx.cmsgs;

		n = recv_devmem(fd, len, MSG_DONTWAIT);
		if (n < 0)
			printf("probe %s: %s\n", name, err_name(errno));
		else
			printf("probe %s: data, %" PRIu64 " cmsg\n", name,
			       rx.cmsgs - cmsgs);
	} else if (!strcmp(name, "ranges129") || !strcmp(name, "badlen")) {
		struct dmabuf_token t[129] = {};

		ret = setsockopt(fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, t,
				 name[0] == 'r' ? sizeof(t) : 12);
		printf("probe %s: %s\n", name,
		       ret < 0 ? err_name(errno) : "accepted");
	} else if (!strcmp(name, "foreign")) {
		int other = socket(AF_INET6, SOCK_STREAM, 0);
		struct dmabuf_token t;

		hold_at_least(fd, 1);
		t.token_start = held.t[0];
		t.token_count = held.n;
		ret = setsockopt(other, SOL_SOCKET, SO_DEVMEM_DONTNEED, &t,
				 sizeof(t));
		printf("probe foreign: %s %d\n",
		       ret < 0 ? err_name(errno) : "freed", ret < 0 ? 0 : ret);
		close(other);
	} else if (!strcmp(name, "huge")) {
		struct dmabuf_token t = { .token_count = UINT32_MAX };
		size_t i, kept = 0, window = 0;
		double t0;

		hold_at_least(fd, TOKENS_MAX_FRAGS + 1);
		t.token_start = held.t[0];
		for (i = 1; i < held.n; i++)
			if (held.t[i] < t.token_start)
				t.token_start = held.t[i];
		t0 = now_ms();
		ret = setsockopt(fd, SOL_SOCKET, SO_DEVMEM_DONTNEED, &t,
				 sizeof(t));
		t0 = now_ms() - t0;
		if (ret < 0)
			die("DONTNEED of a huge range: %s", strerror(errno));
		/* Tokens [start, start + 1024) were looked at: forget them. */
		for (i = 0; i < held.n; i++) {
			if (held.t[i] - t.token_start < TOKENS_MAX_FRAGS)
				window++;
			else
				held.t[kept++] = held.t[i];
		}
		held.n = kept;
		printf("probe huge: freed %d, %s the held tokens in the first 1024, %s\n",
		       ret, (size_t)ret == window ? "all" : "not all",
		       t0 < 1000 ? "under a second" : "slow");
	} else {
		die("unknown probe '%s'", name);
	}
	fflush(stdout);
}

static void run_probes(int fd, const char *list)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char *copy = strdup(list), *name, *save = NULL;

	if (!copy)
		die("out of memory");
	for (name = strtok_r(copy, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		/* Every probe looks at queued data. */
		if (poll(&pfd, 1, 60000) != 1)
			die("no data within 60 s for probe %s", name);
		/* Tokens a probe took stay held until the list is done. */
		probe(fd, name);
	}
	tokens_return(&held, fd);
	free(copy);
}

static void on_usr1(int sig)
{
	(void)sig;
	release_held = 1;
}

static void receive_devmem(int fd, const struct opts *o)
{
	ssize_t n;

	for (;;) {
		if (o->hold && release_held == 1) {
			printf("released %zu tokens after %" PRIu64 " bytes\n",
			       held.n, rx.off);
			fflush(stdout);
			release_held = 2;
			/* now: no data comes until buffers do */
			tokens_return(&held, fd);
		}
		n = recv_devmem(fd, CTRL_LEN, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("recvmsg: %s", strerror(errno));
		/* once released (above), tokens go back a batch at a time */
		if ((!o->hold || release_held == 2) && held.n &&
		    (held.n >= o->batch || !n)) {
			batches++;
			tokens_return(&held, fd);
		}
		if (!n)
			break;
		if (rx.off > o->bytes)
			die("peer sent more than %" PRIu64 " bytes", o->bytes);
	}
}

static void receive_plain(int fd, const struct opts *o)
{
	static uint8_t buf[IOV_LEN];
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("recv: %s", strerror(errno));
		if (!n)
			break;
		dm_rx_check(&rx, buf, n, "recv");
		if (rx.off > o->bytes)
			die("peer sent more than %" PRIu64 " bytes", o->bytes);
	}
}

static int listen_on(const struct opts *o)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV,
	};
	struct addrinfo *ai;
	int fd, one = 1, zero = 0, err;

	err = getaddrinfo(o->addr, o->port, &hints, &ai);
	if (err)
		die("%s port %s: %s", o->addr, o->port, gai_strerror(err));
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	/* the accepted socket inherits it */
	if (o->rcvbuf &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &o->rcvbuf, sizeof(o->rcvbuf)))
		die("SO_RCVBUF: %s", strerror(errno));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1))
		die("listen on %s port %s: %s", o->addr, o->port,
		    strerror(errno));
	freeaddrinfo(ai);
	return fd;
}

/* The process's CPU time in ns; its voluntary context switches (it
 * slept, to be woken) in @sw, its involuntary ones in @pre.
 */
static uint64_t cpu_ns(uint64_t *sw, uint64_t *pre)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*sw = ru.ru_nvcsw;
	*pre = ru.ru_nivcsw;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "bind", 1, NULL, 'b' }, { "port", 1, NULL, 'p' },
		{ "bytes", 1, NULL, 'n' }, { "seed", 1, NULL, 'S' },
		{ "dmabuf-fd", 1, NULL, 'd' }, { "dmabuf-id", 1, NULL, 'i' },
		{ "ready", 1, NULL, 'r' }, { "hold", 0, NULL, 'H' },
		{ "probe", 1, NULL, 'P' }, { "plain", 0, NULL, 'L' },
		{ "cpu", 0, NULL, 'C' }, { "quiet", 0, NULL, 'q' },
		{ "rcvbuf", 1, NULL, 'R' }, { "no-check", 0, NULL, 'N' },
		{ "rcvlowat", 1, NULL, 'W' }, { "batch", 1, NULL, 'B' },
		{ "help", 0, NULL, 'h' }, {}
	};
	struct opts o = { .addr = "::", .seed = 1, .dmabuf_fd = -1, .batch = 1 };
	const char *env;
	uint64_t cpu0, sw0, sw1, pre0, pre1;
	int c, lfd, fd;
	bool have_bytes = false;

	env = getenv("DEVMEM_DMABUF_FD");
	if (env)
		o.dmabuf_fd = size_arg(env);
	env = getenv("DEVMEM_DMABUF_ID");
	if (env)
		o.dmabuf_id = size_arg(env);
	while ((c = getopt_long(argc, argv, "b:p:n:S:d:i:r:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'b': o.addr = optarg; break;
		case 'p': o.port = optarg; break;
		case 'n': o.bytes = size_arg(optarg); have_bytes = true; break;
		case 'S': o.seed = size_arg(optarg); break;
		case 'd': o.dmabuf_fd = size_arg(optarg); break;
		case 'i': o.dmabuf_id = size_arg(optarg); break;
		case 'r': o.ready = optarg; break;
		case 'H': o.hold = true; break;
		case 'P': o.probes = optarg; break;
		case 'L': o.plain = true; break;
		case 'C': o.cpu = true; break;
		case 'N': rx.nocheck = true; break;
		case 'R': o.rcvbuf = size_arg(optarg); break;
		case 'W':
			o.rcvlowat = parse_count(optarg, "--rcvlowat", INT_MAX,
						 "bytes");
			break;
		case 'B':
			o.batch = parse_count(optarg, "--batch",
					      TOKENS_MAX_FRAGS, "tokens");
			break;
		case 'q': o.quiet = true; break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc || !o.port || !have_bytes)
		usage(stderr, 2);
	if (!o.plain && o.dmabuf_fd < 0)
		die("no dma-buf: give -d FD or run under netdev-nl bind-rx --run");
	rx.base = o.seed * PATTERN_GOLDEN;

	if (!o.plain) {
		rx.fd = o.dmabuf_fd;
		rx.id = o.dmabuf_id;
		dm_rx_map(&rx);
	}
	/* No SA_RESTART: SIGUSR1 interrupts a blocked recvmsg. */
	sigaction(SIGUSR1, &(struct sigaction){ .sa_handler = on_usr1 }, NULL);

	lfd = listen_on(&o);
	ready_file(o.ready);
	fd = accept_only(lfd);

	if (o.rcvlowat &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &o.rcvlowat,
		       sizeof(o.rcvlowat)))
		die("SO_RCVLOWAT: %s", strerror(errno));
	cpu0 = cpu_ns(&sw0, &pre0);
	if (o.plain) {
		receive_plain(fd, &o);
	} else {
		if (o.probes)
			run_probes(fd, o.probes);
		receive_devmem(fd, &o);
	}
	if (rx.off != o.bytes)
		die("received %" PRIu64 " bytes, expected %" PRIu64,
		    rx.off, o.bytes);
	if (!o.quiet && o.plain)
		printf("received %" PRIu64 " bytes\n", rx.off);
	else if (!o.quiet)
		printf("received %" PRIu64 " bytes: linear %" PRIu64
		       ", dmabuf %" PRIu64 " in %" PRIu64 " frags\n",
		       rx.off, rx.linear, rx.dmabuf, rx.frags);
	if (o.cpu) {
		cpu0 = cpu_ns(&sw1, &pre1) - cpu0;
		printf("cpu %" PRIu64 " ns for %" PRIu64 " bytes, %" PRIu64
		       " wakeups, %" PRIu64 " preemptions", cpu0, rx.off,
		       sw1 - sw0, pre1 - pre0);
		if (!o.plain)
			printf(", %" PRIu64 " token batches", batches);
		putchar('\n');
	}
	close(fd);
	return 0;
}
