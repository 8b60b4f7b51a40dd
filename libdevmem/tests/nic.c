// SPDX-License-Identifier: GPL-2.0
/*
 * NIC set-up (src/nic.c) without a NIC: flows parsed from text (good and
 * bad, exact errnos and reasons), argument errors (before any system
 * call: seccomp strict mode), state files written and read back byte for
 * byte, malformed state files refused with the line and the reason, an
 * empty state restored, and lo's refusals (it has no rings, no RSS and
 * no n-tuple filters: nothing can change). Changing a real device is the
 * VM's (nic-vm, selftests/libdevmem-nic.bats).
 *
 * Works on lo, whose ifindex is 1 in every network namespace.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <devmem.h>

#include "nosyscall.h"
#include "test.h"

#define LO	1

static char dir[] = "/tmp/libdevmem-nic.XXXXXX";

static int reason_is(const char *text)
{
	if (!strcmp(devmem_last_error(), text))
		return 1;
	fprintf(stderr, "reason \"%s\", not \"%s\"\n", devmem_last_error(),
		text);
	return 0;
}

/* A file in the test's directory. */
static const char *path_of(const char *name)
{
	static char path[2][PATH_MAX];
	static int i;

	i ^= 1;
	snprintf(path[i], sizeof(path[i]), "%s/%s", dir, name);
	return path[i];
}

static int write_file(const char *path, const char *text, size_t len)
{
	FILE *fp = fopen(path, "w");

	if (!fp)
		return -1;
	fwrite(text, 1, len, fp);
	return fclose(fp) ? -1 : 0;
}

/* The whole of a small file, NUL-terminated; NULL on failure. */
static char *read_file(const char *path)
{
	static char buf[8192];
	size_t n;
	FILE *fp = fopen(path, "r");

	if (!fp)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	return buf;
}

static int test_flow_good(void)
{
	struct devmem_flow f;
	uint8_t v4[4], v6[16];

	CHECK_EQ(devmem_flow_parse(&f, "192.0.2.2", NULL, "5201"), 0);
	CHECK_EQ(f.family, AF_INET);
	CHECK_EQ(f.has_src, 0);
	inet_pton(AF_INET, "192.0.2.2", v4);
	CHECK(!memcmp(f.dst, v4, 4));
	CHECK_EQ(f.dst_port, 5201);
	CHECK(reason_is(""));

	CHECK_EQ(devmem_flow_parse(&f, "192.0.2.2", "192.0.2.1", "1"), 0);
	CHECK_EQ(f.has_src, 1);
	inet_pton(AF_INET, "192.0.2.1", v4);
	CHECK(!memcmp(f.src, v4, 4));
	CHECK_EQ(f.dst_port, 1);

	CHECK_EQ(devmem_flow_parse(&f, "2001:db8::2", "2001:db8::1", "65535"),
		 0);
	CHECK_EQ(f.family, AF_INET6);
	CHECK_EQ(f.has_src, 1);
	inet_pton(AF_INET6, "2001:db8::2", v6);
	CHECK(!memcmp(f.dst, v6, 16));
	inet_pton(AF_INET6, "2001:db8::1", v6);
	CHECK(!memcmp(f.src, v6, 16));
	CHECK_EQ(f.dst_port, 65535);

	/* a v4-mapped address is IPv6; leading zeros are decimal */
	CHECK_EQ(devmem_flow_parse(&f, "::ffff:192.0.2.2", NULL, "080"), 0);
	CHECK_EQ(f.family, AF_INET6);
	CHECK_EQ(f.dst_port, 80);
	return T_PASS;
}

