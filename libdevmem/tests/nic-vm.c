// SPDX-License-Identifier: GPL-2.0
/*
 * nic-vm: NIC set-up through the library on a real device, step by step,
 * for selftests/libdevmem-nic.bats to check with ethtool (netdevsim in
 * the test VM). Each command is its own process, as devmemctl setup and
 * teardown are:
 *
 *   nic-vm setup IFNAME FIRST LAST DST PORT SRC|any STATE
 *	devmem_nic_setup() with that flow, then (when it succeeded) an
 *	IPv6 rule 2001:db8::2 port PORT+1 from 2001:db8::1 to queue LAST,
 *	and a third rule added and deleted again (it must not be recorded);
 *	saves the state to STATE. Prints:
 *	  setup
 *	  rule loc=LOC queue=LAST
 *	  added loc=LOC
 *	  deleted loc=LOC
 *	  saved
 *   nic-vm restore STATE
 *	devmem_nic_new_from_file() and devmem_nic_restore(); prints "restored".
 *   nic-vm rule IFNAME QUEUE DST PORT
 *	devmem_nic_flow_add() alone, then devmem_nic_restore(); prints
 *	"rule loc=LOC queue=QUEUE" and "restored".
 *   nic-vm teardown IFNAME
 *	devmem_nic_new_recover() and devmem_nic_restore(), as devmemctl
 *	teardown; prints "restored".
 *
 * A step that fails prints "nic-vm: STEP: errno=E: REASON" and the
 * program exits 1 (after restoring what it changed); 2 for bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devmem.h>

static int failed(const char *step, int err)
{
	printf("nic-vm: %s: errno=%d: %s\n", step, -err, devmem_last_error());
	return 1;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: nic-vm setup IFNAME FIRST LAST DST PORT SRC|any STATE\n"
		"       nic-vm restore STATE\n"
		"       nic-vm rule IFNAME QUEUE DST PORT\n"
		"       nic-vm teardown IFNAME\n");
	return 2;
}

static int open_nic(struct devmem_nic **np, const char *ifname)
{
	int ifindex = devmem_ifindex(ifname), err;

	if (ifindex < 0)
		return failed("ifindex", ifindex);
	err = devmem_nic_new(np, ifindex);
	if (err)
		return failed("open", err);
	return 0;
}

/* Undo after a failed step, keeping that step's exit status. */
static int give_up(struct devmem_nic *n, int ret)
{
	int err = devmem_nic_restore(n);

	if (err)
		failed("restore", err);
	devmem_nic_free(n);
	return ret;
}

static int cmd_setup(char **argv)
{
	struct devmem_flow f = { .size = sizeof(f) };
	struct devmem_flow f6 = { .size = sizeof(f6) };
	struct devmem_nic *n;
	uint32_t first = strtoul(argv[1], NULL, 10);
	uint32_t last = strtoul(argv[2], NULL, 10);
	uint32_t loc, extra;
	char port6[8];
	int err;

	err = devmem_flow_parse(&f, argv[3],
				strcmp(argv[5], "any") ? argv[5] : NULL,
				argv[4]);
	if (err)
		return failed("flow", err);
	snprintf(port6, sizeof(port6), "%u", f.dst_port + 1U);
	err = devmem_flow_parse(&f6, "2001:db8::2", "2001:db8::1", port6);
	if (err)
		return failed("flow6", err);
	if (open_nic(&n, argv[0]))
		return 1;

	err = devmem_nic_setup(n, first, last, &f);
	if (err)
		return give_up(n, failed("setup", err));
	printf("setup\n");
	err = devmem_nic_flow_add(n, &f6, last, &loc);
	if (err)
		return give_up(n, failed("rule", err));
	printf("rule loc=%u queue=%u\n", loc, last);
	f6.dst_port++;
	err = devmem_nic_flow_add(n, &f6, first, &extra);
	if (err)
		return give_up(n, failed("add", err));
	printf("added loc=%u\n", extra);
	err = devmem_nic_flow_del(n, extra);
	if (err)
		return give_up(n, failed("delete", err));
	printf("deleted loc=%u\n", extra);
	err = devmem_nic_save(n, argv[6]);
	if (err)
		return give_up(n, failed("save", err));
	printf("saved\n");
	/* What was set up stays: the next process restores it. */
	devmem_nic_free(n);
	return 0;
}

static int cmd_restore(char **argv)
{
	struct devmem_nic *n;
	int err;

	err = devmem_nic_new_from_file(&n, argv[0]);
	if (err)
		return failed("load", err);
	err = devmem_nic_restore(n);
	devmem_nic_free(n);
	if (err)
		return failed("restore", err);
	printf("restored\n");
	return 0;
}

static int cmd_rule(char **argv)
{
	struct devmem_flow f = { .size = sizeof(f) };
	struct devmem_nic *n;
	uint32_t queue = strtoul(argv[1], NULL, 10), loc;
	int err;

	err = devmem_flow_parse(&f, argv[2], NULL, argv[3]);
	if (err)
		return failed("flow", err);
	if (open_nic(&n, argv[0]))
		return 1;
	err = devmem_nic_flow_add(n, &f, queue, &loc);
	if (err)
		return give_up(n, failed("rule", err));
	printf("rule loc=%u queue=%u\n", loc, queue);
	err = devmem_nic_restore(n);
	devmem_nic_free(n);
	if (err)
		return failed("restore", err);
	printf("restored\n");
	return 0;
}

static int cmd_teardown(char **argv)
{
	int ifindex = devmem_ifindex(argv[0]), err;
	struct devmem_nic *n;

	if (ifindex < 0)
		return failed("ifindex", ifindex);
	err = devmem_nic_new_recover(&n, ifindex);
	if (err)
		return failed("recover", err);
	err = devmem_nic_restore(n);
	devmem_nic_free(n);
	if (err)
		return failed("restore", err);
	printf("restored\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 9 && !strcmp(argv[1], "setup"))
		return cmd_setup(argv + 2);
	if (argc == 3 && !strcmp(argv[1], "restore"))
		return cmd_restore(argv + 2);
	if (argc == 6 && !strcmp(argv[1], "rule"))
		return cmd_rule(argv + 2);
	if (argc == 3 && !strcmp(argv[1], "teardown"))
		return cmd_teardown(argv + 2);
	return usage();
}
