// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * NIC set-up: the state directory, shared by the processes that set up
 * queues of one device, each its own.
 *
 * DIR/netns-<netns inode>-ifindex-<ifindex> (the device file) holds what
 * the device was before any set-up: header split, hds-thresh, the ntuple
 * feature, the RSS table. The first owner to change one records it, the
 * last to leave restores it.
 *
 * DIR/<device file>.owner.XXXXXX (an owner file) holds one owner's queues
 * out of RSS and its n-tuple rules. The owner keeps it open and flock()ed
 * for as long as it lives: the kernel drops the lock when the process
 * ends, however it ends, which tells an abandoned set-up from one in use,
 * and devmem_nic_new_recover() takes the abandoned ones over.
 *
 * Every operation holds the directory's own flock while it reads the
 * files, changes the device and writes them back: owners never see each
 * other half-way. The RSS table is computed from the union of every
 * owner's queues each time one of them changes.
 */
#include "nic.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *nic_state_dir(void)
{
	const char *dir = secure_getenv(NIC_STATE_DIR_ENV);

	return dir && *dir ? dir : NIC_STATE_DIR;
}

/*
 * @what (the state directory @dir or a file in it) failed with @err: for
 * a directory this user may not write, the reason says where set-up keeps
 * its state and what to do about it.
 */
static int nic_state_dir_fail(int err, const char *what, const char *dir)
{
	char text[64];

	if (err != -EACCES && err != -EPERM && err != -EROFS)
		return devmem_fail_errno(err, "%s", what);
	return devmem_fail(err,
			   "%s: %s: set-up records what it changes in %s; run it as root, or set "
			   NIC_STATE_DIR_ENV " to a directory this user can write",
			   what, strerror_r(-err, text, sizeof(text)), dir);
}

/* The device file of device @ifindex of the caller's network namespace
 * (two namespaces may each have a device of that index), a name to free.
 */
static int nic_state_path(int ifindex, char **pathp)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return devmem_fail_errno(-errno,
					 "cannot tell the network namespace: /proc/self/ns/net");
	if (asprintf(pathp, "%s/netns-%llu-ifindex-%d", nic_state_dir(),
		     (unsigned long long)st.st_ino, ifindex) < 0)
		return devmem_fail(-ENOMEM, "out of memory");
	return 0;
}

#define NIC_OWNER_SUFFIX	".owner"

/* The state directory, made if need be, and locked: its fd in *@fdp. */
static int nic_dir_lock(int *fdp)
{
	const char *dir = nic_state_dir();
	char what[PATH_MAX + 32];
	int fd, err;

	if (mkdir(dir, 0700) && errno != EEXIST)
		goto fail;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	while (flock(fd, LOCK_EX)) {
		if (errno == EINTR)
			continue;
		err = devmem_fail_errno(-errno, "locking %s", dir);
		close(fd);
		return err;
	}
	*fdp = fd;
	return 0;

fail:
	err = -errno;
	snprintf(what, sizeof(what), "state directory %s", dir);
	return nic_state_dir_fail(err, what, dir);
}

/* Writing a file in the state directory failed with @err: the reason,
 * which for a directory this user may not write names the directory.
 */
static int nic_file_fail(int err, const char *what, const char *path)
{
	const char *dir = nic_state_dir();
	char where[PATH_MAX + 32];

	if (err != -EACCES && err != -EPERM && err != -EROFS)
		return devmem_fail_errno(err, "%s %s", what, path);
	snprintf(where, sizeof(where), "state directory %s", dir);
	return nic_state_dir_fail(err, where, dir);
}

/* Whether directory entry @name is an owner file of device file @dev. */
static int nic_is_owner(const char *name, const char *dev)
{
	const char *slash = strrchr(dev, '/');
	size_t len;

	dev = slash ? slash + 1 : dev;
	len = strlen(dev);
	if (strncmp(name, dev, len) ||
	    strncmp(name + len, NIC_OWNER_SUFFIX ".", sizeof(NIC_OWNER_SUFFIX)))
		return 0;
	name += len + sizeof(NIC_OWNER_SUFFIX);
	/* its temporary files have one more suffix */
	return *name && !strchr(name, '.');
}

/* Whether @fd (an owner file) is held by a running owner. */
static int nic_held(int fd)
{
	if (!flock(fd, LOCK_EX | LOCK_NB)) {
		flock(fd, LOCK_UN);
		return 0;
	}
	return errno == EWOULDBLOCK;
}

/* The state file at @fd as a state, or NULL for an empty file (an owner
 * that died before it wrote one).
 */
