// SPDX-License-Identifier: GPL-2.0
/*
 * devmem-tx-cpu: connect to a TCP receiver and send it BYTES bytes in one
 * of three ways, reporting the sending process's CPU time (user + system,
 * getrusage(RUSAGE_SELF)) for the transfer. For bench/devmem-tx-cpu/run.
 *
 *   send      plain send() of CALL bytes at a time from a host buffer
 *   zerocopy  sendmsg(MSG_ZEROCOPY) of CALL bytes at a time from a host
 *             buffer (SO_ZEROCOPY on), completions read from the error
 *             queue (recvmsg(MSG_ERRQUEUE))
 *   devmem    devmem_send() of one CALL-byte span at a time from a udmabuf
 *             bound for sending to the route's device (libdevmem: bind-tx,
 *             sendmsg(MSG_ZEROCOPY) with SCM_DEVMEM_DMABUF), completions
 *             through devmem_sender_reap()
 *
 * In every mode the buffer is a ring of RING bytes (default 16 MiB), cut
 * in CALL-byte chunks (default 64 KiB), sent in order and over again; it
 * is written once, before the clock starts. The two zerocopy modes reuse a
 * chunk only once every byte sent from it is reported complete, and reap
 * the same way: only when the next chunk is still in flight (or a send
 * says ENOBUFS), then everything reported by then; at the end they wait
 * for every report. The clock (getrusage) runs from the first send to the
 * last byte sent (send) or the last completion reaped (zerocopy, devmem);
 * the set-up (buffer, udmabuf, bind-tx, connect) and the teardown are
 * outside it. Then the sender shuts its side down and waits for the
 * receiver to close.
 *
 * Prints one line:
 *   cpu NS ns for B bytes: U ns user, S ns sys, N calls, R reaps, W waits,
 *   C copied, E enobufs, V sleeps, P preemptions
 * (reaps: recvmsg(MSG_ERRQUEUE) reports (zerocopy) or devmem_sender_reap()
 * calls that returned spans (devmem); waits: reaps for a chunk still in
 * flight, which block until a report comes if none is queued;
 * copied: reports with SO_EE_CODE_ZEROCOPY_COPIED, i.e. the kernel copied
 * after all; enobufs: sends refused with ENOBUFS and retried after a reap;
 * sleeps and preemptions: the process's voluntary and involuntary context
 * switches while the clock ran).
 * Exit status: 0 success, 1 failure, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/errqueue.h>
#include <netinet/in.h>

#include <devmem.h>

#define PROG		"devmem-tx-cpu"
#include "../../selftests/progs/lib/die.h"
#include "../../selftests/progs/lib/size.h"
#include "../../selftests/progs/lib/pattern.h"

#ifndef SO_EE_CODE_ZEROCOPY_COPIED
#define SO_EE_CODE_ZEROCOPY_COPIED	1
#endif

#define STALL_MS	20000
#define CONNECT_S	10
#define DONE_MAX	1024

enum mode { M_SEND, M_ZEROCOPY, M_DEVMEM };

struct opts {
	enum mode mode;
	const char *addr, *port, *ifname;
	uint64_t bytes;
	size_t call, ring;
	int sndbuf;
};

struct tx {
	const struct opts *o;
	int fd;
	uint8_t *buf;			/* the host buffer (send, zerocopy) */
	size_t chunks;
	uint64_t *left;			/* bytes of each chunk in flight */
	/* zerocopy: one record per send id, head_id.. in order */
	uint32_t head_id, next_id;
	struct { uint32_t chunk, bytes; bool done; } *rec;
	size_t nr_rec, cap_rec;		/* a ring of cap_rec records */
	size_t rec_head;		/* ring index of head_id */
	uint64_t pending;		/* bytes sent, not reported complete */
	/* devmem */
	struct devmem_sender *s;
	struct devmem_span done[DONE_MAX];
	uint64_t calls, reaps, waits, copied, enobufs;
};

