/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * libdevmem: device-memory TCP from user space.
 *
 * Every function that can fail returns 0 (or a count) on success and a
 * negative errno value on failure; none of them reads or sets errno.
 * Each also leaves a human-readable reason for its failure, retrievable
 * with devmem_last_error(), in a per-thread buffer, and empties it when
 * it succeeds; functions that cannot fail leave it as it was.
 *
 * This header needs nothing from the kernel's devmem ABI: it builds on a
 * system whose headers predate device-memory TCP.
 */
#ifndef LIBDEVMEM_DEVMEM_H
#define LIBDEVMEM_DEVMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Version
 *
 * The header's version; devmem_version() gives the library's, the one a
 * program runs with, in the same encoding. A program built against
 * MAJOR.MINOR runs with any library of the same MAJOR and a MINOR as
 * high or higher (the symbol versions of the shared library enforce
 * it). Within a MAJOR, structs the caller allocates (those with a size
 * member) and structs the library hands out only grow at their end.
 */
#define DEVMEM_VERSION_MAJOR	1
#define DEVMEM_VERSION_MINOR	4
#define DEVMEM_VERSION_NUMBER(major, minor)	(((major) << 16) | (minor))
#define DEVMEM_VERSION \
	DEVMEM_VERSION_NUMBER(DEVMEM_VERSION_MAJOR, DEVMEM_VERSION_MINOR)

/* The running library's DEVMEM_VERSION. Cannot fail. */
unsigned int devmem_version(void);

struct msghdr;

/* Reason text of the last failure in this thread; "" after a success. */
const char *devmem_last_error(void);

/*
 * Receive
 */

/* One fragment of payload that landed in a bound dma-buf. */
struct devmem_frag {
	uint64_t offset;	/* where it starts in the dma-buf */
	uint32_t size;		/* bytes */
	uint32_t token;		/* give back through a devmem_recycler */
	uint32_t dmabuf_id;	/* the binding's id (netdev bind-rx reply) */
};

/* devmem_parse_cmsgs() flags */
#define DEVMEM_CMSG_SKIP_OTHER	(1U << 0)	/* ignore non-devmem cmsgs */

/*
 * Walk the control messages of @msg after recvmsg(MSG_SOCK_DEVMEM).
 * Stores up to @max_frags fragments in @frags, the number the message
 * carries in *@nr_frags and the bytes reported by SCM_DEVMEM_LINEAR in
 * *@linear (either pointer may be NULL). The sum does not say where the
 * linear bytes fall among the fragments: devmem_recv()'s segments do.
 * Returns 0; -EBADMSG if the kernel truncated the control data
 * (MSG_CTRUNC); -EPROTO for a malformed devmem cmsg, or for any other
 * cmsg unless @flags has DEVMEM_CMSG_SKIP_OTHER; -ENOSPC if @frags is too
 * small: the first @max_frags are stored and *@nr_frags says how many
 * an array must hold; -EINVAL for unknown @flags or missing pointers.
 */
int devmem_parse_cmsgs(const struct msghdr *msg, unsigned int flags,
		       struct devmem_frag *frags, size_t max_frags,
		       size_t *nr_frags, uint64_t *linear);

/* A receive context: the control buffer and fragment array of one socket
 * reader. Not safe for concurrent use.
 */
struct devmem_rx;

/* The largest control buffer, in fragments. */
#define DEVMEM_RX_MAX_FRAGS	65536U

/*
 * Create a receive context whose control buffer starts with room for
 * @frags fragments (0 picks 128; at most DEVMEM_RX_MAX_FRAGS).
 * @cmsg_flags are devmem_parse_cmsgs() flags.
 * Returns 0 and stores the context in *@rxp; -EINVAL, -ENOMEM.
 */
int devmem_rx_new(struct devmem_rx **rxp, unsigned int frags,
		  unsigned int cmsg_flags);
void devmem_rx_free(struct devmem_rx *rx);

/* One piece of a receive, in stream order: bytes the kernel copied into
 * the caller's buffer, or a fragment that landed in a bound dma-buf.
 */
enum devmem_seg_type {
	DEVMEM_SEG_HOST = 1,
	DEVMEM_SEG_DMABUF = 2,
};

struct devmem_seg {
	uint32_t type;			/* DEVMEM_SEG_* */
	uint32_t len;			/* bytes */
	const void *host;		/* HOST: where they are in the buffer */
	struct devmem_frag frag;	/* DMABUF: where it landed (frag.size
					 * is len); zero for HOST */
};

/*
 * What one devmem_recv() got. The caller sets @size to
 * sizeof(struct devmem_rx_result) before the call (the library fills in
 * only the fields that size covers, so that later versions can add
 * fields at the end); the rest is the library's to fill. The arrays
 * belong to the context: valid until its next devmem_recv() or
 * devmem_rx_free().
 */
struct devmem_rx_result {
	size_t size;
	const struct devmem_seg *segs;	/* every byte received, in order */
	size_t nr_segs;
	const struct devmem_frag *frags;	/* the DMABUF segments' frags
						 * alone, in order: for
						 * recycling */
	size_t nr_frags;
	size_t host_bytes;	/* copied into the caller's buffer */
	size_t dmabuf_bytes;	/* the sum of the fragments' sizes */
	unsigned int flags;	/* DEVMEM_RX_* */
};

/* devmem_rx_result flags: the kernel sent no devmem cmsg, so the bytes
 * came from host memory (a flow that does not arrive through a bound
 * queue) rather than from the part of a device-memory packet that the
 * card left in host memory.
 */
#define DEVMEM_RX_PLAIN		(1U << 0)

/*
 * recvmsg(@fd, MSG_SOCK_DEVMEM | @flags) into @buf (@len bytes for
 * host-memory data). When the control buffer cannot hold one cmsg
 * (ETOOSMALL, nothing received), it is doubled and the call retried, up
 * to DEVMEM_RX_MAX_FRAGS. A buffer that fills stops the call early; the
 * rest stays queued for the next one.
 * A receive can hold both kinds of bytes (a card that splits packets
 * after a fixed number of bytes leaves the first payload bytes of each in
 * host memory): res->segs lists them in the order of the stream, host
 * bytes packed from the start of @buf.
 * Returns the bytes received (host_bytes + dmabuf_bytes, also in *@res),
 * 0 at end of stream, or -errno: recvmsg's errors; -EMSGSIZE if the
 * largest control buffer is still too small; -ENOMEM; -EINVAL (NULL @rx
 * or @res, NULL @buf with a nonzero @len, res->size too small);
 * -EBADMSG and -EPROTO as devmem_parse_cmsgs() (-EPROTO also when the
 * byte counts of the cmsgs do not add up to what recvmsg returned).
 * After -EBADMSG or -EPROTO the data was consumed and the socket may hold
 * tokens never reported: close it.
 */
ssize_t devmem_recv(struct devmem_rx *rx, int fd, void *buf, size_t len,
		    int flags, struct devmem_rx_result *res);

/*
 * Token recycling
 */

/* Tokens are handed back with SO_DEVMEM_DONTNEED, which takes at most
 * this many ranges and looks at this many tokens per call.
 */
#define DEVMEM_DONTNEED_MAX_RANGES	128U
#define DEVMEM_DONTNEED_MAX_TOKENS	1024U

struct devmem_recycler;

