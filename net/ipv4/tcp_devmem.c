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
#include <linux/uio.h>
#include <linux/xarray.h>
#include <net/netmem.h>
#include <net/sock.h>
#include <net/tcp_devmem.h>

/* At most this many token ranges, and frags freed, per DONTNEED call. */
#define TCP_DEVMEM_DONTNEED_RANGES	128
#define TCP_DEVMEM_DONTNEED_FRAGS	1024
/* Buffers taken out of the token table per round of its lock. */
#define TCP_DEVMEM_PUT_BATCH		64

/* Tokens are 1 to 2^31 - 1. XA_FLAGS_ALLOC1 alone does not keep 0 out:
 * erasing index 0 (a DONTNEED range that starts there) marks it free.
 */
static const struct xa_limit tcp_devmem_tokens = XA_LIMIT(1, INT_MAX);

void tcp_devmem_init_sock(struct sock *sk)
{
	xa_init_flags(&sk->sk_user_frags, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
}

void tcp_devmem_release(struct sock *sk)
{
	unsigned long token;
	void *entry;

	xa_for_each(&sk->sk_user_frags, token, entry)
		net_iov_put(entry);
	xa_destroy(&sk->sk_user_frags);
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

/* Do @len bytes at @off in @niov continue the call's last cmsg? Then
 * that cmsg grows to take them in: they share its token. Only where the
 * cmsg can be rewritten: a native control buffer in user memory.
 */
static bool tcp_devmem_extend(struct tcp_devmem_rx *rx, struct net_iov *niov,
			      unsigned long off, int len)
{
	if (rx->niov != niov || rx->end != off)
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
	struct dmabuf_cmsg dc = {};
	u32 token;
	int err;

	/* An unreadable skb holds net_iovs only (skb_try_coalesce(), GRO). */
	if (unlikely(!niov)) {
		net_err_ratelimited("devmem: host page in an unreadable skb\n");
		return -EFAULT;
	}
	dc.frag_offset = net_iov_offset(niov) + skb_frag_off(frag) + off;
	if (tcp_devmem_extend(rx, niov, dc.frag_offset, len))
		return 0;
	err = tcp_devmem_cmsg_room(msg);
	if (err)
		return err;

	net_iov_get(niov);
	err = xa_alloc_bh(&sk->sk_user_frags, &token, niov, tcp_devmem_tokens,
			  GFP_KERNEL);
	if (err) {
		net_iov_put(niov);
		return err;
	}
	dc.frag_size = len;
	dc.frag_token = token;
	dc.dmabuf_id = net_iov_binding_id(niov);
	cm = msg->msg_control_user;
	err = put_cmsg(msg, SOL_SOCKET, SO_DEVMEM_DMABUF, sizeof(dc), &dc);
	if (err) {
		xa_erase_bh(&sk->sk_user_frags, token);
		net_iov_put(niov);
		return err;
	}
	rx->niov = NULL;
	if (msg->msg_control_is_user && !(flags & MSG_CMSG_COMPAT)) {
		rx->niov = niov;
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

/* Erase tokens [@start, @start + @nr) from the table under its lock, as
 * long as fewer than @room were found and the call's limit of tokens
 * looked at (*@looked) is not reached; the buffers found go to @out,
 * their number to *@found. Returns how many tokens it went through.
 */
static u32 tcp_devmem_take(struct sock *sk, u32 start, u32 nr,
			   unsigned int *looked, struct net_iov **out,
			   unsigned int room, unsigned int *found)
{
	struct net_iov *niov;
	u32 j;

	*found = 0;
	xa_lock_bh(&sk->sk_user_frags);
	for (j = 0; j < nr && *found < room &&
	     *looked < TCP_DEVMEM_DONTNEED_FRAGS; j++) {
		(*looked)++;
		niov = __xa_erase(&sk->sk_user_frags, start + j);
		if (niov)
			out[(*found)++] = niov;
	}
	xa_unlock_bh(&sk->sk_user_frags);
	return j;
}

int sock_devmem_dontneed(struct sock *sk, sockptr_t optval,
			 unsigned int optlen)
{
	struct net_iov *batch[TCP_DEVMEM_PUT_BATCH];
	unsigned int i, k, nr, found, looked = 0;
	struct dmabuf_token *ranges;
	int freed = 0;
	u32 done, n;

	if (sk->sk_type != SOCK_STREAM || sk->sk_protocol != IPPROTO_TCP)
		return -EBADF;
	if (optlen % sizeof(*ranges) ||
	    optlen > sizeof(*ranges) * TCP_DEVMEM_DONTNEED_RANGES)
		return -EINVAL;
	nr = optlen / sizeof(*ranges);
	if (!nr)
		return 0;

	ranges = kvmalloc_array(nr, sizeof(*ranges), GFP_KERNEL);
	if (!ranges)
		return -ENOMEM;
	if (copy_from_sockptr(ranges, optval, optlen)) {
		kvfree(ranges);
		return -EFAULT;
	}

	/* Every token looked at counts against the limit, found or not, so
	 * that a call stays short whatever the ranges say. Tokens are this
	 * socket's only: another socket's numbers find nothing here. The
	 * table's lock is taken once per batch, and the buffers go back to
	 * their pools outside it.
	 */
	for (i = 0; i < nr && looked < TCP_DEVMEM_DONTNEED_FRAGS; i++) {
		for (done = 0; done < ranges[i].token_count &&
		     looked < TCP_DEVMEM_DONTNEED_FRAGS; done += n) {
			n = tcp_devmem_take(sk, ranges[i].token_start + done,
					    ranges[i].token_count - done,
					    &looked, batch, ARRAY_SIZE(batch),
					    &found);
			for (k = 0; k < found; k++)
				net_iov_put(batch[k]);
			freed += found;
		}
	}
	kvfree(ranges);
	return freed;
}
