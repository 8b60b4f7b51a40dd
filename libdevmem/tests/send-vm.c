// SPDX-License-Identifier: GPL-2.0
/*
 * send-vm [-s DMABUF-SIZE] IFNAME ADDR PORT BYTES [SEED]: send a TCP
 * stream from device memory on our kernel, in the test VM, to a receiver
 * that checks it (tcpxfer listen -p PORT -r BYTES [-S SEED] on the other
 * end of a netdevsim pair).
 *
 * Binds a udmabuf of DMABUF-SIZE bytes (default 8 MiB, a multiple of
 * 1 MiB) to IFNAME for sending, connects to ADDR PORT (retrying while
 * refused, for up to 10 s; the route must leave through IFNAME) and sends
 * BYTES bytes of the test stream's pattern of seed SEED (default 1:
 * tcpxfer's; selftests/progs/lib/pattern.h) through a devmem_sender. The
 * udmabuf is a ring of 1 MiB chunks: a chunk is written (through the
 * udmabuf's own mapping) only once every byte sent from it has been
 * reaped. Within a chunk the stream's pages lie in reverse order, so
 * that each page is a span of its own, and each devmem_send() takes the
 * spans of up to 5 chunks, more than one sendmsg() carries.
 *
 * Every span reaped must lie within one page of a chunk that has that
 * many bytes in flight; at the end every byte must have been reaped
 * once, with nothing pending. A wait of 20 s for a completion fails the
 * test as a stall. Then the sender shuts its side down and waits for
 * the receiver to close.
 *
 * Prints:
 *   bound id=ID ifindex=IFINDEX buffers=N
 *   sent B bytes in S sends of P spans, reaped R spans in C calls
 * Exits 0 when every check held, 1 when one failed, 77 without udmabuf,
 * 2 on bad arguments.
 */
#include "vm-stream.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/dma-buf.h>

#include "tcp.h"

#define PAGE		4096U
#define CHUNK		(1U << 20)
#define CHUNK_PAGES	(CHUNK / PAGE)
#define ROUND_CHUNKS	5U
#define STALL_MS	20000
#define CONNECT_S	10

struct tx {
	uint64_t base;			/* the pattern's */
	uint64_t bytes;			/* to send */
	size_t size, chunks;
	uint8_t *map;			/* the udmabuf, written here */
	int dmabuf_fd;
	uint64_t *left;			/* bytes of each chunk in flight */
	uint64_t reaped, sends, spans, reaped_spans, reaps;
	struct devmem_sender *s;
	struct devmem_span round[ROUND_CHUNKS * CHUNK_PAGES];
	struct devmem_span done[256];
};

static int sync_write(struct tx *t, uint64_t flags)
{
	struct dma_buf_sync sync = { .flags = flags | DMA_BUF_SYNC_WRITE };

	REQUIRE(!ioctl(t->dmabuf_fd, DMA_BUF_IOCTL_SYNC, &sync),
		"DMA_BUF_IOCTL_SYNC: %s", strerror(errno));
	return T_PASS;
}

/* Take what completed: at least one span, waiting up to STALL_MS. */
static int reap(struct tx *t)
{
	const struct devmem_span *d;
	ssize_t n, i;
	uint64_t c;

	n = devmem_sender_reap(t->s, t->done, 256, STALL_MS);
	REQUIRE(n >= 0, "devmem_sender_reap: %s", devmem_last_error());
	REQUIRE(n > 0, "stalled: no completion for %d s, %" PRIu64
		" bytes pending, %" PRIu64 " of %" PRIu64 " reaped",
		STALL_MS / 1000, devmem_sender_pending(t->s), t->reaped,
		t->bytes);
	t->reaps++;
	for (i = 0; i < n; i++) {
		d = &t->done[i];
		c = d->offset / CHUNK;
		REQUIRE(d->len && d->offset % PAGE + d->len <= PAGE &&
			c < t->chunks, "reaped span [%" PRIu64 ", +%" PRIu64
			") is no piece of a page sent", d->offset, d->len);
		REQUIRE(t->left[c] >= d->len, "reaped span [%" PRIu64 ", +%"
			PRIu64 ") of chunk %" PRIu64 ", which has %" PRIu64
			" bytes in flight", d->offset, d->len, c, t->left[c]);
		t->left[c] -= d->len;
		t->reaped += d->len;
	}
	t->reaped_spans += n;
	return T_PASS;
}

/*
 * Chunk @c takes stream bytes [@off, @off + @len): once free, write them
 * there, page p of the stream at the chunk's page (pages - 1 - p), and
 * add a span per page to the round.
 */
static int fill_chunk(struct tx *t, size_t c, uint64_t off, uint64_t len,
		      size_t *nr)
{
	size_t pages = (len + PAGE - 1) / PAGE, p;
	uint64_t at, n;

	while (t->left[c])
		if (reap(t))
			return T_FAIL;
	if (sync_write(t, DMA_BUF_SYNC_START))
		return T_FAIL;
	for (p = 0; p < pages; p++) {
		at = (uint64_t)c * CHUNK + (pages - 1 - p) * PAGE;
		n = len - p * PAGE < PAGE ? len - p * PAGE : PAGE;
		pattern_fill(t->base, off + p * PAGE, t->map + at, n);
		t->round[(*nr)++] = (struct devmem_span){ at, n };
	}
	t->left[c] = len;
	return sync_write(t, DMA_BUF_SYNC_END);
}

