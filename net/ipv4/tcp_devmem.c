// SPDX-License-Identifier: GPL-2.0
/*
 * Device-memory TCP: the receive side of a socket.
 *
 * An skb whose frags are net_iovs (skb_frags_readable() false) carries
 * payload the CPU must not touch. recvmsg(MSG_SOCK_DEVMEM) copies the
 * bytes such an skb holds in its linear part, reporting them with an
 * SO_DEVMEM_LINEAR cmsg, and for each frag puts an SO_DEVMEM_DMABUF cmsg:
 * where the bytes are in the dma-buf, how many, the binding's id and a
 * token. The token names a reference on the net_iov that the socket
 * keeps in its token table (sk->sk_user_frags) until the application
 * gives it back with SO_DEVMEM_DONTNEED or closes the socket.
 *
 * The table is an array indexed by token, with a queue of free slots
 * threaded through it: handing out a token and taking one back are a
 * few loads and stores, under the socket lock that recvmsg and
 * setsockopt hold anyway. Free slots are reused oldest first, so the
 * tokens of a stream keep rising and the application's DONTNEED ranges
 * stay long.
 *
 * A NIC that packs payloads puts a flow's consecutive segments side by
 * side in one buffer. Within one recvmsg call, a frag whose bytes
 * continue the last cmsg's in the same net_iov extends that cmsg: one
 * token and one cmsg for the run, whichever skbs it came in.
 *
 * A cmsg is never truncated: when the control buffer cannot hold the
 * next one, recvmsg stops there (ETOOSMALL if nothing was received yet)
 * and the data stays queued. A token exists only once its cmsg is out.
 */
#include <linux/errno.h>
#include <linux/in.h>
#include <linux/net.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <net/netmem.h>
#include <net/page_pool_mp.h>
#include <net/sock.h>
#include <net/tcp_devmem.h>

/* At most this many token ranges, and tokens looked at, per DONTNEED call. */
#define TCP_DEVMEM_DONTNEED_RANGES	128
#define TCP_DEVMEM_DONTNEED_FRAGS	1024
/* DONTNEED and close give net_iovs back this many at a time
 * (net_iov_put_bulk()); DONTNEED reads up to this many ranges without
 * allocating.
 */
#define TCP_DEVMEM_DONTNEED_BATCH	32
#define TCP_DEVMEM_DONTNEED_STACK	8

/* Slots of a new token table, and the most a table may grow to: 8 MiB,
 * allocated under the socket lock, for a million buffers held at once.
 * Tokens are 1 to the size.
 */
#define TCP_DEVMEM_TOKENS_MIN		256
#define TCP_DEVMEM_TOKENS_MAX		BIT(20)

/**
 * struct tcp_devmem_tokens - a socket's token table
 * @size: slots
 * @used: slots handed out at least once: tokens 1 to @used
 * @free_head: the free token to hand out next, or 0
 * @free_tail: the token freed last, or 0
 * @slot: token T is slot T - 1: a net_iov lent with it, or, while free,
 *	the next free token shifted left by one with the low bit set
 *	(a net_iov pointer never has it)
 */
struct tcp_devmem_tokens {
	u32 size;
	u32 used;
	u32 free_head;
	u32 free_tail;
	unsigned long slot[];
};

void tcp_devmem_init_sock(struct sock *sk)
{
	sk->sk_user_frags = NULL;
}

void tcp_devmem_release(struct sock *sk)
{
	struct net_iov *batch[TCP_DEVMEM_DONTNEED_BATCH];
	struct tcp_devmem_tokens *t = sk->sk_user_frags;
	u32 i, n = 0;

	if (!t)
		return;
	for (i = 0; i < t->used; i++) {
		if (t->slot[i] & 1)
			continue;
		batch[n++] = (struct net_iov *)t->slot[i];
		if (n == ARRAY_SIZE(batch)) {
			net_iov_put_bulk(batch, n);
			n = 0;
		}
	}
	net_iov_put_bulk(batch, n);
	kvfree(t);
	sk->sk_user_frags = NULL;
}

