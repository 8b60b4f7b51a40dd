// SPDX-License-Identifier: GPL-2.0
/*
 * Per-queue knobs under /sys/kernel/debug/netdevsim/netdevsimN/ports/P/rxq/Q/
 *
 *   restart           write 1: restart the queue (netdev_rx_queue_restart)
 *   fail_pool_create  Y: the next page-pool creation for the queue fails,
 *                     so a restart must roll back to the old queue
 *   fail_alloc        fail the next N buffer allocations (packet dropped,
 *                     counted in rxQ_alloc_fail)
 *   drop              drop the next N packets the queue receives
 *   devmem_optout     Y: the queue's next payload pools do not accept device
 *                     memory, as with a driver that never opted in
 *   hold              write N: the queue takes N payload buffers out of its
 *                     pool and keeps them; write 0: give them all back;
 *                     read: how many it holds
 *   unpool            write N: N of the held buffers leave their pool for
 *                     good (page_pool_release_page(), then put_page());
 *                     a pool refuses for a memory provider's buffers,
 *                     which stay held; read: how many left their pools
 *   csum              what rx checksum offload reports: unnecessary (TCP/UDP
 *                     verified, the default), complete (CHECKSUM_COMPLETE,
 *                     summed by the DMA engine) or none (CHECKSUM_NONE)
 *   hds_payload       header split: the first N bytes of each TCP/UDP
 *                     packet's payload go to the header buffer with the
 *                     headers (0, the default: headers only), as on a
 *                     device that splits at a fixed offset; headers and
 *                     payload together stop at the header buffer's size
 *   order_ignore      Y: the queue's next payload pools are made of pages
 *                     whatever buffer size its memory provider hands out,
 *                     as a driver that claims rx-page-size and does not
 *                     honour it (the provider refuses such a pool)
 *   pack              Y (the default): device-memory payload buffers larger
 *                     than a page take consecutive payloads at increasing
 *                     offsets, as an aggregation ring fills its buffers;
 *                     N: one buffer per packet, as with page-sized ones
 *
 * and two files for the port, in /sys/kernel/debug/.../ports/P/rxq/:
 *
 *   busy              how many of its rx queues have work in hand (wire
 *                     packets in the FIFO, or NAPI scheduled or polling).
 *                     Tests wait for 0 on both ends of a link before they
 *                     read per-queue counters, instead of sleeping.
 *   rx_page_size      Y (the default): the driver offers rx-page-size
 *                     (QCFG_RX_PAGE_SIZE); N: it does not, as most drivers
 */
#include <linux/debugfs.h>
#include <linux/rtnetlink.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <net/netdev_rx_queue.h>

#include "netdevsim.h"

#define NSIM_KNOB_MAX	1000000

/* rtnl without deadlocking against the removal of these files, which
 * waits for their writers while its caller may hold rtnl.
 */
static int nsim_knob_lock(struct netdevsim *ns)
{
	if (!rtnl_trylock())
		return restart_syscall();
	if (ns->netdev->reg_state != NETREG_REGISTERED) {
		rtnl_unlock();
		return -ENODEV;
	}
	return 0;
}

static ssize_t nsim_restart_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	struct nsim_rq *rq = file->private_data;
	struct net_device *dev = rq->ns->netdev;
	bool val;
	int err;

	err = kstrtobool_from_user(ubuf, count, &val);
	if (err)
		return err;
	if (!val)
		return -EINVAL;
	err = nsim_knob_lock(rq->ns);
	if (err)
		return err;
	if (!netif_running(dev))
		err = -ENETDOWN;
	else
		err = netdev_rx_queue_restart(dev, rq->idx);
	rtnl_unlock();
	return err ? err : count;
}

static const struct file_operations nsim_restart_fops = {
	.open = simple_open,
	.write = nsim_restart_write,
	.llseek = generic_file_llseek,
	.owner = THIS_MODULE,
};

static ssize_t nsim_hold_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	struct nsim_rq *rq = file->private_data;
	char buf[16];
	int len;

	len = scnprintf(buf, sizeof(buf), "%u\n", READ_ONCE(rq->nheld));
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static ssize_t nsim_hold_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	struct nsim_rq *rq = file->private_data;
	unsigned int n;
	int err;

	err = kstrtouint_from_user(ubuf, count, 0, &n);
	if (err)
		return err;
	if (n > NSIM_HOLD_MAX)
		return -EINVAL;
	err = nsim_knob_lock(rq->ns);
	if (err)
		return err;
	if (n)
		err = nsim_rq_hold(rq, n);
	else
		nsim_rq_release_held(rq);
	rtnl_unlock();
	return err ? err : count;
}

