// SPDX-License-Identifier: GPL-2.0
/*
 * The "latency" iopolicy of NVMe native multipath.
 *
 * Each I/O goes, among the usable ANA-optimized paths (non-optimized ones
 * only when there is none), to the path with the lowest expected latency
 * for the submitting CPU's NUMA node and the I/O's size class:
 *
 *	cost = lat_ns * (8 + inflight) / (8 + nbar / 2)	(nvme-latency-cost.h)
 *
 * lat_ns is the EWMA that blk-nodelat keeps for the path's request queue,
 * inflight the requests started and not completed on the path's
 * controller (the tracker counts per controller, as queue-depth does),
 * nbar their mean number while the estimate was measured: a path is
 * charged less for the load its latency was measured at.  Both count
 * requests of the I/O's size (a 128k one in flight is 32 for a 4k read),
 * so small I/O leaves a link that large I/O fills.  A path whose estimate is
 * missing or stale is granted probe I/Os by the tracker, one per node and
 * stale interval (twice as long while probes find it unchanged), so a path
 * that was slow is measured again; a path that stalls (requests in flight,
 * none completing) loses to any path that answers.  So does one given
 * I/O after a quiet spell and not answering yet (unproven: it may have
 * died idle); when every candidate is, the bio waits on the head's
 * requeue list until one answers (the tracker's waker kicks the heads
 * holding I/O on that controller), so a dead path parks one I/O, not its
 * share of a burst.  So does a burst beyond a proven path's share while
 * another path never answered yet: it answers about as soon.  Quiet is
 * relative to the path's own latency: slow is not dead.  Passthrough is
 * placed by load alone.  The paths are ranked
 * once per window; in between an I/O reads two of them, the best ranked
 * and a challenger that turns per I/O (nvme-latency-route.c).
 *
 * The tracker lives in blk-nodelat.ko and its state hangs off each path's
 * request queue, so no nvme structure changes and the CRCs of nvme-core's
 * exported symbols stay those of the distro kernel.  nvme-core does not
 * link against blk-nodelat: every control operation takes the tracker's
 * ops with symbol_request() for its own duration, and the I/O path reads
 * a pointer published while any queue is tracked, so "rmmod blk-nodelat"
 * works once no subsystem uses the policy.
 *
 * A path the tracker cannot take (blk-nodelat not loadable yet, as in an
 * initramfs without it, a queue that did not drain in time, no memory)
 * stays a candidate: while a subsystem has one, its I/O is spread round
 * robin.  It is logged, listed in the module parameter latency_untracked,
 * and retried with back-off until it is tracked or gone; a retry that
 * would freeze a live path is made at most NVME_LAT_RETRY_FREEZES times
 * after each event.
 *
 * Visibility.  /sys/block/<path>/latency prints the tracker's state of a
 * path (blk_nodelat_info_ops, a symbol of its own: an older blk-nodelat.ko
 * lacks it and the attribute says "unsupported").  Trace events
 * (nvme-latency-trace.h) fire when the path chosen for a (head, node)
 * changes and when a probe is granted; to see a change, the choice is
 * stored in head->current_path[], which the policy otherwise only reads
 * as the start of its round-robin fallback.  Only while the event is
 * enabled: disabled, each costs a static branch.
 *
 * Locking.  No lock is held across a queue freeze or a grace period that
 * another subsystem's path removal could need.  Attach and detach are
 * idempotent and serialised per queue inside the tracker; the policy value
 * and NVME_NS_REMOVING are written (with full barriers) before paths are
 * detached, and an attach re-reads both afterwards and undoes itself, so
 * racing switches, path additions and removals converge.  subsys->lock is
 * only held to take references on the paths to walk.  Walkers and the
 * retry work run inside nvme_lat_srcu, which add-path failure unwinding
 * (whose namespace is freed without its kref) waits for.
 */

#include <linux/async.h>
#include <linux/blkdev.h>
#include <linux/error-injection.h>
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/workqueue.h>
#include "nvme.h"
#include "nvme-latency.h"
#include "nvme-latency-compat.h"
#include "nvme-latency-retry.h"

#define CREATE_TRACE_POINTS
#include "nvme-latency-trace.h"

#define NVME_LAT_RETRY_MIN_SEC	1
#define NVME_LAT_RETRY_MAX_SEC	10
/*
 * Held I/O is routed again after this, whatever the waker says: at once
 * where no candidate has a request started (nothing will answer), else as
 * a safety net behind the answers and the transport's own kicks.
 */
#define NVME_LAT_RECHECK_IDLE	(HZ / 50)
#define NVME_LAT_RECHECK_BUSY	HZ
#define NVME_LAT_HOLD_BITS	6

/*
 * A path whose attach (or detach) failed; listed until settled or removed.
 * A retry on a live controller freezes the path: at most
 * NVME_LAT_RETRY_FREEZES of them after an event (a switch, the path added,
 * its controller seen not live), then only events retry it.
 */
struct nvme_lat_pending {
	struct list_head	entry;
	struct nvme_ns		*ns;
	int			err;
	unsigned int		tried;	/* nvme_lat_retry_seq of its last retry */
	unsigned int		freezes; /* retries on a live controller */
};

/*
 * A head that has held bios (nvme_latency_hold()).  Listed on
 * nvme_lat_holding from a hold to the kick that releases it, where the
 * waker finds it.  Freed when the head loses its last path or leaves the
 * policy; until then the head is alive (its paths hold references), so
 * the waker may kick it.
 */
struct nvme_lat_hold {
	struct hlist_node	node;		/* nvme_lat_holds, by head */
	struct list_head	entry;		/* nvme_lat_holding, if held */
	struct nvme_ns_head	*head;
	unsigned int		held;		/* held, not released yet */
	unsigned long		total;		/* ever */
	int			cpu;		/* of the last hold */
	bool			armed;		/* recheck queued, to run at @due */
	unsigned long		due;		/* jiffies */
	struct delayed_work	recheck;	/* kicks requeue_work on @cpu */
};

/* The I/O path's view of the tracker; publishing under nvme_lat_ops_mutex. */
static const struct blk_nodelat_ops __rcu *nvme_lat_ops;
/* its pair read, published and withdrawn with it; NULL on an older one */
static const struct blk_nodelat_pair_ops __rcu *nvme_lat_pair;
static DEFINE_MUTEX(nvme_lat_ops_mutex);
/*
 * Set while our waker is installed, with a reference: I/O may be held.
 * Written under nvme_lat_ops_mutex.
 */
