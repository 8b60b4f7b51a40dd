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

static void nic_change_free(struct nic_change *c)
{
	if (c->kind == NIC_RSS)
		free(c->rss.table);
}

static void nic_forget(struct devmem_nic *n, struct nic_change *c)
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
	}
	return devmem_fail(-EINVAL, "unknown change %d", c->kind);
}

/*
 * Undo the changes recorded from @mark on, newest first. A change undone
 * is forgotten (and, with @sync, the state file rewritten); one that
 * fails stays recorded. Returns the first error, with its reason.
 */
int nic_undo_from(struct devmem_nic *n, size_t mark, int sync)
{
	struct nic_reason r = { 0 };
	size_t i;
	int err;

	for (i = n->nr; i-- > mark; ) {
		err = nic_undo_one(n, &n->ch[i]);
		nic_reason_keep(&r, err);
		if (err)
			continue;
		nic_forget(n, &n->ch[i]);
		if (sync)
			nic_reason_keep(&r, nic_state_sync(n));
	}
	return nic_reason_return(&r);
}

/* Undo after a failure @err: its reason is the one that stays. */
static int nic_unwind(struct devmem_nic *n, size_t mark, int err)
{
	struct nic_reason r = { 0 };

	nic_reason_keep(&r, err);
	nic_undo_from(n, mark, 0);
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
	/* with changes recorded, the file stays for a later recovery */
	nic_state_close(n, !n->nr);
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

static int nic_hds_change(struct devmem_nic *n, int on)
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
	size_t mark;
	int err;

	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	err = nic_state_claim(n);
	if (err)
		return err;
	mark = n->nr;
	err = nic_hds_change(n, on);
	if (err)
		err = nic_unwind(n, mark, err);
	return nic_state_commit(n, mark, err);
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

static int nic_rss_change(struct devmem_nic *n, uint32_t first, uint32_t last)
{
	struct ethtool_rxfh_indir *old = NULL;
	uint32_t nq = 0, nleft, i, *table = NULL;
	int err;

	err = nic_reserve(n, 1);
	if (!err)
		err = nic_rx_queues(n, &nq);
	if (err)
		return err;
	if (last >= nq)
		return devmem_fail(-EINVAL, "%s has %u rx queues: no queue %u",
				   n->name, nq, last);
	nleft = nq - (last - first + 1);
	if (!nleft)
		return devmem_fail(-EINVAL,
				   "%s has %u rx queues: none would be left for RSS",
				   n->name, nq);

	err = nic_rss_get(n, &old);
	if (err)
		return err;
	table = malloc(old->size * sizeof(*table));
	if (!table) {
		err = devmem_fail(-ENOMEM, "out of memory");
		goto out;
	}
	/* Round robin over the queues below @first, then those above @last. */
	for (i = 0; i < old->size; i++) {
		table[i] = i % nleft;
		if (table[i] >= first)
			table[i] += last - first + 1;
	}
	if (!memcmp(table, old->ring_index, old->size * sizeof(*table)))
		goto out;
	if (!nic_find(n, NIC_RSS)) {
		err = nic_rss_record(n, old, nq);
		if (err)
			goto out;
		err = nic_rss_set(n, table, old->size);
		if (err)
			nic_forget(n, &n->ch[n->nr - 1]);
	} else {
		err = nic_rss_set(n, table, old->size);
	}
out:
	free(table);
	free(old);
	return err;
}

DEVMEM_EXPORT int devmem_nic_rss_exclude(struct devmem_nic *n, uint32_t first,
					 uint32_t last)
{
	size_t mark;
	int err;

	err = nic_check_queues(n, first, last);
	if (!err)
		err = nic_state_claim(n);
	if (err)
		return err;
	mark = n->nr;
	return nic_state_commit(n, mark, nic_rss_change(n, first, last));
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
	size_t mark;
	int err;

	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	err = nic_check_flow(&flow, f);
	if (!err)
		err = nic_state_claim(n);
	if (err)
		return err;
	mark = n->nr;
	return nic_state_commit(n, mark,
				nic_flow_change(n, &flow, queue, loc));
}

DEVMEM_EXPORT int devmem_nic_flow_del(struct devmem_nic *n, uint32_t loc)
{
	struct nic_change *c;
	int err;

	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	err = nic_rule_delete(n, loc);
	if (err)
		return err;
	c = nic_find_rule(n, loc);
	if (!c)
		return 0;
	nic_forget(n, c);
	return nic_state_sync(n);
}

DEVMEM_EXPORT int devmem_nic_setup(struct devmem_nic *n, uint32_t first,
				   uint32_t last, const struct devmem_flow *f)
{
	struct devmem_flow flow;
	size_t mark;
	int err;

	err = nic_check_queues(n, first, last);
	if (!err && f) {
		err = nic_check_flow(&flow, f);
		f = &flow;
	}
	if (!err)
		err = nic_state_claim(n);
	if (err)
		return err;
	mark = n->nr;
	err = nic_hds_change(n, 1);
	if (!err)
		err = nic_rss_change(n, first, last);
	if (!err && f)
		err = nic_flow_change(n, f, first, NULL);
	if (err)
		err = nic_unwind(n, mark, err);
	return nic_state_commit(n, mark, err);
}

DEVMEM_EXPORT int devmem_nic_restore(struct devmem_nic *n)
{
	int err;

	devmem_error_clear();
	if (!n)
		return devmem_fail(-EINVAL, "no device state");
	err = nic_undo_from(n, 0, 1);
	/* a state recovered with nothing in it has its file still */
	if (!n->nr && n->state_fd >= 0) {
		struct nic_reason r = { 0 };

		nic_reason_keep(&r, err);
		nic_reason_keep(&r, nic_state_close(n, 1));
		err = nic_reason_return(&r);
	}
	return err;
}