static int nic_load_any(struct devmem_nic **np, int fd, const char *path)
{
	struct stat st;

	if (fstat(fd, &st))
		return devmem_fail_errno(-errno, "state file %s", path);
	*np = NULL;
	return st.st_size ? nic_load(np, fd, path) : 0;
}

static void nic_op_close(struct nic_op *op)
{
	size_t i;

	for (i = 0; i < op->nr_others; i++)
		free(op->others[i]);
	free(op->others);
	free(op->claims);
	free(op->dev_path);
	if (op->dir_fd >= 0)
		close(op->dir_fd);
	memset(op, 0, sizeof(*op));
	op->dir_fd = -1;
}

/* The queues of owner @o (file @path) into the operation's claims. */
static int nic_op_claims(struct nic_op *op, const struct devmem_nic *o,
			 const char *path, int live)
{
	struct nic_claim *cl;
	size_t i;

	for (i = 0; i < o->nr; i++) {
		const struct nic_change *c = &o->ch[i];

		if (c->kind != NIC_QUEUES && c->kind != NIC_RULE)
			continue;
		cl = realloc(op->claims, (op->nr_claims + 1) * sizeof(*cl));
		if (!cl)
			return devmem_fail(-ENOMEM, "out of memory");
		op->claims = cl;
		cl += op->nr_claims++;
		cl->rss = c->kind == NIC_QUEUES;
		cl->first = cl->rss ? c->queues.first : c->rule.queue;
		cl->last = cl->rss ? c->queues.last : c->rule.queue;
		cl->live = live;
		cl->path = path;
	}
	return 0;
}

/* Every other owner file of the device: its name and its queues. */
static int nic_op_scan(const struct devmem_nic *n, struct nic_op *op)
{
	struct devmem_nic *o;
	struct dirent *de;
	char *path, **others;
	int fd, err = 0;
	DIR *d;

	fd = dup(op->dir_fd);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		err = devmem_fail_errno(-errno, "reading %s", nic_state_dir());
		if (fd >= 0)
			close(fd);
		return err;
	}
	rewinddir(d);
	while (!err && (de = readdir(d))) {
		if (!nic_is_owner(de->d_name, op->dev_path))
			continue;
		if (asprintf(&path, "%s/%s", nic_state_dir(), de->d_name) < 0) {
			err = devmem_fail(-ENOMEM, "out of memory");
			break;
		}
		if (n->state_path && !strcmp(path, n->state_path)) {
			free(path);
			continue;
		}
		others = realloc(op->others, (op->nr_others + 1) * sizeof(*others));
		if (!others) {
			free(path);
			err = devmem_fail(-ENOMEM, "out of memory");
			break;
		}
		op->others = others;
		op->others[op->nr_others++] = path;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = devmem_fail_errno(-errno, "state file %s", path);
			break;
		}
		o = NULL;
		err = nic_load_any(&o, fd, path);
		if (!err && o)
			err = nic_op_claims(op, o, path, nic_held(fd));
		close(fd);
		devmem_nic_free(o);
	}
	/* the claims point at the names: none moves from here on */
	closedir(d);
	return err;
}

/* A device file with queues or rules in it is one whole set-up (as the
 * library wrote it before version 1.4): -EBUSY, saying whose.
 */
static int nic_op_old(const struct devmem_nic *n, const char *path, int fd)
{
	if (nic_held(fd))
		return devmem_fail(-EBUSY,
				   "%s is already set up by a running process (state file %s is locked)",
				   n->name, path);
	return devmem_fail(-EBUSY,
			   "%s is already set up (state file %s): run \"devmemctl teardown dev %s\" if no process is using it",
			   n->name, path, n->name);
}

/*
 * The device file's records in place of @n's shared ones: its records
 * first, then those of @n's whose kind it lacks (a state read with
 * devmem_nic_new_from_file()), then @n's own.
 */