static void usage(FILE *f, int status)
{
	fprintf(f,
"usage: " PROG " -m send|zerocopy|devmem -a ADDR -p PORT -n BYTES [options]\n"
"\n"
"  -m, --mode MODE      send, zerocopy or devmem (see the source's head)\n"
"  -a, --addr ADDR      the receiver's address\n"
"  -p, --port PORT      its port (connect is retried while refused, 10 s)\n"
"  -n, --bytes N        bytes to send (K, M, G suffixes)\n"
"  -c, --call N         bytes per send call (default 64K)\n"
"  -B, --ring N         the buffer's size (default 16M; a multiple of the\n"
"                       call size, and for devmem of the page size)\n"
"  -i, --ifname DEV     devmem: the device to bind for sending (the one\n"
"                       the route to ADDR leaves through)\n"
"      --sndbuf N       SO_SNDBUF N (default: the kernel's autotuning)\n"
"  -h, --help           this text\n");
	exit(status);
}

struct cpu {
	uint64_t user, sys;	/* ns */
	uint64_t sleeps, preempted;
};

static void cpu_now(struct cpu *c)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	c->user = ru.ru_utime.tv_sec * 1000000000ULL + ru.ru_utime.tv_usec * 1000ULL;
	c->sys = ru.ru_stime.tv_sec * 1000000000ULL + ru.ru_stime.tv_usec * 1000ULL;
	c->sleeps = ru.ru_nvcsw;
	c->preempted = ru.ru_nivcsw;
}

static int tcp_connect(const struct opts *o)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
	};
	struct timespec pause = { .tv_nsec = 50000000 };
	struct addrinfo *ai;
	int fd, tries, err;

	err = getaddrinfo(o->addr, o->port, &hints, &ai);
	if (err)
		die("%s port %s: %s", o->addr, o->port, gai_strerror(err));
	for (tries = 0; tries < CONNECT_S * 20; tries++) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			die("socket: %s", strerror(errno));
		if (o->sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUF,
					    &o->sndbuf, sizeof(o->sndbuf)))
			die("SO_SNDBUF: %s", strerror(errno));
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			freeaddrinfo(ai);
			return fd;
		}
		err = errno;
		close(fd);
		if (err != ECONNREFUSED)
			break;
		nanosleep(&pause, NULL);
	}
	die("connect to %s port %s: %s", o->addr, o->port, strerror(err));
}

/* zerocopy: ids @lo..@hi (inclusive, wrapping) completed. */
static void zc_complete(struct tx *t, uint32_t lo, uint32_t hi, bool copied)
{
	uint32_t n = hi - lo + 1, i, k;
	size_t r;

	t->copied += copied;
	for (i = 0; i < n; i++) {
		k = lo + i - t->head_id;
		if (k >= t->nr_rec || t->rec[(t->rec_head + k) % t->cap_rec].done)
			die("a completion report for send %u, which is not awaiting one",
			    lo + i);
		r = (t->rec_head + k) % t->cap_rec;
		t->rec[r].done = true;
		t->left[t->rec[r].chunk] -= t->rec[r].bytes;
		t->pending -= t->rec[r].bytes;
	}
	while (t->nr_rec && t->rec[t->rec_head].done) {
		t->rec_head = (t->rec_head + 1) % t->cap_rec;
		t->head_id++;
		t->nr_rec--;
	}
}