static const struct blk_nodelat_wake_ops *nvme_lat_wake_ops;

/*
 * Hold records.  nvme_lat_hold_lock is taken from completion context (the
 * waker): irq-safe; it nests inside head->requeue_lock.
 */
static DEFINE_HASHTABLE(nvme_lat_holds, NVME_LAT_HOLD_BITS);
static LIST_HEAD(nvme_lat_holding);
static DEFINE_SPINLOCK(nvme_lat_hold_lock);
static unsigned int nvme_lat_nr_holds;	/* records; READ_ONCE() to skip */

static LIST_HEAD(nvme_lat_pending);
static DEFINE_SPINLOCK(nvme_lat_pending_lock);
static unsigned int nvme_lat_retry_sec = NVME_LAT_RETRY_MIN_SEC;
static unsigned int nvme_lat_retry_seq;	/* under nvme_lat_pending_lock */
static void nvme_lat_retry_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(nvme_lat_retry_work, nvme_lat_retry_fn);
DEFINE_STATIC_SRCU(nvme_lat_srcu);

static bool latency_default;
module_param(latency_default, bool, 0644);
MODULE_PARM_DESC(latency_default,
	"New subsystems use the 'latency' iopolicy (ignored by nvme-core without it)");

static int nvme_lat_untracked_get(char *buf, const struct kernel_param *kp)
{
	struct nvme_lat_pending *p;
	int len = 0;

	spin_lock(&nvme_lat_pending_lock);
	list_for_each_entry(p, &nvme_lat_pending, entry)
		len += scnprintf(buf + len, PAGE_SIZE - len, "%s %d\n",
				 p->ns->disk->disk_name, p->err);
	spin_unlock(&nvme_lat_pending_lock);
	return len;
}

static const struct kernel_param_ops nvme_lat_untracked_ops = {
	.get	= nvme_lat_untracked_get,
};
module_param_cb(latency_untracked, &nvme_lat_untracked_ops, NULL, 0444);
MODULE_PARM_DESC(latency_untracked,
	"Paths whose tracking is not yet what the policy wants: name and last error");

MODULE_SOFTDEP("post: blk-nodelat");

bool nvme_lat_default(void)
{
	return READ_ONCE(latency_default);
}

/* Whether @ns should be tracked now; the caller holds a reference. */
static bool nvme_lat_wanted(struct nvme_ns *ns)
{
	return ns->head->disk && !test_bit(NVME_NS_REMOVING, &ns->flags) &&
	       READ_ONCE(ns->ctrl->subsys->iopolicy) == NVME_IOPOLICY_LAT;
}

/* @head's record, or NULL; under nvme_lat_hold_lock. */
static struct nvme_lat_hold *nvme_lat_hold_find(struct nvme_ns_head *head)
{
	struct nvme_lat_hold *h;

	lockdep_assert_held(&nvme_lat_hold_lock);
	hash_for_each_possible(nvme_lat_holds, h, node, (unsigned long)head)
		if (h->head == head)
			return h;
	return NULL;
}

/*
 * Run @h's recheck after @delay, on @h->cpu while it is online.  A
 * recheck already due no later stands: later holds never defer it, so
 * held bios are routed again at the deadline of the first.  Under
 * nvme_lat_hold_lock.
 */
static void nvme_lat_recheck_in(struct nvme_lat_hold *h, unsigned long delay)
{
	int cpu = cpu_online(h->cpu) ? h->cpu : WORK_CPU_UNBOUND;
	unsigned long due = jiffies + delay;

	lockdep_assert_held(&nvme_lat_hold_lock);
	if (h->armed && time_before_eq(h->due, due))
		return;
	h->armed = true;
	h->due = due;
	kblockd_mod_delayed_work_on(cpu, &h->recheck, delay);
}

/* What @h's head holds is about to be resubmitted; under the lock. */
static void nvme_lat_released(struct nvme_lat_hold *h)
{
	lockdep_assert_held(&nvme_lat_hold_lock);
	if (h->held) {
		trace_nvme_latency_release(h->head->disk->disk_name, h->held);
		h->held = 0;
		list_del(&h->entry);
	}
}

/*
 * Resubmit what @h's head holds, from kblockd (as failover) and on the
 * CPU that held it last, so that it is routed (and sampled) for the
 * submitter's node: each bio is routed, or held, again.  Under the lock.
 */
static void nvme_lat_kick(struct nvme_lat_hold *h)
{
	nvme_lat_released(h);
	nvme_lat_recheck_in(h, 0);
}

static void nvme_lat_recheck_fn(struct work_struct *work)
{
	struct nvme_lat_hold *h = container_of(to_delayed_work(work),
					       struct nvme_lat_hold, recheck);
	unsigned long flags;

	/* freeing @h cancels us first: the head is still there */
	spin_lock_irqsave(&nvme_lat_hold_lock, flags);
	h->armed = false;
	nvme_lat_released(h);
	spin_unlock_irqrestore(&nvme_lat_hold_lock, flags);
	/* kblockd is per CPU: the requeue work runs here */
	kblockd_schedule_work(&h->head->requeue_work);
}

/*
 * A path answered after a quiet spell: resubmit what the heads holding
 * I/O on one of @ctrl's paths hold.  Completion context; head->srcu
 * readers are allowed there, and no holding head can be freed while
 * nvme_lat_hold_lock is held (see struct nvme_lat_hold).
 */
static void nvme_lat_answered(const void *ctrl)
{
	struct nvme_lat_hold *h, *next;
	struct nvme_ns *ns;
	unsigned long flags;
	bool on_ctrl;
	int idx;

	spin_lock_irqsave(&nvme_lat_hold_lock, flags);
	list_for_each_entry_safe(h, next, &nvme_lat_holding, entry) {
		on_ctrl = false;
		idx = srcu_read_lock(&h->head->srcu);
		list_for_each_entry_srcu(ns, &h->head->list, siblings,
					 srcu_read_lock_held(&h->head->srcu)) {
			if (ns->ctrl == ctrl) {
				on_ctrl = true;
				break;
			}
		}
		srcu_read_unlock(&h->head->srcu, idx);
		if (on_ctrl)
			nvme_lat_kick(h);
	}
	spin_unlock_irqrestore(&nvme_lat_hold_lock, flags);
}

