// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Connections. listen() opens two listening sockets on the device's
 * address: one for the control socket and one for the data sockets, whose
 * port alone is steered to the bound queues (the control socket's bytes
 * must land in host memory). connect() connects the control socket and
 * NCCL_DEVMEM_NSOCKS data sockets and names the data sockets' source
 * ports in its hello; accept() takes a data connection only from the
 * control socket's peer address and one of those ports, so nobody else
 * on the host can slip a socket into a comm.
 */
#include "plugin.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A message's part per data socket: contiguous, at least 64 KiB each and
 * cut on 4 KiB, so both ends compute the same cut from the size alone.
 */
void ndm_split(struct ndm_request *r, uint64_t size, int nsocks)
{
	uint64_t chunk = (size + (uint64_t)nsocks - 1) / (uint64_t)nsocks;
	uint64_t off = 0;
	int i;

	if (chunk < (64 << 10))
		chunk = 64 << 10;
	chunk = (chunk + 4095) & ~4095ULL;
	memset(r->parts, 0, sizeof(r->parts));
	for (i = 0; i < nsocks && (off < size || i == 0); i++) {
		r->parts[i].off = off;
		r->parts[i].len = size - off < chunk ? size - off : chunk;
		off += r->parts[i].len;
	}
	r->nparts = i;
}

static socklen_t ndm_addr_len(const union ndm_addr *a)
{
	return a->sa.sa_family == AF_INET ? sizeof(a->in) : sizeof(a->in6);
}

static uint16_t ndm_addr_port(const union ndm_addr *a)
{
	return ntohs(a->sa.sa_family == AF_INET ? a->in.sin_port :
		     a->in6.sin6_port);
}

static bool ndm_same_host(const union ndm_addr *a, const union ndm_addr *b)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return false;
	if (a->sa.sa_family == AF_INET)
		return a->in.sin_addr.s_addr == b->in.sin_addr.s_addr;
	return !memcmp(&a->in6.sin6_addr, &b->in6.sin6_addr,
		       sizeof(a->in6.sin6_addr));
}

