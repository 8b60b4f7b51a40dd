// SPDX-License-Identifier: GPL-2.0
/*
 * tcp-wirefuzz: odd TCP on the wire at a devmem TCP receiver.
 *
 *   tcp-wirefuzz rx -p PORT -c CONNS [options]
 *	under `netdev-nl bind-rx ... --run`: accept CONNS connections one
 *	after the other and receive each with recvmsg(MSG_SOCK_DEVMEM),
 *	checking every byte against the pattern of seed SEED + I for the
 *	I-th connection (selftests/progs/lib/pattern.h), until end of stream or
 *	an error; one line per connection:
 *	  conn I: B bytes (linear L, dmabuf D, host H), end eof|ECONNRESET|...
 *	(host: bytes of readable skbs, which come without a cmsg).
 *	A wrong byte, a cmsg that does not add up or a failed
 *	SO_DEVMEM_DONTNEED ends it with status 1.
 *
 *   tcp-wirefuzz tx -I IFNAME -m PEER_MAC -s SRC -d DST -p PORT -g GROUPS
 *	in the peer's namespace: one connection per group (comma-separated
 *	list), spoken from a raw packet socket from address SRC, which the
 *	local stack does not own (so it neither answers nor resets what comes
 *	back). Each connection does its own handshake, then sends the pattern
 *	stream interleaved with odd segments that a seeded PRNG picks (see
 *	the groups below), tracks the receiver through its ACKs, retransmits
 *	from the last ACK when nothing moves, and ends as the group says.
 *	Odd segments either carry the right stream bytes (whatever the
 *	receiver makes of them, the stream stays right) or carry wrong bytes
 *	where TCP must drop them (bad checksum, unexpected MD5 option, PAWS,
 *	out of window, already acknowledged, SYN in the window, overlapping IP
 *	fragments). One line per connection with what was sent and counted:
 *	  conn I GROUP: sent B bytes, end E; csum N md5opt N paws N
 *	  frags N overlaps N zwdrop N md5bad N md5none N zwin N
 *
 * Exit status: 0 success, 1 failure, 2 usage.
 */
#include <linux/uio.h>
#define __iovec_defined 1
#include <stddef.h>
#include <linux/tcp.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PROG	"tcp-wirefuzz"

#include "../lib/die.h"
#include "../lib/size.h"
#include "../lib/devmem.h"
#include "../lib/listen.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ================================================================ rx */

#define IOV_LEN		(256 * 1024)
#define CTRL_LEN	(CMSG_SPACE(sizeof(struct dmabuf_cmsg)) * 512)

static uint8_t iov_buf[IOV_LEN];
static uint8_t ctrl[CTRL_LEN] __attribute__((aligned(8)));
/* bytes without a cmsg: a readable skb's */
static struct dm_rx rx = {
	.host_ok = true,
	.buf = iov_buf, .buf_len = sizeof(iov_buf), .ctrl = ctrl,
};

static const char *err_name(int e)
{
	switch (e) {
	case ECONNRESET: return "ECONNRESET";
	case EPIPE: return "EPIPE";
	case ETIMEDOUT: return "ETIMEDOUT";
	default: return strerror(e);
	}
}

static void rx_md5(int lfd, const char *spec)
{
	struct tcp_md5sig md5 = {};
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)&md5.tcpm_addr;
	char addr[64], *key;
	char mapped[80];

	snprintf(addr, sizeof(addr), "%s", spec);
	key = strchr(addr, '/');
	if (!key)
		die("--md5 ADDR/KEY");
	*key++ = 0;
	a->sin6_family = AF_INET6;
	if (strchr(addr, ':')) {
		snprintf(mapped, sizeof(mapped), "%s", addr);
	} else {
		snprintf(mapped, sizeof(mapped), "::ffff:%s", addr);
	}
	if (inet_pton(AF_INET6, mapped, &a->sin6_addr) != 1)
		die("bad address '%s'", addr);
	md5.tcpm_keylen = strlen(key);
	memcpy(md5.tcpm_key, key, md5.tcpm_keylen);
	if (setsockopt(lfd, IPPROTO_TCP, TCP_MD5SIG, &md5, sizeof(md5)))
		die("TCP_MD5SIG: %s", strerror(errno));
}

static int rx_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "port", 1, NULL, 'p' }, { "conns", 1, NULL, 'c' },
		{ "seed", 1, NULL, 'S' }, { "ready", 1, NULL, 'r' },
		{ "md5", 1, NULL, 'M' }, { "no-oobinline", 0, NULL, 'U' },
		{ "reply", 1, NULL, 'R' }, { "rcvbuf", 1, NULL, 'B' },
		{ "pause", 1, NULL, 'P' }, {}
	};
	const char *ready = NULL, *md5 = NULL, *pause_file = NULL;
	uint64_t seed = 1, conns = 1, reply = 0, pause_at = 0;
	int port = 0, rcvbuf = 0, c, lfd, fd, one = 1, zero = 0;
	bool inline_urg = true;
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };
	uint64_t i;

	while ((c = getopt_long(argc, argv, "p:c:S:r:", lo, NULL)) != -1) {
		switch (c) {
		case 'p': port = size_arg(optarg); break;
		case 'c': conns = size_arg(optarg); break;
		case 'S': seed = size_arg(optarg); break;
		case 'r': ready = optarg; break;
		case 'M': md5 = optarg; break;
		case 'U': inline_urg = false; break;
		case 'R': reply = size_arg(optarg); break;
		case 'B': rcvbuf = size_arg(optarg); break;
		case 'P': {
			char *colon = strchr(optarg, ':');

			if (!colon)
				die("--pause BYTES:FILE");
			*colon = 0;
			pause_at = size_arg(optarg);
			pause_file = colon + 1;
			break;
		}
		default: return 2;
		}
	}
	if (!port || optind != argc)
		return 2;
	dm_rx_env(&rx);
	dm_rx_map(&rx);

	lfd = socket(AF_INET6, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	/* urgent bytes stay in the stream, wherever they landed */
	if (inline_urg &&
	    setsockopt(lfd, SOL_SOCKET, SO_OOBINLINE, &one, sizeof(one)))
		die("SO_OOBINLINE: %s", strerror(errno));
	if (rcvbuf &&
	    setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)))
		die("SO_RCVBUF: %s", strerror(errno));
	if (md5)
		rx_md5(lfd, md5);
	sa.sin6_port = htons(port);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 8))
		die("listen on port %d: %s", port, strerror(errno));
	ready_file(ready);
	for (i = 0; i < conns; i++) {
		const char *end = "eof";
		bool paused = false;
		ssize_t n;

		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			die("accept: %s", strerror(errno));
		rx.off = rx.linear = rx.dmabuf = rx.host = 0;
		rx.base = (seed + i) * PATTERN_GOLDEN;
		if (reply) {
			static uint8_t buf[65536];

			if (reply > sizeof(buf))
				die("--reply too big");
			pattern_fill(rx.base, 0, buf, reply);
			n = send(fd, buf, reply, MSG_DONTWAIT);
			if (n != (ssize_t)reply)
				die("reply: %zd of %" PRIu64 " bytes sent: %s",
				    n, reply, strerror(errno));
		}
		for (;;) {
			if (pause_file && !paused && rx.off >= pause_at) {
				double end = now_ms() + 120000;
				struct stat st;

				/* read nothing until the sender says so */
				while (stat(pause_file, &st)) {
					if (now_ms() > end)
						die("%s did not appear", pause_file);
					usleep(10000);
				}
				paused = true;
			}
			/* bytes checked, tokens given back */
			n = dm_rx_recv(&rx, fd, 0, CTRL_LEN, NULL);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				end = err_name(errno);
				break;
			}
			if (!n)
				break;
		}
		printf("conn %" PRIu64 ": %" PRIu64 " bytes (linear %" PRIu64
		       ", dmabuf %" PRIu64 ", host %" PRIu64 "), end %s\n", i,
		       rx.off, rx.linear, rx.dmabuf, rx.host, end);
		fflush(stdout);
		close(fd);
	}
	close(lfd);
	return 0;
}

