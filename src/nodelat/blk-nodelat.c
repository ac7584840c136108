// SPDX-License-Identifier: GPL-2.0
/*
 * blk-nodelat: per-NUMA-node completion latency of a blk-mq request queue.
 *
 * A loadable rq_qos policy.  For each queue a user attaches (nvme-core's
 * "latency" iopolicy), it estimates, per NUMA node of the submitting CPU
 * (cpu_to_node(rq->mq_ctx->cpu)) and per I/O class (nlat_io_class(): read
 * or write, and the size of the bio the path was chosen for, not of the
 * request it grew into by merging),
 * the latency of reads and writes from blk_mq_start_request() (which sets
 * rq->io_start_time_ns while QUEUE_FLAG_STATS is on: we hold it while
 * attached) to our rq_qos done hook.  It also counts the queue's requests
 * in flight.  Users read both per I/O through blk_nodelat_ops.read().
 *
 * Completion path.  done adds the sample to a slot of the submitting
 * CPU, one per class: sum and count packed in one u64 (nlat-acc.h), one
 * atomic add, on a line that only the completing CPUs of that submitter
 * write.  It marks the submitter in a bitmap; the fold takes each marked
 * CPU's slots with an exchange and files them under that CPU's node, so
 * it reads only CPUs that completed I/O since the last fold, once each,
 * and a CPU costs 64 bytes per queue whatever the number of nodes.
 * Requests that end in error or are failed over are no samples, but are
 * answers: the user tells us with end_error() before they end.
 *
 * Window.  The fold is a delayed work item, queued by the first completion
 * after the previous fold to run one window (window_usec) later; it
 * re-arms itself while it finds samples, and the first fold that finds
 * none takes the queue's load out of its group's.  So a busy queue folds
 * once a window and an idle one costs nothing: a periodic timer would wake idle queues, and a lazy fold
 * in read() would put an O(CPUs x cells) sum on the submission path.
 * Nothing needs the fold while idle: ages and staleness are computed from
 * the time of the last update when they are read.
 *
 * Estimate.  A fixed-point EWMA, nanoseconds << 8, updated once per window
 * from the mean of the window's samples with history weight history_pct
 * raised to the number of windows since the last update: a cell that went
 * quiet forgets its value as fast as one updated every window.  A window
 * with fewer than min_samples samples is carried over into the next one.
 * Formats, ranges and the overflow ceiling: nlat-math.h, which the unit
 * tests in tests/unit/ compile as well.
 *
 * No data.  A cell without an estimate reads lat_ns = 0.  A cell with no
 * update for stale_windows windows is stale: it still reads its last
 * value, and read() grants one probe per window (a cmpxchg on the cell's
 * probe time elects one of concurrent readers) so that the caller sends
 * that I/O here and the cell gets a fresh sample; a stale or empty cell
 * folds any sample, however few.  Probes are thus bounded to one I/O per
 * window per (queue, node, class), and only one until its sample is
 * folded.  A probe that finds the estimate unchanged doubles the cell's
 * interval (nlat-math.h): a path that stays slow gets a slow I/O per
 * 0.4 s, not two per 0.25 s.  Samples over 8x the estimate count as 8x,
 * so one hung I/O cannot drag a window's mean by its own length.
 *
 * Load.  The fold also keeps nbar, the mean number of requests in flight
 * while the queue was measured (Little's law: the latencies completed in
 * a fold over its length, an EWMA like the estimates), summed over the
 * group: the user charges a path less for load it was measured at
 * (nvme-latency-cost.h).  Both the load in flight and nbar count a
 * request by its size (nlat_size_units()) and read() gives them in
 * requests of the class asked for: a 4 KiB read sees a link carrying
 * 128 KiB writes as the 32-fold load it is.  The waiting and stalled
 * states below are the group's too: a controller that stops answering
 * stalls all its paths.
 *
 * Waiting.  Once a queue with requests in flight has answered nothing for
 * a window (since its last completion, or since it became busy), read()
 * reports that time as its latency: a path that stops answering reads as
 * slow as it has kept us waiting, so new I/O leaves it within a window.
 * With no completion for its quiet time (stale_windows windows, or four
 * times the group's mean latency if longer: slow is not dead) it is
 * stalled:
 * read() says so and grants it no probe, so it gets nothing more until
 * the transport notices.  The time of the last completion is stored on
 * the in-flight line that every I/O writes anyway.
 *
 * Unproven.  Neither state can see a path that died while idle: the
 * first burst after idle would split over it by stale estimates.  A
 * quiet group (no completion for its quiet time) that is given
 * I/O reads unproven until it answers, and gets no probe: the user sends
 * it nothing more meanwhile, and may hold I/O while every candidate is
 * unproven.  The completion that ends a quiet spell, an error's too,
 * calls the user's waker (blk_nodelat_wake_ops) to resubmit what it held.
 *
 * Defaults.  window_usec 50000: 20 folds a second, enough samples per
 * window from a few hundred IOPS.  history_pct 75: 90% of a latency step
 * is absorbed in 8 windows (0.4 s), well within the 2 s in which traffic
 * must follow two paths that swap speeds.  stale_windows 4: a path that
 * gets no I/O is probed every ~5 windows, every ~9 once probes keep
 * confirming it; a probe keeps 0.75^5 = 24% of the old value (0.75^9 =
 * 8%), so a path that was 20 ms slow and recovered reads fast again
 * after ~3 probes (~1 s; the target is 3 s): the first one that sees the
 * change resets the back-off.  min_samples 4 halves
 * the noise of lone samples; a 20 ms path at queue depth 1 then folds
 * every other window with weight 0.75^2, the same rate.  The unit tests
 * check these defaults against a two-path model of both targets.
 *
 * In flight.  One atomic per group of queues, the user's key at attach
 * (nvme-core: the controller, as queue-depth's nr_active; a namespace's
 * own count would let many low-depth namespaces herd onto one path):
 * +1 when a request is made (track: the rest of a plugged batch, routed
 * before any of it starts, sees it) or, under an I/O scheduler, which
 * assigns driver tags late, when it starts (issue; until then it is one
 * of the group's queued, nlat-math.h); -1 in requeue, end_error or done.
 * Without a scheduler, two shared read-modify-writes per I/O, as
 * queue-depth.  A bit in the request's tag byte marks it counted, and
 * whoever uncounts clears it with a cmpxchg: requeue, end_error and done
 * (called twice for the data request of a flush sequence) count once, and
 * rq_flags, and so blk-stat, stay the block core's.  Passthrough is
 * counted where the block core starts it with RQF_STATS (6.1; later
 * kernels call no rq_qos hook for it), never sampled.  Attach and detach
 * link and unlink us with the queue frozen, so no request straddles them.
 *
 * Size.  Requests grow by merging while the path was chosen per bio: the
 * tag byte also holds the class of the bio the request was made for,
 * which done files the sample under.  The bytes are the group's, one per
 * driver tag of its tag set (nr_hw_queues x queue_depth), shared by its
 * queues as the tags are; a tag outside the table (hardware queues added
 * since the group was made) is not counted.
 *
 * Lifetime.  Trackers are found by q->id in a table (nlat_lookup()):
 * under RCU by read(), a bound check and a load; under q->rq_qos_mutex by
 * attach and detach.  They are freed after a grace
 * period.  Only registered queues are tracked: queue
 * teardown (del_gendisk(), and add_disk()'s unwind) calls our rq_qos exit
 * hook (queue frozen, q->rq_qos_mutex held), which drops the tracker as
 * detach would, while a queue that is never registered is freed without
 * it.  Each tracker holds a module reference until it is released; module
 * exit waits for the frees still pending.
 *
 * Locks.  Attach and detach allocate before taking anything (room in the
 * table is reserved), then freeze the queue, then take q->rq_qos_mutex:
 * the order of teardown (which calls rq_qos_exit() on a frozen queue) and
 * of 7.2's iocost, so that no allocation can reclaim into a queue another
 * task froze while we hold the mutex it needs.  A batch (attach_many(),
 * detach_many()) starts every freeze before waiting for the first: one
 * grace period for the batch, not one per queue.  Those freezes, and a
 * single attach's, wait at most NLAT_ATTACH_FREEZE_MS (a queue whose
 * requests wait on a reconnecting controller may not drain for minutes):
 * the user retries later.  debugfs
 * is handled outside q->rq_qos_mutex under q->debugfs_mutex, as 7.2
 * requires of debugfs_mutex.  Kernels before 6.5 have no rq_qos_mutex and
 * their teardown takes no lock: nlat_qos_mutex() and nlat_teardown_owns()
 * in nlat-compat.h stand in.
 *
 * sysfs.  blk_nodelat_info_ops.emit() prints what debugfs' stats shows,
 * plus the stalled state and the probes granted (one atomic per queue,
 * raised at most once per window and cell), for the user's own sysfs
 * attribute (nvme-core: /sys/block/<path>/latency).
 *
 * rq_qos id.  Ids are only compared for equality, by rq_qos_id() looking
 * for RQ_QOS_WBT, RQ_QOS_LATENCY or RQ_QOS_COST (0 .. 2).  NLAT_RQ_QOS_ID
 * is far outside that enum: lookups of the built-in policies never find
 * us, and ids added upstream will not collide.  rq_qos_id_to_name() only
 * names policies with debugfs_attrs; we have none and make our own
 * debugfs directory, "nodelat" in the queue's.
 */

