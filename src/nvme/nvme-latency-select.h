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

/* The path of lowest cost with nothing in flight: a route's ranking. */
struct nvme_latency_idle {
	struct nvme_ns		*ns;
	struct nvme_lat_cand	c;
};

/*
 * One candidate of nvme_latency_pick(): true if the tracker granted it a
 * probe, which takes the I/O.  Sets *@busy if it has requests started.
 */
static bool nvme_latency_rank(struct nvme_ns *ns, int node, unsigned int cls,
		bool rw, bool pt, struct nvme_ns **found,
		struct nvme_lat_cand *best, bool *untracked, bool *busy,
		struct nvme_latency_idle *idle)
{
	struct nvme_lat_cand c;

	switch (nvme_lat_read(ns, node, cls, rw, &c)) {
	case NVME_LAT_PROBE:
		nvme_lat_trace_probe(ns->head, node, cls, ns, &c);
		return true;
	case NVME_LAT_UNTRACKED:
		*untracked = true;
		return false;
	default:
		break;
	}
	*busy |= c.started;
	/* no sample keeps this class's estimate fresh: by load alone */
	if (!rw)
		c.lat_ns = 0;
	if (idle) {
		struct nvme_lat_cand i = c;

		i.inflight = 0;
		if (!idle->ns || nvme_lat_cmp(&i, &idle->c) < 0) {
			idle->ns = ns;
			idle->c = i;
		}
	}
	if (pt)
		c.inflight += nvme_latency_pt_load(ns);
	if (!*found || nvme_lat_cmp(&c, best) < 0) {
		*found = ns;
		*best = c;
	}
	return false;
}

/*
 * Lowest expected latency for @node among the usable paths in @ana_state,
 * or the first of them the tracker grants a probe (only to I/O that
 * yields a sample: @rw).  Passthrough (@pt) is not seen by the tracker:
 * its requests are counted in ctrl->nr_active where the kernel has it.
 * Sets *@untracked if a path has no tracker, *@unproven if the best, so
 * every, path is unproven, *@busy if a path has requests started.
 * A lone usable path is taken without reading the tracker: there is
 * nothing to compare it with.
 */
static struct nvme_ns *nvme_latency_pick(struct nvme_ns_head *head, int node,
		unsigned int cls, bool rw, bool pt,
		enum nvme_ana_state ana_state, bool *untracked, bool *unproven,
		bool *busy, struct nvme_latency_idle *idle)
{
	struct nvme_lat_cand best = { };
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
			if (nvme_latency_rank(lone, node, cls, rw, pt, &found,
					      &best, untracked, busy, idle))
				goto probe;
		}
		if (nvme_latency_rank(ns, node, cls, rw, pt, &found, &best,
				      untracked, busy, idle)) {
			lone = ns;
			goto probe;
		}
	}
	if (!found) {
		/* ranked alone: a route takes it without a scan */
		if (idle && lone && !idle->ns)
			idle->ns = lone;
		return lone;
	}
	/* the best is unproven: so is every candidate */
	if (best.unproven) {
		*unproven = true;
		return found;
	}
	if (!*untracked)
		nvme_lat_trace_path(head, node, cls, found, &best);
	return found;
probe:
	/* a partial scan ranks nothing */
	if (idle)
		idle->ns = NULL;
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
 * stalled or unproven (the scan finds another, or holds the bio).
 */
static struct nvme_ns *nvme_latency_two(struct nvme_ns_head *head,
		struct nvme_lat_slot *s, int node, unsigned int cls, bool rw,
		bool pt)
{
	struct nvme_lat_cand best = { }, c[2];
	struct nvme_ns *ns, *ch, *found = NULL;
	bool untracked = false, busy = false;
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
	switch (nvme_lat_read2(ns, ch, node, cls, rw, c)) {
	case NVME_LAT2_OLD:
		break;
	case NVME_LAT2_UNTRACKED:
		return NULL;
	case NVME_LAT2_PROBE_A:
		nvme_lat_trace_probe(head, node, cls, ns, &c[0]);
		return ns;
	case NVME_LAT2_PROBE_B:
		nvme_lat_trace_probe(head, node, cls, ch, &c[1]);
		return ch;
	default:
		/* nvme_latency_rank() of each, the best first */
		if (!rw)
			c[0].lat_ns = c[1].lat_ns = 0;
		if (pt) {
			c[0].inflight += nvme_latency_pt_load(ns);
			c[1].inflight += nvme_latency_pt_load(ch);
		}
		i = nvme_lat_cmp(&c[1], &c[0]) < 0;
		if (c[i].stalled || c[i].unproven)
			return NULL;
		found = i ? ch : ns;
		nvme_lat_trace_path(head, node, cls, found, &c[i]);
		return found;
	}
	if (nvme_latency_rank(ns, node, cls, rw, pt, &found, &best,
			      &untracked, &busy, NULL))
		return ns;
	if (nvme_latency_rank(ch, node, cls, rw, pt, &found, &best,
			      &untracked, &busy, NULL))
		return ch;
	if (untracked || best.stalled || best.unproven)
		return NULL;
	nvme_lat_trace_path(head, node, cls, found, &best);
	return found;
}

/*
 * @rw: a read or write, of class @cls; no probe is taken for other I/O.
 * A path without a tracker yet must not starve: the I/O goes round robin.
 * Sets *@hold (if given) when every candidate is unproven: the bio may
 * wait (nvme_latency_hold()), else it takes the path returned.
 * Between rankings an I/O reads two paths (nvme_latency_two()); the
 * ranking's scan reads all, as does an I/O the two cannot place.
 */
static struct nvme_ns *nvme_latency_path(struct nvme_ns_head *head,
		unsigned int cls, bool rw, bool pt, bool *hold, bool *busy)
{
	int node = numa_node_id();
	bool untracked = false, unproven = false, started = false;
	struct nvme_latency_idle idle = { };
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
	s = nvme_lat_slot(head, node, cls);
	if (s && !nvme_lat_rank_due(s)) {
		ns = nvme_latency_two(head, s, node, cls, rw, pt);
		if (ns)
			goto out;
	}
	ns = nvme_latency_pick(head, node, cls, rw, pt, NVME_ANA_OPTIMIZED,
			       &untracked, &unproven, &started, &idle);
	if (!ns)
		ns = nvme_latency_pick(head, node, cls, rw, pt,
				       NVME_ANA_NONOPTIMIZED, &untracked,
				       &unproven, &started, &idle);
	if (unlikely(untracked)) {
		ns = nvme_latency_rr(head, node);
		goto out;
	}
	/* a path read enabled in this section: nvme_lat_route_forget() */
	if (s && idle.ns && !idle.c.unproven && !idle.c.stalled &&
	    rcu_access_pointer(s->best) != idle.ns)
		rcu_assign_pointer(s->best, idle.ns);
	/* a bio (@hold) may wait for an answer, where a waker will kick it */
	if (unproven && hold && nvme_lat_may_hold()) {
		*hold = true;
		*busy = started;
	}
out:
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
