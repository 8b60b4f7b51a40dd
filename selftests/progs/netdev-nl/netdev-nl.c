// SPDX-License-Identifier: GPL-2.0
/*
 * netdev-nl: talk to the kernel's "netdev" generic netlink family with
 * nothing but libc, for the tests: named commands print one line per
 * object, and "raw" sends any command with any attributes, so that tests
 * can feed the kernel malformed requests and check the errno and extack.
 *
 * bind-rx binds a dma-buf (a udmabuf it creates, or an fd it inherited)
 * and holds the binding - its netlink socket - until SIGTERM or SIGINT;
 * SIGUSR1 copies the start of a udmabuf into a file, read through the
 * dma-buf's own mmap, so tests can see what the device wrote there.
 *
 * Built against our uapi headers (uapi/linux/netdev.h), not the host's.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/udmabuf.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/netdev.h>

#define PROG		"netdev-nl"

#include "../lib/die.h"
#include "../lib/genl.h"
#include "../lib/size.h"
#include "../lib/udmabuf.h"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: netdev-nl COMMAND [ARGS]\n"
"\n"
"Commands (the current network namespace's devices):\n"
"  dev-get [IFINDEX]               one device, or all of them\n"
"  queue-get [IFINDEX [rx|tx ID]]  one queue with all three; else every\n"
"                                  queue (of IFINDEX); queues of devices\n"
"                                  that are down are not listed\n"
"  page-pool-get [ID]              one page pool, or all of them\n"
"  bind-rx IFINDEX QUEUES DMABUF [--hold] [--snapshot FILE[:LEN]]\n"
"          [--cycles N] [--stats] [--rx-page-size N] [--run COMMAND [ARGS]]\n"
"                                  bind a dma-buf to rx queues QUEUES (A,B,\n"
"                                  C-D; also tx:N, noid, notype:N to send\n"
"                                  malformed queues); DMABUF is\n"
"                                  udmabuf:SIZE (K/M/G), fd:N or\n"
"                                  huge:[OFF+]LEN[,...] (OFF in bytes): a udmabuf\n"
"                                  of those ranges of a memfd of 2M huge\n"
"                                  pages. --rx-page-size sends that\n"
"                                  attribute. --hold keeps the binding until\n"
"                                  SIGTERM/SIGINT; with --snapshot, SIGUSR1\n"
"                                  writes the udmabuf's first LEN bytes\n"
"                                  (default 64K) to FILE, then FILE.done;\n"
"                                  --cycles N binds and unbinds (closes the\n"
"                                  socket) N times, then prints the last\n"
"                                  reply and cycles=<binds that worked>;\n"
"                                  --stats prints how long the (last) bind\n"
"                                  took and how much kernel memory it took\n"
"                                  (MemFree drop; Slab+VmallocUsed growth)\n"
"                                  --run runs COMMAND while bound, with the\n"
"                                  dma-buf's fd and the binding's id in\n"
"                                  DEVMEM_DMABUF_FD and DEVMEM_DMABUF_ID,\n"
"                                  forwards signals to it and exits with its\n"
"                                  status (128+N for signal N)\n"
"  owner-race IFINDEX QA QB QBUSY ROUNDS\n"
"                                  ROUNDS times: socket A binds rx queue QA\n"
"                                  and closes while socket B, as soon as\n"
"                                  A's port id is free, takes it and binds\n"
"                                  QB, with rtnl kept busy (a third socket\n"
"                                  binds 256M to QBUSY and closes, over and\n"
"                                  over); checks that A's\n"
"                                  close unbinds QA and never QB, and that\n"
"                                  B's close unbinds QB; prints rounds=,\n"
"                                  reused= (rounds where B's bind worked)\n"
"                                  and lost= (B's bindings torn down by A)\n"
"  raw [--dump] [--bad-attr] CMD [ATTR...]\n"
"                                  send command number CMD with attributes\n"
"                                  TYPE:NUMBER=VALUE, TYPE one of u8, u16,\n"
"                                  u32, u64, str, flag (no =VALUE);\n"
"                                  --bad-attr: an error also names the\n"
"                                  attribute the kernel marked bad\n"
"\n"
"Each reply prints as one line: the command, then NAME=VALUE for each\n"
"attribute (attrN=0xHEX for attributes without a name here).\n"
"\n"
"Exit status: 0 on success; 1 when the kernel refuses the request, with\n"
"\"Error: <strerror>: <extack message>\" on standard error (and the\n"
"missing attribute's number, when the kernel names one; with --bad-attr,\n"
"\"(bad attribute N)\" for a top-level attribute of type N, else \"(bad\n"
"attribute at offset N)\", N bytes into the request); 2 on a usage error.\n");
}

static void __attribute__((noreturn)) sys_fatal(const char *what)
{
	die("%s: %s", what, strerror(errno));
}

struct nl {
	int fd;
	uint16_t family;
};

/* raw --bad-attr: name the attribute an error points at. */
static int show_bad_attr;