/* ================================================================ MD5 */

struct md5 {
	uint32_t h[4];
	uint8_t buf[64];
	uint64_t len;
};

static const uint32_t md5_k[64] = {
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a,
	0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
	0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
	0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8,
	0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
	0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
	0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
	0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
	0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};
static const uint8_t md5_r[64] = {
	7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
	5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
	4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
	6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
};

static void md5_block(struct md5 *m, const uint8_t *p)
{
	uint32_t w[16], a = m->h[0], b = m->h[1], c = m->h[2], d = m->h[3];
	uint32_t f, g, t;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = p[i * 4] | p[i * 4 + 1] << 8 | p[i * 4 + 2] << 16 |
		       (uint32_t)p[i * 4 + 3] << 24;
	for (i = 0; i < 64; i++) {
		if (i < 16) {
			f = (b & c) | (~b & d);
			g = i;
		} else if (i < 32) {
			f = (d & b) | (~d & c);
			g = (5 * i + 1) % 16;
		} else if (i < 48) {
			f = b ^ c ^ d;
			g = (3 * i + 5) % 16;
		} else {
			f = c ^ (b | ~d);
			g = (7 * i) % 16;
		}
		t = d;
		d = c;
		c = b;
		f += a + md5_k[i] + w[g];
		b += (f << md5_r[i]) | (f >> (32 - md5_r[i]));
		a = t;
	}
	m->h[0] += a;
	m->h[1] += b;
	m->h[2] += c;
	m->h[3] += d;
}

static void md5_init(struct md5 *m)
{
	m->h[0] = 0x67452301;
	m->h[1] = 0xefcdab89;
	m->h[2] = 0x98badcfe;
	m->h[3] = 0x10325476;
	m->len = 0;
}

static void md5_add(struct md5 *m, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len--) {
		m->buf[m->len++ % 64] = *p++;
		if (m->len % 64 == 0)
			md5_block(m, m->buf);
	}
}

static void md5_final(struct md5 *m, uint8_t out[16])
{
	uint64_t bits = m->len * 8;
	uint8_t pad = 0x80, z = 0, l[8];
	int i;

	md5_add(m, &pad, 1);
	while (m->len % 64 != 56)
		md5_add(m, &z, 1);
	for (i = 0; i < 8; i++)
		l[i] = bits >> (8 * i);
	md5_add(m, l, 8);
	for (i = 0; i < 4; i++) {
		out[i * 4] = m->h[i];
		out[i * 4 + 1] = m->h[i] >> 8;
		out[i * 4 + 2] = m->h[i] >> 16;
		out[i * 4 + 3] = m->h[i] >> 24;
	}
}

/* ================================================================ tx */

static uint64_t prng;

static uint64_t rnd(void)
{
	prng += PATTERN_GOLDEN;
	return mix64(prng);
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

enum end_kind { END_FIN, END_RST, END_FINRST, END_DATARST };
static const char *const end_names[] = { "fin", "rst", "finrst", "datarst" };

/* What a group of odd segments does; one connection each. */
struct group {
	const char *name;
	uint32_t mss;			/* in our SYN; 0: none */
	bool ts, sack, ws;
	int actions;			/* number of PRNG picks */
	const char *mix;		/* odd actions to pick among, one letter each */
	enum end_kind end;
	bool md5, zwin;
};

/*
 * Actions (letters in a group's mix; "d" is a clean new segment):
 *   o  new data with one option of every kind in turn, lengths odd too
 *	(kind 19 well formed: no key here, so dropped; wrong bytes)
 *   c  new data, bad checksum, wrong bytes
 *   a  data already acknowledged, wrong bytes
 *   l  overlap: before the last ACK wrong bytes, after it right ones
 *   q  out of order: right bytes a little ahead
 *   w  out of window (2^30 ahead or behind), wrong bytes
 *   u  URG: pointer in the segment, past it, at 0 or 65535
 *   f  new data in IPv4 fragments, in a random order (duplicates too)
 *   v  overlapping IPv4 fragments, wrong bytes in the overlap: dropped
 *   p  window probes: zero-length at ACK-1, pure ACK
 *   s  pure ACK with SACK blocks with edge values
 *   t  tiny segments of 1-3 bytes
 *   P  PAWS: an old timestamp, wrong bytes
 *   y  SYN inside the window, wrong bytes (challenge ACK)
 *   r  RST with an inexact sequence number (ignored or challenged)
 */
static const struct group groups[] = {
	{ "options", 1460, true, true, true, 500, "ddoooooost", END_FIN, false, false },
	{ "csum", 1200, false, true, false, 300, "dddccaalq", END_RST, false, false },
	{ "retrans", 1000, true, true, true, 400, "ddallqqqwwppt", END_FIN, false, false },
	{ "urgent", 1460, true, false, true, 300, "dduuuuql", END_FINRST, false, false },
	{ "frags", 1400, false, true, false, 250, "dddffffvvc", END_DATARST, false, false },
	{ "edges", 536, true, true, true, 400, "ddsssPPyyrrrpw", END_FIN, false, false },
	{ "tinymss", 48, false, false, false, 300, "ddtqlfcu", END_RST, false, false },
	{ "mixed", 1460, false, true, true, 600, "ddoculqwfvpstPyr", END_FIN, false, false },
	{ "v6", 1440, true, true, true, 400, "ddoculqwpstPyr", END_FIN, false, false },
	{ "strict-urgent", 1460, false, false, false, 200, "du", END_FIN, false, false },
	{ "md5", 1400, false, false, false, 0, "", END_RST, true, false },
	{ "zerowin", 1460, false, false, true, 100, "ddp", END_FIN, false, true },
};

struct counts {
	uint64_t csum, md5opt, paws, frags, overlaps, zwdrop, md5bad,
		 md5none, zwin;
};

static struct {
	int fd, ifindex, v6;
	uint8_t mac[6];
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint16_t ipid;
	const char *md5key;
	const char *resume;
} tx;

/* One connection's state, in offsets of the stream (0 = first byte). */
struct conn {
	uint32_t isn, peer_isn;
	uint64_t una, nxt, max, total_cap;
	uint32_t peer_nxt;		/* peer's sequence we have, contiguous */
	uint32_t win;			/* peer's window, scaled */
	int peer_ws;
	bool ts, sack, ws_ok;
	uint32_t tsval, tsecr;
	uint32_t ack_hold;		/* 0: ACK what we have; else this */
	uint32_t mss;
	bool have_synack, peer_fin, peer_rst, saw_zero_win;
	uint64_t base;
	uint32_t sacks[8];
	int nsacks;
	double last_progress;
	struct counts n;
};

static uint32_t csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (; len > 1; len -= 2, p += 2)
		sum += p[0] << 8 | p[1];
	if (len)
		sum += p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }
