/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blk-nodelat internals, shared by its files: the tracker of a queue, its
 * cells and its group, and what the I/O path inlines.  The design, and
 * why: docs/design.md.
 */
#ifndef _NLAT_INTERNAL_H
#define _NLAT_INTERNAL_H

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "blk-rq-qos.h"
#include "blk-mq.h"
#include "nlat-compat.h"
#include "blk-nodelat.h"
#include "nlat-acc.h"
#include "nlat-math.h"
#include "nlat-group.h"

/*
 * rq_qos ids are only compared for equality (rq_qos_id() looks for the
 * built-in ones, 0 .. 2): one far outside the enum is never found by
 * their lookups and collides with no id added upstream.
 */
#define NLAT_RQ_QOS_ID		((enum rq_qos_id)0x6e6c)	/* "nl" */

/* Knobs (nlat-module.c): read with READ_ONCE(), applied from the next use. */
extern unsigned int nlat_window_usec;
extern unsigned int nlat_history_pct;
extern unsigned int nlat_min_samples;
extern unsigned int nlat_stale_windows;
/* the same, converted when one is written: what the I/O path reads */
extern struct nlat_params nlat_cur;
extern unsigned long nlat_window_jiffies;
/* the knobs allow thinning the samples (nlat-acc.h, nlat_rqos_done()) */
extern bool nlat_thin_ok;

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
	s64			answer_units;	/* in flight after the last answer */
	u64			done_ns;	/* last completion, ktime_get_ns() */
	u64			busy_ns;	/* inflight went 0 -> 1 */
	atomic_long_t		nbar;		/* sum of its queues' nbar */
	u64			fold_ns;	/* last fold of any of them */
	u64			lat_ewma;	/* all its samples: nlat_quiet_ns() */
	u64			lat_upd_ns;	/* last fold of lat_ewma */
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

extern struct nlat_table __rcu *nlat_table;

static inline struct nlat_queue *nlat_rqos_to_nq(struct rq_qos *rqos)
{
	return container_of(rqos, struct nlat_queue, rqos);
}

/* The clock of estimates, probes and ages: tick resolution is plenty. */
static inline u64 nlat_now(void)
{
	return ktime_get_coarse_ns();
}

static inline const struct nlat_params *nlat_params_get(struct nlat_params *p)
{
	p->window_ns = READ_ONCE(nlat_cur.window_ns);
	p->hist_w = READ_ONCE(nlat_cur.hist_w);
	p->min_samples = READ_ONCE(nlat_cur.min_samples);
	p->stale_windows = READ_ONCE(nlat_cur.stale_windows);
	return p;
}

/* How long @grp may go unanswered: nlat_quiet_ns() of its own latency. */
static inline u64 nlat_group_quiet(struct nlat_group *grp,
			    const struct nlat_params *p)
{
	return nlat_quiet_ns(nlat_ewma_ns(READ_ONCE(grp->lat_ewma)), p);
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
static inline struct nlat_queue *nlat_lookup(struct request_queue *q)
{
	struct nlat_table *t = rcu_dereference(nlat_table);
	struct nlat_queue *nq;

	if (!t || q->id >= t->nr)
		return NULL;
	nq = rcu_dereference(t->slot[q->id]);
	return nq && nq->q == q ? nq : NULL;
}

/* nlat-table.c */
int nlat_reserve(unsigned int id);
void nlat_table_set(unsigned int id, struct nlat_queue *nq);

/* nlat-account.c */
void nlat_rqos_track(struct rq_qos *rqos, struct request *rq, struct bio *bio);
void nlat_rqos_issue(struct rq_qos *rqos, struct request *rq);
void nlat_rqos_requeue(struct rq_qos *rqos, struct request *rq);
void nlat_rqos_done(struct rq_qos *rqos, struct request *rq);
void nlat_end_error(struct request *rq);
void nlat_set_waker(const struct blk_nodelat_waker *w);

/* nlat-fold.c */
void nlat_fold_work(struct work_struct *work);
bool nlat_read(struct request_queue *q, int node, unsigned int cls,
	       bool may_probe, struct nlat_view *v);
unsigned int nlat_read2(struct request_queue *const qs[2], int node,
			unsigned int cls, bool may_probe, struct nlat_view v[2]);

/* nlat-attach.c */
void nlat_rqos_exit(struct rq_qos *rqos);
int nlat_attach(struct request_queue *q, const void *group);
bool nlat_detach(struct request_queue *q);
bool nlat_tracked(struct request_queue *q);
unsigned int nlat_nr_tracked(void);
void nlat_attach_many(struct request_queue *const *qs,
		      const void *const *groups, int *rets, unsigned int n);
void nlat_detach_many(struct request_queue *const *qs, int *rets,
		      unsigned int n);

/* nlat-info.c */
void nlat_debugfs_register(struct request_queue *q);
void nlat_debugfs_unregister(struct request_queue *q);
int nlat_emit(struct request_queue *q, char *buf, int at);

/* nlat-module.c */
extern const struct rq_qos_ops nlat_rqos_ops;

#endif /* _NLAT_INTERNAL_H */