static int test_flow_bad(void)
{
	static const struct {
		const char *dst, *src, *port, *reason;
	} bad[] = {
		{ NULL, NULL, "80", "no destination address" },
		{ "", NULL, "80", "no destination address" },
		{ "192.0.2.256", NULL, "80",
		  "destination address \"192.0.2.256\" is neither IPv4 nor IPv6" },
		{ "fe80::1%lo", NULL, "80",
		  "destination address \"fe80::1%lo\" is neither IPv4 nor IPv6" },
		{ "host.example", NULL, "80",
		  "destination address \"host.example\" is neither IPv4 nor IPv6" },
		{ "192.0.2.2", "", "80", "no source address" },
		{ "192.0.2.2", "2001:db8::1", "80",
		  "source 2001:db8::1 is IPv6, destination 192.0.2.2 is IPv4" },
		{ "2001:db8::2", "192.0.2.1", "80",
		  "source 192.0.2.1 is IPv4, destination 2001:db8::2 is IPv6" },
		{ "192.0.2.2", NULL, NULL, "no port" },
		{ "192.0.2.2", NULL, "", "no port" },
		{ "192.0.2.2", NULL, "0", "port \"0\" is not in 1-65535" },
		{ "192.0.2.2", NULL, "65536", "port \"65536\" is not in 1-65535" },
		{ "192.0.2.2", NULL, "99999999999999999999999",
		  "port \"99999999999999999999999\" is not in 1-65535" },
		{ "192.0.2.2", NULL, "-1", "port \"-1\" is not a decimal number" },
		{ "192.0.2.2", NULL, "+80", "port \"+80\" is not a decimal number" },
		{ "192.0.2.2", NULL, " 80", "port \" 80\" is not a decimal number" },
		{ "192.0.2.2", NULL, "80 ", "port \"80 \" is not a decimal number" },
		{ "192.0.2.2", NULL, "0x50", "port \"0x50\" is not a decimal number" },
	};
	struct devmem_flow f, keep;
	size_t i;

	memset(&f, 0xa5, sizeof(f));
	keep = f;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(devmem_flow_parse(&f, bad[i].dst, bad[i].src,
					   bad[i].port), -EINVAL);
		CHECK(reason_is(bad[i].reason));
		CHECK(!memcmp(&f, &keep, sizeof(f)));
	}
	CHECK_EQ(devmem_flow_parse(NULL, "192.0.2.2", NULL, "80"), -EINVAL);
	CHECK(reason_is("no place for the flow"));
	return T_PASS;
}

/* In a child without system calls: every argument error. */
static int bad_args(void)
{
	struct devmem_flow f = { .family = AF_INET, .dst_port = 80 };
	struct devmem_nic *n = NULL;

	CHECK_EQ(devmem_nic_new(NULL, LO), -EINVAL);
	CHECK(reason_is("no place for the result"));
	CHECK_EQ(devmem_nic_new(&n, 0), -EINVAL);
	CHECK(reason_is("ifindex 0 is not a device index"));
	CHECK_EQ(devmem_nic_new(&n, -3), -EINVAL);
	CHECK(!n);
	CHECK_EQ(devmem_nic_header_split(NULL, 1), -EINVAL);
	CHECK(reason_is("no device state"));
	CHECK_EQ(devmem_nic_rss_exclude(NULL, 0, 0), -EINVAL);
	CHECK_EQ(devmem_nic_flow_add(NULL, &f, 0, NULL), -EINVAL);
	CHECK_EQ(devmem_nic_flow_del(NULL, 0), -EINVAL);
	CHECK_EQ(devmem_nic_setup(NULL, 0, 0, NULL), -EINVAL);
	CHECK_EQ(devmem_nic_restore(NULL), -EINVAL);
	CHECK_EQ(devmem_nic_save(NULL, "x"), -EINVAL);
	CHECK_EQ(devmem_nic_new_from_file(NULL, "x"), -EINVAL);
	CHECK(reason_is("no place for the result"));
	CHECK_EQ(devmem_nic_new_from_file(&n, NULL), -EINVAL);
	CHECK(reason_is("no file name"));
	CHECK_EQ(devmem_nic_new_from_file(&n, ""), -EINVAL);
	devmem_nic_free(NULL);
	return T_PASS;
}

static int test_args(void)
{
	return without_syscalls(bad_args);
}

/* Argument errors of an open state: before any system call too. */
static struct devmem_nic *args_nic;

static int bad_args_open(void)
{
	struct devmem_flow f = { .family = AF_INET, .dst_port = 80 };
	struct devmem_nic *n = args_nic;

	CHECK_EQ(devmem_nic_rss_exclude(n, 3, 2), -EINVAL);
	CHECK(reason_is("queues 3..2: the first is after the last"));
	CHECK_EQ(devmem_nic_setup(n, 3, 2, &f), -EINVAL);
	CHECK(reason_is("queues 3..2: the first is after the last"));
	CHECK_EQ(devmem_nic_flow_add(n, NULL, 0, NULL), -EINVAL);
	CHECK(reason_is("no flow"));
	f.family = AF_UNIX;
	CHECK_EQ(devmem_nic_flow_add(n, &f, 0, NULL), -EINVAL);
	CHECK(reason_is("flow family 1 is neither AF_INET nor AF_INET6"));
	CHECK_EQ(devmem_nic_setup(n, 0, 0, &f), -EINVAL);
	f.family = AF_INET6;
	f.dst_port = 0;
	CHECK_EQ(devmem_nic_flow_add(n, &f, 0, NULL), -EINVAL);
	CHECK(reason_is("flow destination port 0"));
	CHECK_EQ(devmem_nic_save(n, NULL), -EINVAL);
	CHECK(reason_is("no file name"));
	CHECK_EQ(devmem_nic_save(n, ""), -EINVAL);
	/* nothing recorded: nothing to do, no socket needed */
	CHECK_EQ(devmem_nic_restore(n), 0);
	CHECK_EQ(devmem_nic_ifindex(n), LO);
	return T_PASS;
}

