// SPDX-License-Identifier: GPL-2.0
/*
 * devmem-tx: the send side of device-memory TCP from the command line, one
 * kernel answer per output line, for the tests to compare exactly.
 *
 *   devmem-tx bind-tx IFINDEX [--no-ifindex | --no-fd | --fd-file PATH |
 *                              --fd-closed] [--size SIZE] [--hold]
 *                              [--repeat N] [--cgroup DIR]
 *
 * binds a udmabuf of SIZE (default 1M) for sending through IFINDEX
 * (netdev bind-tx) and prints "bind-tx id=N", or the refusal as
 * "ERRNO: extack message (missing attribute N)" and exits 1. --no-ifindex
 * and --no-fd leave that attribute out; --fd-file passes an fd of PATH,
 * --fd-closed an fd number that is not open, instead of the udmabuf.
 * --repeat binds the same udmabuf N times, each on a netlink socket of
 * its own, a line each, stopping at the first refusal. --cgroup moves the
 * process into cgroup directory DIR once the udmabuf exists, before it
 * binds. --hold keeps the bindings (their netlink sockets) until standard
 * input ends.
 *
 *   devmem-tx send [-6] [--udp] [--unconnected] [--nagle] [--tfo]
 *                  [--mss N] [--dev IFINDEX] [--other IFINDEX]
 *                  [--size SIZE] ADDR PORT STEP...
 *
 * makes a udmabuf of SIZE whose byte at offset I is 'a' + I % 26, binds
 * it for sending through --dev (the socket's own binding) and through
 * --other (another device's binding), connects to ADDR:PORT over TCP (UDP
 * with --udp; no connect with --unconnected; with --tfo,
 * TCP_FASTOPEN_CONNECT first, so that connect() waits for the first send),
 * sets TCP_NODELAY (unless --nagle), TCP_MAXSEG N (--mss, before it
 * connects) and SO_ZEROCOPY and runs
 * the STEPs in order:
 *
 *   OFF+LEN[/OFF+LEN...][,MOD...]
 *           one sendmsg(MSG_ZEROCOPY) whose iovecs are these ranges of the
 *           dma-buf, naming the own binding in an SCM_DEVMEM_DMABUF cmsg;
 *           prints "STEP RESULT", RESULT being the byte count returned or
 *           the errno's name. MODs: id=N (that binding id), id=unknown (an
 *           id no binding has), id=other (--other's binding), id=rx (the
 *           rx binding in $DEVMEM_DMABUF_ID, as netdev-nl bind-rx --run
 *           passes it), noflag (no MSG_ZEROCOPY), cmsglen=N (a cmsg
 *           payload of N bytes), fastopen (MSG_FASTOPEN, to ADDR PORT),
 *           nowait (no wait for acknowledgements first). Before a TCP send, waits (20 s at most)
 *           until everything sent so far is acknowledged, so that each
 *           send starts a new segment.
 *   stream=BYTES:CALL
 *           BYTES bytes in sendmsg(MSG_ZEROCOPY) calls of CALL bytes each,
 *           back to back (no wait for acknowledgements), from consecutive
 *           offsets of the dma-buf, so that byte I of the stream is
 *           'a' + I % 26 (the offsets wrap at the last multiple of 26
 *           within the dma-buf, a call across the wrap taking two
 *           iovecs). Completions are drained from the error queue as the
 *           sends go; ENOBUFS waits for them and retries. Prints
 *           "STEP BYTES" once all are sent, or the first error's name.
 *   meminfo waits until everything sent is acknowledged, every completion
 *           has arrived and the socket's send memory is back to zero (20 s
 *           at most), then prints "meminfo wmem_alloc=A wmem_queued=Q"
 *           (SO_MEMINFO), the values it got.
 *   zc=0, zc=1
 *           SO_ZEROCOPY off or on.
 *   tos=N   IP_TOS (IPV6_TCLASS with -6) N; mark=N: SO_MARK N;
 *           dontroute=N: SO_DONTROUTE N (each resets the socket's route)
 *   repair=N
 *           TCP_REPAIR N; with 1 also TCP_REPAIR_QUEUE TCP_RECV_QUEUE
 *   md5     a TCP_MD5SIG key for ADDR
 *   tstamp  SO_TIMESTAMPING: software timestamps when a send is queued
 *           for the device and when it is acknowledged, with OPT_ID (not
 *           OPT_TSONLY); set once everything sent is acknowledged, since
 *           OPT_ID numbers the bytes from the first unacknowledged one
 *   tstamps waits (5 s at most) for the acknowledgement's timestamp and
 *           prints a line per timestamp report on the error queue:
 *           "tstamp TYPE key=KEY payload=BYTES", TYPE sched or ack,
 *           BYTES what the report carried of the packet; "tstamp none"
 *           if none came
 *   unbind  close the own binding's netlink socket.
 *   fuzz=SEED:ITERATIONS[:MAXLEN]
 *           the send fuzzer (fuzz.c: what it draws, the results it
 *           allows, what it prints); needs --dev.
 *
 * At the end it waits until everything sent is acknowledged and closes
 * the socket. Exit status: 0 when every step ran (refused sends too),
 * 1 on another failure, 2 on a usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/netdev.h>

#define PROG		"devmem-tx"

#include "../lib/die.h"
#include "../lib/genl.h"
#include "../lib/size.h"
#include "../lib/udmabuf.h"
#include "devmem-tx.h"

#define MAX_IOV		64

static void usage(void)
{
	fprintf(stderr,
"usage: " PROG " bind-tx IFINDEX [--no-ifindex|--no-fd|--fd-file PATH|--fd-closed] [--size SIZE]\n"
"                 [--hold] [--repeat N] [--cgroup DIR]\n"
"       " PROG " send [-6] [--udp] [--unconnected] [--nagle] [--tfo] [--mss N] [--dev IFINDEX]\n"
"                 [--other IFINDEX]\n"
"                 [--size SIZE] ADDR PORT STEP...\n"
"(see the comment at the top of selftests/progs/devmem-tx/devmem-tx.c)\n");
	exit(2);
}

const char *errname(int err)
{
	const char *s = strerrorname_np(err);

	return s ? s : "E?";
}

static unsigned long parse_num(const char *s)
{
	uint64_t v;

	if (parse_size(s, &v) || v > ULONG_MAX)
		usage();
	return v;
}

/* A udmabuf of @size bytes over a memfd holding the letters. */
static int udmabuf_letters(size_t size)
{
	int memfd = udmabuf_memfd(size, 0);
	char *p;
	size_t i;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (p == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	for (i = 0; i < size; i++)
		p[i] = 'a' + i % 26;
	munmap(p, size);
	return udmabuf_of(memfd, size);
}

/* --- generic netlink ----------------------------------------------------- */

/* bind-tx on a new netlink socket (in *@nlfd): the binding's id, or 0
 * with the refusal, "ERRNO: extack (missing attribute N)", in @why.
 * @ifindex or @fd < 0: left out.
 */
static uint32_t bind_tx(int *nlfd, long ifindex, long fd, char *why,
			size_t whylen)
{
	struct genl_val id = { .type = NETDEV_A_DMABUF_ID };
	const struct nlmsghdr *last;
	static struct genl_req r;
	char ext[256];
	int err;

	*nlfd = genl_open();
	genl_req_init(&r, genl_family(*nlfd, NETDEV_FAMILY_NAME),
		      NETDEV_CMD_BIND_TX, 0);
	if (ifindex >= 0)
		genl_put_u32(&r, NETDEV_A_DMABUF_IFINDEX, ifindex);
	if (fd >= 0)
		genl_put_u32(&r, NETDEV_A_DMABUF_FD, fd);
	err = genl_transact(*nlfd, &r, genl_take, &id, &last);
	if (!err)
		return id.v;
	genl_ext_ack_str(last, ext, sizeof(ext));
	snprintf(why, whylen, "%s%s", errname(-err), ext);
	return 0;
}

/* Move this process into cgroup directory @dir. */
static void join_cgroup(const char *dir)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "w");
	if (!f || fprintf(f, "0\n") < 0 || fclose(f))
		die("%s: %s", path, strerror(errno));
}

