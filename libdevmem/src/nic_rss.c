// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/* NIC set-up: the RSS indirection table (ethtool ioctl). */
#include "nic.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- RSS (ethtool ioctl) ---- */

int nic_rx_queues(struct devmem_nic *n, uint32_t *nq)
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
int nic_rss_get(struct devmem_nic *n, struct ethtool_rxfh_indir **rp)
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
int nic_rss_record(struct devmem_nic *n,
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