/* zerocopy: read every report queued now; false when there was none. */
static bool zc_drain(struct tx *t)
{
	char control[256];
	struct msghdr msg;
	struct cmsghdr *cm;
	struct sock_extended_err *ee;
	bool any = false;

	for (;;) {
		memset(&msg, 0, sizeof(msg));
		msg.msg_control = control;
		msg.msg_controllen = sizeof(control);
		if (recvmsg(t->fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN)
				return any;
			die("recvmsg(MSG_ERRQUEUE): %s", strerror(errno));
		}
		ee = NULL;
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
			if ((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
			    (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR))
				ee = (struct sock_extended_err *)CMSG_DATA(cm);
		if (!ee || ee->ee_origin != SO_EE_ORIGIN_ZEROCOPY || ee->ee_errno)
			die("a message on the error queue that is no zerocopy completion");
		t->reaps++;
		zc_complete(t, ee->ee_info, ee->ee_data,
			    ee->ee_code & SO_EE_CODE_ZEROCOPY_COPIED);
		any = true;
	}
}

/* Reap what is reported now; with @wait, block until something is. */
static void reap(struct tx *t, bool wait)
{
	struct pollfd pfd = { .fd = t->fd };
	ssize_t n, i;
	int ret;

	t->waits += wait;
	if (t->o->mode == M_DEVMEM) {
		n = devmem_sender_reap(t->s, t->done, DONE_MAX,
				       wait ? STALL_MS : 0);
		if (n < 0)
			die("devmem_sender_reap: %s", devmem_last_error());
		if (wait && !n)
			die("stalled: no completion for %d s, %" PRIu64
			    " bytes pending", STALL_MS / 1000,
			    devmem_sender_pending(t->s));
		if (n)
			t->reaps++;
		for (i = 0; i < n; i++)
			t->left[t->done[i].offset / t->o->call] -= t->done[i].len;
		return;
	}
	if (zc_drain(t) || !wait)
		return;
	do {
		ret = poll(&pfd, 1, STALL_MS);
		if (ret < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (!ret)
			die("stalled: no completion for %d s, %" PRIu64
			    " bytes pending", STALL_MS / 1000, t->pending);
	} while (!zc_drain(t));
}

/* One send call of @len bytes at @off of the buffer: the bytes queued. */
static size_t send_once(struct tx *t, size_t off, size_t len)
{
	struct devmem_span span = { off, len };
	struct iovec iov = { t->buf + off, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;
	size_t r;

	for (;;) {
		t->calls++;
		switch (t->o->mode) {
		case M_SEND:
			n = send(t->fd, t->buf + off, len, MSG_NOSIGNAL);
			if (n < 0)
				n = -errno;
			break;
		case M_ZEROCOPY:
			n = sendmsg(t->fd, &msg, MSG_ZEROCOPY | MSG_NOSIGNAL);
			if (n < 0)
				n = -errno;
			break;
		default:
			n = devmem_send(t->s, &span, 1, MSG_NOSIGNAL);
			break;
		}
		if (n > 0)
			break;
		if (n == -ENOBUFS && t->o->mode != M_SEND) {
			/* too many completions outstanding */
			t->enobufs++;
			reap(t, true);
			continue;
		}
		if (n == -EINTR)
			continue;
		die("send of %zu bytes (%s): %s", len,
		    t->o->mode == M_DEVMEM ? "devmem_send" : "send",
		    n ? (t->o->mode == M_DEVMEM ? devmem_last_error() :
			 strerror(-n)) : "nothing sent");
	}
	if (t->o->mode == M_ZEROCOPY) {
		if (t->nr_rec == t->cap_rec)
			die("%zu sends await their completion", t->nr_rec);
		r = (t->rec_head + t->nr_rec++) % t->cap_rec;
		t->rec[r].chunk = off / t->o->call;
		t->rec[r].bytes = n;
		t->rec[r].done = false;
		t->next_id++;
		t->pending += n;
	}
	return n;
}

static void stream(struct tx *t)
{
	const struct opts *o = t->o;
	uint64_t sent = 0;
	size_t c = 0, len, done;

	while (sent < o->bytes) {
		len = o->bytes - sent < o->call ? o->bytes - sent : o->call;
		if (o->mode != M_SEND) {
			while (t->left[c])
				reap(t, true);
			t->left[c] = len;
		}
		for (done = 0; done < len; )
			done += send_once(t, c * o->call + done, len - done);
		sent += len;
		c = (c + 1) % t->chunks;
	}
	if (o->mode == M_DEVMEM)
		while (devmem_sender_pending(t->s))
			reap(t, true);
	else if (o->mode == M_ZEROCOPY)
		while (t->pending)
			reap(t, true);
}

/* The receiver has everything: it closes once we shut our side. */
static void finish(int fd)
{
	char c;
	ssize_t n;

	if (shutdown(fd, SHUT_WR))
		die("shutdown: %s", strerror(errno));
	n = read(fd, &c, 1);
	if (n)
		die("the receiver did not close: %s",
		    n < 0 ? strerror(errno) : "it sent data");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mode", 1, NULL, 'm' }, { "addr", 1, NULL, 'a' },
		{ "port", 1, NULL, 'p' }, { "bytes", 1, NULL, 'n' },
		{ "call", 1, NULL, 'c' }, { "ring", 1, NULL, 'B' },
		{ "ifname", 1, NULL, 'i' }, { "sndbuf", 1, NULL, 'S' },
		{ "help", 0, NULL, 'h' }, {}
	};
	struct opts o = { .mode = -1, .call = 64 << 10, .ring = 16 << 20 };
	struct devmem_dmabuf *db = NULL;
	struct devmem_binding *b = NULL;
	static struct tx t;
	struct cpu c0, c1;
	int c, err, one = 1, ifindex;
	void *map;

	while ((c = getopt_long(argc, argv, "m:a:p:n:c:B:i:h", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "send"))
				o.mode = M_SEND;
			else if (!strcmp(optarg, "zerocopy"))
				o.mode = M_ZEROCOPY;
			else if (!strcmp(optarg, "devmem"))
				o.mode = M_DEVMEM;
			else
				usage(stderr, 2);
			break;
		case 'a': o.addr = optarg; break;
		case 'p': o.port = optarg; break;
		case 'n': o.bytes = size_arg(optarg); break;
		case 'c': o.call = size_arg(optarg); break;
		case 'B': o.ring = size_arg(optarg); break;
		case 'i': o.ifname = optarg; break;
		case 'S': o.sndbuf = size_arg(optarg); break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc || (int)o.mode < 0 || !o.addr || !o.port ||
	    !o.bytes || !o.call || o.call > (1U << 30) || o.ring < o.call ||
	    o.ring % o.call || (o.mode == M_DEVMEM && !o.ifname))
		usage(stderr, 2);
	setvbuf(stdout, NULL, _IOLBF, 0);
	t.o = &o;
	t.chunks = o.ring / o.call;
	t.left = calloc(t.chunks, sizeof(*t.left));
	t.cap_rec = 2 * t.chunks + 64;
	t.rec = calloc(t.cap_rec, sizeof(*t.rec));
	if (!t.left || !t.rec)
		die("out of memory");

	if (o.mode == M_DEVMEM) {
		if (o.ring % getpagesize())
			die("the ring (%zu bytes) is no whole number of pages",
			    o.ring);
		ifindex = devmem_ifindex(o.ifname);
		if (ifindex <= 0)
			die("%s: %s", o.ifname, devmem_last_error());
		err = devmem_dmabuf_new_udmabuf(&db, o.ring);
		if (err)
			die("udmabuf of %zu bytes: %s", o.ring,
			    devmem_last_error());
		/* written once, through the udmabuf's own mapping */
		map = mmap(NULL, o.ring, PROT_READ | PROT_WRITE, MAP_SHARED,
			   devmem_dmabuf_fd(db), 0);
		if (map == MAP_FAILED)
			die("mmap of the udmabuf: %s", strerror(errno));
		pattern_fill(PATTERN_GOLDEN, 0, map, o.ring);
		munmap(map, o.ring);
		err = devmem_binding_new_tx(&b, ifindex, devmem_dmabuf_fd(db));
		if (err)
			die("bind-tx on %s: %s", o.ifname, devmem_last_error());
	} else {
		t.buf = mmap(NULL, o.ring, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (t.buf == MAP_FAILED)
			die("mmap of %zu bytes: %s", o.ring, strerror(errno));
		pattern_fill(PATTERN_GOLDEN, 0, t.buf, o.ring);
	}

	t.fd = tcp_connect(&o);
	if (o.mode == M_ZEROCOPY &&
	    setsockopt(t.fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)))
		die("SO_ZEROCOPY: %s", strerror(errno));
	if (o.mode == M_DEVMEM && devmem_sender_new(&t.s, t.fd, b))
		die("devmem_sender_new: %s", devmem_last_error());

	cpu_now(&c0);
	stream(&t);
	cpu_now(&c1);

	finish(t.fd);
	printf("cpu %" PRIu64 " ns for %" PRIu64 " bytes: %" PRIu64
	       " ns user, %" PRIu64 " ns sys, %" PRIu64 " calls, %" PRIu64
	       " reaps, %" PRIu64 " waits, %" PRIu64 " copied, %" PRIu64
	       " enobufs, %" PRIu64 " sleeps, %" PRIu64 " preemptions\n",
	       c1.user - c0.user + c1.sys - c0.sys, o.bytes, c1.user - c0.user,
	       c1.sys - c0.sys, t.calls, t.reaps, t.waits, t.copied, t.enobufs,
	       c1.sleeps - c0.sleeps, c1.preempted - c0.preempted);
	devmem_sender_free(t.s);
	close(t.fd);
	devmem_binding_free(b);
	devmem_dmabuf_free(db);
	return 0;
}
