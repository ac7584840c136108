// SPDX-License-Identifier: GPL-2.0
/*
 * blk-nodelat: the rq_qos hooks of a tracked queue.
 *
 * In flight: one atomic per group, +1 when a request is made (track) or,
 * under an I/O scheduler, which assigns driver tags late, when it starts
 * (issue; until then it is one of the group's queued); -1 in requeue,
 * end_error or done.  A bit in the request's tag byte marks it counted,
 * and whoever uncounts clears it with a cmpxchg, so that each request
 * counts once and rq_flags stay the block core's.  The byte also holds
 * the size class of the bio the request was made for: requests grow by
 * merging, while the path was chosen per bio.  Attach and detach link and
 * unlink us with the queue frozen: no request straddles them.
 *
 * done files the sample in the submitting CPU's slot of its class (one
 * atomic add, nlat-acc.h), marks that CPU for the fold and queues the
 * fold one window later.  Errors and failovers are answers, no samples.
 */

#include <linux/bitmap.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>

#include "nlat-internal.h"

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

void nlat_set_waker(const struct blk_nodelat_waker *w)
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

/* A request's tag byte: its size class, and whether it is counted. */
#define NLAT_TAG_SIZE		0x03
#define NLAT_TAG_COUNTED	0x80

/*
 * @rq's tag byte: the size class its latency is filed under (its first
 * bio's, the one the path was chosen for; the rest merged into it) and
 * the counted bit.  NULL outside the table.
 */
static __always_inline u8 *nlat_tag_slot(struct nlat_queue *nq,
					 struct request *rq)
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
 * Uncount @rq if it is counted, once whoever calls (see "In flight"
 * above); its tag byte to *@tag.  Issue wrote the byte before the
 * driver saw the request.  An @answer (a completion, in error or not)
 * also notes what is left in flight, against which read() counts the
 * requests started since (nlat_late()).
 */
static __always_inline bool nlat_uncount(struct nlat_queue *nq,
					 struct request *rq, u8 *tag,
					 bool answer)
{
	u8 *slot = nlat_tag_slot(nq, rq), old;
	struct nlat_group *grp = nq->grp;
	s64 v;

	if (!slot)
		return false;
	old = READ_ONCE(*slot);
	do {
		if (!(old & NLAT_TAG_COUNTED))
			return false;
	} while (!try_cmpxchg(slot, &old, old & ~NLAT_TAG_COUNTED));
	v = atomic64_sub_return(nlat_infl_delta(nlat_size_units(old & NLAT_TAG_SIZE)),
				&grp->inflight);
	/* on the line just written; racing answers leave one of theirs */
	if (answer)
		WRITE_ONCE(grp->answer_units, nlat_infl_units(v));
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
void nlat_rqos_track(struct rq_qos *rqos, struct request *rq,
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
void nlat_rqos_issue(struct rq_qos *rqos, struct request *rq)
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
void nlat_rqos_requeue(struct rq_qos *rqos, struct request *rq)
{
	u8 tag;

	nlat_uncount(nlat_rqos_to_nq(rqos), rq, &tag, false);
}

/*
 * A request of @grp completed at @now, in error or not: an answer.  The
 * one that ends a quiet spell calls the waker; done_ns is on the line
 * the uncount just wrote, and moves by nlat_done_moves() steps.
 */
static __always_inline void nlat_answer(struct nlat_group *grp, u64 now)
{
	struct nlat_params p;
	u64 prev;

	if (!nlat_done_moves(READ_ONCE(grp->done_ns), now,
			     READ_ONCE(nlat_cur.window_ns)))
		return;
	prev = nlat_clock_advance(&grp->done_ns, now);
	if (unlikely(nlat_unproven_for(true, prev, now,
				       nlat_group_quiet(grp, nlat_params_get(&p)))))
		nlat_answered(grp);
}

/*
 * @nq's fold is queued and not yet due: the samples its slots hold all
 * came in this fold's interval (a window and a tick), each an answer
 * (nlat_answer()), so the group's done_ns is younger than that and a
 * step.  nlat_thin_ok: the quiet spell a completion's answer could end
 * is longer, so one taken for no sample ends none.
 */
static __always_inline bool nlat_fold_ahead(struct nlat_queue *nq)
{
	return READ_ONCE(nlat_thin_ok) &&
	       delayed_work_pending(&nq->fold_work) &&
	       time_before(jiffies, READ_ONCE(nq->fold_work.timer.expires));
}

void nlat_rqos_done(struct rq_qos *rqos, struct request *rq)
{
	struct nlat_queue *nq = nlat_rqos_to_nq(rqos);
	u64 start = rq->io_start_time_ns, now, lat, v;
	int cpu = rq->mq_ctx->cpu, node = cpu_to_node(cpu);
	unsigned int cls, thin = 0;
	atomic64_t *acc = NULL;
	u8 tag;

	if (!nlat_uncount(nq, rq, &tag, true))
		return;
	/* started: a sample, or one of a thinned slot (nlat-acc.h) */
	if (nlat_rq_sampled(rq) && start) {
		cls = nlat_rw_class(req_op(rq) == REQ_OP_READ,
				    tag & NLAT_TAG_SIZE);
		acc = &per_cpu_ptr(nq->pcpu, cpu)->acc[cls];
		if (nlat_acc_thin(atomic64_read(acc)) && nlat_fold_ahead(nq)) {
			if (!nlat_acc_thin_keep(start))
				return;
			thin = NLAT_ACC_THIN_SHIFT;
		}
	}
	now = ktime_get_ns();
	nlat_answer(nq->grp, now);
	/* never started (ended in the plug, or before the driver took it) */
	if (!acc)
		return;

	if ((unsigned int)node >= nr_node_ids)
		node = 0;
	/* the cell's line is read-mostly: only folds and probes write it */
	lat = nlat_bound_lat(nlat_clamp_lat(now > start ? now - start : 0),
			     READ_ONCE(nq->cells[nlat_cell_idx(node, cls)].est.ewma));
	/* the submitter's slot; fully ordered, so the fold sees the add */
	v = atomic64_add_return(nlat_acc_sample(lat) << thin, acc);
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
				   READ_ONCE(nlat_window_jiffies));
}

/*
 * The user saw @rq fail or fail over: uncount it now, so done takes no
 * sample.  It is an answer all the same: a path that fails every I/O is
 * not quiet, and what is held for it is routed again.  The request holds
 * a queue reference, so q->rq_qos cannot be unlinked under us (that needs
 * the queue frozen).
 */
void nlat_end_error(struct request *rq)
{
	struct rq_qos *rqos = rq_qos_id(rq->q, NLAT_RQ_QOS_ID);
	struct nlat_queue *nq;
	u8 tag;

	if (!rqos)
		return;
	nq = nlat_rqos_to_nq(rqos);
	if (nlat_uncount(nq, rq, &tag, true))
		nlat_answer(nq->grp, ktime_get_ns());
}
