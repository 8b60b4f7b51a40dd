// SPDX-License-Identifier: GPL-2.0
/*
 * tcpxfer: move N bytes over one TCP connection, in one or both directions
 * at once, and check every received byte against a deterministic pattern.
 *
 * One side listens and accepts exactly one connection, the other connects.
 * Each side then runs a sender thread and a receiver thread on the same
 * socket, so a large transfer in both directions cannot deadlock.  The
 * receiver always runs: it also checks that the peer sends no more than
 * expected (zero bytes by default) and then closes its side.
 *
 * The pattern depends only on the seed and the stream offset, never on the
 * role, so "-S N" names the same bytes in both directions:
 *
 *	byte i = byte (i % 8), little-endian, of mix64(seed * GOLDEN + i / 8)
 *
 * where mix64() is the splitmix64 finalizer.
 *
 * Exit status: 0 success, 1 transfer, socket or data failure, 2 usage.
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "../lib/pattern.h"
#include "../lib/size.h"

#define __noreturn	__attribute__((noreturn))
#define __printf(a, b)	__attribute__((format(printf, a, b)))

#define PROG		"tcpxfer"
#define CHUNK		(256 * 1024)	/* bytes per send()/recv() */
#define MAX_STOPS	8		/* --stop-at */
#define GOLDEN		PATTERN_GOLDEN
#define RETRY_NS	50000000L	/* 50 ms between refused connects */

#include "../lib/die.h"

enum mode { MODE_NONE, MODE_LISTEN, MODE_CONNECT };

struct opts {
	enum mode mode;
	int family;
	const char *addr;		/* -b (listen) or -a (connect) */
	const char *port;
	uint64_t send_bytes;
	uint64_t recv_bytes;
	uint64_t seed;
	unsigned int timeout;		/* seconds, whole run */
	unsigned int wait;		/* seconds of connect retries */
	bool quiet;
	const char *ready_file;
	bool dstopts;
	uint64_t urgent;		/* --urgent: that byte + 1; 0: none */
	uint64_t stop_at[MAX_STOPS];	/* --stop-at, increasing */
	unsigned int nstops;
	const char *md5_key;		/* --md5: TCP-MD5 with any peer */
	bool dump;
	uint64_t dump_off;
	uint64_t dump_count;
};

/* One direction of the transfer; one thread each. */
struct dir {
	int fd;
	uint64_t base;			/* seed * GOLDEN */
	uint64_t bytes;			/* to send, or expected */
	uint64_t urgent;		/* send: byte urgent - 1 with MSG_OOB */
	const uint64_t *stop_at;	/* send: SIGSTOP at these offsets */
	unsigned int nstops;
	uint64_t done;			/* progress, read on timeout */
	struct timespec start;		/* connection established */
	double secs;			/* start to last byte */
};

