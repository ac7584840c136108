/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The latency iopolicy's choice of a path, included by multipath.c after
 * its built-in selectors (whose static helpers it calls), so that every
 * series' patch carries only its hooks.  What differs between series is
 * met by the probes of src/nvme/Kbuild.  The rule is nvme_lat_cmp()
 * (nvme-latency-cost.h), the tracker is read by nvme_lat_read(), the
 * hold records are nvme-latency.c's; docs/design.md explains them.
 */
#ifndef _NVME_LATENCY_SELECT_H
#define _NVME_LATENCY_SELECT_H

/* Passthrough in flight on @ns's controller, which the tracker cannot see. */
static inline u32 nvme_latency_pt_load(struct nvme_ns *ns)
{
#ifdef NVME_LAT_HAVE_NR_ACTIVE
	return atomic_read(&ns->ctrl->nr_active);
#else
	return 0;
#endif
}

/* Round robin, for a head with a path the tracker has not taken yet. */
static struct nvme_ns *nvme_latency_rr(struct nvme_ns_head *head, int node)
{
#ifdef NVME_LAT_HAVE_RR_HEAD
	return nvme_round_robin_path(head);
#else
	struct nvme_ns *ns = srcu_dereference(head->current_path[node],
					      &head->srcu);

	if (!ns)
		return __nvme_find_path(head, node);
	return nvme_round_robin_path(head, node, ns);
#endif
}

/*
 * One routing of an I/O: what it is, and what reading the paths found.
 * @idle, in a ranking scan only: the path of lowest cost with nothing in
 * flight, and the load the paths served (I/O per second, 1/NLAT_NBAR_ONE).
 */
struct nvme_latency_io {
	int			node;
	unsigned int		cls;
	bool			rw;		/* by latency: a read or write */
	bool			probe;		/* may take a probe */
	bool			pt;		/* passthrough */
	bool			untracked;	/* a path has no tracker */
	bool			busy;		/* a path has requests started */
	bool			probed;		/* a probe took it */
	bool			ranking;	/* a scan that ranks: fill @idle */
	bool			fresh;		/* a path is nvme_lat_fresh() */
	bool			wait;		/* waits beside a proven path */
	struct {
		struct nvme_ns		*ns;
		struct nlat_view	c;
		u64			rate;
	} idle;
};

/* A ranking's note of @c, read from @ns. */
static void nvme_latency_note(struct nvme_latency_io *io, struct nvme_ns *ns,
			      const struct nlat_view *c)
{
	struct nlat_view i = *c;

	/* Little's law: served = in flight / latency */
	if (c->lat_ns && c->nbar)
		io->idle.rate += div64_u64((u64)c->nbar * NSEC_PER_SEC,
					   c->lat_ns);
	i.inflight = 0;
	if (!io->idle.ns || nvme_lat_cmp(&i, &io->idle.c) < 0) {
		io->idle.ns = ns;
		io->idle.c = i;
	}
}

/* @c, read from @ns, as @io weighs it (passthrough's own load added). */
static void nvme_latency_weigh(const struct nvme_latency_io *io,
			       struct nvme_ns *ns, struct nlat_view *c)
{
	/* no sample keeps this class's estimate fresh: by load alone */
	if (!io->rw)
		c->lat_ns = 0;
	if (io->pt)
		c->inflight += nvme_latency_pt_load(ns);
}

/*
 * One candidate: true if the tracker granted it a probe, which takes the
 * I/O.  Else the better of it and *@found (whose numbers are in @best)
 * goes to *@found.
 */
static bool nvme_latency_rank(struct nvme_latency_io *io, struct nvme_ns *ns,
		struct nvme_ns **found, struct nlat_view *best)
{
	struct nlat_view c;

	switch (nvme_lat_read(ns, io->node, io->cls, io->rw && io->probe, &c)) {
	case NVME_LAT_PROBE:
		nvme_lat_trace_probe(ns->head, io->node, io->cls, ns, &c);
		io->probed = true;
		return true;
	case NVME_LAT_UNTRACKED:
		io->untracked = true;
		return false;
	default:
		break;
	}
	io->busy |= c.started;
	io->fresh |= nvme_lat_fresh(&c);
	nvme_latency_weigh(io, ns, &c);
	if (io->ranking)
		nvme_latency_note(io, ns, &c);
	if (!*found || nvme_lat_cmp(&c, best) < 0) {
		*found = ns;
		*best = c;
	}
	return false;
}