static const struct blk_nodelat_waker nvme_lat_waker = {
	.answered	= nvme_lat_answered,
};

/* Resubmit what every head holds: nothing may be held any more. */
static void nvme_lat_release_all(void)
{
	struct nvme_lat_hold *h, *next;
	unsigned long flags;

	spin_lock_irqsave(&nvme_lat_hold_lock, flags);
	list_for_each_entry_safe(h, next, &nvme_lat_holding, entry)
		nvme_lat_kick(h);
	spin_unlock_irqrestore(&nvme_lat_hold_lock, flags);
}

/*
 * Resubmit what @head holds: a path of it went (what it held may wait for
 * that path), or one answered before its last hold was recorded.
 */
void nvme_lat_release_head(struct nvme_ns_head *head)
{
	struct nvme_lat_hold *h;
	unsigned long flags;

	spin_lock_irqsave(&nvme_lat_hold_lock, flags);
	h = nvme_lat_hold_find(head);
	if (h)
		nvme_lat_kick(h);
	spin_unlock_irqrestore(&nvme_lat_hold_lock, flags);
}

/*
 * Forget @head's record, if it has one, after kicking its requeue work:
 * it leaves the policy or loses its last path.  Sleeps.
 */
static void nvme_lat_hold_free(struct nvme_ns_head *head)
{
	struct nvme_lat_hold *h;
	unsigned long flags;

	if (!READ_ONCE(nvme_lat_nr_holds))
		return;
	spin_lock_irqsave(&nvme_lat_hold_lock, flags);
	h = nvme_lat_hold_find(head);
	if (h) {
		nvme_lat_released(h);
		hash_del(&h->node);
		WRITE_ONCE(nvme_lat_nr_holds, nvme_lat_nr_holds - 1);
	}
	spin_unlock_irqrestore(&nvme_lat_hold_lock, flags);
	if (!h)
		return;
	cancel_delayed_work_sync(&h->recheck);
	kblockd_schedule_work(&head->requeue_work);
	kfree(h);
}

/* A hold record for @head, not hashed; NULL without memory. */
static noinline struct nvme_lat_hold *
nvme_lat_hold_alloc(struct nvme_ns_head *head)
{
	struct nvme_lat_hold *h;

	/* submission context, maybe a reclaim's: no sleep, no reserves */
	h = kzalloc_obj(*h, GFP_NOWAIT | __GFP_NOWARN);
	if (!h)
		return NULL;
	h->head = head;
	INIT_DELAYED_WORK(&h->recheck, nvme_lat_recheck_fn);
	return h;
}
ALLOW_ERROR_INJECTION(nvme_lat_hold_alloc, NULL);

/**
 * nvme_lat_hold() - put @bio on @head's requeue list until a path answers
 * @head: the multipath head
 * @bio: a bio every candidate path of which is unproven (nvme_lat_cmp())
 * @busy: a candidate has requests started, whose answer will kick us
 *
 * The bio loses REQ_NOWAIT and REQ_POLLED, as nvme_failover_req() has its
 * bios lose them: kblockd resubmits it, in no submitter's context.
 * Returns false, holding nothing, when no record could be allocated.
 */
bool nvme_lat_hold(struct nvme_ns_head *head, struct bio *bio, bool busy)
{
	struct nvme_lat_hold *h, *new = NULL;
	unsigned long flags;

again:
	spin_lock_irqsave(&head->requeue_lock, flags);
	spin_lock(&nvme_lat_hold_lock);
	h = nvme_lat_hold_find(head);
	if (!h && new) {
		h = new;
		new = NULL;
		hash_add(nvme_lat_holds, &h->node, (unsigned long)head);
		WRITE_ONCE(nvme_lat_nr_holds, nvme_lat_nr_holds + 1);
	}
	if (h) {
		if (bio->bi_opf & REQ_POLLED) {
			bio->bi_opf &= ~REQ_POLLED;
			bio->bi_cookie = BLK_QC_T_NONE;
		}
		bio->bi_opf &= ~REQ_NOWAIT;
		bio_list_add(&head->requeue_list, bio);
		if (!h->held++)
			list_add_tail(&h->entry, &nvme_lat_holding);
		h->total++;
		h->cpu = raw_smp_processor_id();
		nvme_lat_recheck_in(h, busy ? NVME_LAT_RECHECK_BUSY :
					      NVME_LAT_RECHECK_IDLE);
		trace_nvme_latency_hold(head->disk->disk_name, h->held);
	}
	spin_unlock(&nvme_lat_hold_lock);
	spin_unlock_irqrestore(&head->requeue_lock, flags);
	if (h) {
		kfree(new);
		return true;
	}
	new = nvme_lat_hold_alloc(head);
	if (!new)
		return false;
	goto again;
}

/* Bios @head holds now and ever, for its paths' sysfs attribute. */
static void nvme_lat_held(struct nvme_ns_head *head, unsigned int *now,
			  unsigned long *total)
{
	struct nvme_lat_hold *h;
	unsigned long flags;

	*now = 0;
	*total = 0;
	spin_lock_irqsave(&nvme_lat_hold_lock, flags);
	h = nvme_lat_hold_find(head);
	if (h) {
		*now = h->held;
		*total = h->total;
	}
	spin_unlock_irqrestore(&nvme_lat_hold_lock, flags);
}

bool nvme_lat_may_hold(void)
{
	return READ_ONCE(nvme_lat_wake_ops);
}

/*
 * After an attach: let the I/O path see the tracker, with its own ref,
 * and install our waker if the tracker has one (an older one has not:
 * then no I/O is held).
 */
