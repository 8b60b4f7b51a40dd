// SPDX-License-Identifier: GPL-2.0
/*
 * devmemctl setup and teardown: prepare a NIC's rx queues for device
 * memory with libdevmem's devmem_nic (header split, an RSS carve-out, an
 * n-tuple rule) and put it back later, from another process.
 *
 * What setup changed lives in a state file, one per device and network
 * namespace: DIR/netns-<inode of /proc/self/ns/net>-ifindex-<ifindex>,
 * DIR being $DEVMEMCTL_STATE_DIR or /run/devmemctl. Two namespaces may
 * each have a device with the same ifindex; the inode tells them apart.
 * The file is created exclusively before anything changes, so a second
 * setup of a device is refused (it would record the first one's values as
 * the originals), and teardown removes it. SIGINT, SIGTERM and SIGHUP
 * wait while the device and its state file change, so that neither is
 * left half done; one that came meanwhile ends the command afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static const char *state_dir(void)
{
	const char *dir = getenv(STATE_DIR_ENV);

	return dir && *dir ? dir : STATE_DIR_DEFAULT;
}

/* The index of the device of @c and its state file in this network
 * namespace; -1 after printing why not.
 */
static int dev_state(const struct cmd *c, char *path, size_t len)
{
	int ifindex, n;
	struct stat st;

	ifindex = resolve_dev(c->dev);
	if (ifindex < 0)
		return -1;
	if (stat("/proc/self/ns/net", &st)) {
		error_msg("cannot tell the network namespace: /proc/self/ns/net: %s",
			  strerror(errno));
		return -1;
	}
	n = snprintf(path, len, "%s/netns-%llu-ifindex-%d", state_dir(),
		     (unsigned long long)st.st_ino, ifindex);
	if (n < 0 || (size_t)n >= len) {
		error_msg("state directory name too long: %s", state_dir());
		return -1;
	}
	return ifindex;
}

/* Create the state file, empty, or say why not. */
static int reserve_state(const struct cmd *c, const char *path)
{
	const char *dir = state_dir();
	int fd;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		error_msg("state directory %s: %s", dir, strerror(errno));
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			error_msg("dev %s is already set up (state file %s): run '"
				  PROG " teardown dev %s' first", c->dev, path,
				  c->dev);
		else
			error_msg("state file %s: %s", path, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

int do_setup(const struct cmd *c)
{
	struct devmem_nic *n = NULL;
	char path[4096], reason[512];
	int ifindex, err;
	sigset_t old;

	ifindex = dev_state(c, path, sizeof(path));
	if (ifindex < 0)
		return EXIT_FAIL;
	hold_signals(&old);
	if (reserve_state(c, path))
		return release_signals(&old, EXIT_FAIL);

	err = devmem_nic_new(&n, ifindex);
	if (!err)
		/* undoes what it did when it fails */
		err = devmem_nic_setup(n, c->first, c->last,
				       c->has_flow ? &c->flow : NULL);
	if (err) {
		lib_error(NULL);
		goto fail;
	}
	err = devmem_nic_save(n, path);
	if (err) {
		snprintf(reason, sizeof(reason), "%s", devmem_last_error());
		if (devmem_nic_restore(n))
			error_msg("saving the state to %s: %s (and putting the device back: %s)",
				  path, reason, devmem_last_error());
		else
			error_msg("saving the state to %s: %s (device put back)",
				  path, reason);
		goto fail;
	}
	devmem_nic_free(n);
	return release_signals(&old, EXIT_OK);
fail:
	devmem_nic_free(n);
	unlink(path);
	return release_signals(&old, EXIT_FAIL);
}

int do_teardown(const struct cmd *c)
{
	struct devmem_nic *n = NULL;
	char path[4096];
	int ifindex, err;
	sigset_t old;

	ifindex = dev_state(c, path, sizeof(path));
	if (ifindex < 0)
		return EXIT_FAIL;
	if (access(path, F_OK)) {
		if (errno == ENOENT)
			error_msg("dev %s is not set up (no state file %s)",
				  c->dev, path);
		else
			error_msg("state file %s: %s", path, strerror(errno));
		return EXIT_FAIL;
	}
	err = devmem_nic_new_from_file(&n, path);
	if (err) {
		/* left in place: it may be all that tells what to undo (the
		 * library's reason names the file)
		 */
		lib_error(NULL);
		return EXIT_FAIL;
	}
	if (devmem_nic_ifindex(n) != ifindex) {
		error_msg("state file %s is of ifindex %d, not %d", path,
			  devmem_nic_ifindex(n), ifindex);
		devmem_nic_free(n);
		return EXIT_FAIL;
	}
	/* goes on past a failure; the state is used up either way */
	hold_signals(&old);
	err = devmem_nic_restore(n);
	if (err)
		lib_error(NULL);
	devmem_nic_free(n);
	if (unlink(path) && errno != ENOENT && !err) {
		error_msg("state file %s: %s", path, strerror(errno));
		err = -EIO;
	}
	return release_signals(&old, err ? EXIT_FAIL : EXIT_OK);
}