/*
 * Lowest expected latency among @head's usable paths in @ana_state, or
 * the first of them the tracker grants a probe (only to I/O that yields a
 * sample, within the head's probe budget: @io->probe).  Passthrough is
 * not seen by the tracker: its requests are counted in ctrl->nr_active
 * where the kernel has it.  Sets *@unproven if the best, so every, path
 * is unproven, or if the best is proven but another never answered yet
 * and the best is loaded (nvme_lat_wait_beside()).  A lone usable path
 * is taken without reading the tracker: there is nothing to compare it
 * with.
 */
static struct nvme_ns *nvme_latency_pick(struct nvme_ns_head *head,
		struct nvme_latency_io *io, enum nvme_ana_state ana_state,
		bool *unproven)
{
	struct nlat_view best = { };
	struct nvme_ns *ns, *lone = NULL, *found = NULL;
	bool lone_read = false;

	list_for_each_entry_srcu(ns, &head->list, siblings,
				 srcu_read_lock_held(&head->srcu)) {
		if (nvme_path_is_disabled(ns) || ns->ana_state != ana_state)
			continue;
		if (!lone) {
			lone = ns;
			continue;
		}
		if (!lone_read) {
			lone_read = true;
			if (nvme_latency_rank(io, lone, &found, &best))
				goto probe;
		}
		if (nvme_latency_rank(io, ns, &found, &best)) {
			lone = ns;
			goto probe;
		}
	}
	if (!found) {
		/* ranked alone: a route takes it without a scan */
		if (io->ranking && lone && !io->idle.ns)
			io->idle.ns = lone;
		return lone;
	}
	/* the best is unproven: so is every candidate */
	if (best.unproven) {
		*unproven = true;
		return found;
	}
	/* another never answered yet: a burst waits for it too */
	if (nvme_lat_wait_beside(&best, io->fresh)) {
		io->wait = true;
		*unproven = true;
		return found;
	}
	if (!io->untracked)
		nvme_lat_trace_path(head, io->node, io->cls, found, &best);
	return found;
probe:
	/* a partial scan ranks nothing */
	io->ranking = false;
	io->idle.ns = NULL;
	return lone;
}

/*
 * The path after @ns in @head's list, round the end: nvme_next_ns().
 */
static struct nvme_ns *nvme_latency_next_ns(struct nvme_ns_head *head,
					    struct nvme_ns *ns)
{
	ns = list_next_or_null_rcu(&head->list, &ns->siblings, struct nvme_ns,
				   siblings);
	if (ns)
		return ns;
	return list_first_or_null_rcu(&head->list, struct nvme_ns, siblings);
}

/* Usable paths a challenger is looked for among, before a scan decides. */
#define NVME_LATENCY_NEXT_MAX	16

/*
 * The challenger of @best: the next usable path after the last one, in
 * @best's ANA state.  @best itself if a round of the list finds none (it
 * is alone), NULL if NVME_LATENCY_NEXT_MAX steps do not: a scan decides.
 */
static struct nvme_ns *nvme_latency_challenger(struct nvme_ns_head *head,
		struct nvme_lat_slot *s, struct nvme_ns *best)
{
	struct nvme_ns *ns, *start = srcu_dereference(s->next, &head->srcu);
	int i;

	if (!start)
		start = best;
	ns = start;
	for (i = 0; i < NVME_LATENCY_NEXT_MAX; i++) {
		ns = nvme_latency_next_ns(head, ns);
		if (!ns)
			return NULL;
		if (ns != best && !nvme_path_is_disabled(ns) &&
		    ns->ana_state == best->ana_state) {
			/* an enabled path only: nvme_lat_route_forget() */
			if (rcu_access_pointer(s->next) != ns)
				rcu_assign_pointer(s->next, ns);
			return ns;
		}
		/* a whole round */
		if (ns == start)
			return best;
	}
	return NULL;
}

