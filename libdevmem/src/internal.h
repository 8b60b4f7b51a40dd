/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * libdevmem internals: the kernel's devmem socket ABI, error reporting
 * and the hooks the unit tests use. Never installed.
 *
 * Include this before any system header: the kernel's linux/uio.h, which
 * carries struct dmabuf_cmsg and struct dmabuf_token, defines struct
 * iovec as glibc does, so it comes first and glibc is told.
 */
#ifndef LIBDEVMEM_INTERNAL_H
#define LIBDEVMEM_INTERNAL_H

#include <linux/uio.h>
#define __iovec_defined 1

#include <sys/socket.h>

#include "devmem.h"

#ifndef SO_DEVMEM_DONTNEED
#error "the kernel headers lack device-memory TCP (SO_DEVMEM_*): build against the tree's uapi headers"
#endif
/* Not in the uapi headers, as in mainline. */
#ifndef MSG_SOCK_DEVMEM
#define MSG_SOCK_DEVMEM		0x2000000
#endif
/* Kernel-internal errno that devmem recvmsg returns to user space. */
#ifndef ETOOSMALL
#define ETOOSMALL		525
#endif

_Static_assert(sizeof(struct dmabuf_cmsg) == 24, "struct dmabuf_cmsg ABI");
_Static_assert(sizeof(struct dmabuf_token) == 8, "struct dmabuf_token ABI");

#define DEVMEM_EXPORT		__attribute__((visibility("default")))

/* The per-thread reason behind devmem_last_error(). devmem_fail() and
 * devmem_fail_errno() (which appends ": strerror(-err)") set it and
 * return @err, a negative errno. devmem_fail_const() keeps a string
 * literal as the reason without formatting it, for a failure a polling
 * caller meets on every call.
 */