/* Workers report here; main waits for both or for the first failure. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int finished;
	bool failed;
} run_state = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const char usage_text[] =
"NAME\n"
"	tcpxfer - move bytes over one TCP connection and validate them\n"
"\n"
"SYNOPSIS\n"
"	tcpxfer listen [-6] [-b ADDR] -p PORT [options]\n"
"	tcpxfer connect [-6] -a ADDR -p PORT [options]\n"
"\n"
"DESCRIPTION\n"
"	listen accepts exactly one connection; connect connects to ADDR,\n"
"	retrying while it is refused for up to --wait seconds.  Then both\n"
"	sides send and receive at the same time (one thread each): the\n"
"	sender writes --send bytes of the pattern and shuts its side down;\n"
"	the receiver reads exactly --recv bytes, checks each one against\n"
"	the pattern, and then expects the peer to close.\n"
"\n"
"OPTIONS\n"
"	-6		use IPv6 (listen on :: unless -b is given)\n"
"	-b ADDR		listen: local address to bind (default any)\n"
"	-a ADDR		connect: address of the listener\n"
"	-p PORT		TCP port, 1-65535\n"
"	-s, --send BYTES\n"
"			bytes this side sends (default 0)\n"
"	-r, --recv BYTES\n"
"			bytes this side expects and validates (default 0)\n"
"	-S, --seed N	pattern seed, decimal or 0x hex (default 1);\n"
"			the sender's seed must equal the receiver's\n"
"	-t, --timeout SEC\n"
"			fail unless everything, waiting for the\n"
"			connection included, is done within SEC\n"
"			seconds (default 300)\n"
"	-w, --wait SEC	connect: retry refused connections for up to\n"
"			SEC seconds (default 10)\n"
"	-q, --quiet	print only the result lines\n"
"	--dstopts	with -6: every packet this side sends carries an\n"
"			IPv6 Destination Options header (8 bytes, one\n"
"			PadN option) between the IPv6 and the TCP\n"
"			header: a header shape a NIC's TSO engine need\n"
"			not know\n"
"	--urgent OFFSET\n"
"			send stream byte OFFSET alone with MSG_OOB (TCP\n"
"			urgent data) and the rest normally; a receiver\n"
"			without SO_OOBINLINE takes that byte out of the\n"
"			stream, so validating it needs one that keeps it\n"
"	--stop-at OFFSET\n"
"			the sender stops the process (SIGSTOP) once it\n"
"			has handed the first OFFSET bytes to send(), and\n"
"			goes on when it is continued (SIGCONT): a test's\n"
"			fixed point in the middle of the stream; up to\n"
"			8 times, each OFFSET above the one before and\n"
"			below --send\n"
"	--md5 KEY	sign and verify every segment with TCP-MD5\n"
"			(RFC 2385) using KEY (1 to 80 bytes) for any\n"
"			peer address; both sides need the same KEY\n"
"	--ready-file PATH\n"
"			listen: create PATH once the socket listens\n"
"			(remove any old PATH before starting)\n"
"	-h, --help	print this text\n"
"\n"
"	BYTES are decimal, 0x hex or 0 octal, with an optional suffix K, M or G\n"
"	(powers of 1024).\n"
"\n"
"PATTERN\n"
"	Stream byte i is byte (i % 8), little-endian, of\n"
"	splitmix64_mix(seed * 0x9E3779B97F4A7C15 + i / 8), where\n"
"	splitmix64_mix(z) is z ^= z >> 30; z *= 0xBF58476D1CE4E5B9;\n"
"	z ^= z >> 27; z *= 0x94D049BB133111EB; z ^= z >> 31 (mod 2^64).\n"
"	It does not depend on the role: use the same -S on both sides.\n"
"\n"
"OUTPUT\n"
"	On success, one line on stdout per direction that moved data,\n"
"	timed from connection establishment to the last byte:\n"
"	  sent N bytes in T s: R Mbit/s\n"
"	  received N bytes in T s: R Mbit/s, validated\n"
"	Progress notes and errors go to stderr, e.g.\n"
"	  tcpxfer: data mismatch at offset X: got 0xAA, expected 0xBB\n"
"\n"
"EXIT STATUS\n"
"	0 every direction completed and validated; 1 transfer, socket,\n"
"	data or timeout failure; 2 usage error.\n"
"\n"
"EXAMPLE\n"
"	tcpxfer listen -p 5001 -r 256M -s 256M --ready-file /tmp/ready &\n"
"	tcpxfer connect -a 127.0.0.1 -p 5001 -s 256M -r 256M\n";

/* ---- messages ---- */

static void __printf(1, 2) err_msg(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* "tcpxfer: <what>: <strerror>" for the errno in @err. */
static void sys_msg(const char *what, int err)
{
	err_msg("%s: %s", what, strerror(err));
}

static void __noreturn sys_fatal(const char *what, int err)
{
	sys_msg(what, err);
	exit(1);
}

/* ---- pattern: selftests/progs/lib/pattern.h ---- */

/* Hidden --dump OFFSET COUNT: the pattern in hex, 16 bytes a line. */
static int dump_pattern(const struct opts *o)
{
	uint64_t base = o->seed * GOLDEN;
	uint64_t i;

	for (i = 0; i < o->dump_count; i++) {
		printf("%02x", pattern_byte(base, o->dump_off + i));
		if (i % 16 == 15 || i + 1 == o->dump_count)
			putchar('\n');
		else
			putchar(' ');
	}
	return fflush(stdout) ? 1 : 0;
}

/* ---- time ---- */

static struct timespec now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts;
}

static double ts_diff(struct timespec a, struct timespec b)
{
	return (double)(a.tv_sec - b.tv_sec) + (a.tv_nsec - b.tv_nsec) / 1e9;
}