/*
 * An I/O between two rankings of @s reads two paths: the one ranked best
 * and the next challenger, at one clock (nvme_lat_read2()), and takes the
 * better (or the one the tracker grants a probe); the best alone, unread,
 * as a scan would.  NULL when a
 * scan must decide: the best is gone, disabled or not optimized, no
 * challenger is found, a path is untracked, or the better of the two is
 * stalled, unproven or late, or the other never answered yet and the better
 * is loaded (nvme_lat_wait_beside()): the scan finds another, or holds the
 * bio.
 */
static struct nvme_ns *nvme_latency_two(struct nvme_ns_head *head,
		struct nvme_lat_slot *s, struct nvme_latency_io *io)
{
	struct nlat_view best = { }, c[2];
	struct nvme_ns *ns, *ch, *found = NULL;
	int i;

	ns = srcu_dereference(s->best, &head->srcu);
	/* non-optimized paths only while no path is optimized: a scan */
	if (!ns || nvme_path_is_disabled(ns) ||
	    ns->ana_state != NVME_ANA_OPTIMIZED)
		return NULL;
	ch = nvme_latency_challenger(head, s, ns);
	if (!ch)
		return NULL;
	/* alone in its state: the scan would take it unread too */
	if (ch == ns)
		return ns;
	switch (nvme_lat_read2(ns, ch, io->node, io->cls, io->rw && io->probe,
			       c)) {
	case NVME_LAT2_OLD:
		break;
	case NVME_LAT2_UNTRACKED:
		return NULL;
	case NVME_LAT2_PROBE_A:
		nvme_lat_trace_probe(head, io->node, io->cls, ns, &c[0]);
		io->probed = true;
		return ns;
	case NVME_LAT2_PROBE_B:
		nvme_lat_trace_probe(head, io->node, io->cls, ch, &c[1]);
		io->probed = true;
		return ch;
	default:
		io->fresh = nvme_lat_fresh(&c[0]) || nvme_lat_fresh(&c[1]);
		/* as nvme_latency_rank() compares them, the best first */
		nvme_latency_weigh(io, ns, &c[0]);
		nvme_latency_weigh(io, ch, &c[1]);
		i = nvme_lat_cmp(&c[1], &c[0]) < 0;
		if (nvme_lat_doubtful(&c[i]) ||
		    nvme_lat_wait_beside(&c[i], io->fresh))
			return NULL;
		found = i ? ch : ns;
		nvme_lat_trace_path(head, io->node, io->cls, found, &c[i]);
		return found;
	}
	/* a tracker without the pair read */
	if (nvme_latency_rank(io, ns, &found, &best))
		return ns;
	if (nvme_latency_rank(io, ch, &found, &best))
		return ch;
	if (io->untracked || nvme_lat_doubtful(&best) ||
	    nvme_lat_wait_beside(&best, io->fresh))
		return NULL;
	nvme_lat_trace_path(head, io->node, io->cls, found, &best);
	return found;
}

/* A probe per this many I/Os the head's paths serve, at most. */
#define NVME_LAT_PROBE_EVERY	200

/*
 * After a ranking scan: publish its best path, and the node's probe budget
 * from the load its paths served (a probe per NVME_LAT_PROBE_EVERY I/Os of
 * any class, but one a second at least: a recovered path is found in
 * time).
 */
static void nvme_latency_ranked(struct nvme_lat_slot *s,
				struct nvme_latency_io *io)
{
	struct nvme_lat_slot *b = nvme_lat_budget(s, io->cls);
	unsigned long gap = HZ;

	/* a path read enabled in this section: nvme_lat_route_forget() */
	if (io->idle.ns && !io->idle.c.unproven && !io->idle.c.stalled &&
	    rcu_access_pointer(s->best) != io->idle.ns)
		rcu_assign_pointer(s->best, io->idle.ns);
	if (io->idle.rate)
		gap = min_t(u64, gap,
			    div64_u64((u64)NVME_LAT_PROBE_EVERY * HZ *
				      NLAT_NBAR_ONE, io->idle.rate));
	if (READ_ONCE(b->probe_gap) != gap)
		WRITE_ONCE(b->probe_gap, gap);
}

