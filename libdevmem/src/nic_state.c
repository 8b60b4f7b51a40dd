// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * NIC set-up: the state files. A state with changes recorded keeps them
 * in the device's state file too (DIR/netns-<netns inode>-ifindex-<ifindex>),
 * rewritten after each change or undo and locked (flock) for as long as
 * the state is open, so that devmem_nic_new_recover() can take it over
 * once its owner is gone.
 */
#include "nic.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- state files ---- */

static int nic_write_change(FILE *fp, const struct nic_change *c)
{
	char dst[INET6_ADDRSTRLEN], src[INET6_ADDRSTRLEN];
	const struct devmem_flow *f;
	uint32_t i;

	switch (c->kind) {
	case NIC_HDS:
		return fprintf(fp, "header-split %s\n", nic_hds_name(c->hds));
	case NIC_HDS_THRESH:
		return fprintf(fp, "hds-thresh %u\n", c->thresh);
	case NIC_NTUPLE:
		return fprintf(fp, "ntuple off\n");
	case NIC_RSS:
		if (!c->rss.size)
			return fprintf(fp, "rss default\n");
		fprintf(fp, "rss table %u", c->rss.size);
		for (i = 0; i < c->rss.size; i++)
			fprintf(fp, " %u", c->rss.table[i]);
		return fprintf(fp, "\n");
	case NIC_RULE:
		f = &c->rule.flow;
		inet_ntop(f->family, f->dst, dst, sizeof(dst));
		if (f->has_src)
			inet_ntop(f->family, f->src, src, sizeof(src));
		return fprintf(fp, "rule %u %u %s %u %s\n", c->rule.loc,
			       c->rule.queue, dst, f->dst_port,
			       f->has_src ? src : "any");
	}
	return -1;
}

/* The state as the text of a state file, in a buffer to free. */
static int nic_format(const struct devmem_nic *n, char **bufp, size_t *lenp)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *fp;
	int bad;

	fp = open_memstream(&buf, &len);
	if (!fp)
		return devmem_fail(-ENOMEM, "out of memory");
	fprintf(fp, "%s %d\ndevice %d %s\n", NIC_STATE_MAGIC,
		NIC_STATE_VERSION, n->ifindex, n->name);
	for (i = 0; i < n->nr; i++)
		nic_write_change(fp, &n->ch[i]);
	bad = ferror(fp);
	if (fclose(fp) || bad) {
		free(buf);
		return devmem_fail(-ENOMEM, "out of memory");
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

/*
 * The device's own state file. While a state has changes recorded it
 * holds the file open and flock()ed: the kernel drops the lock when the
 * process ends, however it ends, which tells an abandoned state from one
 * in use.
 */
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

/*
 * A new file next to @path (@path.XXXXXX) holding the state, written and
 * synced: its name in *@tmpp (to free), its open fd in *@fdp.
 */
static int nic_write_tmp(const struct devmem_nic *n, const char *path,
			 char **tmpp, int *fdp)
{
	size_t len = 0, off = 0;
	char *buf = NULL, *tmp;
	ssize_t w;
	int fd, err;

	err = nic_format(n, &buf, &len);
	if (err)
		return err;
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0) {
		free(buf);
		return devmem_fail(-ENOMEM, "out of memory");
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = devmem_fail_errno(-errno, "a new file next to %s", path);
		goto err_free;
	}
	while (off < len) {
		w = write(fd, buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			err = devmem_fail_errno(-errno, "writing %s", tmp);
			goto err_unlink;
		}
		off += (size_t)w;
	}
	if (fsync(fd)) {
		err = devmem_fail_errno(-errno, "writing %s", tmp);
		goto err_unlink;
	}
	free(buf);
	*tmpp = tmp;
	*fdp = fd;
	return 0;

err_unlink:
	close(fd);
	unlink(tmp);
err_free:
	free(tmp);
	free(buf);
	return err;
}

/* The state file of device @ifindex of the caller's network namespace
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

/* Another state's file @path is in the way: -EBUSY, saying whose. */
static int nic_state_busy(const struct devmem_nic *n, const char *path)
{
	int fd, live = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		live = flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK;
		close(fd);
	}
	if (live)
		return devmem_fail(-EBUSY,
				   "%s is already set up by a running process (state file %s is locked)",
				   n->name, path);
	return devmem_fail(-EBUSY,
			   "%s is already set up (state file %s): run \"devmemctl teardown dev %s\" if no process is using it",
			   n->name, path, n->name);
}