/* The attribute of request @r that starts @off bytes into it: its type,
 * or -1 when none of the top-level attributes starts there.
 */
static int attr_at(const struct genl_req *r, unsigned long long off)
{
	const char *p = (const char *)r + NLMSG_LENGTH(GENL_HDRLEN);
	const char *end = (const char *)r + r->nlh.nlmsg_len;
	const struct nlattr *a;

	for (; (a = genl_attr_at(p, end)); p += NLA_ALIGN(a->nla_len))
		if (p - (const char *)r == (long long)off)
			return a->nla_type & NLA_TYPE_MASK;
	return -1;
}

/* Report the kernel's refusal @nlh of request @r: errno, extack text,
 * missing attribute (and, with --bad-attr, the bad one).
 */
static void report_error(const struct nlmsghdr *nlh, const struct genl_req *r)
{
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	unsigned long long off;
	char ext[512];
	int err;

	err = genl_ext_ack(nlh, tb);
	genl_ext_ack_str(nlh, ext, sizeof(ext));
	fprintf(stderr, "Error: %s%s", strerror(-err), ext);
	if (show_bad_attr && !genl_uint(tb[NLMSGERR_ATTR_OFFS], &off)) {
		if (attr_at(r, off) >= 0)
			fprintf(stderr, " (bad attribute %d)", attr_at(r, off));
		else
			fprintf(stderr, " (bad attribute at offset %llu)", off);
	}
	fputc('\n', stderr);
}

/* Send R and read replies until the ack (or the end of a dump), calling
 * PRINT for each message. Returns 0 or the kernel's -errno.
 */
static int transact(struct nl *nl, struct genl_req *r, genl_cb print,
		    void *arg)
{
	const struct nlmsghdr *last;
	int err;

	if (r->overflow)
		usage_error("request too long");
	err = genl_transact(nl->fd, r, print, arg, &last);
	if (err)
		report_error(last, r);
	return err;
}

static void nl_open(struct nl *nl)
{
	nl->fd = genl_open();
	nl->family = genl_family(nl->fd, NETDEV_FAMILY_NAME);
}

/* Attribute names per command, by number; NULL: print as attrN. */
static const char *const dev_names[NETDEV_A_DEV_MAX + 1] = {
	[NETDEV_A_DEV_IFINDEX] = "ifindex",
};

static const char *const queue_names[NETDEV_A_QUEUE_MAX + 1] = {
	[NETDEV_A_QUEUE_ID] = "id",
	[NETDEV_A_QUEUE_IFINDEX] = "ifindex",
	[NETDEV_A_QUEUE_TYPE] = "type",
	[NETDEV_A_QUEUE_NAPI_ID] = "napi-id",
	[NETDEV_A_QUEUE_DMABUF] = "dmabuf",
};

static const char *const pp_names[NETDEV_A_PAGE_POOL_MAX + 1] = {
	[NETDEV_A_PAGE_POOL_ID] = "id",
	[NETDEV_A_PAGE_POOL_IFINDEX] = "ifindex",
	[NETDEV_A_PAGE_POOL_NAPI_ID] = "napi-id",
	[NETDEV_A_PAGE_POOL_INFLIGHT] = "inflight",
	[NETDEV_A_PAGE_POOL_INFLIGHT_MEM] = "inflight-mem",
	[NETDEV_A_PAGE_POOL_DETACH_TIME] = "detach-time",
	[NETDEV_A_PAGE_POOL_DMABUF] = "dmabuf",
};

static const char *const dmabuf_names[NETDEV_A_DMABUF_MAX + 1] = {
	[NETDEV_A_DMABUF_ID] = "id",
};

