/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nlat-compat.h - the one place where blk-nodelat meets kernel API drift.
 *
 * blk-nodelat is written against the newest block API.  Older kernels
 * are filled in here, newest change first, each with the release that
 * made it.  The NLAT_HAVE_* switches come from build-time probes in
 * src/nodelat/Kbuild, which grep the headers the module is built against,
 * so that distribution backports are seen (docs/porting.md);
 * NLAT_PROBED says the probes ran.  Without probes, the release number
 * decides.
 *
 * The rq_qos list helpers replace rq_qos_add()/rq_qos_del(): those are
 * inline or unexported and register debugfs through unexported functions,
 * so a module cannot call them.  Ours do what they do minus debugfs, and
 * blk-nodelat sets no rq_qos_ops.debugfs_attrs, so the block core's own
 * rqos debugfs code (blk_mq_debugfs_register_rqos()) skips our entry.
 */
#ifndef _NLAT_COMPAT_H
#define _NLAT_COMPAT_H

#include <linux/version.h>
#include <linux/blk-mq.h>
#include <linux/jiffies.h>
#include <linux/sched/mm.h>
#include "blk-rq-qos.h"

#define NLAT_RELEASE		LINUX_VERSION_CODE
#define NLAT_SINCE(a, b)	(KERNEL_VERSION(a, b, 0) <= NLAT_RELEASE)

#ifndef NLAT_PROBED
/* The release number is only a fallback, for builds without the probes. */

#if NLAT_SINCE(6, 17)
#define NLAT_HAVE_QOS_ENABLED_FLAG
#elif NLAT_SINCE(6, 16)
#define NLAT_HAVE_RQOS_STATIC_KEY
#endif
#if NLAT_SINCE(6, 14)
#define NLAT_HAVE_FREEZE_MEMFLAGS
#endif
#if NLAT_SINCE(6, 13)
#define NLAT_HAVE_FREEZE_NON_OWNER
#endif
#if NLAT_SINCE(6, 17) && !defined(NLAT_HAVE_PERCPU_WQ)
#define NLAT_HAVE_PERCPU_WQ
#endif
#if NLAT_SINCE(6, 5)
#define NLAT_HAVE_RQ_QOS_MUTEX
#endif
#if NLAT_SINCE(6, 3)
#define NLAT_HAVE_RQOS_DISK
#endif
#endif /* !NLAT_PROBED */

/*
 * 6.5 (backported into some 6.1 builds): q->rq_qos_mutex orders every
 * change of q->rq_qos, rq_qos_exit() included.  Before, rq_qos_add() took
 * q->queue_lock under a freeze and rq_qos_exit() took nothing.  There
 * q->sysfs_lock stands in: blk_unregister_queue() clears
 * QUEUE_FLAG_REGISTERED under it before del_gendisk() calls rq_qos_exit(),
 * so a queue seen registered under it is ours to change, and one that is
 * not belongs to teardown, which calls our exit hook.
 */
#if !defined(NLAT_HAVE_RQ_QOS_MUTEX) && NLAT_SINCE(6, 5)
#error "the blkdev.h probe missed q->rq_qos_mutex (src/nodelat/Kbuild)"
#endif

#ifdef NLAT_HAVE_RQ_QOS_MUTEX
static inline struct mutex *nlat_qos_mutex(struct request_queue *q)
{
	return &q->rq_qos_mutex;
}

static inline bool nlat_teardown_owns(struct request_queue *q)
{
	return false;
}

static inline void nlat_qos_list_lock(struct request_queue *q)
{
}

static inline void nlat_qos_list_unlock(struct request_queue *q)
{
}
#else
static inline struct mutex *nlat_qos_mutex(struct request_queue *q)
{
	return &q->sysfs_lock;
}

static inline bool nlat_teardown_owns(struct request_queue *q)
{
	return !blk_queue_registered(q);
}

/* as rq_qos_add() and rq_qos_del() of those releases */
static inline void nlat_qos_list_lock(struct request_queue *q)
{
	spin_lock_irq(&q->queue_lock);
}

static inline void nlat_qos_list_unlock(struct request_queue *q)
{
	spin_unlock_irq(&q->queue_lock);
}
#endif

/* 6.17 named the per-CPU system workqueue; 7.2 warns on system_wq. */
#ifdef NLAT_HAVE_PERCPU_WQ
#define nlat_wq		system_percpu_wq
#else
#define nlat_wq		system_wq
#endif

/*
 * Freezes a caller starts on many queues, waits for and undoes: the
 * caller keeps memalloc_noio itself.  6.13 made a freeze an owner's
 * (lockdep tracks it as held) and added _non_owner variants for freezes
 * that span queues or tasks, as nvme_start_freeze()'s does; 6.14 moved
 * the noio flags into blk_mq_unfreeze_queue(), whose _nomemrestore
 * variant leaves them alone.
 */
