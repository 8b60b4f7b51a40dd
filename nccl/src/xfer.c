// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Messages. isend() writes a header (tag, size) on the control socket and
 * queues one part of the payload per data socket; irecv() takes a slot of
 * the unpack ring; test() moves bytes without blocking. A receive is done
 * when every byte is accounted for: as records for NCCL's device unpack
 * (fragments in the bound buffer, or 4 KiB pages of the comm's bounce
 * buffer in copy mode) or, for bytes the kernel copied to host memory,
 * copied to the destination by the plugin. irecvConsumed() gives the
 * receive's buffers back once NCCL's kernel has read them.
 */
#include "plugin.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>


static struct ndm_mr *ndm_mrs;	/* under ndm.lock */

ncclResult_t ndm_fail(struct ndm_comm *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->err[0]) {
		va_start(ap, fmt);
		vsnprintf(c->err, sizeof(c->err), fmt, ap);
		va_end(ap);
		NDM_WARN("comm %#llx: %s", (unsigned long long)c->id, c->err);
	}
	return ncclSystemError;
}

/*
 * Registration: a CUDA buffer of a send comm is bound for devmem sends
 * (bind-tx of its dma-buf), once per buffer however many comms register
 * it. Anything else needs nothing.
 */
static void ndm_mr_bind(struct ndm_mr *mr, int fd, uint64_t offset)
{
	static bool said;
	int own_fd = -1, err;

	if (fd < 0) {
		if (ndm_gpu_export(mr->base, mr->size, &own_fd, &offset)) {
			if (!said)
				NDM_INFO(NCCL_NET, "copy mode for sends: the CUDA driver cannot export the buffer as a dma-buf");
			said = true;
			return;
		}
		fd = own_fd;
	}
	err = devmem_binding_new_tx(&mr->tx, ndm.cfg.ifindex, fd);
	if (own_fd >= 0)
		close(own_fd);
	if (err) {
		mr->tx = NULL;
		if (!said)
			NDM_INFO(NCCL_NET, "copy mode for sends: bind-tx: %s",
				 devmem_last_error());
		said = true;
		return;
	}
	mr->tx_offset = offset;
	NDM_INFO(NCCL_NET, "devmem sends from %zu bytes at %p (tx binding %u)",
		 mr->size, mr->base, devmem_binding_id(mr->tx));
}

ncclResult_t ndm_reg_mr(void *comm, void *data, size_t size, int type,
			int fd, uint64_t offset, void **mhandle)
{
	struct ndm_comm *c = comm;
	struct ndm_mr *mr;

	if (!(type & (NCCL_PTR_HOST | NCCL_PTR_CUDA))) {
		NDM_WARN("regMr: memory of type %d", type);
		return ncclInvalidArgument;
	}
	pthread_mutex_lock(&ndm.lock);
	for (mr = ndm_mrs; mr; mr = mr->next)
		if (mr->base == data && mr->size == size && mr->type == type)
			break;
	if (!mr) {
		mr = calloc(1, sizeof(*mr));
		if (!mr) {
			pthread_mutex_unlock(&ndm.lock);
			return ncclSystemError;
		}
		mr->base = data;
		mr->size = size;
		mr->type = type;
		mr->next = ndm_mrs;
		ndm_mrs = mr;
	}
	mr->refs++;
	if (c->kind == NDM_REQ_SEND && (type & NCCL_PTR_CUDA) && !mr->tx &&
	    ndm.cfg.mode != NDM_MODE_COPY)
		ndm_mr_bind(mr, fd, offset);
	pthread_mutex_unlock(&ndm.lock);
	*mhandle = mr;
	return ncclSuccess;
}

ncclResult_t ndm_dereg_mr(void *comm, void *mhandle)
{
	struct ndm_mr *mr = mhandle, **p;

	(void)comm;
	if (!mr)
		return ncclSuccess;
	pthread_mutex_lock(&ndm.lock);
	if (--mr->refs == 0) {
		for (p = &ndm_mrs; *p; p = &(*p)->next)
			if (*p == mr) {
				*p = mr->next;
				break;
			}
		devmem_binding_free(mr->tx);
		free(mr);
	}
	pthread_mutex_unlock(&ndm.lock);
	return ncclSuccess;
}

/* @len contiguous bytes of @ring, or false while they are in use. */
static bool ndm_ring_take(struct ndm_ring *ring, uint64_t len, uint64_t *off,
			  uint64_t *end)
{
	uint64_t cap = ring->mem.size, pos = ring->head % cap, skip = 0;

	len = (len + 4095) & ~4095ULL;
	if (pos + len > cap)
		skip = cap - pos;
	if (ring->head + skip + len - ring->tail > cap)
		return false;
	*off = (pos + skip) % cap;
	ring->head += skip + len;
	*end = ring->head;
	return true;
}

