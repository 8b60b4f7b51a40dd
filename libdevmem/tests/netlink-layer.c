// SPDX-License-Identifier: GPL-2.0
/*
 * The library's netlink layer (src/netlink.c), below the public API:
 * the family resolved; the kernel's extack message passed through as the
 * reason, exactly, and strerror() when there is none; a do request's
 * reply then its ack; an error that ends a dump (NLMSG_DONE); a request
 * given up half-way, whose late answers the next request on the same
 * socket must not take for its own; attribute sizes. The requests are
 * malformed on purpose, so any kernel with the family refuses them the
 * same way (its policy checks). Links the static library. Skips without
 * the netdev family.
 */
#include "netlink.h"

#include <errno.h>
#include <string.h>

#include "netdev.h"

static struct devmem_nl nl;
static int lo;

struct replies {
	int calls;
	int err;			/* what the callback returns */
	uint32_t type;			/* of the last queue */
};

static int queue_reply(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[NETDEV_A_QUEUE_MAX + 1];
	struct replies *r = arg;
	uint32_t ifindex;

	r->calls++;
	if (devmem_nl_parse(msg, tb, NETDEV_A_QUEUE_MAX) ||
	    devmem_nl_u32(tb[NETDEV_A_QUEUE_TYPE], "type", &r->type) ||
	    devmem_nl_u32(tb[NETDEV_A_QUEUE_IFINDEX], "ifindex", &ifindex) ||
	    (int)ifindex != lo)
		return -EPROTO;
	return r->err;
}

/* queue-get (do) of lo's queue 0 of @type. */
static int get_queue(uint32_t type, struct replies *r)
{
	struct nl_msg *req;

	req = devmem_nl_request(&nl, NETDEV_CMD_QUEUE_GET, 0, 64);
	if (!req || nla_put_u32(req, NETDEV_A_QUEUE_IFINDEX, lo) ||
	    nla_put_u32(req, NETDEV_A_QUEUE_TYPE, type) ||
	    nla_put_u32(req, NETDEV_A_QUEUE_ID, 0))
		return -ENOMEM;
	return devmem_nl_transact(&nl, req, queue_reply, r);
}

static int reason_is(const char *text)
{
	if (!strcmp(devmem_last_error(), text))
		return 1;
	fprintf(stderr, "reason \"%s\", not \"%s\"\n", devmem_last_error(),
		text);
	return 0;
}

static int test_family(void)
{
	/* dynamic generic netlink ids start above the controller's */
	CHECK(nl.family > GENL_ID_CTRL);
	return T_PASS;
}

static int test_do(void)
{
	struct replies r = { 0 };
	int ret;

	ret = need_up("lo");
	if (ret)
		return ret;
	CHECK_EQ(get_queue(NETDEV_QUEUE_TYPE_RX, &r), 0);
	CHECK_EQ(r.calls, 1);
	CHECK_EQ(r.type, NETDEV_QUEUE_TYPE_RX);
	return T_PASS;
}

/* The policy's check of the queue type (at most tx, 1): -ERANGE with
 * the message nla_validate_int_range_unsigned() sets.
 */
static int test_extack(void)
{
	struct replies r = { 0 };

	CHECK_EQ(get_queue(7, &r), -ERANGE);
	CHECK(reason_is("integer out of range"));
	CHECK_EQ(r.calls, 0);
	return T_PASS;
}

/* A command the family does not have: genetlink says -EOPNOTSUPP and
 * nothing more, so the reason is strerror()'s.
 */
static int test_no_extack(void)
{
	struct nl_msg *req;

	req = devmem_nl_request(&nl, 0xfe, 0, 0);
	CHECK(req);
	CHECK_EQ(devmem_nl_transact(&nl, req, NULL, NULL), -EOPNOTSUPP);
	CHECK(reason_is("Operation not supported"));
	return T_PASS;
}

/* A queue dump of a device that does not exist fails in its
 * NLMSG_DONE, after no queue.
 */
