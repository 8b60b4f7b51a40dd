// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * nic-setup: prepare a device for device-memory TCP, and put it back -
 * also after a crash.
 *
 *   nic-setup IFNAME ADDRESS PORT QUEUE
 *   nic-setup --recover IFNAME
 *
 * The first form turns header split on, keeps rx queue QUEUE out of RSS
 * and steers TCP to ADDRESS:PORT to it, says "ready" and waits for
 * SIGINT or SIGTERM; then it puts the device back as it was. Several
 * may run at once, each with its own queue: header split is theirs
 * together, and the last one to go turns it back off. Meanwhile the
 * library keeps what each changed in its state files. If the program
 * dies without putting its set-up back (kill -9, a crash), the second
 * form (or "devmemctl teardown dev IFNAME") takes that set-up over and
 * undoes it, leaving those of programs still running alone.
 *
 * Build: make (the Makefile here uses pkg-config).
 * Needs CAP_NET_ADMIN.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devmem.h>

/* Put back what @nic recorded; 0 or 1 as the exit status. */
static int restore(struct devmem_nic *nic)
{
	int ret = 0;

	if (devmem_nic_restore(nic) < 0) {
		fprintf(stderr, "restore: %s\n", devmem_last_error());
		ret = 1;
	}
	devmem_nic_free(nic);
	return ret;
}

static int recover(const char *ifname)
{
	struct devmem_nic *nic;
	int ifindex;

	ifindex = devmem_ifindex(ifname);
	if (ifindex < 0 || devmem_nic_new_recover(&nic, ifindex) < 0) {
		fprintf(stderr, "recover: %s\n", devmem_last_error());
		return 1;
	}
	return restore(nic);
}

static int setup(char **argv)
{
	struct devmem_flow flow = { .size = sizeof(flow) };
	struct devmem_nic *nic;
	sigset_t set;
	uint32_t queue;
	int ifindex, sig;
	char *end;

	queue = strtoul(argv[3], &end, 10);
	if (*end || end == argv[3]) {
		fprintf(stderr, "nic-setup: bad queue %s\n", argv[3]);
		return 2;
	}
	ifindex = devmem_ifindex(argv[0]);
	if (ifindex < 0 ||
	    devmem_flow_parse(&flow, argv[1], NULL, argv[2]) < 0) {
		fprintf(stderr, "nic-setup: %s\n", devmem_last_error());
		return 2;
	}

	/* Wait for the signals rather than be ended by them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);

	if (devmem_nic_new(&nic, ifindex) < 0) {
		fprintf(stderr, "set-up: %s\n", devmem_last_error());
		return 1;
	}
	if (devmem_nic_setup(nic, queue, queue, &flow) < 0) {
		/* (it undid what it had done) */
		fprintf(stderr, "set-up: %s\n", devmem_last_error());
		devmem_nic_free(nic);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	return restore(nic);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--recover"))
		return recover(argv[2]);
	if (argc == 5 && argv[1][0] != '-')
		return setup(argv + 1);
	fprintf(stderr, "usage: nic-setup IFNAME ADDRESS PORT QUEUE\n"
		"       nic-setup --recover IFNAME\n");
	return 2;
}
