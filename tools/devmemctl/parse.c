// SPDX-License-Identifier: GPL-2.0
/*
 * devmemctl: the command line into a struct cmd. Nothing here touches the
 * kernel or the file system (the page size aside), so every usage error
 * is found, and can be tested, before anything happens.
 *
 *   devmemctl [OPTIONS] OBJECT [VERB] [ARGS]
 *
 * Objects and verbs may be abbreviated, as in iproute2: the first one in
 * table order that the word begins is taken ("d" is dev, "q s" queue
 * show). Keywords of arguments are spelled out, and so are bind's
 * directions (bind rx, the default, and bind tx).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devmemctl.h"

/* Arguments a command takes. */
#define A_DEV		(1U << 0)
#define A_QUEUES	(1U << 1)
#define A_FLOW		(1U << 2)
#define A_DMABUF	(1U << 3)
#define A_PAGE_SIZE	(1U << 4)

struct object {
	const char *name;
	enum cmd_kind kind;
	int has_verb;		/* OBJECT [show] ... */
	unsigned int args;	/* A_* */
	const char *syntax;	/* after "devmemctl [OPTIONS] "; wrapped */
	const char *help;	/* what it does, lines indented by 4 */
};

/* bind's second form, bind tx, is the one without queues. */
static int is_bind_tx(const struct object *o)
{
	return o->kind == CMD_BIND && !(o->args & A_QUEUES);
}

static const struct object objects[] = {
	{ "dev", CMD_DEV_SHOW, 1, A_DEV,
	  "dev [show] [dev IF]",
	  "      Network devices that are up, each with its numbers of rx and tx\n"
	  "      queues and its rx queues bound to dma-bufs, by binding.\n" },
	{ "queue", CMD_QUEUE_SHOW, 1, A_DEV,
	  "queue [show] [dev IF]",
	  "      The queues of the devices that are up, one a line: device, type\n"
	  "      (rx or tx), id, NAPI instance and, for a bound rx queue, the\n"
	  "      binding's dmabuf id.\n" },
	{ "pool", CMD_POOL_SHOW, 1, A_DEV,
	  "pool [show] [dev IF]",
	  "      Page pools: id, device, NAPI instance, buffers in flight and their\n"
	  "      bytes, the binding they take buffers from, and when they were\n"
	  "      detached from their queue. With dev IF, pools whose device is\n"
	  "      gone are left out.\n" },
	{ "setup", CMD_SETUP, 0, A_DEV | A_QUEUES | A_FLOW,
	  "setup dev IF queues A[-B]\n"
	  "          [flow {tcp4|tcp6} [src IP] dst IP port PORT]",
	  "      Prepare rx queues A..B of IF for device memory: header split on,\n"
	  "      the queues out of the RSS indirection table and, with flow, an\n"
	  "      n-tuple rule steering that TCP flow to queue A. What it changes is\n"
	  "      recorded in the device's state files for teardown. Queues another\n"
	  "      setup (by this command or a program) has are refused.\n" },
	{ "teardown", CMD_TEARDOWN, 0, A_DEV,
	  "teardown dev IF",
	  "      Put back what setup, or a program that ended without putting it\n"
	  "      back, changed on IF, and remove their state files. Set-ups of\n"
	  "      programs still running are left alone.\n" },
	{ "bind", CMD_BIND, 0, A_DEV | A_QUEUES | A_DMABUF | A_PAGE_SIZE,
	  "bind dev IF queues A[-B]\n"
	  "          dmabuf {udmabuf SIZE | udmabuf-huge SIZE | heap SIZE | fd N}\n"
	  "          [rx-page-size N]",
	  "      Bind a dma-buf to rx queues A..B of IF: a new udmabuf (of 2M\n"
	  "      huge pages: udmabuf-huge), a new buffer of the system dma-heap,\n"
	  "      or the dma-buf open as fd N. rx-page-size: receive buffers of\n"
	  "      N bytes instead of pages (a power of two; the dma-buf's\n"
	  "      segments aligned to it, as udmabuf-huge's are; a device that\n"
	  "      supports it). Prints the binding's dmabuf id, then holds the\n"
	  "      binding until SIGINT, SIGTERM or SIGHUP, and exits 0 having\n"
	  "      released it. \"bind rx\" is the same.\n" },
	{ "bind", CMD_BIND, 0, A_DEV | A_DMABUF,
	  "bind tx dev IF\n"
	  "          dmabuf {udmabuf SIZE | udmabuf-huge SIZE | heap SIZE | fd N}",
	  "      Bind a dma-buf for sending from it through IF (the whole device:\n"
	  "      no queues). Prints the binding's dmabuf id and holds the binding\n"
	  "      as bind does; TCP sockets routed through IF send from the buffer\n"
	  "      with sendmsg(MSG_ZEROCOPY) and that id in SCM_DEVMEM_DMABUF.\n" },
	{ "help", CMD_HELP, 0, 0,
	  "help [OBJECT]",
	  "      This text, or that of one object.\n" },
};

