// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Bindings of a dma-buf to rx queues (netdev bind-rx) or to a device for
 * sending (bind-tx): one request and reply, the same but for the queues.
 * The kernel ties a binding to the netlink socket whose request made it
 * and unbinds when that socket closes, so each binding object owns a
 * socket of its own: freeing the object is the unbind, and a process that
 * dies unbinds too.
 */
#include "netlink.h"
#include "dmabuf.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct devmem_binding {
	struct devmem_nl nl;
	uint32_t id;
	int ifindex;
	int tx;			/* bind-tx made it */
	size_t buffer_size;	/* of each net_iov: rx page size, or a page */
	size_t buffers;		/* the kernel's net_iovs */
};

/* Attribute bytes of one queue: a nest holding its id and type. */
#define DEVMEM_BIND_QUEUE_SIZE	(NLA_HDRLEN + 2 * NLA_ALIGN(NLA_HDRLEN + 4))

static int devmem_bind_reply(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[NETDEV_A_DMABUF_MAX + 1];
	struct devmem_binding *b = arg;
	int err;

	err = devmem_nl_parse(msg, tb, NETDEV_A_DMABUF_MAX);
	if (err)
		return err;
	return devmem_nl_u32(tb[NETDEV_A_DMABUF_ID], "binding id", &b->id);
}

static int devmem_bind_put_queues(struct nl_msg *req, const uint32_t *queues,
				  size_t nr)
{
	struct nlattr *nest;
	size_t i;

	for (i = 0; i < nr; i++) {
		nest = nla_nest_start(req,
				      NETDEV_A_DMABUF_QUEUES | NLA_F_NESTED);
		if (!nest ||
		    nla_put_u32(req, NETDEV_A_QUEUE_ID, queues[i]) ||
		    nla_put_u32(req, NETDEV_A_QUEUE_TYPE, NETDEV_QUEUE_TYPE_RX))
			return -ENOMEM;
		nla_nest_end(req, nest);
	}
	return 0;
}

/* The kernel's refusal of bind-rx with header split off (mainline's). */
#define DEVMEM_HDS_OFF	"header split (tcp-data-split) is off on the device"

/*
 * bind-rx refused with @err: the kernel's reason says what is wrong; for
 * header split off, the reason also says how to turn it on.
 */
static int devmem_bind_rx_refused(int err, int ifindex)
{
	char why[128], name[IF_NAMESIZE];

	if (err != -EINVAL ||
	    strncmp(devmem_last_error(), DEVMEM_HDS_OFF, strlen(DEVMEM_HDS_OFF)))
		return err;
	snprintf(why, sizeof(why), "%s", devmem_last_error());
	if (!if_indextoname((unsigned int)ifindex, name))
		snprintf(name, sizeof(name), "IFNAME");
	return devmem_fail(err,
			   "%s: turn it on first (devmem_nic_setup() or devmem_nic_header_split(); \"devmemctl setup\"; \"ethtool -G %s tcp-data-split on\")",
			   why, name);
}

static size_t devmem_page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (size_t)page : 4096;
}

/*
 * The request and reply of bind-rx and bind-tx: @cmd with the device,
 * the fd and, for rx, the queues and the rx page size (0: none), on a
 * socket of the binding's own. The arguments have been checked.
 */
