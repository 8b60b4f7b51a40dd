// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * What the netdev family shows: dumps of queue-get and page-pool-get
 * into plain arrays the caller owns. Each dump uses a socket of its own,
 * closed before returning, so nothing is shared between calls or threads.
 * The kernel filters queues by device itself; page pools it dumps whole,
 * so they are filtered here.
 */
#include "netlink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A growing array of @size-byte items. */
struct devmem_array {
	void *items;
	size_t nr, cap, size;
};

static int devmem_array_push(struct devmem_array *a, const void *item)
{
	size_t cap;
	void *items;

	if (a->nr == a->cap) {
		cap = a->cap ? 2 * a->cap : 16;
		items = realloc(a->items, cap * a->size);
		if (!items)
			return devmem_fail(-ENOMEM, "out of memory");
		a->items = items;
		a->cap = cap;
	}
	memcpy((char *)a->items + a->nr * a->size, item, a->size);
	a->nr++;
	return 0;
}

/* Dump @cmd (filtered by @ifindex, as attribute @attr, when both are
 * set), passing each reply to @fn with @arg, which collects into @a.
 */
static ssize_t devmem_dump(uint8_t cmd, int attr, int ifindex,
			   devmem_nl_reply_fn fn, void *arg,
			   struct devmem_array *a)
{
	struct devmem_nl nl;
	struct nl_msg *req;
	int err;

	err = devmem_nl_open(&nl);
	if (err)
		return err;
	req = devmem_nl_request(&nl, cmd, 1, nla_total_size(4));
	if (!req) {
		err = devmem_fail(-ENOMEM, "out of memory");
		goto err_close;
	}
	if (attr && ifindex && nla_put_u32(req, attr, (uint32_t)ifindex)) {
		nlmsg_free(req);
		err = devmem_fail(-ENOMEM, "out of memory");
		goto err_close;
	}
	err = devmem_nl_transact(&nl, req, fn, arg);
	if (err)
		goto err_free_items;
	devmem_nl_close(&nl);
	return (ssize_t)a->nr;

err_free_items:
	free(a->items);
	a->items = NULL;
err_close:
	devmem_nl_close(&nl);
	return err;
}

static int devmem_queue_reply(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[NETDEV_A_QUEUE_MAX + 1];
	struct devmem_queue q = { 0 };
	uint32_t type, ifindex;
	int err;

	err = devmem_nl_parse(msg, tb, NETDEV_A_QUEUE_MAX);
	if (err)
		return err;
	if (devmem_nl_u32(tb[NETDEV_A_QUEUE_ID], "queue id", &q.id) ||
	    devmem_nl_u32(tb[NETDEV_A_QUEUE_TYPE], "queue type", &type) ||
	    devmem_nl_u32(tb[NETDEV_A_QUEUE_IFINDEX], "queue's ifindex",
			  &ifindex))
		return -EPROTO;
	if (tb[NETDEV_A_QUEUE_NAPI_ID] &&
	    devmem_nl_u32(tb[NETDEV_A_QUEUE_NAPI_ID], "queue's napi id",
			  &q.napi_id))
		return -EPROTO;
	if (tb[NETDEV_A_QUEUE_DMABUF] &&
	    devmem_nl_u32(tb[NETDEV_A_QUEUE_DMABUF], "queue's dmabuf id",
			  &q.dmabuf_id))
		return -EPROTO;
	q.type = (enum devmem_queue_type)type;
	q.ifindex = (int)ifindex;
	return devmem_array_push(arg, &q);
}

DEVMEM_EXPORT ssize_t devmem_queue_dump(struct devmem_queue **qp, int ifindex)
{
	struct devmem_array a = { .size = sizeof(struct devmem_queue) };
	ssize_t n;

	devmem_error_clear();
	if (!qp)
		return devmem_fail(-EINVAL, "no place for the result");
	if (ifindex < 0)
		return devmem_fail(-EINVAL, "ifindex %d is not a device index",
				   ifindex);
	n = devmem_dump(NETDEV_CMD_QUEUE_GET, NETDEV_A_QUEUE_IFINDEX, ifindex,
			devmem_queue_reply, &a, &a);
	if (n >= 0)
		*qp = a.items;
	return n;
}

