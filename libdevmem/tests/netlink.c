// SPDX-License-Identifier: GPL-2.0
/*
 * The netdev family through the public API, against the running kernel:
 * argument errors (made before any system call: checked under seccomp
 * strict mode), device names and indexes, queue and page-pool dumps
 * (every kernel with the family shows lo's rx and tx queue 0), and
 * bind-rx and bind-tx refused with the kernel's exact errno and extack
 * text. Nothing here can bind: lo cannot take device memory.
 *
 * Skips without the netdev family; the bind-rx cases skip without
 * CAP_NET_ADMIN, and on kernels whose answers are not recorded below.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "netdev.h"
#include "nosyscall.h"

/*
 * What a kernel answers to the requests refused below, recorded by
 * running them: errno and the reason devmem_last_error() gives, which
 * is the extack message, or strerror() when the kernel sent none.
 */
struct answers {
	const char *kernel;
	int bind_nodev;			/* bind-rx, ifindex of no device */
	const char *bind_nodev_text;
	int bind_lo;			/* bind-rx on lo, any fd, any queue */
	const char *bind_lo_text;
	int bind_perm;			/* bind-rx without CAP_NET_ADMIN */
	const char *bind_perm_text;
	int bind_tx_nodev;		/* bind-tx, ifindex of no device */
	const char *bind_tx_nodev_text;
	int bind_tx_lo;			/* bind-tx on lo, any fd, with or
					 * without CAP_NET_ADMIN
					 */
	const char *bind_tx_lo_text;
	int dump_nodev;			/* queue dump of no device */
	const char *dump_nodev_text;
};

/* Mainline, observed on 6.18 (net/core/netdev-genl.c there). */
static const struct answers mainline = {
	.kernel = "Linux 6.18 or later",
	/* netdev_nl_bind_rx_doit(): netdev_get_by_index_lock() finds no
	 * device: -ENODEV, no message
	 */
	.bind_nodev = -ENODEV,
	.bind_nodev_text = "No such device",
	/* netdev_nl_bind_rx_doit(): lo does not take the instance lock
	 * (!netdev_need_ops_lock()): -EOPNOTSUPP with only the ifindex
	 * marked bad, before the fd or the queues are looked at
	 */
	.bind_lo = -EOPNOTSUPP,
	.bind_lo_text = "Operation not supported",
	/* bind-rx is GENL_ADMIN_PERM: genetlink refuses, no message */
	.bind_perm = -EPERM,
	.bind_perm_text = "Operation not permitted",
	/* netdev_nl_bind_tx_doit(): as bind-rx, no device is -ENODEV */
	.bind_tx_nodev = -ENODEV,
	.bind_tx_nodev_text = "No such device",
	/* netdev_nl_bind_tx_doit(): lo has no netmem_tx; bind-tx needs no
	 * capability
	 */
	.bind_tx_lo = -EOPNOTSUPP,
	.bind_tx_lo_text = "Driver does not support netmem TX",
	/* netdev_nl_queue_get_dumpit(): no device: -ENODEV in the dump's
	 * NLMSG_DONE, no message
	 */
	.dump_nodev = -ENODEV,
	.dump_nodev_text = "No such device",
};

/* This project's 6.1 kernel (../../net/core/netdev-genl.c, devmem.c). */
static const struct answers ours = {
	.kernel = "this project's 6.1 kernel",
	/* netdev_nl_dev() */
	.bind_nodev = -ENODEV,
	.bind_nodev_text = "no network device with this ifindex",
	/* netdev_nl_bind_rx_one(): lo has no queue_mgmt_ops, checked before
	 * the fd or the queues
	 */
	.bind_lo = -EOPNOTSUPP,
	.bind_lo_text = "device cannot restart rx queues, which binding needs",
	/* bind-rx is GENL_ADMIN_PERM, as in mainline */
	.bind_perm = -EPERM,
	.bind_perm_text = "Operation not permitted",
	/* netdev_nl_bind_tx_one(): netdev_nl_dev() */
	.bind_tx_nodev = -ENODEV,
	.bind_tx_nodev_text = "no network device with this ifindex",
	/* netdev_nl_bind_tx_one(): lo has no netmem_tx, checked before the
	 * fd; no capability needed, as in mainline
	 */
	.bind_tx_lo = -EOPNOTSUPP,
	.bind_tx_lo_text = "Driver does not support netmem TX",
	/* netdev_nl_queue_get_dumpit() through netdev_nl_dev() */
	.dump_nodev = -ENODEV,
	.dump_nodev_text = "no network device with this ifindex",
};