/*
 * Milliseconds left until @deadline, rounded up, for poll(); 0 once it has
 * passed.  Capped at a day: the caller polls again until it is 0.
 */
static int ms_left(struct timespec deadline)
{
	double left = ts_diff(deadline, now());

	if (left <= 0)
		return 0;
	if (left > 86400)
		return 86400 * 1000;
	return (int)(left * 1000) + 1;
}

static struct timespec ts_add(struct timespec ts, unsigned int secs)
{
	ts.tv_sec += secs;
	return ts;
}

/* ---- argument parsing ---- */

static bool parse_u64(const char *s, uint64_t *val, int base)
{
	char *end;

	if (!(*s >= '0' && *s <= '9'))
		return false;
	errno = 0;
	*val = strtoull(s, &end, base);
	if (errno || *end)
		return false;
	return true;
}

/* BYTES (lib/size.h). */
static uint64_t bytes_arg(const char *s, const char *opt)
{
	uint64_t val;

	if (parse_size(s, &val))
		usage_error("bad size '%s' for %s", s, opt);
	return val;
}

static uint64_t parse_seed(const char *s)
{
	uint64_t val;
	bool ok;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		ok = parse_u64(s + 2, &val, 16);
	else
		ok = parse_u64(s, &val, 10);
	if (!ok)
		usage_error("bad seed '%s'", s);
	return val;
}

static unsigned int parse_secs(const char *s, const char *opt, uint64_t min)
{
	uint64_t val;

	if (!parse_u64(s, &val, 10) || val < min || val > 86400 * 365)
		usage_error("bad number of seconds '%s' for %s", s, opt);
	return val;
}

static void parse_port(const char *s)
{
	uint64_t val;

	if (!parse_u64(s, &val, 10) || val < 1 || val > 65535)
		usage_error("bad port '%s' (1-65535)", s);
}

enum { OPT_READY = 256, OPT_DUMP, OPT_DSTOPTS, OPT_URGENT, OPT_MD5,
       OPT_STOP_AT };

static const struct option long_opts[] = {
	{ "send",	required_argument,	NULL, 's' },
	{ "recv",	required_argument,	NULL, 'r' },
	{ "seed",	required_argument,	NULL, 'S' },
	{ "timeout",	required_argument,	NULL, 't' },
	{ "wait",	required_argument,	NULL, 'w' },
	{ "quiet",	no_argument,		NULL, 'q' },
	{ "ready-file",	required_argument,	NULL, OPT_READY },
	{ "dstopts",	no_argument,		NULL, OPT_DSTOPTS },
	{ "dump",	required_argument,	NULL, OPT_DUMP },
	{ "urgent",	required_argument,	NULL, OPT_URGENT },
	{ "stop-at",	required_argument,	NULL, OPT_STOP_AT },
	{ "md5",	required_argument,	NULL, OPT_MD5 },
	{ "help",	no_argument,		NULL, 'h' },
	{ }
};

/*
 * getopt_long() returned @c (':' or '?'): say why and exit 2.  It sets
 * optopt to the option character for short options and to 0 for an
 * unknown long one, which argv[optind - 1] then names.
 */
static void __noreturn bad_option(int c, char **argv)
{
	const char *arg = argv[optind - 1];
	bool is_long = !strncmp(arg, "--", 2);

	if (c == ':' && is_long)
		usage_error("option '%s' needs an argument", arg);
	if (c == ':')
		usage_error("option '-%c' needs an argument", optopt);
	if (!optopt)
		usage_error("unknown option '%s'", arg);
	if (is_long)
		usage_error("bad option '%s'", arg);
	usage_error("unknown option '-%c'", optopt);
}