static ssize_t nsim_unpool_read(struct file *file, char __user *ubuf,
				size_t count, loff_t *ppos)
{
	struct nsim_rq *rq = file->private_data;
	char buf[16];
	int len;

	len = scnprintf(buf, sizeof(buf), "%u\n", READ_ONCE(rq->nunpooled));
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static ssize_t nsim_unpool_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	struct nsim_rq *rq = file->private_data;
	unsigned int n;
	int err;

	err = kstrtouint_from_user(ubuf, count, 0, &n);
	if (err)
		return err;
	if (n > NSIM_HOLD_MAX)
		return -EINVAL;
	err = nsim_knob_lock(rq->ns);
	if (err)
		return err;
	WRITE_ONCE(rq->nunpooled, rq->nunpooled + nsim_rq_unpool_held(rq, n));
	rtnl_unlock();
	return count;
}

static const struct file_operations nsim_unpool_fops = {
	.open = simple_open,
	.read = nsim_unpool_read,
	.write = nsim_unpool_write,
	.llseek = generic_file_llseek,
	.owner = THIS_MODULE,
};

static const struct file_operations nsim_hold_fops = {
	.open = simple_open,
	.read = nsim_hold_read,
	.write = nsim_hold_write,
	.llseek = generic_file_llseek,
	.owner = THIS_MODULE,
};

/* Like debugfs_create_bool(), but a value kstrtobool() cannot parse is
 * refused with its error instead of being ignored.
 */
static ssize_t nsim_flag_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	bool *flag = file->private_data;
	char buf[2] = { READ_ONCE(*flag) ? 'Y' : 'N', '\n' };

	return simple_read_from_buffer(ubuf, count, ppos, buf, sizeof(buf));
}

static ssize_t nsim_flag_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	bool *flag = file->private_data;
	bool val;
	int err;

	err = kstrtobool_from_user(ubuf, count, &val);
	if (err)
		return err;
	WRITE_ONCE(*flag, val);
	return count;
}

static const struct file_operations nsim_flag_fops = {
	.open = simple_open,
	.read = nsim_flag_read,
	.write = nsim_flag_write,
	.llseek = generic_file_llseek,
	.owner = THIS_MODULE,
};

static const char * const nsim_csum_names[] = {
	[NSIM_RX_CSUM_UNNECESSARY]	= "unnecessary",
	[NSIM_RX_CSUM_COMPLETE]		= "complete",
	[NSIM_RX_CSUM_NONE]		= "none",
};

static ssize_t nsim_csum_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	struct nsim_rq *rq = file->private_data;
	char buf[16];
	int len;

	len = scnprintf(buf, sizeof(buf), "%s\n",
			nsim_csum_names[READ_ONCE(rq->csum)]);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

/* Read per packet by the poll: takes effect at the next packet, bound
 * queue or not.
 */
static ssize_t nsim_csum_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	struct nsim_rq *rq = file->private_data;
	char buf[16];
	int mode;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	mode = sysfs_match_string(nsim_csum_names, buf);
	if (mode < 0)
		return mode;
	WRITE_ONCE(rq->csum, mode);
	return count;
}

static const struct file_operations nsim_csum_fops = {
	.open = simple_open,
	.read = nsim_csum_read,
	.write = nsim_csum_write,
	.llseek = generic_file_llseek,
	.owner = THIS_MODULE,
};

static int nsim_count_get(void *data, u64 *val)
{
	*val = atomic_read(data);
	return 0;
}

