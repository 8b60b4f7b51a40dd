// SPDX-License-Identifier: GPL-2.0
/*
 * NIC set-up (src/nic*.c) without a NIC: flows parsed from text (good and
 * bad, exact errnos and reasons), argument errors (before any system
 * call: seccomp strict mode), state files written and read back byte for
 * byte, malformed state files refused with the line and the reason, an
 * empty state restored, and lo's refusals (it has no rings, no RSS and
 * no n-tuple filters: nothing can change). Changing a real device is the
 * VM's (nic-vm, selftests/libdevmem-nic.bats).
 *
 * The state files ($DEVMEM_STATE_DIR, set to the test's own directory)
 * against a fake device (the hooks of src/internal.h): the device file
 * and each owner's file after each change and undo, their removal, two
 * owners of one device (their queues their own, the RSS table spread
 * over the rest, header split kept for the last), an owner's lock held
 * by a child and dropped when the child is killed, recovery of the
 * owners that are gone and not of the running ones, a file from before
 * owners, -EBUSY and -ENOENT.
 *
 * Works on lo, whose ifindex is 1 in every network namespace.
 */
#include "internal.h"
#include "nic.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>

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
	struct devmem_flow f = { .size = sizeof(f) };
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
	struct devmem_flow f = { .size = sizeof(f) };
	struct devmem_flow keep = { .size = sizeof(keep) };
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
	struct devmem_flow f = { .size = sizeof(f), .family = AF_INET,
				  .dst_port = 80 };
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
	CHECK_EQ(devmem_nic_new_recover(NULL, LO), -EINVAL);
	CHECK(reason_is("no place for the result"));
	CHECK_EQ(devmem_nic_new_recover(&n, 0), -EINVAL);
	CHECK(reason_is("ifindex 0 is not a device index"));
	CHECK(!n);
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
	struct devmem_flow f = { .size = sizeof(f), .family = AF_INET,
				  .dst_port = 80 };
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
			 "rule 8 1 2001:db8::2 80 2001:db8::1\n"
			 "queues 2 3\n"
			 "queues 0 4294967295\n");
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
		{ "libdevmem-nic 1\ndevice 1 lo\n# comment\n", "3: unknown line (header-split, hds-thresh, ntuple, rss, rule or queues expected)" },
		{ "libdevmem-nic 1\ndevice 1 lo\nheader-split maybe\n", "3: expected \"header-split on|off|unknown\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nheader-split on off\n", "3: expected \"header-split on|off|unknown\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nheader-split on\nheader-split off\n", "4: a second header-split line" },
		{ "libdevmem-nic 1\ndevice 1 lo\nhds-thresh\n", "3: expected \"hds-thresh BYTES\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nhds-thresh -1\n", "3: expected \"hds-thresh BYTES\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nhds-thresh 4294967296\n", "3: expected \"hds-thresh BYTES\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nhds-thresh 1 2\n", "3: expected \"hds-thresh BYTES\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nhds-thresh 1\nhds-thresh 2\n", "4: a second hds-thresh line" },
		{ "libdevmem-nic 1\ndevice 1 lo\nntuple on\n", "3: expected \"ntuple off\"" },
		{ "libdevmem-nic 1\ndevice 1 lo\nqueues 3 2\n", "3: expected \"queues FIRST LAST\", FIRST not after LAST" },
		{ "libdevmem-nic 1\ndevice 1 lo\nqueues 1\n", "3: expected \"queues FIRST LAST\", FIRST not after LAST" },
		{ "libdevmem-nic 1\ndevice 1 lo\nqueues 1 2 3\n", "3: expected \"queues FIRST LAST\", FIRST not after LAST" },
		{ "libdevmem-nic 1\ndevice 1 lo\nqueues 1 4294967296\n", "3: expected \"queues FIRST LAST\", FIRST not after LAST" },
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
	struct devmem_flow f = { .size = sizeof(f) };
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


/* ---- the device's state file, on a fake device ---- */

#define FAKE_QUEUES	4
#define FAKE_TABLE	8
#define FAKE_RULES	16

/* What the hooks answer for: a NIC with 4 rx queues, an RSS table of 8
 * and 16 rule locations.
 */
struct fake_nic {
	uint8_t hds;
	int ntuple;
	uint32_t table[FAKE_TABLE];
	struct ethtool_rx_flow_spec rules[FAKE_RULES];
	int used[FAKE_RULES];
	int fail_hds_set;	/* -errno: the next hds_set fails */
	unsigned int hds_sets;
	uint32_t thresh;	/* hds-thresh (fake_thresh_hooks) */
	int fail_thresh_set;	/* -errno: the next thresh_set fails */
	unsigned int thresh_sets;
};

static void fake_rss_default(struct fake_nic *f)
{
	uint32_t i;

	for (i = 0; i < FAKE_TABLE; i++)
		f->table[i] = i % FAKE_QUEUES;
}

static void fake_init(struct fake_nic *f)
{
	memset(f, 0, sizeof(*f));
	f->hds = ETHTOOL_TCP_DATA_SPLIT_DISABLED;
	fake_rss_default(f);
}

