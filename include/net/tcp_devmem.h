/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device-memory TCP receive (net/ipv4/tcp_devmem.c): recvmsg with
 * MSG_SOCK_DEVMEM reports where payload landed in a dma-buf and lends the
 * application a reference per fragment, named by a token in the socket's
 * token table (sk_user_frags); SO_DEVMEM_DONTNEED gives tokens back.
 */
#ifndef _NET_TCP_DEVMEM_H
#define _NET_TCP_DEVMEM_H

#include <linux/skbuff.h>
#include <linux/sockptr.h>
#include <linux/types.h>

struct msghdr;
struct net_iov;
struct sock;

/* The token table of a new socket, and its end. */
void tcp_devmem_init_sock(struct sock *sk);
void tcp_devmem_release(struct sock *sk);

/**
 * struct tcp_devmem_rx - what one recvmsg call has reported so far
 * @niov: the buffer its last SO_DEVMEM_DMABUF cmsg names, or NULL
 * @token: that cmsg's token, which must still lend @niov to extend it
 * @end: where in the dma-buf that cmsg's bytes end
 * @size: its frag_size
 * @size_at: its frag_size in the user's control buffer
 *
 * Bytes that continue the last cmsg's in the same buffer extend it
 * instead of taking a token and a cmsg of their own. Zeroed by the
 * caller at the start of each recvmsg.
 */
struct tcp_devmem_rx {
	struct net_iov *niov;
	u32 token;
	unsigned long end;
	u32 size;
	u32 __user *size_at;
};

/* recvmsg of up to @len bytes of an unreadable @skb from @offset, under
 * the socket lock; @rx is the call's state. Returns the bytes consumed
 * (they may be fewer than @len) or an error: EFAULT without
 * MSG_SOCK_DEVMEM in @flags, ETOOSMALL when the control buffer cannot
 * hold the next cmsg.
 */
int tcp_recvmsg_devmem(struct sock *sk, const struct sk_buff *skb,
		       unsigned int offset, struct msghdr *msg, int len,
		       int flags, struct tcp_devmem_rx *rx);

/* SO_DEVMEM_DONTNEED, under the socket lock: returns how many were freed. */
int sock_devmem_dontneed(struct sock *sk, sockptr_t optval,
			 unsigned int optlen);

#endif /* _NET_TCP_DEVMEM_H */