static void nvme_lat_publish(void)
{
	const struct blk_nodelat_pair_ops *pair;
	const struct blk_nodelat_wake_ops *wake;

	mutex_lock(&nvme_lat_ops_mutex);
	/* our caller holds a reference: this symbol_get() cannot fail */
	if (!rcu_access_pointer(nvme_lat_ops)) {
		pair = symbol_get(blk_nodelat_pair_ops);
		if (pair && pair->version < BLK_NODELAT_PAIR_V1) {
			symbol_put(blk_nodelat_pair_ops);
			pair = NULL;
		}
		rcu_assign_pointer(nvme_lat_pair, pair);
		rcu_assign_pointer(nvme_lat_ops, symbol_get(blk_nodelat_ops));
	}
	if (!nvme_lat_wake_ops) {
		wake = symbol_get(blk_nodelat_wake_ops);
		if (wake) {
			wake->set_waker(&nvme_lat_waker);
			WRITE_ONCE(nvme_lat_wake_ops, wake);
		}
	}
	mutex_unlock(&nvme_lat_ops_mutex);
}

/*
 * After a detach: once nothing is tracked, drop the I/O path's reference.
 * An attach publishes after tracking, so a concurrent one either sees the
 * pointer gone and publishes again, or keeps nr_tracked() above 0.  The
 * mutex is held for one grace period, never by the I/O path.
 */
static void nvme_lat_unpublish_idle(const struct blk_nodelat_ops *ops)
{
	const struct blk_nodelat_pair_ops *pair;

	mutex_lock(&nvme_lat_ops_mutex);
	if (rcu_access_pointer(nvme_lat_ops) && !ops->nr_tracked()) {
		RCU_INIT_POINTER(nvme_lat_ops, NULL);
		pair = rcu_dereference_protected(nvme_lat_pair,
				lockdep_is_held(&nvme_lat_ops_mutex));
		RCU_INIT_POINTER(nvme_lat_pair, NULL);
		/*
		 * nvme_lat_read(), nvme_lat_read2() and the waker may still be
		 * calling into the module: removing the waker waits for all.
		 */
		if (nvme_lat_wake_ops) {
			nvme_lat_wake_ops->set_waker(NULL);
			WRITE_ONCE(nvme_lat_wake_ops, NULL);
			symbol_put(blk_nodelat_wake_ops);
		} else {
			synchronize_rcu();
		}
		if (pair)
			symbol_put(blk_nodelat_pair_ops);
		symbol_put(blk_nodelat_ops);
		/* nothing reads unproven now: resubmit what was held */
		nvme_lat_release_all();
	}
	mutex_unlock(&nvme_lat_ops_mutex);
}

/*
 * A freeze of a path whose controller is not live would wait for the
 * reconnect (its requests sit on quiesced queues): retried once it is.
 */
static bool nvme_lat_may_freeze(struct nvme_ns *ns)
{
	return READ_ONCE(ns->ctrl->state) == NVME_CTRL_LIVE;
}

/*
 * Stop tracking @ns, giving up when it does not drain in time (a
 * tracker without batch ops waits as long as it takes); then drop the
 * I/O path's reference if nothing is tracked.  Also when @ns was not
 * tracked: an attach undone after its queue's teardown dropped the
 * tracker has published after that removal's nvme_lat_path_removed().
 */
static int nvme_lat_detach(const struct blk_nodelat_ops *ops,
			   struct nvme_ns *ns)
{
	const struct blk_nodelat_batch_ops *batch;
	struct request_queue *q = ns->queue;
	int ret = 0;

	if (!ops->tracked(q))
		goto unpublish;
	if (!nvme_lat_may_freeze(ns))
		return -ENOLINK;
	batch = symbol_get(blk_nodelat_batch_ops);
	if (batch) {
		batch->detach(&q, &ret, 1);
		symbol_put(blk_nodelat_batch_ops);
	} else {
		ops->detach(q);
	}
	if (ret < 0)
		return ret;
unpublish:
	nvme_lat_unpublish_idle(ops);
	return 0;
}

/* After the tracker's attach of @ns returned @ret; 0 when done. */
static int nvme_lat_attached(const struct blk_nodelat_ops *ops,
			     struct nvme_ns *ns, int ret)
{
	if (ret == -EAGAIN)	/* not registered: nvme_lat_add_path() follows */
		return 0;
	if (ret < 0)
		return ret;
	nvme_lat_publish();
	/* pairs with the xchg() of the policy and test_and_set_bit(REMOVING) */
	smp_mb();
	/* the policy changed meanwhile: undo, bounded as any detach */
	if (!nvme_lat_wanted(ns))
		return nvme_lat_detach(ops, ns);
	return 0;
}

/* Track @ns if it is wanted; 0 when done or not wanted. */
static int nvme_lat_attach(const struct blk_nodelat_ops *ops,
			   struct nvme_ns *ns)
{
	if (!nvme_lat_wanted(ns) || ops->tracked(ns->queue))
		return 0;
	if (!nvme_lat_may_freeze(ns))
		return -ENOLINK;
	/* paths of one controller share its link: one in-flight count */
	return nvme_lat_attached(ops, ns, ops->attach(ns->queue, ns->ctrl));
}

/*
 * Bring @ns's tracking in line with its subsystem's policy; 0 when it is.
 * A path being removed is nvme_lat_remove_path()'s.
 */
static int nvme_lat_sync(const struct blk_nodelat_ops *ops, struct nvme_ns *ns)
{
	if (test_bit(NVME_NS_REMOVING, &ns->flags))
		return 0;
	if (nvme_lat_wanted(ns))
		return nvme_lat_attach(ops, ns);
	return nvme_lat_detach(ops, ns);
}

static void nvme_lat_retry_later(void)
{
	mod_delayed_work(system_percpu_wq, &nvme_lat_retry_work,
			 READ_ONCE(nvme_lat_retry_sec) * HZ);
}

/* @ns's entry in the pending list, or NULL; under nvme_lat_pending_lock */
static struct nvme_lat_pending *nvme_lat_find(struct nvme_ns *ns)
{
	struct nvme_lat_pending *p;

	lockdep_assert_held(&nvme_lat_pending_lock);
	list_for_each_entry(p, &nvme_lat_pending, entry)
		if (p->ns == ns)
			return p;
	return NULL;
}

/*
 * Remember that @ns could not be tracked, or untracked, saying so the
 * first time; allocates, so no lock may be held.
 */
