// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Requests to the kernel's generic netlink families ("netdev", "ethtool")
 * and their answers, over libnl-genl-3.
 *
 * libnl builds and parses the messages and reads the socket. The socket
 * itself is opened, bound and written here with plain system calls, so
 * that their errno reaches the caller as it is: libnl folds errno into
 * codes of its own. For the same reason the kernel's answer to a request
 * (the error of its ack, and the extended ack's message, which says what
 * was wrong in words a person can act on) is read from each raw message
 * before libnl's own handling of acks.
 */
#include "netlink.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netlink/attr.h>
#include <netlink/handlers.h>
#include <netlink/socket.h>

/* One request in flight: what its answers are matched against. */
struct devmem_nl_wait {
	uint32_t seq;
	int done;		/* by the ack, the dump's end, or an error */
	int err;
	devmem_nl_reply_fn fn;
	void *arg;
};

/*
 * libnl's code for a failure of its own (reading the socket, out of
 * memory, a malformed message) as the errno it stands for.
 */
static int devmem_nl_errno(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_INTR:		return -EINTR;
	case NLE_BAD_SOCK:	return -EBADF;
	case NLE_AGAIN:		return -EAGAIN;
	case NLE_NOMEM:		return -ENOMEM;
	case NLE_INVAL:		return -EINVAL;
	case NLE_PERM:		return -EPERM;
	case NLE_NOACCESS:	return -EACCES;
	case NLE_BUSY:		return -EBUSY;
	case NLE_NODEV:		return -ENODEV;
	case NLE_OBJ_NOTFOUND:	return -ENOENT;
	case NLE_FAILURE:	return -EIO;
	}
	return -EPROTO;
}

static int devmem_nl_fail_libnl(int nlerr, const char *what)
{
	return devmem_fail(devmem_nl_errno(nlerr), "%s: %s", what,
			   nl_geterror(nlerr));
}

/*
 * The kernel refused the request with @err (a negative errno). Its
 * extended ack, when it sent one, is @len bytes of attributes at @tlvs;
 * the reason becomes its message exactly, or strerror() without one.
 */
static int devmem_nl_refused(int err, void *tlvs, int len)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	const char *text;
	char buf[64];
	int n;

	if (len > 0 && !nla_parse(tb, NLMSGERR_ATTR_MAX, tlvs, len, NULL) &&
	    tb[NLMSGERR_ATTR_MSG]) {
		text = nla_data(tb[NLMSGERR_ATTR_MSG]);
		n = (int)strnlen(text, nla_len(tb[NLMSGERR_ATTR_MSG]));
		if (n)
			return devmem_fail(err, "%.*s", n, text);
	}
	return devmem_fail(err, "%s", strerror_r(-err, buf, sizeof(buf)));
}

/*
 * An NLMSG_ERROR: 0 for an ack, else the kernel's error. The request
 * comes back after the error unless NLM_F_CAPPED says it was left out;
 * the extended ack's attributes follow (NLM_F_ACK_TLVS).
 */
static int devmem_nl_ack(struct nlmsghdr *h)
{
	const struct nlmsgerr *e = nlmsg_data(h);
	int len = nlmsg_datalen(h);
	size_t off = sizeof(*e);

	if (len < (int)sizeof(e->error))
		return devmem_fail(-EPROTO, "truncated netlink ack");
	if (!e->error)
		return 0;
	if (e->error > 0)
		return devmem_fail(-EPROTO, "netlink ack with error %d",
				   e->error);
	if (len >= (int)sizeof(*e) && !(h->nlmsg_flags & NLM_F_CAPPED) &&
	    e->msg.nlmsg_len > sizeof(e->msg))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	off = NLMSG_ALIGN(off);
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS) || off >= (size_t)len)
		return devmem_nl_refused(e->error, NULL, 0);
	return devmem_nl_refused(e->error, (char *)e + off, len - (int)off);
}

/* NLMSG_DONE ends a dump: an int, 0 or the error that cut it short,
 * then (NLM_F_ACK_TLVS) the extended ack.
 */