static const struct {
	const char *name;
	const char *const *attrs;
	int max;
} cmds[NETDEV_CMD_MAX + 1] = {
	[NETDEV_CMD_DEV_GET] = { "dev", dev_names, NETDEV_A_DEV_MAX },
	[NETDEV_CMD_PAGE_POOL_GET] = { "page-pool", pp_names,
				       NETDEV_A_PAGE_POOL_MAX },
	[NETDEV_CMD_QUEUE_GET] = { "queue", queue_names, NETDEV_A_QUEUE_MAX },
	[NETDEV_CMD_BIND_RX] = { "bind-rx", dmabuf_names,
				 NETDEV_A_DMABUF_MAX },
};

/* The id in the last bind-rx reply printed. */
static unsigned long long bound_id;

static void print_msg(const struct nlmsghdr *nlh, void *arg)
{
	const struct genlmsghdr *g = NLMSG_DATA(nlh);
	const char *p = (const char *)g + GENL_HDRLEN;
	const char *end = (const char *)nlh + nlh->nlmsg_len;
	const char *const *names = NULL;
	const struct nlattr *a;
	int max = -1;

	(void)arg;
	if (g->cmd <= NETDEV_CMD_MAX && cmds[g->cmd].name) {
		printf("%s", cmds[g->cmd].name);
		names = cmds[g->cmd].attrs;
		max = cmds[g->cmd].max;
	} else {
		printf("cmd%u", g->cmd);
	}
	for (; (a = genl_attr_at(p, end)); p += NLA_ALIGN(a->nla_len)) {
		int type = a->nla_type & NLA_TYPE_MASK;
		unsigned long long v;
		unsigned int i;

		if (type <= max && names[type] && !genl_uint(a, &v)) {
			if (g->cmd == NETDEV_CMD_BIND_RX &&
			    type == NETDEV_A_DMABUF_ID)
				bound_id = v;
			if (!strcmp(names[type], "type"))
				printf(" type=%s", v == NETDEV_QUEUE_TYPE_RX ?
				       "rx" : v == NETDEV_QUEUE_TYPE_TX ? "tx" :
				       "?");
			else
				printf(" %s=%llu", names[type], v);
		} else {
			printf(" attr%d=0x", type);
			for (i = 0; i < genl_len(a); i++)
				printf("%02x", ((const unsigned char *)genl_data(a))[i]);
		}
	}
	putchar('\n');
}

static unsigned long long parse_num(const char *s, unsigned long long max,
				    const char *what)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v > max)
		usage_error("bad %s '%s'", what, s);
	return v;
}

/* TYPE:NUMBER=VALUE */
static void put_raw_attr(struct genl_req *r, const char *spec)
{
	char type[8];
	const char *colon = strchr(spec, ':'), *eq;
	unsigned long long num, v;
	char numbuf[16];

	if (!colon || colon - spec >= (long)sizeof(type))
		usage_error("bad attribute '%s'", spec);
	memcpy(type, spec, colon - spec);
	type[colon - spec] = 0;
	eq = strchr(colon + 1, '=');
	if (!strcmp(type, "flag")) {
		if (eq)
			usage_error("flag attribute '%s' takes no value", spec);
		genl_put(r, parse_num(colon + 1, NLA_TYPE_MASK, "attribute number"),
			 NULL, 0);
		return;
	}
	if (!eq || eq - colon - 1 >= (long)sizeof(numbuf))
		usage_error("bad attribute '%s'", spec);
	memcpy(numbuf, colon + 1, eq - colon - 1);
	numbuf[eq - colon - 1] = 0;
	num = parse_num(numbuf, NLA_TYPE_MASK, "attribute number");
	if (!strcmp(type, "str")) {
		genl_put(r, num, eq + 1, strlen(eq + 1) + 1);
	} else if (!strcmp(type, "u8")) {
		uint8_t x = parse_num(eq + 1, UINT8_MAX, "u8");

		genl_put(r, num, &x, 1);
	} else if (!strcmp(type, "u16")) {
		uint16_t x = parse_num(eq + 1, UINT16_MAX, "u16");

		genl_put(r, num, &x, 2);
	} else if (!strcmp(type, "u32")) {
		genl_put_u32(r, num, parse_num(eq + 1, UINT32_MAX, "u32"));
	} else if (!strcmp(type, "u64")) {
		v = parse_num(eq + 1, UINT64_MAX, "u64");
		genl_put(r, num, &v, 8);
	} else {
		usage_error("unknown attribute type '%s'", type);
	}
}

