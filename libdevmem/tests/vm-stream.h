/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the VM receive programs (recv-vm, uring-vm) share: a udmabuf bound
 * to one rx queue, a listening socket that tells the test when it is
 * ready, and the check of every byte of a received stream against the
 * test stream's pattern (selftests/progs/lib/pattern.h), in stream order:
 * host bytes where the receive put them, fragments through
 * devmem_dmabuf_read() of the udmabuf.
 */
#ifndef LIBDEVMEM_TEST_VM_STREAM_H
#define LIBDEVMEM_TEST_VM_STREAM_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../selftests/progs/lib/pattern.h"
#include "netdev.h"

#define VM_HOST_LEN	(64U << 10)
/* dma-bufs below this size get a capped receive buffer (vm_accept) */
#define VM_RCVBUF_LIMIT	(16U << 20)

/* Fail the test with a message on stderr, prefixed by the program name
 * (vm_prog).
 */
#define REQUIRE(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s: ", vm_prog);		\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			return T_FAIL;					\
		}							\
	} while (0)

static const char *vm_prog = "vm";

struct vm_stream {
	uint64_t base, off;
	uint64_t linear, dmabuf, frags, receives, mixed, plain;
	size_t size;			/* of the udmabuf */
	size_t buffers;			/* the binding's */
	int batch;			/* the recycler's */
	uint32_t id;
	struct devmem_dmabuf *db;
	struct devmem_binding *b;
	struct devmem_recycler *rc;
	int keep;			/* keep the frags, not recycle them */
	struct devmem_frag *kept;
	size_t nr_kept, cap_kept;
};

/* @len bytes at @p must be the stream's next ones. */
static inline int vm_check_bytes(struct vm_stream *s, const uint8_t *p,
				 size_t len, const char *where)
{
	size_t bad = pattern_check(s->base, s->off, p, len);

	REQUIRE(bad == len, "%s: byte %" PRIu64 " of the stream is 0x%02x, "
		"expected 0x%02x", where, s->off + bad, p[bad],
		pattern_byte(s->base, s->off + bad));
	s->off += len;
	return T_PASS;
}

static inline int vm_check_frag(struct vm_stream *s,
				const struct devmem_frag *f)
{
	static uint8_t tmp[VM_HOST_LEN];
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
		if (vm_check_bytes(s, tmp, n, "dmabuf"))
			return T_FAIL;
		done += n;
	}
	return T_PASS;
}

/* The application keeps @nr fragments' tokens (s->keep). */
static inline int vm_keep_frags(struct vm_stream *s,
				const struct devmem_frag *frags, size_t nr)
{
	struct devmem_frag *kept;
	size_t cap;

	if (s->nr_kept + nr > s->cap_kept) {
		cap = 2 * (s->nr_kept + nr);
		kept = realloc(s->kept, cap * sizeof(*kept));
		REQUIRE(kept, "out of memory for %zu frags", cap);
		s->kept = kept;
		s->cap_kept = cap;
	}
	memcpy(s->kept + s->nr_kept, frags, nr * sizeof(*frags));
	s->nr_kept += nr;
	return T_PASS;
}

/*
 * One receive of @ret bytes into @buf: what it says must add up, then
 * every byte in the order of its segments; its tokens go to the
 * recycler.
 */
