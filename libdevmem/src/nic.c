// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * NIC set-up for a devmem TCP receiver: header split, an RSS carve-out
 * and n-tuple rules, each change recorded so that it can be undone.
 * Every change reserves its record before it touches the device, so a
 * change made is a change recorded. This file is the API and the record;
 * nic.h says where the rest lives.
 */
#include "nic.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void nic_reason_keep(struct nic_reason *r, int err)
{
	if (r->err || !err)
		return;
	r->err = err;
	snprintf(r->text, sizeof(r->text), "%s", devmem_last_error());
}

int nic_reason_return(const struct nic_reason *r)
{
	if (!r->err)
		return 0;
	return devmem_fail(r->err, "%s", r->text);
}

/* ---- the record ---- */

int nic_reserve(struct devmem_nic *n, size_t more)
{
	struct nic_change *ch;
	size_t cap;

	if (n->nr + more <= n->cap)
		return 0;
	cap = n->cap ? n->cap * 2 : 8;
	while (cap < n->nr + more)
		cap *= 2;
	ch = realloc(n->ch, cap * sizeof(*ch));
	if (!ch)
		return devmem_fail(-ENOMEM, "out of memory");
	n->ch = ch;
	n->cap = cap;
	return 0;
}

/* Room must have been reserved. */
struct nic_change *nic_record(struct devmem_nic *n, enum nic_kind kind)
{
	struct nic_change *c = &n->ch[n->nr++];

	memset(c, 0, sizeof(*c));
	c->kind = kind;
	return c;
}

struct nic_change *nic_find(struct devmem_nic *n, enum nic_kind kind)
{
	size_t i;

	for (i = 0; i < n->nr; i++)
		if (n->ch[i].kind == kind)
			return &n->ch[i];
	return NULL;
}

struct nic_change *nic_find_rule(struct devmem_nic *n, uint32_t loc)
{
	size_t i;

	for (i = 0; i < n->nr; i++)
		if (n->ch[i].kind == NIC_RULE && n->ch[i].rule.loc == loc)
			return &n->ch[i];
	return NULL;
}

void nic_change_free(struct nic_change *c)
{
	if (c->kind == NIC_RSS)
		free(c->rss.table);
}

void nic_forget(struct devmem_nic *n, struct nic_change *c)
{
	size_t i = c - n->ch;

	nic_change_free(c);
	memmove(c, c + 1, (n->nr - i - 1) * sizeof(*c));
	n->nr--;
}


/* ---- undo ---- */

static int nic_undo_one(struct devmem_nic *n, const struct nic_change *c)
{
	switch (c->kind) {
	case NIC_HDS:
		return nic_hds_set(n, c->hds);
	case NIC_HDS_THRESH:
		return nic_thresh_set(n, c->thresh);
	case NIC_NTUPLE:
		return nic_ntuple_want(n, 0);
	case NIC_RSS:
		return nic_rss_set(n, c->rss.table, c->rss.size);
	case NIC_RULE:
		return nic_rule_undo(n, c);
	case NIC_QUEUES:
		return 0;	/* the RSS table follows the queues left */
	}
	return devmem_fail(-EINVAL, "unknown change %d", c->kind);
}

/*
 * Undo the changes recorded from @mark on that files of @which hold
 * (NIC_FILE_*), newest first. A change undone is forgotten; one that
 * fails stays recorded. Returns the first error, with its reason.
 */
int nic_undo_from(struct devmem_nic *n, size_t mark, int which)
{
	struct nic_reason r = { 0 };
	size_t i;
	int err;

	for (i = n->nr; i-- > mark; ) {
		if (!(which & (nic_shared(n->ch[i].kind) ? NIC_FILE_SHARED :
			       NIC_FILE_OWN)))
			continue;
		err = nic_undo_one(n, &n->ch[i]);
		nic_reason_keep(&r, err);
		if (!err)
			nic_forget(n, &n->ch[i]);
	}
	return nic_reason_return(&r);
}

/* Undo after a failure @err: its reason is the one that stays. */
static int nic_unwind(struct devmem_nic *n, size_t mark, int err)
{
	struct nic_reason r = { 0 };

	nic_reason_keep(&r, err);
	nic_undo_from(n, mark, NIC_FILE_SHARED | NIC_FILE_OWN);
	return nic_reason_return(&r);
}

/* ---- the API ---- */

struct devmem_nic *nic_alloc(void)
{
	struct devmem_nic *n = calloc(1, sizeof(*n));

	if (n)
		n->state_fd = -1;
	return n;
}

DEVMEM_EXPORT int devmem_nic_new(struct devmem_nic **np, int ifindex)
{
	char name[IF_NAMESIZE];
	struct devmem_nic *n;
	int err;

	devmem_error_clear();
	if (!np)
		return devmem_fail(-EINVAL, "no place for the result");
	if (ifindex <= 0)
		return devmem_fail(-EINVAL, "ifindex %d is not a device index",
				   ifindex);
	err = nic_device_name(ifindex, name);
	if (err)
		return err;
	n = nic_alloc();
	if (!n)
		return devmem_fail(-ENOMEM, "out of memory");
	n->ifindex = ifindex;
	memcpy(n->name, name, sizeof(n->name));
	*np = n;
	return 0;
}