/*
 * Before a change that may be recorded: the state file, created with
 * what is recorded so far and locked, unless the state has it already.
 * It is written and locked under a temporary name and then linked to its
 * own, which fails if it exists: it never exists empty or unlocked.
 */
int nic_state_claim(struct devmem_nic *n)
{
	const char *dir = nic_state_dir();
	char *path, *tmp, what[PATH_MAX + 32];
	int fd, err;

	if (n->state_fd >= 0)
		return 0;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		snprintf(what, sizeof(what), "state directory %s", dir);
		return nic_state_dir_fail(err, what, dir);
	}
	err = nic_state_path(n->ifindex, &path);
	if (err)
		return err;
	err = nic_write_tmp(n, path, &tmp, &fd);
	if (err == -EACCES || err == -EPERM || err == -EROFS)
		err = nic_state_dir_fail(err, path, dir);
	if (err)
		goto err_path;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = devmem_fail_errno(-errno, "locking %s", tmp);
		goto err_tmp;
	}
	if (link(tmp, path)) {
		if (errno == EEXIST)
			err = nic_state_busy(n, path);
		else
			err = devmem_fail_errno(-errno, "state file %s", path);
		goto err_tmp;
	}
	unlink(tmp);
	free(tmp);
	n->state_fd = fd;
	n->state_path = path;
	return 0;

err_tmp:
	close(fd);
	unlink(tmp);
	free(tmp);
err_path:
	free(path);
	return err;
}

/* Let go of the state file (and the lock), removing it when @remove. */
int nic_state_close(struct devmem_nic *n, int remove)
{
	int err = 0;

	if (n->state_fd < 0)
		return 0;
	/* removed while still locked: a recovery never takes it over */
	if (remove && unlink(n->state_path) && errno != ENOENT)
		err = devmem_fail_errno(-errno, "removing %s", n->state_path);
	close(n->state_fd);
	free(n->state_path);
	n->state_fd = -1;
	n->state_path = NULL;
	return err;
}

/* The state file as the record is now: a new one renamed over it (and
 * locked before), or none when nothing is recorded.
 */
int nic_state_sync(struct devmem_nic *n)
{
	char *tmp;
	int fd, err;

	if (n->state_fd < 0)
		return 0;
	if (!n->nr)
		return nic_state_close(n, 1);
	err = nic_write_tmp(n, n->state_path, &tmp, &fd);
	if (err)
		return err;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = devmem_fail_errno(-errno, "locking %s", tmp);
		goto err_tmp;
	}
	if (rename(tmp, n->state_path)) {
		err = devmem_fail_errno(-errno, "renaming %s to %s", tmp,
					n->state_path);
		goto err_tmp;
	}
	free(tmp);
	close(n->state_fd);
	n->state_fd = fd;
	return 0;

err_tmp:
	close(fd);
	unlink(tmp);
	free(tmp);
	return err;
}

/*
 * After a change from @mark on that returned @err (a failed change has
 * undone itself): the state file follows the record. A change it cannot
 * record is undone, with the file's error.
 */
int nic_state_commit(struct devmem_nic *n, size_t mark, int err)
{
	struct nic_reason r = { 0 };

	if (!err) {
		err = nic_state_sync(n);
		if (!err)
			return 0;
		nic_reason_keep(&r, err);
		nic_undo_from(n, mark, 0);
	}
	nic_reason_keep(&r, err);
	nic_state_sync(n);
	return nic_reason_return(&r);
}

void devmem_nic_set_hooks(struct devmem_nic *n,
			  const struct devmem_nic_hooks *hooks, void *arg)
{
	n->hooks = hooks;
	n->hook_arg = arg;
}


/* ---- the state file ---- */

DEVMEM_EXPORT int devmem_nic_save(const struct devmem_nic *n, const char *path)
{
	char *tmp;
	int fd, err;

	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	if (!path || !*path)
		return devmem_fail(-EINVAL, "no file name");
	/* A new file renamed over the old one: never half a state. */
	err = nic_write_tmp(n, path, &tmp, &fd);
	if (err)
		return err;
	if (close(fd)) {
		err = devmem_fail_errno(-errno, "writing %s", tmp);
		goto err_unlink;
	}
	if (rename(tmp, path)) {
		err = devmem_fail_errno(-errno, "renaming %s to %s", tmp, path);
		goto err_unlink;
	}
	free(tmp);
	return 0;

err_unlink:
	unlink(tmp);
	free(tmp);
	return err;
}