static inline int vm_check_result(struct vm_stream *s, const void *buf,
				  ssize_t ret,
				  const struct devmem_rx_result *rx)
{
	const uint8_t *next_host = buf;
	uint64_t host = 0, dev = 0, frags = 0;
	int kinds = 0, err;
	size_t i;

	s->receives++;
	REQUIRE(rx->host_bytes + rx->dmabuf_bytes == (size_t)ret,
		"receive of %zd bytes: host %zu + dmabuf %zu", ret,
		rx->host_bytes, rx->dmabuf_bytes);
	REQUIRE(rx->nr_segs >= 1, "receive of %zd bytes without segments",
		ret);
	for (i = 0; i < rx->nr_segs; i++) {
		const struct devmem_seg *seg = &rx->segs[i];

		if (seg->type == DEVMEM_SEG_HOST) {
			/* packed from the buffer's start, in order */
			REQUIRE(seg->host == next_host, "host segment %zu "
				"at buffer offset %td, expected %td", i,
				(const uint8_t *)seg->host - (const uint8_t *)buf,
				next_host - (const uint8_t *)buf);
			if (vm_check_bytes(s, seg->host, seg->len, "host"))
				return T_FAIL;
			next_host += seg->len;
			host += seg->len;
			kinds |= 1;
			continue;
		}
		REQUIRE(seg->type == DEVMEM_SEG_DMABUF,
			"segment %zu of type %u", i, seg->type);
		REQUIRE(seg->len == seg->frag.size && frags < rx->nr_frags &&
			!memcmp(&seg->frag, &rx->frags[frags],
				sizeof(seg->frag)),
			"segment %zu does not match fragment %" PRIu64, i,
			frags);
		if (vm_check_frag(s, &seg->frag))
			return T_FAIL;
		dev += seg->len;
		frags++;
		kinds |= 2;
	}
	REQUIRE(host == rx->host_bytes && dev == rx->dmabuf_bytes &&
		frags == rx->nr_frags, "segments: host %" PRIu64 ", dmabuf %"
		PRIu64 " in %" PRIu64 " frags; result: %zu, %zu in %zu",
		host, dev, frags, rx->host_bytes, rx->dmabuf_bytes,
		rx->nr_frags);
	REQUIRE(!(rx->flags & DEVMEM_RX_PLAIN) || !rx->nr_frags,
		"a plain receive with fragments");
	s->mixed += kinds == 3;
	s->plain += !!(rx->flags & DEVMEM_RX_PLAIN);
	s->linear += host;
	s->dmabuf += dev;
	s->frags += frags;
	if (s->keep)
		return vm_keep_frags(s, rx->frags, rx->nr_frags);
	err = devmem_recycler_add_frags(s->rc, rx->frags, rx->nr_frags);
	REQUIRE(err >= 0, "devmem_recycler_add_frags: %s", strerror(-err));
	return T_PASS;
}

/*
 * The stream's recycler: the socket's, made with the binding's buffer
 * count and nothing else; prints the batch that picks.
 */
static inline int vm_recycler(struct vm_stream *s, int fd)
{
	int err, batch;

	err = devmem_recycler_new(&s->rc, fd, s->buffers);
	REQUIRE(!err, "devmem_recycler_new: %s", devmem_last_error());
	/* (0 asks for the default, and gives the batch in force) */
	batch = devmem_recycler_set_batch(s->rc, 0);
	REQUIRE(batch > 0, "devmem_recycler_set_batch: %s",
		devmem_last_error());
	s->batch = batch;
	printf("recycler batch=%d\n", batch);
	return T_PASS;
}

/* Hand every token back and print the stream's counts. */
static inline int vm_finish(struct vm_stream *s, uint64_t bytes)
{
	struct devmem_recycler_stats st;
	ssize_t freed;

	REQUIRE(s->off == bytes, "end of stream after %" PRIu64 " of %"
		PRIu64 " bytes", s->off, bytes);
	freed = devmem_recycler_flush(s->rc);
	REQUIRE(freed >= 0, "devmem_recycler_flush: %s", strerror(-freed));
	st = *devmem_recycler_get_stats(s->rc);
	printf("received %" PRIu64 " bytes: linear %" PRIu64 ", dmabuf %"
	       PRIu64 " in %" PRIu64 " frags, %" PRIu64 " receives, %" PRIu64
	       " mixed, %" PRIu64 " plain\n", s->off, s->linear, s->dmabuf,
	       s->frags, s->receives, s->mixed, s->plain);
	printf("tokens freed=%" PRIu64 " unknown=%" PRIu64 " calls=%" PRIu64
	       "\n", st.freed, st.unknown, st.calls);
	REQUIRE(st.freed == s->frags && !st.unknown && !st.pending,
		"tokens: %" PRIu64 " frags, %" PRIu64 " freed, %" PRIu64
		" unknown, %" PRIu64 " pending", s->frags, st.freed,
		st.unknown, st.pending);
	return T_PASS;
}

static inline uint64_t vm_parse_bytes(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'M': v <<= 10; /* fall through */
	case 'K': v <<= 10; end++; break;
	}
	return *end || end == s ? 0 : v;
}