DEVMEM_EXPORT void devmem_nic_free(struct devmem_nic *n)
{
	size_t i;

	if (!n)
		return;
	nic_state_free(n);
	for (i = 0; i < n->nr; i++)
		nic_change_free(&n->ch[i]);
	free(n->ch);
	if (n->nl.sk)
		devmem_nl_close(&n->nl);
	free(n);
}

DEVMEM_EXPORT int devmem_nic_ifindex(const struct devmem_nic *n)
{
	return n->ifindex;
}

/* Payload kept with the headers would land in host memory: a device
 * with an hds-thresh gets 0, the old value recorded.
 */
static int nic_thresh_zero(struct devmem_nic *n)
{
	uint32_t old;
	int err, has;

	err = nic_thresh_get(n, &has, &old);
	if (err || !has || !old)
		return err;
	err = nic_thresh_set(n, 0);
	if (err)
		return err;
	if (!nic_find(n, NIC_HDS_THRESH))
		nic_record(n, NIC_HDS_THRESH)->thresh = old;
	return 0;
}

static int nic_hds_change(struct devmem_nic *n, const struct nic_op *op,
			  int on)
{
	uint8_t old, want;
	int err;

	want = on ? ETHTOOL_TCP_DATA_SPLIT_ENABLED :
		    ETHTOOL_TCP_DATA_SPLIT_DISABLED;
	err = nic_reserve(n, 2);
	if (!err)
		err = nic_hds_get(n, &old);
	if (err)
		return err;
	if (old != want) {
		if (!on && op->nr_others)
			return devmem_fail(-EBUSY,
					   "%s: header split is shared with %zu other set-up(s) of its queues (state files %s" ".owner.*): it stays on until they are torn down",
					   n->name, op->nr_others, op->dev_path);
		err = nic_hds_set(n, want);
		if (err)
			return err;
		if (!nic_find(n, NIC_HDS))
			nic_record(n, NIC_HDS)->hds = old;
	}
	return on ? nic_thresh_zero(n) : 0;
}

DEVMEM_EXPORT int devmem_nic_header_split(struct devmem_nic *n, int on)
{
	struct nic_op op;
	int err;

	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	err = nic_op_begin(n, &op);
	if (err)
		return err;
	err = nic_hds_change(n, &op, on);
	if (err)
		err = nic_unwind(n, op.mark, err);
	return nic_op_end(n, &op, err, 0);
}

/* A device state and a range of queues A..B from the caller. */
static int nic_check_queues(struct devmem_nic *n, uint32_t first,
			    uint32_t last)
{
	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	if (first > last)
		return devmem_fail(-EINVAL, "queues %u..%u: the first is after the last",
				   first, last);
	return 0;
}

/* The queues @n has out of RSS, to put back after a failure. */
struct nic_queues {
	struct nic_change *ch;
	size_t nr;
};

/* Move @n's queues out of the record into @q. */
static int nic_queues_take(struct devmem_nic *n, struct nic_queues *q)
{
	size_t i;

	q->nr = 0;
	q->ch = malloc((n->nr + 1) * sizeof(*q->ch));
	if (!q->ch)
		return devmem_fail(-ENOMEM, "out of memory");
	for (i = n->nr; i-- > 0; ) {
		if (n->ch[i].kind != NIC_QUEUES)
			continue;
		q->ch[q->nr++] = n->ch[i];
		nic_forget(n, &n->ch[i]);
	}
	return 0;
}

/* Put @q back in place of @n's queues, and free it. */
static void nic_queues_put(struct devmem_nic *n, struct nic_queues *q)
{
	struct nic_queues now;

	if (!nic_queues_take(n, &now))
		free(now.ch);
	/* room: taking @q made it */
	while (q->nr)
		n->ch[n->nr++] = q->ch[--q->nr];
	free(q->ch);
}

/* Queues @first..@last out of RSS (those @n had taken out of the record
 * before): the table spreads over the queues no owner has.
 */
static int nic_queues_change(struct devmem_nic *n, const struct nic_op *op,
			     uint32_t first, uint32_t last)
{
	struct nic_change *c;
	int err;

	err = nic_reserve(n, 1);
	if (err)
		return err;
	c = nic_record(n, NIC_QUEUES);
	c->queues.first = first;
	c->queues.last = last;
	return nic_rss_settle(n, op);
}

/*
 * The end of a change that began with @n's queues taken into @old (at
 * @op's mark): when it failed with @err, what it did is undone and @old
 * put back, with the table theirs. Returns @err, with its reason.
 */
static int nic_queues_done(struct devmem_nic *n, const struct nic_op *op,
			   struct nic_queues *old, int err)
{
	struct nic_reason r = { 0 };

