// SPDX-License-Identifier: GPL-2.0
/*
 * The recycler's real SO_DEVMEM_DONTNEED path on a loopback TCP
 * connection. The socket holds no tokens, so a kernel with device-memory
 * TCP frees none and returns 0: every token counts as unknown, and calls
 * of the largest sizes the library makes are accepted. Skips on a kernel
 * without the option.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <devmem.h>

#include "tcp.h"
#include "test.h"

static int test_unknown_tokens(void)
{
	struct devmem_recycler_stats st;
	struct devmem_recycler *rc;
	int cfd = -1, sfd = -1, udp;
	ssize_t ret;
	uint32_t i;

	if (tcp_pair(&cfd, &sfd))
		return t_skip("no loopback TCP here");
	CHECK_EQ(devmem_recycler_new(&rc, sfd, 0), 0);
	CHECK_EQ(devmem_recycler_set_batch(rc, 8192), 8192);

	CHECK_EQ(devmem_recycler_add(rc, 1), 0);
	ret = devmem_recycler_flush(rc);
	if (ret == -ENOPROTOOPT) {
		devmem_recycler_free(rc);
		close(cfd);
		close(sfd);
		return t_skip("this kernel has no SO_DEVMEM_DONTNEED (ENOPROTOOPT)");
	}
	CHECK_EQ(ret, 0);

	/* 300 lone tokens (3 calls by ranges), then a run of 3000 (3 calls
	 * by tokens): the kernel takes every call.
	 */
	for (i = 0; i < 300; i++)
		CHECK_EQ(devmem_recycler_add(rc, 10 + 2 * i), 0);
	CHECK_EQ(devmem_recycler_flush(rc), 0);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.calls, 1 + 3);
	for (i = 0; i < 3000; i++)
		CHECK_EQ(devmem_recycler_add(rc, 100000 + i), 0);
	CHECK_EQ(devmem_recycler_flush(rc), 0);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.freed, 0);
	CHECK_EQ(st.unknown, 3301);
	CHECK_EQ(st.calls, 1 + 3 + 3);
	CHECK_EQ(st.pending, 0);
	devmem_recycler_free(rc);

	/* Not a TCP socket: refused, and the token stays pending. */
	udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(udp >= 0);
	CHECK_EQ(devmem_recycler_new(&rc, udp, 0), 0);
	CHECK_EQ(devmem_recycler_add(rc, 1), 0);
	CHECK(devmem_recycler_flush(rc) < 0);
	st = *devmem_recycler_get_stats(rc);
	CHECK_EQ(st.pending, 1);
	CHECK_EQ(st.calls, 0);
	devmem_recycler_free(rc);

	close(udp);
	close(cfd);
	close(sfd);
	return T_PASS;
}

static const struct t_case cases[] = {
	{ "unknown-tokens", test_unknown_tokens },
};

int main(void)
{
	return T_RUN(cases);
}
