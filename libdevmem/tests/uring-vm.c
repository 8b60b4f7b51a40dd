// SPDX-License-Identifier: GPL-2.0
/*
 * uring-vm IFNAME QUEUE PORT BYTES READY-FILE [SEED]: receive a device-
 * memory TCP flow through io_uring (devmem_uring) on our kernel, in the
 * test VM (selftests/libdevmem.bats runs it on netdevsim, the flow
 * steered to QUEUE, header split on).
 *
 * Binds a 64 MiB udmabuf to rx queue QUEUE of IFNAME through the
 * library, listens on 0.0.0.0 PORT, creates READY-FILE, accepts one
 * connection and receives BYTES bytes with one IORING_OP_RECVMSG
 * (MSG_SOCK_DEVMEM) request in flight at a time. Every byte is checked
 * against the test stream's pattern of seed SEED (default 1: tcpxfer's;
 * selftests/progs/pattern.h): host bytes in the request's buffer, fragments
 * through devmem_dmabuf_read() of the udmabuf, each fragment inside the
 * buffer and of this binding. Tokens go back through a recycler. Then
 * the peer must close.
 *
 * Prints:
 *   bound id=ID ifindex=IFINDEX queue=QUEUE
 *   received B bytes: linear L, dmabuf D in F frags, C completions
 *   tokens freed=N unknown=U calls=K
 * Exits 0 when every check held, 1 when one failed (a wrong byte says
 * which, with its stream offset), 77 without io_uring or udmabuf, 2 on
 * bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../selftests/progs/pattern.h"
#include "netdev.h"

#define BUF_SIZE	(64U << 20)
#define HOST_LEN	(64U << 10)

#define REQUIRE(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "uring-vm: " __VA_ARGS__);	\
			fputc('\n', stderr);				\
			return T_FAIL;					\
		}							\
	} while (0)

struct stream {
	uint64_t base, off;
	uint64_t linear, dmabuf, frags, completions;
	uint32_t id;
	struct devmem_dmabuf *db;
	struct devmem_recycler *rc;
};

/* @len bytes at @p must be the stream's next ones. */
static int check_bytes(struct stream *s, const uint8_t *p, size_t len,
		       const char *where)
{
	size_t bad = pattern_check(s->base, s->off, p, len);

	REQUIRE(bad == len, "%s: byte %" PRIu64 " of the stream is 0x%02x, "
		"expected 0x%02x", where, s->off + bad, p[bad],
		pattern_byte(s->base, s->off + bad));
	s->off += len;
	return T_PASS;
}

static int check_frag(struct stream *s, const struct devmem_frag *f)
{
	static uint8_t tmp[HOST_LEN];
	uint64_t done = 0;
	size_t n;
	int err;

	REQUIRE(f->dmabuf_id == s->id, "frag of binding %u, expected %u",
		f->dmabuf_id, s->id);
	REQUIRE(f->offset + f->size <= BUF_SIZE,
		"frag [%" PRIu64 ", +%u) outside the buffer", f->offset,
		f->size);
	while (done < f->size) {
		n = f->size - done < sizeof(tmp) ? f->size - done : sizeof(tmp);
		err = devmem_dmabuf_read(s->db, f->offset + done, tmp, n);
		REQUIRE(!err, "devmem_dmabuf_read: %s", devmem_last_error());
		if (check_bytes(s, tmp, n, "dmabuf"))
			return T_FAIL;
		done += n;
	}
	return T_PASS;
}

/* One completion: what it says must add up, then every byte. */
static int check_completion(struct stream *s,
			    const struct devmem_uring_completion *c)
{
	const struct devmem_rx_result *rx = &c->rx;
	size_t i;
	int err;

	s->completions++;
	REQUIRE(rx->host_bytes + rx->dmabuf_bytes == (size_t)c->ret,
		"completion of %zd bytes: host %zu + dmabuf %zu", c->ret,
		rx->host_bytes, rx->dmabuf_bytes);
	/* (the order of linear bytes among fragments is in the cmsgs only:
	 * with header split the payload is all in fragments)
	 */
	REQUIRE(!rx->host_bytes || !rx->nr_frags,
		"host and device bytes in one receive");
	if (rx->host_bytes && check_bytes(s, c->buf, rx->host_bytes, "linear"))
		return T_FAIL;
	for (i = 0; i < rx->nr_frags; i++)
		if (check_frag(s, &rx->frags[i]))
			return T_FAIL;
	s->linear += rx->host_bytes;
	s->dmabuf += rx->dmabuf_bytes;
	s->frags += rx->nr_frags;
	err = devmem_recycler_add_frags(s->rc, rx->frags, rx->nr_frags);
	REQUIRE(err >= 0, "devmem_recycler_add_frags: %s", strerror(-err));
	return T_PASS;
}