static int cmd_bind_tx(int argc, char **argv)
{
	long ifindex, fd = -2, repeat = 1, n;
	const char *cgroup = NULL;
	size_t size = 1 << 20;
	int i, nlfd, no_ifindex = 0, no_fd = 0, hold = 0;
	char why[512] = "", c;
	uint32_t id;

	if (argc < 2)
		usage();
	ifindex = parse_num(argv[1]);
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--no-ifindex")) {
			no_ifindex = 1;
		} else if (!strcmp(argv[i], "--no-fd")) {
			no_fd = 1;
		} else if (!strcmp(argv[i], "--fd-closed")) {
			fd = 1000;
			close(fd);
		} else if (!strcmp(argv[i], "--fd-file") && i + 1 < argc) {
			fd = open(argv[++i], O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				die("%s: %s", argv[i], strerror(errno));
		} else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
			size = parse_num(argv[++i]);
		} else if (!strcmp(argv[i], "--hold")) {
			hold = 1;
		} else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
			repeat = parse_num(argv[++i]);
		} else if (!strcmp(argv[i], "--cgroup") && i + 1 < argc) {
			cgroup = argv[++i];
		} else {
			usage();
		}
	}
	if (fd == -2)
		fd = udmabuf_letters(size);
	if (cgroup)
		join_cgroup(cgroup);
	for (n = 0; n < repeat; n++) {
		/* each binding keeps its own netlink socket open */
		id = bind_tx(&nlfd, no_ifindex ? -1 : ifindex,
			     no_fd ? -1 : fd, why, sizeof(why));
		if (!id) {
			printf("%s\n", why);
			fflush(stdout);
			break;
		}
		printf("bind-tx id=%u\n", id);
		fflush(stdout);
	}
	while (hold && read(0, &c, 1) > 0)
		;
	return n == repeat ? 0 : 1;
}