static struct ndm_request *ndm_req_new(struct ndm_comm *c)
{
	struct ndm_request *r;
	struct devmem_frag *frags;
	uint8_t *socks;
	size_t max;

	if (c->seq_tail - c->seq_head >= NDM_MAX_REQUESTS)
		return NULL;
	r = &c->reqs[c->seq_tail % NDM_MAX_REQUESTS];
	frags = r->frags;
	socks = r->frag_sock;
	max = r->max_frags;
	memset(r, 0, sizeof(*r));
	r->frags = frags;
	r->frag_sock = socks;
	r->max_frags = max;
	r->used = true;
	r->comm = c;
	r->kind = c->kind;
	r->seq = c->seq_tail++;
	r->slot = (unsigned int)(r->seq % NDM_MAX_REQUESTS);
	return r;
}

/* Free @r; the oldest requests that are free give back their ring space. */
static void ndm_req_done(struct ndm_request *r)
{
	struct ndm_comm *c = r->comm;
	struct ndm_request *o;

	r->used = false;
	while (c->seq_head < c->seq_tail) {
		o = &c->reqs[c->seq_head % NDM_MAX_REQUESTS];
		if (o->used)
			break;
		if (o->staged)
			c->stage.tail = o->stage_end;
		if (o->ring_end)
			c->ring.tail = o->ring_end;
		c->seq_head++;
	}
}

void ndm_comm_free_requests(struct ndm_comm *c)
{
	int i;

	for (i = 0; i < NDM_MAX_REQUESTS; i++) {
		free(c->reqs[i].frags);
		free(c->reqs[i].frag_sock);
		c->reqs[i].frags = NULL;
		c->reqs[i].frag_sock = NULL;
	}
}

static ncclResult_t ndm_too_big(const char *what, size_t size)
{
	NDM_WARN("%s of %zu bytes: a message is at most %u bytes over %s (one unpack slot: 4 MiB, 2048 fragments at MTU %d)",
		 what, size, ndm.max_msg, ndm.cfg.ifname, ndm.mtu);
	return ncclInvalidUsage;
}

/*
 * Send
 */
bool ndm_send_complete(const struct ndm_request *r)
{
	int i;

	for (i = 0; i < r->nparts; i++)
		if (r->parts[i].done < r->parts[i].len ||
		    (r->devmem && r->parts[i].acked < r->parts[i].len))
			return false;
	return true;
}

/* Whether @r can go from device memory: the comm's senders use one tx
 * binding, the first one it sends from.
 */
static ncclResult_t ndm_send_devmem(struct ndm_comm *c, struct ndm_request *r)
{
	int i;

	if (!r->mr || !r->mr->tx || !r->size)
		return ncclSuccess;
	if (c->send_tx && c->send_tx != r->mr->tx)
		return ncclSuccess;
	if (!c->send_tx) {
		for (i = 0; i < c->nsocks; i++)
			if (devmem_sender_new(&c->sender[i], c->fds[i],
					      r->mr->tx))
				return ndm_fail(c, "devmem sender: %s",
						devmem_last_error());
		c->send_tx = r->mr->tx;
	}
	r->devmem = true;
	return ncclSuccess;
}

static ncclResult_t ndm_isend_locked(struct ndm_comm *c, void *data,
				     size_t size, int tag, void *mhandle,
				     void **request)
{
	struct ndm_msg_hdr hdr = { .magic = NDM_MAGIC, .tag = tag, .size = size };
	struct ndm_request *r;

	if (c->err[0])
		return ncclSystemError;
	r = ndm_req_new(c);
	if (!r)
		return ncclSuccess;	/* NCCL asks again */
	r->mr = mhandle;
	r->data = data;
	r->size = size;
	r->tag = tag;
	r->src = data;
	if (ndm_send_devmem(c, r))
		return ncclSystemError;
	if (!r->devmem && size && r->mr && (r->mr->type & NCCL_PTR_CUDA)) {
		if (!c->stage.mem.host &&
		    ndm_mapped_alloc(&c->stage.mem, ndm.cfg.copy_buffer))
			return ndm_fail(c, "no staging memory for sends");
		if (!ndm_ring_take(&c->stage, size, &r->stage_off,
				   &r->stage_end)) {
			/* Not yet: give the request back, NCCL asks again. */
			r->used = false;
			c->seq_tail--;
			return ncclSuccess;
		}
		r->staged = true;
		r->src = (char *)c->stage.mem.host + r->stage_off;
		if (ndm_copy_from(&c->stream, (char *)r->src, data,
				  NCCL_PTR_CUDA, size))
			return ndm_fail(c, "staging a send failed");
	}
	if (send(c->ctl, &hdr, sizeof(hdr), MSG_NOSIGNAL) != sizeof(hdr))
		return ndm_fail(c, "control socket: %s", strerror(errno));
	ndm_split(r, size, c->nsocks);
	*request = r;
	return ncclSuccess;
}