static int test_args_open(void)
{
	int ret;

	CHECK_EQ(devmem_nic_new(&args_nic, LO), 0);
	ret = without_syscalls(bad_args_open);
	devmem_nic_free(args_nic);
	return ret;
}

static int test_open(void)
{
	struct devmem_nic *n = NULL;

	CHECK_EQ(devmem_nic_new(&n, INT_MAX), -ENODEV);
	CHECK(reason_is("no network device with ifindex 2147483647"));
	CHECK(!n);
	CHECK_EQ(devmem_nic_new(&n, LO), 0);
	CHECK(n);
	CHECK_EQ(devmem_nic_ifindex(n), LO);
	devmem_nic_free(n);
	return T_PASS;
}

static int test_empty(void)
{
	const char *path = path_of("empty");
	struct devmem_nic *n;
	const char *text;

	CHECK_EQ(devmem_nic_new(&n, LO), 0);
	CHECK_EQ(devmem_nic_restore(n), 0);
	CHECK_EQ(devmem_nic_save(n, path), 0);
	devmem_nic_free(n);
	text = read_file(path);
	CHECK(text);
	CHECK(!strcmp(text, "libdevmem-nic 1\ndevice 1 lo\n"));
	CHECK_EQ(devmem_nic_new_from_file(&n, path), 0);
	CHECK_EQ(devmem_nic_ifindex(n), LO);
	CHECK_EQ(devmem_nic_restore(n), 0);
	devmem_nic_free(n);
	return T_PASS;
}

/* Every kind of line, loaded and saved again: the same bytes. */
static int round_trip(const char *name, const char *text)
{
	const char *in = path_of(name), *out;
	struct devmem_nic *n;
	const char *back;

	CHECK_EQ(write_file(in, text, strlen(text)), 0);
	CHECK_EQ(devmem_nic_new_from_file(&n, in), 0);
	CHECK(reason_is(""));
	out = path_of("saved");
	/* over an older file */
	CHECK_EQ(write_file(out, "old\n", 4), 0);
	CHECK_EQ(devmem_nic_save(n, out), 0);
	devmem_nic_free(n);
	back = read_file(out);
	CHECK(back);
	if (strcmp(back, text)) {
		fprintf(stderr, "saved:\n%s\nloaded:\n%s\n", back, text);
		return T_FAIL;
	}
	return T_PASS;
}

static int test_round_trip(void)
{
	int ret;

	ret = round_trip("full",
			 "libdevmem-nic 1\n"
			 "device 1 lo\n"
			 "header-split off\n"
			 "rss table 8 0 1 2 0 1 2 0 4294967295\n"
			 "ntuple off\n"
			 "rule 0 3 192.0.2.2 5201 any\n"
			 "rule 4294967294 3 192.0.2.2 1 192.0.2.1\n"
			 "rule 7 0 2001:db8::2 65535 any\n"
			 "rule 8 1 2001:db8::2 80 2001:db8::1\n");
	if (ret)
		return ret;
	ret = round_trip("default",
			 "libdevmem-nic 1\n"
			 "device 1 lo\n"
			 "rss default\n"
			 "header-split unknown\n");
	if (ret)
		return ret;
	return round_trip("on", "libdevmem-nic 1\ndevice 1 lo\nheader-split on\n");
}