static int devmem_binding_new(struct devmem_binding **bp, uint8_t cmd,
			      int ifindex, const uint32_t *queues,
			      size_t nr_queues, int dmabuf_fd,
			      uint32_t rx_page_size)
{
	const char *what = cmd == NETDEV_CMD_BIND_TX ? "bind-tx" : "bind-rx";
	struct devmem_binding *b;
	struct nl_msg *req;
	size_t size;
	int err;

	b = calloc(1, sizeof(*b));
	if (!b)
		return devmem_fail(-ENOMEM, "out of memory");
	b->tx = cmd == NETDEV_CMD_BIND_TX;
	err = devmem_nl_open(&b->nl);
	if (err)
		goto err_free;

	req = devmem_nl_request(&b->nl, cmd, 0,
				3 * nla_total_size(4) +
				nr_queues * DEVMEM_BIND_QUEUE_SIZE);
	if (!req) {
		err = devmem_fail(-ENOMEM, "out of memory");
		goto err_close;
	}
	if (nla_put_u32(req, NETDEV_A_DMABUF_IFINDEX, (uint32_t)ifindex) ||
	    nla_put_u32(req, NETDEV_A_DMABUF_FD, (uint32_t)dmabuf_fd) ||
	    devmem_bind_put_queues(req, queues, nr_queues) ||
	    (rx_page_size &&
	     nla_put_u32(req, NETDEV_A_DMABUF_RX_PAGE_SIZE, rx_page_size))) {
		err = devmem_fail(-ENOMEM, "%s request does not fit", what);
		goto err_free_req;
	}
	err = devmem_nl_transact(&b->nl, req, devmem_bind_reply, b);
	if (err && !b->tx)
		err = devmem_bind_rx_refused(err, ifindex);
	if (err)
		goto err_close;
	if (!b->id) {
		/* Whatever the kernel bound goes with the socket. */
		err = devmem_fail(-EPROTO,
				  "the kernel's %s reply has no binding id",
				  what);
		goto err_close;
	}
	/* Only now: a fd the kernel refused gets the kernel's answer. */
	err = devmem_fd_size(dmabuf_fd, &size);
	if (err)
		goto err_close;
	b->buffer_size = rx_page_size ? rx_page_size : devmem_page_size();
	b->buffers = size / b->buffer_size;
	if (!b->tx) {
		err = devmem_held_register(b->id, b->buffers, b->buffer_size);
		if (err) {
			err = devmem_fail(err, "out of memory");
			goto err_close;
		}
	}

	b->ifindex = ifindex;
	*bp = b;
	return 0;

err_free_req:
	nlmsg_free(req);
err_close:
	devmem_nl_close(&b->nl);
err_free:
	free(b);
	return err;
}

/*
 * The argument checks, before any system call: @queues only for rx
 * (NULL for tx).
 */
static int devmem_binding_check(struct devmem_binding **bp, int ifindex,
				const uint32_t *queues, size_t nr_queues,
				int dmabuf_fd, int tx)
{
	if (!bp)
		return devmem_fail(-EINVAL, "no place for the result");
	if (ifindex <= 0)
		return devmem_fail(-EINVAL, "ifindex %d is not a device index",
				   ifindex);
	if (!tx && (!queues || !nr_queues))
		return devmem_fail(-EINVAL, "no queues to bind");
	if (nr_queues > INT_MAX / DEVMEM_BIND_QUEUE_SIZE)
		return devmem_fail(-EINVAL, "%zu queues are too many",
				   nr_queues);
	if (dmabuf_fd < 0)
		return devmem_fail(-EBADF, "dma-buf fd %d", dmabuf_fd);
	return 0;
}

/*
 * Each bound queue's rx ring fills from the binding: a binding with fewer
 * buffers than the rings of its @nr_queues queues have entries can be
 * emptied by the rings alone, leaving none for what sockets hold, and the
 * flow stops with no error anywhere. Such a dma-buf (@dmabuf_fd, cut in
 * buffers of @rx_page_size or pages) is refused with -ENOBUFS. A device
 * that does not report its rings, or a fd whose size cannot be read (the
 * kernel's to refuse), is not checked.
 */
static int devmem_binding_ring_check(int ifindex, size_t nr_queues,
				     int dmabuf_fd, uint32_t rx_page_size)
{
	size_t size, bufsize, buffers;
	uint32_t entries;
	uint64_t ring;

	if (devmem_nic_rx_ring(ifindex, &entries) ||
	    devmem_fd_size(dmabuf_fd, &size)) {
		devmem_error_clear();
		return 0;
	}
	ring = (uint64_t)entries * nr_queues;
	bufsize = rx_page_size ? rx_page_size : devmem_page_size();
	buffers = size / bufsize;
	if (buffers >= ring)
		return 0;
	return devmem_fail(-ENOBUFS,
			   "the dma-buf makes %zu buffer%s of %zu bytes, fewer than the %" PRIu64 " its rx rings take (%zu queue%s of %u entries): the rings can hold every buffer and leave none for what sockets hold, so the flow stops; give at least %" PRIu64 " bytes, or DEVMEM_BIND_UNDERSIZED",
			   buffers, buffers == 1 ? "" : "s", bufsize, ring,
			   nr_queues, nr_queues == 1 ? "" : "s", entries,
			   ring * bufsize);
}