	if (!err) {
		free(old->ch);
		return 0;
	}
	nic_reason_keep(&r, err);
	nic_undo_from(n, op->mark, NIC_FILE_SHARED | NIC_FILE_OWN);
	nic_queues_put(n, old);
	nic_rss_settle(n, op);
	return nic_reason_return(&r);
}

DEVMEM_EXPORT int devmem_nic_rss_exclude(struct devmem_nic *n, uint32_t first,
					 uint32_t last)
{
	struct nic_queues old = { 0 };
	struct nic_op op;
	int err;

	err = nic_check_queues(n, first, last);
	if (!err)
		err = nic_op_begin(n, &op);
	if (err)
		return err;
	err = nic_op_busy(n, &op, first, last);
	if (!err)
		err = nic_queues_take(n, &old);
	if (!err) {
		op.mark = n->nr;
		err = nic_queues_done(n, &op, &old,
				      nic_queues_change(n, &op, first, last));
	}
	return nic_op_end(n, &op, err, 0);
}

static int nic_flow_change(struct devmem_nic *n, const struct devmem_flow *f,
			   uint32_t queue, uint32_t *loc)
{
	struct nic_change *c;
	uint32_t where;
	size_t mark;
	int err;

	err = nic_reserve(n, 2);
	if (err)
		return err;
	mark = n->nr;
	err = nic_ntuple_on(n);
	if (!err)
		err = nic_rule_insert(n, f, queue, &where);
	if (err)
		return nic_unwind(n, mark, err);
	c = nic_record(n, NIC_RULE);
	c->rule.loc = where;
	c->rule.queue = queue;
	c->rule.flow = *f;
	if (loc)
		*loc = where;
	return 0;
}

DEVMEM_EXPORT int devmem_nic_flow_add(struct devmem_nic *n,
				      const struct devmem_flow *f,
				      uint32_t queue, uint32_t *loc)
{
	struct devmem_flow flow;
	struct nic_op op;
	int err;

	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	err = nic_check_flow(&flow, f);
	if (!err)
		err = nic_op_begin(n, &op);
	if (err)
		return err;
	err = nic_op_busy(n, &op, queue, queue);
	if (!err)
		err = nic_flow_change(n, &flow, queue, loc);
	return nic_op_end(n, &op, err, 0);
}

DEVMEM_EXPORT int devmem_nic_flow_del(struct devmem_nic *n, uint32_t loc)
{
	struct nic_change *c;
	struct nic_op op;
	int err, owner;

	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	/* a state that is no owner has no file to keep current */
	owner = n->state_fd >= 0;
	if (owner) {
		err = nic_op_begin(n, &op);
		if (err)
			return err;
	}
	err = nic_rule_delete(n, loc);
	c = err ? NULL : nic_find_rule(n, loc);
	if (c)
		nic_forget(n, c);
	return owner ? nic_op_end(n, &op, err, 0) : err;
}

DEVMEM_EXPORT int devmem_nic_setup(struct devmem_nic *n, uint32_t first,
				   uint32_t last, const struct devmem_flow *f)
{
	struct nic_queues old = { 0 };
	struct devmem_flow flow;
	struct nic_op op;
	int err;

	err = nic_check_queues(n, first, last);
	if (!err && f) {
		err = nic_check_flow(&flow, f);
		f = &flow;
	}
	if (!err)
		err = nic_op_begin(n, &op);
	if (err)
		return err;
	err = nic_op_busy(n, &op, first, last);
	if (!err)
		err = nic_queues_take(n, &old);
	if (err)
		return nic_op_end(n, &op, err, 0);
	op.mark = n->nr;
	err = nic_hds_change(n, &op, 1);
	if (!err)
		err = nic_queues_change(n, &op, first, last);
	if (!err && f)
		err = nic_flow_change(n, f, first, NULL);
	err = nic_queues_done(n, &op, &old, err);
	return nic_op_end(n, &op, err, 0);
}

/*
 * An owner's restore: its rules go and its queues go back to RSS; what
 * the device was before set-up comes back with the last owner.
 */
static int nic_restore_owner(struct devmem_nic *n)
{
	struct nic_reason r = { 0 };
	struct nic_op op;
	int err;

	err = nic_op_begin(n, &op);
	if (err)
		return err;
	nic_reason_keep(&r, nic_undo_from(n, 0, NIC_FILE_OWN));
	if (op.nr_others)
		nic_reason_keep(&r, nic_rss_settle(n, &op));
	else
		nic_reason_keep(&r, nic_undo_from(n, 0, NIC_FILE_SHARED));
	nic_reason_keep(&r, nic_op_end(n, &op, 0, 1));
	return nic_reason_return(&r);
}

DEVMEM_EXPORT int devmem_nic_restore(struct devmem_nic *n)
{
	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	/* a state read from a file undoes all it holds */
	if (n->state_fd < 0)
		return nic_undo_from(n, 0, NIC_FILE_SHARED | NIC_FILE_OWN);
	return nic_restore_owner(n);
}
