// SPDX-License-Identifier: GPL-2.0
/*
 * nlat-sim: the iopolicies, as nvme-core picks a path per I/O.  All paths
 * are ANA optimized and no path has a NUMA affinity, so numa is "the
 * first path".
 */
#include "sim.h"

const char *const policy_names[NR_POL] = {
	[POL_NUMA]	= "numa",
	[POL_RR]	= "round-robin",
	[POL_QD]	= "queue-depth",
	[POL_ADAPT]	= "adaptive",
	[POL_LAT]	= "latency",
	[POL_FAST]	= "fast-only",
};

/* nvme_round_robin_path(): per (head, node), the path after the last one. */
static unsigned int pick_rr(struct sim *s, const struct io *io)
{
	unsigned int *cur = &s->rr_cur[io->ns][io->node];

	*cur = (*cur + 1) % s->sc->nr_paths;
	return *cur;
}

/* nvme_queue_depth_path(): lowest ctrl->nr_active, ties to the first. */
static unsigned int pick_qd(struct sim *s)
{
	unsigned int i, best = 0;

	for (i = 0; i < s->sc->nr_paths; i++) {
		if (s->ctrl[i].nr_active < s->ctrl[best].nr_active)
			best = i;
		if (!s->ctrl[best].nr_active)
			break;
	}
	return best;
}

/* One candidate of pick_latency(): false if the tracker granted a probe. */
static bool rank(struct sim *s, struct io *io, unsigned int i, int *found,
		 struct sim_cand *best)
{
	const struct rule *r = &s->cfg->rule;
	struct sim_cand c = { 0 };
	struct nlat_view v;

	tracker_read(s, &s->nq[io->ns][i], io->node, io->cls, s->may_probe,
		     &v);
	if (v.probe) {
		io->probe = true;
		return false;
	}
	/* nvme_lat_read() */
	nvme_lat_view_cand(&v, &c.c);
	s->any_fresh |= nvme_lat_fresh(&c.c);
	c.base = r->base ? s->pick_base : 0;
	s->last = c;
	/* nvme_latency_note(): Little's law */
	if (c.c.lat_ns && c.c.nbar)
		s->rate += (u64)c.c.nbar * 1000000000ULL / c.c.lat_ns;
	if (*found < 0 || rule_cmp(r, &c, best) < 0) {
		*found = i;
		*best = c;
	}
	return true;
}

/* nvme_latency_pick() without ranking; hold: PICK_HOLD if all are unproven. */
static unsigned int pick_scan(struct sim *s, struct io *io)
{
	struct sim_cand best = { 0 };
	unsigned int i;
	int found = -1;

	s->any_fresh = false;
	for (i = 0; i < s->sc->nr_paths; i++)
		if (!rank(s, io, i, &found, &best))
			return i;
	if (s->cfg->rule.hold && best.c.unproven)
		return PICK_HOLD;
	if (s->cfg->rule.wait && nvme_lat_wait_beside(&best.c, s->any_fresh)) {
		s->waits = true;
		return PICK_HOLD;
	}
	return found;
}

/*
 * Rules two and ranked: the first candidate (the last winner; ranked:
 * the path of lowest idle cost at the last ranking, a scan once a window
 * that routes its I/O as the scan does) against the next other path in
 * turn.  nvme_latency_path().
 */
static unsigned int pick_two(struct sim *s, struct io *io)
{
	unsigned int n = s->sc->nr_paths;
	unsigned int *won = &s->two_won[io->ns][io->node][io->cls];
	unsigned int *next = &s->two_next[io->ns][io->node][io->cls];
	u64 *ranked = &s->two_rank_ns[io->ns][io->node][io->cls];
	const struct rule *r = &s->cfg->rule;
	struct sim_cand best = { 0 };
	unsigned int ch;
	int found = -1;

	if (n == 1)
		return 0;
	s->pick_u = IO_UNITS(io->bytes);
	if (r->ranked && (!*ranked || s->now - *ranked >= s->cfg->p.window_ns)) {
		struct sim_cand idle = { 0 }, c;
		int lo = -1;

		*ranked = s->now;
		s->rate = 0;
		s->any_fresh = false;
		for (ch = 0; ch < n; ch++) {
			if (!rank(s, io, ch, &found, &best))
				return ch;
			c = s->last;
			c.c.inflight = 0;
			if (lo < 0 || rule_cmp(r, &c, &idle) < 0) {
				lo = ch;
				idle = c;
			}
		}
		/* hold: an unproven or stalled best is not published */
		if (!r->hold || (!idle.c.unproven && !idle.c.stalled))
			*won = lo;
		/* nvme_latency_ranked(): a probe per 200 I/Os, one a second */
		s->probe_gap[io->ns][io->node] = SEC;
		if (s->rate && 200ULL * SEC * NLAT_NBAR_ONE / s->rate < SEC)
			s->probe_gap[io->ns][io->node] =
				200ULL * SEC * NLAT_NBAR_ONE / s->rate;
		/* the best is unproven: so is every candidate */
		if (r->hold && best.c.unproven)
			return PICK_HOLD;
		if (r->wait && nvme_lat_wait_beside(&best.c, s->any_fresh)) {
			s->waits = true;
			return PICK_HOLD;
		}
		return found;
	}
	ch = (*next + 1) % n;
	if (ch == *won)
		ch = (ch + 1) % n;
	*next = ch;
	s->any_fresh = false;
	if (!rank(s, io, *won, &found, &best))
		return *won;
	if (!rank(s, io, ch, &found, &best))
		return ch;
	/* hold: the better is stalled, unproven or late: a scan decides */
	if (r->hold && (best.c.stalled || best.c.unproven || best.c.late))
		return pick_scan(s, io);
	if (r->wait && nvme_lat_wait_beside(&best.c, s->any_fresh))
		return pick_scan(s, io);
	if (!r->ranked)
		*won = found;
	return found;
}

/* pick_two() within the probe budget of the I/O's (namespace, node). */
static unsigned int pick_budget(struct sim *s, struct io *io)
{
	u64 *at = &s->probe_at[io->ns][io->node];
	unsigned int i;

	s->may_probe = !s->cfg->rule.budget || s->now >= *at;
	i = pick_two(s, io);
	if (io->probe && s->cfg->rule.budget)
		*at = s->now + s->probe_gap[io->ns][io->node];
	return i;
}

/*
 * nvme_latency_pick(): paths in list order; the first that the tracker
 * grants a probe takes the I/O, else the lowest by the rule's comparison
 * (nvme_lat_cmp() for kernel), ties to the first.
 */
static unsigned int pick_latency(struct sim *s, struct io *io)
{
	const struct rule *r = &s->cfg->rule;

	if (r->rr)
		return pick_rr(s, io);
	if (r->two)
		return pick_budget(s, io);
	s->may_probe = true;
	s->pick_u = IO_UNITS(io->bytes);
	return pick_scan(s, io);
}

unsigned int policy_pick(struct sim *s, struct io *io)
{
	switch (s->pol) {
	case POL_RR:
		return pick_rr(s, io);
	case POL_QD:
		return pick_qd(s);
	case POL_ADAPT:
		return adaptive_pick(s, io);
	case POL_LAT:
		return pick_latency(s, io);
	case POL_FAST:
		return s->sc->fast;
	default:
		return 0;
	}
}
