// SPDX-License-Identifier: GPL-2.0
/*
 * xdpq: put XDP on a device or an AF_XDP socket on one of its queues,
 * with nothing but libc, for tests of what a queue bound to device
 * memory refuses.
 *
 *   xdpq attach IFINDEX     load an XDP_PASS program and attach it in
 *                           generic (skb) mode through rtnetlink; it stays
 *                           attached after xdpq exits
 *   xdpq detach IFINDEX     remove the generic-mode program
 *   xdpq xsk IFINDEX QUEUE  bind an AF_XDP socket (copy mode) to rx queue
 *                           QUEUE; print "bound" and hold it until
 *                           SIGTERM or SIGINT
 *
 * Errors print as "Error: <strerror>[: <extack>]"; exit 1. Usage: exit 2.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SOL_XDP
#define SOL_XDP 283
#endif

static void __attribute__((noreturn)) fail(const char *what, int err)
{
	fprintf(stderr, "Error: %s: %s\n", what, strerror(err));
	exit(1);
}

static unsigned int parse_u32(const char *s, const char *what)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v > UINT32_MAX) {
		fprintf(stderr, "xdpq: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

/* r0 = XDP_PASS; exit */
static int load_pass(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_XDP;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uintptr_t)"GPL";
	fd = syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0)
		fail("BPF_PROG_LOAD", errno);
	return fd;
}

struct rtreq {
	struct nlmsghdr nlh;
	struct ifinfomsg ifi;
	char attrs[256];
};

static struct nlattr *put(struct rtreq *r, int type, const void *d, int len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->nlh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, d, len);
	r->nlh.nlmsg_len = NLMSG_ALIGN(r->nlh.nlmsg_len) + NLA_ALIGN(a->nla_len);
	return a;
}

/* RTM_SETLINK IFLA_XDP {fd, generic mode}; report errno and extack. */
static int set_xdp(unsigned int ifindex, int prog_fd)
{
	static char buf[8192];
	struct rtreq r = {
		.nlh = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
			 .nlmsg_type = RTM_SETLINK,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK, .nlmsg_seq = 1 },
		.ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex },
	};
	uint32_t flags = XDP_FLAGS_SKB_MODE;
	struct nlmsghdr *nlh;
	struct nlmsgerr *e;
	struct nlattr *nest, *a;
	int fd, one = 1, n, off;

	nest = put(&r, IFLA_XDP | NLA_F_NESTED, NULL, 0);
	put(&r, IFLA_XDP_FD, &prog_fd, 4);
	put(&r, IFLA_XDP_FLAGS, &flags, 4);
	nest->nla_len = (char *)&r + r.nlh.nlmsg_len - (char *)nest;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		fail("socket", errno);
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (send(fd, &r, r.nlh.nlmsg_len, 0) < 0)
		fail("send", errno);
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		fail("recv", errno);
	nlh = (struct nlmsghdr *)buf;
	if (!NLMSG_OK(nlh, n) || nlh->nlmsg_type != NLMSG_ERROR)
		fail("rtnetlink reply", EPROTO);
	e = NLMSG_DATA(nlh);
	if (!e->error)
		return 0;
	fprintf(stderr, "Error: %s", strerror(-e->error));
	off = NLMSG_HDRLEN + sizeof(*e);
	while (off + NLA_HDRLEN <= (int)nlh->nlmsg_len) {
		a = (struct nlattr *)((char *)nlh + off);
		if (a->nla_len < NLA_HDRLEN)
			break;
		if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG)
			fprintf(stderr, ": %.*s", a->nla_len - NLA_HDRLEN,
				(char *)a + NLA_HDRLEN);
		off += NLA_ALIGN(a->nla_len);
	}
	fputc('\n', stderr);
	return 1;
}

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* An AF_XDP socket in copy mode on IFINDEX's rx queue QUEUE. */
static int xsk(unsigned int ifindex, unsigned int queue)
{
	const size_t frames = 64, frame = 4096;
	struct xdp_umem_reg reg = { .chunk_size = frame, .len = frames * frame };
	struct sockaddr_xdp sxdp = {
		.sxdp_family = AF_XDP, .sxdp_ifindex = ifindex,
		.sxdp_queue_id = queue, .sxdp_flags = XDP_COPY,
	};
	struct sigaction sa = { .sa_handler = on_stop };
	int fd, ring = frames;
	sigset_t block, old;
	void *umem;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	umem = mmap(NULL, reg.len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (umem == MAP_FAILED)
		fail("mmap", errno);
	reg.addr = (uintptr_t)umem;
	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fail("socket(AF_XDP)", errno);
	if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &ring, sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &ring,
		       sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_RX_RING, &ring, sizeof(ring)))
		fail("AF_XDP set-up", errno);
	if (bind(fd, (struct sockaddr *)&sxdp, sizeof(sxdp)))
		fail("bind(AF_XDP)", errno);
	printf("bound\n");
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "attach"))
		return set_xdp(parse_u32(argv[2], "ifindex"), load_pass());
	if (argc == 3 && !strcmp(argv[1], "detach"))
		return set_xdp(parse_u32(argv[2], "ifindex"), -1);
	if (argc == 4 && !strcmp(argv[1], "xsk"))
		return xsk(parse_u32(argv[2], "ifindex"),
			   parse_u32(argv[3], "queue"));
	fprintf(stderr, "usage: xdpq attach|detach IFINDEX | xdpq xsk IFINDEX QUEUE\n");
	return 2;
}