static void parse_one(struct opts *o, int c, char **argv)
{
	uint64_t prev;

	switch (c) {
	case '6':
		o->family = AF_INET6;
		break;
	case 'a':
	case 'b':
		if ((c == 'a') != (o->mode == MODE_CONNECT))
			usage_error("-%c is for %s", c,
				    c == 'a' ? "connect" : "listen");
		o->addr = optarg;
		break;
	case 'p':
		parse_port(optarg);
		o->port = optarg;
		break;
	case 's':
		o->send_bytes = bytes_arg(optarg, "--send");
		break;
	case 'r':
		o->recv_bytes = bytes_arg(optarg, "--recv");
		break;
	case 'S':
		o->seed = parse_seed(optarg);
		break;
	case 't':
		o->timeout = parse_secs(optarg, "--timeout", 1);
		break;
	case 'w':
		o->wait = parse_secs(optarg, "--wait", 0);
		break;
	case 'q':
		o->quiet = true;
		break;
	case OPT_READY:
		o->ready_file = optarg;
		break;
	case OPT_DSTOPTS:
		o->dstopts = true;
		break;
	case OPT_URGENT:
		o->urgent = bytes_arg(optarg, "--urgent") + 1;
		break;
	case OPT_STOP_AT:
		if (o->nstops == MAX_STOPS)
			usage_error("--stop-at: at most %d times", MAX_STOPS);
		prev = o->nstops ? o->stop_at[o->nstops - 1] : 0;
		o->stop_at[o->nstops] = bytes_arg(optarg, "--stop-at");
		if (o->stop_at[o->nstops] <= prev)
			usage_error("--stop-at: %s is not above %" PRIu64,
				    optarg, prev);
		o->nstops++;
		break;
	case OPT_MD5:
		if (!*optarg || strlen(optarg) > TCP_MD5SIG_MAXKEYLEN)
			usage_error("--md5: the key must be 1 to %d bytes",
				    TCP_MD5SIG_MAXKEYLEN);
		o->md5_key = optarg;
		break;
	case OPT_DUMP:
		o->dump = true;
		o->dump_off = bytes_arg(optarg, "--dump");
		break;
	case 'h':
		fputs(usage_text, stdout);
		exit(0);
	default:
		bad_option(c, argv);
	}
}

static void check_opts(struct opts *o, int argc, char **argv)
{
	if (o->dump) {
		if (argc - optind != 1)
			usage_error("--dump needs OFFSET COUNT");
		o->dump_count = bytes_arg(argv[optind], "--dump");
		return;
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->mode == MODE_NONE)
		usage_error("missing mode: listen or connect");
	if (!o->port)
		usage_error("missing -p PORT");
	if (o->mode == MODE_CONNECT && !o->addr)
		usage_error("missing -a ADDR");
	if (o->mode == MODE_CONNECT && o->ready_file)
		usage_error("--ready-file is for listen");
	if (o->dstopts && o->family != AF_INET6)
		usage_error("--dstopts needs -6");
	if (o->urgent && o->urgent > o->send_bytes)
		usage_error("--urgent: offset %" PRIu64 " is not below --send %" PRIu64,
			    o->urgent - 1, o->send_bytes);
	if (o->nstops && o->stop_at[o->nstops - 1] >= o->send_bytes)
		usage_error("--stop-at: offset %" PRIu64 " is not below --send %" PRIu64,
			    o->stop_at[o->nstops - 1], o->send_bytes);
}

static void parse_args(struct opts *o, int argc, char **argv)
{
	int c;

	*o = (struct opts){
		.family = AF_INET, .seed = 1, .timeout = 300, .wait = 10,
	};
	if (argc > 1 && !strcmp(argv[1], "listen"))
		o->mode = MODE_LISTEN;
	else if (argc > 1 && !strcmp(argv[1], "connect"))
		o->mode = MODE_CONNECT;
	if (o->mode != MODE_NONE) {
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":6a:b:p:s:r:S:t:w:qh",
				long_opts, NULL)) != -1)
		parse_one(o, c, argv);
	check_opts(o, argc, argv);
}

/* ---- connection setup ---- */

static struct addrinfo *resolve(const struct opts *o)
{
	struct addrinfo hints = {
		.ai_family = o->family,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
	};
	struct addrinfo *ai;
	int ret;

	ret = getaddrinfo(o->addr, o->port, &hints, &ai);
	if (ret)
		usage_error("bad address '%s': %s",
			    o->addr ? o->addr : "(any)", gai_strerror(ret));
	return ai;
}

/* Wait up to @deadline for @events on @fd; false with errno on failure. */
static bool wait_fd(int fd, short events, struct timespec deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int ret;

	do {
		ret = poll(&pfd, 1, ms_left(deadline));
	} while ((ret < 0 && errno == EINTR) ||
		 (ret == 0 && ms_left(deadline) > 0));
	if (ret == 0)
		errno = ETIMEDOUT;
	return ret > 0;
}

