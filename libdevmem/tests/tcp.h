/* SPDX-License-Identifier: GPL-2.0 */
/* A connected loopback TCP pair for the test programs. */
#ifndef LIBDEVMEM_TEST_TCP_H
#define LIBDEVMEM_TEST_TCP_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
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

#endif /* LIBDEVMEM_TEST_TCP_H */