static inline void nlat_freeze_start(struct request_queue *q)
{
#ifdef NLAT_HAVE_FREEZE_NON_OWNER
	blk_freeze_queue_start_non_owner(q);
#else
	blk_freeze_queue_start(q);
#endif
}

static inline void nlat_unfreeze_started(struct request_queue *q)
{
#ifdef NLAT_HAVE_FREEZE_NON_OWNER
	blk_mq_unfreeze_queue_non_owner(q);
#elif defined(NLAT_HAVE_FREEZE_MEMFLAGS)
	blk_mq_unfreeze_queue_nomemrestore(q);
#else
	blk_mq_unfreeze_queue(q);
#endif
}

/* Whether @q drained by @deadline (jiffies); a started freeze. */
static inline bool nlat_freeze_wait(struct request_queue *q,
				    unsigned long deadline)
{
	long left = (long)(deadline - jiffies);

	return blk_mq_freeze_queue_wait_timeout(q, left > 0 ? left : 0) > 0;
}

/*
 * 6.17: the rq_qos hooks run only while QUEUE_FLAG_QOS_ENABLED is set; the
 * list owner sets it on add and clears it when the list becomes empty.
 * 6.16 gated them with the static key block_rq_qos instead, which is not
 * exported: a module cannot turn the hooks on there, nor keep them on, so
 * issue and done could come unpaired.  We refuse to attach on 6.16.
 * Before 6.16 the hooks run whenever q->rq_qos is set.  The flag may be
 * set already when we link (wbt on the queue): setting it again is
 * harmless.
 */
#ifdef NLAT_HAVE_RQOS_STATIC_KEY
static inline int nlat_rqos_supported(void)
{
	return -EOPNOTSUPP;
}
#else
static inline int nlat_rqos_supported(void)
{
	return 0;
}
#endif

#ifdef NLAT_HAVE_QOS_ENABLED_FLAG
static inline void nlat_rqos_enable(struct request_queue *q)
{
	blk_queue_flag_set(QUEUE_FLAG_QOS_ENABLED, q);
}

static inline void nlat_rqos_disable_if_empty(struct request_queue *q)
{
	if (!q->rq_qos)
		blk_queue_flag_clear(QUEUE_FLAG_QOS_ENABLED, q);
}
#else
static inline void nlat_rqos_enable(struct request_queue *q)
{
}

static inline void nlat_rqos_disable_if_empty(struct request_queue *q)
{
}
#endif

/*
 * 6.3: struct rq_qos points to its gendisk, not to its request_queue, and
 * rq_qos_ops became const.  The queue is the one we attach to either way.
 */
static inline void nlat_rqos_init(struct rq_qos *rqos, struct request_queue *q,
				  enum rq_qos_id id,
				  const struct rq_qos_ops *ops)
{
#ifdef NLAT_HAVE_RQOS_DISK
	rqos->disk = q->disk;
	rqos->ops = ops;
#else
	rqos->q = q;
	rqos->ops = (struct rq_qos_ops *)ops;	/* never written through */
#endif
	rqos->id = id;
}

/*
 * Link @rqos into @q's list.  Caller has frozen the queue and holds
 * nlat_qos_mutex(): no request is in flight, so every request issued after
 * the unfreeze passes through our issue hook before it can reach done.
 */
static inline int nlat_rqos_link(struct request_queue *q, struct rq_qos *rqos)
{
	int ret = -EBUSY;

	lockdep_assert_held(nlat_qos_mutex(q));
	nlat_qos_list_lock(q);
	if (rq_qos_id(q, rqos->id))
		goto unlock;
	rqos->next = q->rq_qos;
	q->rq_qos = rqos;
	nlat_rqos_enable(q);
	ret = 0;
unlock:
	nlat_qos_list_unlock(q);
	return ret;
}

/* Unlink @rqos from @q's list; same locking as nlat_rqos_link(). */
static inline void nlat_rqos_unlink(struct request_queue *q,
				    struct rq_qos *rqos)
{
	struct rq_qos **cur;

	lockdep_assert_held(nlat_qos_mutex(q));
	nlat_qos_list_lock(q);
	for (cur = &q->rq_qos; *cur; cur = &(*cur)->next) {
		if (*cur == rqos) {
			*cur = rqos->next;
			break;
		}
	}
	nlat_rqos_disable_if_empty(q);
	nlat_qos_list_unlock(q);
}

#endif /* _NLAT_COMPAT_H */