void devmem_error_clear(void);
int devmem_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int devmem_fail_errno(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int devmem_fail_const(int err, const char *reason);

/*
 * The devmem cmsgs of @msg in order (src/cmsg.c): @fn gets each one's
 * payload, @linear telling SCM_DEVMEM_LINEAR from SCM_DEVMEM_DMABUF.
 * Returns 0, what @fn returned when not 0, -EBADMSG (MSG_CTRUNC) or
 * -EPROTO (malformed; another cmsg unless DEVMEM_CMSG_SKIP_OTHER).
 */
typedef int (*devmem_cmsg_fn)(int linear, const struct dmabuf_cmsg *dc,
			      void *arg);
int devmem_cmsg_walk(const struct msghdr *msg, unsigned int flags,
		     devmem_cmsg_fn fn, void *arg);
void devmem_frag_from_cmsg(struct devmem_frag *f,
			   const struct dmabuf_cmsg *dc);

/*
 * The control buffer of one recvmsg(MSG_SOCK_DEVMEM) and the arrays its
 * cmsgs are parsed into (src/recv.c): devmem_recv()'s context has one,
 * and so does each io_uring request (src/uring.c).
 */
struct devmem_ctrl {
	unsigned int slots;		/* devmem cmsgs the buffer holds */
	void *control;			/* slots * CMSG_SPACE(dmabuf_cmsg) */
	struct devmem_frag *frags;	/* slots entries */
	struct devmem_seg *segs;	/* slots + 1 entries */
};

/* Room for @frags fragments (0: 128; at most DEVMEM_RX_MAX_FRAGS).
 * Returns 0 or -ENOMEM.
 */
int devmem_ctrl_init(struct devmem_ctrl *c, unsigned int frags);
void devmem_ctrl_release(struct devmem_ctrl *c);
/* Point @msg (cleared) at @iov and the whole control buffer. */
void devmem_ctrl_msg(struct devmem_ctrl *c, struct msghdr *msg,
		     struct iovec *iov);
/* Double the buffer after ETOOSMALL: 0, -EMSGSIZE at the largest size,
 * -ENOMEM (the old buffer stays).
 */
int devmem_ctrl_grow(struct devmem_ctrl *c);
/* Set the reason for @err, devmem_ctrl_grow()'s failure; returns @err. */
int devmem_ctrl_grow_fail(const struct devmem_ctrl *c, int err);
/* What a recvmsg that returned @ret into @msg, with @buf for host data,
 * got: @ret itself when it is 0 or negative (with *@res empty), else @ret
 * with *@res filled from the cmsgs, or -EBADMSG/-EPROTO as devmem_recv()
 * documents. *@res is filled whole, its size field included.
 */
ssize_t devmem_ctrl_result(const struct devmem_ctrl *c,
			   const struct msghdr *msg, unsigned int cmsg_flags,
			   const void *buf, ssize_t ret,
			   struct devmem_rx_result *res);
/* The fields of the first version of struct devmem_rx_result, and of a
 * struct devmem_uring_completion whose rx is that.
 */
#define DEVMEM_RX_RESULT_SIZE_1_0 \
	(offsetof(struct devmem_rx_result, flags) + sizeof(unsigned int))
#define DEVMEM_URING_COMPLETION_SIZE_1_0 \
	(offsetof(struct devmem_uring_completion, rx) + DEVMEM_RX_RESULT_SIZE_1_0)
/* Copy @res to the caller's @dst, as much of it as dst->size says the
 * caller knows; dst->size itself stays. -EINVAL when dst->size is
 * smaller than the first version of the struct.
 */
int devmem_rx_result_copy(struct devmem_rx_result *dst,
			  const struct devmem_rx_result *res);

/* recvmsg(2), returning -errno: what the recvmsg hooks default to. */
ssize_t devmem_sys_recvmsg(int fd, struct msghdr *msg, int flags, void *arg);

/* Whether bind-tx made @b (src/bind.c). */
int devmem_binding_is_tx(const struct devmem_binding *b);

/*
 * Test hooks: replace the system call an object makes. Each returns what
 * the system call would, with -errno for failure.
 */
typedef ssize_t (*devmem_recvmsg_fn)(int fd, struct msghdr *msg, int flags,
				     void *arg);
void devmem_rx_set_recvmsg(struct devmem_rx *rx, devmem_recvmsg_fn fn,
			   void *arg);

/* With a hook, a devmem_urecv prepares a NOP and, when it completes with
 * 0, runs the hook on the request's msghdr for the result; a devmem_uring
 * sets it on every request.
 */
void devmem_urecv_set_recvmsg(struct devmem_urecv *r, devmem_recvmsg_fn fn,
			      void *arg);
void devmem_uring_set_recvmsg(struct devmem_uring *u, devmem_recvmsg_fn fn,
			      void *arg);

/* A sender's sendmsg(MSG_ZEROCOPY) calls and its reads of the error
 * queue (recvmsg(MSG_ERRQUEUE | MSG_DONTWAIT)); poll() and SO_ERROR
 * still go to the socket.
 */
typedef ssize_t (*devmem_sendmsg_fn)(int fd, const struct msghdr *msg,
				     int flags, void *arg);
void devmem_sender_set_hooks(struct devmem_sender *s,
			     devmem_sendmsg_fn sendmsg_fn,
			     devmem_recvmsg_fn recvmsg_fn, void *arg);
/* The id of the sender's next send, as if the socket had made others
 * before (for wrap-around); only while nothing is pending.
 */
void devmem_sender_set_next_id(struct devmem_sender *s, uint32_t id);
/* A binding object that the kernel knows nothing of, with id @id, as
 * bind-tx (@tx) or bind-rx would have made it; devmem_binding_free()
 * frees it.
 */
int devmem_binding_new_unbound(struct devmem_binding **bp, uint32_t id,
			       int tx);
/* Give an unbound binding @buffers buffers of @size bytes. */
void devmem_binding_set_buffers(struct devmem_binding *b, size_t buffers,
				size_t size);

typedef int (*devmem_dontneed_fn)(int fd, const struct dmabuf_token *ranges,
				  unsigned int nr, void *arg);
void devmem_recycler_set_dontneed(struct devmem_recycler *rc,
				  devmem_dontneed_fn fn, void *arg);
/* The tokens waiting in @rc. */
size_t devmem_recycler_nr(const struct devmem_recycler *rc);
/* The socket @rc hands tokens back to. */
int devmem_recycler_fd(const struct devmem_recycler *rc);

/*
 * NIC set-up against a fake device (tests/nic.c): with hooks a
 * devmem_nic sends nothing to the kernel, each hook standing for one
 * request. @data of ioctl is the ethtool ioctl's argument (struct
 * ethtool_*, its cmd first); hds values are ETHTOOL_TCP_DATA_SPLIT_*.
 */
struct devmem_nic_hooks {
	int (*ioctl)(void *arg, void *data);
	int (*hds_get)(void *arg, uint8_t *hds);
	int (*hds_set)(void *arg, uint8_t hds);
	/* NULL: a device without hds-thresh */
	int (*thresh_get)(void *arg, uint32_t *thresh);
	int (*thresh_set)(void *arg, uint32_t thresh);
	int (*ntuple_get)(void *arg, int *active, int *changeable);
	int (*ntuple_set)(void *arg, int on);
};
void devmem_nic_set_hooks(struct devmem_nic *n,
			  const struct devmem_nic_hooks *hooks, void *arg);

/*
 * The buffers of each rx binding of this process that the application
 * holds (src/held.c). devmem_held_take() counts a fragment at @offset of
 * binding @id and returns its buffer's index, DEVMEM_HELD_NONE when the
 * binding is not one of ours; devmem_held_put() gives it back.
 */
#define DEVMEM_HELD_NONE	UINT32_MAX
int devmem_held_register(uint32_t id, size_t buffers, size_t buffer_size);
void devmem_held_unregister(uint32_t id);
uint32_t devmem_held_take(uint32_t id, uint64_t offset);
void devmem_held_put(uint32_t id, uint32_t buf);
uint64_t devmem_held_get(uint32_t id, uint64_t *tokens);
/* After @ms without data: -ENOBUFS with the reason when the application
 * holds every buffer of @b, else 0.
 */
int devmem_held_stalled(const struct devmem_binding *b, unsigned int ms);
/* The checks of a stall check's binding and period, with the reason. */
int devmem_stall_check_args(const struct devmem_binding *b, unsigned int ms);

/* A receive linked to @rc reports the @nr fragments it handed out: held
 * until their tokens go back through @rc, or @rc is freed.
 */
void devmem_recycler_note(struct devmem_recycler *rc,
			  const struct devmem_frag *frags, size_t nr);

/* The entries of each rx ring of device @ifindex (ethtool rings: rx), 0
 * when the driver does not say. Returns 0, or -errno with a reason.
 */
int devmem_nic_rx_ring(int ifindex, uint32_t *entries);

#endif /* LIBDEVMEM_INTERNAL_H */