/* SIZE (lib/size.h): 1 byte to 1 TiB. */
static unsigned long long size_1t(const char *s)
{
	uint64_t v;

	if (parse_size(s, &v) || !v || v > 1ULL << 40)
		usage_error("bad size '%s'", s);
	return v;
}

/* huge:[OFF+]LEN[,...]: the ranges, in order, of one memfd of 2 MiB huge
 * pages, as one udmabuf. Like mainline's ncdevmem it leaves the pages
 * untouched: udmabuf allocates them. Returns its fd; *@size is its size.
 */
static int udmabuf_create_huge(const char *spec, unsigned long long *size)
{
	struct {
		struct udmabuf_create_list head;
		struct udmabuf_create_item item[16];
	} l = { .head = { .flags = UDMABUF_FLAGS_CLOEXEC } };
	unsigned long long end = 0, off, len;
	char *copy = strdup(spec), *tok, *save, *plus;
	int memfd, fd;

	if (!copy)
		sys_fatal("strdup");
	*size = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (l.head.count == 16)
			usage_error("huge: takes at most 16 ranges");
		plus = strchr(tok, '+');
		off = 0;
		if (plus) {
			*plus = 0;
			off = parse_num(tok, 1ULL << 40, "offset");
			tok = plus + 1;
		}
		len = size_1t(tok);
		l.item[l.head.count].offset = off;
		l.item[l.head.count].size = len;
		l.head.count++;
		*size += len;
		if (off + len > end)
			end = off + len;
	}
	free(copy);
	if (!l.head.count)
		usage_error("huge: needs a range");
	end = (end + (2ULL << 20) - 1) & ~((2ULL << 20) - 1);
	memfd = udmabuf_memfd(end, MFD_HUGETLB | (21U << 26));
	for (unsigned int i = 0; i < l.head.count; i++)
		l.item[i].memfd = memfd;
	fd = udmabuf_ioctl(UDMABUF_CREATE_LIST, &l);
	close(memfd);
	return fd;
}

/* One queue nest; id or type < 0: leave that attribute out. */
static void put_queue(struct genl_req *r, long long id, int type)
{
	size_t nest = genl_nest_start(r, NETDEV_A_DMABUF_QUEUES);

	if (id >= 0)
		genl_put_u32(r, NETDEV_A_QUEUE_ID, id);
	if (type >= 0)
		genl_put_u32(r, NETDEV_A_QUEUE_TYPE, type);
	genl_nest_end(r, nest);
}

/* QUEUES: A,B,C-D rx queues; for malformed requests also tx:N (a tx
 * queue), noid (no id) and notype:N (no type).
 */
static void put_queues(struct genl_req *r, const char *spec)
{
	char *copy = strdup(spec), *tok, *save = NULL, *dash;
	unsigned long long a, b;

	if (!copy)
		sys_fatal("strdup");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strncmp(tok, "tx:", 3)) {
			put_queue(r, parse_num(tok + 3, UINT32_MAX, "queue"),
				  NETDEV_QUEUE_TYPE_TX);
			continue;
		}
		if (!strncmp(tok, "notype:", 7)) {
			put_queue(r, parse_num(tok + 7, UINT32_MAX, "queue"), -1);
			continue;
		}
		if (!strcmp(tok, "noid")) {
			put_queue(r, -1, NETDEV_QUEUE_TYPE_RX);
			continue;
		}
		dash = strchr(tok, '-');
		if (dash)
			*dash = 0;
		a = parse_num(tok, UINT32_MAX, "queue");
		b = dash ? parse_num(dash + 1, UINT32_MAX, "queue") : a;
		if (b < a || b - a > 1024)
			usage_error("bad queue range '%s'", spec);
		for (; a <= b; a++)
			put_queue(r, a, NETDEV_QUEUE_TYPE_RX);
	}
	free(copy);
}

static volatile sig_atomic_t got_stop, got_snap;
static pid_t run_pid;

static void on_signal(int sig)
{
	/* With --run, the command gets the signals. */
	if (run_pid > 0)
		kill(run_pid, sig);
	else if (sig == SIGUSR1)
		got_snap = 1;
	else
		got_stop = 1;
}

