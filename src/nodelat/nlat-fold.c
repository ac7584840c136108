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
 * empty cell per interval; read2() does so for two queues at one clock.
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
	/*
	 * The group's queues fold apart, maybe at once.  Aged by the windows
	 * since its last mean, as a cell: a mean from before a quiet spell
	 * must not set the quiet time of a path its probes since found fast.
	 */
	if (nr) {
		nlat_ewma_update_shared(&grp->lat_ewma, div64_u64(sum, nr),
					p.hist_w,
					nlat_windows(now, READ_ONCE(grp->lat_upd_ns),
						     p.window_ns));
		nlat_clock_advance(&grp->lat_upd_ns, now);
	}
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

/* What every read of one call shares: the knobs and the clocks. */
struct nlat_rd {
	struct nlat_params	p;
	u64			now;
	unsigned long		tick;
};

static __always_inline void nlat_rd_init(struct nlat_rd *rd)
{
	nlat_params_get(&rd->p);
	/* one coarse clock: its lag behind done_ns only shortens a wait */
	rd->now = nlat_now();
	rd->tick = jiffies;
}

/*
 * The states that need a quiet spell, of a group that answered nothing for
 * a window or more (or never): waiting (returned), stalled and unproven.
 */
static noinline bool nlat_read_quiet(struct nlat_group *grp, u32 started,
				     u64 queued, const struct nlat_rd *rd,
				     struct nlat_view *v)
{
	u64 done = READ_ONCE(grp->done_ns), since, quiet;
	bool busy;

	since = max(done, READ_ONCE(grp->busy_ns));
	/* only what was started can keep us waiting */
	v->lat_ns = nlat_waited_lat(v->lat_ns, started, since, rd->now, &rd->p);
	quiet = nlat_group_quiet(grp, &rd->p);
	v->stalled = nlat_stalled_for(started, since, rd->now, quiet);
	busy = started || nlat_queued_age(queued, rd->tick) <=
			  READ_ONCE(nlat_window_jiffies);
	v->unproven = nlat_unproven_for(busy, done, rd->now, quiet);
	return nlat_waiting(started, since, rd->now, &rd->p);
}

/* read() of @nq, found under RCU, for cell @node, @cls at @rd's clock. */
static __always_inline void nlat_read_nq(struct nlat_queue *nq, int node,
					 unsigned int cls, bool may_probe,
					 const struct nlat_rd *rd,
					 struct nlat_view *v)
{
	struct nlat_group *grp = nq->grp;
	struct nlat_cell *c = &nq->cells[nlat_cell_idx(node, cls)];
	const struct nlat_params *p = &rd->p;
	u64 ewma, probe, done, queued;
	unsigned int shift;
	s64 infl, units, late;
	long nbar;
	u32 started;
	bool waiting = false;

	ewma = READ_ONCE(c->est.ewma);
	probe = READ_ONCE(c->probe_ns);
	v->lat_ns = nlat_ewma_ns(ewma);
	infl = atomic64_read(&grp->inflight);
	started = max(nlat_infl_nr(infl), 0);
	/* the group's load in requests of this class's size */
	shift = nlat_size_shift(cls % NLAT_NR_SIZES);
	units = max_t(s64, nlat_infl_units(infl), 0);
	v->started = started;
	queued = atomic64_read(&grp->queued);
	/* not started yet, size unknown: one of this class each */
	v->inflight = min_t(u64, nlat_units_nr(units, shift), U32_MAX / 2) +
		      nlat_queued_nr(queued, rd->tick);
	/*
	 * An answer within the last window: nothing waits that long, and a
	 * quiet spell (nlat_quiet_ns()) is at least a window.
	 */
	done = READ_ONCE(grp->done_ns);
	if (unlikely(!done || (s64)(rd->now - done) >= (s64)p->window_ns))
		waiting = nlat_read_quiet(grp, started, queued, rd, v);
	/* nothing folded for a stale interval: that load is not the present */
	if ((s64)(rd->now - READ_ONCE(grp->fold_ns)) <
	    (s64)(p->stale_windows * p->window_ns)) {
		nbar = atomic_long_read(&grp->nbar);
		v->nbar = nbar <= 0 ? 0 :
			  min_t(unsigned long, (unsigned long)nbar >> shift,
				NLAT_NBAR_MAX);
	}
	/* started since the last answer, in requests of this class */
	late = units - READ_ONCE(grp->answer_units);
	if (late > 0) {
		v->late = nlat_late(min_t(u64, nlat_units_nr(late, shift),
					  U32_MAX),
				    v->nbar, nlat_recent(done, rd->now,
							 p->window_ns,
							 TICK_NSEC));
		if (v->late == NLAT_LATE_SILENT)
			v->silent_ms = nlat_silent_ms(done, rd->now);
	}
	/* unproven: the one I/O it has is the probe; waiting: owes one */
	if (may_probe && !v->stalled && !v->unproven && !waiting &&
	    nlat_probe_due(ewma, READ_ONCE(c->est.upd_ns),
			   READ_ONCE(c->est.backoff), probe, rd->now, p)) {
		v->probe = cmpxchg64(&c->probe_ns, probe, rd->now) == probe;
		if (v->probe)
			atomic_long_inc(&nq->probes);
	}
}

bool nlat_read(struct request_queue *q, int node, unsigned int cls,
	       bool may_probe, struct nlat_view *v)
{
	struct nlat_queue *nq;
	struct nlat_rd rd;

	memset(v, 0, sizeof(*v));
	if ((unsigned int)node >= nr_node_ids)
		node = 0;
	if (cls >= NLAT_NR_CLASSES)
		cls = NLAT_NR_CLASSES - 1;

	/* nq is freed by call_rcu() only after it left the table */
	rcu_read_lock();
	nq = nlat_lookup(q);
	if (nq) {
		nlat_rd_init(&rd);
		nlat_read_nq(nq, node, cls, may_probe, &rd, v);
	}
	rcu_read_unlock();
	return nq;
}

unsigned int nlat_read2(struct request_queue *const qs[2], int node,
			unsigned int cls, bool may_probe, struct nlat_view v[2])
{
	struct nlat_queue *nq;
	struct nlat_rd rd;
	unsigned int i;

	memset(v, 0, 2 * sizeof(*v));
	if ((unsigned int)node >= nr_node_ids)
		node = 0;
	if (cls >= NLAT_NR_CLASSES)
		cls = NLAT_NR_CLASSES - 1;

	nlat_rd_init(&rd);
	/* under the caller's RCU, as read()'s own */
	for (i = 0; i < 2; i++) {
		nq = nlat_lookup(qs[i]);
		if (!nq)
			return i;
		nlat_read_nq(nq, node, cls, may_probe, &rd, &v[i]);
		if (v[i].probe)
			return i + 1;
	}
	return 2;
}