struct devmem_recycler_stats {
	uint64_t freed;		/* tokens the kernel took back */
	uint64_t unknown;	/* tokens it did not hold (or added twice) */
	uint64_t calls;		/* successful SO_DEVMEM_DONTNEED calls */
	uint64_t pending;	/* tokens waiting for the next flush */
};

/* Each pending token keeps one buffer of the binding from the NIC. A
 * recycler told the binding's buffer count flushes before a quarter of
 * them (1/DEVMEM_RECYCLER_SHARE) are pending, and never waits for more
 * than DEVMEM_DONTNEED_MAX_TOKENS; one told nothing flushes every
 * DEVMEM_RECYCLER_DEFAULT_BATCH tokens, which is safe for bindings of at
 * least DEVMEM_RECYCLER_SHARE * DEVMEM_RECYCLER_DEFAULT_BATCH buffers.
 */
#define DEVMEM_RECYCLER_SHARE		4U
#define DEVMEM_RECYCLER_DEFAULT_BATCH	64U

/*
 * Create a recycler for the tokens of socket @fd (not owned: close it
 * after devmem_recycler_free()), whose fragments land in a binding of
 * @buffers buffers (devmem_binding_buffers(); 0: not known). Adding
 * tokens flushes once the batch is pending: the smaller of
 * DEVMEM_DONTNEED_MAX_TOKENS and @buffers / DEVMEM_RECYCLER_SHARE (at
 * least 1), or DEVMEM_RECYCLER_DEFAULT_BATCH when @buffers is 0. Several
 * sockets receiving into one binding: give each its share of @buffers.
 * Not safe for concurrent use.
 * Returns 0 and stores it in *@rcp; -EINVAL (NULL @rcp), -EBADF for a
 * negative @fd, -ENOMEM.
 */
int devmem_recycler_new(struct devmem_recycler **rcp, int fd,
			size_t buffers);

/*
 * Flush once @batch tokens are pending (0: the default above), but never
 * later than the recycler's buffer count allows: with a count, @batch is
 * capped at @buffers / DEVMEM_RECYCLER_SHARE. Without one, a @batch over
 * the default is safe only for a binding of at least
 * DEVMEM_RECYCLER_SHARE * @batch buffers. Takes effect at the next add.
 * Returns the batch now in force (positive), or -EINVAL (NULL @rc,
 * @batch over INT_MAX).
 */
int devmem_recycler_set_batch(struct devmem_recycler *rc, unsigned int batch);

/* Pending tokens are dropped, not flushed: the socket frees them when it
 * closes.
 */
void devmem_recycler_free(struct devmem_recycler *rc);

/*
 * Queue one token, or the tokens of @nr fragments, flushing when the
 * batch is full. Returns 0, -ENOMEM (nothing queued), or the error of
 * the flush it triggered (the tokens are queued and stay pending).
 */
int devmem_recycler_add(struct devmem_recycler *rc, uint32_t token);
int devmem_recycler_add_frags(struct devmem_recycler *rc,
			      const struct devmem_frag *frags, size_t nr);

/*
 * Hand every pending token back: sorted, duplicates dropped, adjacent
 * tokens merged into ranges, at most DEVMEM_DONTNEED_MAX_RANGES ranges
 * and DEVMEM_DONTNEED_MAX_TOKENS tokens per call. Tokens the socket did
 * not hold are counted as unknown.
 * Returns the number of tokens freed, or -errno from setsockopt (the
 * tokens not yet handed back stay pending); -EPROTO if the kernel claims
 * to have freed more than it was given.
 */
ssize_t devmem_recycler_flush(struct devmem_recycler *rc);

/*
 * The recycler's counters, read through a pointer the recycler owns: the
 * struct may gain fields at its end in later versions. Valid, and
 * unchanged, until the recycler's next call or devmem_recycler_free().
 * Cannot fail.
 */
const struct devmem_recycler_stats *
devmem_recycler_get_stats(struct devmem_recycler *rc);

/*
 * Give @rc's pending tokens back whenever devmem_recv() on @rx finds
 * nothing to read: a receive that would wait first looks without
 * waiting (MSG_DONTWAIT), and if nothing is queued it flushes @rc, then
 * waits; a receive that does not wait flushes @rc before it returns
 * -EAGAIN. The buffers a receiver waiting for data holds back are buffers
 * the NIC may need to deliver that data (a retransmission that fills a
 * hole, say). @rc must outlive its use by @rx; NULL detaches it.
 * A failed flush fails the receive with the flush's error (nothing was
 * received then).
 * Returns 0; -EINVAL (NULL @rx).
 */
int devmem_rx_set_recycler(struct devmem_rx *rx, struct devmem_recycler *rc);

/*
 * Make a devmem_recv() on @rx that waits tell a stall from a quiet peer.
 * The receive waits in poll() instead of recvmsg(), and after every @ms
 * without data looks at devmem_binding_held() for binding @b: when the
 * application holds every one of @b's buffers, the card has none to
 * receive into and no data can come until tokens go back, so the receive
 * fails with -ENOBUFS and a reason that says so. The count is of the
 * tokens receives hand to linked recyclers, so @rx needs one linked
 * first (devmem_rx_set_recycler(), which also flushes it before each
 * wait: tokens pending in a linked recycler never stall). Pass the
 * binding the socket's flow lands in. The wait still ends at the
 * socket's SO_RCVTIMEO (-EAGAIN) and at a signal (-EINTR, not
 * restarted); MSG_DONTWAIT receives do not wait and are not watched.
 * @b must outlive its use by @rx; NULL stops the watch, and so does
 * unlinking the recycler.
 * Returns 0; -EINVAL with a reason (NULL @rx, a tx binding, @ms 0 or
 * over INT_MAX, no recycler linked). Since 1.4.
 */
struct devmem_binding;
int devmem_rx_set_stall_check(struct devmem_rx *rx,
			      const struct devmem_binding *b, unsigned int ms);

/*
 * dma-buf providers
 */

enum devmem_dmabuf_kind {
	DEVMEM_DMABUF_UDMABUF = 1,	/* host memory: memfd + /dev/udmabuf */
	DEVMEM_DMABUF_HEAP,		/* /dev/dma_heap/<name> */
	DEVMEM_DMABUF_CUDA,		/* GPU memory through libcuda */
	DEVMEM_DMABUF_IMPORTED,		/* an fd from elsewhere */
};

struct devmem_dmabuf;

/*
 * Allocate @size bytes (a multiple of the page size) and export them as a
 * dma-buf. devmem_dmabuf_new_heap() takes the heap's name (NULL: "system");
 * devmem_dmabuf_new_cuda() a CUDA device ordinal and loads libcuda.so.1 at
 * run time. devmem_dmabuf_new_import() takes a duplicate of @fd (the caller
 * keeps its own) and learns the size from it.
 * Returns 0 and stores the buffer in *@dbp, or -errno with a reason in
 * devmem_last_error(): -EINVAL (size, name or ordinal); -ENOENT (no
 * /dev/udmabuf, no such heap, no libcuda.so.1); -ENODEV (no usable GPU
 * with that ordinal); -EOPNOTSUPP (the GPU or driver cannot export
 * dma-bufs); -EIO (another CUDA failure); -EBADF (import); -ENOMEM; the
 * kernel's errors.
 */
