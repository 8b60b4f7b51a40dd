// SPDX-License-Identifier: GPL-2.0
/*
 * bind-vm IFNAME QUEUE: a whole binding's life through the library, on a
 * device that takes device memory (netdevsim with header split on, in
 * the test VM: selftests/libdevmem.bats). Binds a 4 MiB udmabuf to rx
 * queue QUEUE, checks that the queue dump shows the binding on that
 * queue alone and that one page pool of the device draws from it, binds
 * the same queue again (refused: the kernel's errno and extack text are
 * printed for the suite to check), frees the binding and checks that the
 * queue is unbound at once and that the pool goes (the kernel may free
 * it a little later: polled for up to 5 s).
 *
 * Prints one line per step, NAME=VALUE fields:
 *   bound id=ID ifindex=IFINDEX queue=QUEUE
 *   queue id=QUEUE type=rx ifindex=IFINDEX napi-id=N dmabuf=ID
 *   others-bound=0
 *   pool ifindex=IFINDEX napi-id=N inflight=N inflight-mem=N dmabuf=ID
 *   pools=1
 *   rebind errno=E reason=TEXT
 *   still-bound dmabuf=ID
 *   unbound dmabuf=0
 *   pools-left=0
 * Exits 0 when every check held, 1 when one failed, 77 when the kernel
 * has no netdev family or no udmabuf, 2 on bad arguments.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "netdev.h"

#define BUF_SIZE	(4U << 20)

/* Fail the program with what went wrong. */
#define REQUIRE(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "bind-vm: " __VA_ARGS__);	\
			fputc('\n', stderr);				\
			return T_FAIL;					\
		}							\
	} while (0)

/* The rx queue @queue of @ifindex in a fresh dump; -errno, 0 when the
 * dump lacks it, or 1 with it in *@out and, in *@others, how many other
 * rx queues of the device are bound.
 */
static int rx_queue(int ifindex, uint32_t queue, struct devmem_queue *out,
		    int *others)
{
	const struct devmem_queue *q;
	struct devmem_queue *all;
	ssize_t n, i;

	n = devmem_queue_dump(&all, ifindex);
	if (n < 0)
		return (int)n;
	q = find_queue(all, n, ifindex, DEVMEM_QUEUE_RX, queue);
	if (q)
		*out = *q;
	*others = 0;
	for (i = 0; i < n; i++)
		*others += all[i].type == DEVMEM_QUEUE_RX &&
			   all[i].id != queue && all[i].dmabuf_id;
	devmem_queue_dump_free(all);
	return q != NULL;
}

/* The page pools of @ifindex drawing from binding @id: how many, the
 * first in *@first; or -errno.
 */