static uint16_t get16(const uint8_t *p) { return p[0] << 8 | p[1]; }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }

static void send_raw(const uint8_t *pkt, size_t len)
{
	struct sockaddr_ll ll = {
		.sll_family = AF_PACKET, .sll_ifindex = tx.ifindex,
		.sll_protocol = htons(tx.v6 ? ETH_P_IPV6 : ETH_P_IP),
		.sll_halen = 6,
	};

	memcpy(ll.sll_addr, tx.mac, 6);
	if (sendto(tx.fd, pkt, len, 0, (struct sockaddr *)&ll, sizeof(ll)) !=
	    (ssize_t)len)
		die("sendto: %s", strerror(errno));
}

/* A segment to send. */
struct seg {
	uint8_t flags;
	uint32_t seq, ack;		/* on the wire */
	uint16_t win, urg;
	uint8_t opts[40];
	int optlen;
	const uint8_t *data;
	size_t len;
	bool bad_csum, md5, md5_wrong;
	int frag;			/* 0: none, 1: fragments, 2: overlapping */
};

#define F_FIN	0x01
#define F_SYN	0x02
#define F_RST	0x04
#define F_PSH	0x08
#define F_ACK	0x10
#define F_URG	0x20

/* The TCP-MD5 signature (RFC 2385) of a TCP header @th (20 bytes used)
 * and its payload @data, into @out.
 */
static void md5_sign(const uint8_t *th, size_t tcplen, const uint8_t *data,
		     size_t len, const char *key, uint8_t out[16])
{
	uint8_t ph[40] = {}, h[20];
	struct md5 m;

	md5_init(&m);
	if (tx.v6) {
		memcpy(ph, tx.src, 16);
		memcpy(ph + 16, tx.dst, 16);
		put32(ph + 32, tcplen);
		ph[39] = IPPROTO_TCP;
		md5_add(&m, ph, 40);
	} else {
		memcpy(ph, tx.src, 4);
		memcpy(ph + 4, tx.dst, 4);
		ph[9] = IPPROTO_TCP;
		put16(ph + 10, tcplen);
		md5_add(&m, ph, 12);
	}
	memcpy(h, th, 20);
	h[16] = h[17] = 0;
	md5_add(&m, h, 20);
	md5_add(&m, data, len);
	md5_add(&m, key, strlen(key));
	md5_final(&m, out);
}

static void send_v4_frags(const uint8_t *ip, size_t len, bool overlap);

static void send_seg(struct seg *s)
{
	static uint8_t pkt[70000];
	uint8_t *th, *o;
	size_t iphl = tx.v6 ? 40 : 20, thl, tcplen;
	uint32_t sum;

	if (s->md5) {
		/* NOP NOP kind 19 len 18, ahead of the others */
		memmove(s->opts + 20, s->opts, s->optlen);
		s->opts[0] = s->opts[1] = 1;
		s->opts[2] = 19;
		s->opts[3] = 18;
		s->optlen += 20;
	}
	while (s->optlen % 4)
		s->opts[s->optlen++] = 0;
	thl = 20 + s->optlen;
	tcplen = thl + s->len;
	th = pkt + iphl;
	memset(pkt, 0, iphl + thl);
	put16(th, tx.sport);
	put16(th + 2, tx.dport);
	put32(th + 4, s->seq);
	put32(th + 8, s->ack);
	th[12] = (thl / 4) << 4;
	th[13] = s->flags;
	put16(th + 14, s->win);
	put16(th + 18, s->urg);
	memcpy(th + 20, s->opts, s->optlen);
	memcpy(th + thl, s->data, s->len);
	if (s->md5) {
		o = th + 24;
		md5_sign(th, tcplen, s->data, s->len, tx.md5key, o);
		if (s->md5_wrong)
			o[5] ^= 0x40;
	}
	if (tx.v6) {
		pkt[0] = 0x60;
		put16(pkt + 4, tcplen);
		pkt[6] = IPPROTO_TCP;
		pkt[7] = 64;
		memcpy(pkt + 8, tx.src, 16);
		memcpy(pkt + 24, tx.dst, 16);
		sum = csum_add(0, tx.src, 16);
		sum = csum_add(sum, tx.dst, 16);
		sum += tcplen + IPPROTO_TCP;
	} else {
		pkt[0] = 0x45;
		put16(pkt + 2, iphl + tcplen);
		put16(pkt + 4, ++tx.ipid);
		pkt[8] = 64;
		pkt[9] = IPPROTO_TCP;
		memcpy(pkt + 12, tx.src, 4);
		memcpy(pkt + 16, tx.dst, 4);
		put16(pkt + 10, csum_fold(csum_add(0, pkt, 20)));
		sum = csum_add(0, tx.src, 4);
		sum = csum_add(sum, tx.dst, 4);
		sum += tcplen + IPPROTO_TCP;
	}
	sum = csum_add(sum, th, tcplen);
	put16(th + 16, csum_fold(sum) ^ (s->bad_csum ? 0x0100 : 0));
	if (s->frag && !tx.v6)
		send_v4_frags(pkt, iphl + tcplen, s->frag == 2);
	else
		send_raw(pkt, iphl + tcplen);
}