/* The answers of the running kernel, or NULL with a skip printed. The
 * netdev family on a 6.1 kernel is this project's.
 */
static const struct answers *answers(void)
{
	int v = kernel_version();

	if (v >= 6018)
		return &mainline;
	if (v / 1000 == 6 && v % 1000 == 1)
		return &ours;
	t_skip("the kernel's refusals are recorded for %s and %s, not %d.%d",
	       mainline.kernel, ours.kernel, v / 1000, v % 1000);
	return NULL;
}

/* @ret is @err and the reason exactly @text. */
static int refused(int ret, int err, const char *text)
{
	CHECK_EQ(ret, err);
	if (strcmp(devmem_last_error(), text)) {
		fprintf(stderr, "reason \"%s\", not \"%s\"\n",
			devmem_last_error(), text);
		return T_FAIL;
	}
	return T_PASS;
}

static int bad_args(void)
{
	struct devmem_binding *b = NULL;
	struct devmem_page_pool *p = NULL;
	struct devmem_queue *q = NULL;
	uint32_t queue = 0;

	CHECK_EQ(devmem_binding_new_rx(NULL, 1, &queue, 1, 0), -EINVAL);
	CHECK(!strcmp(devmem_last_error(), "no place for the result"));
	CHECK_EQ(devmem_binding_new_rx(&b, 1, NULL, 1, 0), -EINVAL);
	CHECK_EQ(devmem_binding_new_rx(&b, 1, &queue, 0, 0), -EINVAL);
	CHECK(!strcmp(devmem_last_error(), "no queues to bind"));
	CHECK_EQ(devmem_binding_new_rx(&b, 0, &queue, 1, 0), -EINVAL);
	CHECK_EQ(devmem_binding_new_rx(&b, -2, &queue, 1, 0), -EINVAL);
	CHECK(!strcmp(devmem_last_error(), "ifindex -2 is not a device index"));
	CHECK_EQ(devmem_binding_new_rx(&b, 1, &queue, 1, -1), -EBADF);
	CHECK(!strcmp(devmem_last_error(), "dma-buf fd -1"));
	CHECK_EQ(devmem_binding_new_rx(&b, 1, &queue, (size_t)-1, 0), -EINVAL);
	CHECK_EQ(devmem_binding_new_tx(NULL, 1, 0), -EINVAL);
	CHECK(!strcmp(devmem_last_error(), "no place for the result"));
	CHECK_EQ(devmem_binding_new_tx(&b, 0, 0), -EINVAL);
	CHECK(!strcmp(devmem_last_error(), "ifindex 0 is not a device index"));
	CHECK_EQ(devmem_binding_new_tx(&b, 1, -1), -EBADF);
	CHECK(!strcmp(devmem_last_error(), "dma-buf fd -1"));
	CHECK(b == NULL);

	CHECK_EQ(devmem_queue_dump(NULL, 0), -EINVAL);
	CHECK_EQ(devmem_queue_dump(&q, -1), -EINVAL);
	CHECK_EQ(devmem_page_pool_dump(NULL, 0), -EINVAL);
	CHECK_EQ(devmem_page_pool_dump(&p, -1), -EINVAL);
	CHECK(devmem_last_error()[0]);
	CHECK(q == NULL && p == NULL);
	CHECK_EQ(devmem_ifindex(NULL), -EINVAL);

	devmem_binding_free(NULL);
	devmem_queue_dump_free(NULL);
	devmem_page_pool_dump_free(NULL);
	return T_PASS;
}

static int test_args(void)
{
	return without_syscalls(bad_args);
}

static int test_ifindex(void)
{
	char num[32];
	int lo = (int)if_nametoindex("lo");

	CHECK(lo > 0);
	CHECK_EQ(devmem_ifindex("lo"), lo);
	snprintf(num, sizeof(num), "%d", lo);
	CHECK_EQ(devmem_ifindex(num), lo);
	snprintf(num, sizeof(num), "%d", unused_ifindex());
	CHECK_EQ(devmem_ifindex(num), -ENODEV);
	CHECK_EQ(refused(devmem_ifindex("libdevmem-no0"), -ENODEV,
			 "no network device \"libdevmem-no0\""), T_PASS);
	CHECK_EQ(devmem_ifindex(""), -ENODEV);
	CHECK_EQ(devmem_ifindex("0"), -ENODEV);
	CHECK_EQ(devmem_ifindex("99999999999999999999999"), -ENODEV);
	CHECK_EQ(devmem_ifindex("a-name-longer-than-ifnamsiz"), -ENODEV);
	return T_PASS;
}