/* A table twice the size (or a first one), with the old one's slots. */
static struct tcp_devmem_tokens *tcp_devmem_tokens_grow(struct sock *sk)
{
	struct tcp_devmem_tokens *old = sk->sk_user_frags, *t;
	u32 size = old ? old->size * 2 : TCP_DEVMEM_TOKENS_MIN;

	if (size > TCP_DEVMEM_TOKENS_MAX)
		return NULL;
	t = kvmalloc(struct_size(t, slot, size),
		     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!t)
		return NULL;
	if (old) {
		memcpy(t, old, struct_size(old, slot, old->used));
		kvfree(old);
	} else {
		t->used = 0;
		t->free_head = 0;
		t->free_tail = 0;
	}
	t->size = size;
	sk->sk_user_frags = t;
	return t;
}

/* The token the next tcp_devmem_token_commit() hands out, with room made
 * for it; 0 if there is none (ENOMEM).
 */
static u32 tcp_devmem_token_next(struct sock *sk)
{
	struct tcp_devmem_tokens *t = sk->sk_user_frags;

	if (t && t->free_head)
		return t->free_head;
	if (!t || t->used == t->size) {
		t = tcp_devmem_tokens_grow(sk);
		if (!t)
			return 0;
	}
	return t->used + 1;
}

/* Hand out @tok, which tcp_devmem_token_next() just named, for @niov
 * (whose reference the caller gives the table).
 */
static void tcp_devmem_token_commit(struct sock *sk, u32 tok,
				    struct net_iov *niov)
{
	struct tcp_devmem_tokens *t = sk->sk_user_frags;

	if (tok == t->free_head) {
		t->free_head = t->slot[tok - 1] >> 1;
		if (!t->free_head)
			t->free_tail = 0;
	} else {
		t->used = tok;
	}
	t->slot[tok - 1] = (unsigned long)niov;
}

/* Take @tok out of @t: the net_iov it lent (its reference goes to the
 * caller), or NULL if it lends none.
 */
static struct net_iov *tcp_devmem_token_take(struct tcp_devmem_tokens *t,
					     u32 tok)
{
	unsigned long v;

	if (!tok || tok > t->used)
		return NULL;
	v = t->slot[tok - 1];
	if (v & 1)
		return NULL;
	t->slot[tok - 1] = 1;
	if (t->free_tail)
		t->slot[t->free_tail - 1] = (unsigned long)tok << 1 | 1;
	else
		t->free_head = tok;
	t->free_tail = tok;
	return (struct net_iov *)v;
}

/* Room for one more whole cmsg? */
static int tcp_devmem_cmsg_room(const struct msghdr *msg)
{
	if (!msg->msg_control ||
	    msg->msg_controllen < CMSG_LEN(sizeof(struct dmabuf_cmsg)))
		return -ETOOSMALL;
	return 0;
}

/* Bytes of the linear part: to the user buffer, then their cmsg. */
static int tcp_devmem_linear(struct msghdr *msg, const void *data, int len)
{
	struct dmabuf_cmsg dc = { .frag_size = len };
	int err;

	err = tcp_devmem_cmsg_room(msg);
	if (err)
		return err;
	if (copy_to_iter(data, len, &msg->msg_iter) != len)
		return -EFAULT;
	return put_cmsg(msg, SOL_SOCKET, SO_DEVMEM_LINEAR, sizeof(dc), &dc);
}

/* An SO_DEVMEM_DMABUF cmsg. Into a native control buffer in user memory
 * with room for it, padding included, it goes in one user-access window;
 * any other buffer takes put_cmsg()'s way.
 */
