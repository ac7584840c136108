// SPDX-License-Identifier: GPL-2.0
/*
 * blk-nodelat: per-NUMA-node completion latency of a blk-mq request queue.
 *
 * A loadable rq_qos policy.  For each queue a user attaches (nvme-core's
 * "latency" iopolicy), it estimates the latency from
 * blk_mq_start_request() to completion per NUMA node of the submitting
 * CPU and per I/O class (nlat_io_class()), and counts the requests in
 * flight of the queue's group.  Users read both per I/O through
 * blk_nodelat_ops.read().  This file: the knobs, the ops tables and the
 * module's init and exit.
 */

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>

#include "nlat-internal.h"

/*
 * Knobs: /sys/module/blk_nodelat/parameters/.  Out-of-range writes fail
 * with -EINVAL and keep the old value.  A write also stores the knobs in
 * the units the math uses (nlat_cur, nlat_window_jiffies), so that the
 * I/O path does not convert them per call; readers take those with
 * READ_ONCE(), a change applies from the next fold or read().
 */
struct nlat_knob {
	unsigned int	*val;
	unsigned int	min;
	unsigned int	max;
};

unsigned int nlat_window_usec = NLAT_WINDOW_USEC_DEF;
unsigned int nlat_history_pct = NLAT_HISTORY_PCT_DEF;
unsigned int nlat_min_samples = NLAT_MIN_SAMPLES_DEF;
unsigned int nlat_stale_windows = NLAT_STALE_WINDOWS_DEF;
struct nlat_params nlat_cur;
unsigned long nlat_window_jiffies;
bool nlat_thin_ok;

/* Knob writes are serialized by the module's parameter lock, and init. */
static void nlat_knobs_convert(void)
{
	WRITE_ONCE(nlat_cur.window_ns,
		   (u64)READ_ONCE(nlat_window_usec) * NSEC_PER_USEC);
	WRITE_ONCE(nlat_cur.hist_w, nlat_pct_to_w(READ_ONCE(nlat_history_pct)));
	WRITE_ONCE(nlat_cur.min_samples, READ_ONCE(nlat_min_samples));
	WRITE_ONCE(nlat_cur.stale_windows, READ_ONCE(nlat_stale_windows));
	WRITE_ONCE(nlat_window_jiffies,
		   usecs_to_jiffies(READ_ONCE(nlat_window_usec)));
	/*
	 * Thinning skips answers while the last answer is younger than a
	 * fold's interval (the window in jiffies and a tick of slack) and a
	 * done_ns step (nlat_rqos_done()): only if every quiet spell, at
	 * least stale_windows windows, is longer.
	 */
	WRITE_ONCE(nlat_thin_ok,
		   nlat_cur.stale_windows * nlat_cur.window_ns >
		   jiffies_to_nsecs(nlat_window_jiffies + 2) +
		   (nlat_cur.window_ns >> NLAT_DONE_SHIFT));
}

static int nlat_knob_set(const char *buf, const struct kernel_param *kp)
{
	const struct nlat_knob *k = kp->arg;
	unsigned int v;

	if (kstrtouint(buf, 0, &v) || v < k->min || v > k->max)
		return -EINVAL;
	WRITE_ONCE(*k->val, v);
	nlat_knobs_convert();
	return 0;
}

static int nlat_knob_get(char *buf, const struct kernel_param *kp)
{
	const struct nlat_knob *k = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(*k->val));
}

static const struct kernel_param_ops nlat_knob_ops = {
	.set	= nlat_knob_set,
	.get	= nlat_knob_get,
};

static struct nlat_knob nlat_knob_window_usec = {
	&nlat_window_usec, NLAT_WINDOW_USEC_MIN, NLAT_WINDOW_USEC_MAX
};
module_param_cb(window_usec, &nlat_knob_ops, &nlat_knob_window_usec, 0644);
MODULE_PARM_DESC(window_usec, "fold period in usec, 1000..1000000 (50000)");

static struct nlat_knob nlat_knob_history_pct = {
	&nlat_history_pct, NLAT_HISTORY_PCT_MIN, NLAT_HISTORY_PCT_MAX
};
module_param_cb(history_pct, &nlat_knob_ops, &nlat_knob_history_pct, 0644);
MODULE_PARM_DESC(history_pct, "weight of history per window in %, 0..99 (75)");

static struct nlat_knob nlat_knob_min_samples = {
	&nlat_min_samples, NLAT_MIN_SAMPLES_MIN, NLAT_MIN_SAMPLES_MAX
};
module_param_cb(min_samples, &nlat_knob_ops, &nlat_knob_min_samples, 0644);
MODULE_PARM_DESC(min_samples, "samples for an update, 1..1000 (4)");

static struct nlat_knob nlat_knob_stale_windows = {
	&nlat_stale_windows, NLAT_STALE_WINDOWS_MIN, NLAT_STALE_WINDOWS_MAX
};
module_param_cb(stale_windows, &nlat_knob_ops, &nlat_knob_stale_windows, 0644);
MODULE_PARM_DESC(stale_windows, "windows without update before probing, 1..1000 (4)");

const struct rq_qos_ops nlat_rqos_ops = {
	.track		= nlat_rqos_track,
	.issue		= nlat_rqos_issue,
	.requeue	= nlat_rqos_requeue,
	.done		= nlat_rqos_done,
	.exit		= nlat_rqos_exit,
};

const struct blk_nodelat_info_ops blk_nodelat_info_ops = {
	.version	= BLK_NODELAT_INFO_V1,
	.emit		= nlat_emit,
};
EXPORT_SYMBOL_GPL(blk_nodelat_info_ops);

const struct blk_nodelat_ops blk_nodelat_ops = {
	.attach		= nlat_attach,
	.detach		= nlat_detach,
	.tracked	= nlat_tracked,
	.nr_tracked	= nlat_nr_tracked,
	.read		= nlat_read,
	.end_error	= nlat_end_error,
};
EXPORT_SYMBOL_GPL(blk_nodelat_ops);

const struct blk_nodelat_wake_ops blk_nodelat_wake_ops = {
	.set_waker	= nlat_set_waker,
};
EXPORT_SYMBOL_GPL(blk_nodelat_wake_ops);

const struct blk_nodelat_batch_ops blk_nodelat_batch_ops = {
	.attach		= nlat_attach_many,
	.detach		= nlat_detach_many,
};
EXPORT_SYMBOL_GPL(blk_nodelat_batch_ops);

const struct blk_nodelat_pair_ops blk_nodelat_pair_ops = {
	.version	= BLK_NODELAT_PAIR_V1,
	.read2		= nlat_read2,
};
EXPORT_SYMBOL_GPL(blk_nodelat_pair_ops);

static int __init nlat_init(void)
{
	BUILD_BUG_ON(sizeof(struct nlat_cell) > SMP_CACHE_BYTES);
	BUILD_BUG_ON(sizeof(struct nlat_pcpu) > SMP_CACHE_BYTES);
	BUILD_BUG_ON(NLAT_HISTORY_PCT_MAX >= 100);
	nlat_knobs_convert();
	return 0;
}

static void __exit nlat_exit(void)
{
	/* no tracker is left (each held a reference); wait for their frees */
	rcu_barrier();
	/* no reader either: the last table goes now */
	kvfree(rcu_dereference_protected(nlat_table, true));
}

module_init(nlat_init);
module_exit(nlat_exit);

MODULE_DESCRIPTION("Per-NUMA-node completion latency of blk-mq queues");
MODULE_LICENSE("GPL");
