// SPDX-License-Identifier: GPL-2.0
/*
 * devmem_parse_cmsgs() on control buffers laid out the way the kernel lays
 * them out: fragments, linear bytes, both, other cmsgs, and every kind of
 * damage it must refuse.
 */
#include <linux/uio.h>
#define __iovec_defined 1

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <devmem.h>

#include "test.h"

#define DC_SIZE		sizeof(struct dmabuf_cmsg)
#define NR_SLOTS	16

struct fake {
	struct msghdr msg;
	union {
		unsigned char buf[CMSG_SPACE(DC_SIZE) * NR_SLOTS];
		struct cmsghdr align;
	} u;
	size_t used;
};

static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->msg.msg_control = f->u.buf;
}

/* Append a cmsg as put_cmsg() does; @len_adj skews its cmsg_len. */
static struct cmsghdr *fake_put(struct fake *f, int level, int type,
				const void *data, size_t len, int len_adj)
{
	struct cmsghdr *cm = (struct cmsghdr *)(f->u.buf + f->used);

	cm->cmsg_level = level;
	cm->cmsg_type = type;
	cm->cmsg_len = CMSG_LEN(len) + len_adj;
	memcpy(CMSG_DATA(cm), data, len);
	f->used += CMSG_SPACE(len);
	f->msg.msg_controllen = f->used;
	return cm;
}

static void fake_frag(struct fake *f, uint64_t off, uint32_t size,
		      uint32_t token, uint32_t id)
{
	struct dmabuf_cmsg dc = {
		.frag_offset = off,
		.frag_size = size,
		.frag_token = token,
		.dmabuf_id = id,
	};

	fake_put(f, SOL_SOCKET, SCM_DEVMEM_DMABUF, &dc, sizeof(dc), 0);
}

static void fake_linear(struct fake *f, uint32_t size)
{
	struct dmabuf_cmsg dc = { .frag_size = size };

	fake_put(f, SOL_SOCKET, SCM_DEVMEM_LINEAR, &dc, sizeof(dc), 0);
}

static int parse(struct fake *f, unsigned int flags, struct devmem_frag *frags,
		 size_t max, size_t *nr, uint64_t *linear)
{
	return devmem_parse_cmsgs(&f->msg, flags, frags, max, nr, linear);
}

static int test_empty(void)
{
	struct devmem_frag frags[4];
	struct msghdr msg = {};
	uint64_t linear = 99;
	size_t nr = 99;
	struct fake f;

	CHECK_EQ(devmem_parse_cmsgs(&msg, 0, frags, 4, &nr, &linear), 0);
	CHECK_EQ(nr, 0);
	CHECK_EQ(linear, 0);

	fake_init(&f);
	CHECK_EQ(parse(&f, 0, frags, 4, &nr, &linear), 0);
	CHECK_EQ(nr, 0);
	return T_PASS;
}

static int test_frags(void)
{
	struct devmem_frag frags[4];
	uint64_t linear = 99;
	size_t nr = 0;
	struct fake f;

	fake_init(&f);
	fake_frag(&f, 0, 4096, 1, 7);
	fake_frag(&f, (1ULL << 40) + 8192, 1448, 2, 7);
	fake_frag(&f, 12288, 1, 0xffffffff, 9);
	CHECK_EQ(parse(&f, 0, frags, 4, &nr, &linear), 0);
	CHECK_EQ(nr, 3);
	CHECK_EQ(linear, 0);
	CHECK_EQ(frags[0].offset, 0);
	CHECK_EQ(frags[0].size, 4096);
	CHECK_EQ(frags[0].token, 1);
	CHECK_EQ(frags[0].dmabuf_id, 7);
	CHECK(frags[1].offset == (1ULL << 40) + 8192);
	CHECK_EQ(frags[1].size, 1448);
	CHECK_EQ(frags[1].token, 2);
	CHECK_EQ(frags[2].offset, 12288);
	CHECK_EQ(frags[2].size, 1);
	CHECK(frags[2].token == 0xffffffff);
	CHECK_EQ(frags[2].dmabuf_id, 9);
	return T_PASS;
}

