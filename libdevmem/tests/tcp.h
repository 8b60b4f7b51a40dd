/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TCP for the test programs: a connected loopback pair, and a connection
 * to a receiver that may not listen yet.
 */
#ifndef LIBDEVMEM_TEST_TCP_H
#define LIBDEVMEM_TEST_TCP_H

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* 0 with both ends in *@cfd and *@sfd, or -errno. */
static inline int tcp_pair(int *cfd, int *sfd)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	int lfd, err;

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return -errno;
	if (bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(lfd, 1) || getsockname(lfd, (struct sockaddr *)&addr, &len))
		goto err_close_listener;
	*cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*cfd < 0)
		goto err_close_listener;
	if (connect(*cfd, (struct sockaddr *)&addr, sizeof(addr)))
		goto err_close_client;
	*sfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (*sfd < 0)
		goto err_close_client;
	close(lfd);
	return 0;

err_close_client:
	err = -errno;
	close(*cfd);
	close(lfd);
	return err;
err_close_listener:
	err = -errno;
	close(lfd);
	return err;
}

/*
 * A socket connected to numeric @addr and @port, retrying every 50 ms
 * while refused, for up to @seconds; or -errno (-EINVAL: no such
 * address).
 */
static inline int tcp_connect(const char *addr, const char *port,
			      int seconds)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
	};
	struct timespec pause = { .tv_nsec = 50000000 };
	struct addrinfo *ai;
	int fd, tries, err = -ECONNREFUSED;

	if (getaddrinfo(addr, port, &hints, &ai))
		return -EINVAL;
	for (tries = 0; tries < seconds * 20; tries++) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			err = -errno;
			break;
		}
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			freeaddrinfo(ai);
			return fd;
		}
		err = -errno;
		close(fd);
		if (err != -ECONNREFUSED)
			break;
		nanosleep(&pause, NULL);
	}
	freeaddrinfo(ai);
	return err;
}

#endif /* LIBDEVMEM_TEST_TCP_H */