/* The first LEN bytes of the dma-buf, through its mmap, CPU-synced. */
static void snapshot(int dmabuf, const char *file, size_t len)
{
	struct dma_buf_sync sync = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ };
	char done[4096];
	void *map;
	FILE *f;
	int fd;

	map = mmap(NULL, len, PROT_READ, MAP_SHARED, dmabuf, 0);
	if (map == MAP_FAILED)
		sys_fatal("mmap dma-buf");
	if (ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync) < 0)
		sys_fatal("DMA_BUF_IOCTL_SYNC");
	f = fopen(file, "w");
	if (!f || fwrite(map, 1, len, f) != len || fclose(f))
		sys_fatal(file);
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
	if (ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync) < 0)
		sys_fatal("DMA_BUF_IOCTL_SYNC");
	munmap(map, len);
	snprintf(done, sizeof(done), "%s.done", file);
	fd = open(done, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		sys_fatal(done);
	close(fd);
}

/* Kernel memory in KiB from /proc/meminfo: [0] MemFree, [1] Slab +
 * VmallocUsed.
 */
static void kmem(long long out[2])
{
	char line[256];
	long long v;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		sys_fatal("/proc/meminfo");
	out[0] = out[1] = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemFree: %lld", &v) == 1)
			out[0] = v;
		else if (sscanf(line, "Slab: %lld", &v) == 1 ||
			 sscanf(line, "VmallocUsed: %lld", &v) == 1)
			out[1] += v;
	}
	fclose(f);
}

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* bind-rx IFINDEX QUEUES DMABUF [--hold] [--snapshot FILE[:LEN]] */
/* --run: COMMAND runs while the binding holds, with the dma-buf's fd and
 * the binding's id in DEVMEM_DMABUF_FD and DEVMEM_DMABUF_ID; signals go
 * to it; its exit status becomes ours (128 + N for signal N).
 */