#define NR_OBJECTS	(sizeof(objects) / sizeof(objects[0]))

const char *cmd_name(enum cmd_kind kind)
{
	size_t i;

	for (i = 0; i < NR_OBJECTS; i++)
		if (objects[i].kind == kind)
			return objects[i].name;
	return kind == CMD_VERSION ? "version" : "?";
}

static void print_object(FILE *f, const struct object *o)
{
	fprintf(f, "  %s\n%s", o->syntax, o->help);
}

void print_usage(FILE *f, const char *topic)
{
	size_t i;

	int found = 0;

	/* an object of several forms (bind, bind tx): their syntax, then
	 * what each does
	 */
	for (i = 0; topic && i < NR_OBJECTS; i++)
		if (!strcmp(objects[i].name, topic))
			fprintf(f, "%s" PROG " [OPTIONS] %s\n",
				found++ ? "       " : "Usage: ", objects[i].syntax);
	if (found) {
		for (i = 0; i < NR_OBJECTS; i++)
			if (!strcmp(objects[i].name, topic))
				fprintf(f, "\n%s", objects[i].help);
		fprintf(f, "\nSee '" PROG " help' for the options and the rest.\n");
		return;
	}
	fprintf(f,
		"Usage: " PROG " [OPTIONS] OBJECT [VERB] [ARGS]\n"
		"\n"
		"Device-memory TCP from the command line: devices, queues and page\n"
		"pools as the kernel's netdev family shows them, NIC set-up, and\n"
		"dma-buf bindings to rx queues and, for sending, to devices.\n"
		"\n"
		"Commands:\n");
	for (i = 0; i < NR_OBJECTS; i++)
		print_object(f, &objects[i]);
	fprintf(f,
		"\n"
		"Options (before OBJECT):\n"
		"  -j, --json     output JSON\n"
		"  -p, --pretty   output indented JSON (implies -j)\n"
		"  -V, --version  print the version and exit\n"
		"  -h, --help     print this text and exit\n"
		"\n"
		"IF is a device name or ifindex. SIZE is in bytes, with an optional\n"
		"K, M or G suffix (powers of 1024), and a multiple of the page size.\n"
		"Objects and verbs may be abbreviated, and show is the default verb:\n"
		"\"" PROG " q\" is \"" PROG " queue show\".\n"
		"\n"
		"Exit status: 0 success; 1 failure, with \"Error: <reason>\" on standard\n"
		"error (the kernel's own message when it refused a request); 2 usage\n"
		"error, with \"Error: <reason>\" too.\n"
		"\n"
		"Environment: " STATE_DIR_ENV " is where libdevmem keeps the devices'\n"
		"state files (default " STATE_DIR_DEFAULT ").\n");
}

/* Parse state: the error buffer. */
struct ps {
	char *err;
	size_t errlen;
};

static int __attribute__((format(printf, 2, 3)))
fail(struct ps *ps, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ps->err, ps->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* @word is a non-empty prefix of @keyword. */
static int matches(const char *word, const char *keyword)
{
	size_t n = strlen(word);

	return n && n <= strlen(keyword) && !strncmp(word, keyword, n);
}

/* The name a form goes by in messages: "bind tx" for the second bind. */
static const char *form_name(const struct object *o)
{
	return is_bind_tx(o) ? "bind tx" : o->name;
}

static const struct object *find_object(const char *word)
{
	size_t i;

	for (i = 0; i < NR_OBJECTS; i++)
		if (matches(word, objects[i].name))
			return &objects[i];
	return NULL;
}

/* Decimal digits only (no sign, no space, no 0x), at most @max. */
static int parse_uint(const char *s, uint64_t max, uint64_t *v)
{
	uint64_t n = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (n > (max - (uint64_t)(*s - '0')) / 10)
			return -1;
		n = n * 10 + (uint64_t)(*s - '0');
	}
	*v = n;
	return 0;
}