static int nic_op_shared(struct devmem_nic *n, struct nic_op *op)
{
	struct devmem_nic *d = NULL;
	struct nic_change *ch;
	size_t i, nr = 0, cap;
	int fd, err;

	fd = open(op->dev_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT)
		return devmem_fail_errno(-errno, "state file %s", op->dev_path);
	if (fd >= 0) {
		err = nic_load_any(&d, fd, op->dev_path);
		for (i = 0; !err && d && i < d->nr; i++)
			if (!nic_shared(d->ch[i].kind))
				err = nic_op_old(n, op->dev_path, fd);
		close(fd);
		if (err)
			goto out;
	}
	cap = n->nr + (d ? d->nr : 0) + 1;
	ch = malloc(cap * sizeof(*ch));
	if (!ch) {
		err = devmem_fail(-ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; d && i < d->nr; i++)
		ch[nr++] = d->ch[i];
	if (d)
		d->nr = 0;		/* the records moved */
	for (i = 0; i < n->nr; i++) {
		struct nic_change *c = &n->ch[i];
		size_t j;

		if (!nic_shared(c->kind))
			continue;
		for (j = 0; j < nr && ch[j].kind != c->kind; j++)
			;
		if (j < nr)
			nic_change_free(c);
		else
			ch[nr++] = *c;
	}
	for (i = 0; i < n->nr; i++)
		if (!nic_shared(n->ch[i].kind))
			ch[nr++] = n->ch[i];
	free(n->ch);
	n->ch = ch;
	n->cap = cap;
	n->nr = nr;
	err = 0;
out:
	devmem_nic_free(d);
	return err;
}

/* Whether @n holds records that files of @which take. */
static int nic_holds(const struct devmem_nic *n, int which)
{
	size_t i;

	for (i = 0; i < n->nr; i++)
		if (which & (nic_shared(n->ch[i].kind) ? NIC_FILE_SHARED :
			     NIC_FILE_OWN))
			return 1;
	return 0;
}

/* Write @n's records of @which to @path: a new file renamed over it.
 * With @fdp, the new file stays open and locked, its fd in *@fdp.
 */
static int nic_write(const struct devmem_nic *n, const char *path, int which,
		     int *fdp)
{
	char *tmp;
	int fd, err;

	err = nic_write_tmp(n, path, which, &tmp, &fd);
	if (err)
		return nic_file_fail(err, "writing", path);
	if (fdp && flock(fd, LOCK_EX | LOCK_NB)) {
		err = devmem_fail_errno(-errno, "locking %s", tmp);
		goto err_tmp;
	}
	if (rename(tmp, path)) {
		err = devmem_fail_errno(-errno, "renaming %s to %s", tmp, path);
		goto err_tmp;
	}
	free(tmp);
	if (fdp)
		*fdp = fd;
	else
		close(fd);
	return 0;

err_tmp:
	close(fd);
	unlink(tmp);
	free(tmp);
	return err;
}

/* The owner file of @n, made now if it has none: written, locked. */
static int nic_op_own(struct devmem_nic *n, struct nic_op *op)
{
	char *base;
	int err;

	if (n->state_fd >= 0)
		return 0;
	if (asprintf(&base, "%s" NIC_OWNER_SUFFIX, op->dev_path) < 0)
		return devmem_fail(-ENOMEM, "out of memory");
	err = nic_write_tmp(n, base, NIC_FILE_OWN, &n->state_path,
			    &n->state_fd);
	if (err) {
		err = nic_file_fail(err, "a new file next to", base);
	} else if (flock(n->state_fd, LOCK_EX | LOCK_NB)) {
		err = devmem_fail_errno(-errno, "locking %s", n->state_path);
		close(n->state_fd);
		unlink(n->state_path);
		free(n->state_path);
		n->state_fd = -1;
		n->state_path = NULL;
	}
	op->made_own = !err;
	free(base);
	return err;
}

static int nic_op_lock(const struct devmem_nic *n, struct nic_op *op)
{
	int err;

	memset(op, 0, sizeof(*op));
	op->dir_fd = -1;
	err = nic_dir_lock(&op->dir_fd);
	if (!err)
		err = nic_state_path(n->ifindex, &op->dev_path);
	if (!err)
		err = nic_op_scan(n, op);
	if (err)
		nic_op_close(op);
	return err;
}

int nic_op_begin(struct devmem_nic *n, struct nic_op *op)
{
	int err;

	err = nic_op_lock(n, op);
	if (err)
		return err;
	err = nic_op_shared(n, op);
	if (!err)
		err = nic_op_own(n, op);
	if (err) {
		nic_op_close(op);
		return err;
	}
	op->mark = n->nr;
	return 0;
}

/* The files as the record is now: the device file (none without shared
 * records) and the owner file.
 */
static int nic_op_write(struct devmem_nic *n, struct nic_op *op)
{
	int fd, err = 0;

	if (nic_holds(n, NIC_FILE_SHARED))
		err = nic_write(n, op->dev_path, NIC_FILE_SHARED, NULL);
	else if (unlink(op->dev_path) && errno != ENOENT)
		err = devmem_fail_errno(-errno, "removing %s", op->dev_path);
	if (err || n->state_fd < 0)
		return err;
	err = nic_write(n, n->state_path, NIC_FILE_OWN, &fd);
	if (err)
		return err;
	close(n->state_fd);
	n->state_fd = fd;
	return 0;
}

/* Let go of the owner file, removing it. */
static int nic_own_remove(struct devmem_nic *n)
{
	int err = 0;

	/* removed while still locked: no recovery takes it over */
	if (unlink(n->state_path) && errno != ENOENT)
		err = devmem_fail_errno(-errno, "removing %s", n->state_path);
	close(n->state_fd);
	free(n->state_path);
	n->state_fd = -1;
	n->state_path = NULL;
	return err;
}

/*
 * An owner with nothing of its own left goes, unless the device's shared
 * records would be left with no owner (they are restored by the last).
 */
static int nic_op_leave(struct devmem_nic *n, struct nic_op *op)
{
	size_t i;

	if (n->state_fd < 0 || nic_holds(n, NIC_FILE_OWN) ||
	    (nic_holds(n, NIC_FILE_SHARED) && !op->nr_others))
		return 0;
	/* what the device was is the other owners' now, not a record of
	 * this state's to undo
	 */
	for (i = n->nr; i-- > 0; )
		nic_forget(n, &n->ch[i]);
	return nic_own_remove(n);
}

int nic_op_end(struct devmem_nic *n, struct nic_op *op, int err, int leave)
{
	struct nic_reason r = { 0 };

	if (!err) {
		err = nic_op_write(n, op);
		/* a change not recorded is undone */
		if (err) {
			nic_reason_keep(&r, err);
			nic_undo_from(n, op->mark, NIC_FILE_SHARED | NIC_FILE_OWN);
		}
	}
	if (err) {
		nic_reason_keep(&r, err);
		nic_op_write(n, op);
	}
	/* a new owner whose first change failed was never one */
	if (leave || (err && op->made_own))
		nic_reason_keep(&r, nic_op_leave(n, op));
	nic_op_close(op);
	return nic_reason_return(&r);
}

int nic_op_busy(const struct devmem_nic *n, const struct nic_op *op,
		uint32_t first, uint32_t last)
{
	const struct nic_claim *c, *in = NULL;
	uint32_t q = 0, at;
	size_t i;

	/* the lowest of the queues that another owner has */
	for (i = 0; i < op->nr_claims; i++) {
		c = &op->claims[i];
		if (c->first > last || first > c->last)
			continue;
		at = first > c->first ? first : c->first;
		if (!in || at < q) {
			in = c;
			q = at;
		}
	}
	if (!in)
		return 0;
	if (in->live)
		return devmem_fail(-EBUSY,
				   "queue %u of %s is already set up by a running process (state file %s is locked)",
				   q, n->name, in->path);
	return devmem_fail(-EBUSY,
			   "queue %u of %s is already set up (state file %s): run \"devmemctl teardown dev %s\" if no process is using it",
			   q, n->name, in->path, n->name);
}

void nic_state_free(struct devmem_nic *n)
{
	char saved[NIC_REASON_LEN];
	struct nic_op op;

	if (n->state_fd < 0)
		return;
	/* with records of its own the file stays, for a recovery */
	if (!nic_holds(n, NIC_FILE_OWN)) {
		snprintf(saved, sizeof(saved), "%s", devmem_last_error());
		if (!nic_op_lock(n, &op)) {
			struct stat st;

			/* the device's records need an owner */
			if (op.nr_others || stat(op.dev_path, &st))
				nic_own_remove(n);
			nic_op_close(&op);
		}
		devmem_fail(0, "%s", saved);
	}
	if (n->state_fd >= 0) {
		close(n->state_fd);
		free(n->state_path);
		n->state_fd = -1;
		n->state_path = NULL;
	}
}

void devmem_nic_set_hooks(struct devmem_nic *n,
			  const struct devmem_nic_hooks *hooks, void *arg)
{
	n->hooks = hooks;
	n->hook_arg = arg;
}

/* ---- recovery ---- */

/* Owners that are gone, taken over by the recovering state. */
struct nic_adopted {
	int *fds;
	char **paths;
	size_t nr;
};

/* The records of @o moved to @n: a rule recorded twice (an owner that
 * died while its records were being taken over) once, a shared record
 * @n has already not at all.
 */
static int nic_take(struct devmem_nic *n, struct devmem_nic *o)
{
	size_t i;
	int err;

	err = nic_reserve(n, o->nr);
	if (err)
		return err;
	for (i = 0; i < o->nr; i++) {
		struct nic_change *c = &o->ch[i];

		if ((c->kind == NIC_RULE && nic_find_rule(n, c->rule.loc)) ||
		    (nic_shared(c->kind) && nic_find(n, c->kind)))
			nic_change_free(c);
		else
			n->ch[n->nr++] = *c;
	}
	o->nr = 0;
	return 0;
}

/* Owner file @path, if its owner is gone: its records into @n, its fd
 * kept locked in @a. *@live when its owner runs.
 */
static int nic_adopt(struct devmem_nic *n, struct nic_adopted *a,
		     const char *path, int *live)
{
	struct devmem_nic *o = NULL;
	char **paths;
	int fd, err, *fds;

	*live = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return devmem_fail_errno(-errno, "state file %s", path);
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? 0 :
		      devmem_fail_errno(-errno, "locking %s", path);
		*live = !err;
		close(fd);
		return err;
	}
	err = nic_load_any(&o, fd, path);
	if (!err && o)
		err = nic_take(n, o);
	devmem_nic_free(o);
	fds = err ? NULL : realloc(a->fds, (a->nr + 1) * sizeof(*fds));
	if (fds)
		a->fds = fds;
	paths = fds ? realloc(a->paths, (a->nr + 1) * sizeof(*paths)) : NULL;
	if (paths)
		a->paths = paths;
	if (!err && (!paths || !(paths[a->nr] = strdup(path))))
		err = devmem_fail(-ENOMEM, "out of memory");
	if (err) {
		close(fd);
		return err;
	}
	a->fds[a->nr++] = fd;
	return 0;
}