/* --- sending ------------------------------------------------------------- */

int sock, tcp = 1, connected = 1, v6;
size_t dmabuf_size = 1 << 20;
uint64_t zc_completed;
static struct sockaddr_storage peer;
static socklen_t peerlen;

/* sendmsg() of @iov naming binding @id in an SCM_DEVMEM_DMABUF cmsg
 * whose payload is @cmsglen bytes (the id's first bytes, zero-padded).
 */
ssize_t send_ranges(struct iovec *iov, int niov, uint32_t id,
		    size_t cmsglen, int flags)
{
	char ctrl[CMSG_SPACE(16)] __attribute__((aligned(8))) = {};
	struct msghdr msg = {};
	struct cmsghdr *cm;

	if (flags & MSG_FASTOPEN) {
		msg.msg_name = &peer;
		msg.msg_namelen = peerlen;
	}
	msg.msg_iov = iov;
	msg.msg_iovlen = niov;
	msg.msg_control = ctrl;
	msg.msg_controllen = CMSG_SPACE(cmsglen);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_DEVMEM_DMABUF;
	cm->cmsg_len = CMSG_LEN(cmsglen);
	memcpy(CMSG_DATA(cm), &id, cmsglen < sizeof(id) ? cmsglen : sizeof(id));
	return sendmsg(sock, &msg, flags | MSG_NOSIGNAL);
}

/* Read every MSG_ZEROCOPY completion queued on the socket's error queue,
 * adding the sends each one covers to zc_completed; with @wait_ms, first
 * wait that long at most for one to arrive.
 */
void drain_completions(int wait_ms)
{
	char ctrl[CMSG_SPACE(sizeof(struct sock_extended_err) + 64)]
		__attribute__((aligned(8)));
	struct pollfd p = { .fd = sock, .events = 0 };
	struct sock_extended_err *ee;
	struct cmsghdr *cm;
	struct msghdr msg;

	if (wait_ms && poll(&p, 1, wait_ms) < 0)
		die("poll: %s", strerror(errno));
	for (;;) {
		memset(&msg, 0, sizeof(msg));
		msg.msg_control = ctrl;
		msg.msg_controllen = sizeof(ctrl);
		if (recvmsg(sock, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN)
				return;
			die("recvmsg(MSG_ERRQUEUE): %s", strerror(errno));
		}
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			ee = (struct sock_extended_err *)CMSG_DATA(cm);
			if (ee->ee_origin == SO_EE_ORIGIN_ZEROCOPY)
				zc_completed += ee->ee_data - ee->ee_info + 1;
		}
	}
}

/* Wait until the peer acknowledged everything sent on the socket. */
void wait_acked(void)
{
	struct timespec nap = { 0, 5 * 1000 * 1000 };
	int outq = -1, i;

	if (!tcp || !connected)
		return;
	for (i = 0; i < 4000; i++) {
		if (ioctl(sock, SIOCOUTQ, &outq))
			die("SIOCOUTQ: %s", strerror(errno));
		if (!outq)
			return;
		nanosleep(&nap, NULL);
	}
	die("%d bytes still unacknowledged after 20 s", outq);
}

static void set_zerocopy(int on)
{
	if (setsockopt(sock, SOL_SOCKET, SO_ZEROCOPY, &on, sizeof(on)))
		die("SO_ZEROCOPY %d: %s", on, strerror(errno));
}