/* Send the round's @nr spans, again after a partial send. */
static int send_round(struct tx *t, size_t nr)
{
	struct devmem_span *sp = t->round;
	ssize_t n;

	t->spans += nr;
	while (nr) {
		n = devmem_send(t->s, sp, nr, MSG_NOSIGNAL);
		REQUIRE(n > 0, "devmem_send of %zu spans: %s", nr,
			n ? devmem_last_error() : "nothing sent");
		t->sends++;
		while (nr && (uint64_t)n >= sp->len) {
			n -= sp->len;
			sp++;
			nr--;
		}
		if (nr) {
			sp->offset += n;
			sp->len -= n;
		}
	}
	return T_PASS;
}

static int stream(struct tx *t)
{
	size_t per_round = t->chunks < ROUND_CHUNKS ? t->chunks : ROUND_CHUNKS;
	uint64_t off = 0, len;
	size_t c = 0, i, nr;

	while (off < t->bytes) {
		nr = 0;
		for (i = 0; i < per_round && off < t->bytes; i++) {
			len = t->bytes - off < CHUNK ? t->bytes - off : CHUNK;
			if (fill_chunk(t, c, off, len, &nr))
				return T_FAIL;
			off += len;
			c = (c + 1) % t->chunks;
		}
		if (send_round(t, nr))
			return T_FAIL;
	}
	while (devmem_sender_pending(t->s))
		if (reap(t))
			return T_FAIL;
	REQUIRE(t->reaped == t->bytes, "reaped %" PRIu64 " bytes of %"
		PRIu64 " sent", t->reaped, t->bytes);
	for (c = 0; c < t->chunks; c++)
		REQUIRE(!t->left[c], "chunk %zu: %" PRIu64
			" bytes never reaped", c, t->left[c]);
	return T_PASS;
}

/* The receiver has everything: it closes once we shut our side. */
static int finish(int fd)
{
	char c;
	ssize_t n;

	REQUIRE(!shutdown(fd, SHUT_WR), "shutdown: %s", strerror(errno));
	n = read(fd, &c, 1);
	REQUIRE(n == 0, "the receiver did not close: %s",
		n < 0 ? strerror(errno) : "it sent data");
	return T_PASS;
}

static int run(struct tx *t, const char *ifname, const char *addr,
	       const char *port)
{
	struct devmem_dmabuf *db = NULL;
	struct devmem_binding *b = NULL;
	int ifindex, fd = -1, err, ret = T_FAIL;

	ifindex = devmem_ifindex(ifname);
	REQUIRE(ifindex > 0, "%s: %s", ifname, devmem_last_error());
	err = devmem_dmabuf_new_udmabuf(&db, t->size);
	if (err == -ENOENT)
		return t_skip("%s", devmem_last_error());
	REQUIRE(!err, "udmabuf: %s", devmem_last_error());
	t->dmabuf_fd = devmem_dmabuf_fd(db);
	t->map = mmap(NULL, t->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      t->dmabuf_fd, 0);
	if (t->map == MAP_FAILED) {
		fprintf(stderr, "%s: mmap of the udmabuf: %s\n", vm_prog,
			strerror(errno));
		t->map = NULL;
		goto out;
	}
	err = devmem_binding_new_tx(&b, ifindex, t->dmabuf_fd);
	if (err) {
		fprintf(stderr, "%s: bind-tx: %s\n", vm_prog,
			devmem_last_error());
		goto out;
	}
	printf("bound id=%u ifindex=%d buffers=%zu\n", devmem_binding_id(b),
	       ifindex, devmem_binding_buffers(b));

	fd = tcp_connect(addr, port, CONNECT_S);
	if (fd < 0) {
		fprintf(stderr, "%s: connect to %s port %s: %s\n", vm_prog,
			addr, port, strerror(-fd));
		goto out;
	}
	err = devmem_sender_new(&t->s, fd, b);
	if (err) {
		fprintf(stderr, "%s: devmem_sender_new: %s\n", vm_prog,
			devmem_last_error());
		goto out;
	}
	if (stream(t) || finish(fd))
		goto out;
	printf("sent %" PRIu64 " bytes in %" PRIu64 " sends of %" PRIu64
	       " spans, reaped %" PRIu64 " spans in %" PRIu64 " calls\n",
	       t->bytes, t->sends, t->spans, t->reaped_spans, t->reaps);
	ret = T_PASS;
out:
	devmem_sender_free(t->s);
	if (fd >= 0)
		close(fd);
	devmem_binding_free(b);
	if (t->map)
		munmap(t->map, t->size);
	devmem_dmabuf_free(db);
	return ret;
}

int main(int argc, char **argv)
{
	static struct tx t = { .size = 8U << 20 };
	int ret;

	vm_prog = "send-vm";
	setvbuf(stdout, NULL, _IOLBF, 0);
	argc--;
	argv++;
	if (argc >= 2 && !strcmp(argv[0], "-s")) {
		t.size = vm_parse_bytes(argv[1]);
		argc -= 2;
		argv += 2;
	}
	if (argc != 4 && argc != 5)
		goto err_args;
	t.bytes = vm_parse_bytes(argv[3]);
	t.base = (argc == 5 ? strtoull(argv[4], NULL, 0) : 1) *
		 PATTERN_GOLDEN;
	if (!t.size || t.size % CHUNK || !t.bytes)
		goto err_args;
	t.chunks = t.size / CHUNK;
	t.left = calloc(t.chunks, sizeof(*t.left));
	if (!t.left) {
		fprintf(stderr, "%s: out of memory\n", vm_prog);
		return T_FAIL;
	}
	ret = run(&t, argv[0], argv[1], argv[2]);
	free(t.left);
	return ret;

err_args:
	fprintf(stderr, "%s: bad arguments\n", vm_prog);
	return 2;
}
