/* SPDX-License-Identifier: GPL-2.0 */
/* page-pool-get for the netdev family (net/core/netdev-genl.c). */
#ifndef _NET_CORE_PAGE_POOL_USER_H
#define _NET_CORE_PAGE_POOL_USER_H

#include <net/genetlink.h>

/* Header fields of the messages a page-pool-get reply is made of. */
struct page_pool_nl_msg {
	const struct genl_family *family;
	u32 portid;
	u32 seq;
	int flags;
};

#ifdef CONFIG_PAGE_POOL
/* Pool @id as a message in @rsp: -ENOENT when @net does not see it. */
int page_pool_nl_get_one(struct sk_buff *rsp, struct net *net, u32 id,
			 const struct page_pool_nl_msg *msg);

/* Pools @net sees, from id *@next on; *@next follows what was sent. */
int page_pool_nl_dump(struct sk_buff *skb, struct net *net,
		      unsigned long *next, const struct page_pool_nl_msg *msg);
#else
/* A kernel without page pools has none to show. */
static inline int page_pool_nl_get_one(struct sk_buff *rsp, struct net *net,
				       u32 id,
				       const struct page_pool_nl_msg *msg)
{
	return -ENOENT;
}

static inline int page_pool_nl_dump(struct sk_buff *skb, struct net *net,
				    unsigned long *next,
				    const struct page_pool_nl_msg *msg)
{
	return 0;
}
#endif

#endif /* _NET_CORE_PAGE_POOL_USER_H */