static int test_malformed(void)
{
	static const struct {
		const char *text, *reason;	/* reason after "PATH:" */
	} bad[] = {
		{ "", " empty, or its last line has no newline" },
		{ "libdevmem-nic 1\ndevice 1 lo", " empty, or its last line has no newline" },
		{ "libdevmem-nic 1\n", " no \"device IFINDEX NAME\" line" },
		{ "libdevmem 1\n", "1: not a libdevmem NIC state file (no \"libdevmem-nic VERSION\" line)" },
		{ "libdevmem-nic 2\n", "1: unsupported version (this library reads 1)" },
		{ "libdevmem-nic 01\n", "1: unsupported version (this library reads 1)" },
		{ "libdevmem-nic  1\n", "1: not a libdevmem NIC state file (no \"libdevmem-nic VERSION\" line)" },
		{ "libdevmem-nic 1 \n", "1: not a libdevmem NIC state file (no \"libdevmem-nic VERSION\" line)" },
		{ "libdevmem-nic 1\ndevice  1 lo\n", "2: expected \"device IFINDEX NAME\"" },
		{ "libdevmem-nic 1\r\n", "1: unsupported version (this library reads 1)" },
		{ "libdevmem-nic 1\ndevice lo 1\n", "2: expected \"device IFINDEX NAME\"" },
		{ "libdevmem-nic 1\ndevice 0 lo\n", "2: expected \"device IFINDEX NAME\"" },
		{ "libdevmem-nic 1\ndevice 2147483648 lo\n", "2: expected \"device IFINDEX NAME\"" },
		{ "libdevmem-nic 1\ndevice 1 abcdefghijklmnop\n", "2: expected \"device IFINDEX NAME\"" },
		{ "libdevmem-nic 1\ndevice 1\n", "2: expected \"device IFINDEX NAME\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\n\n", "3: empty field (fields are separated by one space)" },
		{ "libdevmem-nic 1\ndevice 1 lo\n# comment\n", "3: unknown line (header-split, ntuple, rss or rule expected)" },
		{ "libdevmem-nic 1\ndevice 1 lo\nheader-split maybe\n", "3: expected \"header-split on|off|unknown\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nheader-split on off\n", "3: expected \"header-split on|off|unknown\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nheader-split on\nheader-split off\n", "4: a second header-split line" },
		{ "libdevmem-nic 1\ndevice 1 lo\nntuple on\n", "3: expected \"ntuple off\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nntuple off\nntuple off\n", "4: a second ntuple line" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrss\n", "3: expected \"rss default\" or \"rss table SIZE ENTRY...\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrss default 4\n", "3: expected \"rss default\" or \"rss table SIZE ENTRY...\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrss table 0 1\n", "3: expected \"rss default\" or \"rss table SIZE ENTRY...\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrss table 65537 1\n", "3: expected \"rss default\" or \"rss table SIZE ENTRY...\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrss table 2\n", "3: expected \"rss default\" or \"rss table SIZE ENTRY...\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrss table 3 0 1\n", "3: the RSS table does not have SIZE queue numbers" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrss table 2 0 1 2\n", "3: the RSS table does not have SIZE queue numbers" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrss table 2 0 x\n", "3: the RSS table does not have SIZE queue numbers" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrss table 2 0 4294967296\n", "3: the RSS table does not have SIZE queue numbers" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrss table 2 0  1\n", "3: the RSS table does not have SIZE queue numbers" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrss default\nrss default\n", "4: a second rss line" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrule 0 3 192.0.2.2 80\n", "3: expected \"rule LOC QUEUE DST PORT SRC|any\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrule 0 3 192.0.2.2 80 any x\n", "3: expected \"rule LOC QUEUE DST PORT SRC|any\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrule x 3 192.0.2.2 80 any\n", "3: rule location or queue is not a number" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrule 4294967295 3 192.0.2.2 80 any\n", "3: rule location or queue is not a number" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrule 0 -1 192.0.2.2 80 any\n", "3: rule location or queue is not a number" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrule 0 3 192.0.2.2 0 any\n", "3: port \"0\" is not in 1-65535" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrule 0 3 192.0.2.2 80 2001:db8::1\n", "3: source 2001:db8::1 is IPv6, destination 192.0.2.2 is IPv4" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrule 0 3 nowhere 80 any\n", "3: destination address \"nowhere\" is neither IPv4 nor IPv6" },
		{ "libdevmem-nic 1\ndevice 1 lo\nrule 5 3 192.0.2.2 80 any\nrule 5 2 192.0.2.2 81 any\n", "4: a second rule at the same location" },
	};
	const char *path = path_of("bad");
	struct devmem_nic *n = NULL;
	char want[512];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(write_file(path, bad[i].text, strlen(bad[i].text)), 0);
		snprintf(want, sizeof(want), "%s:%s", path, bad[i].reason);
		if (devmem_nic_new_from_file(&n, path) != -EINVAL || !reason_is(want)) {
			fprintf(stderr, "file %zu: \"%s\"\n", i, bad[i].text);
			return T_FAIL;
		}
		CHECK(!n);
	}

	/* a NUL byte; too large */
	CHECK_EQ(write_file(path, "libdevmem-nic 1\n\0\n", 18), 0);
	CHECK_EQ(devmem_nic_new_from_file(&n, path), -EINVAL);
	snprintf(want, sizeof(want), "%s: a NUL byte in a text file", path);
	CHECK(reason_is(want));
	{
		size_t big = (1U << 20) + 1;
		char *text = malloc(big);

		CHECK(text);
		memset(text, '\n', big);
		CHECK_EQ(write_file(path, text, big), 0);
		free(text);
	}
	CHECK_EQ(devmem_nic_new_from_file(&n, path), -EINVAL);
	snprintf(want, sizeof(want), "%s: larger than 1048576 bytes", path);
	CHECK(reason_is(want));

	/* the device: gone, or another one now */
	CHECK_EQ(write_file(path, "libdevmem-nic 1\ndevice 2147483647 eth9\n", 39),
		 0);
	CHECK_EQ(devmem_nic_new_from_file(&n, path), -ENODEV);
	CHECK(reason_is("no network device with ifindex 2147483647"));
	CHECK_EQ(write_file(path, "libdevmem-nic 1\ndevice 1 eth9\n", 30), 0);
	CHECK_EQ(devmem_nic_new_from_file(&n, path), -ENODEV);
	snprintf(want, sizeof(want), "%s: ifindex 1 is now \"lo\", not \"eth9\"",
		 path);
	CHECK(reason_is(want));

	/* no file; no directory to save in */
	CHECK_EQ(devmem_nic_new_from_file(&n, path_of("none")), -ENOENT);
	snprintf(want, sizeof(want), "%s: No such file or directory",
		 path_of("none"));
	CHECK(reason_is(want));
	CHECK(!n);
	CHECK_EQ(devmem_nic_new(&n, LO), 0);
	CHECK_EQ(devmem_nic_save(n, path_of("none/state")), -ENOENT);
	devmem_nic_free(n);
	return T_PASS;
}