int devmem_dmabuf_new_udmabuf(struct devmem_dmabuf **dbp, size_t size);
/*
 * A udmabuf of 2 MiB huge pages (a hugetlb memfd): each of its
 * scatter-gather entries is one or more whole huge pages, as an rx page
 * size above the page size needs. @size is a multiple of 2 MiB; the pages
 * come from the reserved pool (vm.nr_hugepages), and -ENOMEM says there
 * are not enough free ones. Otherwise as devmem_dmabuf_new_udmabuf().
 * Since 1.2.
 */
int devmem_dmabuf_new_udmabuf_huge(struct devmem_dmabuf **dbp, size_t size);
int devmem_dmabuf_new_heap(struct devmem_dmabuf **dbp, const char *heap,
		       size_t size);
int devmem_dmabuf_new_cuda(struct devmem_dmabuf **dbp, int device, size_t size);
int devmem_dmabuf_new_import(struct devmem_dmabuf **dbp, int fd);

/* Unmaps, closes the fd and releases the memory; NULL is a no-op. */
void devmem_dmabuf_free(struct devmem_dmabuf *db);

int devmem_dmabuf_fd(const struct devmem_dmabuf *db);
size_t devmem_dmabuf_size(const struct devmem_dmabuf *db);
enum devmem_dmabuf_kind devmem_dmabuf_kind(const struct devmem_dmabuf *db);

/*
 * Copy bytes [@off, @off + @len) of the buffer to @dst. Host memory is
 * mapped on first use and read between DMA_BUF_IOCTL_SYNC start and end;
 * GPU memory is copied by the CUDA driver. Not safe for concurrent use.
 * Returns 0, or -errno with a reason in devmem_last_error(): -EINVAL
 * (out of range); mmap's and the sync ioctl's errors (-ENOTTY: not a
 * dma-buf); -EIO (the CUDA copy failed).
 */
int devmem_dmabuf_read(struct devmem_dmabuf *db, uint64_t off, void *dst,
		       size_t len);

/*
 * The CPU's view of a host-memory buffer (udmabuf, heap, an imported fd
 * that can be mapped), for reading payload in place and writing what is
 * to be sent. DMA_BUF_IOCTL_SYNC brackets every CPU access: begin before
 * touching the bytes, end after, with the same @access.
 */
#define DEVMEM_ACCESS_READ	(1U << 0)
#define DEVMEM_ACCESS_WRITE	(1U << 1)

/*
 * Store in *@addrp the address of the whole buffer in this process: one
 * shared mapping, made by the first call (or devmem_dmabuf_read()) and
 * kept until devmem_dmabuf_free(), so every call gives the same address;
 * writable when the fd is open for writing. @access says what the caller
 * will do: DEVMEM_ACCESS_READ, DEVMEM_ACCESS_WRITE or both. Safe to call
 * from several threads. Returns 0, or -errno with a reason: -EINVAL
 * (NULL argument, bad @access); -EOPNOTSUPP (GPU memory: use
 * devmem_dmabuf_cuda_addr()); -EACCES (write access to a read-only fd);
 * mmap's errors. Since 1.3.
 */
int devmem_dmabuf_map(struct devmem_dmabuf *db, unsigned int access,
		      void **addrp);
/*
 * Begin and end a CPU access of @access (DMA_BUF_IOCTL_SYNC start and
 * end): the device's writes before the begin are visible to the CPU
 * after it, and the CPU's writes are the device's after the end. Returns
 * 0, or -errno with a reason: those of devmem_dmabuf_map(), and the
 * ioctl's (-ENOTTY: not a dma-buf). Since 1.3.
 */
int devmem_dmabuf_begin_access(struct devmem_dmabuf *db, unsigned int access);
int devmem_dmabuf_end_access(struct devmem_dmabuf *db, unsigned int access);

/*
 * The GPU address of a devmem_dmabuf_new_cuda() buffer's memory, valid in
 * the device's primary context (the CUDA runtime's) for as long as the
 * buffer lives: for the application's own kernels and copies. NULL for
 * any other kind of buffer.
 */
void *devmem_dmabuf_cuda_addr(const struct devmem_dmabuf *db);

/*
 * GPU unpack
 *
 * Received payload lies scattered over the dma-buf, a fragment per
 * buffer. An unpacker gathers a batch of fragments of a CUDA buffer into
 * contiguous GPU memory, in the order given, asynchronously on the
 * application's CUDA stream: the fragment list goes to the GPU in one
 * copy, a kernel moves the bytes, an event marks the end. The batch's
 * tokens stay with the unpacker until devmem_unpack_complete() has seen
 * that event, then go to a recycler: a buffer is never handed back to
 * the kernel while the GPU may still read it. One batch at a time per
 * unpacker; use several to keep more in flight. The kernel is part of
 * the library only where it was built with nvcc; elsewhere
 * devmem_unpack_new() fails with -EOPNOTSUPP. Not safe for concurrent
 * use.
 */
struct devmem_unpack;

/*
 * An unpacker for fragments of @db (from devmem_dmabuf_new_cuda()), batches
 * of at most @max_frags. It holds its own reference on the driver and
 * the device's primary context, and may outlive @db (but no batch may
 * run after @db is freed).
 * Returns 0 and stores it in *@upp, or -errno with a reason in
 * devmem_last_error(): -EINVAL (not a CUDA buffer, @max_frags 0 or over
 * 16777216); -EOPNOTSUPP (built without nvcc, or a GPU the kernel was
 * not built for); -ENOENT, -ENODEV, -EIO (the driver); -ENOMEM.
 */
int devmem_unpack_new(struct devmem_unpack **upp,
		      const struct devmem_dmabuf *db, size_t max_frags);

/*
 * Queue on @stream (a cudaStream_t or CUstream of the primary context;
 * NULL: the default stream) the gather of @nr fragments of the buffer to
 * @dst (GPU memory, room for the sum of their sizes): fragment 0's
 * bytes first, each next one right after. Returns at once with that sum,
 * or -errno with a reason in devmem_last_error(): -EINVAL (no fragments,
 * more than the unpacker takes, one outside the buffer, no @dst);
 * -EBUSY (the last batch is not complete); -EIO (CUDA refused the copy
 * or the launch; nothing is held then).
 */
ssize_t devmem_unpack_gather(struct devmem_unpack *up,
			     const struct devmem_frag *frags, size_t nr,
			     void *dst, void *stream);

/*
 * Whether the last batch has finished on the GPU; with @wait, block until
 * it has. Once it has, its tokens go to @rc (NULL: the caller returns
 * them itself; the fragments it passed say which) and the unpacker takes
 * the next batch. Returns 1 (finished, or no batch), 0 (still running),
 * or -errno with a reason in devmem_last_error(): -EIO (CUDA: the batch
 * failed; the tokens stay held), -ENOMEM (nothing queued on @rc: call
 * again), or the error of a flush that queueing on @rc triggered (the
 * tokens are queued on @rc and the batch is done).
 */
int devmem_unpack_complete(struct devmem_unpack *up,
			   struct devmem_recycler *rc, int wait);

/* Waits for a batch in flight, then frees; its tokens are not returned.
 * NULL is a no-op.
 */
void devmem_unpack_free(struct devmem_unpack *up);

/*
 * Bindings and introspection
 */

/* Through the kernel's "netdev" generic netlink family, in the caller's
 * network namespace. Every function here leaves a reason in
 * devmem_last_error(); when the kernel refused a request, the return
 * value is its errno and the reason exactly the message of its extended
 * ack (or, when it sent none, the errno's strerror() text). A kernel
 * without the family is -ENOENT.
 */