/*
 * @rw: a read or write, of class @cls; no probe is taken for other I/O,
 * nor more than the head's budget allows (nvme_latency_ranked()).
 * A path without a tracker yet must not starve: the I/O goes round robin.
 * Sets *@hold (if given) when every candidate is unproven: the bio may
 * wait (nvme_latency_hold()), else it takes the path returned.
 * Between rankings an I/O reads two paths (nvme_latency_two()); the
 * ranking's scan reads all, as does an I/O the two cannot place.
 */
static struct nvme_ns *nvme_latency_path(struct nvme_ns_head *head,
		unsigned int cls, bool rw, bool pt, bool *hold, bool *busy)
{
	struct nvme_latency_io io = {
		.node = numa_node_id(), .cls = cls, .rw = rw, .pt = pt,
		.probe = true,
	};
	bool unproven = false;
	struct nvme_lat_slot *s;
	struct nvme_ns *ns;

	/* a lone usable path is taken unread, as nvme_latency_pick() would */
	ns = list_first_or_null_rcu(&head->list, struct nvme_ns, siblings);
	if (ns && !list_next_or_null_rcu(&head->list, &ns->siblings,
					 struct nvme_ns, siblings) &&
	    !nvme_path_is_disabled(ns) &&
	    (ns->ana_state == NVME_ANA_OPTIMIZED ||
	     ns->ana_state == NVME_ANA_NONOPTIMIZED))
		return ns;

	/* the route's lifetime: nvme_lat_route_forget() frees it after RCU */
	rcu_read_lock();
	s = nvme_lat_slot(head, io.node, cls);
	if (s) {
		io.probe = time_after_eq(jiffies,
				READ_ONCE(nvme_lat_budget(s, cls)->probe_at));
		/* ranked by reads and writes only: their latency decides */
		if (!rw || !nvme_lat_rank_due(s)) {
			ns = nvme_latency_two(head, s, &io);
			if (ns)
				goto out;
		} else {
			io.ranking = true;
		}
	}
	ns = nvme_latency_pick(head, &io, NVME_ANA_OPTIMIZED, &unproven);
	if (!ns)
		ns = nvme_latency_pick(head, &io, NVME_ANA_NONOPTIMIZED,
				       &unproven);
	if (unlikely(io.untracked)) {
		ns = nvme_latency_rr(head, io.node);
		goto out;
	}
	if (s && io.ranking)
		nvme_latency_ranked(s, &io);
	/*
	 * A bio (@hold) may wait for an answer, where a waker will kick it;
	 * beside a proven path, rechecked soon: the fresh path may stall
	 * rather than answer
	 */
	if (unproven && hold && nvme_lat_may_hold()) {
		*hold = true;
		*busy = io.busy && !io.wait;
	}
out:
	if (s && io.probed) {
		s = nvme_lat_budget(s, cls);
		WRITE_ONCE(s->probe_at, jiffies + READ_ONCE(s->probe_gap));
	}
	rcu_read_unlock();
	return ns;
}

/*
 * Every candidate path for @bio is unproven (nvme_lat_cmp()): it waits on
 * the requeue list until one answers, when the tracker's waker kicks this
 * head (nvme_lat_hold()).  Then the paths are read again: one that
 * answered before the hold was recorded is seen here, and the list kicked
 * now (the record's lock orders the two).  False if it cannot wait.
 */
static bool nvme_latency_hold(struct nvme_ns_head *head, struct bio *bio,
		bool busy)
{
	unsigned int cls = nvme_lat_bio_class(bio);
	bool hold = false;

	/* from here @bio may be resubmitted, even ended, by another CPU */
	if (!nvme_lat_hold(head, bio, busy))
		return false;
	nvme_latency_path(head, cls, false, false, &hold, &busy);
	if (!hold)
		nvme_lat_release_head(head);
	return true;
}

#endif /* _NVME_LATENCY_SELECT_H */