static int devmem_nl_done(struct nlmsghdr *h)
{
	int len = nlmsg_datalen(h), err;
	size_t off = NLMSG_ALIGN(sizeof(err));

	if (len < (int)sizeof(err))
		return 0;
	memcpy(&err, nlmsg_data(h), sizeof(err));
	if (err >= 0)
		return 0;
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS) || off >= (size_t)len)
		return devmem_nl_refused(err, NULL, 0);
	return devmem_nl_refused(err, (char *)nlmsg_data(h) + off,
				 len - (int)off);
}

/* Every message, before libnl looks at it. */
static int devmem_nl_msg_in(struct nl_msg *msg, void *arg)
{
	struct devmem_nl_wait *w = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	int err;

	/* An answer to an earlier request that was given up on. */
	if (h->nlmsg_seq != w->seq)
		return NL_SKIP;

	switch (h->nlmsg_type) {
	case NLMSG_NOOP:
		return NL_SKIP;
	case NLMSG_ERROR:
		w->err = devmem_nl_ack(h);
		break;
	case NLMSG_DONE:
		w->err = devmem_nl_done(h);
		break;
	case NLMSG_OVERRUN:
		w->err = devmem_fail(-EPROTO, "netlink overrun");
		break;
	default:
		err = w->fn ? w->fn(msg, w->arg) : 0;
		if (!err)
			return NL_SKIP;
		w->err = err;
		break;
	}
	w->done = 1;
	return NL_STOP;
}

int devmem_nl_transact(struct devmem_nl *nl, struct nl_msg *req,
		       devmem_nl_reply_fn fn, void *arg)
{
	struct devmem_nl_wait w = { .fn = fn, .arg = arg };
	struct nlmsghdr *h;
	struct nl_cb *cb;
	ssize_t n;
	int ret;

	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(req);
		return devmem_fail(-ENOMEM, "out of memory");
	}
	nl_cb_set(cb, NL_CB_MSG_IN, NL_CB_CUSTOM, devmem_nl_msg_in, &w);

	/* sequence number, NLM_F_REQUEST and NLM_F_ACK */
	nl_complete_msg(nl->sk, req);
	h = nlmsg_hdr(req);
	w.seq = h->nlmsg_seq;
	n = send(nl_socket_get_fd(nl->sk), h, h->nlmsg_len, 0);
	nlmsg_free(req);
	if (n < 0) {
		w.err = devmem_fail_errno(-errno, "netlink send");
		w.done = 1;
	}

	while (!w.done) {
		ret = nl_recvmsgs(nl->sk, cb);
		if (ret < 0) {
			w.err = devmem_nl_fail_libnl(ret, "netlink receive");
			break;
		}
	}
	nl_cb_put(cb);
	return w.err;
}

struct nl_msg *devmem_nl_request(const struct devmem_nl *nl, uint8_t cmd,
				 int dump, size_t attrs)
{
	struct nl_msg *req;

	req = nlmsg_alloc_size(NLMSG_HDRLEN + GENL_HDRLEN + attrs);
	if (!req)
		return NULL;
	if (!genlmsg_put(req, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0,
			 dump ? NLM_F_DUMP : 0, cmd, nl->version)) {
		nlmsg_free(req);
		return NULL;
	}
	return req;
}

int devmem_nl_parse(struct nl_msg *msg, struct nlattr **tb, int max)
{
	int ret;

	ret = genlmsg_parse(nlmsg_hdr(msg), 0, tb, max, NULL);
	if (ret < 0)
		return devmem_fail(-EPROTO, "malformed netlink reply: %s",
				   nl_geterror(ret));
	return 0;
}

/* An attribute of exactly @size bytes. */
static int devmem_nl_fixed(const struct nlattr *attr, const char *what,
			   void *v, int size)
{
	if (!attr)
		return devmem_fail(-EPROTO, "the kernel's reply lacks the %s",
				   what);
	if (nla_len(attr) != size)
		return devmem_fail(-EPROTO, "the kernel's %s has %d bytes",
				   what, nla_len(attr));
	memcpy(v, nla_data(attr), size);
	return 0;
}

int devmem_nl_u8(const struct nlattr *attr, const char *what, uint8_t *v)
{
	return devmem_nl_fixed(attr, what, v, sizeof(*v));
}

int devmem_nl_u32(const struct nlattr *attr, const char *what, uint32_t *v)
{
	return devmem_nl_fixed(attr, what, v, sizeof(*v));
}

