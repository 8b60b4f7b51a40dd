/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The listening side of the test programs: the ready file a test waits
 * for before it connects, and the one connection taken. A failure is
 * fatal (die.h, included first).
 */
#ifndef SELFTESTS_PROGS_LISTEN_H
#define SELFTESTS_PROGS_LISTEN_H

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SELFTESTS_PROGS_DIE_H
#error "include die.h before listen.h"
#endif

/* Create file @path, when not NULL: the program listens now. */
static inline void ready_file(const char *path)
{
	int fd;

	if (!path)
		return;
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	close(fd);
}

/* The one connection: accepted on @lfd, which is closed then. */
static inline int accept_only(int lfd)
{
	int fd = accept(lfd, NULL, NULL);

	if (fd < 0)
		die("accept: %s", strerror(errno));
	close(lfd);
	return fd;
}

#endif