static int listen_on(uint16_t port, const char *ready)
{
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_port = htons(port) };
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(fd, 1))
		return -errno;
	one = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (one < 0)
		return -errno;
	close(one);
	return fd;
}

static uint64_t parse_bytes(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'M': v <<= 10; /* fall through */
	case 'K': v <<= 10; end++; break;
	}
	return *end || end == s ? 0 : v;
}

static int receive(struct stream *s, int fd, uint64_t bytes)
{
	static uint8_t host[HOST_LEN];
	struct devmem_uring_completion c;
	struct devmem_recycler_stats st;
	struct devmem_uring *u;
	ssize_t freed;
	int err;

	err = devmem_uring_new(&u, 2, 0, 0);
	if (err == -ENOSYS || err == -EPERM)
		return t_skip("%s", devmem_last_error());
	REQUIRE(!err, "devmem_uring_new: %s", devmem_last_error());
	err = devmem_recycler_new(&s->rc, fd, 0);
	REQUIRE(!err, "devmem_recycler_new: %s", strerror(-err));

	for (;;) {
		err = devmem_uring_submit(u, fd, host, sizeof(host), 0,
					  s->completions);
		REQUIRE(!err, "devmem_uring_submit: %s", devmem_last_error());
		err = devmem_uring_wait(u, &c);
		REQUIRE(!err, "devmem_uring_wait: %s", devmem_last_error());
		REQUIRE(c.user_data == s->completions && c.fd == fd,
			"completion of request %" PRIu64 " on fd %d",
			c.user_data, c.fd);
		REQUIRE(c.ret >= 0, "receive after %" PRIu64 " bytes: %s",
			s->off, strerror((int)-c.ret));
		if (!c.ret)
			break;
		if (check_completion(s, &c))
			return T_FAIL;
		REQUIRE(s->off <= bytes, "more than %" PRIu64 " bytes", bytes);
	}
	REQUIRE(s->off == bytes, "end of stream after %" PRIu64 " of %"
		PRIu64 " bytes", s->off, bytes);
	devmem_uring_free(u);

	freed = devmem_recycler_flush(s->rc);
	REQUIRE(freed >= 0, "devmem_recycler_flush: %s", strerror(-freed));
	devmem_recycler_get_stats(s->rc, &st);
	printf("received %" PRIu64 " bytes: linear %" PRIu64 ", dmabuf %"
	       PRIu64 " in %" PRIu64 " frags, %" PRIu64 " completions\n",
	       s->off, s->linear, s->dmabuf, s->frags, s->completions);
	printf("tokens freed=%" PRIu64 " unknown=%" PRIu64 " calls=%" PRIu64
	       "\n", st.freed, st.unknown, st.calls);
	REQUIRE(st.freed == s->frags && !st.unknown && !st.pending,
		"tokens: %" PRIu64 " frags, %" PRIu64 " freed, %" PRIu64
		" unknown, %" PRIu64 " pending", s->frags, st.freed,
		st.unknown, st.pending);
	devmem_recycler_free(s->rc);
	return T_PASS;
}

int main(int argc, char **argv)
{
	struct stream s = { .base = PATTERN_GOLDEN };
	struct devmem_binding *b;
	uint64_t bytes;
	uint32_t queue;
	unsigned long port;
	int ifindex, lfd, fd, err, ret;
	char *qend, *end;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: uring-vm IFNAME QUEUE PORT BYTES READY-FILE [SEED]\n");
		return 2;
	}
	ifindex = devmem_ifindex(argv[1]);
	queue = strtoul(argv[2], &qend, 10);
	port = strtoul(argv[3], &end, 10);
	bytes = parse_bytes(argv[4]);
	if (argc == 7)
		s.base = strtoull(argv[6], NULL, 0) * PATTERN_GOLDEN;
	if (ifindex < 0 || *qend || qend == argv[2] || !port || port > 65535 ||
	    *end || !bytes) {
		fprintf(stderr, "uring-vm: bad arguments\n");
		return 2;
	}

	err = devmem_dmabuf_new_udmabuf(&s.db, BUF_SIZE);
	if (err == -ENOENT)
		return t_skip("%s", devmem_last_error());
	REQUIRE(!err, "udmabuf: %s", devmem_last_error());
	err = devmem_binding_new_rx(&b, ifindex, &queue, 1, devmem_dmabuf_fd(s.db));
	REQUIRE(!err, "bind-rx: %s", devmem_last_error());
	s.id = devmem_binding_id(b);
	printf("bound id=%u ifindex=%d queue=%u\n", s.id, ifindex, queue);

	lfd = listen_on(port, argv[5]);
	REQUIRE(lfd >= 0, "listen on port %lu: %s", port, strerror(-lfd));
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	REQUIRE(fd >= 0, "accept: %s", strerror(errno));
	close(lfd);

	ret = receive(&s, fd, bytes);
	close(fd);
	devmem_binding_free(b);
	devmem_dmabuf_free(s.db);
	return ret;
}