static void nvme_lat_pend(struct nvme_ns *ns, int err)
{
	struct nvme_lat_pending *p, *new;
	bool first, listed = false;

	/* a path dropped here would never be retried; no lock is held */
	new = kzalloc_obj(*new, GFP_KERNEL | __GFP_NOFAIL);
	spin_lock(&nvme_lat_pending_lock);
	p = nvme_lat_find(ns);
	first = !p;
	if (p) {
		p->err = err;
		p->freezes = 0;		/* an event: timed retries afresh */
	}
	/* under the lock: nvme_lat_unpend() runs after REMOVING is set */
	if (first && !test_bit(NVME_NS_REMOVING, &ns->flags)) {
		new->ns = ns;
		new->err = err;
		list_add_tail(&new->entry, &nvme_lat_pending);
		new = NULL;
		listed = true;
	}
	spin_unlock(&nvme_lat_pending_lock);
	kfree(new);
	/* a path being removed is not listed: nothing to retry, or to say */
	if (listed && nvme_lat_wanted(ns))
		dev_warn(disk_to_dev(ns->disk),
			 "latency: cannot track this path (%d); I/O goes round robin until it can, retrying\n",
			 err);
	else if (listed)
		dev_info(disk_to_dev(ns->disk),
			 "latency: cannot stop tracking this path yet (%d), retrying\n",
			 err);
	nvme_lat_retry_later();
}

static void nvme_lat_unpend(struct nvme_ns *ns)
{
	struct nvme_lat_pending *p;

	spin_lock(&nvme_lat_pending_lock);
	p = nvme_lat_find(ns);
	if (p)
		list_del(&p->entry);
	spin_unlock(&nvme_lat_pending_lock);
	kfree(p);
}

/*
 * The next path this retry (@seq) has not tried, with a reference; NULL
 * when none is left.  It stays listed meanwhile: latency_untracked shows
 * it while its attach waits.
 */
static struct nvme_ns *nvme_lat_next(unsigned int seq)
{
	struct nvme_lat_pending *p;

	spin_lock(&nvme_lat_pending_lock);
	list_for_each_entry(p, &nvme_lat_pending, entry) {
		if (p->tried == seq || !kref_get_unless_zero(&p->ns->kref))
			continue;
		p->tried = seq;
		spin_unlock(&nvme_lat_pending_lock);
		return p->ns;
	}
	spin_unlock(&nvme_lat_pending_lock);
	return NULL;
}

/*
 * One timed retry of listed @ns.  A live path that used up its freezes is
 * left as it is (listed, untracked); one whose controller is not live is
 * not frozen, and gets its freezes back for when it is.
 */
static void nvme_lat_retry_one(const struct blk_nodelat_ops *ops,
			       struct nvme_ns *ns)
{
	bool live = nvme_lat_may_freeze(ns), gave_up = false;
	struct nvme_lat_pending *p;
	unsigned int freezes = 0;
	int ret;

	spin_lock(&nvme_lat_pending_lock);
	p = nvme_lat_find(ns);
	if (p) {
		if (!live)
			p->freezes = 0;
		freezes = p->freezes;
	}
	spin_unlock(&nvme_lat_pending_lock);
	if (!p || freezes >= NVME_LAT_RETRY_FREEZES)
		return;

	ret = ops ? nvme_lat_sync(ops, ns) : -ENOENT;
	if (!ret) {
		nvme_lat_unpend(ns);
		if (nvme_lat_wanted(ns))
			dev_info(disk_to_dev(ns->disk), "latency: path tracked\n");
		return;
	}
	/* gone from the list if removed meanwhile */
	spin_lock(&nvme_lat_pending_lock);
	p = nvme_lat_find(ns);
	if (p) {
		p->err = ret;
		/* counts only a try that may have frozen the path */
		if (live)
			gave_up = nvme_lat_retry_failed(&p->freezes, ret);
	}
	spin_unlock(&nvme_lat_pending_lock);
	if (gave_up)
		dev_warn(disk_to_dev(ns->disk),
			 "latency: %u tries failed (%d); retried when its controller reconnects or the iopolicy is written again\n",
			 NVME_LAT_RETRY_FREEZES, ret);
}

static void nvme_lat_retry_fn(struct work_struct *work)
{
	const struct blk_nodelat_ops *ops = symbol_request(blk_nodelat_ops);
	struct nvme_ns *ns;
	unsigned int seq;
	bool again;
	int idx;

	spin_lock(&nvme_lat_pending_lock);
	seq = ++nvme_lat_retry_seq;
	spin_unlock(&nvme_lat_pending_lock);

	idx = srcu_read_lock(&nvme_lat_srcu);
	while ((ns = nvme_lat_next(seq))) {
		nvme_lat_retry_one(ops, ns);
		nvme_put_ns(ns);
	}
	srcu_read_unlock(&nvme_lat_srcu, idx);
	if (ops)
		symbol_put(blk_nodelat_ops);

	/* paths that gave up stay listed: their controllers are watched */
	spin_lock(&nvme_lat_pending_lock);
	again = !list_empty(&nvme_lat_pending);
	if (again)
		WRITE_ONCE(nvme_lat_retry_sec,
			   min(nvme_lat_retry_sec * 2, NVME_LAT_RETRY_MAX_SEC));
	else
		WRITE_ONCE(nvme_lat_retry_sec, NVME_LAT_RETRY_MIN_SEC);
	spin_unlock(&nvme_lat_pending_lock);
	if (again)
		nvme_lat_retry_later();
}

/*
 * A switch's references to the multipath paths of @subsys: @ns is
 * NULL-ended.  They are dropped by @put_work, not by the writer: a
 * path's last reference may hold its controller's, and so the
 * subsystem's, whose device_del() waits for the iopolicy attribute the
 * writer is still in.
 */
struct nvme_lat_paths {
	struct work_struct	put_work;
	struct nvme_ns		*ns[];
};

/*
 * References to the multipath paths of @subsys, taken under subsys->lock,
 * which keeps the lists stable; allocated before taking it.  Paths added
 * after the count attach themselves (nvme_lat_add_path() reads the policy
 * written before this walk).
 */