int devmem_nl_uint(const struct nlattr *attr, const char *what, uint64_t *v)
{
	uint32_t v32 = 0;

	if (attr && nla_len(attr) == sizeof(*v)) {
		memcpy(v, nla_data(attr), sizeof(*v));
		return 0;
	}
	if (devmem_nl_u32(attr, what, &v32))
		return -EPROTO;
	*v = v32;
	return 0;
}

/* The controller's answer to CTRL_CMD_GETFAMILY. */
static int devmem_nl_family_reply(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[CTRL_ATTR_MAX + 1];
	int *family = arg;
	uint16_t id;
	int err;

	err = devmem_nl_parse(msg, tb, CTRL_ATTR_MAX);
	if (err)
		return err;
	if (!tb[CTRL_ATTR_FAMILY_ID] ||
	    nla_len(tb[CTRL_ATTR_FAMILY_ID]) != sizeof(id))
		return devmem_fail(-EPROTO,
				   "the kernel's family reply has no id");
	memcpy(&id, nla_data(tb[CTRL_ATTR_FAMILY_ID]), sizeof(id));
	*family = id;
	return 0;
}

static int devmem_nl_resolve(struct devmem_nl *nl, const char *name)
{
	struct nl_msg *req;
	int err;

	req = nlmsg_alloc_size(NLMSG_HDRLEN + GENL_HDRLEN +
			       nla_total_size(strlen(name) + 1));
	if (!req)
		return devmem_fail(-ENOMEM, "out of memory");
	if (!genlmsg_put(req, NL_AUTO_PORT, NL_AUTO_SEQ, GENL_ID_CTRL, 0, 0,
			 CTRL_CMD_GETFAMILY, 1) ||
	    nla_put_string(req, CTRL_ATTR_FAMILY_NAME, name)) {
		nlmsg_free(req);
		return devmem_fail(-ENOMEM, "out of memory");
	}
	nl->family = 0;
	err = devmem_nl_transact(nl, req, devmem_nl_family_reply, &nl->family);
	if (err == -ENOENT)
		return devmem_fail(err,
				   "this kernel has no \"%s\" generic netlink family",
				   name);
	if (!err && !nl->family)
		return devmem_fail(-EPROTO,
				   "the kernel's family reply has no id");
	return err;
}

int devmem_nl_open_family(struct devmem_nl *nl, const char *name,
			  uint8_t version)
{
	struct sockaddr_nl local = { .nl_family = AF_NETLINK };
	int fd, one = 1, ret, err;

	nl->sk = NULL;
	nl->version = version;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return devmem_fail_errno(-errno, "generic netlink socket");
	/* Without them (kernels before 4.12) errors come without reasons. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	/* The kernel picks the port: bindings are tied to it. */
	if (bind(fd, (struct sockaddr *)&local, sizeof(local))) {
		err = devmem_fail_errno(-errno, "binding a netlink socket");
		goto err_close_fd;
	}

	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		err = devmem_fail(-ENOMEM, "out of memory");
		goto err_close_fd;
	}
	ret = nl_socket_set_fd(nl->sk, NETLINK_GENERIC, fd);
	if (ret < 0) {
		err = devmem_nl_fail_libnl(ret, "netlink socket");
		goto err_free_sk;
	}
	/* Replies as large as the kernel makes them (ethtool's bitsets). */
	nl_socket_enable_msg_peek(nl->sk);
	/* From here on the fd is the nl_sock's: devmem_nl_close() closes it. */
	err = devmem_nl_resolve(nl, name);
	if (err)
		devmem_nl_close(nl);
	return err;

err_free_sk:
	nl_socket_free(nl->sk);
	nl->sk = NULL;
err_close_fd:
	close(fd);
	return err;
}

int devmem_nl_open(struct devmem_nl *nl)
{
	int err;

	err = devmem_nl_open_family(nl, NETDEV_FAMILY_NAME,
				    NETDEV_FAMILY_VERSION);
	if (err == -ENOENT)
		return devmem_fail(err,
				   "this kernel has no \"%s\" generic netlink family (device-memory TCP needs Linux 6.12 or later, or this project's kernel)",
				   NETDEV_FAMILY_NAME);
	return err;
}

void devmem_nl_close(struct devmem_nl *nl)
{
	/* nl_socket_free() closes the fd too. */
	nl_socket_free(nl->sk);
	nl->sk = NULL;
}