static void touch_ready_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || close(fd))
		sys_fatal(path, errno);
}

static void note_peer(const struct opts *o, const char *what,
		      const struct sockaddr *sa, socklen_t len)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];

	if (o->quiet || getnameinfo(sa, len, host, sizeof(host), serv,
				    sizeof(serv),
				    NI_NUMERICHOST | NI_NUMERICSERV))
		return;
	err_msg("%s %s port %s", what, host, serv);
}

static int accept_one(const struct opts *o, int lfd, struct timespec deadline)
{
	struct sockaddr_storage peer;
	socklen_t plen;
	int fd;

	for (;;) {
		if (!wait_fd(lfd, POLLIN, deadline)) {
			if (errno != ETIMEDOUT)
				sys_fatal("poll", errno);
			err_msg("timed out after %u s waiting for a connection",
				o->timeout);
			exit(1);
		}
		plen = sizeof(peer);
		fd = accept4(lfd, (struct sockaddr *)&peer, &plen,
			     SOCK_CLOEXEC);
		if (fd >= 0)
			break;
		if (errno != EINTR && errno != EAGAIN &&
		    errno != ECONNABORTED)
			sys_fatal("accept", errno);
	}
	note_peer(o, "connection from", (struct sockaddr *)&peer, plen);
	return fd;
}

/* An 8-byte Destination Options header: next header and length are
 * filled in by the kernel (length 0 = 8 bytes), then one PadN option
 * with 4 bytes of padding. Set before the connection exists, so that
 * the MSS accounts for it from the start; an accepted socket inherits
 * it from the listener.
 */
static void set_dstopts(int fd)
{
	static const uint8_t opt[8] = { 0, 0, 1, 4, 0, 0, 0, 0 };

	if (setsockopt(fd, IPPROTO_IPV6, IPV6_DSTOPTS, opt, sizeof(opt)))
		sys_fatal("setsockopt IPV6_DSTOPTS", errno);
}

/* TCP-MD5 with KEY for every peer of @family (a prefix of length 0). */
static void set_md5(int fd, int family, const char *key)
{
	struct tcp_md5sig md5 = {
		.tcpm_flags = TCP_MD5SIG_FLAG_PREFIX,
		.tcpm_prefixlen = 0,
		.tcpm_keylen = strlen(key),
	};

	md5.tcpm_addr.ss_family = family;
	memcpy(md5.tcpm_key, key, md5.tcpm_keylen);
	if (setsockopt(fd, IPPROTO_TCP, TCP_MD5SIG_EXT, &md5, sizeof(md5)))
		sys_fatal("setsockopt TCP_MD5SIG_EXT", errno);
}

static int do_listen(const struct opts *o, struct timespec deadline)
{
	struct addrinfo *ai = resolve(o);
	int one = 1, lfd, fd;

	lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		sys_fatal("socket", errno);
	if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		sys_fatal("setsockopt SO_REUSEADDR", errno);
	if (o->dstopts)
		set_dstopts(lfd);
	if (o->md5_key)
		set_md5(lfd, ai->ai_family, o->md5_key);
	if (bind(lfd, ai->ai_addr, ai->ai_addrlen))
		sys_fatal("bind", errno);
	if (listen(lfd, 1))
		sys_fatal("listen", errno);
	note_peer(o, "listening on", ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (o->ready_file)
		touch_ready_file(o->ready_file);

	fd = accept_one(o, lfd, deadline);
	close(lfd);
	return fd;
}

/* One connect() attempt, bounded by @deadline; returns 0 or an errno. */
static int connect_once(int fd, const struct addrinfo *ai,
			struct timespec deadline)
{
	int flags = fcntl(fd, F_GETFL), err = 0;
	socklen_t len = sizeof(err);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK))
		return errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		goto out;
	if (errno != EINPROGRESS && errno != EINTR)
		return errno;
	if (!wait_fd(fd, POLLOUT, deadline))
		return errno;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return errno;
	if (err)
		return err;
out:
	return fcntl(fd, F_SETFL, flags) ? errno : 0;
}