/* What loading has to say where it is. */
struct nic_loader {
	const char *path;
	unsigned int line;
	char *words[6];		/* the first words of the line */
	char *rest;		/* after them, or NULL */
	unsigned int nr;
};

static int nic_bad(const struct nic_loader *l, const char *what)
{
	return devmem_fail(-EINVAL, "%s:%u: %s", l->path, l->line, what);
}

/* Split @line at single spaces into at most @max words; the rest after. */
static int nic_split(struct nic_loader *l, char *line, unsigned int max)
{
	char *p = line, *sp;

	l->nr = 0;
	l->rest = NULL;
	while (l->nr < max) {
		if (!*p || *p == ' ')
			return nic_bad(l, "empty field (fields are separated by one space)");
		l->words[l->nr++] = p;
		sp = strchr(p, ' ');
		if (!sp)
			return 0;
		*sp = '\0';
		p = sp + 1;
	}
	l->rest = p;
	return 0;
}

static int nic_parse_u32(const char *s, uint32_t max, uint32_t *v)
{
	unsigned long long x = 0;
	const char *p;

	if (!*s || (s[0] == '0' && s[1]))
		return -1;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		x = x * 10 + (unsigned long long)(*p - '0');
		if (x > max)
			return -1;
	}
	*v = (uint32_t)x;
	return 0;
}

static int nic_load_rss(struct devmem_nic *n, struct nic_loader *l)
{
	struct nic_change *c;
	uint32_t size, i, *table;
	char *p, *end = NULL;

	if (l->nr == 2 && !l->rest && !strcmp(l->words[1], "default")) {
		nic_record(n, NIC_RSS);
		return 0;
	}
	if (l->nr != 3 || strcmp(l->words[1], "table") || !l->rest ||
	    nic_parse_u32(l->words[2], NIC_TABLE_MAX, &size) || !size)
		return nic_bad(l, "expected \"rss default\" or \"rss table SIZE ENTRY...\"");
	table = malloc(size * sizeof(*table));
	if (!table)
		return devmem_fail(-ENOMEM, "out of memory");
	p = l->rest;
	for (i = 0; i < size; i++) {
		end = strchr(p, ' ');
		if (end)
			*end = '\0';
		if (nic_parse_u32(p, UINT32_MAX, &table[i]))
			break;
		if (!end) {
			i++;
			break;
		}
		p = end + 1;
	}
	if (i != size || end) {
		free(table);
		return nic_bad(l, "the RSS table does not have SIZE queue numbers");
	}
	c = nic_record(n, NIC_RSS);
	c->rss.size = size;
	c->rss.table = table;
	return 0;
}

static int nic_load_rule(struct devmem_nic *n, struct nic_loader *l)
{
	char why[NIC_REASON_LEN];
	struct devmem_flow f = { .size = sizeof(f) };
	struct nic_change *c;
	uint32_t loc, queue;
	const char *src;
	int err;

	if (l->nr != 6 || l->rest)
		return nic_bad(l, "expected \"rule LOC QUEUE DST PORT SRC|any\"");
	if (nic_parse_u32(l->words[1], UINT32_MAX - 1, &loc) ||
	    nic_parse_u32(l->words[2], UINT32_MAX, &queue))
		return nic_bad(l, "rule location or queue is not a number");
	if (nic_find_rule(n, loc))
		return nic_bad(l, "a second rule at the same location");
	src = strcmp(l->words[5], "any") ? l->words[5] : NULL;
	err = devmem_flow_parse(&f, l->words[3], src, l->words[4]);
	if (err) {
		/* (not the reason's own buffer as an argument) */
		snprintf(why, sizeof(why), "%s", devmem_last_error());
		return nic_bad(l, why);
	}
	c = nic_record(n, NIC_RULE);
	c->rule.loc = loc;
	c->rule.queue = queue;
	c->rule.flow = f;
	return 0;
}