static int fake_ioctl(void *arg, void *data)
{
	struct fake_nic *f = arg;
	struct ethtool_rxfh_indir *r = data;
	struct ethtool_rxnfc *nfc = data;
	uint32_t i, n = 0, loc;

	switch (*(uint32_t *)data) {
	case ETHTOOL_GRXRINGS:
		nfc->data = FAKE_QUEUES;
		return 0;
	case ETHTOOL_GRXFHINDIR:
		if (r->size && r->size != FAKE_TABLE)
			return -EINVAL;
		if (r->size)
			memcpy(r->ring_index, f->table, sizeof(f->table));
		r->size = FAKE_TABLE;
		return 0;
	case ETHTOOL_SRXFHINDIR:
		if (!r->size)
			fake_rss_default(f);
		else if (r->size == FAKE_TABLE)
			memcpy(f->table, r->ring_index, sizeof(f->table));
		else
			return -EINVAL;
		return 0;
	case ETHTOOL_GRXCLSRLCNT:
	case ETHTOOL_GRXCLSRLALL:
		for (i = 0; i < FAKE_RULES; i++) {
			if (!f->used[i])
				continue;
			if (nfc->cmd == ETHTOOL_GRXCLSRLALL)
				nfc->rule_locs[n] = i;
			n++;
		}
		nfc->rule_cnt = n;
		nfc->data = FAKE_RULES;
		return 0;
	case ETHTOOL_SRXCLSRLINS:
		loc = nfc->fs.location;
		if (loc >= FAKE_RULES || f->used[loc] ||
		    nfc->fs.ring_cookie >= FAKE_QUEUES)
			return -EINVAL;
		f->rules[loc] = nfc->fs;
		f->used[loc] = 1;
		return 0;
	case ETHTOOL_SRXCLSRLDEL:
		loc = nfc->fs.location;
		if (loc >= FAKE_RULES || !f->used[loc])
			return -ENOENT;
		f->used[loc] = 0;
		return 0;
	case ETHTOOL_GRXCLSRULE:
		loc = nfc->fs.location;
		if (loc >= FAKE_RULES || !f->used[loc])
			return -ENOENT;
		nfc->fs = f->rules[loc];
		return 0;
	}
	return -EOPNOTSUPP;
}

static int fake_hds_get(void *arg, uint8_t *hds)
{
	*hds = ((struct fake_nic *)arg)->hds;
	return 0;
}

static int fake_hds_set(void *arg, uint8_t hds)
{
	struct fake_nic *f = arg;
	int err = f->fail_hds_set;

	f->fail_hds_set = 0;
	if (err)
		return err;
	f->hds = hds;
	f->hds_sets++;
	return 0;
}

static int fake_thresh_get(void *arg, uint32_t *thresh)
{
	*thresh = ((struct fake_nic *)arg)->thresh;
	return 0;
}

static int fake_thresh_set(void *arg, uint32_t thresh)
{
	struct fake_nic *f = arg;
	int err = f->fail_thresh_set;

	f->fail_thresh_set = 0;
	if (err)
		return err;
	f->thresh = thresh;
	f->thresh_sets++;
	return 0;
}

static int fake_ntuple_get(void *arg, int *active, int *changeable)
{
	*active = ((struct fake_nic *)arg)->ntuple;
	*changeable = 1;
	return 0;
}

static int fake_ntuple_set(void *arg, int on)
{
	((struct fake_nic *)arg)->ntuple = on;
	return 0;
}

/* A rule as the library makes it for TCP/IPv4 to @dst port @port. */
static void fake_rule4(struct ethtool_rx_flow_spec *fs, const char *dst,
		       uint16_t port, uint32_t queue)
{
	memset(fs, 0, sizeof(*fs));
	fs->flow_type = TCP_V4_FLOW;
	inet_pton(AF_INET, dst, &fs->h_u.tcp_ip4_spec.ip4dst);
	fs->m_u.tcp_ip4_spec.ip4dst = 0xffffffff;
	fs->h_u.tcp_ip4_spec.pdst = htons(port);
	fs->m_u.tcp_ip4_spec.pdst = 0xffff;
	fs->ring_cookie = queue;
}

static const struct devmem_nic_hooks fake_hooks = {
	.ioctl = fake_ioctl,
	.hds_get = fake_hds_get,
	.hds_set = fake_hds_set,
	.ntuple_get = fake_ntuple_get,
	.ntuple_set = fake_ntuple_set,
};

/* The same device with an hds-thresh. */
static const struct devmem_nic_hooks fake_thresh_hooks = {
	.ioctl = fake_ioctl,
	.hds_get = fake_hds_get,
	.hds_set = fake_hds_set,
	.thresh_get = fake_thresh_get,
	.thresh_set = fake_thresh_set,
	.ntuple_get = fake_ntuple_get,
	.ntuple_set = fake_ntuple_set,
};

/* The fake as it was before any set-up. */
static int fake_pristine(const struct fake_nic *f)
{
	uint32_t i;

	CHECK_EQ(f->hds, ETHTOOL_TCP_DATA_SPLIT_DISABLED);
	CHECK_EQ(f->ntuple, 0);
	for (i = 0; i < FAKE_TABLE; i++)
		CHECK_EQ(f->table[i], i % FAKE_QUEUES);
	for (i = 0; i < FAKE_RULES; i++)
		CHECK_EQ(f->used[i], 0);
	return T_PASS;
}

static char state_dir[256];	/* $DEVMEM_STATE_DIR */
static char dev_path[PATH_MAX];	/* lo's device file in it */