DEVMEM_EXPORT int devmem_binding_new_rx_flags(struct devmem_binding **bp,
					      int ifindex,
					      const uint32_t *queues,
					      size_t nr_queues, int dmabuf_fd,
					      uint32_t rx_page_size,
					      unsigned int flags)
{
	int err;

	devmem_error_clear();
	if (flags & ~DEVMEM_BIND_UNDERSIZED)
		return devmem_fail(-EINVAL, "unknown flags 0x%x",
				   flags & ~DEVMEM_BIND_UNDERSIZED);
	err = devmem_binding_check(bp, ifindex, queues, nr_queues, dmabuf_fd,
				   0);
	if (err)
		return err;
	if (!(flags & DEVMEM_BIND_UNDERSIZED)) {
		err = devmem_binding_ring_check(ifindex, nr_queues, dmabuf_fd,
						rx_page_size);
		if (err)
			return err;
	}
	/* The kernel judges the size: its errno and reason are the ABI's. */
	return devmem_binding_new(bp, NETDEV_CMD_BIND_RX, ifindex, queues,
				  nr_queues, dmabuf_fd, rx_page_size);
}

DEVMEM_EXPORT int devmem_binding_new_rx_sized(struct devmem_binding **bp,
					      int ifindex,
					      const uint32_t *queues,
					      size_t nr_queues, int dmabuf_fd,
					      uint32_t rx_page_size)
{
	return devmem_binding_new_rx_flags(bp, ifindex, queues, nr_queues,
					   dmabuf_fd, rx_page_size,
					   DEVMEM_BIND_UNDERSIZED);
}

DEVMEM_EXPORT int devmem_binding_new_rx(struct devmem_binding **bp, int ifindex,
				 const uint32_t *queues, size_t nr_queues,
				 int dmabuf_fd)
{
	return devmem_binding_new_rx_sized(bp, ifindex, queues, nr_queues,
					   dmabuf_fd, 0);
}

DEVMEM_EXPORT int devmem_binding_new_tx(struct devmem_binding **bp, int ifindex,
					int dmabuf_fd)
{
	int err;

	devmem_error_clear();
	err = devmem_binding_check(bp, ifindex, NULL, 0, dmabuf_fd, 1);
	if (err)
		return err;
	return devmem_binding_new(bp, NETDEV_CMD_BIND_TX, ifindex, NULL, 0,
				  dmabuf_fd, 0);
}

DEVMEM_EXPORT void devmem_binding_free(struct devmem_binding *b)
{
	if (!b)
		return;
	if (!b->tx && b->nl.sk)
		devmem_held_unregister(b->id);
	devmem_nl_close(&b->nl);
	free(b);
}

DEVMEM_EXPORT uint64_t devmem_binding_held(const struct devmem_binding *b,
					   uint64_t *tokens)
{
	return devmem_held_get(b->id, tokens);
}

DEVMEM_EXPORT uint32_t devmem_binding_id(const struct devmem_binding *b)
{
	return b->id;
}

DEVMEM_EXPORT int devmem_binding_ifindex(const struct devmem_binding *b)
{
	return b->ifindex;
}

int devmem_binding_is_tx(const struct devmem_binding *b)
{
	return b->tx;
}

int devmem_binding_new_unbound(struct devmem_binding **bp, uint32_t id,
			       int tx)
{
	struct devmem_binding *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->id = id;
	b->tx = tx;
	*bp = b;
	return 0;
}

void devmem_binding_set_buffers(struct devmem_binding *b, size_t buffers,
				size_t size)
{
	b->buffers = buffers;
	b->buffer_size = size;
}

DEVMEM_EXPORT size_t devmem_binding_buffers(const struct devmem_binding *b)
{
	return b->buffers;
}

DEVMEM_EXPORT size_t devmem_binding_buffer_size(const struct devmem_binding *b)
{
	return b->buffer_size;
}