static noinline struct nvme_lat_paths *
nvme_lat_paths(struct nvme_subsystem *subsys)
{
	struct nvme_ns_head *head;
	struct nvme_lat_paths *paths;
	struct nvme_ns *ns;
	unsigned int n = 0, i = 0;

	mutex_lock(&subsys->lock);
	list_for_each_entry(head, &subsys->nsheads, entry)
		list_for_each_entry(ns, &head->list, siblings)
			n++;
	mutex_unlock(&subsys->lock);

	paths = kvzalloc(struct_size(paths, ns, n + 1), GFP_KERNEL);
	if (!paths)
		return NULL;
	mutex_lock(&subsys->lock);
	list_for_each_entry(head, &subsys->nsheads, entry) {
		if (!head->disk)	/* not multipath: no path selection */
			continue;
		list_for_each_entry(ns, &head->list, siblings) {
			if (i == n)
				break;
			if (kref_get_unless_zero(&ns->kref))
				paths->ns[i++] = ns;
		}
	}
	mutex_unlock(&subsys->lock);
	return paths;
}
ALLOW_ERROR_INJECTION(nvme_lat_paths, NULL);

static void nvme_lat_put_paths_work(struct work_struct *work)
{
	struct nvme_lat_paths *paths =
		container_of(work, struct nvme_lat_paths, put_work);
	struct nvme_ns **p;

	for (p = paths->ns; *p; p++)
		nvme_put_ns(*p);
	kvfree(paths);
}

/* Drop @paths' references after the writer returns: nvme_lat_paths. */
static void nvme_lat_put_paths(struct nvme_lat_paths *paths)
{
	INIT_WORK(&paths->put_work, nvme_lat_put_paths_work);
	queue_work(nvme_wq, &paths->put_work);
}

/* Paths of a switch, as the tracker's batch ops take them. */
struct nvme_lat_batch {
	struct nvme_ns		**ns;
	struct request_queue	**qs;
	const void		**ctrls;
	int			*rets;
	unsigned int		n;
};

/* Arrays for the paths of @paths (NULL-ended); false without memory. */
static noinline bool nvme_lat_batch_alloc(struct nvme_lat_batch *b,
					  struct nvme_ns **paths)
{
	size_t each = 3 * sizeof(void *) + sizeof(int);
	unsigned int n = 0;
	void *mem;

	while (paths[n])
		n++;
	mem = kvcalloc(n ? n : 1, each, GFP_KERNEL);
	if (!mem)
		return false;
	b->ns = mem;
	b->qs = mem + n * sizeof(void *);
	b->ctrls = mem + 2 * n * sizeof(void *);
	b->rets = mem + 3 * n * sizeof(void *);
	b->n = 0;
	return true;
}
ALLOW_ERROR_INJECTION(nvme_lat_batch_alloc, NULL);

static void nvme_lat_batch_add(struct nvme_lat_batch *b, struct nvme_ns *ns)
{
	b->ns[b->n] = ns;
	b->qs[b->n] = ns->queue;
	b->ctrls[b->n] = ns->ctrl;
	b->n++;
}

/* @ns is to be attached (@attach) or detached for its policy. */
static bool nvme_lat_needs(const struct blk_nodelat_ops *ops,
			   struct nvme_ns *ns, bool attach)
{
	return !test_bit(NVME_NS_REMOVING, &ns->flags) &&
	       nvme_lat_wanted(ns) == attach &&
	       ops->tracked(ns->queue) != attach;
}

/* @ns's tracking is what its policy wants (@ret 0) or is to be retried. */
static void nvme_lat_settle(struct nvme_ns *ns, int ret)
{
	if (ret)
		nvme_lat_pend(ns, ret);
	else
		nvme_lat_unpend(ns);
}

/*
 * Bring every path of a switch (@paths, NULL-ended) in line with the new
 * policy, which @attach's: in one batch of the tracker (one grace period,
 * not one per path), one at a time without batch ops or memory.
 */
static void nvme_lat_switch_paths(const struct blk_nodelat_ops *ops,
				  struct nvme_ns **paths, bool attach)
{
	const struct blk_nodelat_batch_ops *batch;
	struct nvme_lat_batch b;
	struct nvme_ns **p;
	unsigned int i;

	batch = symbol_get(blk_nodelat_batch_ops);
	if (batch && !nvme_lat_batch_alloc(&b, paths)) {
		symbol_put(blk_nodelat_batch_ops);
		batch = NULL;
	}
	for (p = paths; *p; p++) {
		/* also a path that another switch left listed */
		if (!batch || !nvme_lat_needs(ops, *p, attach))
			nvme_lat_settle(*p, nvme_lat_sync(ops, *p));
		else if (!nvme_lat_may_freeze(*p))
			nvme_lat_settle(*p, -ENOLINK);
		else
			nvme_lat_batch_add(&b, *p);
	}
	if (batch) {
		if (attach)
			batch->attach(b.qs, b.ctrls, b.rets, b.n);
		else
			batch->detach(b.qs, b.rets, b.n);
		for (i = 0; i < b.n; i++)
			nvme_lat_settle(b.ns[i], attach ?
					nvme_lat_attached(ops, b.ns[i], b.rets[i]) :
					min(b.rets[i], 0));
		kvfree(b.ns);
		symbol_put(blk_nodelat_batch_ops);
	}
	/* held bios go out under the new policy */
	if (!attach)
		for (p = paths; *p; p++)
			nvme_lat_hold_free((*p)->head);
}

/**
 * nvme_lat_set_iopolicy() - set the iopolicy of @subsys
 * @subsys: the subsystem
 * @policy: the new NVME_IOPOLICY_*
 *
 * Entering the latency policy needs the tracker module: when it cannot be
 * loaded, the policy is unchanged and -ENOENT returned.  Then every path
 * is attached; one that cannot be yet stays a candidate and is retried.
 * Writing it again attaches what is still untracked.  Leaving it sets the
 * policy first, then detaches every path.
 *
 * Returns the previous policy or a negative errno.
 */
