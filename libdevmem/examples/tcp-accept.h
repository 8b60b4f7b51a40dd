/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * What the examples share that is not libdevmem: accepting one TCP
 * connection, and making one through a given device.
 */
#ifndef DEVMEM_EXAMPLE_TCP_ACCEPT_H
#define DEVMEM_EXAMPLE_TCP_ACCEPT_H

#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Accept one connection on ADDRESS:PORT (numeric); -1 after saying why. */
static inline int accept_one(const char *addr, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai;
	int lfd, fd = -1, one = 1, err;

	err = getaddrinfo(addr, port, &hints, &ai);
	if (err) {
		fprintf(stderr, "%s port %s: %s\n", addr, port, gai_strerror(err));
		return -1;
	}
	lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 1))
		perror("listen");
	else if ((fd = accept(lfd, NULL, NULL)) < 0)
		perror("accept");
	if (lfd >= 0)
		close(lfd);
	freeaddrinfo(ai);
	return fd;
}

/* Connect to ADDRESS:PORT through device IFNAME; -1 after saying why. */
static inline int connect_via(const char *ifname, const char *addr, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai;
	int fd, err;

	err = getaddrinfo(addr, port, &hints, &ai);
	if (err) {
		fprintf(stderr, "%s port %s: %s\n", addr, port, gai_strerror(err));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, strlen(ifname) + 1) ||
	    connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		perror("connect");
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

#endif /* DEVMEM_EXAMPLE_TCP_ACCEPT_H */