static int tcp_devmem_put_dmabuf(struct msghdr *msg,
				 const struct dmabuf_cmsg *dc)
{
	const size_t space = CMSG_SPACE(sizeof(*dc));
	struct cmsghdr __user *cm = msg->msg_control_user;
	struct dmabuf_cmsg __user *ud = CMSG_USER_DATA(cm);

	if (!msg->msg_control_is_user || (msg->msg_flags & MSG_CMSG_COMPAT) ||
	    msg->msg_controllen < space)
		return put_cmsg(msg, SOL_SOCKET, SO_DEVMEM_DMABUF, sizeof(*dc),
				(void *)dc);
	if (!user_write_access_begin(cm, space))
		return -EFAULT;
	unsafe_put_user(CMSG_LEN(sizeof(*dc)), &cm->cmsg_len, efault);
	unsafe_put_user(SOL_SOCKET, &cm->cmsg_level, efault);
	unsafe_put_user(SO_DEVMEM_DMABUF, &cm->cmsg_type, efault);
	unsafe_put_user(dc->frag_offset, &ud->frag_offset, efault);
	unsafe_put_user(dc->frag_size, &ud->frag_size, efault);
	unsafe_put_user(dc->frag_token, &ud->frag_token, efault);
	unsafe_put_user(dc->dmabuf_id, &ud->dmabuf_id, efault);
	unsafe_put_user(dc->flags, &ud->flags, efault);
	user_write_access_end();
	msg->msg_control_user += space;
	msg->msg_controllen -= space;
	return 0;
efault:
	user_write_access_end();
	return -EFAULT;
}

/* Do @len bytes at @off in @niov continue the call's last cmsg? Then
 * that cmsg grows to take them in: they share its token. Only where the
 * cmsg can be rewritten: a native control buffer in user memory, and
 * only while the token still lends @niov: recvmsg lets the socket lock
 * go while it waits for data, and another thread may have given the
 * token back meanwhile (the cmsg was already out).
 */
static bool tcp_devmem_extend(struct sock *sk, struct tcp_devmem_rx *rx,
			      struct net_iov *niov, unsigned long off, int len)
{
	const struct tcp_devmem_tokens *t = sk->sk_user_frags;

	if (rx->niov != niov || rx->end != off)
		return false;
	if (t->slot[rx->token - 1] != (unsigned long)niov)
		return false;
	if (put_user(rx->size + len, rx->size_at))
		return false;
	rx->size += len;
	rx->end += len;
	return true;
}

/* @len bytes of @frag from @off: a token, then the cmsg naming it - or
 * the last cmsg grows, when the bytes continue it.
 */
static int tcp_devmem_frag(struct sock *sk, struct msghdr *msg,
			   const skb_frag_t *frag, unsigned int off, int len,
			   int flags, struct tcp_devmem_rx *rx)
{
	struct net_iov *niov = skb_frag_net_iov(frag);
	struct cmsghdr __user *cm;
	struct dmabuf_cmsg dc;
	u32 token;
	int err;

	/* An unreadable skb holds net_iovs only (skb_try_coalesce(), GRO). */
	if (unlikely(!niov)) {
		net_err_ratelimited("devmem: host page in an unreadable skb\n");
		return -EFAULT;
	}
	dc.frag_offset = net_iov_offset(niov) + skb_frag_off(frag) + off;
	if (tcp_devmem_extend(sk, rx, niov, dc.frag_offset, len))
		return 0;
	err = tcp_devmem_cmsg_room(msg);
	if (err)
		return err;

	token = tcp_devmem_token_next(sk);
	if (!token)
		return -ENOMEM;
	dc.frag_size = len;
	dc.frag_token = token;
	dc.dmabuf_id = net_iov_binding_id(niov);
	dc.flags = 0;
	cm = msg->msg_control_user;
	err = tcp_devmem_put_dmabuf(msg, &dc);
	if (err)
		return err;
	net_iov_get(niov);
	tcp_devmem_token_commit(sk, token, niov);
	rx->niov = NULL;
	if (msg->msg_control_is_user && !(flags & MSG_CMSG_COMPAT)) {
		rx->niov = niov;
		rx->token = token;
		rx->end = dc.frag_offset + len;
		rx->size = len;
		rx->size_at = CMSG_USER_DATA(cm) +
			offsetof(struct dmabuf_cmsg, frag_size);
	}
	return 0;
}