/*
 * lo has no rings, no RSS table and no n-tuple filters: each change is
 * refused before anything changes, and the state stays empty.
 */
static int test_lo_refuses(void)
{
	struct devmem_flow f;
	struct devmem_nic *n;
	const char *path = path_of("lo");
	const char *text;
	int ret;

	CHECK_EQ(devmem_nic_new(&n, LO), 0);
	ret = devmem_nic_header_split(n, 1);
	if (ret == -ENOENT) {
		devmem_nic_free(n);
		return t_skip("%s", devmem_last_error());
	}
	printf("header-split: %d %s\n", ret, devmem_last_error());
	CHECK_EQ(ret, -EOPNOTSUPP);
	CHECK(*devmem_last_error());

	CHECK_EQ(devmem_nic_rss_exclude(n, 0, 0), -EOPNOTSUPP);
	CHECK(reason_is("lo: rx queue count (ETHTOOL_GRXRINGS): Operation not supported"));

	CHECK_EQ(devmem_flow_parse(&f, "127.0.0.1", NULL, "9"), 0);
	CHECK_EQ(devmem_nic_flow_add(n, &f, 0, NULL), -EOPNOTSUPP);
	CHECK(reason_is("lo: n-tuple filters (rx-ntuple-filter) cannot be turned on"));

	CHECK_EQ(devmem_nic_setup(n, 0, 0, &f), -EOPNOTSUPP);
	printf("setup: %s\n", devmem_last_error());

	CHECK_EQ(devmem_nic_flow_del(n, 0), -EOPNOTSUPP);
	CHECK(reason_is("lo: deleting an n-tuple rule (ETHTOOL_SRXCLSRLDEL): Operation not supported"));

	CHECK_EQ(devmem_nic_restore(n), 0);
	CHECK_EQ(devmem_nic_save(n, path), 0);
	devmem_nic_free(n);
	text = read_file(path);
	CHECK(text && !strcmp(text, "libdevmem-nic 1\ndevice 1 lo\n"));
	return T_PASS;
}

static const struct t_case cases[] = {
	{ "flow-good", test_flow_good },
	{ "flow-bad", test_flow_bad },
	{ "args", test_args },
	{ "args-open", test_args_open },
	{ "open", test_open },
	{ "empty", test_empty },
	{ "round-trip", test_round_trip },
	{ "malformed", test_malformed },
	{ "lo-refuses", test_lo_refuses },
};

int main(void)
{
	char cmd[64];
	int ret;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return T_FAIL;
	}
	ret = T_RUN(cases);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return ret;
}