ncclResult_t ndm_isend(void *send_comm, void *data, size_t size, int tag,
		       void *mhandle, void **request)
{
	struct ndm_comm *c = send_comm;
	ncclResult_t res;

	*request = NULL;
	if (size > ndm.max_msg)
		return ndm_too_big("isend", size);
	pthread_mutex_lock(&c->lock);
	res = ndm_isend_locked(c, data, size, tag, mhandle, request);
	pthread_mutex_unlock(&c->lock);
	if (*request)
		ndm_io_kick(c);
	return res;
}

/*
 * Receive
 */
static void ndm_publish(struct ndm_comm *c, struct ndm_request *r)
{
	/* Records first, then the count NCCL's kernel polls. */
	__atomic_store_n(&c->meta->cnt[r->slot], (uint64_t)r->records,
			 __ATOMIC_RELEASE);
	__sync_synchronize();
}

ncclResult_t ndm_record(struct ndm_comm *c, struct ndm_request *r,
			uint64_t src_off, uint32_t len, uint64_t dst_off)
{
	struct nccl_unpack_record *rec;

	if (r->records == NCCL_UNPACK_MAX_RECORDS)
		return ndm_fail(c, "a receive of %llu bytes came in more than %u fragments, NCCL's unpack limit: raise the MTU or the rx page size, or lower NCCL_P2P_NET_CHUNKSIZE",
				(unsigned long long)r->msg_size,
				NCCL_UNPACK_MAX_RECORDS);
	rec = &c->meta->mem[r->slot][r->records++];
	rec->src_off = (uint32_t)src_off;
	rec->len = len;
	rec->dst_off = dst_off;
	return ncclSuccess;
}

ncclResult_t ndm_keep_frag(struct ndm_comm *c, struct ndm_request *r,
			   const struct devmem_frag *f, int sock)
{
	size_t max;
	void *p, *q;

	if (r->nr_frags == r->max_frags) {
		max = r->max_frags ? r->max_frags * 2 : 64;
		p = realloc(r->frags, max * sizeof(*r->frags));
		if (p)
			r->frags = p;
		q = realloc(r->frag_sock, max);
		if (q)
			r->frag_sock = q;
		if (!p || !q)
			return ndm_fail(c, "out of memory");
		r->max_frags = max;
	}
	r->frags[r->nr_frags] = *f;
	r->frag_sock[r->nr_frags++] = (uint8_t)sock;
	return ncclSuccess;
}

/* The next header, for the oldest request without one: 1 when read. */
static int ndm_recv_header(struct ndm_comm *c, struct ndm_request *r)
{
	int ret = ndm_read_full(c->ctl, &c->hdr, sizeof(c->hdr), &c->hdr_got);

	if (!ret)
		return 0;
	if (ret < 0) {
		ndm_fail(c, "control socket: %s",
			 errno ? strerror(errno) : "the peer closed it");
		return -1;
	}
	if (c->hdr.magic != NDM_MAGIC) {
		ndm_fail(c, "control socket: not a message header");
		return -1;
	}
	if (c->hdr.tag != r->tag) {
		ndm_fail(c, "a message of tag %d for a receive of tag %d",
			 c->hdr.tag, r->tag);
		return -1;
	}
	if (c->hdr.size > r->size) {
		ndm_fail(c, "a message of %llu bytes for a receive of %llu",
			 (unsigned long long)c->hdr.size,
			 (unsigned long long)r->size);
		return -1;
	}
	/* Host memory is NCCL's to read as it is: copy mode receives into
	 * it, and the receive has no records.
	 */
	r->direct = !c->devmem && !(r->mr && (r->mr->type & NCCL_PTR_CUDA));
	if (!c->devmem && !r->direct &&
	    !ndm_ring_take(&c->ring, c->hdr.size, &r->ring_off, &r->ring_end))
		return 0;	/* until older receives are consumed */
	r->msg_size = c->hdr.size;
	ndm_split(r, r->msg_size, c->nsocks);
	r->hdr_done = true;
	c->hdr_got = 0;
	return 1;
}

