// SPDX-License-Identifier: GPL-2.0
/*
 * blk-nodelat: trackers and groups made, linked and dropped.
 *
 * Attach and detach allocate before taking anything (room in the table is
 * reserved), then freeze the queue, then take q->rq_qos_mutex: teardown's
 * order, so that no allocation reclaims into a queue another task froze
 * while we hold the mutex it needs.  A batch starts every freeze before it
 * waits for the first, under one deadline: one grace period, not one per
 * queue.  Queue teardown calls our exit hook, which drops the tracker as
 * detach does.  Trackers and groups are freed after a grace period; each
 * tracker holds a module reference until it is released.
 */

#include <linux/bitmap.h>
#include <linux/error-injection.h>
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "nlat-internal.h"

#define NLAT_HASH_BITS		6
/* a queue waiting on a reconnecting controller may not drain for minutes */
#define NLAT_ATTACH_FREEZE_MS	1000

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

/* noinline, as each allocator here: a fail_function target */
static noinline struct nlat_queue *nlat_alloc(struct request_queue *q)
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
ALLOW_ERROR_INJECTION(nlat_alloc, NULL);

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

/* A group of @key for @q's tag set, not hashed; NULL without memory. */
static noinline struct nlat_group *nlat_group_alloc(struct request_queue *q,
						    const void *key)
{
	struct blk_mq_tag_set *set = q->tag_set;
	struct nlat_group *g;

	g = kzalloc_node(sizeof(*g), GFP_KERNEL, q->node);
	if (!g)
		return NULL;
	g->key = key;
	g->set = set;
	g->tag_hctxs = set->nr_hw_queues;
	g->tag_depth = set->queue_depth;
	g->tag_bytes = kvzalloc_node(array_size(g->tag_hctxs, g->tag_depth),
				     GFP_KERNEL, q->node);
	if (!g->tag_bytes) {
		kfree(g);
		return NULL;
	}
	return g;
}
ALLOW_ERROR_INJECTION(nlat_group_alloc, NULL);

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

		new = nlat_group_alloc(q, key);
		if (!new)
			return ERR_PTR(-ENOMEM);
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
void nlat_rqos_exit(struct rq_qos *rqos)
{
	struct nlat_queue *nq = nlat_rqos_to_nq(rqos);

	nlat_unhash(nq);
	nlat_release(nq);
}

bool nlat_tracked(struct request_queue *q)
{
	bool ret;

	/* as in nlat_read(): a tracker in the table is not freed under RCU */
	rcu_read_lock();
	ret = nlat_lookup(q);
	rcu_read_unlock();
	return ret;
}

/* The trackers of a batch of @n queues, allocated before any freeze. */
static noinline struct nlat_queue **nlat_alloc_nqs(unsigned int n)
{
	return kvcalloc(n, sizeof(struct nlat_queue *), GFP_KERNEL);
}
ALLOW_ERROR_INJECTION(nlat_alloc_nqs, NULL);

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
void nlat_attach_many(struct request_queue *const *qs,
			     const void *const *groups, int *rets,
			     unsigned int n)
{
	unsigned long deadline;
	struct nlat_queue **nqs;
	unsigned int i, noio;

	nqs = nlat_alloc_nqs(n);
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

int nlat_attach(struct request_queue *q, const void *group)
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
	nqs = n > 1 ? nlat_alloc_nqs(n) : &one;
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

bool nlat_detach(struct request_queue *q)
{
	int ret;

	nlat_detach_queues(&q, &ret, 1, false);
	return ret == 1;
}

void nlat_detach_many(struct request_queue *const *qs, int *rets,
			     unsigned int n)
{
	nlat_detach_queues(qs, rets, n, true);
}

unsigned int nlat_nr_tracked(void)
{
	return atomic_read(&nlat_nr_queues);
}
