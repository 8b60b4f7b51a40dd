// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/* NIC set-up: the RSS indirection table (ethtool ioctl). */
#include "nic.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- RSS (ethtool ioctl) ---- */

static int nic_rx_queues(struct devmem_nic *n, uint32_t *nq)
{
	struct ethtool_rxnfc nfc = { .cmd = ETHTOOL_GRXRINGS };
	int err;

	err = nic_ioctl(n, &nfc, "rx queue count (ETHTOOL_GRXRINGS)");
	if (err)
		return err;
	if (!nfc.data || nfc.data > UINT32_MAX)
		return devmem_fail(-EPROTO, "%s: the kernel counts %llu rx queues",
				   n->name, (unsigned long long)nfc.data);
	*nq = nfc.data;
	return 0;
}

/* The indirection table, in a buffer of the caller's. */
static int nic_rss_get(struct devmem_nic *n, struct ethtool_rxfh_indir **rp)
{
	struct ethtool_rxfh_indir size = { .cmd = ETHTOOL_GRXFHINDIR }, *r;
	int err;

	err = nic_ioctl(n, &size, "RSS table size (ETHTOOL_GRXFHINDIR)");
	if (err)
		return err;
	if (!size.size || size.size > NIC_TABLE_MAX)
		return devmem_fail(-EOPNOTSUPP,
				   "%s: the RSS table has %u entries",
				   n->name, size.size);
	r = calloc(1, sizeof(*r) + size.size * sizeof(r->ring_index[0]));
	if (!r)
		return devmem_fail(-ENOMEM, "out of memory");
	r->cmd = ETHTOOL_GRXFHINDIR;
	r->size = size.size;
	err = nic_ioctl(n, r, "RSS table (ETHTOOL_GRXFHINDIR)");
	if (err) {
		free(r);
		return err;
	}
	*rp = r;
	return 0;
}

/* Write @table (@size entries), or the default table when @size is 0. */
int nic_rss_set(struct devmem_nic *n, const uint32_t *table,
		       uint32_t size)
{
	struct ethtool_rxfh_indir *r;
	int err;

	r = calloc(1, sizeof(*r) + size * sizeof(r->ring_index[0]));
	if (!r)
		return devmem_fail(-ENOMEM, "out of memory");
	r->cmd = ETHTOOL_SRXFHINDIR;
	r->size = size;
	if (size)
		memcpy(r->ring_index, table, size * sizeof(table[0]));
	err = nic_ioctl(n, r, size ? "setting the RSS table (ETHTOOL_SRXFHINDIR)" :
			"resetting the RSS table (ETHTOOL_SRXFHINDIR)");
	free(r);
	return err;
}

/* Record @old as what to restore: "default" when it is the kernel's
 * default spread over @nq queues. Room reserved.
 */
static int nic_rss_record(struct devmem_nic *n,
			  const struct ethtool_rxfh_indir *old, uint32_t nq)
{
	struct nic_change *c;
	uint32_t *table = NULL;
	uint32_t i;

	for (i = 0; i < old->size; i++)
		if (old->ring_index[i] != i % nq)
			break;
	if (i < old->size) {
		table = malloc(old->size * sizeof(*table));
		if (!table)
			return devmem_fail(-ENOMEM, "out of memory");
		memcpy(table, old->ring_index, old->size * sizeof(*table));
	}
	c = nic_record(n, NIC_RSS);
	c->rss.table = table;
	c->rss.size = table ? old->size : 0;
	return 0;
}


/*
 * Mark in @taken (one byte per queue of @nq) the queues out of RSS: @n's
 * own, which must exist, and the other owners' (a queue beyond @nq, of a
 * device that has fewer now, is no one's). *@any when there are any.
 */
static int nic_rss_taken(const struct devmem_nic *n, const struct nic_op *op,
			 uint32_t nq, uint8_t *taken, int *any)
{
	uint32_t q;
	size_t i;

	*any = 0;
	for (i = 0; i < n->nr; i++) {
		const struct nic_change *c = &n->ch[i];

		if (c->kind != NIC_QUEUES)
			continue;
		if (c->queues.last >= nq)
			return devmem_fail(-EINVAL, "%s has %u rx queues: no queue %u",
					   n->name, nq, c->queues.last);
		for (q = c->queues.first; q <= c->queues.last; q++)
			taken[q] = 1;
		*any = 1;
	}
	for (i = 0; i < op->nr_claims; i++) {
		const struct nic_claim *c = &op->claims[i];

		if (!c->rss)
			continue;
		for (q = c->first; q <= c->last && q < nq; q++)
			taken[q] = 1;
		*any = 1;
	}
	return 0;
}

/* The table that spreads @size entries round robin over the queues not
 * @taken (of @nq), in a buffer to free.
 */
static int nic_rss_spread(const struct devmem_nic *n, const uint8_t *taken,
			  uint32_t nq, uint32_t size, uint32_t **tablep)
{
	uint32_t nleft = 0, q, i, *left, *table;

	left = malloc(nq * sizeof(*left));
	table = malloc(size * sizeof(*table));
	if (!left || !table) {
		free(left);
		free(table);
		return devmem_fail(-ENOMEM, "out of memory");
	}
	for (q = 0; q < nq; q++)
		if (!taken[q])
			left[nleft++] = q;
	if (!nleft) {
		free(left);
		free(table);
		return devmem_fail(-EINVAL,
				   "%s has %u rx queues: none would be left for RSS",
				   n->name, nq);
	}
	for (i = 0; i < size; i++)
		table[i] = left[i % nleft];
	free(left);
	*tablep = table;
	return 0;
}

int nic_rss_settle(struct devmem_nic *n, const struct nic_op *op)
{
	struct ethtool_rxfh_indir *cur = NULL;
	uint32_t nq = 0, *table = NULL;
	struct nic_change *rec;
	uint8_t *taken;
	int err, any;

	err = nic_reserve(n, 1);
	if (!err)
		err = nic_rx_queues(n, &nq);
	if (err)
		return err;
	taken = calloc(nq, 1);
	if (!taken)
		return devmem_fail(-ENOMEM, "out of memory");
	err = nic_rss_taken(n, op, nq, taken, &any);
	if (err)
		goto out;
	rec = nic_find(n, NIC_RSS);
	if (!any) {
		/* no owner has queues out: the table as it was */
		if (rec) {
			err = nic_rss_set(n, rec->rss.table, rec->rss.size);
			if (!err)
				nic_forget(n, rec);
		}
		goto out;
	}
	err = nic_rss_get(n, &cur);
	if (!err)
		err = nic_rss_spread(n, taken, nq, cur->size, &table);
	if (err || !memcmp(table, cur->ring_index, cur->size * sizeof(*table)))
		goto out;
	if (!rec) {
		err = nic_rss_record(n, cur, nq);
		if (err)
			goto out;
		err = nic_rss_set(n, table, cur->size);
		if (err)
			nic_forget(n, &n->ch[n->nr - 1]);
	} else {
		err = nic_rss_set(n, table, cur->size);
	}
out:
	free(table);
	free(cur);
	free(taken);
	return err;
}
