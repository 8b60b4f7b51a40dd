// SPDX-License-Identifier: GPL-2.0
/*
 * devmemctl setup and teardown: prepare a NIC's rx queues for device
 * memory with libdevmem's devmem_nic (header split, an RSS carve-out, an
 * n-tuple rule) and put it back later, from another process.
 *
 * What setup changed lives in the state files libdevmem keeps
 * (devmem.h): each setup is an owner of its queues, whose file it leaves
 * behind, and teardown takes over the owners that are gone with
 * devmem_nic_new_recover() - whether setup or a program that set queues
 * up and died made them - and undoes what they did; owners still
 * running are left alone. SIGINT, SIGTERM and SIGHUP wait while the
 * device and the state files change, so that neither is left half done;
 * one that came meanwhile ends the command afterwards.
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
		/* refused when another set-up has one of the queues;
		 * undoes what it did when it fails
		 */
		err = devmem_nic_setup(n, c->first, c->last,
				       c->has_flow ? &c->flow : NULL);
	if (err)
		lib_error(NULL);
	/* what was set up stays, and so does its owner file */
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
