// SPDX-License-Identifier: GPL-2.0
/*
 * sockmap-pass: a TCP receiver whose socket is in a sockmap with an
 * sk_skb verdict program that passes every skb to the socket itself
 * (SK_PASS): the stream then reaches recv() through the psock's ingress
 * queue, as sk_msgs, instead of the socket's receive queue.
 *
 * Listen on port -p (IPv4), accept one connection, put it in a sockmap
 * with the verdict program attached, then create the file -r (once the
 * socket is in the map) and receive until end of stream, an error, or
 * -t seconds (20) in which recv() returns nothing, whether or not poll()
 * says the socket is readable (a psock that cannot deliver what it holds
 * keeps reporting POLLIN). An error the psock sets on the socket is
 * returned by the next recv(), or shows first as POLLERR and is read with
 * SO_ERROR. The last line says which:
 *
 *	end after N bytes
 *	socket error ERRNO_NAME after N bytes
 *	recv: ERRNO_NAME after N bytes
 *	nothing for S seconds after N bytes
 *
 * Exit status: 0 when the line could be printed, 1 on a set-up failure,
 * 2 usage.
 */
#include <linux/bpf.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PROG	"sockmap-pass"

#include "../lib/die.h"
#include "../lib/listen.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* r0 = SK_PASS; exit */
static const struct bpf_insn pass_prog[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = SK_PASS },
	{ .code = BPF_JMP | BPF_EXIT },
};

static void sockmap_add(int fd)
{
	union bpf_attr attr;
	uint32_t key = 0, value = fd;
	int map, prog;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_SOCKMAP;
	attr.key_size = sizeof(key);
	attr.value_size = sizeof(value);
	attr.max_entries = 1;
	map = bpf(BPF_MAP_CREATE, &attr);
	if (map < 0)
		die("BPF_MAP_CREATE: %s", strerror(errno));

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SK_SKB;
	attr.insns = (uintptr_t)pass_prog;
	attr.insn_cnt = sizeof(pass_prog) / sizeof(pass_prog[0]);
	attr.license = (uintptr_t)"GPL";
	prog = bpf(BPF_PROG_LOAD, &attr);
	if (prog < 0)
		die("BPF_PROG_LOAD: %s", strerror(errno));

	memset(&attr, 0, sizeof(attr));
	attr.target_fd = map;
	attr.attach_bpf_fd = prog;
	attr.attach_type = BPF_SK_SKB_VERDICT;
	if (bpf(BPF_PROG_ATTACH, &attr))
		die("BPF_PROG_ATTACH: %s", strerror(errno));

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = map;
	attr.key = (uintptr_t)&key;
	attr.value = (uintptr_t)&value;
	attr.flags = BPF_ANY;
	if (bpf(BPF_MAP_UPDATE_ELEM, &attr))
		die("BPF_MAP_UPDATE_ELEM: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	const char *ready = NULL;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	static char buf[64 * 1024];
	int c, one = 1, lfd, fd, port = 0, timeout = 20, err;
	socklen_t errlen = sizeof(err);
	long long deadline, left;
	struct pollfd pfd;
	size_t total = 0;
	ssize_t n;

	while ((c = getopt(argc, argv, "p:r:t:")) != -1) {
		switch (c) {
		case 'p': port = atoi(optarg); break;
		case 'r': ready = optarg; break;
		case 't': timeout = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (port <= 0 || port > 65535 || timeout <= 0 || optind != argc)
		goto usage;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		die("socket: %s", strerror(errno));
	sin.sin_port = htons(port);
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) || listen(lfd, 1))
		die("bind/listen port %d: %s", port, strerror(errno));
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept: %s", strerror(errno));
	sockmap_add(fd);
	ready_file(ready);

	deadline = now_ms() + timeout * 1000LL;
	for (;;) {
		left = deadline - now_ms();
		if (left <= 0) {
			printf("nothing for %d seconds after %zu bytes\n", timeout, total);
			break;
		}
		pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
		n = poll(&pfd, 1, left);
		if (n < 0)
			die("poll: %s", strerror(errno));
		if (n == 0)
			continue;
		if (pfd.revents & POLLERR) {
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen))
				die("SO_ERROR: %s", strerror(errno));
			printf("socket error %s after %zu bytes\n",
			       err ? strerrorname_np(err) : "0", total);
			break;
		}
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			total += n;
			deadline = now_ms() + timeout * 1000LL;
		} else if (n == 0) {
			printf("end after %zu bytes\n", total);
			break;
		} else if (errno != EAGAIN) {
			printf("recv: %s after %zu bytes\n", strerrorname_np(errno), total);
			break;
		}
	}
	return 0;
usage:
	fprintf(stderr, "usage: " PROG " -p PORT [-r READY] [-t SECONDS]\n");
	return 2;
}
