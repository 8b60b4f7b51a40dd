// SPDX-License-Identifier: GPL-2.0
/* ncdevmem: the command line. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ncdevmem.h"

#define DEFAULT_CHUNK		(64 * 1024)
#define MAX_CHUNK		(16 * 1024 * 1024)
#define DEFAULT_DMABUF_SIZE	(64ULL << 20)
#define PAGE			4096
#define HUGE_PAGE		(2ULL << 20)

static const char usage_text[] =
"Usage: " PROG " -l -s SERVER_IP [-c CLIENT_IP] -p PORT -f IFNAME [options]\n"
"       " PROG " -s SERVER_IP -p PORT [-c CLIENT_IP] -f IFNAME [-z CHUNK] [options]\n"
"       " PROG " -s SERVER_IP -p PORT [-c CLIENT_IP] [--bytes SIZE -v PERIOD] [options]\n"
"\n"
"A netcat for device-memory TCP, with mainline's ncdevmem options.\n"
"\n"
"Server (-l): set up IFNAME for devmem TCP (header split on, rx queues\n"
"FIRST..FIRST+N-1 out of RSS, an n-tuple rule steering SERVER_IP:PORT,\n"
"from CLIENT_IP when given, to FIRST), bind a dma-buf to those queues,\n"
"accept one connection on SERVER_IP:PORT and receive it with\n"
"recvmsg(MSG_SOCK_DEVMEM), reading the payload through the dma-buf,\n"
"checking it against the pattern with -v, handing every token back.\n"
"At the end (peer closed, or SIGINT/SIGTERM) it unbinds, undoes the set-up\n"
"and prints a summary on stdout.\n"
"\n"
"Client with -f (device-memory send, as mainline's client): bind a dma-buf\n"
"to IFNAME for tx, connect to SERVER_IP:PORT through IFNAME, and send stdin\n"
"until its end, or with --bytes SIZE, SIZE bytes of the -v PERIOD pattern, from\n"
"the dma-buf with sendmsg(MSG_ZEROCOPY): the data is written into the\n"
"dma-buf, sent from there, and its space reused once the kernel reports\n"
"the send complete, so a stream of any size passes through it. All sends\n"
"complete before the client closes.\n"
"\n"
"Client without -f, or with --plain: the same stream over plain TCP.\n"
"\n"
"Options:\n"
"  -l, --listen            server mode\n"
"  -s, --server IP         the server's address (IPv4 or IPv6); required\n"
"  -c, --client IP         server: steer only flows from IP; client: bind to IP\n"
"  -p, --port PORT         TCP port, 1-65535; required\n"
"  -v, --validate PERIOD   pattern period (0: no validation). Stream byte i\n"
"                          is (i + 1) % P, or 0x0a where that is 0, with\n"
"                          P = min(PERIOD, 256): -v 7 is \\1\\2\\3\\4\\5\\6\\n repeated\n"
"  -q, --queues N          server: rx queues to bind (default 1)\n"
"  -t, --first-queue Q     server: the first of them (default: the device's\n"
"                          last N rx queues)\n"
"  -f, --interface IFNAME  server: the device (required); client: send from\n"
"                          device memory through it\n"
"  -n, --no-setup          server: leave the NIC as it is (set up by the caller)\n"
"  -L, --fail-on-linear    server: fail on any payload the kernel delivers in\n"
"                          host memory (SO_DEVMEM_LINEAR) instead of the\n"
"                          dma-buf, as a header split that kept it did\n"
"  -b, --rx-page-size SIZE server: bind in receive buffers of SIZE bytes (a\n"
"                          power of two, at least 4K; the kernel's rx-page-size).\n"
"                          Above 4K, the default udmabuf is made of 2M huge\n"
"                          pages (vm.nr_hugepages), as rx-page-size needs\n"
"      --bytes, --size SIZE\n"
"                          server: expect exactly SIZE bytes; client: send\n"
"                          SIZE bytes of the -v pattern instead of stdin\n"
"  -z, --chunk SIZE        client with -f: at most SIZE bytes per iovec of\n"
"                          each sendmsg() (default: no limit); plain client:\n"
"                          at most SIZE bytes per send() (default 64K)\n"
"      --plain             client: plain TCP even with -f, which then only\n"
"                          binds the socket to IFNAME (SO_BINDTODEVICE)\n"
"  -o, --output FILE       server: write the received payload to FILE (-: stdout;\n"
"                          the summary then goes to stderr)\n"
"  -r, --ready-file PATH   server: create PATH once listening\n"
"      --trace FILE        server: record where each part of the stream\n"
"                          landed, in stream order, a line each: \"d OFFSET\n"
"                          SIZE\" (in the dma-buf), \"l SIZE\" (copied to host\n"
"                          memory), \"h SIZE\" (not through a bound queue)\n"
"      --dmabuf KIND       server, client with -f: udmabuf (default),\n"
"                          heap[:NAME] (a dma-heap, default system) or,\n"
"                          server only, cuda[:DEVICE] (GPU memory)\n"
"      --dmabuf-size SIZE  server, client with -f: the dma-buf's size\n"
"                          (default 64M)\n"
"      --progress          throughput once a second on stderr, also when\n"
"                          stderr is not a terminal (on a terminal: always)\n"
"      --json              the summary as one JSON object\n"
"      --dry-run           print the parsed configuration and exit\n"
"  -h, --help              this text\n"
"\n"
"SIZE takes a suffix K, M or G (powers of 1024). Mainline's -q/-t/-n/-b are\n"
"accepted and ignored by the client.\n"
"\n"
"Exit status: 0 the stream was received (and validated) completely, or\n"
"sent (with -f: and every send completed); 1 failure (mismatch, short\n"
"stream, errors); 2 usage; 77 a capability is missing (no /dev/udmabuf, no\n"
"netdev family, a device without device-memory support, no privilege).\n";

void usage(FILE *f)
{
	fputs(usage_text, f);
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

int parse_size(const char *s, uint64_t *v)
{
	unsigned long long n;
	unsigned int shift = 0;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	}
	if (*end || (shift && n > (~0ULL >> shift)))
		return -EINVAL;
	*v = n << shift;
	return 0;
}

/* A decimal number in [min, max]. */
static int parse_uint(const char *s, unsigned long min, unsigned long max,
		      unsigned long *v)
{
	unsigned long n;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || n < min || n > max)
		return -EINVAL;
	*v = n;
	return 0;
}