static int test_linear(void)
{
	uint64_t linear = 0;
	size_t nr = 99;
	struct fake f;

	fake_init(&f);
	fake_linear(&f, 100);
	fake_linear(&f, 200);
	/* No array needed when no fragment comes. */
	CHECK_EQ(parse(&f, 0, NULL, 0, &nr, &linear), 0);
	CHECK_EQ(nr, 0);
	CHECK_EQ(linear, 300);
	return T_PASS;
}

static int test_mixed(void)
{
	struct devmem_frag frags[4];
	uint64_t linear = 0;
	size_t nr = 0;
	struct fake f;

	fake_init(&f);
	fake_linear(&f, 66);
	fake_frag(&f, 4096, 1382, 5, 1);
	fake_frag(&f, 8192, 4096, 6, 1);
	CHECK_EQ(parse(&f, 0, frags, 4, &nr, &linear), 0);
	CHECK_EQ(nr, 2);
	CHECK_EQ(linear, 66);
	CHECK_EQ(frags[1].token, 6);

	/* Either output may be left out. */
	CHECK_EQ(parse(&f, 0, frags, 4, NULL, NULL), 0);
	return T_PASS;
}

static int test_ctrunc(void)
{
	struct devmem_frag frags[4];
	struct fake f;

	fake_init(&f);
	fake_frag(&f, 0, 4096, 1, 1);
	f.msg.msg_flags = MSG_CTRUNC;
	CHECK_EQ(parse(&f, 0, frags, 4, NULL, NULL), -EBADMSG);
	CHECK_EQ(parse(&f, DEVMEM_CMSG_SKIP_OTHER, frags, 4, NULL, NULL),
		 -EBADMSG);
	return T_PASS;
}

static int test_bad_length(void)
{
	struct dmabuf_cmsg dc = {};
	struct devmem_frag frags[4];
	struct fake f;

	/* A devmem cmsg must carry exactly one struct dmabuf_cmsg. */
	fake_init(&f);
	fake_put(&f, SOL_SOCKET, SCM_DEVMEM_DMABUF, &dc, 16, 0);
	CHECK_EQ(parse(&f, 0, frags, 4, NULL, NULL), -EPROTO);
	CHECK_EQ(parse(&f, DEVMEM_CMSG_SKIP_OTHER, frags, 4, NULL, NULL),
		 -EPROTO);

	fake_init(&f);
	fake_put(&f, SOL_SOCKET, SCM_DEVMEM_LINEAR, &dc, sizeof(dc), 8);
	f.used += 8;
	f.msg.msg_controllen = f.used;
	CHECK_EQ(parse(&f, 0, frags, 4, NULL, NULL), -EPROTO);

	/* Shorter than its own header. */
	fake_init(&f);
	fake_frag(&f, 0, 4096, 1, 1);
	((struct cmsghdr *)f.u.buf)->cmsg_len = sizeof(struct cmsghdr) - 1;
	CHECK_EQ(parse(&f, 0, frags, 4, NULL, NULL), -EPROTO);

	/* Longer than the buffer: first, and after a good one (where
	 * CMSG_NXTHDR() would end the walk quietly).
	 */
	fake_init(&f);
	fake_frag(&f, 0, 4096, 1, 1);
	f.msg.msg_controllen -= 8;
	CHECK_EQ(parse(&f, 0, frags, 4, NULL, NULL), -EPROTO);

	fake_init(&f);
	fake_frag(&f, 0, 4096, 1, 1);
	fake_frag(&f, 4096, 4096, 2, 1);
	((struct cmsghdr *)(f.u.buf + CMSG_SPACE(DC_SIZE)))->cmsg_len = 4096;
	CHECK_EQ(parse(&f, 0, frags, 4, NULL, NULL), -EPROTO);
	return T_PASS;
}