static void sleep_ns(long ns)
{
	struct timespec ts = { .tv_nsec = ns };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int do_connect(const struct opts *o, struct timespec deadline)
{
	struct addrinfo *ai = resolve(o);
	struct timespec give_up = ts_add(now(), o->wait);
	int fd, err;

	for (;;) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			sys_fatal("socket", errno);
		if (o->dstopts)
			set_dstopts(fd);
		if (o->md5_key)
			set_md5(fd, ai->ai_family, o->md5_key);
		err = connect_once(fd, ai, deadline);
		if (!err)
			break;
		close(fd);
		if (err != ECONNREFUSED || ts_diff(give_up, now()) <= 0 ||
		    ts_diff(deadline, now()) <= 0)
			sys_fatal("connect", err);
		sleep_ns(RETRY_NS);
	}
	note_peer(o, "connected to", ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return fd;
}

/* ---- transfer ---- */

/* A worker is done with its direction, or failed and said why. */
static void finish(bool ok)
{
	pthread_mutex_lock(&run_state.lock);
	run_state.finished++;
	if (!ok)
		run_state.failed = true;
	pthread_cond_signal(&run_state.cond);
	pthread_mutex_unlock(&run_state.lock);
}

static bool send_all(int fd, const uint8_t *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			sys_msg("send", errno);
			return false;
		}
		buf += n;
		len -= n;
	}
	return true;
}

/* @len bytes from stream offset @off, byte d->urgent - 1 alone as urgent
 * data if it is among them.
 */
static bool send_chunk(struct dir *d, uint64_t off, const uint8_t *buf,
		       size_t len)
{
	uint64_t u = d->urgent - 1;
	size_t k;

	if (!d->urgent || u < off || u >= off + len)
		return send_all(d->fd, buf, len);
	k = u - off;
	if (!send_all(d->fd, buf, k))
		return false;
	while (send(d->fd, buf + k, 1, MSG_NOSIGNAL | MSG_OOB) != 1) {
		if (errno != EINTR) {
			sys_msg("send(MSG_OOB)", errno);
			return false;
		}
	}
	return send_all(d->fd, buf + k + 1, len - k - 1);
}

static bool send_stream(struct dir *d, uint8_t *buf)
{
	unsigned int stop = 0;
	uint64_t off, end;
	size_t n;

	for (off = 0; off < d->bytes; off += n) {
		end = stop < d->nstops ? d->stop_at[stop] : d->bytes;
		n = end - off < CHUNK ? end - off : CHUNK;
		pattern_fill(d->base, off, buf, n);
		if (!send_chunk(d, off, buf, n))
			return false;
		__atomic_store_n(&d->done, off + n, __ATOMIC_RELAXED);
		if (off + n == end && stop < d->nstops) {
			stop++;
			/* To this thread: it takes the stop itself, before
			 * its next send() (kill() would let another thread
			 * take it, while this one sends on).
			 */
			raise(SIGSTOP);
		}
	}
	if (shutdown(d->fd, SHUT_WR)) {
		sys_msg("shutdown", errno);
		return false;
	}
	d->secs = ts_diff(now(), d->start);
	return true;
}

/* A direction's thread: run @stream with a chunk buffer of its own. */
static void *run_direction(struct dir *d,
			   bool (*stream)(struct dir *d, uint8_t *buf))
{
	uint8_t *buf = malloc(CHUNK);

	if (!buf) {
		sys_msg("malloc", ENOMEM);
		finish(false);
		return NULL;
	}
	finish(stream(d, buf));
	free(buf);
	return NULL;
}

static void *sender(void *arg)
{
	return run_direction(arg, send_stream);
}