/*
 * The index of network device @name_or_index: a name, else a decimal
 * index of an existing device (a device literally named "7" wins over
 * index 7). Returns the index, or -errno with a reason: -ENODEV (no such
 * device), -EINVAL (NULL), or the errors of if_nametoindex().
 */
int devmem_ifindex(const char *name_or_index);

/* rx queues of one device bound to one dma-buf. */
struct devmem_binding;

/*
 * Bind dma-buf @dmabuf_fd to rx queues @queues[0..@nr_queues) of device
 * @ifindex (netdev bind-rx; needs CAP_NET_ADMIN). The binding owns the
 * netlink socket that made it, and the kernel keeps the queues bound for
 * exactly as long as that socket is open: devmem_binding_free() unbinds
 * (a process that forks shares it until both have closed it; exec
 * closes it). The kernel holds its own reference to the dma-buf.
 * Returns 0 and stores the binding in *@bp, or -errno with a reason:
 * -EINVAL (NULL @bp or @queues, no queues, @ifindex not positive) and
 * -EBADF (negative fd) before anything is sent; otherwise the kernel's
 * errno (-ENODEV, -ERANGE, -EEXIST, -EOPNOTSUPP, -EPERM, ...); -ENOENT
 * (no netdev family); -EPROTO (a reply without the binding's id);
 * -ENOMEM; socket errors.
 */
int devmem_binding_new_rx(struct devmem_binding **bp, int ifindex,
		   const uint32_t *queues, size_t nr_queues, int dmabuf_fd);

/* Closes the binding's socket, which unbinds; NULL is a no-op. */
void devmem_binding_free(struct devmem_binding *b);

/* The binding's id (the dmabuf id of queues, pools and received
 * fragments) and its device.
 */
uint32_t devmem_binding_id(const struct devmem_binding *b);
int devmem_binding_ifindex(const struct devmem_binding *b);

/* How many buffers the binding has: the kernel cuts the dma-buf into
 * pages (or buffers of the rx page size), and each received fragment
 * (each token) holds one. Give it to devmem_recycler_new().
 */
size_t devmem_binding_buffers(const struct devmem_binding *b);

/*
 * devmem_binding_new_rx() with receive buffers of @rx_page_size bytes
 * (bind-rx's rx-page-size): the kernel cuts the dma-buf into buffers of
 * that size and the device fills each with one or more segments, so a
 * stream needs fewer of them. 0 asks for nothing: the page size, as
 * devmem_binding_new_rx(). Every scatter-gather entry of the dma-buf must
 * start and end on a multiple of the size; devmem_dmabuf_new_udmabuf_huge()
 * gives entries of 2 MiB. The errors of devmem_binding_new_rx(), and from
 * the kernel: -ERANGE (below the page size), -EINVAL (not a power of two,
 * or an entry of the dma-buf that is not aligned: the reason names it),
 * -EOPNOTSUPP (the device does not support it), -E2BIG (its driver made
 * buffers of another size). Since 1.2.
 */
int devmem_binding_new_rx_sized(struct devmem_binding **bp, int ifindex,
				const uint32_t *queues, size_t nr_queues,
				int dmabuf_fd, uint32_t rx_page_size);

/* The size of each of the binding's buffers: the rx page size it was
 * made with, else the page size. Since 1.2.
 */
size_t devmem_binding_buffer_size(const struct devmem_binding *b);

/* devmem_binding_new_rx_flags() flags */
#define DEVMEM_BIND_UNDERSIZED	(1U << 0)	/* bind a dma-buf smaller than
						 * the rx rings it feeds */

/*
 * devmem_binding_new_rx_sized() that first checks the dma-buf's size
 * against the rx rings of the queues: each bound queue's ring fills from
 * the binding, so a binding with fewer buffers than the rings have
 * entries (ethtool -g: rx, times the queues) can be emptied by the rings
 * alone, and a flow stops as soon as the sockets hold a few buffers, with
 * no error anywhere. Such a binding is refused with -ENOBUFS and a reason
 * that gives both counts and the smallest size that passes, unless
 * @flags has DEVMEM_BIND_UNDERSIZED (a receiver that gives every token
 * back at once can live with it: devmem_rx_set_recycler()). A device
 * whose driver does not report its rings is not checked. The functions
 * above never check; they are this one with DEVMEM_BIND_UNDERSIZED.
 * Returns 0 and stores the binding in *@bp, or -errno with a reason: the
 * errors of devmem_binding_new_rx_sized(); -ENOBUFS; -EINVAL for unknown
 * @flags. Since 1.4.
 */
int devmem_binding_new_rx_flags(struct devmem_binding **bp, int ifindex,
				const uint32_t *queues, size_t nr_queues,
				int dmabuf_fd, uint32_t rx_page_size,
				unsigned int flags);

/*
 * How many of rx binding @b's buffers the application holds: buffers
 * behind the tokens that receives linked to a recycler
 * (devmem_rx_set_recycler(), devmem_uring_set_recycler()) handed out in
 * this process and that have not gone back through that recycler (or
 * been dropped with it: devmem_recycler_free() goes with closing the
 * socket). Fragments that share a buffer count it once; their count goes
 * in *@tokens (may be NULL). No system call: a lock and a read. Buffers
 * in the rings, in the pools' caches and in data not yet read are not
 * the application's and are not counted; nor are tokens given back
 * without the library. A binding of another process, or one made by
 * devmem_binding_new_tx(), has 0. Cannot fail. Since 1.4.
 */
uint64_t devmem_binding_held(const struct devmem_binding *b, uint64_t *tokens);

/*
 * Bind dma-buf @dmabuf_fd for sending through device @ifindex (netdev
 * bind-tx; no capability needed). As with rx, the binding owns its netlink
 * socket and lives as long as that socket is open; sends still in flight
 * when it is freed keep the memory until they complete. Returns 0 and
 * stores the binding in *@bp, or -errno with a reason: -EINVAL (NULL @bp,
 * @ifindex not positive) and -EBADF (negative fd) before anything is
 * sent; otherwise the kernel's errno (-ENODEV, -EOPNOTSUPP for a device
 * that cannot send from device memory, -EBADF for a fd that is no
 * dma-buf, ...); -ENOENT (no netdev
 * family); -EPROTO (a reply without the binding's id); -ENOMEM; socket
 * errors. Since 1.1.
 */
int devmem_binding_new_tx(struct devmem_binding **bp, int ifindex,
			  int dmabuf_fd);

/* @len bytes of a dma-buf from byte @offset. */
struct devmem_span {
	uint64_t offset;
	uint64_t len;
};

/*
 * Sending from device memory on one connected TCP socket. Each send is
 * one or more sendmsg(MSG_ZEROCOPY) calls whose iovecs name dma-buf
 * offsets; the kernel reports on the socket's error queue when it no
 * longer needs a send's bytes, and only then may they be overwritten.
 * The sender keeps the spans of every send until that report. It must
 * make every MSG_ZEROCOPY send on its socket: the reports name sends by
 * a count the socket keeps.
 */
struct devmem_sender;