/* The rx-* and tx-* entries of a device in sysfs. */
static int sysfs_queues(const char *dev, const char *prefix)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", dev);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

static int test_queue_dump(void)
{
	int lo = (int)if_nametoindex("lo"), rx = 0, tx = 0, ret;
	const struct devmem_queue *r, *t;
	struct devmem_queue *q;
	ssize_t n, i;

	ret = need_netdev();
	if (!ret)
		ret = need_up("lo");
	if (ret)
		return ret;
	n = devmem_queue_dump(&q, 0);
	CHECK(n >= 2);
	CHECK_EQ(devmem_last_error()[0], 0);
	for (i = 0; i < n; i++) {
		CHECK(q[i].type == DEVMEM_QUEUE_RX ||
		      q[i].type == DEVMEM_QUEUE_TX);
		CHECK(q[i].ifindex > 0);
		if (q[i].ifindex != lo)
			continue;
		rx += q[i].type == DEVMEM_QUEUE_RX;
		tx += q[i].type == DEVMEM_QUEUE_TX;
		/* lo has no NAPI instance and cannot be bound */
		CHECK_EQ(q[i].napi_id, 0);
		CHECK_EQ(q[i].dmabuf_id, 0);
	}
	r = find_queue(q, n, lo, DEVMEM_QUEUE_RX, 0);
	t = find_queue(q, n, lo, DEVMEM_QUEUE_TX, 0);
	CHECK(r && t);
	CHECK(r < t);		/* a device's rx queues come first */
	CHECK_EQ(rx, sysfs_queues("lo", "rx-"));
	CHECK_EQ(tx, sysfs_queues("lo", "tx-"));
	devmem_queue_dump_free(q);
	return T_PASS;
}

static int test_queue_dump_filtered(void)
{
	int lo = (int)if_nametoindex("lo"), ret;
	struct devmem_queue *all, *q;
	ssize_t n, nall, i, j;

	ret = need_netdev();
	if (!ret)
		ret = need_up("lo");
	if (ret)
		return ret;
	nall = devmem_queue_dump(&all, 0);
	n = devmem_queue_dump(&q, lo);
	CHECK(nall > 0 && n >= 2);
	/* exactly lo's part of the whole dump, in its order */
	for (i = 0, j = 0; i < nall; i++) {
		if (all[i].ifindex != lo)
			continue;
		CHECK(j < n);
		CHECK(!memcmp(&all[i], &q[j], sizeof(*q)));
		j++;
	}
	CHECK_EQ(j, n);
	devmem_queue_dump_free(all);
	devmem_queue_dump_free(q);
	return T_PASS;
}

static int test_queue_dump_nodev(void)
{
	struct devmem_queue *q = NULL;
	const struct answers *a;
	int ret;

	ret = need_netdev();
	if (ret)
		return ret;
	a = answers();
	if (!a)
		return T_SKIP;
	CHECK_EQ(refused(devmem_queue_dump(&q, unused_ifindex()),
			 a->dump_nodev, a->dump_nodev_text), T_PASS);
	CHECK(q == NULL);
	return T_PASS;
}

static int test_page_pool_dump(void)
{
	int lo = (int)if_nametoindex("lo"), ret;
	struct devmem_page_pool *p, *pl;
	ssize_t n, nlo, i;

	ret = need_netdev();
	if (ret)
		return ret;
	/* Often empty; it must work all the same. */
	n = devmem_page_pool_dump(&p, 0);
	CHECK(n >= 0);
	CHECK(n > 0 || p == NULL);
	for (i = 0; i < n; i++) {
		CHECK(p[i].id > 0);
		CHECK(!(p[i].has & ~0xfU));
		CHECK(!!(p[i].has & DEVMEM_PAGE_POOL_IFINDEX) ==
		      (p[i].ifindex > 0));
		CHECK(!!(p[i].has & DEVMEM_PAGE_POOL_DMABUF) ==
		      (p[i].dmabuf_id > 0));
		if (!(p[i].has & DEVMEM_PAGE_POOL_NAPI_ID))
			CHECK_EQ(p[i].napi_id, 0);
		if (!(p[i].has & DEVMEM_PAGE_POOL_DETACH_TIME))
			CHECK_EQ(p[i].detach_time, 0);
	}
	printf("%zd page pools\n", n);
	devmem_page_pool_dump_free(p);

	nlo = devmem_page_pool_dump(&pl, lo);
	CHECK(nlo >= 0);
	for (i = 0; i < nlo; i++)
		CHECK_EQ(pl[i].ifindex, lo);
	devmem_page_pool_dump_free(pl);
	CHECK_EQ(devmem_page_pool_dump(&pl, unused_ifindex()), 0);
	CHECK(pl == NULL);
	return T_PASS;
}