DEVMEM_EXPORT void devmem_queue_dump_free(struct devmem_queue *q)
{
	free(q);
}

/* A page-pool dump: the pools so far, and the device it keeps (0: all). */
struct devmem_pool_dump {
	struct devmem_array a;
	int ifindex;
};

/* An optional attribute: 0 when absent, else its value and @bit in *@has. */
static int devmem_pool_u32(const struct nlattr *attr, const char *what,
			   uint32_t bit, uint32_t *has, uint32_t *v)
{
	if (!attr)
		return 0;
	*has |= bit;
	return devmem_nl_u32(attr, what, v);
}

static int devmem_page_pool_reply(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[NETDEV_A_PAGE_POOL_MAX + 1];
	struct devmem_pool_dump *d = arg;
	struct devmem_page_pool p = { 0 };
	uint32_t ifindex = 0;
	int err;

	err = devmem_nl_parse(msg, tb, NETDEV_A_PAGE_POOL_MAX);
	if (err)
		return err;
	if (devmem_nl_uint(tb[NETDEV_A_PAGE_POOL_ID], "page pool id", &p.id) ||
	    devmem_pool_u32(tb[NETDEV_A_PAGE_POOL_IFINDEX], "pool's ifindex",
			    DEVMEM_PAGE_POOL_IFINDEX, &p.has, &ifindex) ||
	    devmem_pool_u32(tb[NETDEV_A_PAGE_POOL_NAPI_ID], "pool's napi id",
			    DEVMEM_PAGE_POOL_NAPI_ID, &p.has, &p.napi_id) ||
	    devmem_pool_u32(tb[NETDEV_A_PAGE_POOL_DMABUF], "pool's dmabuf id",
			    DEVMEM_PAGE_POOL_DMABUF, &p.has, &p.dmabuf_id))
		return -EPROTO;
	if ((tb[NETDEV_A_PAGE_POOL_INFLIGHT] &&
	     devmem_nl_uint(tb[NETDEV_A_PAGE_POOL_INFLIGHT], "pool's inflight",
			    &p.inflight)) ||
	    (tb[NETDEV_A_PAGE_POOL_INFLIGHT_MEM] &&
	     devmem_nl_uint(tb[NETDEV_A_PAGE_POOL_INFLIGHT_MEM],
			    "pool's inflight-mem", &p.inflight_mem)))
		return -EPROTO;
	if (tb[NETDEV_A_PAGE_POOL_DETACH_TIME]) {
		if (devmem_nl_uint(tb[NETDEV_A_PAGE_POOL_DETACH_TIME],
				   "pool's detach time", &p.detach_time))
			return -EPROTO;
		p.has |= DEVMEM_PAGE_POOL_DETACH_TIME;
	}
	p.ifindex = (int)ifindex;
	if (d->ifindex && (!(p.has & DEVMEM_PAGE_POOL_IFINDEX) ||
			   p.ifindex != d->ifindex))
		return 0;
	return devmem_array_push(&d->a, &p);
}

DEVMEM_EXPORT ssize_t devmem_page_pool_dump(struct devmem_page_pool **pp,
					    int ifindex)
{
	struct devmem_pool_dump d = {
		.a.size = sizeof(struct devmem_page_pool),
		.ifindex = ifindex,
	};
	ssize_t n;

	devmem_error_clear();
	if (!pp)
		return devmem_fail(-EINVAL, "no place for the result");
	if (ifindex < 0)
		return devmem_fail(-EINVAL, "ifindex %d is not a device index",
				   ifindex);
	n = devmem_dump(NETDEV_CMD_PAGE_POOL_GET, 0, 0, devmem_page_pool_reply,
			&d, &d.a);
	if (n >= 0)
		*pp = d.a.items;
	return n;
}

DEVMEM_EXPORT void devmem_page_pool_dump_free(struct devmem_page_pool *p)
{
	free(p);
}