struct ids {
	uint32_t own, other, rx;
};

/* One send step (see the top); prints "STEP RESULT". */
static void send_step(const char *step, const struct ids *ids)
{
	char *copy = strdup(step), *ranges, *mod, *save = NULL;
	struct iovec iov[MAX_IOV];
	int niov = 0, flags = MSG_ZEROCOPY, nowait = 0;
	size_t cmsglen = sizeof(uint32_t);
	uint32_t id = ids->own;
	ssize_t n;
	char *r;

	ranges = strtok_r(copy, ",", &save);
	while ((mod = strtok_r(NULL, ",", &save))) {
		if (!strcmp(mod, "id=unknown")) {
			id = UNKNOWN_ID;
		} else if (!strcmp(mod, "id=other")) {
			if (!ids->other)
				die("%s: no --other binding", step);
			id = ids->other;
		} else if (!strcmp(mod, "id=rx")) {
			if (!ids->rx)
				die("%s: no DEVMEM_DMABUF_ID", step);
			id = ids->rx;
		} else if (!strncmp(mod, "id=", 3)) {
			id = parse_num(mod + 3);
		} else if (!strcmp(mod, "noflag")) {
			flags = 0;
		} else if (!strcmp(mod, "fastopen")) {
			flags |= MSG_FASTOPEN;
		} else if (!strcmp(mod, "nowait")) {
			nowait = 1;
		} else if (!strncmp(mod, "cmsglen=", 8)) {
			cmsglen = parse_num(mod + 8);
			if (cmsglen > 16)
				usage();
		} else {
			die("%s: unknown modifier '%s'", step, mod);
		}
	}
	for (r = strtok_r(ranges, "/", &save); r; r = strtok_r(NULL, "/", &save)) {
		char *plus = strchr(r, '+');

		if (!plus || niov == MAX_IOV)
			die("bad step '%s'", step);
		*plus = 0;
		iov[niov].iov_base = (void *)parse_num(r);
		iov[niov].iov_len = parse_num(plus + 1);
		niov++;
	}

	if (!nowait)
		wait_acked();
	n = send_ranges(iov, niov, id, cmsglen, flags);
	if (n < 0)
		printf("%s %s\n", step, errname(errno));
	else
		printf("%s %zd\n", step, n);
	fflush(stdout);
	free(copy);
}


void set_int(int level, int name, const char *what, int v)
{
	if (setsockopt(sock, level, name, &v, sizeof(v)))
		die("%s %d: %s", what, v, strerror(errno));
}

/* The steps that set socket options (see the top); 0 if @step is not
 * one of them.
 */
static int option_step(const char *step)
{
	struct tcp_md5sig md5 = { .tcpm_keylen = 6 };

	if (!strncmp(step, "tos=", 4)) {
		if (v6)
			set_int(IPPROTO_IPV6, IPV6_TCLASS, "IPV6_TCLASS",
				parse_num(step + 4));
		else
			set_int(IPPROTO_IP, IP_TOS, "IP_TOS", parse_num(step + 4));
	} else if (!strncmp(step, "mark=", 5)) {
		set_int(SOL_SOCKET, SO_MARK, "SO_MARK", parse_num(step + 5));
	} else if (!strncmp(step, "dontroute=", 10)) {
		set_int(SOL_SOCKET, SO_DONTROUTE, "SO_DONTROUTE",
			parse_num(step + 10));
	} else if (!strncmp(step, "repair=", 7)) {
		set_int(IPPROTO_TCP, TCP_REPAIR, "TCP_REPAIR",
			parse_num(step + 7));
		if (parse_num(step + 7))
			set_int(IPPROTO_TCP, TCP_REPAIR_QUEUE,
				"TCP_REPAIR_QUEUE", TCP_RECV_QUEUE);
	} else if (!strcmp(step, "tstamp")) {
		wait_acked();
		set_int(SOL_SOCKET, SO_TIMESTAMPING, "SO_TIMESTAMPING",
			SOF_TIMESTAMPING_TX_SCHED | SOF_TIMESTAMPING_TX_ACK |
			SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_ID);
	} else if (!strcmp(step, "md5")) {
		memcpy(&md5.tcpm_addr, &peer, peerlen);
		memcpy(md5.tcpm_key, "secret", 6);
		if (setsockopt(sock, IPPROTO_TCP, TCP_MD5SIG, &md5, sizeof(md5)))
			die("TCP_MD5SIG: %s", strerror(errno));
	} else {
		return 0;
	}
	return 1;
}