static int nic_load_line(struct devmem_nic *n, struct nic_loader *l, char *line)
{
	const char *kind;
	uint32_t v;
	int err;

	/* An RSS table has as many words as entries: they stay in rest. */
	err = nic_split(l, line, strncmp(line, "rss ", 4) ? 6 : 3);
	if (!err)
		err = nic_reserve(n, 1);
	if (err)
		return err;
	kind = l->words[0];
	if (!strcmp(kind, "header-split")) {
		if (nic_find(n, NIC_HDS))
			return nic_bad(l, "a second header-split line");
		if (l->nr != 2 || l->rest)
			return nic_bad(l, "expected \"header-split on|off|unknown\"");
		if (!strcmp(l->words[1], "on"))
			nic_record(n, NIC_HDS)->hds = ETHTOOL_TCP_DATA_SPLIT_ENABLED;
		else if (!strcmp(l->words[1], "off"))
			nic_record(n, NIC_HDS)->hds = ETHTOOL_TCP_DATA_SPLIT_DISABLED;
		else if (!strcmp(l->words[1], "unknown"))
			nic_record(n, NIC_HDS)->hds = ETHTOOL_TCP_DATA_SPLIT_UNKNOWN;
		else
			return nic_bad(l, "expected \"header-split on|off|unknown\"");
		return 0;
	}
	if (!strcmp(kind, "hds-thresh")) {
		if (nic_find(n, NIC_HDS_THRESH))
			return nic_bad(l, "a second hds-thresh line");
		if (l->nr != 2 || l->rest ||
		    nic_parse_u32(l->words[1], UINT32_MAX, &v))
			return nic_bad(l, "expected \"hds-thresh BYTES\"");
		nic_record(n, NIC_HDS_THRESH)->thresh = v;
		return 0;
	}
	if (!strcmp(kind, "ntuple")) {
		if (nic_find(n, NIC_NTUPLE))
			return nic_bad(l, "a second ntuple line");
		if (l->nr != 2 || l->rest || strcmp(l->words[1], "off"))
			return nic_bad(l, "expected \"ntuple off\"");
		nic_record(n, NIC_NTUPLE);
		return 0;
	}
	if (!strcmp(kind, "rss")) {
		if (nic_find(n, NIC_RSS))
			return nic_bad(l, "a second rss line");
		return nic_load_rss(n, l);
	}
	if (!strcmp(kind, "rule"))
		return nic_load_rule(n, l);
	return nic_bad(l, "unknown line (header-split, hds-thresh, ntuple, rss or rule expected)");
}

/* The version and device lines. */
static int nic_load_head(struct devmem_nic *n, struct nic_loader *l, char *line)
{
	uint32_t v;

	if (l->line == 1) {
		if (nic_split(l, line, 2) || l->nr != 2 || l->rest ||
		    strcmp(l->words[0], NIC_STATE_MAGIC))
			return nic_bad(l, "not a libdevmem NIC state file (no \"" NIC_STATE_MAGIC " VERSION\" line)");
		if (nic_parse_u32(l->words[1], UINT32_MAX, &v) ||
		    v != NIC_STATE_VERSION)
			return nic_bad(l, "unsupported version (this library reads 1)");
		return 0;
	}
	if (nic_split(l, line, 3) || l->nr != 3 || l->rest ||
	    strcmp(l->words[0], "device") ||
	    nic_parse_u32(l->words[1], INT_MAX, &v) || !v ||
	    strlen(l->words[2]) >= IF_NAMESIZE)
		return nic_bad(l, "expected \"device IFINDEX NAME\"");
	n->ifindex = (int)v;
	strcpy(n->name, l->words[2]);
	return 0;
}

/* The whole of a state file, NUL-terminated, from @fd (named @path). */
static int nic_read_fd(int fd, const char *path, char **bufp, size_t *lenp)
{
	size_t len = 0;
	ssize_t got;
	char *buf;
	int err = 0;

	buf = malloc(NIC_STATE_MAX_BYTES + 1);
	if (!buf)
		return devmem_fail(-ENOMEM, "out of memory");
	while (len <= NIC_STATE_MAX_BYTES) {
		got = read(fd, buf + len, NIC_STATE_MAX_BYTES + 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = devmem_fail_errno(-errno, "reading %s", path);
			break;
		}
		if (!got)
			break;
		len += (size_t)got;
	}
	if (err)
		goto err_free;
	if (len > NIC_STATE_MAX_BYTES)
		err = devmem_fail(-EINVAL, "%s: larger than %u bytes", path,
				  NIC_STATE_MAX_BYTES);
	else if (memchr(buf, '\0', len))
		err = devmem_fail(-EINVAL, "%s: a NUL byte in a text file", path);
	else if (!len || buf[len - 1] != '\n')
		err = devmem_fail(-EINVAL, "%s: empty, or its last line has no newline",
				  path);
	if (err)
		goto err_free;
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;

err_free:
	free(buf);
	return err;
}