/*
 * Parse [-s DMABUF-SIZE] IFNAME QUEUE PORT BYTES READY-FILE [SEED] at
 * @argv (the program's arguments after its name), bind a udmabuf of DMABUF-SIZE bytes
 * (default s->size) to the queue, check that the binding counts its
 * pages, listen, create READY-FILE and accept one connection. Returns the
 * connected socket, or -1 after saying why (*@status: 2 bad arguments,
 * T_SKIP, T_FAIL).
 */
static inline int vm_accept(struct vm_stream *s, int argc, char **argv,
			    uint64_t *bytes, int *status)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	long page = sysconf(_SC_PAGESIZE);
	int ifindex, lfd, fd, err, one = 1, rcvbuf;
	unsigned long port;
	uint32_t queue;
	char *qend, *end;

	*status = T_FAIL;
	s->base = PATTERN_GOLDEN;
	if (argc >= 2 && !strcmp(argv[0], "-s")) {
		s->size = vm_parse_bytes(argv[1]);
		if (!s->size || page <= 0 || s->size % page)
			goto err_args;
		argc -= 2;
		argv += 2;
	}
	if (argc != 5 && argc != 6)
		goto err_args;
	ifindex = devmem_ifindex(argv[0]);
	queue = strtoul(argv[1], &qend, 10);
	port = strtoul(argv[2], &end, 10);
	*bytes = vm_parse_bytes(argv[3]);
	if (argc == 6)
		s->base = strtoull(argv[5], NULL, 0) * PATTERN_GOLDEN;
	if (ifindex < 0 || *qend || qend == argv[1] || !port ||
	    port > 65535 || *end || !*bytes)
		goto err_args;

	err = devmem_dmabuf_new_udmabuf(&s->db, s->size);
	if (err == -ENOENT) {
		*status = t_skip("%s", devmem_last_error());
		return -1;
	}
	if (err) {
		fprintf(stderr, "%s: udmabuf: %s\n", vm_prog,
			devmem_last_error());
		return -1;
	}
	err = devmem_binding_new_rx(&s->b, ifindex, &queue, 1,
				    devmem_dmabuf_fd(s->db));
	if (err) {
		fprintf(stderr, "%s: bind-rx: %s\n", vm_prog,
			devmem_last_error());
		return -1;
	}
	s->id = devmem_binding_id(s->b);
	s->buffers = devmem_binding_buffers(s->b);
	if (s->buffers != s->size / page) {
		fprintf(stderr, "%s: devmem_binding_buffers: %zu, the dma-buf has %zu pages\n",
			vm_prog, s->buffers, s->size / page);
		return -1;
	}
	printf("bound id=%u ifindex=%d queue=%u buffers=%zu\n", s->id,
	       ifindex, queue, s->buffers);

	/* TCP keeps out-of-order segments, each in a buffer of the binding,
	 * up to the socket's receive buffer, while the segment that fills
	 * the hole needs a free buffer too: a binding smaller than what the
	 * socket may hold can stall for good (libdevmem(7), SIZING).
	 * Below VM_RCVBUF_LIMIT the listener's receive buffer, which the
	 * connection inherits, is capped at a quarter of the dma-buf.
	 */
	rcvbuf = (int)(s->size / 4);
	addr.sin_port = htons(port);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    (s->size < VM_RCVBUF_LIMIT &&
	     setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf))) ||
	    bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(lfd, 1) ||
	    (one = open(argv[4], O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		fprintf(stderr, "%s: listen on port %lu: %s\n", vm_prog, port,
			strerror(errno));
		return -1;
	}
	close(one);
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, "%s: accept: %s\n", vm_prog, strerror(errno));
	close(lfd);
	return fd;

err_args:
	*status = 2;
	fprintf(stderr, "%s: bad arguments\n", vm_prog);
	return -1;
}

static inline void vm_release(struct vm_stream *s)
{
	free(s->kept);
	devmem_recycler_free(s->rc);
	devmem_binding_free(s->b);
	devmem_dmabuf_free(s->db);
}

#endif /* LIBDEVMEM_TEST_VM_STREAM_H */