/* An IPv4 datagram @ip in fragments of multiples of 8 bytes, in a PRNG
 * order with the odd duplicate; with @overlap two fragments only, the
 * second overlapping the first with other bytes, which drops the
 * datagram when it arrives (nothing of it is left to time out).
 */
static void send_v4_frags(const uint8_t *ip, size_t len, bool overlap)
{
	static uint8_t f[4][1600];
	size_t flen[4], plen = len - 20, off = 0, piece;
	int nf = 0, order[4] = { 0, 1, 2, 3 }, i, j, t;

	++tx.ipid;
	if (overlap) {
		piece = plen / 2 & ~7UL;
		if (!piece)
			piece = 8;
		for (i = 0; i < 2; i++) {
			size_t o = i ? piece - 8 : 0;
			size_t l = i ? plen - o : piece;

			memcpy(f[i], ip, 20);
			memcpy(f[i] + 20, ip + 20 + o, l);
			if (i)	/* the overlap says something else */
				for (j = 0; j < 8; j++)
					f[i][20 + j] ^= 0x5a;
			put16(f[i] + 2, 20 + l);
			put16(f[i] + 4, tx.ipid);
			put16(f[i] + 6, (o / 8) | (i ? 0 : 0x2000));
			f[i][10] = f[i][11] = 0;
			put16(f[i] + 10, csum_fold(csum_add(0, f[i], 20)));
			send_raw(f[i], 20 + l);
		}
		return;
	}
	nf = 2 + rnd_below(3);
	piece = ((plen + nf - 1) / nf + 7) & ~7UL;
	for (nf = 0; off < plen; nf++, off += piece) {
		size_t l = plen - off < piece ? plen - off : piece;

		memcpy(f[nf], ip, 20);
		memcpy(f[nf] + 20, ip + 20 + off, l);
		put16(f[nf] + 2, 20 + l);
		put16(f[nf] + 4, tx.ipid);
		put16(f[nf] + 6, (off / 8) | (off + l < plen ? 0x2000 : 0));
		f[nf][10] = f[nf][11] = 0;
		put16(f[nf] + 10, csum_fold(csum_add(0, f[nf], 20)));
		flen[nf] = 20 + l;
	}
	for (i = nf - 1; i > 0; i--) {
		j = rnd_below(i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < nf; i++) {
		send_raw(f[order[i]], flen[order[i]]);
		/* an exact duplicate is ignored (not of the last one to
		 * arrive: that would start a datagram of its own)
		 */
		if (i < nf - 1 && !rnd_below(5))
			send_raw(f[order[i]], flen[order[i]]);
	}
}

/* ---- what comes back ---- */

static void conn_ack_opts(struct conn *c, struct seg *s)
{
	if (c->ts) {
		uint8_t *o = s->opts + s->optlen;

		o[0] = 1;
		o[1] = 1;
		o[2] = 8;
		o[3] = 10;
		put32(o + 4, ++c->tsval);
		put32(o + 8, c->tsecr);
		s->optlen += 12;
	}
}

static uint32_t our_ack(struct conn *c)
{
	return c->ack_hold ? c->ack_hold : c->peer_nxt;
}

static void seg_init(struct conn *c, struct seg *s, uint8_t flags)
{
	memset(s, 0, sizeof(*s));
	s->flags = flags | F_ACK;
	s->ack = our_ack(c);
	s->win = 65535;
	s->md5 = tx.md5key != NULL;
	conn_ack_opts(c, s);
}

static void send_ack(struct conn *c)
{
	struct seg s;

	seg_init(c, &s, 0);
	s.seq = c->isn + 1 + c->nxt;
	send_seg(&s);
}

/* Take one packet if it is for us: 1, else 0. */
static int rx_packet(struct conn *c, const uint8_t *p, size_t len, bool syn)
{
	const uint8_t *th, *o;
	size_t thl, iphl, plen;
	uint32_t seq, ack, win;
	uint8_t flags;
	uint64_t acked;

	if (tx.v6) {
		if (len < 40 || p[0] >> 4 != 6 || p[6] != IPPROTO_TCP ||
		    memcmp(p + 8, tx.dst, 16) || memcmp(p + 24, tx.src, 16))
			return 0;
		iphl = 40;
	} else {
		if (len < 20 || p[0] >> 4 != 4 || p[9] != IPPROTO_TCP ||
		    memcmp(p + 12, tx.dst, 4) || memcmp(p + 16, tx.src, 4))
			return 0;
		iphl = (p[0] & 15) * 4;
		len = get16(p + 2);
	}
	th = p + iphl;
	if (len < iphl + 20 || get16(th) != tx.dport || get16(th + 2) != tx.sport)
		return 0;
	thl = (th[12] >> 4) * 4;
	if (thl < 20 || len < iphl + thl)
		return 0;
	plen = len - iphl - thl;
	seq = get32(th + 4);
	ack = get32(th + 8);
	flags = th[13];
	win = get16(th + 14);
	if (flags & F_RST) {
		c->peer_rst = true;
		return 1;
	}
	if (syn) {
		if ((flags & (F_SYN | F_ACK)) != (F_SYN | F_ACK) ||
		    ack != c->isn + 1)
			return 1;
		c->peer_isn = seq;
		c->peer_nxt = seq + 1;
		c->have_synack = true;
	}
	/* options: window scale, timestamp, SACK blocks */
	c->nsacks = 0;
	for (o = th + 20; o < th + thl;) {
		if (*o == 0)
			break;
		if (*o == 1) {
			o++;
			continue;
		}
		if (o + 1 >= th + thl || o[1] < 2 || o + o[1] > th + thl)
			break;
		if (*o == 3 && o[1] == 3 && syn)
			c->peer_ws = o[2] > 14 ? 14 : o[2];
		if (*o == 8 && o[1] == 10)
			c->tsecr = get32(o + 2);
		if (*o == 5)
			for (c->nsacks = 0; c->nsacks < (o[1] - 2) / 4 &&
			     c->nsacks < 8; c->nsacks++)
				c->sacks[c->nsacks] = get32(o + 2 + 4 * c->nsacks);
		o += o[1];
	}
	if (syn) {
		if (!c->ws_ok)
			c->peer_ws = 0;
		c->win = win;
		return 1;
	}
	/* the peer's data (its reply) and FIN, in order only */
	if (plen && seq == c->peer_nxt)
		c->peer_nxt += plen;
	if ((flags & F_FIN) && seq + plen == c->peer_nxt) {
		c->peer_nxt++;
		c->peer_fin = true;
	}
	if (!(flags & F_ACK))
		return 1;
	acked = (uint32_t)(ack - c->isn - 1);
	if (acked > c->una && acked <= c->max + 1) {
		c->una = acked;
		if (c->nxt < c->una)
			c->nxt = c->una;
		c->last_progress = now_ms();
	}
	if (acked == c->una) {
		c->win = win << c->peer_ws;
		if (!c->win)
			c->saw_zero_win = true;
	}
	if (plen || (flags & F_FIN))
		send_ack(c);
	return 1;
}

/* Read what has arrived for up to @ms milliseconds (0: only what is
 * there); stop early once @until says so.
 */
static void pump(struct conn *c, int ms, bool syn, bool (*until)(struct conn *))
{
	static uint8_t buf[70000];
	struct sockaddr_ll ll;
	socklen_t sl;
	double end = now_ms() + ms;
	struct pollfd pfd = { .fd = tx.fd, .events = POLLIN };
	ssize_t n;
	int left;

	for (;;) {
		if (until && until(c))
			return;
		left = end - now_ms();
		if (left < 0)
			left = 0;
		if (poll(&pfd, 1, left) <= 0)
			return;
		sl = sizeof(ll);
		n = recvfrom(tx.fd, buf, sizeof(buf), MSG_DONTWAIT,
			     (struct sockaddr *)&ll, &sl);
		if (n <= 0)
			continue;
		if (ll.sll_pkttype == PACKET_OUTGOING)
			continue;
		rx_packet(c, buf, n, syn);
		if (syn && c->have_synack)
			return;
	}
}

/* ---- sending the stream ---- */

static uint8_t data_buf[65536];

static const uint8_t *stream(struct conn *c, uint64_t off, size_t len)
{
	pattern_fill(c->base, off, data_buf, len);
	return data_buf;
}

static const uint8_t *wrong(struct conn *c, uint64_t off, size_t len)
{
	size_t i;

	pattern_fill(c->base, off, data_buf, len);
	for (i = 0; i < len; i++)
		data_buf[i] ^= 0xa5;
	return data_buf;
}

/* A data segment [off, off + len) with the right bytes. */
static void data_seg(struct conn *c, struct seg *s, uint64_t off, size_t len)
{
	s->seq = c->isn + 1 + off;
	s->data = stream(c, off, len);
	s->len = len;
	if (off + len > c->max)
		c->max = off + len;
}

/* The most payload a segment carries: the MSS we offered, and what
 * fits in a 1500-byte packet with 40 bytes of options.
 */
static size_t maxpay(struct conn *c)
{
	size_t cap = tx.v6 ? 1380 : 1400, mss = c->mss ? c->mss : 536;

	return mss < cap ? mss : cap;
}

static size_t seg_len(struct conn *c)
{
	return 1 + rnd_below(maxpay(c));
}

/* Data in flight stays under INFLIGHT segments: a burst longer than the
 * receiver's backlog or rx ring would lose packets, and with them the
 * exact counts of what it dropped on purpose.
 */
#define INFLIGHT	16

static bool nocap;	/* the receiver reads nothing: no backlog to fill */

static uint64_t inflight_cap(struct conn *c)
{
	return nocap ? c->win : INFLIGHT * maxpay(c);
}

static bool window_room(struct conn *c, size_t len)
{
	return c->nxt + len <= c->una + c->win &&
	       c->nxt + len <= c->una + inflight_cap(c);
}

static bool all_acked(struct conn *c)
{
	return c->una == c->nxt && c->una == c->max;
}

static uint64_t una_seen;

static bool una_changed(struct conn *c)
{
	return c->una != una_seen;
}

/* Send clean segments from @from on, as much as the window takes. */
static void send_clean(struct conn *c, uint64_t from, uint64_t to)
{
	struct seg s;
	size_t len;

	uint64_t edge = c->una + c->win;

	if (edge > c->una + inflight_cap(c))
		edge = c->una + inflight_cap(c);
	while (from < to && from < edge) {
		len = maxpay(c);
		if (len > to - from)
			len = to - from;
		if (from + len > edge)
			len = edge - from;
		seg_init(c, &s, F_PSH);
		data_seg(c, &s, from, len);
		send_seg(&s);
		from += len;
	}
	if (from > c->nxt)
		c->nxt = from;
}

/* Wait until everything sent is acknowledged, going back to the last
 * ACK whenever nothing moves for a while.
 */
static void settle(struct conn *c)
{
	double deadline = now_ms() + 30000;

	while (!all_acked(c)) {
		if (c->peer_rst)
			die("peer reset the connection");
		if (now_ms() > deadline)
			die("no ACK for offset %" PRIu64 " of %" PRIu64
			    " within 30 s", c->una, c->max);
		una_seen = c->una;
		pump(c, 200, false, una_changed);
		if (c->una == una_seen) {
			c->nxt = c->una;
			send_clean(c, c->una, c->max);
		}
	}
}

/* One new clean segment; waits for room in the window. */
static void new_data(struct conn *c, size_t len)
{
	struct seg s;
	double deadline = now_ms() + 30000;

	while (!window_room(c, len)) {
		if (c->peer_rst)
			die("peer reset the connection");
		if (now_ms() > deadline)
			die("window stays shut at offset %" PRIu64, c->una);
		una_seen = c->una;
		pump(c, 200, false, una_changed);
		if (c->una == una_seen && !window_room(c, len)) {
			c->nxt = c->una;
			send_clean(c, c->una, c->max);
			if (c->win && len > c->win)
				len = c->win;
		}
	}
	seg_init(c, &s, F_PSH);
	data_seg(c, &s, c->nxt, len);
	send_seg(&s);
	c->nxt += len;
}

/* The next option of the every-kind walk, into @s; returns true when the
 * segment must be dropped (a well-formed MD5 option without a key).
 */
static bool add_fuzz_option(struct conn *c, struct seg *s)
{
	static unsigned int kind;
	static unsigned int md5_visits;
	uint8_t *o = s->opts + s->optlen;
	int room = 40 - s->optlen, len, i;
	unsigned int k = kind++ % 256;
	bool drop = false;

	if (room < 4)
		return false;
	switch (rnd_below(4)) {
	case 0:		/* the option's own length, where it has one */
		len = k == 2 ? 4 : k == 3 ? 3 : k == 4 ? 2 : k == 8 ? 10 :
		      k == 5 ? 2 + 8 * (1 + rnd_below(3)) : k == 19 ? 18 :
		      k == 28 ? 4 : k == 34 ? 2 + 8 : 2 + rnd_below(8);
		break;
	case 1:		/* too short */
		len = rnd_below(2);
		break;
	case 2:		/* past the header */
		len = room + 1 + rnd_below(20);
		break;
	default:	/* anything */
		len = rnd_below(256);
		break;
	}
	if (k == 8 && c->ts)
		len = 2 + rnd_below(8);	/* a real one would be a PAWS game */
	/* MD5: well formed at every other visit, odd lengths between */
	if (k == 19 && md5_visits++ % 2 == 0)
		len = 18;
	if (k == 19 && len == 18 && room < 18)
		len = 2;
	o[0] = k;
	if (k <= 1) {
		s->optlen += 1;
		return false;
	}
	o[1] = len;
	for (i = 2; i < room && i < (len > 2 ? len : 2); i++)
		o[i] = rnd();
	if (k == 5 && len >= 10)	/* SACK blocks with edge values */
		for (i = 2; i + 8 <= len && i + 8 <= room; i += 8) {
			put32(o + i, c->peer_isn + rnd_below(3) - 1);
			put32(o + i + 4, rnd_below(2) ? 0xffffffff : c->peer_nxt);
		}
	if (k == 19 && len == 18) {
		drop = true;
		c->n.md5opt++;
	}
	s->optlen += len >= 2 && len <= room ? len : room;
	return drop;
}

static void act(struct conn *c, char a, const struct group *g)
{
	struct seg s;
	size_t len = seg_len(c), i;
	uint64_t off;

	switch (a) {
	case 'd':
		new_data(c, len);
		break;
	case 'o':
		if (!window_room(c, len)) {
			new_data(c, len);
			break;
		}
		seg_init(c, &s, F_PSH);
		if (add_fuzz_option(c, &s)) {
			s.seq = c->isn + 1 + c->nxt;
			s.data = wrong(c, c->nxt, len);
			s.len = len;
		} else {
			data_seg(c, &s, c->nxt, len);
			c->nxt += len;
		}
		send_seg(&s);
		break;
	case 'c':
		seg_init(c, &s, F_PSH);
		s.seq = c->isn + 1 + c->nxt;
		s.data = wrong(c, c->nxt, len);
		s.len = len;
		s.bad_csum = true;
		send_seg(&s);
		c->n.csum++;
		break;
	case 'a':
		if (c->una < 2)
			break;
		len = 1 + rnd_below(c->una < len ? c->una : len);
		off = c->una - len;
		off -= rnd_below(off < 4000 ? off + 1 : 4000);
		seg_init(c, &s, F_PSH);
		s.seq = c->isn + 1 + off;
		s.data = wrong(c, off, len);
		s.len = len;
		send_seg(&s);
		break;
	case 'l':
		if (!c->una || !window_room(c, len))
			break;
		off = c->una - 1 - rnd_below(c->una < 500 ? c->una : 500);
		len = c->una - off + 1 + rnd_below(500);
		if (len > maxpay(c))
			len = maxpay(c);
		if (off + len <= c->una || off + len > c->una + c->win)
			break;
		seg_init(c, &s, F_PSH);
		data_seg(c, &s, off, len);
		/* what the receiver has ACKed it keeps: corrupt that part */
		for (i = 0; i < c->una - off; i++)
			data_buf[i] ^= 0x3c;
		send_seg(&s);
		break;
	case 'q':
		off = c->nxt + 1 + rnd_below(2 * maxpay(c));
		if (off + len > c->una + c->win)
			break;
		seg_init(c, &s, F_PSH);
		data_seg(c, &s, off, len);
		send_seg(&s);
		break;
	case 'w':
		seg_init(c, &s, F_PSH);
		off = c->una + (rnd_below(2) ? (1ULL << 30) : -(1ULL << 30));
		s.seq = c->isn + 1 + (uint32_t)off;
		s.data = wrong(c, 0, len);
		s.len = len;
		send_seg(&s);
		break;
	case 'u':
		if (!window_room(c, len)) {
			new_data(c, len);
			break;
		}
		seg_init(c, &s, F_PSH | F_URG);
		data_seg(c, &s, c->nxt, len);
		if (!strcmp(g->name, "strict-urgent"))
			s.urg = 1 + rnd_below(len);	/* inside: byte urg - 1 */
		else
			switch (rnd_below(4)) {
			case 0: s.urg = 1 + rnd_below(len); break;
			case 1: s.urg = len + 1 + rnd_below(3000); break;
			case 2: s.urg = 0; break;
			default: s.urg = 65535; break;
			}
		send_seg(&s);
		c->nxt += len;
		break;
	case 'f':
	case 'v':
		if (tx.v6) {
			new_data(c, len);
			break;
		}
		if (len < 64)
			len = 64;
		if (!window_room(c, len))
			break;
		seg_init(c, &s, F_PSH);
		s.frag = a == 'f' ? 1 : 2;
		if (a == 'v') {
			s.seq = c->isn + 1 + c->nxt;
			s.data = wrong(c, c->nxt, len);
			s.len = len;
			c->n.overlaps++;
		} else {
			data_seg(c, &s, c->nxt, len);
			c->nxt += len;
			c->n.frags++;
		}
		send_seg(&s);
		break;
	case 'p':
		seg_init(c, &s, 0);
		s.seq = c->isn + 1 + c->una - 1;
		send_seg(&s);
		send_ack(c);
		break;
	case 's':
		seg_init(c, &s, 0);
		s.seq = c->isn + 1 + c->nxt;
		{
			uint8_t *o = s.opts + s.optlen;
			int nb = 1 + rnd_below((40 - s.optlen - 4) / 8);
			uint32_t e[] = { c->peer_isn, c->peer_isn + 1,
					 c->peer_nxt, c->peer_nxt - 1,
					 c->peer_nxt + 1, 0, 0xffffffff,
					 c->peer_isn + 0x80000000 };

			o[0] = o[1] = 1;
			o[2] = 5;
			o[3] = 2 + 8 * nb;
			for (i = 0; i < (size_t)nb; i++) {
				put32(o + 4 + 8 * i, e[rnd_below(8)]);
				put32(o + 8 + 8 * i, e[rnd_below(8)]);
			}
			s.optlen += 4 + 8 * nb;
		}
		send_seg(&s);
		break;
	case 't':
		for (i = 0; i < 3; i++)
			new_data(c, 1 + rnd_below(3));
		break;
	case 'P':
		if (!c->ts)
			break;
		seg_init(c, &s, F_PSH);
		put32(s.opts + 4, c->tsval - 1000000);
		s.seq = c->isn + 1 + c->nxt;
		s.data = wrong(c, c->nxt, len);
		s.len = len;
		send_seg(&s);
		c->n.paws++;
		break;
	case 'y':
		seg_init(c, &s, F_SYN);
		s.seq = c->isn + 1 + c->nxt + rnd_below(100);
		s.data = wrong(c, c->nxt, len);
		s.len = len;
		send_seg(&s);
		break;
	case 'r':
		seg_init(c, &s, F_RST);
		s.flags &= ~(rnd_below(2) ? F_ACK : 0);
		/* never the exact sequence number: at least one past all sent */
		off = c->max + 1 + (rnd_below(2) ? rnd_below(2000) : (1ULL << 30));
		s.seq = c->isn + 1 + (uint32_t)off;
		send_seg(&s);
		break;
	}
	if (c->nxt > c->max)
		c->max = c->nxt;
}

static bool got_synack(struct conn *c) { return c->have_synack; }
static bool got_fin(struct conn *c) { return c->peer_fin; }

static void handshake(struct conn *c, const struct group *g)
{
	struct seg s;
	int tries;

	for (tries = 0; tries < 10 && !c->have_synack; tries++) {
		memset(&s, 0, sizeof(s));
		s.flags = F_SYN;
		s.seq = c->isn;
		s.win = 65535;
		s.md5 = tx.md5key != NULL;
		if (g->mss) {
			s.opts[s.optlen++] = 2;
			s.opts[s.optlen++] = 4;
			put16(s.opts + s.optlen, g->mss);
			s.optlen += 2;
		}
		if (g->sack) {
			s.opts[s.optlen++] = 1;
			s.opts[s.optlen++] = 1;
			s.opts[s.optlen++] = 4;
			s.opts[s.optlen++] = 2;
		}
		if (g->ts) {
			s.opts[s.optlen++] = 1;
			s.opts[s.optlen++] = 1;
			s.opts[s.optlen++] = 8;
			s.opts[s.optlen++] = 10;
			put32(s.opts + s.optlen, c->tsval);
			s.optlen += 8;
		}
		if (g->ws) {
			s.opts[s.optlen++] = 1;
			s.opts[s.optlen++] = 3;
			s.opts[s.optlen++] = 3;
			s.opts[s.optlen++] = 7;
		}
		send_seg(&s);
		pump(c, 1000, true, got_synack);
		if (c->peer_rst)
			die("connection refused");
	}
	if (!c->have_synack)
		die("no SYN-ACK");
	if (!c->ts)
		c->tsecr = 0;
	send_ack(c);
	c->last_progress = now_ms();
}

static void finish(struct conn *c, const struct group *g)
{
	struct seg s;
	size_t len;

	settle(c);
	/* the peer's reply is all ACKed: a held ACK is no more */
	c->ack_hold = 0;
	send_ack(c);
	switch (g->end) {
	case END_FIN:
	case END_FINRST:
		seg_init(c, &s, F_FIN);
		s.seq = c->isn + 1 + c->nxt;
		send_seg(&s);
		if (g->end == END_FINRST) {
			seg_init(c, &s, F_RST);
			s.seq = c->isn + 1 + c->nxt + 1;
			send_seg(&s);
			break;
		}
		pump(c, 30000, false, got_fin);
		if (!c->peer_fin)
			die("no FIN from the receiver");
		break;
	case END_RST:
		seg_init(c, &s, F_RST);
		s.seq = c->isn + 1 + c->nxt;
		send_seg(&s);
		break;
	case END_DATARST:
		/* data and the RST right behind it, no ACK awaited */
		len = seg_len(c);
		if (len > c->win)
			len = c->win;
		if (len) {
			seg_init(c, &s, F_PSH);
			data_seg(c, &s, c->nxt, len);
			send_seg(&s);
			c->nxt += len;
		}
		seg_init(c, &s, F_RST);
		s.seq = c->isn + 1 + c->nxt;
		send_seg(&s);
		break;
	}
}

/* The MD5 group: a key on both ends. Segments whose payload lands in
 * device memory cannot be verified and are dropped (TCPMD5Failure), the
 * same data in IPv4 fragments lands in host memory (fragments are not
 * steered) and verifies; a wrong signature and no signature are dropped.
 */
static void md5_group(struct conn *c)
{
	struct seg s;
	size_t len;
	int i;

	for (i = 0; i < 10; i++) {
		len = 200 + rnd_below(1000);
		/* unfragmented: device memory, dropped */
		seg_init(c, &s, F_PSH);
		data_seg(c, &s, c->nxt, len);
		send_seg(&s);
		c->n.md5bad++;
		/* wrongly signed pure ACK */
		seg_init(c, &s, 0);
		s.seq = c->isn + 1 + c->nxt;
		s.md5_wrong = true;
		send_seg(&s);
		c->n.md5bad++;
		/* unsigned, wrong bytes */
		seg_init(c, &s, F_PSH);
		s.md5 = false;
		s.seq = c->isn + 1 + c->nxt;
		s.data = wrong(c, c->nxt, len);
		s.len = len;
		send_seg(&s);
		c->n.md5none++;
		/* the same bytes in fragments: host memory, accepted */
		seg_init(c, &s, F_PSH);
		data_seg(c, &s, c->nxt, len);
		s.frag = 1;
		send_seg(&s);
		c->n.frags++;
		c->nxt += len;
		settle(c);
	}
}

/* Zero window: the receiver reads nothing past a point until the resume
 * file exists; send until the window shuts, probe it, then resume.
 */
static void zwin_group(struct conn *c)
{
	struct seg s;
	double deadline = now_ms() + 60000;
	int i;

	nocap = true;
	while (!c->saw_zero_win) {
		uint64_t room = c->una + c->win - c->nxt;

		if (now_ms() > deadline)
			die("the window never shut");
		if (c->una + c->win > c->nxt && room) {
			new_data(c, room < 1400 ? room : 1400);
			pump(c, 0, false, NULL);
			continue;
		}
		una_seen = c->una;
		pump(c, 200, false, una_changed);
		if (c->una == una_seen && !c->saw_zero_win) {
			c->nxt = c->una;
			send_clean(c, c->una, c->max);
		}
	}
	nocap = false;
	/* what the receiver has not taken is sent again later */
	c->nxt = c->max = c->una;
	c->n.zwin = 1;
	for (i = 0; i < 5; i++) {
		/* one byte at the edge: the zero-window drop */
		seg_init(c, &s, F_PSH);
		data_seg(c, &s, c->nxt, 1);
		send_seg(&s);
		c->n.zwdrop++;
		/* and the zero-length probe */
		seg_init(c, &s, 0);
		s.seq = c->isn + 1 + c->una - 1;
		send_seg(&s);
		pump(c, 20, false, NULL);
	}
	/* the probes' byte is not sent as far as we know */
	c->max = c->nxt;
	i = open(tx.resume, O_CREAT | O_WRONLY, 0644);
	if (i < 0)
		die("%s: %s", tx.resume, strerror(errno));
	close(i);
}

static void parse_mac(const char *s, uint8_t *mac)
{
	if (sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
		   &mac[2], &mac[3], &mac[4], &mac[5]) != 6)
		die("bad MAC address '%s'", s);
}

