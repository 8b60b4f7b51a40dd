/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * NIC set-up, private to the library: the state of one set-up (struct
 * devmem_nic) and what its files share. nic.c is the API and the record
 * of changes; nic_ethtool.c speaks to the device (ethtool netlink and the
 * ethtool ioctl), nic_rss.c the RSS table, nic_rule.c flows and n-tuple
 * rules, nic_state.c the state files and recovery.
 */
#ifndef LIBDEVMEM_NIC_H
#define LIBDEVMEM_NIC_H

#include "netlink.h"

#include <net/if.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>

#define NIC_STATE_MAGIC		"libdevmem-nic"
#define NIC_STATE_VERSION	1
/* Bounds of what a state file may hold: far above any real device. */
#define NIC_STATE_MAX_BYTES	(1U << 20)
#define NIC_TABLE_MAX		65536U	/* RSS entries, n-tuple rules */
#define NIC_NTUPLE_FEATURE	"rx-ntuple-filter"
/* The size of the buffer behind devmem_last_error(). */
#define NIC_REASON_LEN		256
/* Where the state files of devices live, and its override. */
#define NIC_STATE_DIR		"/run/devmem"
#define NIC_STATE_DIR_ENV	"DEVMEM_STATE_DIR"
/* Opening a state file that its owner renames meanwhile: tries. */
#define NIC_RECOVER_TRIES	16

enum nic_kind {
	NIC_HDS = 1,		/* header split was hds */
	NIC_NTUPLE,		/* the ntuple feature was off */
	NIC_RSS,		/* the indirection table was this */
	NIC_RULE,		/* a rule was inserted */
	NIC_HDS_THRESH,		/* hds-thresh was thresh */
};

struct nic_change {
	enum nic_kind kind;
	union {
		uint8_t hds;			/* ETHTOOL_TCP_DATA_SPLIT_* */
		uint32_t thresh;		/* hds-thresh */
		struct {
			uint32_t size;		/* 0: the default table */
			uint32_t *table;
		} rss;
		struct {
			uint32_t loc;
			uint32_t queue;
			struct devmem_flow flow;
		} rule;
	};
};

struct devmem_nic {
	int ifindex;
	char name[IF_NAMESIZE];
	struct devmem_nl nl;		/* nl.sk is NULL until first used */
	struct nic_change *ch;		/* oldest first */
	size_t nr, cap;
	int state_fd;			/* locked state file; -1: none */
	char *state_path;		/* its name while state_fd is open */
	const struct devmem_nic_hooks *hooks;	/* tests: a fake device */
	void *hook_arg;
};

/* The reason of a failure, kept while undoing changes overwrites it. */
struct nic_reason {
	int err;
	char text[NIC_REASON_LEN];
};


/* nic.c */
void nic_reason_keep(struct nic_reason *r, int err);
int nic_reason_return(const struct nic_reason *r);
int nic_reserve(struct devmem_nic *n, size_t more);
struct nic_change *nic_record(struct devmem_nic *n, enum nic_kind kind);
struct nic_change *nic_find(struct devmem_nic *n, enum nic_kind kind);
struct nic_change *nic_find_rule(struct devmem_nic *n, uint32_t loc);
int nic_undo_from(struct devmem_nic *n, size_t mark, int sync);
struct devmem_nic *nic_alloc(void);

/* nic_ethtool.c */
int nic_device_name(int ifindex, char *name);
int nic_ioctl(struct devmem_nic *n, void *data, const char *what);
const char *nic_hds_name(uint8_t v);
int nic_hds_get(struct devmem_nic *n, uint8_t *v);
int nic_hds_set(struct devmem_nic *n, uint8_t v);
int nic_thresh_get(struct devmem_nic *n, int *has, uint32_t *v);
int nic_thresh_set(struct devmem_nic *n, uint32_t v);
int nic_ntuple_want(struct devmem_nic *n, int on);
int nic_ntuple_on(struct devmem_nic *n);

/* nic_rss.c */
int nic_rx_queues(struct devmem_nic *n, uint32_t *nq);
int nic_rss_get(struct devmem_nic *n, struct ethtool_rxfh_indir **rp);
int nic_rss_set(struct devmem_nic *n, const uint32_t *table,
		uint32_t size);
int nic_rss_record(struct devmem_nic *n,
		   const struct ethtool_rxfh_indir *old, uint32_t nq);

/* nic_rule.c */
int nic_rule_insert(struct devmem_nic *n, const struct devmem_flow *f,
		    uint32_t queue, uint32_t *loc);
int nic_rule_delete(struct devmem_nic *n, uint32_t loc);
int nic_rule_undo(struct devmem_nic *n, const struct nic_change *c);
int nic_check_flow(struct devmem_flow *out, const struct devmem_flow *f);

/* nic_state.c */
int nic_state_claim(struct devmem_nic *n);
int nic_state_close(struct devmem_nic *n, int remove);
int nic_state_sync(struct devmem_nic *n);
int nic_state_commit(struct devmem_nic *n, size_t mark, int err);

#endif /* LIBDEVMEM_NIC_H */