static int parse_queues(struct ps *ps, const char *s, struct cmd *c)
{
	char buf[32];
	const char *dash = strchr(s, '-');
	uint64_t a, b;

	if (strlen(s) >= sizeof(buf))
		return fail(ps, "bad queue range '%s' (A or A-B)", s);
	strcpy(buf, s);
	if (dash) {
		buf[dash - s] = '\0';
		if (parse_uint(buf, UINT32_MAX, &a) ||
		    parse_uint(buf + (dash - s) + 1, UINT32_MAX, &b))
			return fail(ps, "bad queue range '%s' (A or A-B)", s);
	} else {
		if (parse_uint(buf, UINT32_MAX, &a))
			return fail(ps, "bad queue range '%s' (A or A-B)", s);
		b = a;
	}
	if (a > b)
		return fail(ps, "bad queue range '%s' (A above B)", s);
	if (b - a >= MAX_QUEUES)
		return fail(ps, "queue range '%s' has more than %u queues", s,
			    MAX_QUEUES);
	c->first = (uint32_t)a;
	c->last = (uint32_t)b;
	return 0;
}

/* SIZE: bytes, or K, M or G (KiB, MiB, GiB); a multiple of the page size. */
static int parse_size(struct ps *ps, const char *s, uint64_t *size)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = strlen(s), digits = n;
	unsigned int shift = 0;
	char num[32];
	uint64_t v;

	if (n) {
		switch (s[n - 1]) {
		case 'K': case 'k': shift = 10; break;
		case 'M': case 'm': shift = 20; break;
		case 'G': case 'g': shift = 30; break;
		}
		if (shift)
			digits--;
	}
	if (digits < sizeof(num)) {
		memcpy(num, s, digits);
		num[digits] = '\0';
	}
	/* (a size_t: the buffer's size is one) */
	if (digits >= sizeof(num) ||
	    parse_uint(num, (uint64_t)SIZE_MAX >> shift, &v) || !v)
		return fail(ps, "bad size '%s' (bytes, or with a K, M or G suffix)",
			    s);
	v <<= shift;
	if (page > 0 && v % (uint64_t)page)
		return fail(ps, "size '%s' is not a multiple of the page size (%ld)",
			    s, page);
	*size = v;
	return 0;
}

static int parse_dev(struct ps *ps, const char *s, struct cmd *c)
{
	if (!*s || strlen(s) >= IF_NAMESIZE)
		return fail(ps, "'%s' is not a device name or index", s);
	c->dev = s;
	return 0;
}

/* The flow's addresses and port into c->flow, once all are known. */
static int finish_flow(struct ps *ps, struct cmd *c, const char *port)
{
	int v6 = !strcmp(c->flow_type, "tcp6");
	int af = v6 ? AF_INET6 : AF_INET;
	const char *fam = v6 ? "IPv6" : "IPv4";
	uint64_t p;

	if (!c->flow_dst)
		return fail(ps, "flow needs dst IP");
	if (!port)
		return fail(ps, "flow needs port PORT");
	memset(&c->flow, 0, sizeof(c->flow));
	c->flow.size = sizeof(c->flow);
	c->flow.family = af;
	if (inet_pton(af, c->flow_dst, c->flow.dst) != 1)
		return fail(ps, "dst '%s' is not an %s address (flow %s)",
			    c->flow_dst, fam, c->flow_type);
	if (c->flow_src) {
		if (inet_pton(af, c->flow_src, c->flow.src) != 1)
			return fail(ps, "src '%s' is not an %s address (flow %s)",
				    c->flow_src, fam, c->flow_type);
		c->flow.has_src = 1;
	}
	if (parse_uint(port, 65535, &p) || !p)
		return fail(ps, "bad port '%s' (1-65535)", port);
	c->flow.dst_port = (uint16_t)p;
	return 0;
}

/* What each keyword's value is, for "KEYWORD needs ...". */
static const char *value_of(const char *kw)
{
	static const struct { const char *kw, *what; } tab[] = {
		{ "dev", "a device name or index" },
		{ "queues", "A[-B]" },
		{ "flow", "tcp4 or tcp6" },
		{ "src", "an address" },
		{ "dst", "an address" },
		{ "port", "a port number" },
		{ "dmabuf", "udmabuf SIZE, udmabuf-huge SIZE, heap SIZE or fd N" },
		{ "rx-page-size", "a size in bytes" },
	};
	size_t i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(kw, tab[i].kw))
			return tab[i].what;
	return "a value";
}