static int pools_of(int ifindex, uint32_t id, struct devmem_page_pool *first)
{
	struct devmem_page_pool *p;
	ssize_t n, i;
	int found = 0;

	n = devmem_page_pool_dump(&p, ifindex);
	if (n < 0)
		return (int)n;
	for (i = 0; i < n; i++) {
		if (!(p[i].has & DEVMEM_PAGE_POOL_DMABUF) ||
		    p[i].dmabuf_id != id)
			continue;
		if (!found++ && first)
			*first = p[i];
	}
	devmem_page_pool_dump_free(p);
	return found;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int run(int ifindex, uint32_t queue)
{
	struct devmem_binding *b, *again = NULL;
	struct devmem_page_pool pool;
	struct devmem_dmabuf *db;
	struct devmem_queue q;
	int ret, others, i;
	uint32_t id;

	ret = need_netdev();
	if (ret)
		return ret;
	ret = devmem_dmabuf_new_udmabuf(&db, BUF_SIZE);
	if (ret == -ENOENT)
		return t_skip("%s", devmem_last_error());
	REQUIRE(!ret, "udmabuf: %s", devmem_last_error());

	ret = devmem_binding_new_rx(&b, ifindex, &queue, 1, devmem_dmabuf_fd(db));
	REQUIRE(!ret, "bind-rx: %s: %s", strerror(-ret), devmem_last_error());
	id = devmem_binding_id(b);
	printf("bound id=%u ifindex=%d queue=%u\n", id,
	       devmem_binding_ifindex(b), queue);
	REQUIRE(id > 0, "binding id 0");
	REQUIRE(devmem_binding_ifindex(b) == ifindex, "binding's ifindex");

	ret = rx_queue(ifindex, queue, &q, &others);
	REQUIRE(ret == 1, "no rx queue %u in the dump (%d: %s)", queue, ret,
		devmem_last_error());
	printf("queue id=%u type=rx ifindex=%d napi-id=%u dmabuf=%u\n", q.id,
	       q.ifindex, q.napi_id, q.dmabuf_id);
	printf("others-bound=%d\n", others);
	REQUIRE(q.dmabuf_id == id, "queue %u shows binding %u, not %u", queue,
		q.dmabuf_id, id);
	REQUIRE(!others, "%d other rx queues bound", others);

	ret = pools_of(ifindex, id, &pool);
	REQUIRE(ret >= 0, "page-pool dump: %s", devmem_last_error());
	if (ret)
		printf("pool ifindex=%d napi-id=%u inflight=%llu inflight-mem=%llu dmabuf=%u\n",
		       pool.ifindex, pool.napi_id,
		       (unsigned long long)pool.inflight,
		       (unsigned long long)pool.inflight_mem, pool.dmabuf_id);
	printf("pools=%d\n", ret);
	REQUIRE(ret == 1, "%d page pools draw from binding %u", ret, id);
	REQUIRE(pool.has & DEVMEM_PAGE_POOL_IFINDEX, "pool without ifindex");
	REQUIRE(!(pool.has & DEVMEM_PAGE_POOL_DETACH_TIME), "pool detached");

	/* The same queue again: refused, the first binding untouched. */
	ret = devmem_binding_new_rx(&again, ifindex, &queue, 1, devmem_dmabuf_fd(db));
	printf("rebind errno=%d reason=%s\n", -ret, devmem_last_error());
	REQUIRE(ret < 0 && !again, "a second binding of queue %u", queue);
	ret = rx_queue(ifindex, queue, &q, &others);
	REQUIRE(ret == 1, "queue dump: %s", devmem_last_error());
	printf("still-bound dmabuf=%u\n", q.dmabuf_id);
	REQUIRE(q.dmabuf_id == id && !others,
		"the refused bind changed queues");

	/* Closing the socket unbinds, before close() returns. */
	devmem_binding_free(b);
	ret = rx_queue(ifindex, queue, &q, &others);
	REQUIRE(ret == 1, "queue dump: %s", devmem_last_error());
	printf("unbound dmabuf=%u\n", q.dmabuf_id);
	REQUIRE(!q.dmabuf_id && !others, "still bound after the free");

	/* The old pool may go a little later. */
	for (i = 0; i < 100; i++) {
		ret = pools_of(ifindex, id, NULL);
		if (ret <= 0)
			break;
		nap_ms(50);
	}
	printf("pools-left=%d\n", ret);
	REQUIRE(!ret, "%d page pools of binding %u left after 5 s", ret, id);

	devmem_dmabuf_free(db);
	return T_PASS;
}

int main(int argc, char **argv)
{
	unsigned long queue;
	int ifindex;
	char *end;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3) {
		fprintf(stderr, "usage: bind-vm IFNAME QUEUE\n");
		return 2;
	}
	ifindex = devmem_ifindex(argv[1]);
	queue = strtoul(argv[2], &end, 10);
	if (ifindex < 0 || *end || end == argv[2] || queue > UINT32_MAX) {
		fprintf(stderr, "bind-vm: %s\n",
			ifindex < 0 ? devmem_last_error() : "bad queue");
		return 2;
	}
	return run(ifindex, (uint32_t)queue);
}