/* AF_INET or AF_INET6 for a numeric address, 0 otherwise. */
static int addr_family(const char *s)
{
	unsigned char buf[16];

	if (inet_pton(AF_INET, s, buf) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, s, buf) == 1)
		return AF_INET6;
	return 0;
}

enum {
	OPT_DMABUF = 256,
	OPT_DMABUF_SIZE,
	OPT_PROGRESS,
	OPT_JSON,
	OPT_TRACE,
	OPT_DRY_RUN,
	OPT_PLAIN,
	OPT_BYTES,
};

static const struct option long_opts[] = {
	{ "listen",	 no_argument,	    NULL, 'l' },
	{ "server",	 required_argument, NULL, 's' },
	{ "client",	 required_argument, NULL, 'c' },
	{ "port",	 required_argument, NULL, 'p' },
	{ "validate",	 required_argument, NULL, 'v' },
	{ "queues",	 required_argument, NULL, 'q' },
	{ "first-queue", required_argument, NULL, 't' },
	{ "interface",	 required_argument, NULL, 'f' },
	{ "no-setup",	 no_argument,	    NULL, 'n' },
	{ "fail-on-linear", no_argument,    NULL, 'L' },
	{ "rx-page-size", required_argument, NULL, 'b' },
	{ "bytes",	 required_argument, NULL, OPT_BYTES },
	{ "size",	 required_argument, NULL, OPT_BYTES },
	{ "chunk",	 required_argument, NULL, 'z' },
	{ "output",	 required_argument, NULL, 'o' },
	{ "ready-file",	 required_argument, NULL, 'r' },
	{ "dmabuf",	 required_argument, NULL, OPT_DMABUF },
	{ "dmabuf-size", required_argument, NULL, OPT_DMABUF_SIZE },
	{ "progress",	 no_argument,	    NULL, OPT_PROGRESS },
	{ "json",	 no_argument,	    NULL, OPT_JSON },
	{ "trace",	 required_argument, NULL, OPT_TRACE },
	{ "dry-run",	 no_argument,	    NULL, OPT_DRY_RUN },
	{ "plain",	 no_argument,	    NULL, OPT_PLAIN },
	{ "help",	 no_argument,	    NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static int parse_dmabuf(const char *s, struct config *cfg)
{
	unsigned long dev;

	if (!strcmp(s, "udmabuf")) {
		cfg->provider = DMABUF_UDMABUF;
	} else if (!strcmp(s, "heap")) {
		cfg->provider = DMABUF_HEAP;
	} else if (!strncmp(s, "heap:", 5) && s[5] && !strchr(s + 5, '/')) {
		cfg->provider = DMABUF_HEAP;
		cfg->heap = s + 5;
	} else if (!strcmp(s, "cuda")) {
		cfg->provider = DMABUF_CUDA;
	} else if (!strncmp(s, "cuda:", 5) &&
		   !parse_uint(s + 5, 0, 1024, &dev)) {
		cfg->provider = DMABUF_CUDA;
		cfg->cuda_device = dev;
	} else {
		return -EINVAL;
	}
	return 0;
}

int parse_args(int argc, char **argv, struct config *cfg, char *err,
	       size_t errlen)
{
	/* options that belong to one mode; those of a dma-buf */
	const char *server_only = NULL, *client_only = NULL, *dmabuf_opt = NULL;
	bool has_chunk = false;
	int c, fam_s, fam_c;
	unsigned long n;
	uint64_t size;

	memset(cfg, 0, sizeof(*cfg));
	cfg->queues = 1;
	cfg->first_queue = -1;
	cfg->chunk = DEFAULT_CHUNK;
	cfg->dmabuf_size = DEFAULT_DMABUF_SIZE;
	cfg->provider = DMABUF_UDMABUF;
	err[0] = '\0';

	optind = 0;	/* glibc: a full reset */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":Lls:c:p:v:q:t:f:nb:z:o:r:h",
				long_opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			cfg->server = true;
			break;
		case 's':
			cfg->server_ip = optarg;
			break;
		case 'c':
			cfg->client_ip = optarg;
			break;
		case 'p':
			if (parse_uint(optarg, 1, 65535, &n))
				return fail(err, errlen, "bad port '%s' (1-65535)", optarg);
			cfg->port = optarg;
			break;
		case 'v':
			if (parse_uint(optarg, 0, 0xffffffffUL, &n) || n == 1)
				return fail(err, errlen,
					    "bad validation period '%s' (0: off, or 2 or more)",
					    optarg);
			cfg->period = n;
			break;
		case 'q':
			if (parse_uint(optarg, 1, 65535, &n))
				return fail(err, errlen, "bad queue count '%s' (1-65535)", optarg);
			cfg->queues = n;
			break;
		case 't':
			if (parse_uint(optarg, 0, 65535, &n))
				return fail(err, errlen, "bad first queue '%s' (0-65535)", optarg);
			cfg->first_queue = n;
			break;
		case 'f':
			if (!*optarg)
				return fail(err, errlen, "empty interface name");
			cfg->ifname = optarg;
			break;
		case 'n':
			cfg->no_setup = true;
			break;
		case 'L':
			cfg->fail_on_linear = true;
			server_only = "-L";
			break;
		case 'b':
			/* the kernel judges it (power of two, >= page) */
			if (parse_size(optarg, &size) || !size ||
			    size > UINT32_MAX)
				return fail(err, errlen, "invalid rx_page_size '%s'",
					    optarg);
			cfg->rx_page_size = size;
			break;
		case OPT_BYTES:
			if (parse_size(optarg, &size))
				return fail(err, errlen, "bad size '%s' for --bytes",
					    optarg);
			cfg->bytes = size;
			cfg->has_bytes = true;
			break;
		case 'z':
			if (parse_size(optarg, &size) || !size || size > MAX_CHUNK)
				return fail(err, errlen, "bad chunk size '%s' for -z (1 to 16M)",
					    optarg);
			cfg->chunk = size;
			has_chunk = true;
			client_only = "-z";
			break;
		case 'o':
			cfg->output = optarg;
			server_only = "-o";
			break;
		case 'r':
			cfg->ready_file = optarg;
			server_only = "-r";
			break;
		case OPT_DMABUF:
			if (parse_dmabuf(optarg, cfg))
				return fail(err, errlen,
					    "bad --dmabuf '%s' (udmabuf, heap[:NAME] or cuda[:DEVICE])",
					    optarg);
			dmabuf_opt = "--dmabuf";
			break;
		case OPT_DMABUF_SIZE:
			if (parse_size(optarg, &size) || !size || size % PAGE ||
			    size > (1ULL << 40))
				return fail(err, errlen,
					    "bad --dmabuf-size '%s' (a multiple of 4K, at most 1T)",
					    optarg);
			cfg->dmabuf_size = size;
			dmabuf_opt = "--dmabuf-size";
			break;
		case OPT_PLAIN:
			cfg->plain = true;
			client_only = "--plain";
			break;
		case OPT_PROGRESS:
			cfg->progress = true;
			break;
		case OPT_JSON:
			cfg->json = true;
			break;
		case OPT_TRACE:
			cfg->trace = optarg;
			server_only = "--trace";
			break;
		case OPT_DRY_RUN:
			cfg->dry_run = true;
			break;
		case 'h':
			return -1;
		case ':':
			if (!strncmp(argv[optind - 1], "--", 2))
				return fail(err, errlen, "option '%s' needs an argument",
					    argv[optind - 1]);
			if (optopt)
				return fail(err, errlen, "option '-%c' needs an argument", optopt);
			return fail(err, errlen, "option '%s' needs an argument",
				    argv[optind - 1]);
		default:
			if (optopt)
				return fail(err, errlen, "unknown option '-%c'", optopt);
			return fail(err, errlen, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return fail(err, errlen, "unexpected argument '%s'", argv[optind]);

	if (!cfg->server_ip)
		return fail(err, errlen, "-s SERVER_IP is required");
	fam_s = addr_family(cfg->server_ip);
	if (!fam_s)
		return fail(err, errlen, "bad address '%s' for -s (IPv4 or IPv6)",
			    cfg->server_ip);
	if (cfg->client_ip) {
		fam_c = addr_family(cfg->client_ip);
		if (!fam_c)
			return fail(err, errlen, "bad address '%s' for -c (IPv4 or IPv6)",
				    cfg->client_ip);
		if (fam_c != fam_s)
			return fail(err, errlen,
				    "-c %s and -s %s are not of the same address family",
				    cfg->client_ip, cfg->server_ip);
	}
	if (!cfg->port)
		return fail(err, errlen, "-p PORT is required");

	if (cfg->server) {
		if (client_only)
			return fail(err, errlen, "%s is a client option (not with -l)",
				    client_only);
		if (cfg->rx_page_size > PAGE &&
		    cfg->provider == DMABUF_UDMABUF &&
		    cfg->dmabuf_size % HUGE_PAGE)
			return fail(err, errlen,
				    "-b above 4K takes a udmabuf of 2M huge pages: --dmabuf-size must be a multiple of 2M");
		if (!cfg->ifname)
			return fail(err, errlen, "-l needs -f IFNAME");
		if (cfg->first_queue >= 0 &&
		    cfg->first_queue + cfg->queues > 65536)
			return fail(err, errlen, "queues %d..%d: beyond 65535",
				    cfg->first_queue,
				    cfg->first_queue + cfg->queues - 1);
	} else {
		if (server_only)
			return fail(err, errlen, "%s is a server option (needs -l)",
				    server_only);
		if (cfg->has_bytes && !cfg->period)
			return fail(err, errlen,
				    "--bytes in client mode needs -v PERIOD: it sends SIZE bytes of that pattern");
		/* -f makes the client mainline's: it sends from device memory */
		cfg->devmem_tx = cfg->ifname && !cfg->plain;
		if (dmabuf_opt && !cfg->devmem_tx)
			return fail(err, errlen,
				    "%s is for the server (-l) or the client with -f: the plain client has no dma-buf",
				    dmabuf_opt);
		if (cfg->devmem_tx && cfg->provider == DMABUF_CUDA)
			return fail(err, errlen,
				    "--dmabuf cuda is for the server: the client writes its payload into the dma-buf from the CPU (udmabuf or heap)");
		if (cfg->devmem_tx && !has_chunk)
			cfg->chunk = 0;
	}
	return 0;
}

static const char *str(const char *s)
{
	return s ? s : "";
}

void print_config(FILE *f, const struct config *cfg)
{
	static const char *const providers[] = {
		[DMABUF_UDMABUF] = "udmabuf",
		[DMABUF_HEAP] = "heap",
		[DMABUF_CUDA] = "cuda",
	};

	fprintf(f, "mode=%s\n", cfg->server ? "server" : "client");
	fprintf(f, "send=%s\n", cfg->server ? "none" :
		cfg->devmem_tx ? "devmem" : "plain");
	fprintf(f, "server=%s\n", str(cfg->server_ip));
	fprintf(f, "client=%s\n", str(cfg->client_ip));
	fprintf(f, "port=%s\n", str(cfg->port));
	fprintf(f, "validate=%u\n", cfg->period);
	fprintf(f, "period=%u\n", cfg->period ? pattern_period(cfg->period) : 0);
	fprintf(f, "queues=%d\n", cfg->queues);
	if (cfg->first_queue < 0)
		fprintf(f, "first-queue=auto\n");
	else
		fprintf(f, "first-queue=%d\n", cfg->first_queue);
	fprintf(f, "interface=%s\n", str(cfg->ifname));
	fprintf(f, "setup=%s\n", cfg->no_setup ? "no" : "yes");
	fprintf(f, "fail-on-linear=%s\n", cfg->fail_on_linear ? "yes" : "no");
	if (cfg->rx_page_size)
		fprintf(f, "rx-page-size=%u\n", cfg->rx_page_size);
	else
		fprintf(f, "rx-page-size=default\n");
	if (cfg->has_bytes)
		fprintf(f, "bytes=%llu\n", (unsigned long long)cfg->bytes);
	else
		fprintf(f, "bytes=%s\n", cfg->server ? "any" : "stdin");
	if (cfg->chunk)
		fprintf(f, "chunk=%zu\n", cfg->chunk);
	else
		fprintf(f, "chunk=any\n");
	fprintf(f, "output=%s\n", str(cfg->output));
	fprintf(f, "ready-file=%s\n", str(cfg->ready_file));
	fprintf(f, "trace=%s\n", str(cfg->trace));
	fprintf(f, "dmabuf=%s", providers[cfg->provider]);
	if (cfg->provider == DMABUF_HEAP)
		fprintf(f, ":%s", cfg->heap ? cfg->heap : "system");
	else if (cfg->provider == DMABUF_CUDA)
		fprintf(f, ":%d", cfg->cuda_device);
	fprintf(f, "\ndmabuf-size=%zu\n", cfg->dmabuf_size);
	fprintf(f, "progress=%s\n", cfg->progress ? "yes" : "auto");
	fprintf(f, "json=%s\n", cfg->json ? "yes" : "no");
}
