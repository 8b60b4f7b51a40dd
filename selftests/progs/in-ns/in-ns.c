// SPDX-License-Identifier: GPL-2.0
/*
 * in-ns: run a command in a named network namespace, as
 * `ip netns exec NAME CMD...` does, in one statically linked exec.
 *
 * Under TCG an exec of iproute2's ip, a dynamic program with seven
 * libraries, costs about twice what a static one does, and the suites
 * enter namespaces thousands of times. This does what ip does before it
 * executes the command: joins the namespace named in /run/netns, gives
 * itself a mount namespace whose mounts do not propagate back, mounts a
 * sysfs of the network namespace over /sys (read-only when the /sys it
 * shadows is), and bind-mounts each file of /etc/netns/NAME over its
 * namesake in /etc. It leaves out what ip does for VRFs (`ip vrf exec`
 * cgroups), which the tests do not use.
 *
 * Its messages and exit status are ip's: the command's status, 255 when
 * the namespace cannot be entered, 1 when the command cannot be executed
 * (and 2 for usage).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

/* What ip says and does when it cannot switch namespaces. */
static void __attribute__((format(printf, 1, 2), noreturn))
fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(255);
}

/* Each file of /etc/netns/@name over its namesake in /etc. */
static void bind_etc(const char *name)
{
	char dir[PATH_MAX], from[2 * PATH_MAX], to[2 * PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "/etc/netns/%s", name);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(from, sizeof(from), "%s/%s", dir, e->d_name);
		snprintf(to, sizeof(to), "/etc/%s", e->d_name);
		if (mount(from, to, "none", MS_BIND, NULL))
			fprintf(stderr, "Bind %s -> %s failed: %s\n",
				from, to, strerror(errno));
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	unsigned long flags = 0;
	struct statvfs st;
	char path[PATH_MAX];
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: in-ns NAME CMD [ARG...]\n");
		return 2;
	}
	if (!argv[1][0] || strchr(argv[1], '/') ||
	    !strcmp(argv[1], ".") || !strcmp(argv[1], "..") ||
	    strlen(argv[1]) > NAME_MAX)
		fail("Invalid netns name \"%s\"", argv[1]);
	snprintf(path, sizeof(path), "/run/netns/%s", argv[1]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail("Cannot open network namespace \"%s\": %s", argv[1],
		     strerror(errno));
	if (setns(fd, CLONE_NEWNET))
		fail("setting the network namespace \"%s\" failed: %s",
		     argv[1], strerror(errno));
	close(fd);
	if (unshare(CLONE_NEWNS))
		fail("unshare failed: %s", strerror(errno));
	/* nothing mounted from here on propagates back */
	if (mount("", "/", "none", MS_SLAVE | MS_REC, NULL))
		fail("\"mount --make-rslave /\" failed: %s", strerror(errno));
	/* a read-only /sys that cannot go is shadowed read-only */
	if (umount2("/sys", MNT_DETACH) && !statvfs("/sys", &st) &&
	    (st.f_flag & ST_RDONLY))
		flags = MS_RDONLY;
	if (mount(argv[1], "/sys", "sysfs", flags, NULL))
		fail("mount of /sys failed: %s", strerror(errno));
	bind_etc(argv[1]);

	fflush(stdout);
	execvp(argv[2], argv + 2);
	fprintf(stderr, "exec of \"%s\" failed: %s\n", argv[2],
		strerror(errno));
	return 1;
}