/* stream=BYTES:CALL (see the top); the stream goes on where the last
 * one stopped.
 */
static void stream_step(const char *step, uint32_t id)
{
	static uint64_t pos;
	size_t wrap = dmabuf_size / 26 * 26, bytes, call, left;
	const char *colon = strchr(step, ':');
	struct iovec iov[2];
	char num[32];
	ssize_t n;

	if (!colon || (size_t)(colon - step) - 7 >= sizeof(num) || !wrap)
		die("bad step '%s'", step);
	memcpy(num, step + 7, colon - step - 7);
	num[colon - step - 7] = 0;
	bytes = parse_num(num);
	call = parse_num(colon + 1);
	if (!call)
		die("bad step '%s'", step);
	for (left = bytes; left; ) {
		size_t at = pos % wrap, len = left < call ? left : call;
		int niov = 1;

		iov[0].iov_base = (void *)at;
		iov[0].iov_len = len;
		if (len > wrap - at) {
			iov[0].iov_len = wrap - at;
			iov[1].iov_base = 0;
			iov[1].iov_len = len - (wrap - at);
			niov = 2;
		}
		n = send_ranges(iov, niov, id, sizeof(id), MSG_ZEROCOPY);
		if (n < 0 && errno == ENOBUFS) {
			/* completions hold the socket's option memory */
			drain_completions(100);
			continue;
		}
		if (n < 0) {
			printf("%s %s\n", step, errname(errno));
			fflush(stdout);
			return;
		}
		pos += n;
		left -= n;
		drain_completions(0);
	}
	printf("%s %zu\n", step, bytes);
	fflush(stdout);
}