static int run_bound(int dmabuf, char **argv, const sigset_t *mask)
{
	char num[32];
	int status;

	fflush(stdout);
	run_pid = fork();
	if (run_pid < 0)
		sys_fatal("fork");
	if (!run_pid) {
		snprintf(num, sizeof(num), "%d", dmabuf);
		setenv("DEVMEM_DMABUF_FD", num, 1);
		snprintf(num, sizeof(num), "%llu", bound_id);
		setenv("DEVMEM_DMABUF_ID", num, 1);
		if (fcntl(dmabuf, F_SETFD, 0) < 0)
			sys_fatal("fcntl");
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGUSR1, SIG_DFL);
		sigprocmask(SIG_SETMASK, mask, NULL);
		execvp(argv[0], argv);
		fprintf(stderr, PROG ": %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	sigprocmask(SIG_SETMASK, mask, NULL);
	while (waitpid(run_pid, &status, 0) < 0)
		if (errno != EINTR)
			sys_fatal("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) :
				   128 + WTERMSIG(status);
}

static int bind_rx(struct nl *nl, struct genl_req *r, int argc, char **argv)
{
	unsigned long long size = 0, snap_len = 64 << 10, cycles = 1, c;
	unsigned long long page_size = 0;
	const char *snap = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, old;
	int i, hold = 0, stats = 0, dmabuf, err;
	long long mem0[2], mem1[2], t0 = 0, t1 = 0;
	char **run = NULL;
	char *colon;

	if (argc < 5)
		usage_error("bind-rx needs IFINDEX QUEUES DMABUF");
	for (i = 5; i < argc; i++) {
		if (!strcmp(argv[i], "--run")) {
			if (i + 1 == argc)
				usage_error("--run needs a command");
			run = argv + i + 1;
			break;
		} else if (!strcmp(argv[i], "--hold")) {
			hold = 1;
		} else if (!strcmp(argv[i], "--stats")) {
			stats = 1;
		} else if (!strcmp(argv[i], "--rx-page-size") && i + 1 < argc) {
			page_size = parse_num(argv[++i], UINT32_MAX,
					      "rx page size");
		} else if (!strcmp(argv[i], "--cycles") && i + 1 < argc) {
			cycles = parse_num(argv[++i], 1000000, "cycle count");
			if (!cycles)
				usage_error("--cycles needs at least 1");
		} else if (!strcmp(argv[i], "--snapshot") && i + 1 < argc) {
			snap = argv[++i];
			colon = strrchr(snap, ':');
			if (colon) {
				*colon = 0;
				snap_len = size_1t(colon + 1);
			}
		} else {
			usage_error("unknown bind-rx option '%s'", argv[i]);
		}
	}
	if (!strncmp(argv[4], "udmabuf:", 8)) {
		size = size_1t(argv[4] + 8);
		if (snap && snap_len > size)
			usage_error("snapshot longer than the udmabuf");
	} else if (!strncmp(argv[4], "fd:", 3) ||
		   !strncmp(argv[4], "huge:", 5)) {
		if (snap)
			usage_error("--snapshot needs a udmabuf:SIZE");
	} else {
		usage_error("DMABUF must be udmabuf:SIZE, huge:RANGES or fd:N, not '%s'",
			    argv[4]);
	}
	if (snap && !hold)
		usage_error("--snapshot needs --hold");
	if (cycles > 1 && hold)
		usage_error("--cycles and --hold exclude each other");
	if (run && (hold || cycles > 1))
		usage_error("--run excludes --hold, --snapshot and --cycles");

	/* Signals wait until the binding exists. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);

	if (size)
		dmabuf = udmabuf_create(size);
	else if (!strncmp(argv[4], "huge:", 5))
		dmabuf = udmabuf_create_huge(argv[4] + 5, &size);
	else
		dmabuf = (int)parse_num(argv[4] + 3, INT32_MAX, "fd");
	/* Each cycle binds through a new socket and closes it: unbind. */
	for (c = 1; c <= cycles; c++) {
		if (c > 1)
			close(nl->fd);
		nl_open(nl);
		genl_req_init(r, nl->family, NETDEV_CMD_BIND_RX, 0);
		genl_put_u32(r, NETDEV_A_DMABUF_IFINDEX,
			parse_num(argv[2], UINT32_MAX, "ifindex"));
		genl_put_u32(r, NETDEV_A_DMABUF_FD, dmabuf);
		put_queues(r, argv[3]);
		if (page_size)
			genl_put_u32(r, NETDEV_A_DMABUF_RX_PAGE_SIZE,
				     page_size);
		if (stats) {
			kmem(mem0);
			t0 = now_us();
		}
		err = transact(nl, r, c == cycles ? print_msg : NULL, NULL);
		if (stats) {
			t1 = now_us();
			kmem(mem1);
		}
		if (err)
			break;
	}
	if (cycles > 1)
		printf("cycles=%llu\n", err ? c - 1 : cycles);
	if (stats && !err)
		printf("bind_us=%lld memfree_kib=%lld slab_vmalloc_kib=%lld\n",
		       t1 - t0, mem0[0] - mem1[0], mem1[1] - mem0[1]);
	fflush(stdout);
	if (!err && run)
		return run_bound(dmabuf, run, &old);
	if (err || !hold)
		return err ? 1 : 0;
	while (!got_stop) {
		sigsuspend(&old);
		if (got_snap && snap) {
			got_snap = 0;
			snapshot(dmabuf, snap, snap_len);
		}
	}
	return 0;
}

/* --- owner-race ---------------------------------------------------------- */

/* The id of the binding on rx queue @q of @ifindex (0: none). */
static unsigned long long queue_binding(struct nl *nl, uint32_t ifindex,
					uint32_t q)
{
	struct genl_val id = { .type = NETDEV_A_QUEUE_DMABUF };
	static struct genl_req r;

	genl_req_init(&r, nl->family, NETDEV_CMD_QUEUE_GET, 0);
	genl_put_u32(&r, NETDEV_A_QUEUE_IFINDEX, ifindex);
	genl_put_u32(&r, NETDEV_A_QUEUE_TYPE, NETDEV_QUEUE_TYPE_RX);
	genl_put_u32(&r, NETDEV_A_QUEUE_ID, q);
	if (transact(nl, &r, genl_take, &id))
		exit(1);
	return id.v;
}

/* bind-rx of queue @q through @nl: the binding's id, or -errno. */
static long long bind_one(struct nl *nl, uint32_t ifindex, uint32_t q,
			  int dmabuf)
{
	struct genl_val id = { .type = NETDEV_A_DMABUF_ID };
	static struct genl_req r;
	int err;

	genl_req_init(&r, nl->family, NETDEV_CMD_BIND_RX, 0);
	genl_put_u32(&r, NETDEV_A_DMABUF_IFINDEX, ifindex);
	genl_put_u32(&r, NETDEV_A_DMABUF_FD, dmabuf);
	put_queue(&r, q, NETDEV_QUEUE_TYPE_RX);
	err = transact(nl, &r, genl_take, &id);
	return err ? err : (long long)id.v;
}

static void xpipe(int p[2])
{
	if (pipe(p) < 0)
		sys_fatal("pipe");
}

static void xread(int fd, void *buf, size_t len)
{
	if (read(fd, buf, len) != (ssize_t)len)
		sys_fatal("read from a pipe");
}

static void xwrite(int fd, const void *buf, size_t len)
{
	if (write(fd, buf, len) != (ssize_t)len)
		sys_fatal("write to a pipe");
}

/* Socket B: wait for port id @portid to be free, take it, bind queue @q,
 * report the id (or -errno) on @res and hold it until @go says so.
 */
static void __attribute__((noreturn))
race_b(uint16_t family, uint32_t portid, uint32_t ifindex, uint32_t q,
       int ready, int res, int go)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_pid = portid };
	static struct nl nl;
	int dmabuf = udmabuf_create(4 << 20);
	long long id;
	char c = 0;

	xwrite(ready, &c, 1);
	for (;;) {
		nl.fd = genl_open();
		if (!bind(nl.fd, (struct sockaddr *)&sa, sizeof(sa)))
			break;
		if (errno != EADDRINUSE)
			sys_fatal("bind");
		close(nl.fd);
	}
	nl.family = family;
	id = bind_one(&nl, ifindex, q, dmabuf);
	xwrite(res, &id, sizeof(id));
	xread(go, &c, 1);
	_exit(0);
}