static int parse_args(struct ps *ps, const struct object *o, int argc,
		      char **argv, struct cmd *c)
{
	const char *port = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		const char *kw = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		unsigned int need;
		uint64_t v;

		if (!strcmp(kw, "dev"))
			need = A_DEV;
		else if (!strcmp(kw, "queues"))
			need = A_QUEUES;
		else if (!strcmp(kw, "flow") || !strcmp(kw, "src") ||
			 !strcmp(kw, "dst") || !strcmp(kw, "port"))
			need = A_FLOW;
		else if (!strcmp(kw, "dmabuf"))
			need = A_DMABUF;
		else if (!strcmp(kw, "rx-page-size"))
			need = A_PAGE_SIZE;
		else
			need = 0;
		if (is_bind_tx(o) && need == A_QUEUES)
			return fail(ps, "bind tx takes no queues: it binds the dma-buf to the whole device");
		if (is_bind_tx(o) && need == A_PAGE_SIZE)
			return fail(ps, "bind tx takes no rx-page-size: it sends from pages of the dma-buf");
		if (!(o->args & need))
			return fail(ps, "unexpected argument '%s' for %s", kw,
				    form_name(o));
		if (!val)
			return fail(ps, "%s needs %s", kw, value_of(kw));
		i++;

		if (!strcmp(kw, "dev")) {
			if (c->dev)
				return fail(ps, "dev given twice");
			if (parse_dev(ps, val, c))
				return -1;
		} else if (!strcmp(kw, "queues")) {
			if (c->has_queues)
				return fail(ps, "queues given twice");
			if (parse_queues(ps, val, c))
				return -1;
			c->has_queues = 1;
		} else if (!strcmp(kw, "flow")) {
			if (c->has_flow)
				return fail(ps, "flow given twice");
			if (strcmp(val, "tcp4") && strcmp(val, "tcp6"))
				return fail(ps, "flow must be tcp4 or tcp6, not '%s'",
					    val);
			c->flow_type = val;
			c->has_flow = 1;
		} else if (need == A_FLOW) {
			const char **slot = !strcmp(kw, "src") ? &c->flow_src :
					    !strcmp(kw, "dst") ? &c->flow_dst :
					    &port;

			if (!c->has_flow)
				return fail(ps, "%s belongs after flow tcp4|tcp6",
					    kw);
			if (*slot)
				return fail(ps, "%s given twice", kw);
			*slot = val;
		} else if (!strcmp(kw, "dmabuf")) {
			const char *arg = i + 1 < argc ? argv[i + 1] : NULL;

			if (c->dmabuf != DMABUF_NONE)
				return fail(ps, "dmabuf given twice");
			if (!strcmp(val, "udmabuf"))
				c->dmabuf = DMABUF_UDMABUF;
			else if (!strcmp(val, "udmabuf-huge"))
				c->dmabuf = DMABUF_UDMABUF_HUGE;
			else if (!strcmp(val, "heap"))
				c->dmabuf = DMABUF_HEAP;
			else if (!strcmp(val, "fd"))
				c->dmabuf = DMABUF_FD;
			else
				return fail(ps, "dmabuf must be udmabuf, udmabuf-huge, heap or fd, not '%s'",
					    val);
			if (!arg)
				return fail(ps, "dmabuf %s needs %s", val,
					    c->dmabuf == DMABUF_FD ?
					    "a file descriptor" : "a SIZE");
			i++;
			if (c->dmabuf == DMABUF_FD) {
				if (parse_uint(arg, INT_MAX, &v))
					return fail(ps, "bad file descriptor '%s'",
						    arg);
				c->fd = (int)v;
			} else if (parse_size(ps, arg, &c->size)) {
				return -1;
			}
		} else if (!strcmp(kw, "rx-page-size")) {
			if (c->rx_page_size)
				return fail(ps, "rx-page-size given twice");
			/* the kernel judges it: a power of two, >= a page */
			if (parse_size(ps, val, &v))
				return -1;
			if (v > UINT32_MAX)
				return fail(ps, "rx-page-size '%s' is above 4G", val);
			c->rx_page_size = (uint32_t)v;
		}
	}

	if ((o->args & A_DEV) && !o->has_verb && !c->dev)
		return fail(ps, "%s needs dev IF", form_name(o));
	if ((o->args & A_QUEUES) && !c->has_queues)
		return fail(ps, "%s needs queues A[-B]", form_name(o));
	if ((o->args & A_DMABUF) && c->dmabuf == DMABUF_NONE)
		return fail(ps, "%s needs dmabuf {udmabuf SIZE | udmabuf-huge SIZE | heap SIZE | fd N}",
			    form_name(o));
	if (c->has_flow)
		return finish_flow(ps, c, port);
	return 0;
}

