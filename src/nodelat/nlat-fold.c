// SPDX-License-Identifier: GPL-2.0
/*
 * blk-nodelat: the estimates, and read().
 *
 * The fold is a delayed work item that the first completion after a fold
 * queues one window later; it re-arms while it finds samples, so an idle
 * queue costs nothing.  It takes the samples of the CPUs marked since the
 * last fold into their nodes' cells, updates each cell's EWMA and the
 * queue's nbar (nlat-math.h), and drops an idle queue's load from its
 * group's.
 *
 * read() gives the cell's estimate and the group's load, waiting, stalled
 * and unproven states, and grants a probe to one reader of a stale or
 * empty cell per interval.
 */

#include <linux/bitmap.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/string.h>

#include "nlat-internal.h"

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

void nlat_fold_work(struct work_struct *work)
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

bool nlat_read(struct request_queue *q, int node, unsigned int cls,
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