/*
 * A sender for connected TCP socket @sockfd, sending from tx binding @tx
 * (devmem_binding_new_tx()). The sender keeps only @tx's id: @tx may be
 * freed first, which unbinds (later sends fail with -EINVAL; bytes
 * already sent still go out, and their reports still come). Turns
 * SO_ZEROCOPY on. Returns 0 and stores it in *@sp, or -errno with a reason: -EINVAL
 * (NULL argument, an rx binding), -EBADF (negative fd), -ENOMEM, the
 * errors of setsockopt(). Since 1.1.
 */
int devmem_sender_new(struct devmem_sender **sp, int sockfd,
		      const struct devmem_binding *tx);

/* Frees the sender (not the socket, not the binding); NULL is a no-op.
 * Sends not reaped may still be using their bytes.
 */
void devmem_sender_free(struct devmem_sender *s);

/*
 * Send the bytes of @spans[0..@nr_spans), in order, from the binding's
 * dma-buf; @flags are added to MSG_ZEROCOPY (e.g. MSG_DONTWAIT, MSG_MORE,
 * MSG_NOSIGNAL). Long lists and long spans go out in several sendmsg()
 * calls (at most 1024 iovecs and 1 GiB each). Returns the bytes queued:
 * all of them, or fewer when a non-blocking socket filled up, a signal
 * came or a later call failed (send the rest again); or -errno with a
 * reason, nothing queued: -EINVAL (NULL argument, an empty span list, a
 * span of 0 bytes or one that wraps), the kernel's errno for a refused
 * send (-EINVAL: the binding is gone or is not a tx binding; -ENODEV:
 * the route leaves through another device; -EFAULT: a span outside the
 * dma-buf; -ENOBUFS: too many sends await their reports), -EAGAIN,
 * -EPIPE and other errors of sendmsg(). The queued bytes may not be
 * overwritten before devmem_sender_reap() returns them. Since 1.1.
 */
ssize_t devmem_send(struct devmem_sender *s, const struct devmem_span *spans,
		    size_t nr_spans, int flags);

/*
 * Collect the kernel's completion reports: store in @done[0..@max) the
 * spans of sends that have completed, each of whose bytes may now be
 * reused (pieces of the spans sent where a span went out in two sendmsg()
 * calls or in part; together they cover every byte sent once). They come
 * back in send order, the oldest first: a send the kernel reports before
 * an earlier one is held until that one is reported too. Waits up to @timeout_ms for the first report (-1:
 * without limit; 0: not at all), not at all while nothing is pending or
 * spans are ready. Returns the number of spans stored (0: none completed
 * in time), or -errno with a reason: -EINVAL (NULL argument, @max 0),
 * -EPROTO (a report that names no pending send, or one that is not a
 * zerocopy completion), the socket's pending error, errors of poll() and
 * recvmsg(). Spans that do not fit in @done are returned by the next
 * call. Since 1.1.
 */
ssize_t devmem_sender_reap(struct devmem_sender *s, struct devmem_span *done,
			   size_t max, int timeout_ms);

/* Bytes sent that devmem_sender_reap() has not returned yet. Since 1.1. */
uint64_t devmem_sender_pending(const struct devmem_sender *s);

/*
 * Tagged sends: each call carries a caller's 64-bit @tag, and its
 * completion gives it back with the bytes that call queued, as
 * io_uring's user_data or a work request's wr_id. Completions come in
 * send order, the oldest first, like devmem_sender_reap()'s spans. A
 * sender's sends are all tagged or all untagged: the first send decides,
 * and the other kind of send or reap fails with -EINVAL.
 */
struct devmem_send_completion {
	uint64_t tag;		/* the send's */
	uint64_t bytes;		/* what it queued (its return value) */
};

/*
 * devmem_send() with a tag: the bytes it returns (all of the spans', or
 * fewer) complete together, as one completion of @tag. A send that
 * queued nothing has no completion. Since 1.3.
 */
ssize_t devmem_send_tagged(struct devmem_sender *s,
			   const struct devmem_span *spans, size_t nr_spans,
			   int flags, uint64_t tag);

/*
 * Store in @done[0..@max) the completions of tagged sends whose bytes the
 * device no longer needs, in send order, and wait as devmem_sender_reap()
 * does. Returns the number stored, or -errno with a reason: those of
 * devmem_sender_reap(), and -EINVAL when the sender's sends are not
 * tagged. Since 1.3.
 */
ssize_t devmem_sender_reap_tagged(struct devmem_sender *s,
				  struct devmem_send_completion *done,
				  size_t max, int timeout_ms);

enum devmem_queue_type {
	DEVMEM_QUEUE_RX = 0,
	DEVMEM_QUEUE_TX = 1,
};

/* One queue of a device, as netdev queue-get describes it. */
struct devmem_queue {
	uint32_t id;
	enum devmem_queue_type type;
	int ifindex;
	uint32_t napi_id;	/* 0: no NAPI instance */
	uint32_t dmabuf_id;	/* an rx queue's binding; 0: not bound */
};

/*
 * Every queue of every device that is up (of device @ifindex only, when
 * not 0), rx then tx queues of each, in one array of the caller's.
 * Returns how many, with the array in *@qp (NULL when there are none;
 * free it with devmem_queue_dump_free()), or -errno with a reason:
 * -EINVAL (NULL @qp, negative @ifindex); the kernel's errno (-ENODEV:
 * no device @ifindex); -ENOENT; -EPROTO (a malformed reply); -ENOMEM.
 */
ssize_t devmem_queue_dump(struct devmem_queue **qp, int ifindex);
void devmem_queue_dump_free(struct devmem_queue *q);

/* devmem_page_pool has: which of the fields that may be absent are set */
#define DEVMEM_PAGE_POOL_IFINDEX	(1U << 0)	/* not orphaned */
#define DEVMEM_PAGE_POOL_NAPI_ID	(1U << 1)
#define DEVMEM_PAGE_POOL_DETACH_TIME	(1U << 2)	/* detached */
#define DEVMEM_PAGE_POOL_DMABUF		(1U << 3)	/* uses a binding */

/* One page pool, as netdev page-pool-get describes it; fields not in
 * @has are 0.
 */
struct devmem_page_pool {
	uint64_t id;
	uint32_t has;		/* DEVMEM_PAGE_POOL_* */
	int ifindex;		/* absent once its device is gone */
	uint32_t napi_id;
	uint32_t dmabuf_id;	/* the binding it takes buffers from */
	uint64_t inflight;	/* buffers out of the pool */
	uint64_t inflight_mem;	/* their bytes */
	uint64_t detach_time;	/* when its queue let go of it (seconds,
				 * CLOCK_BOOTTIME) */
};

/*
 * Every page pool (of device @ifindex only, when not 0: pools whose
 * device is gone are then left out), in one array of the caller's.
 * Returns how many, with the array in *@pp (NULL when there are none;
 * free it with devmem_page_pool_dump_free()), or -errno with a reason as
 * devmem_queue_dump() (no device @ifindex is 0 pools, not an error).
 */
ssize_t devmem_page_pool_dump(struct devmem_page_pool **pp, int ifindex);
void devmem_page_pool_dump_free(struct devmem_page_pool *p);