static int owner_race(int argc, char **argv)
{
	uint32_t ifindex, qa, qb, qbusy, rounds, i;
	unsigned long long reused = 0, lost = 0, bad = 0, got;
	struct sockaddr_nl sa;
	socklen_t salen;
	static struct nl a, check;
	int ready[2], res[2], go[2], dmabuf, status;
	pid_t busy, b;
	long long id_a, id_b;
	char c = 0;

	if (argc != 7)
		usage_error("owner-race needs IFINDEX QA QB QBUSY ROUNDS");
	ifindex = parse_num(argv[2], UINT32_MAX, "ifindex");
	qa = parse_num(argv[3], UINT32_MAX, "queue");
	qb = parse_num(argv[4], UINT32_MAX, "queue");
	qbusy = parse_num(argv[5], UINT32_MAX, "queue");
	rounds = parse_num(argv[6], 100000, "rounds");
	if (qa == qb || qa == qbusy || qb == qbusy)
		usage_error("QA, QB and QBUSY must differ");
	nl_open(&check);

	/* Keep rtnl busy, so that a closing socket's release waits for it:
	 * binding (and unbinding) a large dma-buf holds it while it maps
	 * and slices the buffer.
	 */
	busy = fork();
	if (busy < 0)
		sys_fatal("fork");
	if (!busy) {
		static struct nl own;

		dmabuf = udmabuf_create(256 << 20);
		for (;;) {
			nl_open(&own);
			if (bind_one(&own, ifindex, qbusy, dmabuf) < 0)
				exit(1);
			close(own.fd);
		}
	}

	dmabuf = udmabuf_create(4 << 20);
	for (i = 1; i <= rounds; i++) {
		nl_open(&a);
		salen = sizeof(sa);
		if (getsockname(a.fd, (struct sockaddr *)&sa, &salen) < 0)
			sys_fatal("getsockname");
		id_a = bind_one(&a, ifindex, qa, dmabuf);
		if (id_a < 0) {
			fprintf(stderr, "round %u: socket A's bind-rx failed\n", i);
			bad++;
			close(a.fd);
			break;
		}
		xpipe(ready);
		xpipe(res);
		xpipe(go);
		b = fork();
		if (b < 0)
			sys_fatal("fork");
		if (!b) {
			close(a.fd);
			close(dmabuf);
			race_b(a.family, sa.nl_pid, ifindex, qb, ready[1],
			       res[1], go[0]);
		}
		xread(ready[0], &c, 1);
		close(a.fd);
		xread(res[0], &id_b, sizeof(id_b));

		got = queue_binding(&check, ifindex, qa);
		if (got) {
			fprintf(stderr, "round %u: queue %u still has binding %llu after its socket closed\n",
				i, qa, got);
			bad++;
		}
		if (id_b > 0) {
			reused++;
			got = queue_binding(&check, ifindex, qb);
			if (got != (unsigned long long)id_b) {
				fprintf(stderr, "round %u: binding %lld of the socket that took port id %u is gone (queue %u: %llu) after the port id's old socket closed\n",
					i, id_b, sa.nl_pid, qb, got);
				lost++;
			}
		}
		xwrite(go[1], &c, 1);
		while (waitpid(b, &status, 0) < 0)
			if (errno != EINTR)
				sys_fatal("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
		got = queue_binding(&check, ifindex, qb);
		if (got) {
			fprintf(stderr, "round %u: queue %u still has binding %llu after its socket closed\n",
				i, qb, got);
			bad++;
		}
		close(ready[0]);
		close(ready[1]);
		close(res[0]);
		close(res[1]);
		close(go[0]);
		close(go[1]);
		if (bad)
			break;
	}
	kill(busy, SIGKILL);
	waitpid(busy, NULL, 0);
	printf("rounds=%u reused=%llu lost=%llu\n", i > rounds ? rounds : i,
	       reused, lost);
	return lost || bad ? 1 : 0;
}

/* CMD [KEY]: the object KEY names (attribute ATTR), or a dump of all. */
static void get_one_or_all(struct nl *nl, struct genl_req *r, int argc,
			   char **argv, uint8_t cmd, uint16_t attr,
			   const char *what)
{
	if (argc > 3)
		usage_error("%s takes at most one %s", argv[1], what);
	nl_open(nl);
	genl_req_init(r, nl->family, cmd, argc == 2 ? NLM_F_DUMP : 0);
	if (argc == 3)
		genl_put_u32(r, attr, parse_num(argv[2], UINT32_MAX, what));
}

int main(int argc, char **argv)
{
	static struct nl nl;
	static struct genl_req r;
	const char *cmd;
	int i, dump;

	if (argc < 2)
		usage_error("no command");
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return 0;
	}

	if (!strcmp(cmd, "dev-get")) {
		get_one_or_all(&nl, &r, argc, argv, NETDEV_CMD_DEV_GET,
			       NETDEV_A_DEV_IFINDEX, "ifindex");
	} else if (!strcmp(cmd, "queue-get")) {
		if (argc != 2 && argc != 3 && argc != 5)
			usage_error("queue-get takes nothing, IFINDEX, or IFINDEX rx|tx ID");
		nl_open(&nl);
		genl_req_init(&r, nl.family, NETDEV_CMD_QUEUE_GET,
			      argc != 5 ? NLM_F_DUMP : 0);
		if (argc >= 3)
			genl_put_u32(&r, NETDEV_A_QUEUE_IFINDEX,
				parse_num(argv[2], UINT32_MAX, "ifindex"));
		if (argc == 5) {
			if (strcmp(argv[3], "rx") && strcmp(argv[3], "tx"))
				usage_error("queue type must be rx or tx, not '%s'",
					    argv[3]);
			genl_put_u32(&r, NETDEV_A_QUEUE_TYPE,
				!strcmp(argv[3], "rx") ? NETDEV_QUEUE_TYPE_RX :
							NETDEV_QUEUE_TYPE_TX);
			genl_put_u32(&r, NETDEV_A_QUEUE_ID,
				parse_num(argv[4], UINT32_MAX, "queue id"));
		}
	} else if (!strcmp(cmd, "page-pool-get")) {
		get_one_or_all(&nl, &r, argc, argv, NETDEV_CMD_PAGE_POOL_GET,
			       NETDEV_A_PAGE_POOL_ID, "page pool id");
	} else if (!strcmp(cmd, "bind-rx")) {
		return bind_rx(&nl, &r, argc, argv);
	} else if (!strcmp(cmd, "owner-race")) {
		return owner_race(argc, argv);
	} else if (!strcmp(cmd, "raw")) {
		i = 2;
		dump = i < argc && !strcmp(argv[i], "--dump");
		i += dump;
		show_bad_attr = i < argc && !strcmp(argv[i], "--bad-attr");
		i += show_bad_attr;
		if (i >= argc)
			usage_error("raw needs a command number");
		nl_open(&nl);
		genl_req_init(&r, nl.family, parse_num(argv[i], 255, "command"),
			      dump ? NLM_F_DUMP : 0);
		for (i++; i < argc; i++)
			put_raw_attr(&r, argv[i]);
	} else {
		usage_error("unknown command '%s'", cmd);
	}
	return transact(&nl, &r, print_msg, NULL) ? 1 : 0;
}