static ncclResult_t ndm_recv_finish(struct ndm_comm *c, struct ndm_request *r)
{
	uint64_t off;
	int i;

	for (i = 0; i < r->nparts; i++)
		if (r->parts[i].done < r->parts[i].len)
			return ncclSuccess;
	if (!c->devmem && !r->direct)
		for (off = 0; off < r->msg_size; off += NCCL_UNPACK_PAGE_SIZE)
			if (ndm_record(c, r, r->ring_off + off,
				       (uint32_t)(r->msg_size - off <
						  NCCL_UNPACK_PAGE_SIZE ?
						  r->msg_size - off :
						  NCCL_UNPACK_PAGE_SIZE),
				       off))
				return ncclSystemError;
	ndm_publish(c, r);
	r->complete = true;
	if (getenv("NCCL_DEVMEM_TRACE"))
		NDM_INFO(NCCL_NET, "comm %#llx: receive %llu (slot %u, tag %d) done: %llu bytes in %u records; NCCL's head %llu",
			 (unsigned long long)c->id, (unsigned long long)r->seq,
			 r->slot, r->tag, (unsigned long long)r->msg_size,
			 r->records, (unsigned long long)c->uh->head);
	return ncclSuccess;
}

#define NDM_STALL_SECONDS	10

/*
 * Receives that wait while this process holds most of the bound buffer
 * may wait for good: the card has nowhere to put the bytes the oldest
 * receive needs, and NCCL gives nothing back before the oldest is done.
 * Say so once; the peer may only be slow.
 */
static void ndm_recv_watch(struct ndm_comm *c)
{
	struct timespec now;
	uint64_t held, buffers;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (c->warned_stall || c->seq_head == c->seq_tail ||
	    now.tv_sec - c->last_data.tv_sec < NDM_STALL_SECONDS)
		return;
	held = devmem_binding_held(ndm.rx.binding, NULL);
	buffers = devmem_binding_buffers(ndm.rx.binding);
	if (held * 2 < buffers)
		return;
	c->warned_stall = true;
	NDM_WARN("comm %#llx: no data for %d s while this process holds %llu of the %llu buffers bound on %s: the bound buffer may be too small for the data in flight (raise NCCL_DEVMEM_BUFFER_SIZE)",
		 (unsigned long long)c->id, NDM_STALL_SECONDS,
		 (unsigned long long)held, (unsigned long long)buffers,
		 ndm.cfg.ifname);
}

/* Headers in for the receives in order: how many came, or -1. */
int ndm_recv_headers(struct ndm_comm *c)
{
	struct ndm_request *r;
	int got, n = 0;
	uint64_t s;

	for (s = c->seq_head; s < c->seq_tail; s++) {
		r = &c->reqs[s % NDM_MAX_REQUESTS];
		if (r->hdr_done)
			continue;
		got = ndm_recv_header(c, r);
		if (got < 0)
			return -1;
		if (!got)
			break;
		n++;
	}
	return n;
}

/*
 * The proxy's part, under c->lock: in devmem mode a step of the I/O
 * thread's own (headers, fragments); in copy mode headers in, for a
 * receive that waited for room in the ring. Then finished receives out.
 */
static ncclResult_t ndm_recv_progress(struct ndm_comm *c)
{
	short events[NDM_MAX_SOCKS];
	struct ndm_request *r;
	bool moved = false;
	uint64_t s;
	int got;

	if (c->err[0])
		return ncclSystemError;
	if (c->devmem) {
		ndm_io_step(c, events, &moved, true);
	} else {
		got = ndm_recv_headers(c);
		if (got < 0)
			return ncclSystemError;
		if (got)
			ndm_io_kick(c);
	}
	for (s = c->seq_head; s < c->seq_tail; s++) {
		r = &c->reqs[s % NDM_MAX_REQUESTS];
		if (r->hdr_done && !r->complete && ndm_recv_finish(c, r))
			return ncclSystemError;
	}
	if (c->devmem)
		ndm_recv_watch(c);
	return c->err[0] ? ncclSystemError : ncclSuccess;
}