static int test_other(void)
{
	struct devmem_frag frags[4];
	struct dmabuf_cmsg dc = {};
	uint64_t linear = 0;
	int inq = 1234;
	size_t nr = 0;
	struct fake f;

	/* Another option's cmsg (TCP_INQ), then devmem ones. */
	fake_init(&f);
	fake_put(&f, SOL_TCP, TCP_CM_INQ, &inq, sizeof(inq), 0);
	fake_linear(&f, 10);
	fake_frag(&f, 0, 4096, 3, 1);
	CHECK_EQ(parse(&f, 0, frags, 4, &nr, &linear), -EPROTO);
	CHECK_EQ(parse(&f, DEVMEM_CMSG_SKIP_OTHER, frags, 4, &nr, &linear), 0);
	CHECK_EQ(nr, 1);
	CHECK_EQ(linear, 10);
	CHECK_EQ(frags[0].token, 3);

	/* A devmem type at another level is not devmem. */
	fake_init(&f);
	fake_put(&f, SOL_TCP, SCM_DEVMEM_DMABUF, &dc, sizeof(dc), 0);
	CHECK_EQ(parse(&f, 0, frags, 4, &nr, NULL), -EPROTO);
	CHECK_EQ(parse(&f, DEVMEM_CMSG_SKIP_OTHER, frags, 4, &nr, NULL), 0);
	CHECK_EQ(nr, 0);

	/* Another SOL_SOCKET cmsg last, without its padding. */
	fake_init(&f);
	fake_frag(&f, 0, 4096, 4, 1);
	fake_put(&f, SOL_SOCKET, SCM_RIGHTS, &inq, sizeof(inq), 0);
	f.msg.msg_controllen = f.used - (CMSG_SPACE(sizeof(inq)) -
					 CMSG_LEN(sizeof(inq)));
	CHECK_EQ(parse(&f, 0, frags, 4, &nr, NULL), -EPROTO);
	CHECK_EQ(parse(&f, DEVMEM_CMSG_SKIP_OTHER, frags, 4, &nr, NULL), 0);
	CHECK_EQ(nr, 1);
	return T_PASS;
}

static int test_too_small(void)
{
	struct devmem_frag frags[3];
	size_t nr = 0;
	struct fake f;
	int i;

	fake_init(&f);
	for (i = 0; i < 5; i++)
		fake_frag(&f, i * 4096, 4096, 100 + i, 1);
	memset(frags, 0xa5, sizeof(frags));
	CHECK_EQ(parse(&f, 0, frags, 2, &nr, NULL), -ENOSPC);
	CHECK_EQ(nr, 5);
	CHECK_EQ(frags[0].token, 100);
	CHECK_EQ(frags[1].token, 101);
	CHECK(frags[2].token == 0xa5a5a5a5);	/* past max_frags: untouched */

	CHECK_EQ(parse(&f, 0, NULL, 0, &nr, NULL), -ENOSPC);
	CHECK_EQ(nr, 5);

	/* Malformed wins over too small. */
	((struct cmsghdr *)f.u.buf)->cmsg_type = SCM_RIGHTS;
	CHECK_EQ(parse(&f, 0, frags, 2, &nr, NULL), -EPROTO);
	return T_PASS;
}

static int test_bad_args(void)
{
	struct devmem_frag frags[1];
	struct fake f;

	fake_init(&f);
	fake_frag(&f, 0, 4096, 1, 1);
	CHECK_EQ(devmem_parse_cmsgs(NULL, 0, frags, 1, NULL, NULL), -EINVAL);
	CHECK_EQ(parse(&f, 1U << 7, frags, 1, NULL, NULL), -EINVAL);
	CHECK_EQ(parse(&f, 0, NULL, 1, NULL, NULL), -EINVAL);
	f.msg.msg_control = NULL;
	CHECK_EQ(parse(&f, 0, frags, 1, NULL, NULL), -EINVAL);
	return T_PASS;
}

static const struct t_case cases[] = {
	{ "empty", test_empty },
	{ "frags", test_frags },
	{ "linear", test_linear },
	{ "mixed", test_mixed },
	{ "ctrunc", test_ctrunc },
	{ "bad-length", test_bad_length },
	{ "other-cmsgs", test_other },
	{ "array-too-small", test_too_small },
	{ "bad-args", test_bad_args },
};

int main(void)
{
	return T_RUN(cases);
}
