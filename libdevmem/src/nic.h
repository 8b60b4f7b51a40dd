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
	NIC_QUEUES,		/* queues first..last are out of RSS */
};

/*
 * What the device was before any set-up (header split, hds-thresh, the
 * ntuple feature, the RSS table) is shared by every owner of its queues
 * and kept in the device's file; queues and rules are an owner's own.
 */
static inline int nic_shared(enum nic_kind kind)
{
	return kind != NIC_RULE && kind != NIC_QUEUES;
}

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
		struct {
			uint32_t first, last;
		} queues;
	};
};

struct devmem_nic {
	int ifindex;
	char name[IF_NAMESIZE];
	struct devmem_nl nl;		/* nl.sk is NULL until first used */
	struct nic_change *ch;		/* oldest first */
	size_t nr, cap;
	int state_fd;			/* its owner file, locked; -1: none */
	char *state_path;		/* that file's name */
	const struct devmem_nic_hooks *hooks;	/* tests: a fake device */
	void *hook_arg;
};

/* Queues of another owner, as an operation found them. */
struct nic_claim {
	uint32_t first, last;
	int rss;			/* out of RSS; else a rule's queue */
	int live;			/* its owner runs */
	const char *path;		/* its owner's file */
};

/*
 * One operation on the device's set-up, holding the state directory's
 * lock: the other owners' files as they are, and where the record was
 * when it began.
 */
struct nic_op {
	int dir_fd;
	char *dev_path;			/* the device file */
	char **others;			/* the other owners' files */
	size_t nr_others;
	struct nic_claim *claims;
	size_t nr_claims;
	size_t mark;
	int made_own;			/* the owner file is new */
};

/* Which records a state file holds. */
#define NIC_FILE_SHARED		1
#define NIC_FILE_OWN		2

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
int nic_undo_from(struct devmem_nic *n, size_t mark, int which);
void nic_change_free(struct nic_change *c);
void nic_forget(struct devmem_nic *n, struct nic_change *c);
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
int nic_rss_set(struct devmem_nic *n, const uint32_t *table, uint32_t size);
int nic_rss_settle(struct devmem_nic *n, const struct nic_op *op);

/* nic_rule.c */
int nic_rule_insert(struct devmem_nic *n, const struct devmem_flow *f,
		    uint32_t queue, uint32_t *loc);
int nic_rule_delete(struct devmem_nic *n, uint32_t loc);
int nic_rule_undo(struct devmem_nic *n, const struct nic_change *c);
int nic_check_flow(struct devmem_flow *out, const struct devmem_flow *f);

/* nic_file.c */
int nic_write_tmp(const struct devmem_nic *n, const char *path, int which,
		  char **tmpp, int *fdp);
int nic_load(struct devmem_nic **np, int fd, const char *path);

/* nic_state.c */
int nic_op_begin(struct devmem_nic *n, struct nic_op *op);
int nic_op_end(struct devmem_nic *n, struct nic_op *op, int err, int leave);
int nic_op_busy(const struct devmem_nic *n, const struct nic_op *op,
		uint32_t first, uint32_t last);
void nic_state_free(struct devmem_nic *n);

#endif /* LIBDEVMEM_NIC_H */