/* A state from the state file open at @fd (named @path), strictly. */
static int nic_load(struct devmem_nic **np, int fd, const char *path)
{
	struct nic_loader l = { .path = path };
	char name[IF_NAMESIZE];
	struct devmem_nic *n;
	char *buf = NULL, *line, *nl;
	size_t len;
	int err;

	err = nic_read_fd(fd, path, &buf, &len);
	if (err)
		return err;
	n = nic_alloc();
	if (!n) {
		free(buf);
		return devmem_fail(-ENOMEM, "out of memory");
	}
	for (line = buf; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = '\0';
		l.line++;
		if (l.line <= 2)
			err = nic_load_head(n, &l, line);
		else
			err = nic_load_line(n, &l, line);
		if (err)
			goto err_free;
	}
	if (l.line < 2) {
		err = devmem_fail(-EINVAL, "%s: no \"device IFINDEX NAME\" line",
				  path);
		goto err_free;
	}
	/* The device the state was recorded on, not another by its index. */
	err = nic_device_name(n->ifindex, name);
	if (err)
		goto err_free;
	if (strcmp(name, n->name)) {
		err = devmem_fail(-ENODEV,
				  "%s: ifindex %d is now \"%s\", not \"%s\"",
				  path, n->ifindex, name, n->name);
		goto err_free;
	}
	free(buf);
	*np = n;
	return 0;

err_free:
	free(buf);
	devmem_nic_free(n);
	return err;
}

DEVMEM_EXPORT int devmem_nic_new_from_file(struct devmem_nic **np, const char *path)
{
	int fd, err;

	devmem_error_clear();
	if (!np)
		return devmem_fail(-EINVAL, "no place for the result");
	if (!path || !*path)
		return devmem_fail(-EINVAL, "no file name");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return devmem_fail_errno(-errno, "%s", path);
	err = nic_load(np, fd, path);
	close(fd);
	return err;
}

/*
 * Open and lock the state file @path of device @name, if no one holds
 * it: the file locked is the one under that name (an owner renames a new
 * one over it, or removes it, between open() and flock()).
 */
static int nic_recover_lock(const char *path, const char *name, int *fdp)
{
	struct stat st, now;
	int fd, tries;

	for (tries = 0; tries < NIC_RECOVER_TRIES; tries++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			return devmem_fail(-ENOENT,
					   "%s is not set up (no state file %s)",
					   name, path);
		if (fd < 0)
			return devmem_fail_errno(-errno, "state file %s", path);
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			close(fd);
			if (errno == EWOULDBLOCK)
				return devmem_fail(-EBUSY,
						   "%s is set up by a running process (state file %s is locked)",
						   name, path);
			return devmem_fail_errno(-errno, "locking %s", path);
		}
		if (!fstat(fd, &st) && !stat(path, &now) &&
		    st.st_dev == now.st_dev && st.st_ino == now.st_ino) {
			*fdp = fd;
			return 0;
		}
		close(fd);
	}
	return devmem_fail(-EBUSY,
			   "%s is set up by a running process (state file %s keeps changing)",
			   name, path);
}

DEVMEM_EXPORT int devmem_nic_new_recover(struct devmem_nic **np, int ifindex)
{
	char name[IF_NAMESIZE], *path;
	struct devmem_nic *n;
	int fd = -1, err;

	devmem_error_clear();
	if (!np)
		return devmem_fail(-EINVAL, "no place for the result");
	if (ifindex <= 0)
		return devmem_fail(-EINVAL, "ifindex %d is not a device index",
				   ifindex);
	err = nic_device_name(ifindex, name);
	if (!err)
		err = nic_state_path(ifindex, &path);
	if (err)
		return err;
	err = nic_recover_lock(path, name, &fd);
	if (err)
		goto err_path;
	err = nic_load(&n, fd, path);
	if (err)
		goto err_close;
	if (n->ifindex != ifindex) {
		err = devmem_fail(-EINVAL, "%s: the state of ifindex %d, not %d",
				  path, n->ifindex, ifindex);
		devmem_nic_free(n);
		goto err_close;
	}
	n->state_fd = fd;
	n->state_path = path;
	*np = n;
	return 0;

err_close:
	close(fd);
err_path:
	free(path);
	return err;
}