/* tstamps (see the top). */
static void tstamps_step(void)
{
	char ctrl[512] __attribute__((aligned(8))), data[256];
	struct pollfd p = { .fd = sock, .events = 0 };
	int seen = 0, acked = 0, tries;
	struct sock_extended_err *ee;
	struct iovec iov = { data, sizeof(data) };
	struct cmsghdr *cm;
	struct msghdr msg;
	ssize_t n;

	wait_acked();
	for (tries = 0; !acked && tries < 50; tries++) {
		if (poll(&p, 1, 100) < 0)
			die("poll: %s", strerror(errno));
		for (;;) {
			memset(&msg, 0, sizeof(msg));
			msg.msg_iov = &iov;
			msg.msg_iovlen = 1;
			msg.msg_control = ctrl;
			msg.msg_controllen = sizeof(ctrl);
			n = recvmsg(sock, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
			if (n < 0 && errno == EAGAIN)
				break;
			if (n < 0)
				die("recvmsg(MSG_ERRQUEUE): %s", strerror(errno));
			for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
				if (!((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
				      (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR)))
					continue;
				ee = (struct sock_extended_err *)CMSG_DATA(cm);
				if (ee->ee_origin != SO_EE_ORIGIN_TIMESTAMPING)
					continue;
				printf("tstamp %s key=%u payload=%zd\n",
				       ee->ee_info == SCM_TSTAMP_ACK ? "ack" :
				       ee->ee_info == SCM_TSTAMP_SCHED ? "sched" : "snd",
				       ee->ee_data, n);
				seen = 1;
				acked |= ee->ee_info == SCM_TSTAMP_ACK;
			}
		}
	}
	if (!seen)
		printf("tstamp none\n");
	fflush(stdout);
}

/* Wait until everything sent is acknowledged, every completion has
 * arrived (when @zc_sends is not ~0: that many sends were zerocopy) and
 * the socket's send memory is back to zero, 20 s at most; the send
 * memory last seen (SO_MEMINFO) in @mem.
 */
void at_rest(uint32_t mem[SK_MEMINFO_VARS], uint64_t zc_sends)
{
	struct timespec nap = { 0, 5 * 1000 * 1000 };
	socklen_t len;
	int i;

	wait_acked();
	for (i = 0; i < 4000; i++) {
		drain_completions(0);
		len = SK_MEMINFO_VARS * sizeof(*mem);
		if (getsockopt(sock, SOL_SOCKET, SO_MEMINFO, mem, &len))
			die("SO_MEMINFO: %s", strerror(errno));
		if (!mem[SK_MEMINFO_WMEM_ALLOC] && !mem[SK_MEMINFO_WMEM_QUEUED] &&
		    (zc_sends == ~0ULL || zc_completed >= zc_sends))
			break;
		nanosleep(&nap, NULL);
	}
}

/* meminfo (see the top). */
static void meminfo_step(void)
{
	uint32_t mem[SK_MEMINFO_VARS];

	at_rest(mem, ~0ULL);
	printf("meminfo wmem_alloc=%u wmem_queued=%u\n",
	       mem[SK_MEMINFO_WMEM_ALLOC], mem[SK_MEMINFO_WMEM_QUEUED]);
	fflush(stdout);
}

static int cmd_send(int argc, char **argv)
{
	struct sockaddr_storage *ss = &peer;
	struct ids ids = {};
	long dev = -1, other = -1;
	int i, nl_own = -1, nl_other = -1, dmabuf, one = 1, nagle = 0, tfo = 0;
	long mss = 0;
	char why[512];
	const char *env;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-6"))
			v6 = 1;
		else if (!strcmp(argv[i], "--udp"))
			tcp = 0;
		else if (!strcmp(argv[i], "--unconnected"))
			connected = 0;
		else if (!strcmp(argv[i], "--nagle"))
			nagle = 1;
		else if (!strcmp(argv[i], "--tfo"))
			tfo = 1;
		else if (!strcmp(argv[i], "--mss") && i + 1 < argc)
			mss = parse_num(argv[++i]);
		else if (!strcmp(argv[i], "--dev") && i + 1 < argc)
			dev = parse_num(argv[++i]);
		else if (!strcmp(argv[i], "--other") && i + 1 < argc)
			other = parse_num(argv[++i]);
		else if (!strcmp(argv[i], "--size") && i + 1 < argc)
			dmabuf_size = parse_num(argv[++i]);
		else
			usage();
	}
	if (argc - i < 3)
		usage();

	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(parse_num(argv[i + 1]));
		if (inet_pton(AF_INET6, argv[i], &a->sin6_addr) != 1)
			usage();
		peerlen = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(parse_num(argv[i + 1]));
		if (inet_pton(AF_INET, argv[i], &a->sin_addr) != 1)
			usage();
		peerlen = sizeof(*a);
	}

	dmabuf = udmabuf_letters(dmabuf_size);
	if (dev >= 0) {
		ids.own = bind_tx(&nl_own, dev, dmabuf, why, sizeof(why));
		if (!ids.own)
			die("bind-tx %ld: %s", dev, why);
	}
	if (other >= 0) {
		ids.other = bind_tx(&nl_other, other, dmabuf, why, sizeof(why));
		if (!ids.other)
			die("bind-tx %ld: %s", other, why);
	}
	env = getenv("DEVMEM_DMABUF_ID");
	if (env)
		ids.rx = parse_num(env);

	sock = socket(v6 ? AF_INET6 : AF_INET,
		      (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
	if (sock < 0)
		die("socket: %s", strerror(errno));
	if (tcp && !nagle &&
	    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("TCP_NODELAY: %s", strerror(errno));
	set_zerocopy(1);
	if (tfo)
		set_int(IPPROTO_TCP, TCP_FASTOPEN_CONNECT, "TCP_FASTOPEN_CONNECT", 1);
	if (mss)
		set_int(IPPROTO_TCP, TCP_MAXSEG, "TCP_MAXSEG", mss);
	if (connected && connect(sock, (struct sockaddr *)ss, peerlen))
		die("connect: %s", strerror(errno));

	for (i += 2; i < argc; i++) {
		if (!strcmp(argv[i], "zc=0")) {
			set_zerocopy(0);
		} else if (!strcmp(argv[i], "zc=1")) {
			set_zerocopy(1);
		} else if (option_step(argv[i])) {
			continue;
		} else if (!strncmp(argv[i], "stream=", 7)) {
			stream_step(argv[i], ids.own);
		} else if (!strcmp(argv[i], "tstamps")) {
			tstamps_step();
		} else if (!strcmp(argv[i], "meminfo")) {
			meminfo_step();
		} else if (!strncmp(argv[i], "fuzz=", 5)) {
			fuzz_step(argv[i], ids.own);
		} else if (!strcmp(argv[i], "unbind")) {
			if (nl_own < 0)
				die("unbind: no --dev binding");
			close(nl_own);
			nl_own = -1;
		} else {
			send_step(argv[i], &ids);
		}
	}
	wait_acked();
	close(sock);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "bind-tx"))
		return cmd_bind_tx(argc - 1, argv + 1);
	if (!strcmp(argv[1], "send"))
		return cmd_send(argc - 1, argv + 1);
	usage();
}
