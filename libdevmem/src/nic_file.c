// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * NIC set-up: the text of a state file, written and read strictly.
 *
 *   libdevmem-nic 1
 *   device IFINDEX NAME
 *   then one line per record, oldest first
 *
 * The same text serves devmem_nic_save() and the state directory's files
 * (nic_state.c), each with the records that are its own.
 */
#include "nic.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	case NIC_QUEUES:
		return fprintf(fp, "queues %u %u\n", c->queues.first,
			       c->queues.last);
	}
	return -1;
}

/* Whether record @c goes in a file of @which (NIC_FILE_*). */
static int nic_file_takes(const struct nic_change *c, int which)
{
	return which & (nic_shared(c->kind) ? NIC_FILE_SHARED : NIC_FILE_OWN);
}

/* The records of @which as the text of a state file, in a buffer to free. */
static int nic_format(const struct devmem_nic *n, int which, char **bufp,
		      size_t *lenp)
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
		if (nic_file_takes(&n->ch[i], which))
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
 * A new file next to @path (@path.XXXXXX) holding the records of @n that
 * @which takes (NIC_FILE_*), written and synced: its name in *@tmpp (to
 * free), its open fd in *@fdp.
 */
int nic_write_tmp(const struct devmem_nic *n, const char *path, int which,
		  char **tmpp, int *fdp)
{
	size_t len = 0, off = 0;
	char *buf = NULL, *tmp;
	ssize_t w;
	int fd, err;

	err = nic_format(n, which, &buf, &len);
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

/* ---- devmem_nic_save() and devmem_nic_new_from_file() ---- */

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
	err = nic_write_tmp(n, path, NIC_FILE_SHARED | NIC_FILE_OWN, &tmp, &fd);
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
	if (!strcmp(kind, "queues")) {
		struct nic_change *c;
		uint32_t first, last;

		if (l->nr != 3 || l->rest ||
		    nic_parse_u32(l->words[1], UINT32_MAX, &first) ||
		    nic_parse_u32(l->words[2], UINT32_MAX, &last) ||
		    first > last)
			return nic_bad(l, "expected \"queues FIRST LAST\", FIRST not after LAST");
		c = nic_record(n, NIC_QUEUES);
		c->queues.first = first;
		c->queues.last = last;
		return 0;
	}
	return nic_bad(l, "unknown line (header-split, hds-thresh, ntuple, rss, rule or queues expected)");
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
int nic_load(struct devmem_nic **np, int fd, const char *path)
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
