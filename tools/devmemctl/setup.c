// SPDX-License-Identifier: GPL-2.0
/*
 * devmemctl setup and teardown: prepare a NIC's rx queues for device
 * memory with libdevmem's devmem_nic (header split, an RSS carve-out, an
 * n-tuple rule) and put it back later, from another process.
 *
 * What setup changed lives in the device's state file, which libdevmem
 * keeps (devmem.h): setup leaves it behind, and teardown takes it over
 * with devmem_nic_new_recover() - whether setup or a program that set
 * the device up and died wrote it - and undoes it. A device that has one
 * is refused by setup (it would record the first one's values as the
 * originals), and teardown is refused while a running process holds it.
 * SIGINT, SIGTERM and SIGHUP wait while the device and its state file
 * change, so that neither is left half done; one that came meanwhile
 * ends the command afterwards.
 */
#include <signal.h>
#include <stdlib.h>

#include "devmemctl.h"

/* Hold the signals that would end the command half-way; @old: the mask to
 * put back.
 */
static void hold_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, old);
}

/* Let them in again: one that is pending acts now. */
static int release_signals(const sigset_t *old, int rc)
{
	fflush(stdout);
	sigprocmask(SIG_SETMASK, old, NULL);
	return rc;
}

int do_setup(const struct cmd *c)
{
	struct devmem_nic *n = NULL;
	int ifindex, err;
	sigset_t old;

	ifindex = resolve_dev(c->dev);
	if (ifindex < 0)
		return EXIT_FAIL;
	hold_signals(&old);
	err = devmem_nic_new(&n, ifindex);
	if (!err)
		/* refused when the device has a state file; undoes what it
		 * did when it fails
		 */
		err = devmem_nic_setup(n, c->first, c->last,
				       c->has_flow ? &c->flow : NULL);
	if (err)
		lib_error(NULL);
	/* what was set up stays, and so does its state file */
	devmem_nic_free(n);
	return release_signals(&old, err ? EXIT_FAIL : EXIT_OK);
}

int do_teardown(const struct cmd *c)
{
	struct devmem_nic *n = NULL;
	int ifindex, err;
	sigset_t old;

	ifindex = resolve_dev(c->dev);
	if (ifindex < 0)
		return EXIT_FAIL;
	hold_signals(&old);
	err = devmem_nic_new_recover(&n, ifindex);
	if (!err)
		/* goes on past a failure; what failed stays in the state
		 * file for another teardown
		 */
		err = devmem_nic_restore(n);
	if (err)
		lib_error(NULL);
	devmem_nic_free(n);
	return release_signals(&old, err ? EXIT_FAIL : EXIT_OK);
}