/*
 * NIC set-up
 *
 * Header split, an RSS carve-out and n-tuple rules, in the caller's
 * network namespace, through ethtool (netlink where the setting has an
 * attribute, the ethtool ioctl for RSS and n-tuple rules). A devmem_nic
 * records what it changed, so that devmem_nic_restore() can undo it -
 * also from another process, through devmem_nic_save()/devmem_nic_new_from_file().
 * Every function leaves a reason in devmem_last_error() (the kernel's
 * extack text where it sent one).
 *
 * Several processes (or states) may set up queues of one device, each
 * its own: an owner. What they share is what the device was before any
 * of them: header split, hds-thresh, the ntuple feature and the RSS
 * table, recorded by the first owner that changes each and restored by
 * the last one to restore. What is an owner's own is the queues it keeps
 * out of RSS and its n-tuple rules; an owner may not have another's
 * queues (-EBUSY), and the RSS table spreads over the queues no owner
 * has. The records live in the state directory DIR ($DEVMEM_STATE_DIR,
 * else /run/devmem, made 0700 when missing), per device of the caller's
 * network namespace (NS: the inode of /proc/self/ns/net):
 *
 *   DIR/netns-NS-ifindex-IFINDEX          what the device was
 *   DIR/netns-NS-ifindex-IFINDEX.owner.X  one owner's queues and rules
 *
 * A state becomes an owner with its first change function, which makes
 * its owner file (mode 0600); the process holds it open and flock()ed
 * (LOCK_EX) until devmem_nic_restore() or devmem_nic_free(), so that
 * when it dies, however it dies, devmem_nic_new_recover() can take over
 * what it left ("devmemctl teardown"). Each function reads and rewrites
 * the files under a lock of the directory, so owners never see each
 * other half-way. Every change function below may also fail with -EBUSY
 * (another owner has the queue, or the file of a set-up by libdevmem
 * before 1.4 is there), -EINVAL (a malformed file in the way), -EACCES
 * (the directory is not this user's), -ENOMEM or the files' errors, with
 * a reason naming the file.
 */

/* A TCP flow for an n-tuple rule. The caller sets @size to
 * sizeof(struct devmem_flow) (the library reads and writes only the
 * fields that size covers, so that later versions can add fields at the
 * end).
 */
struct devmem_flow {
	size_t size;
	int family;		/* AF_INET or AF_INET6 */
	int has_src;		/* match the source address too */
	uint8_t src[16];	/* network order; AF_INET: the first 4 bytes */
	uint8_t dst[16];
	uint16_t dst_port;	/* host order */
};

/* Set-up state of one device. */
struct devmem_nic;

/*
 * Fill @f from text: @dst, an IPv4 or IPv6 address, picks the family;
 * @src is NULL (any source) or an address of the same family; @port is
 * decimal, 1-65535. @f is left alone on failure, f->size always.
 * Returns 0, or -EINVAL with a reason (NULL @f or @dst, f->size smaller
 * than the first version of the struct, an address that is neither IPv4
 * nor IPv6, families that differ, a bad port).
 */
int devmem_flow_parse(struct devmem_flow *f, const char *dst,
		      const char *src, const char *port);

/*
 * Start recording the set-up of device @ifindex (in the caller's network
 * namespace). Nothing is sent to the kernel yet; the ethtool netlink
 * socket opens on first use.
 * Returns 0 and stores the state in *@np, or -errno with a reason:
 * -EINVAL (NULL @np, @ifindex not positive), -ENODEV (no such device),
 * -ENOMEM.
 */
int devmem_nic_new(struct devmem_nic **np, int ifindex);

/*
 * Take over what the owners of device @ifindex's queues (in the caller's
 * network namespace) that are gone left: processes that ended without
 * restoring, or were killed. Their files are loaded strictly, as
 * devmem_nic_new_from_file() does, into one new owner (their files are
 * removed, its own made and locked): devmem_nic_restore() then deletes
 * their rules, gives their queues back to RSS and, when no running
 * owner is left, puts back what the device was. Running owners are left
 * alone. A device file without owners (its last owner died while
 * restoring) is taken over the same way.
 * Returns 0 and stores the state in *@np, or -errno with a reason:
 * -EINVAL (NULL @np, @ifindex not positive, a malformed file);
 * -ENODEV (no such device, or a file's device is not the one of that
 * index now); -ENOENT (no state file: not set up); -EBUSY (every owner
 * is running); -ENOMEM; the files' errors.
 */
int devmem_nic_new_recover(struct devmem_nic **np, int ifindex);

/* Forget the state (and close its socket); restores nothing. An owner
 * with queues or rules recorded (or the last owner, with what the device
 * was recorded) leaves its file, unlocked, for devmem_nic_new_recover();
 * another one's file goes. NULL is a no-op.
 */
void devmem_nic_free(struct devmem_nic *n);

/* The device the state is about. Cannot fail. */
int devmem_nic_ifindex(const struct devmem_nic *n);

/*
 * In the functions below, when the kernel refuses an ethtool netlink
 * request the return value is its errno and the reason exactly its
 * extack message (strerror() text without one); the ethtool ioctl has
 * no message: the reason is "DEV: what was asked (ETHTOOL_CMD): strerror".
 * -ENOENT: the kernel has no ethtool netlink family; -ENODEV: the device
 * is gone; -EPROTO: a malformed reply; -ENOMEM; socket errors.
 */

/*
 * Header split (ethtool tcp-data-split) on (@on not 0) or off, through
 * ethtool netlink (rings get, then set when it differs). The value before
 * the first change is recorded. On, a device with hds-thresh gets 0
 * (that value recorded too).
 * Returns 0, or -errno with a reason: -EINVAL (NULL @n); -EBUSY (off
 * while other owners have queues set up); the kernel's (-EOPNOTSUPP:
 * the driver cannot set it; -EINVAL: off while device memory is bound;
 * -EPERM).
 */
int devmem_nic_header_split(struct devmem_nic *n, int on);

/*
 * Keep rx queues @first..@last (inclusive) out of the RSS indirection
 * table, in place of those this state kept out before: the table (of the
 * device's size) spreads round robin over the rx queues no owner keeps
 * out (ETHTOOL_GRXRINGS, ETHTOOL_GRXFHINDIR, ETHTOOL_SRXFHINDIR).
 * Nothing is written when the table already is that. The table before
 * the first owner's change is recorded; one that was the kernel's default
 * spread is recorded as "default" and restored as the default (which also
 * lets a later channel change re-spread it).
 * Returns 0, or -errno with a reason: -EINVAL (NULL @n, @first > @last,
 * @last not below the rx queue count, no queue left for RSS); -EBUSY
 * (another owner has one of the queues); -EOPNOTSUPP (no RSS table); the
 * kernel's (-EPERM, ...).
 */
int devmem_nic_rss_exclude(struct devmem_nic *n, uint32_t first,
			   uint32_t last);

/*
 * Steer TCP flow @f to rx queue @queue with an n-tuple rule (flow type
 * tcp4 or tcp6; destination address and port, and the source address
 * when @f->has_src). The ntuple feature (rx-ntuple-filter) is turned on
 * over ethtool netlink if it is off, and that is recorded. The rule goes
 * at RX_CLS_LOC_ANY when the driver picks locations itself, else at the
 * lowest free location; it is recorded, and its location stored in *@loc
 * (@loc may be NULL). On failure nothing stays changed.
 * Returns 0, or -errno with a reason: -EINVAL (NULL @n or @f, a family
 * other than AF_INET/AF_INET6, port 0); -EBUSY (another owner has
 * @queue); -EOPNOTSUPP (the ntuple feature cannot be turned on);
 * -ENOSPC (no free location); the kernel's (-EINVAL: e.g. no queue
 * @queue; -EOPNOTSUPP; -EPERM).
 */
