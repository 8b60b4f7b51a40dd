// SPDX-License-Identifier: GPL-2.0
/*
 * recycle-vm IFNAME QUEUE PORT BYTES DMABUF-SIZE READY-FILE [old]: a
 * devmem TCP flow much larger than its dma-buf, received with
 * devmem_recv() and a recycler with default settings, must not stall. On
 * our kernel, in the test VM (selftests/libdevmem.bats runs it on
 * netdevsim, the flow steered to QUEUE, header split on).
 *
 * Binds a udmabuf of DMABUF-SIZE bytes to rx queue QUEUE of IFNAME,
 * checks that devmem_binding_buffers() counts its pages, makes the
 * socket's recycler with that count and nothing else, listens on
 * 0.0.0.0 PORT, creates READY-FILE, accepts one connection and receives
 * BYTES bytes, adding every fragment's token after each receive. Every
 * byte is checked against the test stream's pattern (seed 1, tcpxfer's;
 * selftests/progs/pattern.h) through devmem_dmabuf_read(). A receive
 * that waits 20 s for data (SO_RCVTIMEO) fails the test: the flow
 * stalled. "old" makes the recycler as the library used to by default
 * (no buffer count, a batch of DEVMEM_DONTNEED_MAX_TOKENS), to show that
 * this stalls.
 *
 * Prints:
 *   bound id=ID buffers=N batch=T
 *   received B bytes: linear L, dmabuf D in F frags, R receives
 *   tokens freed=N unknown=U calls=K
 *   seconds S
 * Exits 0 when every check held, 1 when one failed, 77 without udmabuf,
 * 2 on bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../selftests/progs/pattern.h"
#include "netdev.h"

#define HOST_LEN	(64U << 10)
#define STALL_S		20

#define REQUIRE(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "recycle-vm: " __VA_ARGS__);	\
			fputc('\n', stderr);				\
			return T_FAIL;					\
		}							\
	} while (0)

struct stream {
	uint64_t base, off;
	uint64_t linear, dmabuf, frags, receives;
	uint32_t id;
	size_t size, buffers;
	unsigned int batch;
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
	uint8_t tmp[4096];
	uint64_t done = 0;
	size_t n;
	int err;

	REQUIRE(f->dmabuf_id == s->id, "frag of binding %u, expected %u",
		f->dmabuf_id, s->id);
	REQUIRE(f->offset + f->size <= s->size,
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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int receive(struct stream *s, int fd, uint64_t bytes)
{
	static uint8_t host[HOST_LEN];
	struct timeval tv = { .tv_sec = STALL_S };
	struct devmem_recycler_stats st;
	struct devmem_rx_result res;
	struct devmem_rx *rx;
	double start = 0;
	ssize_t n;
	size_t i;
	int err;

	REQUIRE(!setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)),
		"SO_RCVTIMEO: %s", strerror(errno));
	err = devmem_rx_new(&rx, 0, 0);
	REQUIRE(!err, "devmem_rx_new: %s", strerror(-err));
	for (;;) {
		memset(&res, 0, sizeof(res));
		res.size = sizeof(res);
		n = devmem_recv(rx, fd, host, sizeof(host), 0, &res);
		if (n == -EAGAIN) {
			devmem_recycler_get_stats(s->rc, &st);
			REQUIRE(0, "stalled: no data for %d s after %" PRIu64
				" of %" PRIu64 " bytes, %" PRIu64
				" tokens pending in the recycler (batch %u) of the binding's %zu buffers",
				STALL_S, s->off, bytes, st.pending, s->batch,
				s->buffers);
		}
		REQUIRE(n >= 0, "devmem_recv after %" PRIu64 " bytes: %s",
			s->off, strerror((int)-n));
		if (!n)
			break;
		if (!s->receives++)
			start = now();
		REQUIRE(res.host_bytes + res.dmabuf_bytes == (size_t)n,
			"receive of %zd bytes: host %zu + dmabuf %zu", n,
			res.host_bytes, res.dmabuf_bytes);
		/* with header split the payload is all in fragments */
		REQUIRE(!res.host_bytes || !res.nr_frags,
			"host and device bytes in one receive");
		if (res.host_bytes &&
		    check_bytes(s, host, res.host_bytes, "linear"))
			return T_FAIL;
		for (i = 0; i < res.nr_frags; i++)
			if (check_frag(s, &res.frags[i]))
				return T_FAIL;
		s->linear += res.host_bytes;
		s->dmabuf += res.dmabuf_bytes;
		s->frags += res.nr_frags;
		err = devmem_recycler_add_frags(s->rc, res.frags, res.nr_frags);
		REQUIRE(err >= 0, "devmem_recycler_add_frags: %s",
			strerror(-err));
		REQUIRE(s->off <= bytes, "more than %" PRIu64 " bytes", bytes);
	}
	devmem_rx_free(rx);
	REQUIRE(s->off == bytes, "end of stream after %" PRIu64 " of %"
		PRIu64 " bytes", s->off, bytes);

	n = devmem_recycler_flush(s->rc);
	REQUIRE(n >= 0, "devmem_recycler_flush: %s", strerror((int)-n));
	devmem_recycler_get_stats(s->rc, &st);
	printf("received %" PRIu64 " bytes: linear %" PRIu64 ", dmabuf %"
	       PRIu64 " in %" PRIu64 " frags, %" PRIu64 " receives\n",
	       s->off, s->linear, s->dmabuf, s->frags, s->receives);
	printf("tokens freed=%" PRIu64 " unknown=%" PRIu64 " calls=%" PRIu64
	       "\n", st.freed, st.unknown, st.calls);
	printf("seconds %.3f\n", now() - start);
	REQUIRE(st.freed == s->frags && !st.unknown && !st.pending,
		"tokens: %" PRIu64 " frags, %" PRIu64 " freed, %" PRIu64
		" unknown, %" PRIu64 " pending", s->frags, st.freed,
		st.unknown, st.pending);
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

