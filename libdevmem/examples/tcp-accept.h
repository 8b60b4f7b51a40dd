/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * What the examples share that is not libdevmem: listening with a
 * receive buffer the binding can hold, accepting one TCP connection, and
 * making one through a given device.
 */
#ifndef DEVMEM_EXAMPLE_TCP_ACCEPT_H
#define DEVMEM_EXAMPLE_TCP_ACCEPT_H

#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * A socket listening on ADDRESS:PORT (numeric), with @sock_flags
 * (SOCK_NONBLOCK, say); -1 after saying why. @rcvbuf caps the receive
 * buffer of the connections it accepts (SO_RCVBUF, set before listen()).
 * Every fragment a socket holds keeps a buffer of the binding, and TCP's
 * receive buffer may grow to 6 MiB: a binding smaller than that could
 * stall a flow for good after a loss (libdevmem(7), SIZING). A quarter
 * of the binding's bytes, shared among the connections, is safe.
 */
static inline int listen_on(const char *addr, const char *port, int rcvbuf,
			    int backlog, int sock_flags)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai;
	int fd, one = 1, err;

	err = getaddrinfo(addr, port, &hints, &ai);
	if (err) {
		fprintf(stderr, "%s port %s: %s\n", addr, port, gai_strerror(err));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | sock_flags, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, backlog)) {
		perror("listen");
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/* Accept one connection on ADDRESS:PORT, its receive buffer capped at
 * @rcvbuf (see listen_on()); -1 after saying why.
 */
static inline int accept_one(const char *addr, const char *port, int rcvbuf)
{
	int lfd, fd;

	lfd = listen_on(addr, port, rcvbuf, 1, 0);
	if (lfd < 0)
		return -1;
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		perror("accept");
	close(lfd);
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