int devmem_nic_flow_add(struct devmem_nic *n, const struct devmem_flow *f,
			uint32_t queue, uint32_t *loc);

/*
 * Delete the n-tuple rule at location @loc (ETHTOOL_SRXCLSRLDEL), and
 * forget it if it was recorded. Any rule may be deleted.
 * Returns 0, or -errno with a reason: -EINVAL (NULL @n); the kernel's
 * (-ENOENT: no rule there; -EPERM).
 */
int devmem_nic_flow_del(struct devmem_nic *n, uint32_t loc);

/*
 * What a devmem TCP receiver needs: header split on, queues
 * @first..@last out of RSS and, when @f is not NULL, @f steered to
 * @first. On failure it undoes the changes it recorded and returns the
 * error of the step that failed, with that step's reason.
 * Returns 0, or -errno as devmem_nic_header_split(),
 * devmem_nic_rss_exclude() and devmem_nic_flow_add() (arguments are
 * checked before anything changes).
 */
int devmem_nic_setup(struct devmem_nic *n, uint32_t first, uint32_t last,
		     const struct devmem_flow *f);

/*
 * Undo this owner's set-up: its rules deleted, newest first, and its
 * queues given back to RSS (the table spreads over the queues no other
 * owner keeps out). The last owner also puts back what the device was:
 * the ntuple feature off, the RSS table, header split and hds-thresh.
 * A rule no longer there counts as undone; one whose location now holds
 * another rule is left in place (-ESTALE). Goes on past a failure:
 * changes undone are forgotten, those that failed stay recorded (a
 * second call retries them) and in the files; an owner with nothing left
 * removes its file. A state read with devmem_nic_new_from_file() is no
 * owner: it undoes everything it holds and touches no state file; with
 * nothing recorded it makes no system call.
 * Returns 0, or the first error with its reason: -EINVAL (NULL @n);
 * -ESTALE; the errors above.
 */
int devmem_nic_restore(struct devmem_nic *n);

/*
 * The recorded state to file @path and back, so that another process
 * can restore it. The file is text, one line each:
 *
 *   libdevmem-nic 1                   the format's version
 *   device IFINDEX NAME               the device
 * then one line per change, oldest first (restore goes bottom up):
 *   header-split on|off|unknown       the value before
 *   ntuple off                        the feature was off
 *   rss default                       the table was the default spread
 *   rss table SIZE Q0 Q1 ... Q(SIZE-1)   the table before
 *   hds-thresh BYTES                  the value before
 *   rule LOC QUEUE DST PORT SRC|any   a rule inserted
 *   queues FIRST LAST                 queues kept out of RSS
 *
 * Fields are separated by one space, every line ends with a newline.
 * devmem_nic_save() writes a temporary file next to @path (mode 0600)
 * and renames it over @path. Returns 0, or -errno with a reason:
 * -EINVAL (NULL @n, NULL or empty @path); the errors of mkstemp(),
 * write(), fsync() and rename(); -ENOMEM.
 *
 * devmem_nic_new_from_file() reads it strictly and checks that IFINDEX still
 * names device NAME in the caller's namespace. The state it returns is
 * no owner: its restore undoes all it holds and leaves the state
 * directory alone (devmem_nic_new_recover() is the way to take over
 * what an owner left); its first change makes it an owner, what the
 * device file records taking the place of its own records of the same
 * kind. Returns 0 and stores the
 * state in *@np, or -errno with a reason: -EINVAL (NULL @np or @path; a
 * malformed file: the reason says "PATH:LINE: what"; a file over 1 MiB);
 * -ENODEV (no device IFINDEX, or it is now named otherwise); open()'s
 * and read()'s errors (-ENOENT, -EACCES, -EIO); -ENOMEM.
 */
int devmem_nic_save(const struct devmem_nic *n, const char *path);
int devmem_nic_new_from_file(struct devmem_nic **np, const char *path);

/*
 * io_uring receive (through liburing)
 */

/*
 * recvmsg(MSG_SOCK_DEVMEM) as io_uring requests (IORING_OP_RECVMSG),
 * through liburing: up to @entries receives in flight on one ring, on one
 * socket or several, each with a msghdr and a control buffer of its own
 * that grows on ETOOSMALL as devmem_recv()'s does.
 *
 * Every byte a completion reports is described by that request's own
 * control messages: a kernel with devmem TCP (mainline, or Linux 6.1
 * with this project) passes MSG_SOCK_DEVMEM through io_uring and never
 * splits one receive over two completions.
 *
 * The kernel serves the requests of one socket in an order of its own:
 * to read a stream in order, keep one request per socket in flight. Not
 * safe for concurrent use.
 */
struct devmem_uring;

/* The most requests one ring keeps in flight. */
#define DEVMEM_URING_MAX_ENTRIES	4096U

/*
 * What one request got. The caller sets @size to
 * sizeof(struct devmem_uring_completion) before devmem_uring_wait() or
 * devmem_uring_peek(); the library fills in only what that size covers.
 * rx stays the last member: the completion grows as struct
 * devmem_rx_result does, and the library sets rx.size to the part of
 * @size that rx covers.
 */
struct devmem_uring_completion {
	size_t size;
	uint64_t user_data;	/* as given to devmem_uring_submit() */
	int fd;			/* its socket */
	void *buf;		/* its buffer for host-memory data */
	ssize_t ret;		/* bytes received, 0 at end of stream, -errno */
	struct devmem_rx_result rx;	/* as devmem_recv()'s, empty unless
					 * ret > 0; its arrays belong to the
					 * ring: valid until its next
					 * devmem_uring_wait()/_peek() or
					 * devmem_uring_free() */
};

/*
 * Create a ring for up to @entries requests in flight (0 picks 16; at
 * most DEVMEM_URING_MAX_ENTRIES), each with a control buffer that starts
 * with room for @frags fragments (as devmem_rx_new()). @cmsg_flags are
 * devmem_parse_cmsgs() flags.
 * Returns 0 and stores the ring in *@up, or -errno with a reason:
 * -EINVAL (NULL @up, too many @entries, unknown @cmsg_flags); -ENOMEM;
 * io_uring_setup()'s errors: -ENOSYS (a kernel without io_uring), -EPERM
 * (io_uring disabled: the kernel.io_uring_disabled sysctl, a seccomp
 * filter), -EMFILE, ...
 */
int devmem_uring_new(struct devmem_uring **up, unsigned int entries,
		     unsigned int frags, unsigned int cmsg_flags);

/* Cancels the requests in flight and waits for them (what they received
 * is dropped: tokens stay with their sockets until those close), then
 * closes the ring. NULL is a no-op.
 */
void devmem_uring_free(struct devmem_uring *u);

/*
 * Queue recvmsg(@fd, MSG_SOCK_DEVMEM | @flags) into @buf (@len bytes for
 * host-memory data, which must stay valid until the request completes)
 * and hand it to the kernel. @flags are passed as they are: MSG_DONTWAIT
 * makes a request with nothing to read complete at once with -EAGAIN.
 * @user_data comes back in its completion.
 * Returns 0; -EBUSY when every request of the ring is in flight (reap one
 * first); -EINVAL (NULL @u, NULL @buf with a nonzero @len); -EBADF
 * (negative @fd). When io_uring_enter() fails here the request stays
 * queued and goes to the kernel with the next devmem_uring_wait() or
 * devmem_uring_peek(), which report the error if it lasts.
 */