int main(int argc, char **argv)
{
	struct stream s = { .base = PATTERN_GOLDEN };
	struct devmem_binding *b;
	uint64_t bytes;
	uint32_t queue;
	unsigned long port;
	int ifindex, lfd, fd, err, ret, old = 0;
	char *qend, *end;
	long page = sysconf(_SC_PAGESIZE);

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 8 && !strcmp(argv[7], "old"))
		old = 1;
	else if (argc != 7) {
		fprintf(stderr, "usage: recycle-vm IFNAME QUEUE PORT BYTES DMABUF-SIZE READY-FILE [old]\n");
		return 2;
	}
	ifindex = devmem_ifindex(argv[1]);
	queue = strtoul(argv[2], &qend, 10);
	port = strtoul(argv[3], &end, 10);
	bytes = parse_bytes(argv[4]);
	s.size = parse_bytes(argv[5]);
	if (ifindex < 0 || *qend || qend == argv[2] || !port || port > 65535 ||
	    *end || !bytes || !s.size || page <= 0) {
		fprintf(stderr, "recycle-vm: bad arguments\n");
		return 2;
	}

	err = devmem_dmabuf_new_udmabuf(&s.db, s.size);
	if (err == -ENOENT)
		return t_skip("%s", devmem_last_error());
	REQUIRE(!err, "udmabuf: %s", devmem_last_error());
	err = devmem_binding_new_rx(&b, ifindex, &queue, 1,
				    devmem_dmabuf_fd(s.db));
	REQUIRE(!err, "bind-rx: %s", devmem_last_error());
	s.id = devmem_binding_id(b);
	s.buffers = devmem_binding_buffers(b);
	REQUIRE(s.buffers == s.size / (size_t)page,
		"devmem_binding_buffers: %zu, the dma-buf has %zu pages",
		s.buffers, s.size / (size_t)page);

	lfd = listen_on(port, argv[6]);
	REQUIRE(lfd >= 0, "listen on port %lu: %s", port, strerror(-lfd));
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	REQUIRE(fd >= 0, "accept: %s", strerror(errno));
	close(lfd);

	err = devmem_recycler_new(&s.rc, fd, old ? 0 : s.buffers);
	REQUIRE(!err, "devmem_recycler_new: %s", strerror(-err));
	/* the batch in force: the default, or the old default */
	ret = devmem_recycler_set_batch(s.rc,
					old ? DEVMEM_DONTNEED_MAX_TOKENS : 0);
	REQUIRE(ret > 0, "devmem_recycler_set_batch: %s", strerror(-ret));
	s.batch = (unsigned int)ret;
	printf("bound id=%u buffers=%zu batch=%u\n", s.id, s.buffers,
	       s.batch);

	ret = receive(&s, fd, bytes);
	devmem_recycler_free(s.rc);
	close(fd);
	devmem_binding_free(b);
	devmem_dmabuf_free(s.db);
	return ret;
}
