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

	s->res->reads++;
	tracker_read(s, &s->nq[io->ns][i], io->node, io->cls, s->may_probe,
		     &v);
	if (v.probe) {
		io->probe = true;
		return false;
	}
	/* nvme_lat_read() */
	c.c = v;
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

/* one: @c with @k requests in flight costs no more than @ref */
static bool one_fits(const struct rule *r, struct sim_cand c, unsigned int k,
		     const struct sim_cand *ref)
{
	c.c.inflight = k;
	return rule_cmp(r, &c, ref) <= 0;
}

/*
 * Rule one, at a ranking: the paths in use are those that cost no more
 * than the scan's best (@ref, path @found) with nothing in flight; each
 * one's cap is the most requests in flight at which it still does.
 */
static void one_rank(struct sim *s, const struct io *io,
		     const struct sim_cand *cand, int found,
		     const struct sim_cand *ref)
{
	unsigned int *nr = &s->one_nr[io->ns][io->node][io->cls];
	unsigned int *set = s->one_set[io->ns][io->node][io->cls];
	unsigned int *cap = s->one_cap[io->ns][io->node][io->cls];
	const struct rule *r = &s->cfg->rule;
	struct sim_cand level;
	unsigned int i, lo, hi;

	*nr = 0;
	if (found < 0 || nvme_lat_doubtful(&ref->c))
		return;
	level = *ref;
	level.c.inflight += r->one_slack;
	ref = &level;
	for (i = 0; i < s->sc->nr_paths; i++) {
		const struct sim_cand *c = &cand[i];

		if (nvme_lat_doubtful(&c->c) || !one_fits(r, *c, 0, ref))
			continue;
		/* the highest k that fits: costs rise with k */
		lo = 0;
		hi = NVME_LAT_MAX_INFLIGHT;
		while (lo < hi) {
			unsigned int mid = lo + (hi - lo + 1) / 2;

			if (one_fits(r, *c, mid, ref))
				lo = mid;
			else
				hi = mid - 1;
		}
		set[*nr] = i;
		cap[*nr] = lo;
		(*nr)++;
	}
}

/*
 * Rule one, between rankings: the next path in use, read alone, takes the
 * I/O (or its probe) while within its cap and answering.  Else -1, and
 * the path read (*@first, its candidate in @best; -1: none) is the first
 * of the two that decide.
 */
static int one_pick(struct sim *s, struct io *io, int *first,
		    struct sim_cand *best)
{
	unsigned int nr = s->one_nr[io->ns][io->node][io->cls];
	unsigned int *cur = &s->one_cur[io->ns][io->node][io->cls];
	unsigned int k, i;

	*first = -1;
	if (!nr)
		return -1;
	k = (*cur)++ % nr;
	i = s->one_set[io->ns][io->node][io->cls][k];
	if (!rank(s, io, i, first, best))
		return i;
	if (nvme_lat_doubtful(&best->c) ||
	    best->c.inflight > s->one_cap[io->ns][io->node][io->cls][k])
		return -1;
	return i;
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
	unsigned int ch, first = *won;
	int found = -1;

	if (n == 1)
		return 0;
	s->pick_u = IO_UNITS(io->bytes);
	if (r->ranked && (!*ranked || s->now - *ranked >= s->cfg->p.window_ns)) {
		struct sim_cand idle = { 0 }, c, cand[MAXP];
		int lo = -1;

		*ranked = s->now;
		s->rate = 0;
		s->any_fresh = false;
		for (ch = 0; ch < n; ch++) {
			if (!rank(s, io, ch, &found, &best))
				return ch;
			c = s->last;
			cand[ch] = c;
			c.c.inflight = 0;
			if (lo < 0 || rule_cmp(r, &c, &idle) < 0) {
				lo = ch;
				idle = c;
			}
		}
		/* hold: an unproven or stalled best is not published */
		if (!r->hold || (!idle.c.unproven && !idle.c.stalled))
			*won = lo;
		if (r->one)
			one_rank(s, io, cand, found, &best);
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
	s->any_fresh = false;
	if (r->one) {
		int f = one_pick(s, io, &found, &best);

		if (f >= 0)
			return f;
		if (found >= 0)
			first = found;
	}
	if (first != *won) {
		/* the path read over its cap, against the ranked best */
		ch = *won;
	} else {
		ch = (*next + 1) % n;
		if (ch == first)
			ch = (ch + 1) % n;
		*next = ch;
	}
	if (found < 0 && !rank(s, io, first, &found, &best))
		return first;
	if (!rank(s, io, ch, &found, &best))
		return ch;
	/* hold: the better is stalled, unproven or late: a scan decides */
	if (r->hold && nvme_lat_doubtful(&best.c))
		return pick_scan(s, io);
	if (r->wait && nvme_lat_wait_beside(&best.c, s->any_fresh))
		return pick_scan(s, io);
	if (!r->ranked || r->chase)
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