/* 0 when bind-rx can be tried here, else T_SKIP (with the reason). */
static int need_bind(const struct answers **a)
{
	int ret;

	ret = need_netdev();
	if (ret)
		return ret;
	if (!have_net_admin())
		return t_skip("bind-rx needs CAP_NET_ADMIN");
	*a = answers();
	return *a ? 0 : T_SKIP;
}

static int test_bind_refused(void)
{
	int lo = (int)if_nametoindex("lo"), null, mem, fds, ret;
	struct devmem_binding *b = NULL;
	uint32_t queue = 0, bad_queue = 4096;
	const struct answers *a;

	ret = need_bind(&a);
	if (ret)
		return ret;
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	mem = memfd_create("libdevmem-test", MFD_CLOEXEC);
	CHECK(null >= 0 && mem >= 0);
	CHECK_EQ(ftruncate(mem, 1 << 20), 0);
	fds = open_fds();

	/* (a) no such device */
	CHECK_EQ(refused(devmem_binding_new_rx(&b, unused_ifindex(), &queue, 1, null),
			 a->bind_nodev, a->bind_nodev_text), T_PASS);
	/* (b) lo, and an fd that is not a dma-buf */
	CHECK_EQ(refused(devmem_binding_new_rx(&b, lo, &queue, 1, null),
			 a->bind_lo, a->bind_lo_text), T_PASS);
	/* (c) lo, and a queue it does not have */
	CHECK_EQ(refused(devmem_binding_new_rx(&b, lo, &bad_queue, 1, mem),
			 a->bind_lo, a->bind_lo_text), T_PASS);
	/* bind-tx: no such device; lo, which cannot send device memory */
	CHECK_EQ(refused(devmem_binding_new_tx(&b, unused_ifindex(), null),
			 a->bind_tx_nodev, a->bind_tx_nodev_text), T_PASS);
	CHECK_EQ(refused(devmem_binding_new_tx(&b, lo, mem),
			 a->bind_tx_lo, a->bind_tx_lo_text), T_PASS);
	CHECK(b == NULL);
	/* every refusal closed its socket */
	CHECK_EQ(open_fds(), fds);
	close(mem);
	close(null);
	return T_PASS;
}

static int bind_unprivileged(void)
{
	const struct answers *a = answers();
	struct devmem_binding *b = NULL;
	uint32_t queue = 0;

	CHECK(a);
	CHECK_EQ(drop_net_admin(), 0);
	CHECK(!have_net_admin());
	CHECK_EQ(refused(devmem_binding_new_rx(&b, (int)if_nametoindex("lo"), &queue,
					1, 0),
			 a->bind_perm, a->bind_perm_text), T_PASS);
	/* bind-tx is not GENL_ADMIN_PERM: the device's answer */
	CHECK_EQ(refused(devmem_binding_new_tx(&b, (int)if_nametoindex("lo"), 0),
			 a->bind_tx_lo, a->bind_tx_lo_text), T_PASS);
	CHECK(b == NULL);
	return T_PASS;
}

static int test_bind_unprivileged(void)
{
	const struct answers *a;
	int status, ret;
	pid_t pid;

	ret = need_bind(&a);
	if (ret)
		return ret;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid)
		_exit(bind_unprivileged());
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static const struct t_case cases[] = {
	{ "args", test_args },
	{ "ifindex", test_ifindex },
	{ "queue-dump", test_queue_dump },
	{ "queue-dump-filtered", test_queue_dump_filtered },
	{ "queue-dump-nodev", test_queue_dump_nodev },
	{ "page-pool-dump", test_page_pool_dump },
	{ "bind-refused", test_bind_refused },
	{ "bind-unprivileged", test_bind_unprivileged },
};

int main(void)
{
	return T_RUN(cases);
}