static int nic_fake(struct devmem_nic **np, struct fake_nic *f)
{
	CHECK_EQ(devmem_nic_new(np, LO), 0);
	devmem_nic_set_hooks(*np, &fake_hooks, f);
	return T_PASS;
}

/* Whether file @path holds exactly the header and then @records. */
static int text_is(const char *path, const char *records)
{
	char want[1024];
	const char *text = path ? read_file(path) : NULL;

	snprintf(want, sizeof(want), "libdevmem-nic 1\ndevice 1 lo\n%s",
		 records);
	if (text && !strcmp(text, want))
		return 1;
	fprintf(stderr, "%s:\n%s\nwanted:\n%s\n", path ? path : "(no file)",
		text ? text : "(none)", want);
	return 0;
}

/* The device file: what lo was before set-up. */
static int dev_is(const char *records)
{
	return text_is(dev_path, records);
}

/* @n's owner file: its queues and rules. */
static int own_is(const struct devmem_nic *n, const char *records)
{
	return text_is(n->state_path, records);
}

static int gone(const char *path)
{
	struct stat st;

	return stat(path, &st) && errno == ENOENT;
}

/* The files in the state directory (none: -1 when it does not exist). */
static int files(void)
{
	struct dirent *de;
	int nr = 0;
	DIR *d;

	d = opendir(state_dir);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		nr += de->d_name[0] != '.';
	closedir(d);
	return nr;
}

/* An empty state directory: what a test that failed left goes, so that
 * the next starts from nothing.
 */
static void fresh(void)
{
	char path[PATH_MAX + 256];
	struct dirent *de;
	DIR *d;

	d = opendir(state_dir);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", state_dir,
				 de->d_name);
			unlink(path);
		}
	closedir(d);
}

/* Whether a process holds @path's lock: another open file description
 * of it conflicts, in this process too.
 */
static int locked(const char *path)
{
	int fd = open(path, O_RDONLY), held;

	if (fd < 0)
		return -1;
	held = flock(fd, LOCK_EX | LOCK_NB) ? errno == EWOULDBLOCK : 0;
	close(fd);
	return held;
}

/* One owner: the device file holds what lo was, the owner file (0600,
 * locked, in a directory of 0700) its queues and rules.
 */
