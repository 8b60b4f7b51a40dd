// SPDX-License-Identifier: GPL-2.0
/*
 * txhold-vm IFNAME ADDR PORT: sends from device memory step by step, on
 * commands read from standard input, so that a test can change the
 * world (unbind, take a link down, delete the device or its namespace)
 * while sends are in flight. In the test VM, against tcpxfer listen.
 *
 * Binds a 4 MiB udmabuf holding the test stream's pattern of seed 1
 * (selftests/progs/lib/pattern.h; dma-buf offset = stream offset) to IFNAME
 * for sending and connects to ADDR PORT. Then one command per line, one
 * line of answer each:
 *
 *   send N       the next N stream bytes, MSG_DONTWAIT: "sent B" (bytes
 *                queued) or "send: ERRNO"
 *   pending      "pending P": bytes sent and not reported complete
 *   unbind       closes the binding's netlink socket: "unbound"
 *   reap S       reaps until nothing is pending, for up to S seconds:
 *                "reaped R pending P"
 *   abort        SO_LINGER 0 and close: the unsent and unacked data is
 *                dropped at once: "aborted"
 *   close        shuts the sending side down, waits for the peer to
 *                close, closes: "closed"
 *
 * Exits 0 at the end of input, 1 on an unexpected failure, 2 on bad
 * arguments, 77 without udmabuf.
 */
#include "vm-stream.h"

#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <linux/dma-buf.h>

#include "tcp.h"

#define SIZE	(4U << 20)

static struct devmem_binding *binding;
static struct devmem_sender *sender;
static uint64_t next_off;
static int fd = -1;

static void cmd_send(uint64_t n)
{
	struct devmem_span span = { next_off, n };
	ssize_t ret;

	if (next_off + n > SIZE) {
		printf("send: beyond the dma-buf\n");
		return;
	}
	ret = devmem_send(sender, &span, 1, MSG_DONTWAIT);
	if (ret < 0) {
		printf("send: %s\n", strerrorname_np(-ret));
		return;
	}
	next_off += ret;
	printf("sent %zd\n", ret);
}

static int cmd_reap(unsigned int secs)
{
	struct timespec start, now;
	struct devmem_span done[64];
	uint64_t reaped = 0;
	ssize_t n, i;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (devmem_sender_pending(sender)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= secs)
			break;
		n = devmem_sender_reap(sender, done, 64, 200);
		REQUIRE(n >= 0, "reap: %s", devmem_last_error());
		for (i = 0; i < n; i++)
			reaped += done[i].len;
	}
	printf("reaped %" PRIu64 " pending %" PRIu64 "\n", reaped,
	       devmem_sender_pending(sender));
	return T_PASS;
}

static int cmd_close(bool abort)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	char c;

	if (abort) {
		REQUIRE(!setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg,
				    sizeof(lg)), "SO_LINGER: %s",
			strerror(errno));
	} else {
		REQUIRE(!shutdown(fd, SHUT_WR), "shutdown: %s",
			strerror(errno));
		REQUIRE(read(fd, &c, 1) == 0, "the peer sent data or failed");
	}
	close(fd);
	fd = -1;
	printf(abort ? "aborted\n" : "closed\n");
	return T_PASS;
}

static int commands(void)
{
	char line[64], word[16];
	unsigned long long n;
	int k;

	while (fgets(line, sizeof(line), stdin)) {
		k = sscanf(line, "%15s %llu", word, &n);
		if (k < 1)
			continue;
		if (fd < 0 && strcmp(word, "unbind")) {
			printf("closed already\n");
		} else if (!strcmp(word, "send") && k == 2) {
			cmd_send(n);
		} else if (!strcmp(word, "pending")) {
			printf("pending %" PRIu64 "\n",
			       devmem_sender_pending(sender));
		} else if (!strcmp(word, "unbind")) {
			devmem_binding_free(binding);
			binding = NULL;
			printf("unbound\n");
		} else if (!strcmp(word, "reap") && k == 2) {
			if (cmd_reap(n))
				return T_FAIL;
		} else if (!strcmp(word, "abort") || !strcmp(word, "close")) {
			if (cmd_close(word[0] == 'a'))
				return T_FAIL;
		} else {
			printf("unknown command\n");
		}
	}
	return T_PASS;
}

int main(int argc, char **argv)
{
	struct devmem_dmabuf *db = NULL;
	int sndbuf = 16 << 20, ret = T_FAIL, ifindex, err;
	uint8_t *map = NULL;
	struct dma_buf_sync sync = {
		.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE,
	};

	vm_prog = "txhold-vm";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 4) {
		fprintf(stderr, "%s: bad arguments\n", vm_prog);
		return 2;
	}
	ifindex = devmem_ifindex(argv[1]);
	REQUIRE(ifindex > 0, "%s: %s", argv[1], devmem_last_error());
	err = devmem_dmabuf_new_udmabuf(&db, SIZE);
	if (err == -ENOENT)
		return T_SKIP;
	REQUIRE(!err, "udmabuf: %s", devmem_last_error());
	map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   devmem_dmabuf_fd(db), 0);
	if (map == MAP_FAILED) {
		map = NULL;
		goto out;
	}
	if (ioctl(devmem_dmabuf_fd(db), DMA_BUF_IOCTL_SYNC, &sync))
		goto out;
	pattern_fill(PATTERN_GOLDEN, 0, map, SIZE);
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE;
	if (ioctl(devmem_dmabuf_fd(db), DMA_BUF_IOCTL_SYNC, &sync))
		goto out;
	if (devmem_binding_new_tx(&binding, ifindex, devmem_dmabuf_fd(db))) {
		fprintf(stderr, "%s: bind-tx: %s\n", vm_prog,
			devmem_last_error());
		goto out;
	}
	fd = tcp_connect(argv[2], argv[3], 10);
	if (fd < 0) {
		fprintf(stderr, "%s: connect: %s\n", vm_prog, strerror(-fd));
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (devmem_sender_new(&sender, fd, binding)) {
		fprintf(stderr, "%s: sender: %s\n", vm_prog,
			devmem_last_error());
		goto out;
	}
	printf("ready id=%u\n", devmem_binding_id(binding));
	ret = commands();
out:
	devmem_sender_free(sender);
	if (fd >= 0)
		close(fd);
	devmem_binding_free(binding);
	if (map)
		munmap(map, SIZE);
	devmem_dmabuf_free(db);
	return ret;
}