int nvme_lat_set_iopolicy(struct nvme_subsystem *subsys, int policy)
{
	const struct blk_nodelat_ops *ops = NULL;
	struct nvme_lat_paths *paths;
	int old, idx;

	if (policy == NVME_IOPOLICY_LAT) {
		ops = symbol_request(blk_nodelat_ops);
		if (!ops) {
			pr_warn("nvme: latency iopolicy needs blk-nodelat.ko, which cannot be loaded\n");
			return -ENOENT;
		}
	}
	/* a full barrier: see nvme_lat_attach() */
	old = xchg(&subsys->iopolicy, policy);
	/* latency written again settles what is left untracked */
	if ((old == policy && policy != NVME_IOPOLICY_LAT) ||
	    (old != NVME_IOPOLICY_LAT && !ops))
		goto out;
	if (!ops)
		ops = symbol_get(blk_nodelat_ops);
	if (!ops)		/* never loaded: nothing to detach */
		goto out;

	idx = srcu_read_lock(&nvme_lat_srcu);
	paths = nvme_lat_paths(subsys);
	if (!paths) {
		/* as if never written: no path is left half switched */
		xchg(&subsys->iopolicy, old);
		srcu_read_unlock(&nvme_lat_srcu, idx);
		old = -ENOMEM;
		goto out;
	}
	nvme_lat_switch_paths(ops, paths->ns, policy == NVME_IOPOLICY_LAT);
	srcu_read_unlock(&nvme_lat_srcu, idx);
	nvme_lat_put_paths(paths);
	if (policy != NVME_IOPOLICY_LAT)
		nvme_lat_unpublish_idle(ops);
out:
	if (ops)
		symbol_put(blk_nodelat_ops);
	return old;
}

/* A path was added to @ns's subsystem: track it if the policy wants it. */
void nvme_lat_add_path(struct nvme_ns *ns)
{
	const struct blk_nodelat_ops *ops;
	int ret;

	/* whatever the policy: a switch to latency finds it made */
	if (ns->head->disk)
		nvme_lat_route_add(ns->head);
	if (!nvme_lat_wanted(ns))
		return;
	/*
	 * Namespace scanning runs async (nvme_scan_ns_async()), which must not
	 * wait for modprobe: the retry work loads the tracker then.
	 */
	if (current_is_async())
		ops = symbol_get(blk_nodelat_ops);
	else
		ops = symbol_request(blk_nodelat_ops);
	ret = ops ? nvme_lat_attach(ops, ns) : -ENOENT;
	if (ops)
		symbol_put(blk_nodelat_ops);
	if (ret)
		nvme_lat_pend(ns, ret);
}

/*
 * @ns leaves its head (@last: the head's last path): forget it everywhere
 * but in the tracker, which its queue's teardown drops.
 */
static void nvme_lat_forget_path(struct nvme_ns *ns, bool last)
{
	nvme_lat_unpend(ns);
	nvme_lat_route_forget(ns, last);
	/* held I/O may wait for this path to answer: route it again */
	if (last)
		nvme_lat_hold_free(ns->head);
	else if (READ_ONCE(nvme_lat_nr_holds))
		nvme_lat_release_head(ns->head);
}

/*
 * @ns is unlinked from its head and no submitter sees it any more
 * (nvme_ns_remove(), before del_gendisk()).  Its tracker is left to the
 * exit hook that del_gendisk() runs: a freeze here would wait for the
 * requests in flight (on a dead link, until the transport gives up)
 * before del_gendisk() removes the device and fails new I/O.
 */
void nvme_lat_remove_path(struct nvme_ns *ns)
{
	nvme_lat_forget_path(ns, list_empty(&ns->head->list));
}

/*
 * @ns's queue was torn down: del_gendisk() returned (nvme_ns_remove()), or
 * device_add_disk() failed.  Both run rq_qos_exit() on a queue that was
 * registered, and a queue never registered was never tracked, so the
 * tracker is gone: drop the I/O path's reference if it was the last.
 */
void nvme_lat_path_removed(struct nvme_ns *ns)
{
	const struct blk_nodelat_ops *ops = symbol_get(blk_nodelat_ops);

	if (!ops)
		return;
	WARN_ON_ONCE(ops->tracked(ns->queue));
	nvme_lat_unpublish_idle(ops);
	symbol_put(blk_nodelat_ops);
}

/*
 * nvme_alloc_ns() failed after linking @ns to its head, which it still
 * holds, and unlinks and frees @ns without its kref next: forget it,
 * after the walkers that took a reference.
 */
void nvme_lat_unwind_path(struct nvme_ns *ns)
{
	set_bit(NVME_NS_REMOVING, &ns->flags);
	/* REMOVING before the walkers' re-check; see nvme_lat_attach() */
	smp_mb__after_atomic();
	synchronize_srcu(&nvme_lat_srcu);
	/* never enabled, so in no route; but it may be the last path */
	nvme_lat_forget_path(ns, list_is_singular(&ns->head->list));
	/* device_add_disk() failed: a registered queue was torn down */
	nvme_lat_path_removed(ns);
}

/**
 * nvme_lat_read() - describe path @ns to the latency iopolicy
 * @ns: a path, under its head's SRCU
 * @node: the submitting CPU's node
 * @cls: the I/O's class (nvme_lat_bio_class())
 * @may_probe: the I/O would yield a sample (a read or a write)
 * @c: filled with the path's estimate and in-flight count
 *
 * Returns NVME_LAT_PROBE if the tracker granted this I/O as a probe of @ns,
 * NVME_LAT_UNTRACKED if @ns has no tracker (@c is then zeroed).
 */
enum nvme_lat_read_ret nvme_lat_read(struct nvme_ns *ns, int node,
				     unsigned int cls, bool may_probe,
				     struct nlat_view *c)
{
	const struct blk_nodelat_ops *ops;
	bool tracked = false;

	/* nvme_lat_unpublish_idle() clears it and waits for us */
	rcu_read_lock();
	ops = rcu_dereference(nvme_lat_ops);
	if (ops)
		tracked = ops->read(ns->queue, node, cls, may_probe, c);
	else
		memset(c, 0, sizeof(*c));
	rcu_read_unlock();

	if (!tracked)
		return NVME_LAT_UNTRACKED;
	return c->probe ? NVME_LAT_PROBE : NVME_LAT_TRACKED;
}

/**
 * nvme_lat_read2() - nvme_lat_read() of two paths at one clock
 * @a: a path, under its head's SRCU and rcu_read_lock()
 * @b: another path of the same head
 * @node: the submitting CPU's node
 * @cls: the I/O's class (nvme_lat_bio_class())
 * @may_probe: the I/O would yield a sample (a read or a write)
 * @c: filled with the paths' estimates and in-flight counts
 *
 * Returns NVME_LAT2_OLD if the tracker has no pair read (the caller reads
 * each path with nvme_lat_read()), NVME_LAT2_UNTRACKED if a path has no
 * tracker, NVME_LAT2_PROBE_A or _B if the tracker granted this I/O as a
 * probe of @a (@b is then not read) or @b, else NVME_LAT2_BOTH.
 */
