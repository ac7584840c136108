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
 * One candidate of nvme_latency_pick(): true if the tracker granted it a
 * probe, which takes the I/O.  Sets *@busy if it has requests started.
 */
static bool nvme_latency_rank(struct nvme_ns *ns, int node, unsigned int cls,
		bool rw, bool pt, struct nvme_ns **found,
		struct nvme_lat_cand *best, bool *untracked, bool *busy)
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
		bool *busy)
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
					      &best, untracked, busy))
				return lone;
		}
		if (nvme_latency_rank(ns, node, cls, rw, pt, &found, &best,
				      untracked, busy))
			return ns;
	}
	if (!found)
		return lone;
	/* the best is unproven: so is every candidate */
	if (best.unproven) {
		*unproven = true;
		return found;
	}
	if (!*untracked)
		nvme_lat_trace_path(head, node, cls, found, &best);
	return found;
}

/*
 * @rw: a read or write, of class @cls; no probe is taken for other I/O.
 * A path without a tracker yet must not starve: the I/O goes round robin.
 * Sets *@hold (if given) when every candidate is unproven: the bio may
 * wait (nvme_latency_hold()), else it takes the path returned.
 */
static struct nvme_ns *nvme_latency_path(struct nvme_ns_head *head,
		unsigned int cls, bool rw, bool pt, bool *hold, bool *busy)
{
	int node = numa_node_id();
	bool untracked = false, unproven = false, started = false;
	struct nvme_ns *ns;

	ns = nvme_latency_pick(head, node, cls, rw, pt, NVME_ANA_OPTIMIZED,
			       &untracked, &unproven, &started);
	if (!ns)
		ns = nvme_latency_pick(head, node, cls, rw, pt,
				       NVME_ANA_NONOPTIMIZED, &untracked,
				       &unproven, &started);
	if (unlikely(untracked))
		return nvme_latency_rr(head, node);
	/* a bio (@hold) may wait for an answer, where a waker will kick it */
	if (unproven && hold && nvme_lat_may_hold()) {
		*hold = true;
		*busy = started;
	}
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