static void nic_adopted_free(struct nic_adopted *a, int remove)
{
	size_t i;

	for (i = 0; i < a->nr; i++) {
		if (remove)
			unlink(a->paths[i]);
		close(a->fds[i]);
		free(a->paths[i]);
	}
	free(a->fds);
	free(a->paths);
}

/*
 * The device file's records into @n: *@has when there is one, *@old when
 * it is a whole set-up as the library wrote it before version 1.4 (taken
 * over unless its owner runs).
 */
static int nic_recover_dev(struct devmem_nic *n, struct nic_op *op,
			   int *has, int *old)
{
	struct devmem_nic *d = NULL;
	int fd, err;

	*has = *old = 0;
	fd = open(op->dev_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return devmem_fail_errno(-errno, "state file %s", op->dev_path);
	*has = 1;
	err = nic_load_any(&d, fd, op->dev_path);
	if (!err && d && nic_holds(d, NIC_FILE_OWN)) {
		*old = 1;
		if (nic_held(fd))
			err = nic_op_old(n, op->dev_path, fd);
	}
	if (!err && d)
		err = nic_take(n, d);
	close(fd);
	devmem_nic_free(d);
	return err;
}

/*
 * Take over what the owners that are gone left (their queues and rules,
 * and the device file's records) in a new owner file of @n, and remove
 * theirs. Running owners stay as they are.
 */
static int nic_recover(struct devmem_nic *n, struct nic_op *op)
{
	struct nic_adopted a = { 0 };
	const char *live_path = NULL;
	int live, has_dev, old, err;
	size_t i;

	err = nic_recover_dev(n, op, &has_dev, &old);
	for (i = 0; !err && i < op->nr_others; i++) {
		err = nic_adopt(n, &a, op->others[i], &live);
		if (!err && live)
			live_path = op->others[i];
	}
	/* the device file alone belongs to its running owners */
	if (!err && !a.nr && !old && live_path)
		err = devmem_fail(-EBUSY,
				  "%s is set up by a running process (state file %s is locked)",
				  n->name, live_path);
	else if (!err && !a.nr && !has_dev)
		err = devmem_fail(-ENOENT, "%s is not set up (no state file %s)",
				  n->name, op->dev_path);
	if (!err)
		err = nic_op_own(n, op);
	if (!err)
		err = nic_op_write(n, op);
	if (err && n->state_fd >= 0)
		nic_own_remove(n);
	nic_adopted_free(&a, !err);
	return err;
}

DEVMEM_EXPORT int devmem_nic_new_recover(struct devmem_nic **np, int ifindex)
{
	struct devmem_nic *n;
	struct nic_op op;
	int err;

	if (!np) {
		devmem_error_clear();
		return devmem_fail(-EINVAL, "no place for the result");
	}
	err = devmem_nic_new(&n, ifindex);
	if (err)
		return err;
	err = nic_op_lock(n, &op);
	if (!err) {
		err = nic_recover(n, &op);
		nic_op_close(&op);
	}
	if (err) {
		devmem_nic_free(n);
		return err;
	}
	*np = n;
	return 0;
}