enum nvme_lat_read2_ret nvme_lat_read2(struct nvme_ns *a, struct nvme_ns *b,
				       int node, unsigned int cls,
				       bool may_probe, struct nlat_view c[2])
{
	const struct blk_nodelat_pair_ops *pair = rcu_dereference(nvme_lat_pair);
	struct request_queue *qs[2] = { a->queue, b->queue };
	unsigned int n;

	if (!pair)
		return NVME_LAT2_OLD;
	n = pair->read2(qs, node, cls, may_probe, c);
	if (!n)
		return NVME_LAT2_UNTRACKED;
	if (c[0].probe)
		return NVME_LAT2_PROBE_A;
	if (n < 2)
		return NVME_LAT2_UNTRACKED;
	return c[1].probe ? NVME_LAT2_PROBE_B : NVME_LAT2_BOTH;
}

/* @req of a path ends in error or fails over: it is no latency sample. */
void nvme_lat_end_error(struct request *req)
{
	const struct blk_nodelat_ops *ops;

	rcu_read_lock();
	ops = rcu_dereference(nvme_lat_ops);
	if (ops)
		ops->end_error(req);
	rcu_read_unlock();
}

/*
 * A path of a multipath head: not the head's disk (whose fops differ), nor
 * the disk of a namespace without one.
 */
bool nvme_lat_attr_visible(struct device *dev)
{
	struct gendisk *disk = dev_to_disk(dev);
	struct nvme_ns *ns = disk->private_data;

	return disk->fops != &nvme_ns_head_ops && ns->head->disk;
}

/* Append the head's held counts to the first line of @buf (length @len). */
static int nvme_lat_emit_held(struct nvme_ns_head *head, char *buf, int len)
{
	char *nl = memchr(buf, '\n', len), extra[48];
	unsigned long total;
	unsigned int now;
	int n;

	if (!nl)
		return len;
	nvme_lat_held(head, &now, &total);
	n = scnprintf(extra, sizeof(extra), " held %u held_total %lu", now,
		      total);
	if (len + n >= PAGE_SIZE)
		return len;
	memmove(nl + n, nl, buf + len - nl);
	memcpy(nl, extra, n);
	return len + n;
}

/*
 * "inflight N stalled 0|1 probes N held N held_total N", then "node class
 * lat_nsec samples age_msec" and a line per online node and class, while
 * the subsystem uses the policy; "untracked" for a path without a
 * tracker, nothing under other policies (as queue_depth, upstream).  The
 * held counts are the head's: bios waiting now, and ever.
 */
static ssize_t nvme_lat_attr_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	struct nvme_ns *ns = dev_to_disk(dev)->private_data;
	const struct blk_nodelat_info_ops *info;
	const struct blk_nodelat_ops *ops;
	int len;

	if (READ_ONCE(ns->ctrl->subsys->iopolicy) != NVME_IOPOLICY_LAT)
		return 0;
	info = symbol_get(blk_nodelat_info_ops);
	if (!info) {
		ops = symbol_get(blk_nodelat_ops);
		if (!ops)	/* not loaded: nothing is tracked */
			return sysfs_emit(buf, "untracked\n");
		symbol_put(blk_nodelat_ops);
		return sysfs_emit(buf, "unsupported\n");
	}
	len = -ENODEV;
	if (info->version >= BLK_NODELAT_INFO_V1)
		len = info->emit(ns->queue, buf, 0);
	symbol_put(blk_nodelat_info_ops);
	if (len < 0)
		return sysfs_emit(buf, "untracked\n");
	return nvme_lat_emit_held(ns->head, buf, len);
}

struct device_attribute nvme_lat_attr =
	__ATTR(latency, 0444, nvme_lat_attr_show, NULL);

static const char *nvme_lat_name(struct nvme_ns *ns)
{
	return ns ? ns->disk->disk_name : "-";
}

/*
 * @ns of estimate @c is the choice for @node: when head->current_path[]
 * holds another, store it and say so.  Under head->srcu, on a path seen
 * usable: ns removal clears NVME_NS_READY, waits for us, then clears
 * current_path[], as it does after nvme_round_robin_path().
 */
void __nvme_lat_trace_path(struct nvme_ns_head *head, int node,
			   unsigned int cls, struct nvme_ns *ns,
			   const struct nlat_view *c)
{
	struct nlat_view oc = { };
	struct nvme_ns *old;

	old = srcu_dereference(head->current_path[node], &head->srcu);
	if (old == ns)
		return;
	rcu_assign_pointer(head->current_path[node], ns);
	if (old)
		nvme_lat_read(old, node, cls, false, &oc);
	trace_nvme_latency_path(head->disk->disk_name, node, cls,
				nvme_lat_name(old), &oc, ns->disk->disk_name, c);
}

/* The tracker granted @ns of estimate @c a probe; under head->srcu. */
void __nvme_lat_trace_probe(struct nvme_ns_head *head, int node,
			    unsigned int cls, struct nvme_ns *ns,
			    const struct nlat_view *c)
{
	struct nlat_view oc = *c;
	struct nvme_ns *old;

	old = srcu_dereference(head->current_path[node], &head->srcu);
	if (old && old != ns)
		nvme_lat_read(old, node, cls, false, &oc);
	trace_nvme_latency_probe(head->disk->disk_name, node, cls,
				 nvme_lat_name(old), &oc, ns->disk->disk_name,
				 c);
}

void nvme_lat_exit(void)
{
	/* every path is gone: nothing is pending, nothing re-arms the work */
	cancel_delayed_work_sync(&nvme_lat_retry_work);
	/* the tracker must not keep a pointer into this module */
	mutex_lock(&nvme_lat_ops_mutex);
	if (WARN_ON_ONCE(nvme_lat_wake_ops)) {
		nvme_lat_wake_ops->set_waker(NULL);
		WRITE_ONCE(nvme_lat_wake_ops, NULL);
		symbol_put(blk_nodelat_wake_ops);
	}
	mutex_unlock(&nvme_lat_ops_mutex);
	/* each head's last path freed its record and its route */
	WARN_ON_ONCE(READ_ONCE(nvme_lat_nr_holds));
	nvme_lat_route_exit();
}