static int tx_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ifname", 1, NULL, 'I' }, { "mac", 1, NULL, 'm' },
		{ "src", 1, NULL, 's' }, { "dst", 1, NULL, 'd' },
		{ "port", 1, NULL, 'p' }, { "groups", 1, NULL, 'g' },
		{ "seed", 1, NULL, 'S' }, { "md5", 1, NULL, 'M' },
		{ "resume", 1, NULL, 'R' }, { "actions", 1, NULL, 'n' },
		{ "sport", 1, NULL, 'P' }, { "percent", 1, NULL, 'c' }, {}
	};
	const char *ifname = NULL, *src = NULL, *dst = NULL, *list = NULL;
	uint64_t seed = 1, i;
	int c, actions = -1, sport = 40000, percent = 100;
	struct sockaddr_ll ll = { .sll_family = AF_PACKET };
	char *copy, *name, *save = NULL;

	while ((c = getopt_long(argc, argv, "I:m:s:d:p:g:S:n:", lo, NULL)) != -1) {
		switch (c) {
		case 'I': ifname = optarg; break;
		case 'm': parse_mac(optarg, tx.mac); break;
		case 's': src = optarg; break;
		case 'd': dst = optarg; break;
		case 'p': tx.dport = size_arg(optarg); break;
		case 'g': list = optarg; break;
		case 'S': seed = size_arg(optarg); break;
		case 'M': tx.md5key = optarg; break;
		case 'R': tx.resume = optarg; break;
		case 'n': actions = size_arg(optarg); break;
		case 'P': sport = size_arg(optarg); break;
		case 'c': percent = size_arg(optarg); break;
		default: return 2;
		}
	}
	if (!ifname || !src || !dst || !tx.dport || !list || optind != argc)
		return 2;
	tx.v6 = strchr(src, ':') != NULL;
	if (inet_pton(tx.v6 ? AF_INET6 : AF_INET, src, tx.src) != 1 ||
	    inet_pton(tx.v6 ? AF_INET6 : AF_INET, dst, tx.dst) != 1)
		die("bad address");
	tx.ifindex = if_nametoindex(ifname);
	if (!tx.ifindex)
		die("%s: %s", ifname, strerror(errno));
	tx.fd = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL));
	if (tx.fd < 0)
		die("packet socket: %s", strerror(errno));
	ll.sll_protocol = htons(ETH_P_ALL);
	ll.sll_ifindex = tx.ifindex;
	if (bind(tx.fd, (struct sockaddr *)&ll, sizeof(ll)))
		die("bind to %s: %s", ifname, strerror(errno));

	copy = strdup(list);
	for (i = 0, name = strtok_r(copy, ",", &save); name;
	     i++, name = strtok_r(NULL, ",", &save)) {
		const struct group *g = NULL;
		struct conn cn = {};
		struct conn *cp = &cn;
		size_t k;
		int a, n;

		for (k = 0; k < sizeof(groups) / sizeof(groups[0]); k++)
			if (!strcmp(groups[k].name, name))
				g = &groups[k];
		if (!g)
			die("unknown group '%s'", name);
		if (g->md5 != (tx.md5key != NULL))
			die("group %s %s --md5", name, g->md5 ? "needs" : "excludes");
		if (g->zwin && !tx.resume)
			die("group %s needs --resume FILE", name);
		prng = (seed + i) * 0x2545f4914f6cdd1dULL;
		tx.sport = sport + i;
		cp->base = (seed + i) * PATTERN_GOLDEN;
		cp->isn = rnd();
		cp->tsval = 2000000 + rnd_below(100000);
		cp->ts = g->ts;
		cp->ws_ok = g->ws;
		cp->mss = g->mss;
		handshake(cp, g);
		/* SACK blocks for data of the peer's that stays unACKed */
		if (!strcmp(name, "edges"))
			cp->ack_hold = cp->peer_nxt;
		if (g->md5)
			md5_group(cp);
		if (g->zwin)
			zwin_group(cp);
		n = actions >= 0 ? actions : g->actions * percent / 100;
		for (a = 0; a < n; a++) {
			char act_c = 'd';

			if (g->mix[0])
				act_c = g->mix[rnd_below(strlen(g->mix))];
			act(cp, act_c, g);
			pump(cp, 0, false, NULL);
			if (cp->peer_rst)
				die("peer reset the connection in group %s", name);
		}
		finish(cp, g);
		printf("conn %" PRIu64 " %s: sent %" PRIu64 " bytes, end %s; csum %"
		       PRIu64 " md5opt %" PRIu64 " paws %" PRIu64 " frags %"
		       PRIu64 " overlaps %" PRIu64 " zwdrop %" PRIu64 " md5bad %"
		       PRIu64 " md5none %" PRIu64 " zwin %" PRIu64 "\n", i,
		       name, cp->max, end_names[g->end], cp->n.csum,
		       cp->n.md5opt, cp->n.paws, cp->n.frags, cp->n.overlaps,
		       cp->n.zwdrop, cp->n.md5bad, cp->n.md5none, cp->n.zwin);
		fflush(stdout);
	}
	free(copy);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 2;

	if (argc >= 2 && !strcmp(argv[1], "rx"))
		rc = rx_main(argc - 1, argv + 1);
	else if (argc >= 2 && !strcmp(argv[1], "tx"))
		rc = tx_main(argc - 1, argv + 1);
	if (rc == 2)
		fprintf(stderr, "usage: " PROG " rx -p PORT -c CONNS [-S SEED] "
			"[-r READY] [--md5 ADDR/KEY] [--no-oobinline]\n"
			"         [--reply N] [--rcvbuf N] [--pause BYTES:FILE]\n"
			"       " PROG " tx -I IFNAME -m PEER_MAC -s SRC -d DST "
			"-p PORT -g GROUP,... [-S SEED]\n"
			"         [-n ACTIONS | --percent P] [--sport N] [--md5 KEY] "
			"[--resume FILE]\n");
	return rc;
}