/* One skb (no frag list): its linear part, then its frags. */
static int tcp_devmem_skb(struct sock *sk, const struct sk_buff *skb,
			  unsigned int offset, struct msghdr *msg, int len,
			  int flags, struct tcp_devmem_rx *rx)
{
	unsigned int start = skb_headlen(skb), end;
	int i, n, done = 0, err = 0;

	if (offset < start) {
		n = min_t(int, start - offset, len);
		err = tcp_devmem_linear(msg, skb->data + offset, n);
		if (err)
			return err;
		/* what follows is after these bytes in the stream */
		rx->niov = NULL;
		done += n;
		offset += n;
	}
	for (i = 0; done < len && i < skb_shinfo(skb)->nr_frags; i++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];

		end = start + skb_frag_size(frag);
		if (offset < end) {
			n = min_t(int, end - offset, len - done);
			err = tcp_devmem_frag(sk, msg, frag, offset - start, n,
					      flags, rx);
			if (err)
				break;
			done += n;
			offset += n;
		}
		start = end;
	}
	return done ?: err;
}

/* Bytes in @skb itself: its linear part and its frags, not its frag list. */
static unsigned int tcp_devmem_own_len(const struct sk_buff *skb)
{
	unsigned int n = skb_headlen(skb);
	int i;

	if (!skb_has_frag_list(skb))
		return skb->len;

	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++)
		n += skb_frag_size(&skb_shinfo(skb)->frags[i]);
	return n;
}

int tcp_recvmsg_devmem(struct sock *sk, const struct sk_buff *skb,
		       unsigned int offset, struct msghdr *msg, int len,
		       int flags, struct tcp_devmem_rx *rx)
{
	const struct sk_buff *iter = skb;
	unsigned int own;
	int n, want, done = 0;

	/* Device memory is only ever received by who asked for it. */
	if (!(flags & MSG_SOCK_DEVMEM))
		return -EFAULT;

	/* The skb, then the members of its frag list (GRO), each an
	 * unreadable skb of its own.
	 */
	while (iter && done < len) {
		own = tcp_devmem_own_len(iter);
		if (offset < own) {
			want = min_t(int, own - offset, len - done);
			n = tcp_devmem_skb(sk, iter, offset, msg, want, flags,
					   rx);
			if (n < 0)
				return done ?: n;
			done += n;
			if (n < want)
				break;
			offset = 0;
		} else {
			offset -= own;
		}
		iter = iter == skb ? skb_shinfo(skb)->frag_list : iter->next;
	}
	return done;
}

int sock_devmem_dontneed(struct sock *sk, sockptr_t optval,
			 unsigned int optlen)
{
	struct dmabuf_token on_stack[TCP_DEVMEM_DONTNEED_STACK], *ranges;
	struct net_iov *batch[TCP_DEVMEM_DONTNEED_BATCH];
	struct tcp_devmem_tokens *t = sk->sk_user_frags;
	unsigned int i, nr, looked = 0, n = 0;
	struct net_iov *niov;
	int freed = 0;
	u32 j;

	if (sk->sk_type != SOCK_STREAM || sk->sk_protocol != IPPROTO_TCP)
		return -EBADF;
	if (optlen % sizeof(*ranges) ||
	    optlen > sizeof(*ranges) * TCP_DEVMEM_DONTNEED_RANGES)
		return -EINVAL;
	nr = optlen / sizeof(*ranges);
	if (!nr)
		return 0;

	ranges = on_stack;
	if (nr > ARRAY_SIZE(on_stack)) {
		ranges = kvmalloc_array(nr, sizeof(*ranges), GFP_KERNEL);
		if (!ranges)
			return -ENOMEM;
	}
	if (copy_from_sockptr(ranges, optval, optlen)) {
		freed = -EFAULT;
		goto out;
	}

	/* Every token looked at counts against the limit, found or not, so
	 * that a call stays short whatever the ranges say. Tokens are this
	 * socket's only: another socket's numbers find nothing here.
	 */
	for (i = 0; i < nr && looked < TCP_DEVMEM_DONTNEED_FRAGS; i++) {
		for (j = 0; j < ranges[i].token_count &&
		     looked < TCP_DEVMEM_DONTNEED_FRAGS; j++, looked++) {
			niov = t ? tcp_devmem_token_take(t,
					ranges[i].token_start + j) : NULL;
			if (!niov)
				continue;
			batch[n++] = niov;
			freed++;
			if (n == ARRAY_SIZE(batch)) {
				net_iov_put_bulk(batch, n);
				n = 0;
			}
		}
	}
	net_iov_put_bulk(batch, n);
out:
	if (ranges != on_stack)
		kvfree(ranges);
	return freed;
}
