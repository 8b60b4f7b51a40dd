/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * Generic netlink over libnl-genl-3: the "netdev" family, which bind.c and
 * introspect.c use, and the "ethtool" family of nic.c. Never installed;
 * devmem.h knows nothing of libnl.
 */
#ifndef LIBDEVMEM_NETLINK_H
#define LIBDEVMEM_NETLINK_H

#include "internal.h"

#include <linux/netdev.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

/* A generic netlink socket that knows one family's id and version. */
struct devmem_nl {
	struct nl_sock *sk;
	int family;
	uint8_t version;	/* of the requests devmem_nl_request() builds */
};

/*
 * Open a socket with extended acks and resolve family @name, whose
 * requests will carry @version. Returns 0, or -errno with the reason
 * set: -ENOENT when the kernel has no such family; the socket calls'
 * errors; -ENOMEM.
 */
int devmem_nl_open_family(struct devmem_nl *nl, const char *name,
			  uint8_t version);
/* The same for the netdev family (-ENOENT says what that means). */
int devmem_nl_open(struct devmem_nl *nl);
/* Closes the socket (which ends whatever the kernel tied to it). */
void devmem_nl_close(struct devmem_nl *nl);

/*
 * A request @cmd of the socket's family (a dump when @dump) with room
 * for @attrs bytes of attributes. Returns NULL when out of memory.
 */
struct nl_msg *devmem_nl_request(const struct devmem_nl *nl, uint8_t cmd,
				 int dump, size_t attrs);

/* Called for each reply message; returns 0, or -errno to stop. */
typedef int (*devmem_nl_reply_fn)(struct nl_msg *msg, void *arg);

/*
 * Send @req (always consumed) and read until its ack, or the end of the
 * dump, calling @fn (may be NULL) for each reply. Returns 0; the kernel's
 * -errno with devmem_last_error() set to its extack message, or to the
 * error's strerror() when it sent none; @fn's error; the socket calls'
 * errors.
 */
int devmem_nl_transact(struct devmem_nl *nl, struct nl_msg *req,
		       devmem_nl_reply_fn fn, void *arg);

/* The attributes of a generic netlink reply, tb[0..max]; -EPROTO if
 * malformed.
 */
int devmem_nl_parse(struct nl_msg *msg, struct nlattr **tb, int max);

/* An attribute of 1 or 4 bytes, or a "uint" (4 or 8); -EPROTO
 * otherwise, with the reason naming @what.
 */
int devmem_nl_u8(const struct nlattr *attr, const char *what, uint8_t *v);
int devmem_nl_u32(const struct nlattr *attr, const char *what, uint32_t *v);
int devmem_nl_uint(const struct nlattr *attr, const char *what, uint64_t *v);

#endif /* LIBDEVMEM_NETLINK_H */