int devmem_uring_submit(struct devmem_uring *u, int fd, void *buf,
			size_t len, int flags, uint64_t user_data);

/*
 * Wait for a request to complete and describe it in *@c. A request the
 * kernel answered with ETOOSMALL (its control buffer cannot hold one
 * cmsg; nothing was consumed) gets a buffer twice as large and goes back
 * to the kernel, up to DEVMEM_RX_MAX_FRAGS fragments, without a
 * completion. c->ret is what devmem_recv() would return: bytes, 0 at end
 * of stream, or -errno: recvmsg's errors (-EAGAIN with MSG_DONTWAIT,
 * -EINTR, -ECONNRESET, ...); -EMSGSIZE (the largest control buffer is
 * still too small); -ENOMEM (growing it); -EBADMSG and -EPROTO as
 * devmem_recv() (close the socket then); -ECANCELED. devmem_last_error()
 * says why when c->ret is negative, and is empty otherwise.
 * Returns 0 with a completion in *@c, or -errno with a reason and *@c
 * untouched: -EINVAL (NULL @u or @c, c->size too small); -ENOENT (no
 * request in flight); -EINTR (a signal came first); io_uring_enter()'s
 * other errors; a linked recycler's flush errors
 * (devmem_uring_set_recycler()).
 * devmem_uring_peek() waits for nothing: -EAGAIN when no request has
 * completed.
 */
int devmem_uring_wait(struct devmem_uring *u,
		      struct devmem_uring_completion *c);
int devmem_uring_peek(struct devmem_uring *u,
		      struct devmem_uring_completion *c);

/* The ring's fd, readable (poll, epoll) while a completion is ready:
 * then devmem_uring_peek() reaps it. -EINVAL with a reason for NULL @u.
 */
int devmem_uring_fd(const struct devmem_uring *u);

/* Requests in flight: submitted and not yet reaped. */
unsigned int devmem_uring_inflight(const struct devmem_uring *u);

/*
 * Link recycler @rc (made for socket @fd) to the ring's receives on @fd,
 * or unlink it (@rc NULL; unlink before freeing the recycler). Before
 * devmem_uring_wait() blocks, and before devmem_uring_peek() says
 * -EAGAIN, every linked recycler of a socket with a request in flight
 * hands its pending tokens back, as devmem_rx_set_recycler() does for
 * devmem_recv(): no receive waits for buffers the application has
 * already given back. A flush that fails fails that wait or peek with
 * its error and reason, the tokens kept. Requests already in flight on
 * @fd follow the change. Returns 0, or -errno with a reason: -EINVAL
 * (NULL @u; @rc is another socket's); -EBADF (negative @fd); -ENOMEM.
 * Since 1.3.
 */
int devmem_uring_set_recycler(struct devmem_uring *u, int fd,
			      struct devmem_recycler *rc);

/*
 * devmem_rx_set_stall_check() for the ring: devmem_uring_wait() waits at
 * most @ms at a time, and after each wait without a completion fails
 * with -ENOBUFS and the reason when the application holds every buffer
 * of binding @b (devmem_binding_held(): the tokens that completions of
 * sockets with a linked recycler handed out). The recyclers of the
 * requests in flight are flushed before each wait, as always. @b must
 * outlive its use by @u; NULL stops the watch.
 * Returns 0; -EINVAL with a reason (NULL @u, a tx binding, @ms 0 or over
 * INT_MAX). Since 1.4.
 */
int devmem_uring_set_stall_check(struct devmem_uring *u,
				 const struct devmem_binding *b,
				 unsigned int ms);

/*
 * io_uring receive on the application's ring
 */

/* liburing's, laid out by the kernel's io_uring ABI (linux/io_uring.h) */
struct io_uring_sqe;
struct io_uring_cqe;

/*
 * One receive request for a ring the application owns: a msghdr and a
 * control buffer that live as long as the request is in flight, and grow
 * on ETOOSMALL as devmem_recv()'s does. The application gets the SQEs,
 * submits and reaps; the library fills the SQE and reads the CQE. One
 * request is one receive in flight at a time: make one per receive to
 * have in flight at once. Not safe for concurrent use.
 */
struct devmem_urecv;

/* devmem_urecv_complete(): the kernel answered ETOOSMALL (the control
 * buffer cannot hold one cmsg; nothing was consumed) and the buffer has
 * grown: prepare and submit the same receive again. Negative, so that it
 * is never taken for bytes; the kernel's ETOOSMALL, which no user-space
 * errno shares.
 */
#define DEVMEM_URECV_RESUBMIT	(-525)

/*
 * Create a request whose control buffer starts with room for @frags
 * fragments (0 picks 128; at most DEVMEM_RX_MAX_FRAGS). @cmsg_flags are
 * devmem_parse_cmsgs() flags.
 * Returns 0 and stores the request in *@rp, or -errno with a reason:
 * -EINVAL (NULL @rp, unknown @cmsg_flags); -ENOMEM.
 */
int devmem_urecv_new(struct devmem_urecv **rp, unsigned int frags,
		     unsigned int cmsg_flags);

/* Free only while the request is not in flight: the kernel writes into
 * it until its completion. NULL is a no-op.
 */
void devmem_urecv_free(struct devmem_urecv *r);

/*
 * Fill @sqe with IORING_OP_RECVMSG of recvmsg(@fd, MSG_SOCK_DEVMEM |
 * @flags) into @buf (@len bytes for host-memory data, valid until the
 * completion) and the request's msghdr, as io_uring_prep_recvmsg() does:
 * the SQE's flags are cleared and its user_data is left alone. Then the
 * caller sets user_data, flags (links), submits, and hands the completion
 * to devmem_urecv_complete(). The request is in flight from here to then.
 * Returns 0, or -errno with a reason and @sqe untouched: -EINVAL (NULL @r
 * or @sqe, NULL @buf with a nonzero @len); -EBADF (negative @fd); -EBUSY
 * (the request is in flight).
 */
int devmem_urecv_prep(struct devmem_urecv *r, struct io_uring_sqe *sqe,
		      int fd, void *buf, size_t len, int flags);

/*
 * The end of the receive whose completion is @cqe (not consumed: the
 * caller marks it seen), described in *@res as devmem_recv() describes
 * its receive (the caller sets res->size; empty unless the return is
 * positive). The arrays belong to the request: valid until its next
 * devmem_urecv_complete() or devmem_urecv_free().
 * Returns the bytes received, 0 at end of stream, DEVMEM_URECV_RESUBMIT
 * (no failure: devmem_last_error() stays empty), or -errno with a
 * reason: the receive's errors (-EAGAIN with MSG_DONTWAIT, -ECANCELED,
 * -ECONNRESET, -ENOTSOCK, ...); -EMSGSIZE (the largest control buffer is
 * still too small); -ENOMEM (growing it); -EBADMSG and -EPROTO as
 * devmem_recv() (close the socket then); -EINVAL (NULL @r, @cqe or @res,
 * res->size too small, the request not in flight). After any other
 * return the request is no longer in flight.
 */
ssize_t devmem_urecv_complete(struct devmem_urecv *r,
			      const struct io_uring_cqe *cqe,
			      struct devmem_rx_result *res);

#ifdef __cplusplus
}
#endif

#endif /* LIBDEVMEM_DEVMEM_H */