static int test_dump_error(void)
{
	struct replies r = { 0 };
	struct nl_msg *req;

	req = devmem_nl_request(&nl, NETDEV_CMD_QUEUE_GET, 1, 8);
	CHECK(req);
	CHECK_EQ(nla_put_u32(req, NETDEV_A_QUEUE_IFINDEX, 0x7ffffff0), 0);
	CHECK_EQ(devmem_nl_transact(&nl, req, queue_reply, &r), -ENODEV);
	CHECK(devmem_last_error()[0]);
	CHECK_EQ(r.calls, 0);
	return T_PASS;
}

/* A callback's error ends the request before its ack, which stays in the
 * socket: the next request must skip it and wait for its own.
 */
static int test_given_up(void)
{
	struct replies r = { .err = -ECANCELED };
	int ret;

	ret = need_up("lo");
	if (ret)
		return ret;
	CHECK_EQ(get_queue(NETDEV_QUEUE_TYPE_RX, &r), -ECANCELED);
	CHECK_EQ(r.calls, 1);
	r = (struct replies){ 0 };
	CHECK_EQ(get_queue(NETDEV_QUEUE_TYPE_TX, &r), 0);
	CHECK_EQ(r.calls, 1);
	CHECK_EQ(r.type, NETDEV_QUEUE_TYPE_TX);
	return T_PASS;
}

static int test_attr_sizes(void)
{
	uint64_t v8 = 0x123456789aULL, v;
	uint32_t v4 = 77, u;
	uint16_t v2 = 5;
	struct nlattr *a2, *a4, *a8;
	struct nl_msg *msg;

	msg = nlmsg_alloc();
	CHECK(msg);
	CHECK_EQ(nla_put(msg, 1, sizeof(v2), &v2), 0);
	CHECK_EQ(nla_put(msg, 2, sizeof(v4), &v4), 0);
	CHECK_EQ(nla_put(msg, 3, sizeof(v8), &v8), 0);
	a2 = nlmsg_find_attr(nlmsg_hdr(msg), 0, 1);
	a4 = nlmsg_find_attr(nlmsg_hdr(msg), 0, 2);
	a8 = nlmsg_find_attr(nlmsg_hdr(msg), 0, 3);
	CHECK(a2 && a4 && a8);

	CHECK_EQ(devmem_nl_u32(a4, "x", &u), 0);
	CHECK_EQ(u, 77);
	CHECK_EQ(devmem_nl_u32(a8, "x", &u), -EPROTO);
	CHECK(reason_is("the kernel's x has 8 bytes"));
	CHECK_EQ(devmem_nl_u32(NULL, "queue id", &u), -EPROTO);
	CHECK(reason_is("the kernel's reply lacks the queue id"));
	CHECK_EQ(devmem_nl_uint(a4, "x", &v), 0);
	CHECK_EQ(v, 77);
	CHECK_EQ(devmem_nl_uint(a8, "x", &v), 0);
	CHECK_EQ(v, v8);
	CHECK_EQ(devmem_nl_uint(a2, "y", &v), -EPROTO);
	CHECK(reason_is("the kernel's y has 2 bytes"));
	nlmsg_free(msg);
	return T_PASS;
}

static const struct t_case cases[] = {
	{ "family", test_family },
	{ "do", test_do },
	{ "extack", test_extack },
	{ "no-extack", test_no_extack },
	{ "dump-error", test_dump_error },
	{ "given-up", test_given_up },
	{ "attr-sizes", test_attr_sizes },
};

int main(void)
{
	int ret;

	lo = (int)if_nametoindex("lo");
	ret = devmem_nl_open(&nl);
	if (ret == -ENOENT)
		return t_skip("%s", devmem_last_error());
	if (ret) {
		fprintf(stderr, "devmem_nl_open: %s\n", devmem_last_error());
		return T_FAIL;
	}
	ret = T_RUN(cases);
	devmem_nl_close(&nl);
	return ret;
}