/* recv() that retries EINTR; reports other errors itself. */
static ssize_t recv_some(int fd, uint8_t *buf, size_t len)
{
	ssize_t n;

	do {
		n = recv(fd, buf, len, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		sys_msg("recv", errno);
	return n;
}

static bool check_chunk(struct dir *d, uint64_t off, const uint8_t *buf,
			size_t len)
{
	size_t bad = pattern_check(d->base, off, buf, len);

	if (bad == len)
		return true;
	err_msg("data mismatch at offset %" PRIu64 ": got 0x%02x, expected 0x%02x",
		off + bad, buf[bad], pattern_byte(d->base, off + bad));
	return false;
}

/* After the expected bytes, the peer must close its side. */
static bool expect_eof(struct dir *d, uint8_t *buf)
{
	ssize_t n = recv_some(d->fd, buf, 1);

	if (n > 0)
		err_msg("peer sent more than %" PRIu64 " bytes", d->bytes);
	return n == 0;
}

static bool recv_stream(struct dir *d, uint8_t *buf)
{
	uint64_t off = 0;
	ssize_t n;
	size_t want;

	while (off < d->bytes) {
		want = d->bytes - off < CHUNK ? d->bytes - off : CHUNK;
		n = recv_some(d->fd, buf, want);
		if (n < 0)
			return false;
		if (n == 0) {
			err_msg("peer closed the connection at offset %" PRIu64
				", expected %" PRIu64 " bytes", off, d->bytes);
			return false;
		}
		if (!check_chunk(d, off, buf, n))
			return false;
		off += n;
		__atomic_store_n(&d->done, off, __ATOMIC_RELAXED);
	}
	d->secs = ts_diff(now(), d->start);
	return expect_eof(d, buf);
}

static void *receiver(void *arg)
{
	return run_direction(arg, recv_stream);
}

static void start_thread(pthread_t *t, void *(*fn)(void *), struct dir *d)
{
	int ret = pthread_create(t, NULL, fn, d);

	if (ret)
		sys_fatal("pthread_create", ret);
}

/* The condvar waits on CLOCK_MONOTONIC, like every deadline here. */
static void init_run_state(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&run_state.cond, &attr);
	pthread_condattr_destroy(&attr);
}

enum outcome { DONE, FAILED, TIMED_OUT };

/* Sleep until both directions finish, one fails, or @deadline passes. */
static enum outcome wait_done(struct timespec deadline)
{
	enum outcome res;
	int ret = 0;

	pthread_mutex_lock(&run_state.lock);
	while (run_state.finished < 2 && !run_state.failed && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&run_state.cond, &run_state.lock,
					     &deadline);
	res = run_state.failed ? FAILED :
	      run_state.finished == 2 ? DONE : TIMED_OUT;
	pthread_mutex_unlock(&run_state.lock);
	return res;
}

static void print_rate(const char *what, const struct dir *d, const char *tail)
{
	double secs = d->secs > 1e-9 ? d->secs : 1e-9;

	printf("%s %" PRIu64 " bytes in %.3f s: %.1f Mbit/s%s\n", what,
	       d->bytes, d->secs, (double)d->bytes * 8 / secs / 1e6, tail);
}

static int transfer(const struct opts *o, int fd, struct timespec deadline)
{
	struct dir tx = { .fd = fd, .bytes = o->send_bytes, .urgent = o->urgent,
			  .stop_at = o->stop_at, .nstops = o->nstops };
	struct dir rx = { .fd = fd, .bytes = o->recv_bytes };
	pthread_t tt, rt;
	enum outcome res;

	tx.base = rx.base = o->seed * GOLDEN;
	tx.start = rx.start = now();
	init_run_state();
	start_thread(&tt, sender, &tx);
	start_thread(&rt, receiver, &rx);

	res = wait_done(deadline);
	if (res == FAILED)
		return 1;	/* the worker said why; exit ends the other */
	if (res == TIMED_OUT) {
		err_msg("timed out after %u s: sent %" PRIu64 " of %" PRIu64
			" bytes, received %" PRIu64 " of %" PRIu64 " bytes",
			o->timeout, __atomic_load_n(&tx.done, __ATOMIC_RELAXED),
			tx.bytes, __atomic_load_n(&rx.done, __ATOMIC_RELAXED),
			rx.bytes);
		return 1;
	}
	pthread_join(tt, NULL);
	pthread_join(rt, NULL);
	close(fd);

	if (tx.bytes)
		print_rate("sent", &tx, "");
	if (rx.bytes)
		print_rate("received", &rx, ", validated");
	return fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct timespec deadline;
	struct opts o;
	int fd;

	parse_args(&o, argc, argv);
	if (o.dump)
		return dump_pattern(&o);

	deadline = ts_add(now(), o.timeout);
	if (o.mode == MODE_LISTEN)
		fd = do_listen(&o, deadline);
	else
		fd = do_connect(&o, deadline);
	return transfer(&o, fd, deadline);
}
