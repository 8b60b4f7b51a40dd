/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the netlink test programs share: the skip when the kernel has no
 * netdev family, capability and kernel-version checks, and lookups in a
 * queue dump.
 */
#ifndef LIBDEVMEM_TEST_NETDEV_H
#define LIBDEVMEM_TEST_NETDEV_H

#include <dirent.h>
#include <errno.h>
#include <linux/capability.h>
#include <net/if.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <devmem.h>

#include "test.h"

/* 0 when the kernel has the netdev family, else T_SKIP with the reason
 * the library gives.
 */
static inline int need_netdev(void)
{
	struct devmem_queue *q;
	ssize_t n;

	n = devmem_queue_dump(&q, 0);
	if (n == -ENOENT)
		return t_skip("%s", devmem_last_error());
	if (n >= 0)
		devmem_queue_dump_free(q);
	return 0;
}

/* 0 when device @name is up, else T_SKIP: the kernel shows the queues
 * of devices that are up only.
 */
static inline int need_up(const char *name)
{
	struct ifreq ifr = { 0 };
	int fd, ret;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return t_skip("no socket to ask whether %s is up", name);
	ret = ioctl(fd, SIOCGIFFLAGS, &ifr);
	close(fd);
	if (ret || !(ifr.ifr_flags & IFF_UP))
		return t_skip("%s is down: queues are shown for devices that are up",
			      name);
	return 0;
}

/* Read or write this thread's capability sets. */
static inline int caps(int set, struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};

	return (int)syscall(set ? SYS_capset : SYS_capget, &hdr, data);
}

static inline int have_net_admin(void)
{
	struct __user_cap_data_struct data[2];

	return !caps(0, data) &&
	       (data[0].effective & (1U << CAP_NET_ADMIN));
}

/* Drop CAP_NET_ADMIN from the effective set; 0 or -1. */
static inline int drop_net_admin(void)
{
	struct __user_cap_data_struct data[2];

	if (caps(0, data))
		return -1;
	data[0].effective &= ~(1U << CAP_NET_ADMIN);
	return caps(1, data);
}

/* The running kernel's version as major * 1000 + minor. */
static inline int kernel_version(void)
{
	struct utsname u;
	int major, minor;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major * 1000 + minor;
}

/* An index no device of this namespace has. */
static inline int unused_ifindex(void)
{
	char name[IF_NAMESIZE];
	int idx = 1000000;

	while (if_indextoname(idx, name))
		idx++;
	return idx;
}

/* The fds this process has open. */
static inline int open_fds(void)
{
	struct dirent *e;
	DIR *d;
	int n = 0;

	d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own */
}

static inline const struct devmem_queue *
find_queue(const struct devmem_queue *q, ssize_t n, int ifindex,
	   enum devmem_queue_type type, uint32_t id)
{
	ssize_t i;

	for (i = 0; i < n; i++)
		if (q[i].ifindex == ifindex && q[i].type == type &&
		    q[i].id == id)
			return &q[i];
	return NULL;
}

#endif /* LIBDEVMEM_TEST_NETDEV_H */