static int test_state_changes(void)
{
	struct devmem_flow f1 = { .size = sizeof(f1) };
	struct devmem_flow f2 = { .size = sizeof(f2) };
	struct devmem_nic *n;
	struct fake_nic fake;
	struct stat st;
	uint32_t loc;

	fresh();
	fake_init(&fake);
	CHECK_EQ(devmem_flow_parse(&f1, "192.0.2.2", NULL, "5201"), 0);
	CHECK_EQ(devmem_flow_parse(&f2, "2001:db8::2", "2001:db8::1", "5202"), 0);
	CHECK_EQ(nic_fake(&n, &fake), T_PASS);
	CHECK(files() <= 0);
	/* a change that changes nothing: an owner with nothing recorded */
	CHECK_EQ(devmem_nic_header_split(n, 0), 0);
	CHECK_EQ(stat(state_dir, &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0700);
	CHECK(gone(dev_path));
	CHECK(own_is(n, ""));
	CHECK_EQ(stat(n->state_path, &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0600);
	CHECK_EQ(locked(n->state_path), 1);
	CHECK_EQ(files(), 1);

	CHECK_EQ(devmem_nic_header_split(n, 1), 0);
	CHECK(dev_is("header-split off\n"));
	CHECK(own_is(n, ""));
	CHECK_EQ(devmem_nic_header_split(n, 1), 0);
	CHECK(dev_is("header-split off\n"));
	CHECK_EQ(devmem_nic_rss_exclude(n, 2, 3), 0);
	CHECK(dev_is("header-split off\nrss default\n"));
	CHECK(own_is(n, "queues 2 3\n"));
	CHECK_EQ(devmem_nic_flow_add(n, &f1, 2, &loc), 0);
	CHECK_EQ(loc, 0);
	CHECK(dev_is("header-split off\nrss default\nntuple off\n"));
	CHECK(own_is(n, "queues 2 3\nrule 0 2 192.0.2.2 5201 any\n"));
	CHECK_EQ(devmem_nic_flow_add(n, &f2, 3, &loc), 0);
	CHECK_EQ(loc, 1);
	CHECK(own_is(n, "queues 2 3\nrule 0 2 192.0.2.2 5201 any\n"
		     "rule 1 3 2001:db8::2 5202 2001:db8::1\n"));
	CHECK_EQ(locked(n->state_path), 1);
	CHECK_EQ(devmem_nic_flow_del(n, 1), 0);
	CHECK(own_is(n, "queues 2 3\nrule 0 2 192.0.2.2 5201 any\n"));
	/* a refused change changes neither device nor file */
	CHECK_EQ(devmem_nic_flow_add(n, &f1, 9, &loc), -EINVAL);
	CHECK(dev_is("header-split off\nrss default\nntuple off\n"));
	CHECK(own_is(n, "queues 2 3\nrule 0 2 192.0.2.2 5201 any\n"));
	/* another carve-out takes the place of the first */
	CHECK_EQ(devmem_nic_rss_exclude(n, 1, 1), 0);
	CHECK(own_is(n, "rule 0 2 192.0.2.2 5201 any\nqueues 1 1\n"));
	CHECK_EQ(fake.table[1], 2);
	CHECK_EQ(fake.table[2], 3);
	CHECK_EQ(devmem_nic_rss_exclude(n, 2, 3), 0);
	CHECK_EQ(fake.table[1], 1);

	/* an undo that fails stays in the files; the rest is gone */
	fake.fail_hds_set = -EPERM;
	CHECK_EQ(devmem_nic_restore(n), -EPERM);
	CHECK(reason_is("lo: setting tcp-data-split: Operation not permitted"));
	CHECK(dev_is("header-split off\n"));
	CHECK(own_is(n, ""));
	CHECK_EQ(locked(n->state_path), 1);
	CHECK_EQ(fake.ntuple, 0);
	CHECK_EQ(fake.used[0], 0);
	/* and the second restore removes both */
	CHECK_EQ(devmem_nic_restore(n), 0);
	CHECK_EQ(files(), 0);
	CHECK_EQ(fake_pristine(&fake), T_PASS);

	/* a failed first change leaves no file */
	fake.fail_hds_set = -EPERM;
	CHECK_EQ(devmem_nic_setup(n, 3, 3, &f1), -EPERM);
	CHECK_EQ(files(), 0);
	/* setup half-way: undone, no file */
	CHECK_EQ(devmem_nic_setup(n, 0, 3, &f1), -EINVAL);
	CHECK(reason_is("lo has 4 rx queues: none would be left for RSS"));
	CHECK_EQ(files(), 0);
	CHECK_EQ(fake_pristine(&fake), T_PASS);
	CHECK_EQ(devmem_nic_setup(n, 3, 3, &f1), 0);
	CHECK(dev_is("header-split off\nrss default\nntuple off\n"));
	CHECK(own_is(n, "queues 3 3\nrule 0 3 192.0.2.2 5201 any\n"));
	/* a second setup that fails at its rule (every location taken):
	 * the first one's carve-out as it was
	 */
	for (loc = 1; loc < FAKE_RULES; loc++)
		fake.used[loc] = 1;
	CHECK_EQ(devmem_nic_setup(n, 1, 1, &f1), -ENOSPC);
	CHECK(reason_is("lo: every n-tuple rule location (16) is taken"));
	for (loc = 1; loc < FAKE_RULES; loc++)
		fake.used[loc] = 0;
	CHECK(own_is(n, "rule 0 3 192.0.2.2 5201 any\nqueues 3 3\n"));
	CHECK(!memcmp(fake.table, ((uint32_t[]){ 0, 1, 2, 0, 1, 2, 0, 1 }),
		      sizeof(fake.table)));
	CHECK_EQ(devmem_nic_restore(n), 0);
	CHECK_EQ(files(), 0);
	devmem_nic_free(n);
	CHECK_EQ(fake_pristine(&fake), T_PASS);
	return T_PASS;
}

/*
 * Two owners of lo's queues in one process (each its own file lock):
 * each has its queues and rules, the RSS table spreads over the queues
 * neither has, header split stays on until the last one goes, and that
 * one puts back what lo was.
 */
static int test_state_owners(void)
{
	struct devmem_flow f1 = { .size = sizeof(f1) };
	struct devmem_flow f2 = { .size = sizeof(f2) };
	struct devmem_nic *a, *b;
	struct fake_nic fake;
	char want[2 * PATH_MAX];
	uint32_t loc;

	fresh();
	fake_init(&fake);
	CHECK_EQ(devmem_flow_parse(&f1, "192.0.2.2", NULL, "5201"), 0);
	CHECK_EQ(devmem_flow_parse(&f2, "192.0.2.2", NULL, "5202"), 0);
	CHECK_EQ(nic_fake(&a, &fake), T_PASS);
	CHECK_EQ(nic_fake(&b, &fake), T_PASS);
	CHECK_EQ(devmem_nic_setup(a, 2, 2, &f1), 0);
	CHECK(own_is(a, "queues 2 2\nrule 0 2 192.0.2.2 5201 any\n"));

	/* b may not have a's queue, for RSS or for a rule */
	snprintf(want, sizeof(want),
		 "queue 2 of lo is already set up by a running process (state file %s is locked)",
		 a->state_path);
	CHECK_EQ(devmem_nic_setup(b, 1, 2, &f2), -EBUSY);
	CHECK(reason_is(want));
	CHECK_EQ(devmem_nic_rss_exclude(b, 2, 3), -EBUSY);
	CHECK(reason_is(want));
	CHECK_EQ(devmem_nic_flow_add(b, &f2, 2, NULL), -EBUSY);
	CHECK(reason_is(want));
	CHECK_EQ(files(), 2);	/* b: no file, it never was an owner */

	CHECK_EQ(devmem_nic_setup(b, 3, 3, &f2), 0);
	CHECK(dev_is("header-split off\nrss default\nntuple off\n"));
	CHECK(own_is(a, "queues 2 2\nrule 0 2 192.0.2.2 5201 any\n"));
	CHECK(own_is(b, "queues 3 3\nrule 1 3 192.0.2.2 5202 any\n"));
	CHECK(!memcmp(fake.table, ((uint32_t[]){ 0, 1, 0, 1, 0, 1, 0, 1 }),
		      sizeof(fake.table)));
	CHECK_EQ(files(), 3);
	/* header split is theirs together */
	snprintf(want, sizeof(want),
		 "lo: header split is shared with 1 other set-up(s) of its queues (state files %s.owner.*): it stays on until they are torn down",
		 dev_path);
	CHECK_EQ(devmem_nic_header_split(b, 0), -EBUSY);
	CHECK(reason_is(want));
	CHECK_EQ(fake.hds, ETHTOOL_TCP_DATA_SPLIT_ENABLED);
	CHECK_EQ(devmem_nic_flow_add(b, &f1, 3, &loc), 0);
	CHECK_EQ(loc, 2);
	CHECK_EQ(devmem_nic_flow_del(b, 2), 0);

	/* a goes: its rule and queue; the table has queue 2 back */
	CHECK_EQ(devmem_nic_restore(a), 0);
	CHECK(gone(a->state_path) || !a->state_path);
	CHECK_EQ(fake.used[0], 0);
	CHECK_EQ(fake.used[1], 1);
	CHECK(!memcmp(fake.table, ((uint32_t[]){ 0, 1, 2, 0, 1, 2, 0, 1 }),
		      sizeof(fake.table)));
	CHECK_EQ(fake.hds, ETHTOOL_TCP_DATA_SPLIT_ENABLED);
	CHECK_EQ(fake.ntuple, 1);
	CHECK(dev_is("header-split off\nrss default\nntuple off\n"));
	CHECK_EQ(files(), 2);
	/* a second restore of a: nothing of a's is left to undo */
	CHECK_EQ(devmem_nic_restore(a), 0);
	CHECK_EQ(fake.hds, ETHTOOL_TCP_DATA_SPLIT_ENABLED);
	CHECK_EQ(fake.ntuple, 1);
	CHECK_EQ(fake.used[1], 1);
	CHECK(!memcmp(fake.table, ((uint32_t[]){ 0, 1, 2, 0, 1, 2, 0, 1 }),
		      sizeof(fake.table)));
	CHECK_EQ(files(), 2);
	/* now b is alone: header split is its own to turn off */
	CHECK_EQ(devmem_nic_setup(a, 2, 2, NULL), 0);
	CHECK_EQ(devmem_nic_restore(a), 0);
	devmem_nic_free(a);

	/* of several queues another owner has, the lowest is named */
	CHECK_EQ(nic_fake(&a, &fake), T_PASS);
	CHECK_EQ(devmem_nic_flow_add(a, &f1, 2, NULL), 0);
	CHECK_EQ(devmem_nic_rss_exclude(a, 0, 0), 0);
	snprintf(want, sizeof(want),
		 "queue 0 of lo is already set up by a running process (state file %s is locked)",
		 a->state_path);
	CHECK_EQ(devmem_nic_rss_exclude(b, 0, 2), -EBUSY);
	CHECK(reason_is(want));
	CHECK_EQ(devmem_nic_restore(a), 0);
	devmem_nic_free(a);

	/* b, the last, puts back what lo was */
	CHECK_EQ(devmem_nic_restore(b), 0);
	CHECK_EQ(files(), 0);
	CHECK_EQ(fake_pristine(&fake), T_PASS);
	devmem_nic_free(b);
	return T_PASS;
}

/*
 * An owner freed with changes recorded leaves its file, unlocked: its
 * queues stay its own (-EBUSY naming the file and teardown), other
 * queues can be set up; recovery takes over the owners that are gone,
 * not the running ones, and restore puts back what they had.
 */
static int test_state_left(void)
{
	struct devmem_nic *n, *m, *r;
	struct fake_nic fake;
	char want[PATH_MAX + 256], *left;
	unsigned int sets;

	fresh();
	fake_init(&fake);
	CHECK_EQ(nic_fake(&n, &fake), T_PASS);
	CHECK_EQ(devmem_nic_rss_exclude(n, 0, 0), 0);
	CHECK_EQ(devmem_nic_header_split(n, 1), 0);
	left = strdup(n->state_path);
	CHECK(left);
	devmem_nic_free(n);
	CHECK(text_is(left, "queues 0 0\n"));
	CHECK(dev_is("rss default\nheader-split off\n"));
	CHECK_EQ(locked(left), 0);

	CHECK_EQ(nic_fake(&m, &fake), T_PASS);
	sets = fake.hds_sets;
	snprintf(want, sizeof(want),
		 "queue 0 of lo is already set up (state file %s): run \"devmemctl teardown dev lo\" if no process is using it",
		 left);
	CHECK_EQ(devmem_nic_setup(m, 0, 1, NULL), -EBUSY);
	CHECK(reason_is(want));
	CHECK_EQ(fake.hds_sets, sets);
	CHECK_EQ(fake.table[0], 1);
	/* the owner that is gone shares header split too */
	CHECK_EQ(devmem_nic_header_split(m, 0), -EBUSY);
	CHECK_EQ(devmem_nic_setup(m, 3, 3, NULL), 0);
	CHECK(!memcmp(fake.table, ((uint32_t[]){ 1, 2, 1, 2, 1, 2, 1, 2 }),
		      sizeof(fake.table)));

	/* recovery: the owner that is gone, not m */
	CHECK_EQ(devmem_nic_new_recover(&r, LO), 0);
	CHECK(gone(left));
	CHECK(own_is(r, "queues 0 0\n"));
	CHECK_EQ(locked(r->state_path), 1);
	devmem_nic_set_hooks(r, &fake_hooks, &fake);
	CHECK_EQ(devmem_nic_restore(r), 0);
	CHECK(!memcmp(fake.table, ((uint32_t[]){ 0, 1, 2, 0, 1, 2, 0, 1 }),
		      sizeof(fake.table)));
	CHECK_EQ(fake.hds, ETHTOOL_TCP_DATA_SPLIT_ENABLED);
	CHECK(dev_is("rss default\nheader-split off\n"));
	CHECK_EQ(files(), 2);
	devmem_nic_free(r);
	/* with only m running, there is nothing to recover */
	snprintf(want, sizeof(want),
		 "lo is set up by a running process (state file %s is locked)",
		 m->state_path);
	CHECK_EQ(devmem_nic_new_recover(&r, LO), -EBUSY);
	CHECK(reason_is(want));

	CHECK_EQ(devmem_nic_restore(m), 0);
	CHECK_EQ(files(), 0);
	CHECK_EQ(fake_pristine(&fake), T_PASS);
	/* the state can start over */
	CHECK_EQ(devmem_nic_header_split(m, 1), 0);
	CHECK(dev_is("header-split off\n"));
	CHECK_EQ(devmem_nic_restore(m), 0);
	CHECK_EQ(files(), 0);
	devmem_nic_free(m);
	free(left);
	return T_PASS;
}

/* While the child holds the queues it set up. */
static int lock_held(const char *child)
{
	struct devmem_nic *n = NULL;
	struct fake_nic fake;
	char want[PATH_MAX + 256];

	CHECK(text_is(child, "queues 2 3\nrule 0 2 192.0.2.2 5201 any\n"));
	CHECK(dev_is("header-split off\nrss default\nntuple off\n"));
	CHECK_EQ(locked(child), 1);
	snprintf(want, sizeof(want),
		 "lo is set up by a running process (state file %s is locked)",
		 child);
	CHECK_EQ(devmem_nic_new_recover(&n, LO), -EBUSY);
	CHECK(reason_is(want));
	CHECK(!n);
	fake_init(&fake);
	CHECK_EQ(nic_fake(&n, &fake), T_PASS);
	snprintf(want, sizeof(want),
		 "queue 3 of lo is already set up by a running process (state file %s is locked)",
		 child);
	CHECK_EQ(devmem_nic_rss_exclude(n, 3, 3), -EBUSY);
	CHECK(reason_is(want));
	CHECK_EQ(fake.hds_sets, 0);
	CHECK_EQ(files(), 2);
	devmem_nic_free(n);
	return T_PASS;
}

/* The one owner file of lo, in a buffer to free. */
static char *owner_file(void)
{
	char *path = NULL;
	struct dirent *de;
	DIR *d;

	d = opendir(state_dir);
	if (!d)
		return NULL;
	while ((de = readdir(d)))
		if (strstr(de->d_name, ".owner.") && !path &&
		    asprintf(&path, "%s/%s", state_dir, de->d_name) < 0)
			path = NULL;
	closedir(d);
	return path;
}

/* A child that holds a set-up: recovery is -EBUSY until it is killed
 * (SIGKILL: nothing of the library runs), then takes it over.
 */
static int test_state_lock(void)
{
	struct devmem_flow f = { .size = sizeof(f) };
	struct devmem_nic *n;
	struct fake_nic fake;
	int pipefd[2], status, ret;
	char c, *child;
	pid_t pid;

	fresh();
	CHECK_EQ(devmem_flow_parse(&f, "192.0.2.2", NULL, "5201"), 0);
	CHECK_EQ(pipe(pipefd), 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		close(pipefd[0]);
		fake_init(&fake);
		if (nic_fake(&n, &fake) || devmem_nic_setup(n, 2, 3, &f) ||
		    write(pipefd[1], "s", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	child = NULL;
	ret = read(pipefd[0], &c, 1) == 1 && (child = owner_file()) ?
	      lock_held(child) : T_FAIL;
	close(pipefd[0]);
	/* killed whatever happened: it must not outlive the test */
	kill(pid, SIGKILL);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (ret)
		return ret;
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CHECK_EQ(locked(child), 0);

	CHECK_EQ(devmem_nic_new_recover(&n, LO), 0);
	CHECK(reason_is(""));
	CHECK_EQ(devmem_nic_ifindex(n), LO);
	CHECK(gone(child));
	CHECK_EQ(locked(n->state_path), 1);
	CHECK(own_is(n, "queues 2 3\nrule 0 2 192.0.2.2 5201 any\n"));
	/* the fake the child changed: as it left it */
	fake_init(&fake);
	fake.hds = ETHTOOL_TCP_DATA_SPLIT_ENABLED;
	fake.ntuple = 1;
	memcpy(fake.table, (uint32_t[]){ 0, 1, 0, 1, 0, 1, 0, 1 },
	       sizeof(fake.table));
	fake.used[0] = 1;
	fake_rule4(&fake.rules[0], "192.0.2.2", 5201, 2);
	devmem_nic_set_hooks(n, &fake_hooks, &fake);
	CHECK_EQ(devmem_nic_restore(n), 0);
	CHECK_EQ(files(), 0);
	CHECK_EQ(fake_pristine(&fake), T_PASS);
	devmem_nic_free(n);
	free(child);
	return T_PASS;
}

/* No file: -ENOENT; a device file that is not a state: refused, left
 * alone; one with rules (a whole set-up, as libdevmem 1.3 wrote it):
 * -EBUSY until recovered; on lo itself (no fake) nothing is asked.
 */
static int test_state_refused(void)
{
	struct fake_nic fake;
	static const char old[] = "libdevmem-nic 1\ndevice 1 lo\nheader-split off\n"
				  "rule 0 2 192.0.2.2 5201 any\n";
	struct devmem_flow f = { .size = sizeof(f) };
	struct devmem_nic *n = NULL;
	char want[PATH_MAX + 256];

	fresh();
	snprintf(want, sizeof(want), "lo is not set up (no state file %s)",
		 dev_path);
	CHECK_EQ(devmem_nic_new_recover(&n, LO), -ENOENT);
	CHECK(reason_is(want));
	CHECK(!n);
	CHECK_EQ(devmem_nic_new_recover(&n, INT_MAX), -ENODEV);
	CHECK(reason_is("no network device with ifindex 2147483647"));

	CHECK_EQ(write_file(dev_path, "keep\n", 5), 0);
	snprintf(want, sizeof(want),
		 "%s:1: not a libdevmem NIC state file (no \"libdevmem-nic VERSION\" line)",
		 dev_path);
	CHECK_EQ(devmem_nic_new_recover(&n, LO), -EINVAL);
	CHECK(reason_is(want));
	CHECK(!n);
	CHECK_EQ(devmem_flow_parse(&f, "127.0.0.1", NULL, "9"), 0);
	CHECK_EQ(devmem_nic_new(&n, LO), 0);
	CHECK_EQ(devmem_nic_header_split(n, 1), -EINVAL);
	CHECK(reason_is(want));
	CHECK_EQ(devmem_nic_setup(n, 0, 0, &f), -EINVAL);
	CHECK_EQ(files(), 1);
	CHECK(!strcmp(read_file(dev_path), "keep\n"));

	CHECK_EQ(write_file(dev_path, old, strlen(old)), 0);
	snprintf(want, sizeof(want),
		 "lo is already set up (state file %s): run \"devmemctl teardown dev lo\" if no process is using it",
		 dev_path);
	CHECK_EQ(devmem_nic_header_split(n, 1), -EBUSY);
	CHECK(reason_is(want));
	CHECK_EQ(devmem_nic_rss_exclude(n, 0, 0), -EBUSY);
	CHECK_EQ(devmem_nic_flow_add(n, &f, 0, NULL), -EBUSY);
	CHECK_EQ(devmem_nic_setup(n, 0, 0, &f), -EBUSY);
	CHECK(reason_is(want));
	devmem_nic_free(n);
	CHECK(!strcmp(read_file(dev_path), old));
	CHECK_EQ(files(), 1);
	CHECK_EQ(devmem_nic_new_recover(&n, LO), 0);
	CHECK(dev_is("header-split off\n"));
	CHECK(own_is(n, "rule 0 2 192.0.2.2 5201 any\n"));
	fake_init(&fake);
	devmem_nic_set_hooks(n, &fake_hooks, &fake);
	CHECK_EQ(devmem_nic_restore(n), 0);
	CHECK_EQ(files(), 0);
	devmem_nic_free(n);

	/* nothing recorded (its process died before the first change got
	 * through): taken over, and restore removes it without a request
	 */
	CHECK_EQ(write_file(dev_path, "libdevmem-nic 1\ndevice 1 lo\n", 28), 0);
	CHECK_EQ(devmem_nic_new_recover(&n, LO), 0);
	CHECK_EQ(devmem_nic_restore(n), 0);
	CHECK_EQ(files(), 0);
	devmem_nic_free(n);
	return T_PASS;
}

/* A state read from a file is no owner: a rule it deletes, and its
 * restore, leave the state directory alone.
 */
static int test_state_from_file(void)
{
	static const char text[] = "libdevmem-nic 1\ndevice 1 lo\nntuple off\n"
				   "rule 5 1 192.0.2.2 5201 any\n";
	struct devmem_nic *n;
	struct fake_nic fake;
	int before;

	fresh();
	before = files();
	fake_init(&fake);
	fake.ntuple = 1;
	fake.used[5] = 1;
	fake_rule4(&fake.rules[5], "192.0.2.2", 5201, 1);
	CHECK_EQ(write_file(path_of("from-file"), text, strlen(text)), 0);
	CHECK_EQ(devmem_nic_new_from_file(&n, path_of("from-file")), 0);
	devmem_nic_set_hooks(n, &fake_hooks, &fake);
	CHECK_EQ(devmem_nic_flow_del(n, 5), 0);
	CHECK_EQ(fake.used[5], 0);
	CHECK_EQ(files(), before);
	CHECK(!n->state_path);
	CHECK_EQ(devmem_nic_restore(n), 0);
	CHECK_EQ(fake_pristine(&fake), T_PASS);
	CHECK_EQ(files(), before);
	devmem_nic_free(n);
	return T_PASS;
}

/* Header split on takes hds-thresh to 0 where the device has one (no
 * payload kept with the headers, in host memory); restore puts it back,
 * after the bindings are gone. Off, and a device at 0, leave it alone.
 */
static int test_hds_thresh(void)
{
	struct devmem_flow f = { .size = sizeof(f) };
	struct devmem_nic *n;
	struct fake_nic fake;

	fresh();
	fake_init(&fake);
	fake.thresh = 256;
	CHECK_EQ(devmem_nic_new(&n, LO), 0);
	devmem_nic_set_hooks(n, &fake_thresh_hooks, &fake);
	CHECK_EQ(devmem_nic_header_split(n, 1), 0);
	CHECK_EQ(fake.hds, ETHTOOL_TCP_DATA_SPLIT_ENABLED);
	CHECK_EQ(fake.thresh, 0);
	CHECK(dev_is("header-split off\nhds-thresh 256\n"));
	/* again: nothing more to do or record */
	CHECK_EQ(devmem_nic_header_split(n, 1), 0);
	CHECK_EQ(fake.thresh_sets, 1);
	CHECK(dev_is("header-split off\nhds-thresh 256\n"));
	CHECK_EQ(devmem_nic_restore(n), 0);
	CHECK_EQ(files(), 0);
	CHECK_EQ(fake.thresh, 256);
	CHECK_EQ(fake.hds, ETHTOOL_TCP_DATA_SPLIT_DISABLED);

	/* header split already on: the threshold alone is a change */
	fake.hds = ETHTOOL_TCP_DATA_SPLIT_ENABLED;
	CHECK_EQ(devmem_nic_setup(n, 3, 3, &f), -EINVAL);
	f.family = AF_INET;
	inet_pton(AF_INET, "192.0.2.2", f.dst);
	f.dst_port = 5201;
	CHECK_EQ(devmem_nic_setup(n, 3, 3, &f), 0);
	CHECK_EQ(fake.thresh, 0);
	CHECK(dev_is("hds-thresh 256\nrss default\nntuple off\n"));
	CHECK(own_is(n, "queues 3 3\nrule 0 3 192.0.2.2 5201 any\n"));
	/* an undo that fails stays recorded, with its reason */
	fake.fail_thresh_set = -EBUSY;
	CHECK_EQ(devmem_nic_restore(n), -EBUSY);
	CHECK(reason_is("lo: setting hds-thresh: Device or resource busy"));
	CHECK(dev_is("hds-thresh 256\n"));
	CHECK_EQ(devmem_nic_restore(n), 0);
	CHECK_EQ(files(), 0);
	CHECK_EQ(fake.thresh, 256);

	/* turning header split off touches no threshold */
	CHECK_EQ(devmem_nic_header_split(n, 0), 0);
	CHECK_EQ(fake.thresh, 256);
	CHECK(dev_is("header-split on\n"));
	CHECK_EQ(devmem_nic_restore(n), 0);

	/* a threshold that cannot be set fails the set-up, undone */
	fake.hds = ETHTOOL_TCP_DATA_SPLIT_DISABLED;
	fake.fail_thresh_set = -EOPNOTSUPP;
	CHECK_EQ(devmem_nic_header_split(n, 1), -EOPNOTSUPP);
	CHECK(reason_is("lo: setting hds-thresh: Operation not supported"));
	CHECK_EQ(files(), 0);
	CHECK_EQ(fake.hds, ETHTOOL_TCP_DATA_SPLIT_DISABLED);
	CHECK_EQ(fake.thresh, 256);

	/* at 0 already: nothing recorded */
	fake.thresh = 0;
	CHECK_EQ(devmem_nic_header_split(n, 1), 0);
	CHECK(dev_is("header-split off\n"));
	CHECK_EQ(devmem_nic_restore(n), 0);
	devmem_nic_free(n);
	return T_PASS;
}

/* A state file with an hds-thresh line loads and restores it. */
static int test_hds_thresh_recover(void)
{
	static const char text[] =
		"libdevmem-nic 1\ndevice 1 lo\nheader-split off\nhds-thresh 64\n";
	struct devmem_nic *n;
	struct fake_nic fake;

	fresh();
	fake_init(&fake);
	fake.hds = ETHTOOL_TCP_DATA_SPLIT_ENABLED;
	CHECK_EQ(write_file(dev_path, text, strlen(text)), 0);
	CHECK_EQ(devmem_nic_new_recover(&n, LO), 0);
	devmem_nic_set_hooks(n, &fake_thresh_hooks, &fake);
	CHECK_EQ(devmem_nic_restore(n), 0);
	CHECK_EQ(files(), 0);
	CHECK_EQ(fake.thresh, 64);
	CHECK_EQ(fake.hds, ETHTOOL_TCP_DATA_SPLIT_DISABLED);
	devmem_nic_free(n);
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
	{ "state-changes", test_state_changes },
	{ "state-owners", test_state_owners },
	{ "state-left", test_state_left },
	{ "state-lock", test_state_lock },
	{ "state-refused", test_state_refused },
	{ "state-from-file", test_state_from_file },
	{ "hds-thresh", test_hds_thresh },
	{ "hds-thresh-recover", test_hds_thresh_recover },
};

int main(void)
{
	char cmd[64];
	int ret;

	struct stat st;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return T_FAIL;
	}
	/* the library makes the directory; the file's name has this
	 * namespace's inode
	 */
	snprintf(state_dir, sizeof(state_dir), "%s/state", dir);
	if (setenv("DEVMEM_STATE_DIR", state_dir, 1) ||
	    stat("/proc/self/ns/net", &st)) {
		perror("DEVMEM_STATE_DIR");
		return T_FAIL;
	}
	snprintf(dev_path, sizeof(dev_path), "%s/netns-%llu-ifindex-1",
		 state_dir, (unsigned long long)st.st_ino);
	ret = T_RUN(cases);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return ret;
}