#include <linux/bitmap.h>
#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/debugfs.h>
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "blk-rq-qos.h"
#include "blk-mq.h"
#include "nlat-compat.h"
#include "blk-nodelat.h"
#include "nlat-acc.h"
#include "nlat-math.h"
#include "nlat-group.h"

#define NLAT_RQ_QOS_ID		((enum rq_qos_id)0x6e6c)	/* "nl" */
#define NLAT_HASH_BITS		6
#define NLAT_ATTACH_FREEZE_MS	1000

/*
 * Knobs: /sys/module/blk_nodelat/parameters/.  Out-of-range writes fail
 * with -EINVAL and keep the old value; readers take them with READ_ONCE(),
 * a change applies from the next fold or read().
 */
struct nlat_knob {
	unsigned int	*val;
	unsigned int	min;
	unsigned int	max;
};

static unsigned int nlat_window_usec = NLAT_WINDOW_USEC_DEF;
static unsigned int nlat_history_pct = NLAT_HISTORY_PCT_DEF;
static unsigned int nlat_min_samples = NLAT_MIN_SAMPLES_DEF;
static unsigned int nlat_stale_windows = NLAT_STALE_WINDOWS_DEF;

static int nlat_knob_set(const char *buf, const struct kernel_param *kp)
{
	const struct nlat_knob *k = kp->arg;
	unsigned int v;

	if (kstrtouint(buf, 0, &v) || v < k->min || v > k->max)
		return -EINVAL;
	WRITE_ONCE(*k->val, v);
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

/* One (node, size class) of a queue; one cache line. */
struct nlat_cell {
	struct nlat_est	est;		/* written by the fold only */
	u64		probe_ns;	/* last probe granted, cmpxchg */
	u64		fold_sum;	/* the fold's scratch */
	u64		fold_nr;
};

/* A submitting CPU's samples on one queue: nlat-acc.h, one per class. */
struct nlat_pcpu {
	atomic64_t	acc[NLAT_NR_CLASSES];
};

/*
 * The queues a user attached with one key (nvme-core: a controller, whose
 * namespaces' path queues share its link): their requests in flight, the
 * sum of their nbar, and the clocks the waiting and stalled states are
 * read from, so that paths compare by their controllers' load.
 */
struct nlat_group {
	struct hlist_node	node;		/* nlat_groups */
	const void		*key;
	struct blk_mq_tag_set	*set;		/* its queues' tags */
	unsigned int		refs;		/* under nlat_group_lock */
	struct rcu_head		rcu;
	u8			*tag_bytes;	/* [hctx][tag]: NLAT_TAG_* */
	unsigned int		tag_hctxs;
	unsigned int		tag_depth;
	atomic64_t		inflight ____cacheline_aligned_in_smp;
	atomic64_t		queued;		/* scheduler's, not started */
	u64			done_ns;	/* last completion, ktime_get_ns() */
	u64			busy_ns;	/* inflight went 0 -> 1 */
	atomic_long_t		nbar;		/* sum of its queues' nbar */
	u64			fold_ns;	/* last fold of any of them */
	u64			lat_ewma;	/* all its samples: nlat_quiet_ns() */
};

struct nlat_queue {
	struct rq_qos		rqos;
	struct request_queue	*q;
	struct nlat_group	*grp;		/* referenced before attach */
	unsigned int		nr_cells;	/* nr_node_ids * classes */
	struct nlat_pcpu __percpu *pcpu;	/* by submitting CPU */
	unsigned long		*cpus;		/* submitters since the fold */
	struct delayed_work	fold_work;
	struct rcu_head		rcu;
	u32			nbar;		/* nlat_nbar_fold(), by the fold */
	u32			grp_nbar;	/* what nbar adds to the group's */
	u64			fold_ns;	/* last fold; the fold's only */
	atomic_long_t		probes;		/* probes granted, ever */
	struct nlat_cell	cells[] ____cacheline_aligned_in_smp;
};

/*
 * Tracked queues by q->id, which blk_queue_ida keeps dense.  Readers: RCU,
 * a bound check and a load.  The table only grows, before any queue lock
 * (nlat_reserve()), and is swapped whole: its slots are stored under
 * nlat_table_lock, so that a growth copies each one's last value, and
 * under the queue's nlat_qos_mutex().  Old tables and trackers are freed
 * after a grace period.
 */
struct nlat_table {
	unsigned int		nr;
	struct rcu_head		rcu;
	struct nlat_queue __rcu	*slot[];
};

#define NLAT_TABLE_MIN		64

static struct nlat_table __rcu *nlat_table;
static DEFINE_SPINLOCK(nlat_table_lock);
static atomic_t nlat_nr_queues = ATOMIC_INIT(0);

/*
 * Groups by key.  Only attach and release look them up and count their
 * references, under nlat_group_lock (a spinlock: release runs in queue
 * teardown); the I/O path reaches a group through its queue, which holds
 * a reference, and a group is freed a grace period after its last queue
 * left the table.
 */
static DEFINE_HASHTABLE(nlat_groups, NLAT_HASH_BITS);
static DEFINE_SPINLOCK(nlat_group_lock);

static inline struct nlat_queue *nlat_rqos_to_nq(struct rq_qos *rqos)
{
	return container_of(rqos, struct nlat_queue, rqos);
}

/* The clock of estimates, probes and ages: tick resolution is plenty. */
static inline u64 nlat_now(void)
{
	return ktime_get_coarse_ns();
}

static const struct nlat_params *nlat_params_get(struct nlat_params *p)
{
	p->window_ns = (u64)READ_ONCE(nlat_window_usec) * NSEC_PER_USEC;
	p->hist_w = nlat_pct_to_w(READ_ONCE(nlat_history_pct));
	p->min_samples = READ_ONCE(nlat_min_samples);
	p->stale_windows = READ_ONCE(nlat_stale_windows);
	return p;
}

/* How long @grp may go unanswered: nlat_quiet_ns() of its own latency. */
static u64 nlat_group_quiet(struct nlat_group *grp,
			    const struct nlat_params *p)
{
	return nlat_quiet_ns(nlat_ewma_ns(READ_ONCE(grp->lat_ewma)), p);
}

/* The user's waker (blk_nodelat_wake_ops); called under RCU. */
static const struct blk_nodelat_waker __rcu *nlat_waker;
static DEFINE_MUTEX(nlat_waker_mutex);

/* A completion ended @grp's quiet spell; its done_ns is written. */
static void nlat_answered(struct nlat_group *grp)
{
	const struct blk_nodelat_waker *w;

	/*
	 * done_ns before the user's look for held I/O: its holder marks
	 * that, then reads done_ns (blk_nodelat_waker), so one sees the other.
	 */
	smp_mb();
	rcu_read_lock();
	w = rcu_dereference(nlat_waker);
	if (w)
		w->answered(grp->key);
	rcu_read_unlock();
}

static void nlat_set_waker(const struct blk_nodelat_waker *w)
{
	const struct blk_nodelat_waker *old;

	mutex_lock(&nlat_waker_mutex);
	old = rcu_replace_pointer(nlat_waker, w,
				  lockdep_is_held(&nlat_waker_mutex));
	mutex_unlock(&nlat_waker_mutex);
	/* completions calling the old one */
	if (old && old != w)
		synchronize_rcu();
}

static inline unsigned int nlat_cell_idx(int node, unsigned int cls)
{
	return node * NLAT_NR_CLASSES + cls;
}

/*
 * Caller holds rcu_read_lock(), and nlat_qos_mutex() to keep what it found
 * past that.  An id is reused only after its queue is freed, and teardown
 * erases the entry before that.
 */
static struct nlat_queue *nlat_lookup(struct request_queue *q)
{
	struct nlat_table *t = rcu_dereference(nlat_table);
	struct nlat_queue *nq;

	if (!t || q->id >= t->nr)
		return NULL;
	nq = rcu_dereference(t->slot[q->id]);
	return nq && nq->q == q ? nq : NULL;
}

/* Make room for @id in the table: allocates, so before any queue lock. */
static int nlat_reserve(unsigned int id)
{
	struct nlat_table *t, *old;
	unsigned int nr, i;

	rcu_read_lock();
	t = rcu_dereference(nlat_table);
	nr = t ? t->nr : 0;
	rcu_read_unlock();
	if (id < nr)
		return 0;
	nr = max_t(unsigned int, roundup_pow_of_two(id + 1), NLAT_TABLE_MIN);
	t = kvzalloc(struct_size(t, slot, nr), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->nr = nr;
	spin_lock(&nlat_table_lock);
	old = rcu_dereference_protected(nlat_table,
					lockdep_is_held(&nlat_table_lock));
	if (old && old->nr >= nr) {
		spin_unlock(&nlat_table_lock);
		kvfree(t);
		return 0;
	}
	for (i = 0; old && i < old->nr; i++)
		RCU_INIT_POINTER(t->slot[i], rcu_dereference_protected(old->slot[i],
				 lockdep_is_held(&nlat_table_lock)));
	rcu_assign_pointer(nlat_table, t);
	spin_unlock(&nlat_table_lock);
	if (old)
		kvfree_rcu(old, rcu);
	return 0;
}

/* Store @nq (NULL: erase) at @id, which nlat_reserve() made room for. */
static void nlat_table_set(unsigned int id, struct nlat_queue *nq)
{
	struct nlat_table *t;

	spin_lock(&nlat_table_lock);
	t = rcu_dereference_protected(nlat_table,
				      lockdep_is_held(&nlat_table_lock));
	rcu_assign_pointer(t->slot[id], nq);
	spin_unlock(&nlat_table_lock);
}

/*
 * The fold work is the only writer of est and the scratch (a work item
 * never runs concurrently with itself); read(), done and debugfs read
 * est.ewma, est.upd_ns, est.backoff and est.samples locklessly, so those
 * are stored with WRITE_ONCE().  A reader may pair a new ewma with the
 * old upd_ns or the reverse: that grants at most one needless probe.
 */
static void nlat_fold_cell(struct nlat_cell *c, u64 now,
			   const struct nlat_params *p)
{
	struct nlat_est e = c->est;

	if (nlat_fold(&e, c->fold_sum, c->fold_nr, now, p)) {
		WRITE_ONCE(c->est.ewma, e.ewma);
		WRITE_ONCE(c->est.upd_ns, e.upd_ns);
		WRITE_ONCE(c->est.backoff, e.backoff);
		WRITE_ONCE(c->est.samples, e.samples);
	}
	c->est.acc_sum = e.acc_sum;
	c->est.acc_nr = e.acc_nr;
	c->fold_sum = 0;
	c->fold_nr = 0;
}

/*
 * Take @cpu's samples into its node's cells; returns their ns and adds
 * their number to *@nr, their ns weighted by size units to *@sum_u.  The
 * exchange pairs with done's add: a sample is taken whole by exactly one
 * fold.
 */
static u64 nlat_take_cpu(struct nlat_queue *nq, int cpu, u64 *nr, u64 *sum_u)
{
	struct nlat_pcpu *pc = per_cpu_ptr(nq->pcpu, cpu);
	int node = cpu_to_node(cpu);
	unsigned int base, cls;
	u64 sum = 0;

	base = ((unsigned int)node < nr_node_ids ? node : 0) * NLAT_NR_CLASSES;

	for (cls = 0; cls < NLAT_NR_CLASSES; cls++) {
		struct nlat_cell *c = &nq->cells[base + cls];
		u64 v, cs, cn;

		if (!atomic64_read(&pc->acc[cls]))
			continue;
		v = atomic64_xchg(&pc->acc[cls], 0);
		nlat_acc_split(v, &cs, &cn);
		c->fold_sum += cs;
		c->fold_nr += cn;
		sum += cs;
		*nr += cn;
		*sum_u += cs * nlat_size_units(cls % NLAT_NR_SIZES);
	}
	return sum;
}

static void nlat_fold_work(struct work_struct *work)
{
	struct nlat_queue *nq = container_of(to_delayed_work(work),
					     struct nlat_queue, fold_work);
	unsigned int words = BITS_TO_LONGS(nr_cpu_ids), w, i;
	struct nlat_group *grp = nq->grp;
	u64 now = nlat_now(), sum = 0, sum_u = 0, nr = 0;
	struct nlat_params p;
	u32 nbar;

	nlat_params_get(&p);
	/* a CPU whose bit is taken here re-marks itself on its next sample */
	for (w = 0; w < words; w++) {
		unsigned long bits;
		int bit;

		if (!READ_ONCE(nq->cpus[w]))
			continue;
		bits = xchg(&nq->cpus[w], 0);
		for_each_set_bit(bit, &bits, BITS_PER_LONG)
			sum += nlat_take_cpu(nq, w * BITS_PER_LONG + bit, &nr,
					     &sum_u);
	}
	for (i = 0; i < nq->nr_cells; i++)
		nlat_fold_cell(&nq->cells[i], now, &p);
	/* the group's queues fold apart, maybe at once */
	if (nr)
		nlat_ewma_update_shared(&grp->lat_ewma, div64_u64(sum, nr),
					p.hist_w);
	/* the first fold spans the window since the first completion */
	if ((s64)(now - nq->fold_ns) > 0) {
		nq->nbar = nlat_nbar_fold(nq->nbar, sum_u,
					  nq->fold_ns ? now - nq->fold_ns :
							p.window_ns,
					  p.hist_w, p.window_ns);
	}
	nq->fold_ns = now;
	WRITE_ONCE(grp->fold_ns, now);
	/*
	 * A queue with samples folds once more a window later; one without
	 * has gone idle and leaves the group's load, which would otherwise
	 * keep its last nbar while its siblings work.
	 */
	nbar = nr ? nq->nbar : 0;
	atomic_long_add((long)nbar - nq->grp_nbar, &grp->nbar);
	nq->grp_nbar = nbar;
	if (nr)
		queue_delayed_work(nlat_wq, &nq->fold_work,
				   usecs_to_jiffies(p.window_ns / NSEC_PER_USEC));
}

static struct nlat_queue *nlat_alloc(struct request_queue *q)
{
	unsigned int nr_cells = nr_node_ids * NLAT_NR_CLASSES;
	struct nlat_queue *nq;

	nq = kzalloc_node(struct_size(nq, cells, nr_cells), GFP_KERNEL,
			  q->node);
	if (!nq)
		return NULL;
	/* a line of its own: other queues' slots are written elsewhere */
	nq->pcpu = __alloc_percpu(sizeof(*nq->pcpu), SMP_CACHE_BYTES);
	if (!nq->pcpu)
		goto free_nq;
	nq->cpus = bitmap_zalloc(nr_cpu_ids, GFP_KERNEL);
	if (!nq->cpus)
		goto free_pcpu;
	nq->q = q;
	nq->nr_cells = nr_cells;
	INIT_DELAYED_WORK(&nq->fold_work, nlat_fold_work);
	return nq;

free_pcpu:
	free_percpu(nq->pcpu);
free_nq:
	kfree(nq);
	return NULL;
}

static void nlat_free(struct nlat_queue *nq)
{
	bitmap_free(nq->cpus);
	free_percpu(nq->pcpu);
	kfree(nq);
}

static void nlat_free_rcu(struct rcu_head *head)
{
	nlat_free(container_of(head, struct nlat_queue, rcu));
}

static void nlat_group_free(struct nlat_group *g)
{
	kvfree(g->tag_bytes);
	kfree(g);
}

static void nlat_group_free_rcu(struct rcu_head *head)
{
	nlat_group_free(container_of(head, struct nlat_group, rcu));
}

/* Caller holds nlat_group_lock. */
static struct nlat_group *nlat_group_find(const void *key)
{
	struct nlat_group *g;

	hash_for_each_possible(nlat_groups, g, node, (unsigned long)key)
		if (g->key == key)
			return g;
	return NULL;
}

/*
 * A reference to the group of @key, made for @q's tag set if there is
 * none; before any lock of @q's.  The tags, and so the table of tag
 * bytes, are the tag set's: a group is one tag set.  Returns an ERR_PTR()
 * on failure: -EINVAL for a queue of another tag set than its group's.
 */
static struct nlat_group *nlat_group_get(struct request_queue *q,
					 const void *key)
{
	struct blk_mq_tag_set *set = q->tag_set;
	struct nlat_group *g, *new = NULL;

	for (;;) {
		spin_lock(&nlat_group_lock);
		g = nlat_group_find(key);
		if (!g && new) {
			g = new;
			new = NULL;
			hash_add(nlat_groups, &g->node, (unsigned long)key);
		}
		if (g && g->set == set)
			g->refs++;
		spin_unlock(&nlat_group_lock);
		if (new)
			nlat_group_free(new);
		if (g)
			return g->set == set ? g : ERR_PTR(-EINVAL);

		new = kzalloc_node(sizeof(*new), GFP_KERNEL, q->node);
		if (!new)
			return ERR_PTR(-ENOMEM);
		new->key = key;
		new->set = set;
		new->tag_hctxs = set->nr_hw_queues;
		new->tag_depth = set->queue_depth;
		new->tag_bytes = kvzalloc_node(array_size(new->tag_hctxs,
							  new->tag_depth),
					       GFP_KERNEL, q->node);
		if (!new->tag_bytes) {
			kfree(new);
			return ERR_PTR(-ENOMEM);
		}
	}
}

/*
 * Drop a reference; a group whose last queue left is freed after a grace
 * period (read() may still hold it).  Its queues' nbar left it already.
 */
static void nlat_group_put(struct nlat_group *g)
{
	bool last;

	spin_lock(&nlat_group_lock);
	last = !--g->refs;
	if (last)
		hash_del(&g->node);
	spin_unlock(&nlat_group_lock);
	if (last)
		call_rcu(&g->rcu, nlat_group_free_rcu);
}

/* A request's tag byte: its size class, and whether it is counted. */
#define NLAT_TAG_SIZE		0x03
#define NLAT_TAG_COUNTED	0x80

/*
 * @rq's tag byte: the size class its latency is filed under (its first
 * bio's, the one the path was chosen for; the rest merged into it) and
 * the counted bit.  NULL outside the table.
 */
static u8 *nlat_tag_slot(struct nlat_queue *nq, struct request *rq)
{
	struct nlat_group *g = nq->grp;
	unsigned int h = rq->mq_hctx->queue_num;

	if (h >= g->tag_hctxs || rq->tag < 0 || rq->tag >= g->tag_depth)
		return NULL;
	return &g->tag_bytes[h * g->tag_depth + rq->tag];
}

static bool nlat_rq_sampled(struct request *rq)
{
	return req_op(rq) == REQ_OP_READ || req_op(rq) == REQ_OP_WRITE;
}

/*
 * Uncount @rq if it is counted, once whoever calls (see "In flight" at
 * the top); its tag byte to *@tag.  Issue wrote the byte before the
 * driver saw the request.
 */
static bool nlat_uncount(struct nlat_queue *nq, struct request *rq, u8 *tag)
{
	u8 *slot = nlat_tag_slot(nq, rq), old;

	if (!slot)
		return false;
	old = READ_ONCE(*slot);
	do {
		if (!(old & NLAT_TAG_COUNTED))
			return false;
	} while (!try_cmpxchg(slot, &old, old & ~NLAT_TAG_COUNTED));
	atomic64_sub(nlat_infl_delta(nlat_size_units(old & NLAT_TAG_SIZE)),
		     &nq->grp->inflight);
	*tag = old;
	return true;
}

/* Count @rq in its group, filed under @bytes' size class. */
static void nlat_count(struct nlat_group *grp, struct request *rq, u8 *slot,
		       unsigned int bytes)
{
	u8 size = nlat_rq_sampled(rq) ? nlat_size_class(bytes) : 0;
	s64 v;

	WRITE_ONCE(*slot, size | NLAT_TAG_COUNTED);
	v = atomic64_add_return(nlat_infl_delta(nlat_size_units(size)),
				&grp->inflight);
	if (nlat_infl_nr(v) == 1)
		WRITE_ONCE(grp->busy_ns, ktime_get_ns());
}

/* The group's scheduled requests (nlat-math.h), on the in-flight line. */
static void nlat_queued_add(struct nlat_group *grp, bool inc)
{
	u64 tick = jiffies, new;
	s64 old = atomic64_read(&grp->queued);

	do {
		new = inc ? nlat_queued_inc(old, tick) : nlat_queued_dec(old, tick);
		if (new == (u64)old)
			return;
	} while (!atomic64_try_cmpxchg(&grp->queued, &old, new));
}

/*
 * A bio got a new request (not a merge): count it now, so that the rest of
 * a plugged batch, routed before any of it starts, sees it.  Under an I/O
 * scheduler it has no driver tag yet: issue counts it, and until then it
 * is one of the group's queued.
 */
static void nlat_rqos_track(struct rq_qos *rqos, struct request *rq,
			    struct bio *bio)
{
	struct nlat_queue *nq = nlat_rqos_to_nq(rqos);
	u8 *slot = nlat_tag_slot(nq, rq);

	if (!slot)
		nlat_queued_add(nq->grp, true);
	else if (!(READ_ONCE(*slot) & NLAT_TAG_COUNTED))
		nlat_count(nq->grp, rq, slot, bio->bi_iter.bi_size);
}

/* Started: counted unless track did, or requeue took it back. */
static void nlat_rqos_issue(struct rq_qos *rqos, struct request *rq)
{
	struct nlat_queue *nq = nlat_rqos_to_nq(rqos);
	u8 *slot = nlat_tag_slot(nq, rq);

	if (!(rq->rq_flags & RQF_STATS) || !slot ||
	    (READ_ONCE(*slot) & NLAT_TAG_COUNTED))
		return;
	nlat_count(nq->grp, rq, slot,
		   rq->bio ? rq->bio->bi_iter.bi_size : blk_rq_bytes(rq));
	/* scheduled: track queued it */
	if (rq->internal_tag >= 0)
		nlat_queued_add(nq->grp, false);
}

/* Before the block core resets the request to idle. */
static void nlat_rqos_requeue(struct rq_qos *rqos, struct request *rq)
{
	u8 tag;

	nlat_uncount(nlat_rqos_to_nq(rqos), rq, &tag);
}

/*
 * A request of @grp completed at @now, in error or not: an answer.  The
 * one that ends a quiet spell calls the waker; done_ns is on the line
 * the uncount just wrote.
 */
static void nlat_answer(struct nlat_group *grp, u64 now)
{
	struct nlat_params p;
	u64 prev = nlat_clock_advance(&grp->done_ns, now);

	if (unlikely(nlat_unproven_for(true, prev, now,
				       nlat_group_quiet(grp, nlat_params_get(&p)))))
		nlat_answered(grp);
}

static void nlat_rqos_done(struct rq_qos *rqos, struct request *rq)
{
	struct nlat_queue *nq = nlat_rqos_to_nq(rqos);
	u64 start = rq->io_start_time_ns, now, lat, v;
	int cpu = rq->mq_ctx->cpu, node = cpu_to_node(cpu);
	unsigned int cls;
	u8 tag;

	if (!nlat_uncount(nq, rq, &tag))
		return;
	now = ktime_get_ns();
	nlat_answer(nq->grp, now);
	/* never started (ended in the plug, or before the driver took it) */
	if (!nlat_rq_sampled(rq) || !start)
		return;

	cls = nlat_rw_class(req_op(rq) == REQ_OP_READ, tag & NLAT_TAG_SIZE);
	if ((unsigned int)node >= nr_node_ids)
		node = 0;
	/* the cell's line is read-mostly: only folds and probes write it */
	lat = nlat_bound_lat(nlat_clamp_lat(now > start ? now - start : 0),
			     READ_ONCE(nq->cells[nlat_cell_idx(node, cls)].est.ewma));
	/* the submitter's slot; fully ordered, so the fold sees the add */
	v = atomic64_add_return(nlat_acc_sample(lat),
				&per_cpu_ptr(nq->pcpu, cpu)->acc[cls]);
	/* tested first: the line stays shared while the bit is set */
	if (!test_bit(cpu, nq->cpus)) {
		set_bit(cpu, nq->cpus);
		/*
		 * The bit before the pending test: a fold that cleared
		 * pending, then took the bits, sees ours or is queued again.
		 */
		smp_mb__after_atomic();
	}
	if (unlikely(nlat_acc_full(v)))
		mod_delayed_work(nlat_wq, &nq->fold_work, 0);
	else if (!delayed_work_pending(&nq->fold_work))
		/* reading the pending bit shares the line; queueing writes */
		queue_delayed_work(nlat_wq, &nq->fold_work,
				   usecs_to_jiffies(READ_ONCE(nlat_window_usec)));
}

/*
 * The user saw @rq fail or fail over: uncount it now, so done takes no
 * sample.  It is an answer all the same: a path that fails every I/O is
 * not quiet, and what is held for it is routed again.  The request holds
 * a queue reference, so q->rq_qos cannot be unlinked under us (that needs
 * the queue frozen).
 */
static void nlat_end_error(struct request *rq)
{
	struct rq_qos *rqos = rq_qos_id(rq->q, NLAT_RQ_QOS_ID);
	struct nlat_queue *nq;
	u8 tag;

	if (!rqos)
		return;
	nq = nlat_rqos_to_nq(rqos);
	if (nlat_uncount(nq, rq, &tag))
		nlat_answer(nq->grp, ktime_get_ns());
}

/* One cell as debugfs and sysfs print it: age -1 while it has no estimate. */
struct nlat_row {
	u64	lat_ns;
	u64	samples;
	s64	age_msec;
};

static void nlat_row(const struct nlat_queue *nq, int node, unsigned int cls,
		     u64 now, struct nlat_row *r)
{
	const struct nlat_cell *c = &nq->cells[nlat_cell_idx(node, cls)];
	u64 ewma = READ_ONCE(c->est.ewma);
	u64 upd = READ_ONCE(c->est.upd_ns);

	r->lat_ns = nlat_ewma_ns(ewma);
	r->samples = READ_ONCE(c->est.samples);
	r->age_msec = -1;
	if (ewma)
		r->age_msec = div_u64(now > upd ? now - upd : 0, NSEC_PER_MSEC);
}

static int nlat_stats_show(struct seq_file *m, void *unused)
{
	struct nlat_queue *nq = m->private;
	u64 now = nlat_now(), done, fine;
	unsigned int cls;
	int node;

	done = READ_ONCE(nq->grp->done_ns);
	fine = ktime_get_ns();
	seq_printf(m, "inflight %d done_age_msec %lld\n",
		   nlat_infl_nr(atomic64_read(&nq->grp->inflight)),
		   done ? (s64)div_u64(fine > done ? fine - done : 0,
				       NSEC_PER_MSEC) : -1LL);
	seq_puts(m, "node class lat_nsec samples age_msec\n");
	for_each_node(node) {
		for (cls = 0; cls < NLAT_NR_CLASSES; cls++) {
			struct nlat_row r;

			nlat_row(nq, node, cls, now, &r);
			seq_printf(m, "%d %u %llu %llu %lld\n", node, cls,
				   r.lat_ns, r.samples, r.age_msec);
		}
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nlat_stats);

/* Caller holds q->debugfs_mutex. */
static bool nlat_debugfs_present(struct request_queue *q)
{
	struct dentry *d = debugfs_lookup("nodelat", q->debugfs_dir);

	dput(d);
	return d;
}

/*
 * q->debugfs_mutex orders us against blk_register_queue() and
 * blk_unregister_queue(), which create and remove q->debugfs_dir with
 * everything in it, and against our own detach.  The tracker found here
 * cannot be freed while we hold the mutex with debugfs_dir set: detach
 * removes our files under it before the free, and teardown's exit hook
 * runs after blk_unregister_queue() has cleared debugfs_dir under it.
 */
static void nlat_debugfs_register(struct request_queue *q)
{
	struct nlat_queue *nq;
	unsigned int noio;
	struct dentry *dir;

	mutex_lock(&q->debugfs_mutex);
	/* teardown may have frozen the queue: no reclaim into it */
	noio = memalloc_noio_save();
	if (!q->debugfs_dir || nlat_debugfs_present(q))
		goto out;
	rcu_read_lock();
	nq = nlat_lookup(q);
	rcu_read_unlock();
	if (nq) {
		dir = debugfs_create_dir("nodelat", q->debugfs_dir);
		debugfs_create_file("stats", 0400, dir, nq, &nlat_stats_fops);
	}
out:
	memalloc_noio_restore(noio);
	mutex_unlock(&q->debugfs_mutex);
}

static void nlat_debugfs_unregister(struct request_queue *q)
{
	mutex_lock(&q->debugfs_mutex);
	if (q->debugfs_dir)
		debugfs_lookup_and_remove("nodelat", q->debugfs_dir);
	mutex_unlock(&q->debugfs_mutex);
}

/* Caller holds nlat_qos_mutex(); read() may hold @nq under RCU still. */
static void nlat_unhash(struct nlat_queue *nq)
{
	nlat_table_set(nq->q->id, NULL);
}

/*
 * Drop a tracker that is unlinked from q->rq_qos and the table and has
 * no debugfs files.  No hook of ours can run any more, so once the fold
 * work is cancelled nothing can queue it again.  The module reference
 * goes now, so that rmmod works right after: nlat_exit() waits for the
 * free.
 */
static void nlat_release(struct nlat_queue *nq)
{
	cancel_delayed_work_sync(&nq->fold_work);
	atomic_long_sub(nq->grp_nbar, &nq->grp->nbar);
	nlat_group_put(nq->grp);
	blk_stat_disable_accounting(nq->q);
	atomic_dec(&nlat_nr_queues);
	call_rcu(&nq->rcu, nlat_free_rcu);
	module_put(THIS_MODULE);
}

/*
 * Queue teardown: rq_qos_exit() unlinked us (holding q->rq_qos_mutex from
 * 6.5 on), the queue is frozen; blk_unregister_queue() removed debugfs.
 */
static void nlat_rqos_exit(struct rq_qos *rqos)
{
	struct nlat_queue *nq = nlat_rqos_to_nq(rqos);

	nlat_unhash(nq);
	nlat_release(nq);
}

static const struct rq_qos_ops nlat_rqos_ops = {
	.track		= nlat_rqos_track,
	.issue		= nlat_rqos_issue,
	.requeue	= nlat_rqos_requeue,
	.done		= nlat_rqos_done,
	.exit		= nlat_rqos_exit,
};

static bool nlat_tracked(struct request_queue *q)
{
	bool ret;

	/* as in nlat_read(): a tracker in the table is not freed under RCU */
	rcu_read_lock();
	ret = nlat_lookup(q);
	rcu_read_unlock();
	return ret;
}

/* A tracker made for @q and not linked: undo nlat_attach_prepare(). */
static void nlat_attach_undo(struct nlat_queue *nq)
{
	nlat_group_put(nq->grp);
	nlat_free(nq);		/* never published: no grace period */
	module_put(THIS_MODULE);
}

/*
 * Everything an attach allocates, before any lock: reclaim may write
 * through this very queue.  Returns 1 with *@nqp set, or what attach
 * returns without freezing.
 */
static int nlat_attach_prepare(struct request_queue *q, const void *group,
			       struct nlat_queue **nqp)
{
	struct nlat_queue *nq;
	int ret;

	*nqp = NULL;
	ret = nlat_rqos_supported();
	if (ret)
		return ret;
	if (!queue_is_mq(q))
		return -EINVAL;
	if (nlat_tracked(q))
		return 0;
	if (!blk_queue_registered(q))
		return -EAGAIN;
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	ret = -ENOMEM;
	nq = nlat_alloc(q);
	if (!nq)
		goto put_module;
	nq->grp = nlat_group_get(q, group);
	if (IS_ERR(nq->grp)) {
		ret = PTR_ERR(nq->grp);
		goto free_nq;
	}
	ret = nlat_reserve(q->id);
	if (ret)
		goto put_grp;
	nlat_rqos_init(&nq->rqos, q, NLAT_RQ_QOS_ID, &nlat_rqos_ops);
	*nqp = nq;
	return 1;

put_grp:
	nlat_group_put(nq->grp);
free_nq:
	nlat_free(nq);
put_module:
	module_put(THIS_MODULE);
	return ret;
}

/*
 * Link @nq into its queue, which the caller froze (drained).  Returns 1
 * when linked, 0 when a concurrent attach won, or an error.
 */
static int nlat_attach_link(struct request_queue *q, struct nlat_queue *nq)
{
	int ret = 0;

	mutex_lock(nlat_qos_mutex(q));
	if (nlat_tracked(q))
		goto unlock;
	/* seen registered here, teardown's exit hook is still to come */
	ret = -ENODEV;
	if (blk_queue_dying(q) || !blk_queue_registered(q))
		goto unlock;
	ret = nlat_rqos_link(q, &nq->rqos);
	if (ret)
		goto unlock;
	/* into the room reserved, so without allocating */
	nlat_table_set(q->id, nq);
	blk_stat_enable_accounting(q);
	atomic_inc(&nlat_nr_queues);
	ret = 1;
unlock:
	mutex_unlock(nlat_qos_mutex(q));
	return ret;
}

/*
 * Attach @n queues (see blk_nodelat_batch_ops): every freeze is started
 * before the first is waited for, so the batch costs one grace period,
 * not one per queue; all share one deadline.
 */
static void nlat_attach_many(struct request_queue *const *qs,
			     const void *const *groups, int *rets,
			     unsigned int n)
{
	unsigned long deadline;
	struct nlat_queue **nqs;
	unsigned int i, noio;

	nqs = kvcalloc(n, sizeof(*nqs), GFP_KERNEL);
	for (i = 0; i < n; i++)
		rets[i] = nqs ? nlat_attach_prepare(qs[i], groups[i], &nqs[i]) :
				-ENOMEM;
	if (!nqs)
		return;

	noio = memalloc_noio_save();
	for (i = 0; i < n; i++)
		if (nqs[i])
			nlat_freeze_start(qs[i]);
	deadline = jiffies + msecs_to_jiffies(NLAT_ATTACH_FREEZE_MS);
	for (i = 0; i < n; i++) {
		if (!nqs[i])
			continue;
		rets[i] = -EBUSY;
		if (nlat_freeze_wait(qs[i], deadline))
			rets[i] = nlat_attach_link(qs[i], nqs[i]);
		nlat_unfreeze_started(qs[i]);
		if (rets[i] == 1)
			nqs[i] = NULL;
	}
	memalloc_noio_restore(noio);

	for (i = 0; i < n; i++) {
		if (rets[i] == 1)
			nlat_debugfs_register(qs[i]);
		else if (nqs[i])
			nlat_attach_undo(nqs[i]);
	}
	kvfree(nqs);
}

static int nlat_attach(struct request_queue *q, const void *group)
{
	int ret;

	nlat_attach_many(&q, &group, &ret, 1);
	return ret;
}

/*
 * Detach @n queues: freezes started together, as attach.  With a
 * @deadline, a queue that has not drained by then stays tracked
 * (-EBUSY); without, each waits as long as it takes.
 */
static void nlat_detach_queues(struct request_queue *const *qs, int *rets,
			       unsigned int n, bool bounded)
{
	struct nlat_queue **nqs, *one = NULL;
	unsigned long deadline;
	unsigned int i, noio;

	/* allocated before freezing; without it, one queue at a time */
	nqs = n > 1 ? kvcalloc(n, sizeof(*nqs), GFP_KERNEL) : &one;
	if (!nqs) {
		for (i = 0; i < n; i++)
			nlat_detach_queues(&qs[i], &rets[i], 1, bounded);
		return;
	}
	for (i = 0; i < n; i++)
		rets[i] = nlat_tracked(qs[i]);

	noio = memalloc_noio_save();
	for (i = 0; i < n; i++)
		if (rets[i])
			nlat_freeze_start(qs[i]);
	deadline = jiffies + msecs_to_jiffies(NLAT_ATTACH_FREEZE_MS);
	for (i = 0; i < n; i++) {
		struct nlat_queue *nq = NULL;

		if (!rets[i])
			continue;
		rets[i] = -EBUSY;
		if (!bounded || nlat_freeze_wait(qs[i], deadline)) {
			if (!bounded)
				blk_mq_freeze_queue_wait(qs[i]);
			mutex_lock(nlat_qos_mutex(qs[i]));
			/* before 6.5, a queue in teardown is its exit hook's */
			if (!nlat_teardown_owns(qs[i])) {
				/* the table; the mutex keeps nq */
				rcu_read_lock();
				nq = nlat_lookup(qs[i]);
				rcu_read_unlock();
			}
			if (nq) {
				nlat_rqos_unlink(qs[i], &nq->rqos);
				nlat_unhash(nq);
			}
			mutex_unlock(nlat_qos_mutex(qs[i]));
			rets[i] = !!nq;
		}
		nlat_unfreeze_started(qs[i]);
		nqs[i] = nq;
	}
	memalloc_noio_restore(noio);

	for (i = 0; i < n; i++) {
		if (rets[i] != 1)
			continue;
		nlat_debugfs_unregister(qs[i]);
		nlat_release(nqs[i]);
	}
	if (nqs != &one)
		kvfree(nqs);
}

static bool nlat_detach(struct request_queue *q)
{
	int ret;

	nlat_detach_queues(&q, &ret, 1, false);
	return ret == 1;
}

static void nlat_detach_many(struct request_queue *const *qs, int *rets,
			     unsigned int n)
{
	nlat_detach_queues(qs, rets, n, true);
}

static unsigned int nlat_nr_tracked(void)
{
	return atomic_read(&nlat_nr_queues);
}

static bool nlat_read(struct request_queue *q, int node, unsigned int cls,
		      bool may_probe, struct nlat_view *v)
{
	struct nlat_params p;
	struct nlat_queue *nq;
	struct nlat_cell *c;
	u64 ewma, upd, probe, now, since, quiet, queued;
	unsigned int shift;
	s64 infl, units;
	long nbar;
	u32 started;
	bool busy;

	memset(v, 0, sizeof(*v));
	if ((unsigned int)node >= nr_node_ids)
		node = 0;
	if (cls >= NLAT_NR_CLASSES)
		cls = NLAT_NR_CLASSES - 1;

	/* nq is freed by call_rcu() only after it left the table */
	rcu_read_lock();
	nq = nlat_lookup(q);
	if (!nq) {
		rcu_read_unlock();
		return false;
	}
	c = &nq->cells[nlat_cell_idx(node, cls)];
	ewma = READ_ONCE(c->est.ewma);
	upd = READ_ONCE(c->est.upd_ns);
	probe = READ_ONCE(c->probe_ns);
	v->lat_ns = nlat_ewma_ns(ewma);
	infl = atomic64_read(&nq->grp->inflight);
	started = max(nlat_infl_nr(infl), 0);
	/* the group's load in requests of this class's size */
	shift = nlat_size_shift(cls % NLAT_NR_SIZES);
	units = max_t(s64, nlat_infl_units(infl), 0);

	nlat_params_get(&p);
	/* one coarse clock: its lag behind done_ns only shortens a wait */
	now = nlat_now();
	since = max(READ_ONCE(nq->grp->done_ns), READ_ONCE(nq->grp->busy_ns));
	/* only what was started can keep us waiting */
	v->lat_ns = nlat_waited_lat(v->lat_ns, started, since, now, &p);
	quiet = nlat_group_quiet(nq->grp, &p);
	v->stalled = nlat_stalled_for(started, since, now, quiet);
	v->started = started;
	queued = atomic64_read(&nq->grp->queued);
	/* not started yet, size unknown: one of this class each */
	v->inflight = min_t(u64, (units + (1 << shift) - 1) >> shift,
			    U32_MAX / 2) + nlat_queued_nr(queued, jiffies);
	busy = started || nlat_queued_age(queued, jiffies) <=
			  usecs_to_jiffies(READ_ONCE(nlat_window_usec));
	v->unproven = nlat_unproven_for(busy, READ_ONCE(nq->grp->done_ns), now,
					quiet);
	/* nothing folded for a stale interval: that load is not the present */
	if ((s64)(now - READ_ONCE(nq->grp->fold_ns)) <
	    (s64)(p.stale_windows * p.window_ns)) {
		nbar = atomic_long_read(&nq->grp->nbar);
		v->nbar = nbar <= 0 ? 0 :
			  min_t(unsigned long, (unsigned long)nbar >> shift,
				NLAT_NBAR_MAX);
	}
	/* unproven: the one I/O it has is the probe */
	if (may_probe && !v->stalled && !v->unproven &&
	    nlat_probe_due(ewma, upd, READ_ONCE(c->est.backoff), probe, now,
			   &p))
		v->probe = cmpxchg64(&c->probe_ns, probe, now) == probe;
	if (v->probe)
		atomic_long_inc(&nq->probes);
	rcu_read_unlock();
	return true;
}

/*
 * sysfs: the numbers of debugfs' stats plus stalled and probes, for online
 * nodes only.  A line is at most ~70 bytes, typically 25: the page holds 7
 * nodes at worst, 20 typically; sysfs_emit_at() cuts the rest off.
 */
static int nlat_emit(struct request_queue *q, char *buf, int at)
{
	struct nlat_params p;
	struct nlat_queue *nq;
	u64 now, since;
	unsigned int cls;
	int node, inflight;

	rcu_read_lock();
	nq = nlat_lookup(q);
	if (!nq) {
		rcu_read_unlock();
		return -ENODEV;
	}
	nlat_params_get(&p);
	now = nlat_now();
	inflight = max(nlat_infl_nr(atomic64_read(&nq->grp->inflight)), 0);
	since = max(READ_ONCE(nq->grp->done_ns), READ_ONCE(nq->grp->busy_ns));
	at += sysfs_emit_at(buf, at, "inflight %d stalled %d probes %ld\n",
			    inflight,
			    nlat_stalled_for(inflight, since, now,
					     nlat_group_quiet(nq->grp, &p)),
			    atomic_long_read(&nq->probes));
	at += sysfs_emit_at(buf, at, "node class lat_nsec samples age_msec\n");
	for_each_online_node(node) {
		for (cls = 0; cls < NLAT_NR_CLASSES; cls++) {
			struct nlat_row r;

			nlat_row(nq, node, cls, now, &r);
			at += sysfs_emit_at(buf, at, "%d %u %llu %llu %lld\n",
					    node, cls, r.lat_ns, r.samples,
					    r.age_msec);
		}
	}
	rcu_read_unlock();
	return at;
}

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

static int __init nlat_init(void)
{
	BUILD_BUG_ON(sizeof(struct nlat_cell) > SMP_CACHE_BYTES);
	BUILD_BUG_ON(sizeof(struct nlat_pcpu) > SMP_CACHE_BYTES);
	BUILD_BUG_ON(NLAT_HISTORY_PCT_MAX >= 100);
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