static int ndm_socket(void)
{
	int fd = socket(ndm.addr.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int ndm_listen_socket(union ndm_addr *bound)
{
	socklen_t len = sizeof(*bound);
	int fd = ndm_socket();

	if (fd < 0)
		return -1;
	*bound = ndm.addr;
	if (bind(fd, &bound->sa, ndm_addr_len(bound)) ||
	    listen(fd, 64) || getsockname(fd, &bound->sa, &len) ||
	    fcntl(fd, F_SETFL, O_NONBLOCK)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void ndm_flow_of(struct devmem_flow *f, uint16_t port)
{
	memset(f, 0, sizeof(*f));
	f->size = sizeof(*f);
	f->family = ndm.addr.sa.sa_family;
	if (f->family == AF_INET)
		memcpy(f->dst, &ndm.addr.in.sin_addr, 4);
	else
		memcpy(f->dst, &ndm.addr.in6.sin6_addr, 16);
	f->dst_port = port;
}

ncclResult_t ndm_listen(int dev, void *handle, void **listen_comm)
{
	struct ndm_listen *l;
	struct devmem_flow f;
	ncclResult_t res;
	int i;

	(void)dev;
	*listen_comm = NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return ncclSystemError;
	l->ctl = -1;
	for (i = 0; i < NDM_MAX_SOCKS; i++)
		l->fds[i] = -1;
	for (i = 0; i < NDM_MAX_PENDING; i++)
		l->pend[i].fd = -1;
	l->ctl_lfd = ndm_listen_socket(&l->handle.ctl);
	l->data_lfd = ndm_listen_socket(&l->handle.data);
	if (l->ctl_lfd < 0 || l->data_lfd < 0) {
		NDM_WARN("listen on %s: %s", ndm.cfg.ifname, strerror(errno));
		res = ncclSystemError;
		goto err;
	}
	pthread_mutex_lock(&ndm.lock);
	res = ndm_rx_setup();
	l->id = ((uint64_t)getpid() << 32) | ++ndm.next_id;
	if (res == ncclSuccess && ndm.rx.ok) {
		l->queue = ndm.rx.next_queue;
		if (++ndm.rx.next_queue > ndm.cfg.queue_last)
			ndm.rx.next_queue = ndm.cfg.queue_first;
		ndm_flow_of(&f, ndm_addr_port(&l->handle.data));
		if (devmem_nic_flow_add(ndm.rx.nic, &f, l->queue, &l->rule_loc)) {
			NDM_WARN("steering port %u to queue %u of %s: %s",
				 f.dst_port, l->queue, ndm.cfg.ifname,
				 devmem_last_error());
			if (ndm.cfg.mode == NDM_MODE_DEVMEM)
				res = ncclSystemError;
		} else {
			l->steered = true;
		}
	}
	pthread_mutex_unlock(&ndm.lock);
	if (res != ncclSuccess)
		goto err;
	l->handle.magic = NDM_MAGIC;
	l->handle.nsocks = (uint32_t)ndm.cfg.nsocks;
	l->handle.id = l->id;
	memcpy(handle, &l->handle, sizeof(l->handle));
	*listen_comm = l;
	return ncclSuccess;

err:
	ndm_close_listen(l);
	return res;
}

/* The process may run on NDM_SPARE_CPUS or more: its threads need not
 * take turns on one CPU.
 */
bool ndm_cpus_to_spare(void)
{
	cpu_set_t cpus;

	return !sched_getaffinity(0, sizeof(cpus), &cpus) &&
	       CPU_COUNT(&cpus) >= NDM_SPARE_CPUS;
}

/*
 * A comm's lock is taken for short stretches by two threads that each
 * come back for it at once: NCCL's proxy spinning on test(), and the I/O
 * thread after each system call. Where the process has CPUs to spare,
 * spinning a little before sleeping saves the I/O thread a futex wait and
 * wake-up per system call; on a few CPUs the holder may be waiting for
 * the very CPU the spinner holds, and spinning only delays it.
 */
static void ndm_lock_init(pthread_mutex_t *lock)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	if (ndm_cpus_to_spare())
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(lock, &a);
	pthread_mutexattr_destroy(&a);
}

static void ndm_comm_init(struct ndm_comm *c)
{
	int i;

	ndm_lock_init(&c->lock);
	c->efd = -1;
	c->ctl = -1;
	for (i = 0; i < NDM_MAX_SOCKS; i++)
		c->fds[i] = -1;
}

ncclResult_t ndm_connect(int dev, void *handle, void **send_comm)
{
	struct ndm_handle h;
	struct ndm_hello hello = { .magic = NDM_MAGIC };
	struct ndm_comm *c;
	union ndm_addr local;
	socklen_t len;
	int i;

	(void)dev;
	*send_comm = NULL;
	memcpy(&h, handle, sizeof(h));
	if (h.magic != NDM_MAGIC || !h.nsocks || h.nsocks > NDM_MAX_SOCKS ||
	    h.ctl.sa.sa_family != ndm.addr.sa.sa_family) {
		NDM_WARN("connect: not a handle of this plugin for this address family");
		return ncclInvalidArgument;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return ncclSystemError;
	ndm_comm_init(c);
	c->kind = NDM_REQ_SEND;
	c->id = h.id;
	c->nsocks = (int)h.nsocks;
	for (i = 0; i < NDM_MAX_SOCKS; i++)
		c->fds[i] = -1;
	hello.nsocks = h.nsocks;
	hello.id = h.id;
	/* TCP connects without the peer's accept: no wait on the peer. */
	c->ctl = ndm_socket();
	if (c->ctl < 0 || connect(c->ctl, &h.ctl.sa, ndm_addr_len(&h.ctl)))
		goto err;
	for (i = 0; i < c->nsocks; i++) {
		len = sizeof(local);
		c->fds[i] = ndm_socket();
		if (c->fds[i] < 0 ||
		    connect(c->fds[i], &h.data.sa, ndm_addr_len(&h.data)) ||
		    getsockname(c->fds[i], &local.sa, &len))
			goto err;
		hello.ports[i] = ndm_addr_port(&local);
	}
	if (send(c->ctl, &hello, sizeof(hello), MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(hello))
		goto err;
	if (ndm_io_start(c)) {
		ndm_close_comm(c);
		return ncclSystemError;
	}
	*send_comm = c;
	return ncclSuccess;

err:
	NDM_WARN("connect over %s: %s", ndm.cfg.ifname, strerror(errno));
	ndm_close_comm(c);
	return ncclSystemError;
}

static void ndm_pending_drop(struct ndm_pending *p)
{
	if (p->fd >= 0)
		close(p->fd);
	memset(p, 0, sizeof(*p));
	p->fd = -1;
}

static void ndm_accept_reset(struct ndm_listen *l)
{
	int i;

	for (i = 0; i < NDM_MAX_PENDING; i++)
		ndm_pending_drop(&l->pend[i]);
	if (l->ctl >= 0)
		close(l->ctl);
	l->ctl = -1;
	for (i = 0; i < NDM_MAX_SOCKS; i++) {
		if (l->fds[i] >= 0)
			close(l->fds[i]);
		l->fds[i] = -1;
	}
	l->nsocks_got = 0;
}

/*
 * Go on reading a record of @size bytes of which *@got are in @buf,
 * without waiting: 1 when it is whole, 0 when the socket has no more for
 * now, -1 when it failed (errno; 0 when the peer closed the connection).
 */
int ndm_read_full(int fd, void *buf, size_t size, size_t *got)
{
	ssize_t n;

	while (*got < size) {
		n = recv(fd, (char *)buf + *got, size - *got, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n <= 0) {
			if (!n)
				errno = 0;
			return -1;
		}
		*got += (size_t)n;
	}
	return 1;
}

/* Read what has come of @p's hello: 1 whole and good, 0 not yet, -1 bad. */
static int ndm_pending_read(struct ndm_listen *l, struct ndm_pending *p)
{
	int ret = ndm_read_full(p->fd, &p->hello, sizeof(p->hello), &p->got);

	if (ret <= 0)
		return ret;
	if (p->hello.magic != NDM_MAGIC || p->hello.id != l->id ||
	    p->hello.nsocks != l->handle.nsocks)
		return -1;
	return 1;
}

/*
 * Accept control connections and read their hellos, several at once: a
 * connection that says nothing does not hold up the peer's. 1 when one
 * said this comm's hello (it becomes l->ctl, the others are closed).
 */
static int ndm_accept_hello(struct ndm_listen *l)
{
	struct ndm_pending *p;
	socklen_t len;
	int i, fd, oldest = 0;
	union ndm_addr peer;

	if (l->ctl >= 0)
		return 1;
	for (;;) {
		len = sizeof(peer);
		fd = accept4(l->ctl_lfd, &peer.sa, &len, SOCK_CLOEXEC);
		if (fd < 0)
			break;
		for (i = 0; i < NDM_MAX_PENDING && l->pend[i].fd >= 0; i++)
			;
		if (i == NDM_MAX_PENDING) {
			NDM_WARN("accept: %d control connections without a hello: the oldest closed",
				 NDM_MAX_PENDING);
			i = oldest++ % NDM_MAX_PENDING;
			ndm_pending_drop(&l->pend[i]);
		}
		l->pend[i].fd = fd;
		l->pend[i].peer = peer;
	}
	for (i = 0; i < NDM_MAX_PENDING; i++) {
		p = &l->pend[i];
		if (p->fd < 0)
			continue;
		switch (ndm_pending_read(l, p)) {
		case 0:
			continue;
		case -1:
			NDM_WARN("accept: a control connection without this comm's hello: closed");
			ndm_pending_drop(p);
			continue;
		}
		l->ctl = p->fd;
		l->hello = p->hello;
		l->peer = p->peer;
		p->fd = -1;
		for (i = 0; i < NDM_MAX_PENDING; i++)
			ndm_pending_drop(&l->pend[i]);
		return 1;
	}
	return 0;
}

static void ndm_accept_data(struct ndm_listen *l)
{
	union ndm_addr peer;
	socklen_t len;
	uint32_t i;
	int fd;

	for (;;) {
		len = sizeof(peer);
		fd = accept4(l->data_lfd, &peer.sa, &len, SOCK_CLOEXEC);
		if (fd < 0)
			return;
		for (i = 0; i < l->hello.nsocks; i++)
			if (l->fds[i] < 0 && ndm_same_host(&peer, &l->peer) &&
			    l->hello.ports[i] == ndm_addr_port(&peer))
				break;
		if (i == l->hello.nsocks) {
			NDM_WARN("accept: a data connection from port %u that the peer did not name: closed",
				 ndm_addr_port(&peer));
			close(fd);
			continue;
		}
		l->fds[i] = fd;
		l->nsocks_got++;
	}
}

static ncclResult_t ndm_recv_comm_new(struct ndm_listen *l,
				      struct ndm_comm **cp)
{
	size_t hsize = (sizeof(struct nccl_unpack_handle) + 63) & ~(size_t)63;
	struct ndm_comm *c;
	size_t buffers = 0;
	int i;

	c = calloc(1, sizeof(*c));
	if (!c)
		return ncclSystemError;
	ndm_comm_init(c);
	c->kind = NDM_REQ_RECV;
	c->id = l->id;
	c->ctl = l->ctl;
	c->nsocks = (int)l->hello.nsocks;
	for (i = 0; i < NDM_MAX_SOCKS; i++)
		c->fds[i] = l->fds[i];
	l->ctl = -1;
	for (i = 0; i < NDM_MAX_SOCKS; i++)
		l->fds[i] = -1;
	l->nsocks_got = 0;
	/* NCCL closes the listen comm once it has accepted: the rule
	 * that steers the data port goes with the connection.
	 */
	c->devmem = c->steered = l->steered;
	c->rule_loc = l->rule_loc;
	l->steered = false;

	if (ndm_mapped_alloc(&c->unpack, hsize + sizeof(struct nccl_unpack_meta)))
		goto err;
	c->uh = c->unpack.host;
	c->meta = (struct nccl_unpack_meta *)((char *)c->unpack.host + hsize);
	c->uh->meta = (struct nccl_unpack_meta *)(uintptr_t)(c->unpack.dev + hsize);
	/* NCCL's kernel moves head on before each step it unpacks. */
	c->uh->head = UINT64_MAX;
	if (c->devmem) {
		c->uh->bounce_buf = (void *)(uintptr_t)ndm.rx.bounce_dev;
		buffers = devmem_binding_buffers(ndm.rx.binding);
		c->scratch = malloc(NDM_RECV_CHUNK);
		if (!c->scratch)
			goto err;
		for (i = 0; i < c->nsocks; i++) {
			if (devmem_rx_new(&c->rx[i], NDM_RECV_FRAGS, 0) ||
			    devmem_recycler_new(&c->rc[i], c->fds[i], buffers) ||
			    devmem_rx_set_recycler(c->rx[i], c->rc[i])) {
				NDM_WARN("accept: %s", devmem_last_error());
				goto err;
			}
		}
	} else {
		if (ndm_mapped_alloc(&c->ring.mem, ndm.cfg.copy_buffer))
			goto err;
		c->uh->bounce_buf = (void *)(uintptr_t)c->ring.mem.dev;
	}
	clock_gettime(CLOCK_MONOTONIC, &c->last_data);
	/* In devmem mode NCCL's proxy thread moves the fragments (io.c). */
	if (!c->devmem && ndm_io_start(c))
		goto err;
	*cp = c;
	return ncclSuccess;

err:
	ndm_close_comm(c);
	return ncclSystemError;
}

ncclResult_t ndm_accept(void *listen_comm, void **recv_comm,
			ncclNetDeviceHandle_v7_t **recv_dev)
{
	struct ndm_listen *l = listen_comm;
	struct ndm_comm *c;
	ncclResult_t res;

	*recv_comm = NULL;
	if (!ndm_accept_hello(l))
		return ncclSuccess;
	ndm_accept_data(l);
	if (l->nsocks_got < (int)l->hello.nsocks)
		return ncclSuccess;
	res = ndm_recv_comm_new(l, &c);
	if (res != ncclSuccess)
		return res;
	if (recv_dev && *recv_dev) {
		(*recv_dev)->netDeviceType = NCCL_NET_DEVICE_UNPACK;
		(*recv_dev)->netDeviceVersion = NCCL_NET_DEVICE_UNPACK_VERSION;
		(*recv_dev)->handle = (void *)(uintptr_t)c->unpack.dev;
		(*recv_dev)->size = sizeof(struct nccl_unpack_handle);
		(*recv_dev)->needsProxyProgress = 1;
	}
	NDM_INFO(NCCL_NET, "comm %#llx: receiving on %d socket(s) in %s mode%s%s, device unpack",
		 (unsigned long long)c->id, c->nsocks,
		 c->devmem ? "devmem" : "copy",
		 c->devmem ? "" : ": ",
		 c->devmem ? "" : (ndm.rx.why[0] ? ndm.rx.why :
				   "the data port is not steered"));
	*recv_comm = c;
	return ncclSuccess;
}

void ndm_unsteer(uint32_t loc)
{
	pthread_mutex_lock(&ndm.lock);
	if (ndm.rx.nic && devmem_nic_flow_del(ndm.rx.nic, loc))
		NDM_WARN("deleting the rule at %u of %s: %s", loc,
			 ndm.cfg.ifname, devmem_last_error());
	pthread_mutex_unlock(&ndm.lock);
}

ncclResult_t ndm_close_listen(void *listen_comm)
{
	struct ndm_listen *l = listen_comm;

	if (!l)
		return ncclSuccess;
	ndm_accept_reset(l);
	if (l->ctl_lfd >= 0)
		close(l->ctl_lfd);
	if (l->data_lfd >= 0)
		close(l->data_lfd);
	if (l->steered)
		ndm_unsteer(l->rule_loc);
	free(l);
	return ncclSuccess;
}

/* Hand back what is pending and say how many buffers went back: those of
 * receives NCCL never consumed go with the sockets.
 */
static void ndm_recv_close_report(struct ndm_comm *c)
{
	uint64_t freed = 0;
	int i;

	for (i = 0; i < c->nsocks; i++) {
		if (!c->rc[i])
			continue;
		if (devmem_recycler_flush(c->rc[i]) < 0)
			NDM_WARN("comm %#llx: giving buffers back: %s",
				 (unsigned long long)c->id, devmem_last_error());
		freed += devmem_recycler_get_stats(c->rc[i])->freed;
	}
	NDM_INFO(NCCL_NET, "comm %#llx closed: %llu of %llu tokens given back, the rest go with its sockets",
		 (unsigned long long)c->id, (unsigned long long)freed,
		 (unsigned long long)c->frags_in);
}

ncclResult_t ndm_close_comm(void *comm)
{
	struct ndm_comm *c = comm;
	int i;

	if (!c)
		return ncclSuccess;
	ndm_io_stop(c);
	if (c->devmem)
		ndm_recv_close_report(c);
	ndm_comm_free_requests(c);
	for (i = 0; i < NDM_MAX_SOCKS; i++) {
		devmem_recycler_free(c->rc[i]);
		devmem_rx_free(c->rx[i]);
		devmem_sender_free(c->sender[i]);
		if (c->fds[i] >= 0)
			close(c->fds[i]);
	}
	if (c->ctl >= 0)
		close(c->ctl);
	if (c->steered)
		ndm_unsteer(c->rule_loc);
	free(c->scratch);
	ndm_stream_free(&c->stream);
	pthread_mutex_destroy(&c->lock);
	ndm_mapped_free(&c->unpack);
	ndm_mapped_free(&c->ring.mem);
	ndm_mapped_free(&c->stage.mem);
	free(c);
	return ncclSuccess;
}