static int nsim_count_set(void *data, u64 val)
{
	if (val > NSIM_KNOB_MAX)
		return -EINVAL;
	atomic_set(data, val);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(nsim_count_fops, nsim_count_get, nsim_count_set,
			 "%llu\n");

static int nsim_hds_payload_get(void *data, u64 *val)
{
	*val = READ_ONCE(*(u32 *)data);
	return 0;
}

/* Read per packet by the poll: takes effect at the next packet. */
static int nsim_hds_payload_set(void *data, u64 val)
{
	if (val > NSIM_HDR_BUF_SIZE)
		return -EINVAL;
	WRITE_ONCE(*(u32 *)data, val);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(nsim_hds_payload_fops, nsim_hds_payload_get,
			 nsim_hds_payload_set, "%llu\n");

static int nsim_busy_show(struct seq_file *m, void *unused)
{
	struct netdevsim *ns = m->private;
	unsigned int i, busy = 0;
	struct nsim_rq *rq;

	for (i = 0; i < ns->dp.num_rqs; i++) {
		rq = &ns->dp.rqs[i];
		/* SCHED stays set until a poll has completed and flushed
		 * GRO; a disabled NAPI has SCHED and NPSVC both set.
		 */
		if (READ_ONCE(rq->backlog_pkts) ||
		    (test_bit(NAPI_STATE_SCHED, &rq->napi.state) &&
		     !test_bit(NAPI_STATE_NPSVC, &rq->napi.state)))
			busy++;
	}
	seq_printf(m, "%u\n", busy);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nsim_busy);

static ssize_t nsim_rx_page_size_read(struct file *file, char __user *ubuf,
				      size_t count, loff_t *ppos)
{
	struct netdevsim *ns = file->private_data;
	char buf[2] = { 'N', '\n' };

	if (READ_ONCE(ns->dp.qops.supported_params) & QCFG_RX_PAGE_SIZE)
		buf[0] = 'Y';
	return simple_read_from_buffer(ubuf, count, ppos, buf, sizeof(buf));
}

/* Read by the core under rtnl: change it under rtnl. */
static ssize_t nsim_rx_page_size_write(struct file *file,
				       const char __user *ubuf, size_t count,
				       loff_t *ppos)
{
	struct netdevsim *ns = file->private_data;
	unsigned int params;
	bool val;
	int err;

	err = kstrtobool_from_user(ubuf, count, &val);
	if (err)
		return err;
	err = nsim_knob_lock(ns);
	if (err)
		return err;
	params = ns->dp.qops.supported_params & ~QCFG_RX_PAGE_SIZE;
	WRITE_ONCE(ns->dp.qops.supported_params,
		   params | (val ? QCFG_RX_PAGE_SIZE : 0));
	rtnl_unlock();
	return count;
}

static const struct file_operations nsim_rx_page_size_fops = {
	.open = simple_open,
	.read = nsim_rx_page_size_read,
	.write = nsim_rx_page_size_write,
	.llseek = generic_file_llseek,
	.owner = THIS_MODULE,
};

void nsim_rq_debugfs_init(struct netdevsim *ns, struct dentry *port_ddir)
{
	struct nsim_rq *rq;
	char name[16];
	unsigned int i;

	if (!ns->dp.rqs)
		return;
	ns->dp.ddir = debugfs_create_dir("rxq", port_ddir);
	debugfs_create_file("busy", 0400, ns->dp.ddir, ns, &nsim_busy_fops);
	debugfs_create_file("rx_page_size", 0600, ns->dp.ddir, ns,
			    &nsim_rx_page_size_fops);
	for (i = 0; i < ns->dp.num_rqs; i++) {
		rq = &ns->dp.rqs[i];
		snprintf(name, sizeof(name), "%u", i);
		rq->ddir = debugfs_create_dir(name, ns->dp.ddir);
		debugfs_create_file("restart", 0200, rq->ddir, rq,
				    &nsim_restart_fops);
		debugfs_create_file("fail_pool_create", 0600, rq->ddir,
				    &rq->fail_pool_create, &nsim_flag_fops);
		debugfs_create_file_unsafe("fail_alloc", 0600, rq->ddir,
					   &rq->fail_alloc, &nsim_count_fops);
		debugfs_create_file_unsafe("drop", 0600, rq->ddir,
					   &rq->drop_next, &nsim_count_fops);
		debugfs_create_file("devmem_optout", 0600, rq->ddir,
				    &rq->devmem_optout, &nsim_flag_fops);
		debugfs_create_file("hold", 0600, rq->ddir, rq,
				    &nsim_hold_fops);
		debugfs_create_file("unpool", 0600, rq->ddir, rq,
				    &nsim_unpool_fops);
		debugfs_create_file("csum", 0600, rq->ddir, rq,
				    &nsim_csum_fops);
		debugfs_create_file_unsafe("hds_payload", 0600, rq->ddir,
					   &rq->hds_payload,
					   &nsim_hds_payload_fops);
		debugfs_create_file("order_ignore", 0600, rq->ddir,
				    &rq->order_ignore, &nsim_flag_fops);
		debugfs_create_file("pack", 0600, rq->ddir, &rq->pack,
				    &nsim_flag_fops);
	}
}

void nsim_rq_debugfs_exit(struct netdevsim *ns)
{
	debugfs_remove_recursive(ns->dp.ddir);
	ns->dp.ddir = NULL;
}