ncclResult_t ndm_irecv(void *recv_comm, int n, void **data,
		       const size_t *sizes, const int *tags, void **mhandles,
		       void **request)
{
	struct ndm_comm *c = recv_comm;
	struct ndm_request *r;
	ncclResult_t res;

	*request = NULL;
	if (n != 1) {
		NDM_WARN("irecv: %d receives in one call (the plugin takes 1)", n);
		return ncclInvalidArgument;
	}
	if (sizes[0] > ndm.max_msg)
		return ndm_too_big("irecv", sizes[0]);
	pthread_mutex_lock(&c->lock);
	r = c->err[0] ? NULL : ndm_req_new(c);
	if (r) {
		r->data = data[0];
		r->size = sizes[0];
		r->tag = tags[0];
		r->mr = mhandles ? mhandles[0] : NULL;
		*request = r;
	}
	res = ndm_recv_progress(c);	/* none free: NCCL asks again */
	pthread_mutex_unlock(&c->lock);
	return res;
}

ncclResult_t ndm_test(void *request, int *done, int *sizes)
{
	struct ndm_request *r = request;
	struct ndm_comm *c = r->comm;
	ncclResult_t res = ncclSuccess;
	short events[NDM_MAX_SOCKS];
	bool moved = false;

	*done = 0;
	/* Taken: the I/O thread is moving bytes. Not done yet; NCCL asks
	 * again, and the I/O thread does not wait for the proxy.
	 */
	if (pthread_mutex_trylock(&c->lock))
		return ncclSuccess;
	if (r->kind == NDM_REQ_SEND) {
		/* The proxy moves sends too when it comes first: devmem
		 * ones, which copy nothing, whole; host-memory ones up to
		 * NCCL_DEVMEM_PROXY_COPY bytes a socket.
		 */
		if (!c->err[0] && !ndm_send_complete(r) &&
		    (r->devmem || ndm.cfg.proxy_copy))
			ndm_io_step(c, events, &moved, true);
		if (c->err[0]) {
			res = ncclSystemError;
		} else if (ndm_send_complete(r)) {
			if (getenv("NCCL_DEVMEM_TRACE"))
				NDM_INFO(NCCL_NET, "comm %#llx: send %llu (tag %d) done: %llu bytes%s, %llu copied by the proxy thread",
					 (unsigned long long)c->id,
					 (unsigned long long)r->seq, r->tag,
					 (unsigned long long)r->size,
					 r->devmem ? " from device memory" :
					 r->staged ? " staged" : "",
					 (unsigned long long)r->proxy_copied);
			if (sizes)
				sizes[0] = (int)r->size;
			*done = 1;
			ndm_req_done(r);
		}
	} else {
		if (!r->complete)
			res = ndm_recv_progress(c);
		if (r->complete) {
			if (sizes)
				sizes[0] = (int)r->msg_size;
			*done = 1;
			res = ncclSuccess;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return res;
}

/* The request's tokens, for the I/O thread to give back (under c->lock). */
static ncclResult_t ndm_giveback(struct ndm_comm *c, struct ndm_request *r)
{
	size_t k, max;
	int i;
	void *p;

	for (k = 0; k < r->nr_frags; k++) {
		i = r->frag_sock[k];
		if (c->giveback_n[i] == c->giveback_max[i]) {
			max = c->giveback_max[i] ? c->giveback_max[i] * 2 : 256;
			p = realloc(c->giveback[i], max * sizeof(*c->giveback[i]));
			if (!p)
				return ndm_fail(c, "out of memory");
			c->giveback[i] = p;
			c->giveback_max[i] = max;
		}
		c->giveback[i][c->giveback_n[i]++] = r->frags[k];
	}
	r->nr_frags = 0;
	return ncclSuccess;
}

ncclResult_t ndm_consumed(void *recv_comm, int n, void *request)
{
	struct ndm_comm *c = recv_comm;
	struct ndm_request *r = request;
	ncclResult_t res;

	pthread_mutex_lock(&c->lock);
	if (n != 1 || !r || r->comm != c || !r->used || !r->complete ||
	    r->seq != c->seq_head) {
		pthread_mutex_unlock(&c->lock);
		NDM_WARN("irecvConsumed: not the oldest finished receive of this comm");
		return ncclInternalError;
	}
	res = ndm_giveback(c, r);
	if (c->devmem && res == ncclSuccess)
		ndm_io_giveback_all(c);
	if (getenv("NCCL_DEVMEM_TRACE"))
		NDM_INFO(NCCL_NET, "comm %#llx: receive %llu consumed; NCCL's head %llu",
			 (unsigned long long)c->id, (unsigned long long)r->seq,
			 (unsigned long long)c->uh->head);
	ndm_req_done(r);
	pthread_mutex_unlock(&c->lock);
	return res;
}