/* One short option: 0, 2 when it ends the command line (-h, -V), or -1. */
static int apply_option(struct ps *ps, char opt, struct cmd *c)
{
	switch (opt) {
	case 'j':
		c->json = 1;
		return 0;
	case 'p':
		c->json = 1;
		c->pretty = 1;
		return 0;
	case 'h':
		c->kind = CMD_HELP;
		return 2;
	case 'V':
		c->kind = CMD_VERSION;
		return 2;
	}
	return fail(ps, "unknown option '-%c'", opt);
}

/* -j, -jp, --json, ...: as apply_option(), and 1 when the options end
 * here ("--").
 */
static int parse_option(struct ps *ps, const char *arg, struct cmd *c)
{
	static const struct { const char *name; char opt; } longopts[] = {
		{ "--json", 'j' }, { "--pretty", 'p' },
		{ "--help", 'h' }, { "--version", 'V' },
	};
	const char *s;
	size_t i;
	int r;

	if (!strcmp(arg, "--"))
		return 1;
	if (arg[1] == '-') {
		for (i = 0; i < sizeof(longopts) / sizeof(longopts[0]); i++)
			if (!strcmp(arg, longopts[i].name))
				return apply_option(ps, longopts[i].opt, c);
		return fail(ps, "unknown option '%s'", arg);
	}
	for (s = arg + 1; *s; s++) {
		r = apply_option(ps, *s, c);
		if (r)
			return r;
	}
	return 0;
}

int parse_cmdline(int argc, char **argv, struct cmd *c, char *err,
		  size_t errlen)
{
	struct ps ps = { err, errlen };
	const struct object *o;
	int i = 0, r;

	memset(c, 0, sizeof(*c));
	c->kind = (enum cmd_kind)-1;
	c->fd = -1;
	err[0] = '\0';

	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		r = parse_option(&ps, argv[i], c);
		if (r < 0)
			return -1;
		if (r == 2)
			return 0;	/* -h, -V: the rest is not looked at */
		if (r == 1) {
			i++;
			break;
		}
	}
	if (i >= argc)
		return fail(&ps, "no command given");
	o = find_object(argv[i]);
	if (!o)
		return fail(&ps, "unknown object '%s'", argv[i]);
	i++;
	c->kind = o->kind;

	if (o->kind == CMD_HELP) {
		if (i < argc) {
			const struct object *t = find_object(argv[i]);

			if (!t)
				return fail(&ps, "unknown object '%s'", argv[i]);
			if (i + 1 < argc)
				return fail(&ps, "unexpected argument '%s' for help",
					    argv[i + 1]);
			c->help_topic = t->name;
		}
		return 0;
	}
	if (o->has_verb && i < argc) {
		/* show is the only verb, and the default */
		if (matches(argv[i], "show") || matches(argv[i], "list") ||
		    !strcmp(argv[i], "ls")) {
			i++;
		} else if (!strcmp(argv[i], "dev")) {
			/* "queue dev IF": the default verb */
		} else if (matches(argv[i], "help")) {
			c->kind = CMD_HELP;
			c->help_topic = o->name;
			return 0;
		} else {
			return fail(&ps, "unknown verb '%s' for %s (show, help)",
				    argv[i], o->name);
		}
	}
	if (o->kind == CMD_BIND && i < argc &&
	    (!strcmp(argv[i], "rx") || !strcmp(argv[i], "tx"))) {
		/* rx or tx, spelled out as keywords are; tx is the form
		 * after bind's first in the table
		 */
		if (!strcmp(argv[i], "tx")) {
			while (!is_bind_tx(o))
				o++;
			c->tx = 1;
		}
		i++;
	}
	if (i < argc && !strcmp(argv[i], "help")) {
		c->kind = CMD_HELP;
		c->help_topic = o->name;
		return 0;
	}
	return parse_args(&ps, o, argc - i, argv + i, c);
}
